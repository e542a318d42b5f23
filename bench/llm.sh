#!/usr/bin/env bash
# Language-model generation side by side in one run: `llm --bench` (ours, TinyJit decode) and the same model in
# PyTorch eager (tools/llm_reference.py bench: its reference implementation with a growing KV cache), batch 1, every
# core; and the memory-bandwidth bound of decode: the weights' bytes per token over the machine's copy bandwidth
# (tg_bench elementwise's memcpy).
#   bench/llm.sh                     GPT-2 124M's shape (random weights), a 16-token prompt, 64 new tokens
#   PROMPT=128 NEW=128 bench/llm.sh gpt2_124m
# Needs Debian's python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
CONFIG=${1:-gpt2_124m}
PROMPT=${PROMPT:-16}
NEW=${NEW:-64}
THREADS=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target llm tg_bench >/dev/null
dir=build/llm_bench/$CONFIG
[ -f "$dir/config.json" ] || "$PY" tools/llm_reference.py weights "$CONFIG" "$dir"
tokens=$("$PY" -c "print(','.join(str(i * 7919 % 50257 % $("$PY" -c "import json; print(json.load(open('$dir/config.json'))['vocab_size'])")) for i in range($PROMPT)))")
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $THREADS threads; $CONFIG, prompt $PROMPT, $NEW new tokens"
./build/bin/llm --model "$dir" --tokens "$tokens" --max-new 3 >/dev/null  # compiles the kernels (disk cache)
ours=$(./build/bin/llm --model "$dir" --tokens "$tokens" --max-new "$NEW" --bench | tail -1)
torch=$("$PY" tools/llm_reference.py bench "$CONFIG" "$PROMPT" "$NEW" "$THREADS")
bytes=$(stat -c %s "$dir/model.safetensors")
gbs=$(./build/bin/tg_bench elementwise | sed -n 's/.*"memcpy".*"gbs": \([0-9.]*\).*/\1/p')
echo "tg:    $ours"
echo "torch: $torch"
printf "bound: %.1f tok/s decode (%.0f MB of weights per token at memcpy's %s GB/s)\n" \
  "$(echo "$gbs * 1000 / ($bytes / 1000000)" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)" "$gbs"
