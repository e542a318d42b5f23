#!/usr/bin/env bash
# The CUDA checks for a machine with an NVIDIA GPU (the `device` tool's machines: 16 cores, CUDA, PyTorch, no network,
# no GoogleTest): the CUDA device's own tests, every value suite with DEV=CUDA (the suites of ctest's cuda.* entries,
# run in parallel), beautiful_mnist's first steps on CUDA beside the CPU, and the GPU benchmarks beside PyTorch's.
# Logs go to $OUT (or ./out), packed as one logs.tgz.
#   tools/cuda_gpu_check.sh                     builds the tests and tools in build-gpu first
#   TG_BIN=dir tools/cuda_gpu_check.sh          uses tg_unit_tests, beautiful_mnist and tg_bench built elsewhere
#                                               (tools/cuda_gpu_bundle.sh makes such a folder, with Fashion-MNIST)
#   SUITES='kernels nn' tools/cuda_gpu_check.sh fewer suites;  SUITE_TIMEOUT=240 per suite;  MNIST_DEVS=CUDA
#   BENCH=0 no benchmarks;  BENCHES='matmul 4096,copy' fewer;  BEAM_CHECK=0 without BEAM's matmul
# Building here needs GoogleTest: where CMake cannot find it, a copy of its source in .gtest/ is built first.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-out}
logs=$(mktemp -d)
mkdir -p "$out"
trap 'tar czf "$out/logs.tgz" -C "$logs" . 2>/dev/null' EXIT
nvidia-smi -L 2>&1 | tee "$logs/gpu.txt"
# the driver library where the loader does not find it by itself
/sbin/ldconfig -p 2>/dev/null | grep -q "libcuda.so.1 " || export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}
jobs=$(nproc)
if [ -n "${TG_BIN:-}" ]; then
  bin=$(cd "$TG_BIN" && pwd)
else
  prefix=()
  if [ -d .gtest ]; then
    cmake -S .gtest -B /tmp/gtest-build -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF >/dev/null &&
      cmake --build /tmp/gtest-build -j"$jobs" >/dev/null && cmake --install /tmp/gtest-build --prefix /tmp/gtest >/dev/null &&
      prefix=(-DCMAKE_PREFIX_PATH=/tmp/gtest)
  fi
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >"$logs/cmake.txt" 2>&1 || { tail -20 "$logs/cmake.txt"; exit 1; }
  cmake --build build-gpu -j"$jobs" --target tg_unit_tests beautiful_mnist tg_bench >"$logs/build.txt" 2>&1 || { tail -30 "$logs/build.txt"; exit 1; }
  bin=$root/build-gpu/bin
fi
export TG_GOLDEN_DIR=$root/tests/golden XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/tg-cache}

echo "== the CUDA device's own tests"
DEBUG=1 "$bin/tg_unit_tests" --gtest_filter='Cuda*' >"$logs/cuda_tests.txt" 2>&1
grep -E "^CUDA|PASSED|FAILED|SKIPPED|Failure" "$logs/cuda_tests.txt" | head -30

echo "== value suites with DEV=CUDA (the filters of CMakeLists.txt's TG_DEVICE_SUITES)"
values="Golden/Primitive*:RandomGraphs*:Kernels*:NN.*:Optim.*:Training.*:TinyJit.*"
declare -A filter=([primitives]="Golden/Primitive*" [api]="Golden/TensorApi*:TensorApiNumerics*" [kernels]="Kernels*"
  [random_graphs]="RandomGraphs*" [nn]="NN.*" [optim]="Optim.*" [training]="Training.*" [jit]="TinyJit.*"
  [autograd]="Autograd.*" [tensor_cores]="TensorCores.*" [values_with_NOOPT_1]="$values" [values_with_RANDOM_OPTS_1]="$values")
for s in ${SUITES:-${!filter[@]}}; do
  env=(DEV=CUDA)
  case $s in *NOOPT*) env+=(NOOPT=1) ;; *RANDOM_OPTS*) env+=(RANDOM_OPTS=1) ;; esac
  ( start=$(date +%s)
    env "${env[@]}" timeout "${SUITE_TIMEOUT:-240}" "$bin/tg_unit_tests" --gtest_filter="${filter[$s]}" >"$logs/suite_$s.txt" 2>&1
    echo "$s: exit $? in $(($(date +%s) - start)) s, $(grep -E '^\[  PASSED  \]' "$logs/suite_$s.txt")" \
         "$(grep -cE '^\[  FAILED  \] [A-Za-z]' "$logs/suite_$s.txt") failed" >"$logs/summary_$s.txt" ) &
done
wait
cat "$logs"/summary_*.txt
grep -hE '^\[  FAILED  \] [A-Za-z]' "$logs"/suite_*.txt | sort -u | head -40

echo "== beautiful_mnist, CPU then CUDA (the same seed; STEPS, default 70)"
data=${MNIST:-}
[ -z "$data" ] && [ -d "$bin/fashion-mnist" ] && data=$bin/fashion-mnist
if [ -n "$data" ] || [ -d /usr/share/datasets/fashion-mnist ]; then
  for dev in ${MNIST_DEVS:-CPU CUDA}; do
    start=$(date +%s)
    echo "$dev: $(STEPS=${STEPS:-70} SEED=1 DEV=$dev timeout 180 "$bin/beautiful_mnist" $data 2>&1 | tee "$logs/mnist_$dev.txt" | tail -1)" \
         "($(($(date +%s) - start)) s with compiling)"
  done
else
  echo "skipped: no Fashion-MNIST here (carry the four IDX files and set MNIST to their folder)"
fi

if [ "${BENCH:-1}" = 1 ]; then
  echo "== benchmarks: tinygrad.cpp then PyTorch, DEV=CUDA"
  IFS=, read -ra benches <<<"${BENCHES:-matmul 4096,matmul 8192,matmul 4096 --half,matmul 8192 --half,matmul 8192 --bfloat16,mnist_step,elementwise --n 67108864,reduce --n 67108864,copy,overhead}"
  for args in "${benches[@]}"; do
    echo "tg    $(DEV=CUDA timeout 45 "$bin/tg_bench" $args 2>>"$logs/bench_err.txt" | tr '\n' ' ')"
    [ "${args%% *}" != overhead ] && echo "torch $(DEV=CUDA timeout 45 python3 bench/torch_bench.py $args 2>>"$logs/bench_err.txt")"
  done
  if [ "${BEAM_CHECK:-1}" = 1 ]; then
    for args in "matmul 4096" "matmul 4096 --half"; do
      BEAM=2 DEBUG=2 DEV=CUDA timeout 150 "$bin/tg_bench" $args >"$logs/beam_${args// /_}.txt" 2>&1
      echo "tg BEAM=2 $(grep '^{' "$logs/beam_${args// /_}.txt") $(grep -o 'r_4096_4096_4096 .*' "$logs/beam_${args// /_}.txt" | tail -1)"
    done
  fi
  # each kernel's time and opts, for the logs
  for args in "matmul 4096" "matmul 4096 --half" "mnist_step" "elementwise --n 67108864"; do
    DEBUG=2 DEV=CUDA timeout 45 "$bin/tg_bench" $args --reps 1 >"$logs/debug2_${args// /_}.txt" 2>&1
  done
fi
