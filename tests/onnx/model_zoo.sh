#!/bin/sh
# ctest onnx.models.NAME: export a real architecture with PyTorch (tools/onnx_models.py: random weights, PyTorch's
# output as the reference), run it with tg_onnx and compare. Exits 77 (skipped) where PyTorch or torchvision is
# missing. Usage: model_zoo.sh NAME TG_ONNX TOOLS_DIR WORK_DIR
set -e
name=$1 tg_onnx=$2 tools=$3 work=$4
py=/usr/bin/python3
[ -x "$py" ] || py=python3
# no Python at all is PyTorch missing too (sh would exit 127: a failure)
command -v "$py" >/dev/null ||
  { echo "skipped: no python3 (Debian: apt-get install python3-torch python3-torchvision)"; exit 77; }
mkdir -p "$work"
if [ ! -f "$work/$name.onnx" ] || [ ! -f "$work/$name.output.npy" ]; then
  "$py" "$tools/onnx_models.py" export "$name" "$work" 2>"$work/$name.export.log" || {
    rc=$?; cat "$work/$name.export.log" | grep -v -i warn | tail -5; exit $rc; }
fi
rm -rf "$work/out_$name"
"$tg_onnx" "$work/$name.onnx" --input "input=$work/$name.input.npy" --output-dir "$work/out_$name"
"$py" "$tools/onnx_models.py" check "$work/out_$name/output.npy" "$work/$name.output.npy"
