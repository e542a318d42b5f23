#!/bin/sh
# ctest safetensors.numpy_reads_ours: tinygrad.cpp writes the reference tensors (loaded from the numpy-written
# golden), the independent numpy reader checks them. Exit 77 (skipped) where Debian's python3-numpy is missing.
# usage: safetensors_numpy.sh TG_UNIT_TESTS SCRIPT OUT_FILE
set -e
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then echo "skipped: $PY with numpy (python3-numpy) not found"; exit 77; fi
rm -f "$3"
TG_SAFETENSORS_OUT="$3" "$1" --gtest_filter=Safetensors.RoundTripsEveryDtype
"$PY" "$2" check "$3"
