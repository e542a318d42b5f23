#!/bin/sh
# ctest *.numpy_reads_ours: tinygrad.cpp writes files (the gtest FILTER, told where by TG_NUMPY_OUT), then an
# independent numpy script checks them. Exit 77 (skipped) where Debian's python3-numpy is missing.
# usage: numpy_reads_ours.sh TG_UNIT_TESTS FILTER OUT SCRIPT ARGS...
set -e
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then echo "skipped: $PY with numpy (python3-numpy) not found"; exit 77; fi
tests="$1" filter="$2" out="$3"
shift 3
rm -rf "$out"
TG_NUMPY_OUT="$out" "$tests" --gtest_filter="$filter"
"$PY" "$@"
