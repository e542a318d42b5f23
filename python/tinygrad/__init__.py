"""tinygrad's Python API over tinygrad.cpp's C++ core (lazy tensors, autograd, fused kernels generated at run time)."""
from tinygrad.tensor import Tensor                                    # noqa: F401
from tinygrad.engine.jit import TinyJit                               # noqa: F401
from tinygrad.function import function                                # noqa: F401
from tinygrad.dtype import dtypes                                     # noqa: F401
from tinygrad.helpers import GlobalCounters, fetch, Context, getenv   # noqa: F401
from tinygrad.device import Device                                    # noqa: F401
from tinygrad import nn                                               # noqa: F401
from tinygrad._core import Variable                                   # noqa: F401

__all__ = ["Tensor", "TinyJit", "function", "dtypes", "GlobalCounters", "fetch", "Context", "getenv", "Device", "nn", "Variable"]
