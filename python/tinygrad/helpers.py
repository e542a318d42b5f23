"""tinygrad's helpers that user code calls: getenv, Context and its variables (DEBUG, BEAM, NOOPT, JIT ...),
GlobalCounters, Timing, colored, prod, all_same, argfix, flatten, dedup, fetch of a local path, tqdm/trange."""
from __future__ import annotations
import contextlib, functools, math, os, pathlib, sys, time, urllib.parse
from typing import Any, Callable, Iterable, TypeVar
from tinygrad import _core

T = TypeVar("T")
GlobalCounters = _core.GlobalCounters

@functools.cache
def getenv(key: str, default=0):
  """The environment's value of key, of default's type (tinygrad's getenv: read once, cached)."""
  return type(default)(os.getenv(key, default))

class ContextVar:
  """A setting of the core's Context table: .value is the innermost Context's, else the environment's, else default."""
  _cache: dict[str, "ContextVar"] = {}
  def __init__(self, key: str, default: int = 0):
    self.key, self.default = key, default
    ContextVar._cache[key] = self
  @property
  def value(self) -> int: return _core.getenv_int(self.key, self.default)
  def __bool__(self): return bool(self.value)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __lt__(self, x): return self.value < x
  def __le__(self, x): return self.value <= x
  def __eq__(self, x): return self.value == x
  def __hash__(self): return hash(self.key)

DEBUG, BEAM, NOOPT, JIT = ContextVar("DEBUG", 0), ContextVar("BEAM", 0), ContextVar("NOOPT", 0), ContextVar("JIT", 1)
IMAGE, TRACEMETA, CACHELEVEL = ContextVar("IMAGE", 0), ContextVar("TRACEMETA", 1), ContextVar("CACHELEVEL", 2)

class Context(contextlib.ContextDecorator):
  """Settings for a `with` block or a decorated function: Context(DEBUG=2, BEAM=1, NOOPT=1, TRAINING=1).
  The values reach the C++ core (its kernels, cache keys and logs read them); TRAINING sets Tensor.training."""
  def __init__(self, **kwargs):
    self.kwargs = kwargs
    self._stack: list[tuple[Any, Any]] = []
  def __enter__(self):
    from tinygrad.tensor import Tensor
    kw = {k: repr(v).removeprefix("dtypes.") if isinstance(v, _core.DType) else v for k, v in self.kwargs.items()}  # dtypes.half
    training = kw.pop("TRAINING", None)
    core = _core._Context(kw)
    core.enter()
    prev_training = Tensor.training
    if training is not None: Tensor.training = bool(training)
    self._stack.append((core, prev_training))  # a stack: the same Context may be entered again while active
    return self
  def __exit__(self, *exc):
    from tinygrad.tensor import Tensor
    core, prev_training = self._stack.pop()
    core.exit()
    if "TRAINING" in self.kwargs: Tensor.training = prev_training
    return False

def prod(x: Iterable[T]) -> T|int: return functools.reduce(lambda a, b: a*b, x, 1)
def all_same(items) -> bool: return all(x == items[0] for x in items)
def all_int(t) -> bool: return all(isinstance(s, int) for s in t)
def argfix(*x):
  if x and x[0].__class__ in (tuple, list):
    if len(x) != 1: raise ValueError(f"bad arg {x}")
    return tuple(x[0])
  return x
def flatten(l: Iterable[Iterable[T]]) -> list[T]: return [item for sublist in l for item in sublist]
def dedup(x: Iterable[T]) -> list[T]: return list(dict.fromkeys(x))
def ceildiv(num, amt) -> int: return -(num // -amt)
def round_up(num: int, amt: int) -> int: return (num+amt-1)//amt * amt
def make_tuple(x, cnt: int) -> tuple: return (x,)*cnt if isinstance(x, int) else tuple(x)

def colored(st, color: str|None, background=False) -> str:
  if color is None: return st
  colors = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white']
  return f"\u001b[{10*background+60*(color.upper() == color)+30+colors.index(color.lower())}m{st}\u001b[0m"
def ansilen(s: str) -> int:
  import re
  return len(re.sub('\x1b\\[(K|.*?m)', '', s))

class Timing(contextlib.ContextDecorator):
  """Prints how long the block took: with Timing("step "): ..."""
  def __init__(self, prefix="", on_exit: Callable|None = None, enabled=True):
    self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self): self.st = time.perf_counter_ns()
  def __exit__(self, *exc):
    self.et = time.perf_counter_ns() - self.st
    if self.enabled: print(f"{self.prefix}{self.et*1e-6:6.2f} ms"+(self.on_exit(self.et) if self.on_exit else ""))

def fetch(url: str, name: str|pathlib.Path|None = None, subdir: str|None = None, gunzip=False, allow_caching=True) -> pathlib.Path:
  """A local file as a path (file:// URLs and plain paths). This machine has no network: anything else raises."""
  if url.startswith(("/", ".")) or url.startswith("file://") or os.path.exists(url):
    p = pathlib.Path(urllib.parse.urlparse(url).path if url.startswith("file://") else url)
    if not p.exists(): raise FileNotFoundError(f"fetch: {p} does not exist")
    return p
  raise RuntimeError(f"fetch: cannot download {url}: tinygrad.cpp's fetch reads local files only (pass a path)")

class tqdm:
  """A small progress bar, enough for the examples: tqdm(iterable, desc=..., total=...), set_description, update."""
  def __init__(self, iterable=None, desc: str = '', disable: bool = False, unit: str = 'it', total: int|None = None, **kwargs):
    self.iterable, self.desc, self.disable, self.unit = iterable, desc, disable, unit
    self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
    self.n, self.st = 0, time.perf_counter()
  def __iter__(self):
    for item in self.iterable:
      yield item
      self.update(1)
    self.close()
  def set_description(self, desc: str): self.desc = desc; self._print() # noqa: E702
  def update(self, n: int = 1): self.n += n; self._print() # noqa: E702
  def _print(self):
    if self.disable: return
    el = time.perf_counter() - self.st
    tot = f"/{self.total}" if self.total is not None else ""
    print(f"\r{self.desc}{': ' if self.desc else ''}{self.n}{tot} [{el:.2f}s, {self.n/el if el else 0:.2f}{self.unit}/s]", end="",
          file=sys.stderr, flush=True)
  def close(self):
    if not self.disable: print(file=sys.stderr)
  def __enter__(self): return self
  def __exit__(self, *exc): self.close()
class trange(tqdm):
  def __init__(self, n: int, **kwargs): super().__init__(iterable=range(n), total=n, **kwargs)

def is_numpy_ndarray(x) -> bool: return str(type(x)) == "<class 'numpy.ndarray'>"
def unwrap(x):
  assert x is not None
  return x
def mean(x): return sum(x) / len(x)
def cdiv(x, y): return -(x // -y) if x*y >= 0 else x // y
def _float_eq(a, b): return math.isclose(a, b)
