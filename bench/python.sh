#!/usr/bin/env bash
# tinygrad.cpp from Python next to our C++ API, tinygrad itself and PyTorch eager, in one run: the per-op overhead
# (realize of x + 1 on 16 floats; building a 10,000-op graph) and beautiful_mnist's training step at batch 512.
# One line per measurement: each side's median in ms and the ratio of each to ours from Python (> 1: we are faster).
#   bench/python.sh                          ours (C++ and Python) and PyTorch
#   TINYGRAD_SRC=/path/to/tinygrad bench/python.sh    also tinygrad, from a checkout of github.com/tinygrad/tinygrad
# Builds tg_bench and the Python module (Release, in build/). tinygrad runs on its CPU device (clang).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 --target tg_bench tg_python >/dev/null
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"

# one side after the other, never at the same time: the kernels use every core
cpp=$(./build/bin/tg_bench overhead; ./build/bin/tg_bench schedule --ops 10000; ./build/bin/tg_bench mnist_step --reps 5)
ours=$(PYTHONPATH=build/python "$PY" bench/python_bench.py ours)
torch=$("$PY" bench/python_bench.py torch; "$PY" bench/torch_bench.py mnist_step --reps 5)
tinygrad=""
if [ -n "${TINYGRAD_SRC:-}" ]; then tinygrad=$(PYTHONPATH=$TINYGRAD_SRC "$PY" bench/python_bench.py tinygrad); fi

"$PY" - "$cpp" "$ours" "$torch" "$tinygrad" <<'PYEOF'
import json, sys
def parse(text): return [json.loads(l) for l in text.splitlines() if l.strip()]
cpp, ours, torch, tiny = (parse(t) for t in sys.argv[1:5])
def cpp_ms(name):
  for d in cpp:
    if name == "overhead" and d["name"] == "overhead" and "realize" in d["what"]: return d["median_us"] / 1e3
    if name == "graph" and d["name"] == "schedule": return d["build_ms"]
    if name == "mnist_step" and d["name"] == "mnist_step": return d["median_ms"]
def ms(side, name): return next((d["median_ms"] for d in side if d["name"] == name), None)
cols = ["ours Python", "ours C++", "PyTorch eager"] + (["tinygrad"] if tiny else [])
print("%-10s %-52s" % ("workload", "what") + "".join("%18s" % (c + " ms") for c in cols) + "   ratios to ours Python (> 1: ours is faster)")
for d in ours:
  n, mine = d["name"], d["median_ms"]
  vals = [mine, cpp_ms(n), ms(torch, n)] + ([ms(tiny, n)] if tiny else [])
  cells = "".join("%18.4f" % v if v is not None else "%18s" % "-" for v in vals)
  ratios = ", ".join("%s %.2f" % (c, v / mine) for c, v in zip(cols[1:], vals[1:]) if v)
  print("%-10s %-52s%s   %s" % (n, d["what"], cells, ratios))
PYEOF
