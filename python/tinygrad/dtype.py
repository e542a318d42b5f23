"""DType and dtypes as tinygrad names them. The DType objects are the C++ core's, one per scalar type, so
`t.dtype is dtypes.float32` holds."""
from __future__ import annotations
from typing import Union
from tinygrad import _core

DType = _core.DType
ConstType = Union[float, int, bool]
DTypeLike = Union[str, DType]

class DTypes:
  bool = _core.dtype_by_name("bool")
  int8 = _core.dtype_by_name("int8")
  uint8 = _core.dtype_by_name("uint8")
  int16 = _core.dtype_by_name("int16")
  uint16 = _core.dtype_by_name("uint16")
  int32 = _core.dtype_by_name("int32")
  uint32 = _core.dtype_by_name("uint32")
  int64 = _core.dtype_by_name("int64")
  uint64 = _core.dtype_by_name("uint64")
  fp8e4m3 = _core.dtype_by_name("fp8e4m3")
  fp8e5m2 = _core.dtype_by_name("fp8e5m2")
  fp8e4m3fnuz = _core.dtype_by_name("fp8e4m3fnuz")
  fp8e5m2fnuz = _core.dtype_by_name("fp8e5m2fnuz")
  float16 = _core.dtype_by_name("float16")
  bfloat16 = _core.dtype_by_name("bfloat16")
  float32 = _core.dtype_by_name("float32")
  float64 = _core.dtype_by_name("float64")
  # tinygrad's aliases
  half = float16; float = float32; double = float64 # noqa: E702
  uchar = uint8; ushort = uint16; uint = uint32; ulong = uint64 # noqa: E702
  char = int8; short = int16; int = int32; long = int64 # noqa: E702
  # the DEFAULT_FLOAT and DEFAULT_INT settings (the environment, or Context(DEFAULT_FLOAT="half")), as tinygrad's
  @property
  def default_float(self) -> DType: return _core.dtype_by_name("default_float")
  @property
  def default_int(self) -> DType: return _core.dtype_by_name("default_int")

  fp8_ocp = (fp8e4m3, fp8e5m2)
  fp8_fnuz = (fp8e4m3fnuz, fp8e5m2fnuz)
  fp8s = fp8_ocp + fp8_fnuz
  floats = fp8s + (float16, bfloat16, float32, float64)
  uints = (uint8, uint16, uint32, uint64)
  sints = (int8, int16, int32, int64)
  ints = uints + sints
  all = floats + ints + (bool,)  # noqa: A003

  @staticmethod
  def is_float(x: DType) -> bool: return x in dtypes.floats
  @staticmethod
  def is_int(x: DType) -> bool: return x in dtypes.ints
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x in dtypes.uints
  @staticmethod
  def is_bool(x: DType) -> bool: return x == dtypes.bool
  @staticmethod
  def from_py(x) -> DType:
    """The dtype tinygrad gives Python data: float > int > bool over a (nested) list."""
    if isinstance(x, float): return dtypes.default_float
    if isinstance(x, bool): return dtypes.bool
    if isinstance(x, int): return dtypes.default_int
    if isinstance(x, (list, tuple)): return max((dtypes.from_py(v) for v in x), default=dtypes.default_float)
    raise RuntimeError(f"Could not infer dtype of {x} with type {type(x)}")
  @staticmethod
  def min(dtype: DType): return dtype.min
  @staticmethod
  def max(dtype: DType): return dtype.max
  @staticmethod
  def finfo(dtype: DType) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a float dtype"""
    if not dtypes.is_float(dtype): raise ValueError(f"{dtype} is not a floating point type")
    return {dtypes.float16: (5, 10), dtypes.bfloat16: (8, 7), dtypes.float32: (8, 23), dtypes.float64: (11, 52),
            dtypes.fp8e4m3: (4, 3), dtypes.fp8e5m2: (5, 2), dtypes.fp8e4m3fnuz: (4, 3), dtypes.fp8e5m2fnuz: (5, 2)}[dtype]

dtypes = DTypes()

def to_dtype(dtype: DTypeLike) -> DType:
  """A DType from a DType or a name ("float32", "half"); an unknown name raises AttributeError."""
  return _core.to_dtype(dtype)

def least_upper_dtype(*ds: DType) -> DType: return _core.least_upper_dtype(*ds)
def least_upper_float(dt: DType) -> DType: return _core.least_upper_float(dt)

# every dtype by its attribute name (aliases left out), and back
DTYPES_DICT = {k: v for k, v in DTypes.__dict__.items() if isinstance(v, DType) and k not in
               ("half", "float", "double", "uchar", "ushort", "uint", "ulong", "char", "short", "int", "long")}
INVERSE_DTYPES_DICT = {v.name: k for k, v in DTYPES_DICT.items()}

def float_to_fp8(x: float, dtype: DType) -> int:
  """The code (0-255) of the 8-bit float nearest x (ties to even, saturating at the largest finite value)."""
  return _core.float_to_fp8(x, dtype)
def fp8_to_float(x: int, dtype: DType) -> float:
  """The value of an 8-bit float's code."""
  return _core.fp8_to_float(x, dtype)

# a Python value rounded or wrapped to what a dtype holds (tinygrad's truncate)
truncate = {dt: (lambda x, dt=dt: _core.truncate(x, dt)) for dt in DTYPES_DICT.values()}

_NP_NAMES = {dtypes.bool: "bool", dtypes.int8: "int8", dtypes.uint8: "uint8", dtypes.int16: "int16", dtypes.uint16: "uint16",
             dtypes.int32: "int32", dtypes.uint32: "uint32", dtypes.int64: "int64", dtypes.uint64: "uint64",
             dtypes.float16: "float16", dtypes.float32: "float32", dtypes.float64: "float64"}
def _to_np_dtype(dtype: DType):
  import numpy as np
  # numpy has no bfloat16 or 8-bit floats: their values read as float32 (tinygrad's)
  if dtype == dtypes.bfloat16 or dtype in dtypes.fp8s: return np.float32
  return np.dtype(_NP_NAMES[dtype]).type if dtype in _NP_NAMES else None
def _from_np_dtype(npdtype) -> DType:
  import numpy as np
  return to_dtype(np.dtype(npdtype).name)
