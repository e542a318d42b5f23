#!/usr/bin/env bash
# tinygrad.cpp next to PyTorch on the same workloads, in the same run: one line per measurement with both times
# and the ratio (> 1: we are faster), and ours as a share of the machine's limit it comes nearest (tg_bench peak:
# the FMA peak of every core, or their copy bandwidth; a kernel with several streams may pass 100% of the copy's).
#   bench/compare.sh                       every workload at its default size
#   bench/compare.sh matmul 2048           one workload with tg_bench's arguments
#   ROUNDS=3 bench/compare.sh conv         tg and torch alternating three times: the median of each side
#   DEV=OPENCL VS=CPU bench/compare.sh     our kernels on one device next to ours on another instead of PyTorch
#                                          (OpenCL through PoCL next to the C kernels, both on this CPU)
# Builds tg_bench (Release, in build/) and installs Debian's python3-torch when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
VS=${VS:-}
if [ -z "$VS" ] && ! "$PY" -c "import torch" 2>/dev/null; then
  echo "installing python3-torch (Debian) for the PyTorch side"
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch
fi
# Debian's python3-torch does its matmuls through the system BLAS; with the reference libblas3 that is ~4.5 GFLOP/s
# at 1024. OpenBLAS (libopenblas0-pthread) is what a user who cares about speed has: install it when missing.
if [ -z "$VS" ] && ! ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; then
  echo "installing libopenblas0-pthread (Debian) so PyTorch's matmuls use an optimized BLAS"
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas0-pthread
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target tg_bench >/dev/null

if [ $# -gt 0 ]; then runs=("$*"); else
  runs=("matmul 256" "matmul 512" "matmul 1024" "matmul 2048 --reps 2" "matmul 4096 --reps 1"
        "matmul 5632 --m 512 --k 2048 --bt --reps 3" "matmul 1024 --m 256 --k 1024 --batch 8 --reps 3"
        "matmul 1024 --bfloat16" "matmul 2048 --bfloat16 --reps 2" "conv" "elementwise" "reduce" "softmax" "sort" "sort --rows 64 --cols 512" "mnist_step")
fi
# ROUNDS=n: tg and torch alternate n times per workload and each line shows the median of the n medians (on a
# shared machine the load changes from minute to minute; alternating exposes both sides to the same load)
ROUNDS=${ROUNDS:-1}
other=${VS:-torch}
# the machine's limits (tg_bench peak: the float32 FMA peak of every core, their copy bandwidth): each figure of ours
# is also printed as its share of the limit it comes nearest
limits=$(./build/bin/tg_bench peak)
peak_gflops=$(echo "$limits" | sed -n 's/.*fma_peak.*cores", "gflops": \([0-9.]*\).*/\1/p')
peak_gbs=$(echo "$limits" | sed -n 's/.*"gbs": \([0-9.]*\).*/\1/p')
# bfloat16 products: AVX512-BF16's peak where the CPU has it (bf16_pair_dot), else the float32 FMA's
peak_bf16=$(echo "$limits" | sed -n 's/.*bf16_dot_peak.*"gflops": \([0-9.]*\).*/\1/p')
peak_bf16=${peak_bf16:-$peak_gflops}
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores: float32 FMA peak $peak_gflops GFLOP/s, bfloat16 $peak_bf16, copy $peak_gbs GB/s"
printf "%-14s %-34s %12s %12s %8s   %s\n" workload shape "${DEV:-CPU} ms" "$other ms" ratio "(GFLOP/s or GB/s: ${DEV:-CPU} / $other, ours as % of the peak)"
for r in "${runs[@]}"; do
  tg_out="" torch_out=""
  for _ in $(seq "$ROUNDS"); do
    # one after the other, never at the same time: both use every core
    # shellcheck disable=SC2086
    tg_out+=$(./build/bin/tg_bench $r)$'\n'
    # shellcheck disable=SC2086
    if [ -n "$VS" ]; then torch_out+=$(DEV=$VS ./build/bin/tg_bench $r)$'\n'
    else torch_out+=$("$PY" bench/torch_bench.py $r)$'\n'; fi
  done
  "$PY" -c '
import json, sys
def rounds(text):  # per measurement (in order of its first round), the line of each round
  out = {}
  for l in text.splitlines():
    if l.strip():
      d = json.loads(l)
      out.setdefault((d["name"], d["shape"]), []).append(d)
  return out
def median(ds):  # the line with the median time
  return sorted(ds, key=lambda d: d["median_ms"])[len(ds) // 2]
tgs, pts = rounds(sys.argv[1]), rounds(sys.argv[2])
for key, runs in tgs.items():
  tg, pt = median(runs), median(pts[key])
  limit = {"gflops": float((sys.argv[5] if "bfloat16" in tg["name"] else sys.argv[3]) or 0), "gbs": float(sys.argv[4] or 0)}
  rate = next((k for k in ("gflops", "gbs") if k in tg), None)
  extra = "%.1f / %.1f %s" % (tg[rate], pt[rate], "GFLOP/s" if rate == "gflops" else "GB/s") if rate else ""
  # bound by whichever limit it is nearest (an add has GFLOP/s too, but its bytes are what limit it)
  shares = [tg[k] / limit[k] for k in limit if k in tg and limit[k] > 0]
  if shares: extra += " (%.0f%%)" % (100 * max(shares))
  print("%-14s %-34s %12.3f %12.3f %8.3f   %s" % (tg["name"], tg["shape"], tg["median_ms"], pt["median_ms"],
                                                  pt["median_ms"] / tg["median_ms"], extra))
' "$tg_out" "$torch_out" "$peak_gflops" "$peak_gbs" "$peak_bf16"
done
