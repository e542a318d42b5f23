"""function: tinygrad's decorator that marks a function whose graph is built once and called as a unit. Here the core's
schedule cache already recognises a graph of the same form on every call, so the decorator calls the function
itself; it keeps tinygrad's signature (@function and @function(...)) and its check of what the function returns."""
from __future__ import annotations
import functools
from typing import Callable, Generic, TypeVar
from tinygrad.tensor import Tensor

ReturnType = TypeVar("ReturnType")

class _function(Generic[ReturnType]):
  def __init__(self, fxn: Callable[..., ReturnType], *, precompile: bool, precompile_backward: bool, allow_implicit: bool,
               grad_fxn: Callable|None):
    if grad_fxn is not None: raise NotImplementedError("function(grad_fxn=...): a custom gradient is not supported yet")
    self.fxn, self.precompile, self.precompile_backward, self.allow_implicit = fxn, precompile, precompile_backward, allow_implicit
    functools.update_wrapper(self, fxn)
  def __get__(self, obj, objtype=None): return functools.partial(self.__call__, obj) if obj is not None else self
  def __call__(self, *args, **kwargs) -> ReturnType:
    ret = self.fxn(*args, **kwargs)
    if not (isinstance(ret, Tensor) or (isinstance(ret, tuple) and all(isinstance(x, Tensor) for x in ret))):
      raise RuntimeError(f"function return type {type(ret)} not supported (a Tensor or a tuple of Tensors)")
    return ret

def function(fxn: Callable|None = None, *, precompile: bool = False, precompile_backward: bool = False, allow_implicit: bool = False,
             grad_fxn: Callable|None = None):
  make = lambda f: _function(f, precompile=precompile, precompile_backward=precompile_backward, allow_implicit=allow_implicit,
                             grad_fxn=grad_fxn)
  return make if fxn is None else make(fxn)
