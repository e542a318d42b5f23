"""Tensor: tinygrad's Tensor over the C++ core. The class is the core's (tinygrad._core.Tensor: operators, math,
movement, reductions, nn functions and autograd bound in C++ with tinygrad's names and keywords); this module adds what
reads better in Python: tinygrad's creation signatures (`*shape`, dtype=, device=), is_param (and older tinygrad's
requires_grad), reading values (numpy, tolist, data), in-place operators, iteration and the training switches."""
from __future__ import annotations
import contextlib, math
from typing import Any, Callable, Sequence
from tinygrad import _core
from tinygrad.dtype import DType, DTypeLike, dtypes, to_dtype, _to_np_dtype

Tensor = _core.Tensor
_core_init = Tensor.__init__

def _shape(shape: tuple) -> tuple[int, ...]:
  # f(2, 3), f((2, 3)) and f([2, 3]) are one shape; f((2, 3), 4) is neither (a ValueError, as tinygrad's argfix)
  if shape and isinstance(shape[0], (tuple, list)):
    if len(shape) != 1: raise ValueError(f"a shape is given as ints or as one tuple, not {shape}")
    shape = tuple(shape[0])
  for s in shape:
    if not isinstance(s, int) or isinstance(s, bool): raise TypeError(f"shape entries must be ints, got {s!r}")
    if s < 0: raise ValueError(f"cannot create a tensor with a negative dimension: {shape}")
  return tuple(shape)

def _grad(t: Tensor, requires_grad: bool|None) -> Tensor:
  if requires_grad is not None: t.requires_grad = requires_grad
  return t

def _check_kwargs(op: str, kwargs: dict):
  if kwargs: raise TypeError(f"{op}() got unexpected keyword arguments {sorted(kwargs)}")

_core_cat, _core_stack = Tensor.cat, Tensor.stack

def _tensors(op: str, first, rest: tuple) -> tuple:
  if not isinstance(first, (tuple, list)): return (first, *rest)
  if rest: raise ValueError(f"{op} takes its tensors as arguments or as one sequence, not both")
  if not first: raise ValueError(f"{op} needs at least one tensor")
  return tuple(first)

