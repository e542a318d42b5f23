# Random method calls with random arguments: every failure must be a Python exception of tinygrad's kinds, never a
# crash (a crash kills the pytest process, which fails the run) or another exception type.
import random
import pytest
from tinygrad import Tensor, dtypes
from tinygrad import dtype as dtype_module

ALLOWED = (TypeError, ValueError, RuntimeError, IndexError, AttributeError, NotImplementedError, OverflowError, KeyError)
UNSAFE = {"from_blob"}  # takes a raw pointer: reading a bad address is the caller's contract, as in tinygrad

@pytest.mark.parametrize("seed", [1, 2])
def test_random_calls_raise_python_exceptions(seed):
  rng = random.Random(seed)
  vals = [None, 0, 1, -1, 3, 100, -7, 2.5, True, "a", (), (1,), (2, 3), [0, 1], (-1, 5), slice(None), Ellipsis,
          Tensor([1, 2]), Tensor(1.5), Tensor.ones(2, 3), object()]
  names = [n for n in dir(Tensor) if not n.startswith("_") and n not in UNSAFE and callable(getattr(Tensor, n, None))]
  names += ["__getitem__", "__setitem__", "__add__", "__matmul__", "__pow__", "__lshift__", "__truediv__"]
  training = Tensor.training
  for _ in range(600):
    t = rng.choice([Tensor.ones(2, 3), Tensor([1, 2, 3]), Tensor(2.0), Tensor.zeros(0, 2), Tensor([[True]]),
                    Tensor([[0.5, -448.0]], dtype=dtypes.fp8e4m3)])
    args = [rng.choice(vals) for _ in range(rng.randint(0, 3))]
    try:
      r = getattr(t, rng.choice(names))(*args)
      if isinstance(r, Tensor) and r.numel() < 10000: r.realize()
    except ALLOWED:
      pass
  Tensor.training = training

def test_random_dtype_helpers_raise_python_exceptions():
  # tinygrad.dtype's functions of a value and a dtype, with any value and any dtype (or none)
  rng = random.Random(3)
  vals = [None, 0, 255, 256, -1, 2**70, 1.5, float("nan"), float("inf"), -0.0, True, "a", (), object()]
  dts = list(dtypes.all) + list(dtypes.fp8s) + [None, "float", 3]
  fns = [dtype_module.float_to_fp8, dtype_module.fp8_to_float, lambda x, d: dtype_module.truncate[d](x), dtype_module.to_dtype,
         lambda x, d: dtype_module.least_upper_dtype(d, x)]
  for _ in range(400):
    try:
      rng.choice(fns)(rng.choice(vals), rng.choice(dts))
    except ALLOWED:
      pass
