#!/bin/sh
# ctest llm.llama_cpp: llama.cpp (npm's node-llama-cpp, its prebuilt CPU library) on the GGUF files the llm.gguf.*
# tests wrote, against their references (tests/models/llama_cpp_check.mjs). Exits 77 (skipped) where node, npm or
# the package cannot be had, or on a machine its prebuilt library does not cover.
# Usage: llama_cpp.sh TESTS_DIR GGUF_WORK_DIR NPM_DIR
set -e
tests=$1 work=$2 npm_dir=$3
version=3.22.1  # the node-llama-cpp release checked (its llama.cpp build is printed)
skip() { echo "skipped: $*"; exit 77; }
[ "$(uname -sm)" = "Linux x86_64" ] || skip "node-llama-cpp's prebuilt library here is for Linux x86-64"
command -v node >/dev/null && command -v npm >/dev/null || skip "no node or npm (Debian: apt-get install npm)"
if [ ! -f "$npm_dir/node_modules/node-llama-cpp/package.json" ]; then
  timeout 60 npm view --fetch-retries=0 node-llama-cpp version >/dev/null 2>&1 || skip "npm cannot reach its registry"
  # the CPU build only: the package's optional GPU builds are hundreds of MB
  timeout 600 npm install --ignore-scripts --no-audit --no-fund --omit=optional --prefix "$npm_dir" \
    "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >/dev/null || skip "npm could not install node-llama-cpp"
fi
dirs=""
for d in "$work"/*; do
  [ -f "$d/llama_cpp_logits.npy" ] && dirs="$dirs $d"
done
[ -n "$dirs" ] || { echo "no GGUF files with references under $work (the llm.gguf.* tests write them)"; exit 1; }
# the check is an ES module: it finds node-llama-cpp beside itself
cp "$tests/llama_cpp_check.mjs" "$npm_dir/"
# float files within 0.1% of their logits' range, quantized ones within 2.5%
exec node "$npm_dir/llama_cpp_check.mjs" 0.001 0.025 $dirs
