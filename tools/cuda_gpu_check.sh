#!/usr/bin/env bash
# The CUDA checks for a machine with an NVIDIA GPU (the `device` tool's machines: 16 cores, CUDA, no network, no
# GoogleTest): builds the library and its tests, then runs the CUDA device's own tests and every value suite with
# DEV=CUDA (ctest cuda.*), and beautiful_mnist's first steps on CUDA beside the CPU. Writes logs to $OUT (or ./out).
#   tools/cuda_gpu_check.sh            everything (a few minutes)
#   SUITES='^cuda\.(kernels|nn)$' tools/cuda_gpu_check.sh   fewer ctest entries
# GoogleTest: where CMake cannot find it, a copy of its source in .gtest/ (here: cp -r /usr/src/googletest .gtest,
# ignored by git, carried by the device tool) is built first.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
nvidia-smi -L 2>&1 | tee "$out/gpu.txt"
jobs=$(nproc)
prefix=()
if [ -d .gtest ]; then
  cmake -S .gtest -B /tmp/gtest-build -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF >/dev/null &&
    cmake --build /tmp/gtest-build -j"$jobs" >/dev/null && cmake --install /tmp/gtest-build --prefix /tmp/gtest >/dev/null &&
    prefix=(-DCMAKE_PREFIX_PATH=/tmp/gtest)
fi
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >"$out/cmake.txt" 2>&1 || { tail -20 "$out/cmake.txt"; exit 1; }
cmake --build build-gpu -j"$jobs" --target tg_unit_tests beautiful_mnist >"$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
echo "== the CUDA device's tests"
DEBUG=1 ./build-gpu/bin/tg_unit_tests --gtest_filter='Cuda*:CudaRender*' 2>&1 | tee "$out/cuda_tests.txt" | tail -25
echo "== value suites on CUDA"
ctest --test-dir build-gpu -R "${SUITES:-^cuda\\.}" -j4 --timeout 300 --output-on-failure >"$out/ctest.txt" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$out/ctest.txt" | head -40
echo "== beautiful_mnist, 10 steps, CPU then CUDA (the same seed)"
if [ -d /usr/share/datasets/fashion-mnist ] || [ -n "${MNIST:-}" ]; then
  for dev in CPU CUDA; do
    STEPS=10 SEED=1 DEV=$dev ./build-gpu/bin/beautiful_mnist ${MNIST:-} 2>&1 | tail -2
  done
else
  echo "skipped: no Fashion-MNIST here (carry the four IDX files and set MNIST to their folder)"
fi
