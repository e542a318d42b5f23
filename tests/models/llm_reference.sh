#!/bin/sh
# ctest llm.reference.CONFIG and llm.gguf.CONFIG.TYPE: write a random-weight checkpoint with PyTorch's logits
# (tools/llm_reference.py; with TYPE, also as a GGUF file with its 2-d weights stored as TYPE by tools/gguf_models.py,
# the reference then computed on the weights the file holds), compare ours (llm_reference_check) and llm's greedy
# tokens. Exits 77 (skipped) where python3-torch is missing.
# Usage: llm_reference.sh CONFIG CHECK LLM TOOLS_DIR WORK_DIR [TYPE]
set -e
name=$1 check=$2 llm=$3 tools=$4 work=$5 type=$6
py=/usr/bin/python3
[ -x "$py" ] || py=python3
# no Python at all is PyTorch missing too (sh would exit 127: a failure)
command -v "$py" >/dev/null || { echo "skipped: no python3 (Debian: apt-get install python3-torch)"; exit 77; }
hf=$work/$name${type:+.$type.hf}  # a folder per test: ctest runs them in parallel
[ -f "$hf/reference.json" ] || "$py" "$tools/llm_reference.py" make "$name" "$hf"
ref=$hf model=$hf
if [ -n "$type" ]; then
  ref=$work/$name.$type model=$work/$name.$type/model.gguf
  [ -f "$ref/reference.json" ] || "$py" "$tools/gguf_models.py" make "$hf" "$ref" "$type"
fi
"$check" "$ref" "$model"
# gpt2_tiny is also written as torch.save's pytorch_model.bin: the same logits from that folder
if [ -z "$type" ] && [ -d "$hf.bin" ]; then
  cp "$hf/reference.json" "$hf/"*.npy "$hf.bin/"
  "$check" "$hf.bin"
fi
# the program users run: the same greedy continuation, given token ids
prompt=$("$py" -c "import json; print(','.join(map(str, json.load(open('$ref/reference.json'))['prompt'])))")
want=$("$py" -c "import json; print(' '.join(map(str, json.load(open('$ref/reference.json'))['greedy'])))")
got=$("$llm" --model "$model" --tokens "$prompt" --max-new 32 --print-tokens)
if [ "$got" != "$want" ]; then
  echo "llm printed:  $got"; echo "PyTorch chose: $want"; exit 1
fi
echo "llm --print-tokens${type:+ on the $type GGUF}: the same 32 tokens as PyTorch"