class _TensorPy:
  """The Python half of Tensor; its members are copied onto the core class below."""

  def __init__(self, data: Any = None, device: str|tuple|None = None, dtype: DTypeLike|None = None, requires_grad: bool|None = None):
    _core_init(self, data, device, dtype)
    if requires_grad is not None: self.requires_grad = requires_grad

  # ***** is_param: what an optimizer trains (True, the default) or only realizes with each step (False: a buffer such
  # as batchnorm's running statistics). backward() fills .grad of every float tensor in the graph either way. *****
  @property
  def is_param(self) -> bool: return self.__dict__.get("_is_param", True)
  @is_param.setter
  def is_param(self, v: bool): self.__dict__["_is_param"] = bool(v)
  def is_param_(self, is_param: bool = True) -> Tensor:
    self.is_param = is_param
    return self

  # ***** requires_grad: older tinygrad's switch, kept for its code: False makes a buffer, True a parameter *****
  @property
  def requires_grad(self) -> bool|None:
    if self._requires_grad: return True
    return self.__dict__.get("_rg")
  @requires_grad.setter
  def requires_grad(self, v: bool|None):
    if v: self._set_requires_grad(True)
    else:
      if self._requires_grad: self._set_requires_grad(False)
    self.__dict__["_rg"] = None if v is None else bool(v)
    self.is_param = v is not False
  def requires_grad_(self, requires_grad: bool = True) -> Tensor:
    self.requires_grad = requires_grad
    return self

  # ***** creation *****
  @staticmethod
  def empty(*shape, device=None, dtype: DTypeLike|None = None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("empty", kwargs)
    return _grad(Tensor._empty(_shape(shape), dtype, device), requires_grad)
  @staticmethod
  def full(shape, fill_value, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("full", kwargs)
    shape = _shape((shape,) if isinstance(shape, (tuple, list)) else (shape,))
    return _grad(Tensor._const(shape, fill_value, dtype, device), requires_grad)
  @staticmethod
  def zeros(*shape, **kwargs) -> Tensor:
    return Tensor.full(_shape(shape), 0.0 if kwargs.get("dtype") is None else 0, **kwargs)
  @staticmethod
  def ones(*shape, **kwargs) -> Tensor:
    return Tensor.full(_shape(shape), 1.0 if kwargs.get("dtype") is None else 1, **kwargs)
  @staticmethod
  def arange(start, stop=None, step=1, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("arange", kwargs)
    if stop is None: start, stop = 0, start
    # tinygrad's dtype: float when any argument is a Python float, else int
    if dtype is None and any(isinstance(x, float) for x in (start, stop, step)): dtype = dtypes.default_float
    # an int dtype that cannot hold the range is tinygrad's OverflowError; unsaid, the core picks int32 or int64
    if dtype is not None and dtypes.is_int(dt := to_dtype(dtype)):
      lo, hi = (start, stop - step) if step > 0 else (stop - step, start)
      if lo < dt.min or dt.max < hi: raise OverflowError(f"arange [{start}, {stop}) is not representable in dtype {dt}")
    return _grad(Tensor._arange(start, stop, step, dtype, device), requires_grad)
  @staticmethod
  def linspace(start, stop, steps: int, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None) -> Tensor:
    return _grad(Tensor._linspace(start, stop, steps, dtype, device), requires_grad)
  @staticmethod
  def eye(n: int, m: int|None = None, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None) -> Tensor:
    if n < 0 or (m is not None and m < 0): raise ValueError(f"eye needs non-negative sizes, got {n}, {m}")
    return _grad(Tensor._eye(n, -1 if m is None else m, dtype, device), requires_grad)
  @staticmethod
  def rand(*shape, device=None, dtype: DTypeLike|None = None, contiguous: bool = True, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("rand", kwargs)
    return _grad(Tensor._rand(_shape(shape), dtype, device), requires_grad)
  @staticmethod
  def randn(*shape, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("randn", kwargs)
    if dtype is not None and not dtypes.is_float(dt := to_dtype(dtype)):  # tinygrad's: drawn as floats, then cast
      return _grad(Tensor._randn(_shape(shape), None, device).cast(dt), requires_grad)
    return _grad(Tensor._randn(_shape(shape), dtype, device), requires_grad)
  @staticmethod
  def randint(*shape, low=0, high=10, dtype=dtypes.int32, device=None, **kwargs) -> Tensor:
    _check_kwargs("randint", kwargs)
    if not isinstance(low, int) or not isinstance(high, int): raise TypeError(f"{low=} and {high=} must be integers")
    if high <= low: raise ValueError(f"randint needs low < high, got {low=} {high=}")
    return Tensor._randint(_shape(shape), low, high, dtype, device)
  @staticmethod
  def normal(*shape, mean=0.0, std=1.0, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("normal", kwargs)
    return _grad(Tensor._normal(_shape(shape), mean, std, dtype, device), requires_grad)
  @staticmethod
  def uniform(*shape, low=0.0, high=1.0, dtype: DTypeLike|None = None, device=None, requires_grad: bool|None = None, **kwargs) -> Tensor:
    _check_kwargs("uniform", kwargs)
    return _grad(Tensor._uniform(_shape(shape), low, high, dtype, device), requires_grad)
  @staticmethod
  def scaled_uniform(*shape, dtype=None, device=None, requires_grad: bool|None = None) -> Tensor:
    return _grad(Tensor._init("scaled_uniform", _shape(shape), 0.0, dtype, device), requires_grad)
  @staticmethod
  def glorot_uniform(*shape, dtype=None, device=None, requires_grad: bool|None = None) -> Tensor:
    return _grad(Tensor._init("glorot_uniform", _shape(shape), 0.0, dtype, device), requires_grad)
  @staticmethod
  def kaiming_uniform(*shape, a: float = 0.01, dtype=None, device=None, requires_grad: bool|None = None) -> Tensor:
    return _grad(Tensor._init("kaiming_uniform", _shape(shape), a, dtype, device), requires_grad)
  @staticmethod
  def kaiming_normal(*shape, a: float = 0.01, dtype=None, device=None, requires_grad: bool|None = None) -> Tensor:
    return _grad(Tensor._init("kaiming_normal", _shape(shape), a, dtype, device), requires_grad)
  @staticmethod
  def randperm(n: int, device=None, dtype=dtypes.int32, **kwargs) -> Tensor:
    _check_kwargs("randperm", kwargs)
    return Tensor._randperm(n, dtype, device)

  def empty_like(self, dtype=None, device=None, **kwargs) -> Tensor:
    return Tensor.empty(self.shape, dtype=dtype or self.dtype, device=device or self.device, **kwargs)
  def full_like(self, fill_value, dtype=None, device=None, **kwargs) -> Tensor:
    return Tensor.full(self.shape, fill_value, dtype=dtype or self.dtype, device=device or self.device, **kwargs)
  def zeros_like(self, **kwargs) -> Tensor: return self.full_like(0, **kwargs)
  def ones_like(self, **kwargs) -> Tensor: return self.full_like(1, **kwargs)
  def rand_like(self, **kwargs) -> Tensor:
    dt = kwargs.pop("dtype", None) or (self.dtype if dtypes.is_float(self.dtype) else dtypes.default_float)
    return Tensor.rand(*self.shape, dtype=dt, device=kwargs.pop("device", self.device), **kwargs)
  def randn_like(self, dtype=None, **kwargs) -> Tensor:
    dt = dtype or (self.dtype if dtypes.is_float(self.dtype) else dtypes.default_float)
    return Tensor.randn(*self.shape, dtype=dt, device=kwargs.pop("device", self.device), **kwargs)
  def const_like(self, b, dtype=None) -> Tensor: return Tensor.full(self.shape, b, dtype=dtype or self.dtype, device=self.device)

  # ***** reading values *****
  def data(self) -> memoryview:
    """The values as a memoryview of the tensor's shape and format (realizes)."""
    if self.dtype == dtypes.bfloat16 or self.dtype in dtypes.fp8s: return self.cast(dtypes.float32).data()
    mv = memoryview(self._bytes())
    fmt = self.dtype.fmt
    if self.ndim == 0: return mv.cast(fmt)
    if 0 in self.shape: return mv.cast(fmt)
    return mv.cast(fmt, self.shape)
  def tolist(self):
    """The values as (nested) Python lists of int, float or bool; a 0-d tensor gives one scalar."""
    if self.ndim == 0: return self.item()
    if self.dtype in (dtypes.float16, dtypes.bfloat16, *dtypes.fp8s): return self.cast(dtypes.float32).tolist()
    if 0 in self.shape:
      def empty(s): return [] if len(s) == 1 else [empty(s[1:]) for _ in range(s[0])]
      return empty(self.shape)
    return self.data().tolist()
  def numpy(self):
    """The values as a numpy array of the tensor's dtype (bfloat16 and the 8-bit floats, which numpy lacks, as float32)."""
    import numpy as np
    if self.dtype == dtypes.bfloat16 or self.dtype in dtypes.fp8s: return self.cast(dtypes.float32).numpy()
    np_dt = _to_np_dtype(self.dtype)
    if np_dt is None: raise TypeError(f"no numpy dtype for {self.dtype}")
    return np.frombuffer(self._bytes(), dtype=np_dt).reshape(self.shape)
  def __array__(self, dtype=None, copy=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype)
  def __iter__(self):
    if self.ndim == 0: raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))
  def __float__(self) -> float: return float(self.item())
  def __int__(self) -> int: return int(self.item())
  def __index__(self) -> int:
    if not dtypes.is_int(self.dtype) or self.numel() != 1: raise TypeError("only integer tensors of one element can be used as an index")
    return int(self.item())

  # ***** in-place operators: x += y assigns, so every handle to x sees the new value *****
  def __iadd__(self, x) -> Tensor: return self.assign(self + x)
  def __isub__(self, x) -> Tensor: return self.assign(self - x)
  def __imul__(self, x) -> Tensor: return self.assign(self * x)
  def __itruediv__(self, x) -> Tensor: return self.assign(self / x)
  def __ifloordiv__(self, x) -> Tensor: return self.assign(self // x)
  def __imod__(self, x) -> Tensor: return self.assign(self % x)
  def __ipow__(self, x) -> Tensor: return self.assign(self ** x)
  def __iand__(self, x) -> Tensor: return self.assign(self & x)
  def __ior__(self, x) -> Tensor: return self.assign(self | x)
  def __ixor__(self, x) -> Tensor: return self.assign(self ^ x)
  def __ilshift__(self, x) -> Tensor: return self.assign(self << x)
  def __irshift__(self, x) -> Tensor: return self.assign(self >> x)
  def __imatmul__(self, x) -> Tensor: return self.assign(self @ x)

  # ***** cat and stack: the tensors as arguments (x.cat(y), Tensor.cat(x, y)) or as one sequence (Tensor.cat((x, y))) *****
  def cat(self, *args, dim: int = 0) -> Tensor:
    ts = _tensors("cat", self, args)
    if any(t.ndim == 0 for t in ts): raise IndexError("zero-dimensional tensors cannot be concatenated")  # tinygrad's kind
    return _core_cat(*ts, dim=dim)
  def stack(self, *args, dim: int = 0) -> Tensor: return _core_stack(*_tensors("stack", self, args), dim=dim)

  # ***** composed and convenience methods *****
  def sequential(self, ll: list[Callable[[Tensor], Tensor]]) -> Tensor:
    x = self
    for f in ll: x = f(x)
    return x
  def square_(self) -> Tensor: return self.assign(self.square())
  def swish_(self) -> Tensor: return self.assign(self.swish())
  def pad2d(self, padding: Sequence[int], value: float = 0.0) -> Tensor: return self.pad(tuple(padding), value=value)
  def pad_to(self, shape, *args, value: float = 0.0) -> Tensor:
    s = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,) + args
    if len(s) != self.ndim: raise ValueError(f"pad_to: shape {s} has {len(s)} dims, the tensor {self.ndim}")
    if any(n is not None and n < o for o, n in zip(self.shape, s)): raise ValueError(f"pad_to cannot shrink {self.shape} to {s}")
    return self.pad(tuple((0, 0 if n is None else n - o) for o, n in zip(self.shape, s)), value=value)
  def meshgrid(self, *args: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    if indexing not in ("ij", "xy"): raise RuntimeError(f"indexing must be 'ij' or 'xy', not {indexing!r}")
    ts = (self,) + args
    if len(ts) == 1: return ts
    shape = tuple(t.numel() for t in ts)
    out = [t.reshape(*[-1 if i == j else 1 for j in range(len(ts))]).expand(*shape) for i, t in enumerate(ts)]
    if indexing == "xy": out = [t.transpose(0, 1) for t in out]
    return tuple(out)
  def abs_(self) -> Tensor: return self.assign(self.abs())
  def mse(self, Y: Tensor) -> Tensor: return (self - Y).square().mean()
  def to_(self, device) -> Tensor: return self if device is None else self._become(self.to(device))
  # older tinygrad's spellings (its README): GPU is OpenCL
  def cpu(self) -> Tensor: return self.to("CPU")
  def gpu(self) -> Tensor: return self.to("GPU")
  def shard_(self, devices, axis: int|None = None) -> Tensor: return self._become(self.shard(devices, axis))
  def __deepcopy__(self, memo) -> Tensor:
    out = self.clone()  # new buffers with the same values, gradient and is_param
    if self.requires_grad is not None: out.requires_grad = self.requires_grad
    return out
  @staticmethod
  def train(mode: bool = True) -> "_TrainMode":
    """`with Tensor.train():` (or as a decorator): training mode inside, the old mode after."""
    return _TrainMode(mode)
  @staticmethod
  def test() -> "_TrainMode": return _TrainMode(False)

class _TrainMode(contextlib.ContextDecorator):
  def __init__(self, mode: bool): self.mode = mode
  def __enter__(self):
    self.prev, Tensor.training = Tensor.training, self.mode
    return self
  def __exit__(self, *exc):
    Tensor.training = self.prev
    return False

def _keeps_is_param(f):
  def g(self, *args, **kwargs):
    out = f(self, *args, **kwargs)
    if not self.is_param: out.is_param = False
    return out
  g.__name__, g.__doc__ = f.__name__, f.__doc__
  return g
for _name in ("to", "shard"): setattr(_TensorPy, _name, _keeps_is_param(getattr(Tensor, _name)))
_core_clone = Tensor.clone
def _clone(self, *args, **kwargs) -> Tensor:
  out = _core_clone(self, *args, **kwargs)
  if not self.is_param: out.is_param = False
  if self.grad is not None: out.grad = self.grad.clone().to(out.device)  # tinygrad's clone copies the gradient too
  return out
_TensorPy.clone = _clone

for _name, _member in _TensorPy.__dict__.items():
  if _name in ("__module__", "__dict__", "__weakref__", "__doc__"): continue
  setattr(Tensor, _name, _member)
Tensor.__module__ = "tinygrad.tensor"
del _name, _member
