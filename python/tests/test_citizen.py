# The package as a good Python citizen: Ctrl-C stops a long realize between kernels, other Python threads run while
# kernels do, dropped tensors give their memory back, and TinyJit's replays do not grow the process.
import gc, os, signal, subprocess, sys, textwrap, threading
import numpy as np
from tinygrad import Tensor, TinyJit, GlobalCounters

def _chain(n: int, size: int = 256) -> tuple[np.ndarray, Tensor]:
  """n matmuls by the identity in a row: one realize of n kernels (a reduce cannot fuse into the next one's) whose
  exact result is the start."""
  w = Tensor.eye(size).contiguous().realize()
  x = Tensor.rand(size, size).realize()
  x0 = x.numpy()
  for _ in range(n): x = x @ w
  return x0, x

def test_ctrl_c_stops_a_realize_between_kernels():
  # A thread sends SIGINT once the main thread's realize has run a few kernels: the realize must stop there with
  # KeyboardInterrupt, and the process must go on computing correctly (the tensor keeps its graph).
  # The realize runs with the GIL released, so the thread runs meanwhile.
  script = textwrap.dedent(f"""
    import os, signal, sys, threading, time
    sys.path[:0] = {sys.path!r}
    from tinygrad import Tensor, GlobalCounters
    sys.path.insert(0, {os.path.dirname(__file__)!r})
    from test_citizen import _chain
    n = 3000
    x0, x = _chain(n)
    start = GlobalCounters.kernel_count
    def poke():
      while GlobalCounters.kernel_count < start + 5: time.sleep(0.0005)
      os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=poke, daemon=True).start()
    try:
      x.realize()
      print("finished", GlobalCounters.kernel_count - start)
    except KeyboardInterrupt:
      print("interrupted", GlobalCounters.kernel_count - start, n)
    print("after", (Tensor.ones(4) * 2).sum().item(), bool((x.numpy() == x0).all()))
  """)
  r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr
  lines = r.stdout.split("\n")
  words = lines[0].split()
  assert words[0] == "interrupted", r.stdout
  assert 5 <= int(words[1]) < int(words[2]) // 2, r.stdout  # stopped early in the run, not at its end
  assert lines[1] == "after 8.0 True", r.stdout  # and the stopped tensor, realized again, has its value

def test_other_python_threads_run_while_kernels_run():
  _, x = _chain(400)
  start = GlobalCounters.kernel_count
  seen, stop = [], threading.Event()
  def watch():
    while not stop.is_set(): seen.append(GlobalCounters.kernel_count)
  t = threading.Thread(target=watch)
  t.start()
  x.realize()
  end = GlobalCounters.kernel_count
  stop.set(); t.join()
  assert end - start >= 400
  # the watcher saw the count move inside the one realize call: it ran while the kernels did
  assert any(start < k < end for k in seen)

def test_a_dropped_tensor_gives_its_memory_back():
  gc.collect()
  before = GlobalCounters.mem_used
  t = (Tensor.ones(1 << 20) * 3).realize()
  assert GlobalCounters.mem_used >= before + 4 * (1 << 20)
  del t
  gc.collect()
  assert GlobalCounters.mem_used == before

def _rss_bytes() -> int:
  with open("/proc/self/statm") as f: return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def test_ten_thousand_jit_steps_do_not_grow_memory():
  w = Tensor.randn(16, 16).realize()
  @TinyJit
  def step(x: Tensor) -> Tensor:
    w.assign(w * 0.999 + x.sum(0).reshape(1, 16) * 1e-6).realize()
    return (x @ w).relu().sum().realize()
  x = Tensor.randn(8, 16).realize()
  for _ in range(1000): step(x).item()
  gc.collect()
  rss, mem = _rss_bytes(), GlobalCounters.mem_used
  for _ in range(9000): step(x).item()
  gc.collect()
  assert GlobalCounters.mem_used == mem
  # a leak of even 100 bytes a step would show as 900 KB; allow the allocator's slack
  assert _rss_bytes() - rss < (1 << 20), (rss, _rss_bytes())
