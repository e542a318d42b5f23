#!/usr/bin/env python3
"""The workloads of tg_bench (bench/kernels.cpp) in PyTorch, printing the same JSON lines.

  torch_bench.py WORKLOAD [args as tg_bench takes them]      e.g. torch_bench.py matmul 1024
PyTorch runs with as many threads as tinygrad.cpp uses (CPU_THREADS, else every core); DEV=CUDA runs on the GPU
(times wait for it), as tg_bench does with DEV=CUDA.
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(int(os.environ.get("CPU_THREADS", os.cpu_count())))
CUDA = os.environ.get("DEV", "CPU").upper().startswith("CUDA")
if CUDA: torch.set_default_device("cuda")
sync = torch.cuda.synchronize if CUDA else (lambda: None)


def arg(flag, default):
  a = sys.argv[2:]
  return int(a[a.index(flag) + 1]) if flag in a else default


def positional(default):
  a = sys.argv[2:]
  return int(a[0]) if a and not a[0].startswith("--") else default


def time_median(reps, f):
  f()
  sync()
  ts = []
  for _ in range(reps):
    t0 = time.perf_counter()
    f()
    sync()
    ts.append(time.perf_counter() - t0)
  return sorted(ts)[len(ts) // 2]


def line(name, shape, s, flops=0, nbytes=0):
  d = {"name": name, "shape": shape, "median_ms": round(s * 1e3, 4)}
  if flops: d["gflops"] = round(flops / s * 1e-9, 2)
  if nbytes: d["gbs"] = round(nbytes / s * 1e-9, 2)
  print(json.dumps(d), flush=True)


def matmul():
  n, reps = positional(1024), arg("--reps", 5)
  m, k, batch, bt = arg("--m", n), arg("--k", n), arg("--batch", 0), "--bt" in sys.argv
  dt = torch.float16 if "--half" in sys.argv else torch.bfloat16 if "--bfloat16" in sys.argv else torch.float32
  lead = (batch,) if batch else ()
  a = torch.rand(*lead, m, k).to(dt)
  b = torch.rand(*lead, n, k).to(dt).transpose(-1, -2) if bt else torch.rand(*lead, k, n).to(dt)
  name = ("matmul" if dt == torch.float32 else "matmul_" + str(dt).split(".")[1]) + ("_bt" if bt else "")
  line(name, (f"{batch}x" if batch else "") + f"{m}x{k}x{n}", time_median(reps, lambda: a @ b), 2.0 * max(batch, 1) * m * n * k)


def conv():
  bs, reps = arg("--batch", 64), arg("--reps", 20)
  for cin, cout, k, hw in [(1, 32, 5, 28), (32, 32, 5, 24), (32, 64, 3, 10), (64, 64, 3, 8)]:
    x, w = torch.randn(bs, cin, hw, hw), torch.randn(cout, cin, k, k)
    out = hw - k + 1
    flops = 2.0 * bs * cout * out * out * cin * k * k
    shape = f"{bs}x{cin}x{hw}x{hw} * {cout}x{cin}x{k}x{k}"
    line("conv_forward", shape, time_median(reps, lambda: F.conv2d(x, w)), flops)
    xg, wg, up = x.clone().requires_grad_(), w.clone().requires_grad_(), torch.randn(bs, cout, out, out)
    line("conv_backward", shape, time_median(reps, lambda: torch.autograd.grad(F.conv2d(xg, wg), [xg, wg], up)), 2 * flops)


def elementwise():
  n, reps = arg("--n", 1 << 24), arg("--reps", 10)
  a, b = torch.rand(n), torch.rand(n)
  dst = torch.empty(n)
  line("memcpy", f"{n} float32", time_median(reps, lambda: dst.copy_(a)), 0, 2.0 * n * 4)
  line("add", f"{n} float32", time_median(reps, lambda: a + b), n, 3.0 * n * 4)
  line("gelu", f"{n} float32", time_median(reps, lambda: F.gelu(a, approximate="tanh")), 0, 2.0 * n * 4)
  square = a.view(4096, n // 4096)
  line("transpose", f"4096x{n // 4096} float32", time_median(reps, lambda: square.t().contiguous()), 0, 2.0 * n * 4)


def copy():
  n, reps = arg("--n", 1 << 26), arg("--reps", 10)
  dev = "cuda" if CUDA else "cpu"
  host = torch.rand(n, device="cpu")
  on_dev = host.to(dev)
  line("copy_to_device", f"{n} float32", time_median(reps, lambda: host.to(dev)), 0, n * 4.0)
  line("copy_to_host", f"{n} float32", time_median(reps, lambda: on_dev.to("cpu")), 0, n * 4.0)
  if CUDA:  # from and to pinned host memory, which the driver copies without staging
    pinned = host.pin_memory()
    line("copy_to_device_pinned", f"{n} float32", time_median(reps, lambda: pinned.to(dev)), 0, n * 4.0)
    out = torch.empty(n, device="cpu").pin_memory()
    line("copy_to_host_pinned", f"{n} float32", time_median(reps, lambda: out.copy_(on_dev)), 0, n * 4.0)


def reduce():
  n, reps = arg("--n", 1 << 24), arg("--reps", 10)
  a = torch.rand(n)
  line("sum", f"{n} float32", time_median(reps, lambda: a.sum()), n, n * 4.0)
  m = a.reshape(4096, n // 4096)
  line("sum_rows", f"4096x{n // 4096} axis 1", time_median(reps, lambda: m.sum(1)), n, n * 4.0)
  line("sum_cols", f"4096x{n // 4096} axis 0", time_median(reps, lambda: m.sum(0)), n, n * 4.0)


def softmax():
  r, c, reps = arg("--rows", 4096), arg("--cols", 4096), arg("--reps", 5)
  a = torch.rand(r, c)
  line("softmax", f"{r}x{c} axis 1", time_median(reps, lambda: a.softmax(1)), 0, 2.0 * r * c * 4)


def sort():
  r, c, reps = arg("--rows", 1), arg("--cols", 65536), arg("--reps", 5)
  a = torch.rand(r, c)
  line("sort", f"{r}x{c} axis 1", time_median(reps, lambda: torch.sort(a, dim=1, stable=True)), 0, 0)


def mnist_step():
  bs, reps = arg("--batch", 512), arg("--reps", 3)
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
                        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
                        nn.Flatten(1), nn.Linear(576, 10))
  X, Y = (torch.rand(2048, 1, 28, 28) * 255).to(torch.uint8), torch.randint(0, 10, (2048,))
  opt = torch.optim.Adam(model.parameters())

  def step():
    opt.zero_grad()
    s = torch.randint(0, 2048, (bs,))
    loss = F.cross_entropy(model(X[s].float()), Y[s])
    loss.backward()
    opt.step()
    return loss.item()
  line("mnist_step", f"batch {bs}", time_median(reps, step))


if __name__ == "__main__":
  {"matmul": matmul, "conv": conv, "elementwise": elementwise, "copy": copy, "reduce": reduce, "softmax": softmax,
   "sort": sort, "mnist_step": mnist_step}[sys.argv[1]]()
