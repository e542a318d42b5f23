#!/bin/sh
# ctest llm.reference.CONFIG: write a random-weight checkpoint with PyTorch's logits (tools/llm_reference.py), then
# compare ours (llm_reference_check) and llm's greedy tokens. Exits 77 (skipped) where python3-torch is missing.
# Usage: llm_reference.sh CONFIG CHECK LLM TOOLS_DIR WORK_DIR
set -e
name=$1 check=$2 llm=$3 tools=$4 work=$5
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ ! -f "$work/$name/reference.json" ]; then
  "$py" "$tools/llm_reference.py" make "$name" "$work/$name"
fi
"$check" "$work/$name"
# the program users run: the same greedy continuation, given token ids
prompt=$("$py" -c "import json; print(','.join(map(str, json.load(open('$work/$name/reference.json'))['prompt'])))")
want=$("$py" -c "import json; print(' '.join(map(str, json.load(open('$work/$name/reference.json'))['greedy'])))")
got=$("$llm" --model "$work/$name" --tokens "$prompt" --max-new 32 --print-tokens)
if [ "$got" != "$want" ]; then
  echo "llm printed:  $got"; echo "PyTorch chose: $want"; exit 1
fi
echo "llm --print-tokens: the same 32 tokens as PyTorch"
