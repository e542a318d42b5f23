#!/usr/bin/env bash
# The ONNX model zoo (tools/onnx_models.py) run three ways in one run, each with every core of this machine:
# tg_onnx --bench (our kernels under TinyJit), PyTorch eager, and ONNX Runtime on the same .onnx file. One line per
# model and batch with the three medians and our ratio to each (> 1: we are faster). ROUNDS repeats the three,
# alternated, and takes each one's median over the rounds: this machine's speed drifts between minutes, and
# alternating keeps a drift from landing on one side only.
#   bench/onnx_models.sh                      every model at batch 1 and 8
#   RUNS=20 ROUNDS=3 BATCHES="1" bench/onnx_models.sh resnet18 mobilenet_v2
# Needs Debian's python3-torch and python3-torchvision, and npm's onnxruntime-node (installed into build/ort when
# missing: npm install --ignore-scripts onnxruntime-node).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
RUNS=${RUNS:-10}
ROUNDS=${ROUNDS:-1}
BATCHES=${BATCHES:-"1 8"}
THREADS=$(nproc)
# PyTorch's convolutions and matmuls go through the system BLAS: OpenBLAS, as a user who cares about speed has it
if ! ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas0-pthread
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target tg_onnx >/dev/null
if [ ! -d build/ort/node_modules/onnxruntime-node ]; then
  mkdir -p build/ort && (cd build/ort && npm install --ignore-scripts --silent onnxruntime-node >/dev/null)
fi
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
models=("$@")
mapfile -t known < <("$PY" tools/onnx_models.py list)
[ ${#models[@]} -gt 0 ] || models=("${known[@]}")
for m in "${models[@]}"; do
  printf "%s\n" "${known[@]}" | grep -qx "$m" || { echo "bench/onnx_models.sh: no model '$m'; the models: ${known[*]}" >&2; exit 2; }
done
work=build/onnx_bench
mkdir -p "$work"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $THREADS threads; medians of $RUNS runs, then the median of $ROUNDS alternated rounds (ms)"
printf "%-22s %5s %10s %10s %10s %9s %9s\n" model batch tg torch ort torch/tg ort/tg
for m in "${models[@]}"; do
  for b in $BATCHES; do
    stem="$m.b$b"
    [ -f "$work/$stem.onnx" ] || "$PY" tools/onnx_models.py export "$m" "$work" "$b" 2>/dev/null
    shape=$("$PY" -c "import numpy; print(','.join(map(str, numpy.load('$work/$stem.input.npy').shape)))")
    tgs=() torchs=() orts=()
    for ((r = 0; r < ROUNDS; r++)); do
      tgs+=("$(./build/bin/tg_onnx "$work/$stem.onnx" --input "input=$work/$stem.input.npy" --output-dir "$work/out" \
               --bench "$RUNS" | sed -n 's/^bench: .*median \([0-9.]*\) ms.*/\1/p')")
      torchs+=("$("$PY" tools/onnx_models.py torch-bench "$m" "$b" "$RUNS" 2>/dev/null)")
      orts+=("$(NODE_PATH=build/ort/node_modules node bench/ort_bench.js "$work/$stem.onnx" "$shape" "$RUNS" "$THREADS")")
    done
    tg=$(median "${tgs[@]}") torch=$(median "${torchs[@]}") ort=$(median "${orts[@]}")
    printf "%-22s %5s %10s %10s %10s %9.2f %9.2f\n" "$m" "$b" "$tg" "$torch" "$ort" \
      "$(echo "$torch / $tg" | bc -l)" "$(echo "$ort / $tg" | bc -l)"
  done
done
