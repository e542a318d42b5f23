"""TinyJit: run a function of tensors as usual on its first call, capture its kernels on the second and replay them
after (the C++ core's tg::JitFunction). The tensors among the arguments (inside lists, tuples and dicts too) are the
inputs; the Python function does not run on a replay, so its other arguments and side effects are the capture's."""
from __future__ import annotations
import functools
from typing import Any, Callable, Generic, TypeVar
from tinygrad import _core
from tinygrad.tensor import Tensor
from tinygrad.helpers import getenv

ReturnType = TypeVar("ReturnType")

class JitError(Exception): pass

def _flatten(x, out: list[Tensor], dims: list):
  """x with each Tensor replaced by its index in out, and each bound Variable (a symbolic size) by its index in dims,
  for rebuilding with another call's tensors and values."""
  if isinstance(x, Tensor):
    out.append(x)
    return _Slot(len(out)-1, False)
  if isinstance(x, _core.Dim):
    x.unbind()  # a ValueError unless it is a bound Variable (an expression of one is not an argument the jit can bind)
    dims.append(x)
    return _Slot(len(dims)-1, True)
  if isinstance(x, (list, tuple)):
    items = [_flatten(v, out, dims) for v in x]
    return type(x)(items) if not hasattr(x, "_fields") else type(x)(*items)
  if isinstance(x, dict): return {k: _flatten(v, out, dims) for k, v in x.items()}
  return x

def _rebuild(x, ts: list[Tensor], dims: list):
  if isinstance(x, _Slot): return dims[x.i] if x.dim else ts[x.i]
  if isinstance(x, (list, tuple)):
    items = [_rebuild(v, ts, dims) for v in x]
    return type(x)(items) if not hasattr(x, "_fields") else type(x)(*items)
  if isinstance(x, dict): return {k: _rebuild(v, ts, dims) for k, v in x.items()}
  return x

class _Slot:
  __slots__ = ("i", "dim")
  def __init__(self, i: int, dim: bool): self.i, self.dim = i, dim

class TinyJit(Generic[ReturnType]):
  """@TinyJit on a function (or method) of tensors. Each call must pass tensors of the same shapes, dtypes and devices
  as the first; read an output before the next call (a replay writes the same buffers). JIT=0 turns it off."""
  def __init__(self, fxn: Callable[..., ReturnType]|None, captured=None, prune=False, optimize=False):
    if fxn is None and captured is None: raise ValueError("need a function or a captured jit")
    self.fxn = fxn
    self._in_tree: Any = None
    self._out_tree: Any = None
    self._jit = _core._JitFunction(self._run)
    functools.update_wrapper(self, fxn) if fxn is not None else None

  def _run(self, inputs: list[Tensor], dims: list) -> list[Tensor]:
    # called by the core with this call's (realized) inputs and bound variables: the Python function runs, its
    # tensors are the outputs
    args, kwargs = _rebuild(self._in_tree, inputs, dims)
    ret = self.fxn(*args, **kwargs)
    outs: list[Tensor] = []
    self._out_tree = _flatten(ret, outs, [])
    return outs

  def __get__(self, obj, objtype=None):
    return self if obj is None else functools.partial(self.__call__, obj)

  def __call__(self, *args, **kwargs) -> ReturnType:
    if getenv("JIT", 1) == 0: return self.fxn(*args, **kwargs)
    inputs: list[Tensor] = []
    dims: list = []
    self._in_tree = _flatten((args, kwargs), inputs, dims)
    outs = self._jit(inputs, dims)
    return _rebuild(self._out_tree, outs, [])

  @property
  def captured(self) -> bool: return self._jit.captured
  @property
  def jit_cache(self) -> list:
    """One entry per kernel a replay runs (the core keeps the kernels themselves)."""
    return [None] * self._jit.kernel_count
  def reset(self): self._jit.reset()
