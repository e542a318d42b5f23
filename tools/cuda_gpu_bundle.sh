#!/usr/bin/env bash
# Builds, on this machine, what tools/cuda_gpu_check.sh runs on a GPU machine, so that the GPU's short lease is not
# spent compiling: stripped tg_unit_tests, beautiful_mnist and tg_bench (Release; x86-64 binaries that need only
# glibc, libstdc++ and zlib there) and Fashion-MNIST's four files, in .gpu_bundle/ (ignored by git).
#   tools/cuda_gpu_bundle.sh      then, with the device tool: run "TG_BIN=.gpu_bundle tools/cuda_gpu_check.sh"
#                                 carrying .gpu_bundle
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu_bundle/' .git/info/exclude 2>/dev/null || echo '/.gpu_bundle/' >>.git/info/exclude
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target tg_unit_tests beautiful_mnist tg_bench
rm -rf .gpu_bundle && mkdir -p .gpu_bundle
for b in tg_unit_tests beautiful_mnist tg_bench; do strip -o .gpu_bundle/$b build/bin/$b; done
if [ -d /usr/share/datasets/fashion-mnist ]; then cp -r /usr/share/datasets/fashion-mnist .gpu_bundle/; fi
du -sh .gpu_bundle
