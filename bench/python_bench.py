#!/usr/bin/env python3
# One framework's side of bench/python.sh, as JSON lines: the per-op overhead from Python and beautiful_mnist's
# training step (examples/python/beautiful_mnist.py's model), defined as tg_bench's `overhead`, `schedule` and
# `mnist_step` define them in C++.
#   python3 bench/python_bench.py ours|tinygrad|torch
# "ours" and "tinygrad" import the `tinygrad` package found on PYTHONPATH (ours: build/python; tinygrad: a checkout
# of github.com/tinygrad/tinygrad); "torch" runs PyTorch eagerly.
import json, os, statistics, sys, time

def line(name: str, what: str, ms: float): print(json.dumps({"name": name, "what": what, "median_ms": ms}), flush=True)

def median_ms(reps: int, f) -> float:
  times = []
  for _ in range(reps):
    t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
  return statistics.median(times) * 1e3

def graph_ops(x, b, n: int, reduce_max):
  # tg_bench schedule's mix: elementwise ops with a reduce every 100 (broadcast back)
  for i in range(n):
    if i % 100 == 99: x = x - reduce_max(x) * 0.5
    elif i % 3 == 0: x = x * 0.999 + b
    elif i % 3 == 1: x = x.maximum(b)
    else: x = x - b * 0.5
  return x

def tinygrad_side():
  from tinygrad import Tensor, TinyJit, Context, nn
  x = Tensor.arange(16).float().contiguous().realize()
  (x + 1).realize()  # compiles once
  line("overhead", "realize of (x + 1), x of 16 floats, kernel compiled", median_ms(2000, lambda: (x + 1).realize()))
  a, b = Tensor.rand(64).realize(), Tensor.rand(64).realize()
  line("graph", "build a 10,000-op graph (lazy)", median_ms(5, lambda: graph_ops(a, b, 10000, lambda t: t.max(0, keepdim=True))))

  sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "python"))
  from beautiful_mnist import Model  # (its training loop runs only as a script)
  model = Model()
  params = nn.state.get_parameters(model)
  X, Y = (Tensor.rand(2048, 1, 28, 28) * 255).cast("uint8").realize(), Tensor.randint(2048, high=10).realize()
  opt = nn.optim.Adam(params)
  @TinyJit
  def step():
    with Context(TRAINING=1):  # (tinygrad's current spelling; Tensor.train() is gone from it)
      opt.zero_grad()
      s = Tensor.randint(512, high=2048)
      loss = model(X[s]).sparse_categorical_crossentropy(Y[s]).backward()
      return loss.realize(*opt.schedule_step())
  for _ in range(3): step().item()  # run, capture, replay
  line("mnist_step", "beautiful_mnist's training step, batch 512, TinyJit", median_ms(5, lambda: step().item()))

def torch_side():  # (its mnist_step is torch_bench.py's)
  import torch
  torch.set_grad_enabled(False)
  x = torch.arange(16).float()
  line("overhead", "realize of (x + 1), x of 16 floats, kernel compiled", median_ms(2000, lambda: x + 1))
  a, b = torch.rand(64), torch.rand(64)
  line("graph", "build a 10,000-op graph (lazy)", median_ms(5, lambda: graph_ops(a, b, 10000, lambda t: t.max(0, keepdim=True)[0])))

if __name__ == "__main__":
  torch_side() if sys.argv[1] == "torch" else tinygrad_side()
