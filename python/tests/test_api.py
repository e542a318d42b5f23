# The Python protocol: operators, in-place forms, hash identity, reading values, repr, and errors as Python exceptions.
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes, Device, Context, getenv, GlobalCounters, nn

def test_in_place_operators_assign():
  x = Tensor([1.0, 2.0]).realize()
  alias = x
  x += 1
  assert x is alias and alias.tolist() == [2.0, 3.0]
  x *= Tensor([2.0, 3.0]); x -= 1; x /= 2
  assert x.tolist() == [1.5, 4.0]

def test_comparisons_return_tensors_and_hash_is_identity():
  a, b = Tensor([1, 2]), Tensor([1, 3])
  assert isinstance(a == b, Tensor) and (a == b).tolist() == [True, False] and (a != b).tolist() == [False, True]
  assert (a < b).tolist() == [False, True] and (a >= 2).tolist() == [False, True]
  d = {a: "a", b: "b"}
  assert d[a] == "a" and d[b] == "b" and hash(a) != hash(b)
  assert (a == None) is False and a in [a]  # noqa: E711 (no tensor comparison for foreign types)

def test_item_tolist_numpy_types():
  assert isinstance(Tensor(2.0).item(), float) and isinstance(Tensor(2).item(), int) and isinstance(Tensor(False).item(), bool)
  assert Tensor([[1.5]]).item() == 1.5
  assert Tensor([[1, 2], [3, 4]], dtype=dtypes.int64).tolist() == [[1, 2], [3, 4]]
  assert Tensor([1.5], dtype=dtypes.float16).tolist() == [1.5] and Tensor([1.5], dtype=dtypes.bfloat16).tolist() == [1.5]
  assert Tensor.zeros(2, 0).tolist() == [[], []] and Tensor(3).tolist() == 3
  assert np.asarray(Tensor([1, 2])).tolist() == [1, 2]
  assert float(Tensor(2.5)) == 2.5 and int(Tensor(3)) == 3 and [1, 2, 3][Tensor(1)] == 2
  assert [t.tolist() for t in Tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
  assert Tensor([1.0, 2.0]).data().tolist() == [1.0, 2.0]
  with pytest.raises(ValueError): Tensor([1, 2]).item()

def test_properties_and_repr():
  t = Tensor.ones(2, 3, 4)
  assert t.shape == (2, 3, 4) and t.ndim == 3 and t.numel() == 24 and len(t) == 2 and t.dtype is dtypes.float32
  assert t.device == Device.DEFAULT == "CPU" and t.size(1) == 3 and t.size() == (2, 3, 4) and t.element_size() == 4
  assert "shape=(2, 3, 4)" in repr(t) and "dtypes.float" in repr(t)
  assert repr(dtypes.float32) == "dtypes.float" and dtypes.float32.itemsize == 4 and dtypes.int8.name == "signed char"
  assert dtypes.is_float(dtypes.half) and dtypes.is_int(dtypes.uint8) and not dtypes.is_float(dtypes.int32)
  assert Tensor([1]).to("cpu").device == "CPU"
  with pytest.raises(TypeError): len(Tensor(1.0))
  with pytest.raises(TypeError): bool(Tensor(1))  # tinygrad's: `if t:` is a mistake, t.item() says what is meant
  with pytest.raises(TypeError): Tensor([3]) in [Tensor([3])]
  t3 = Tensor([3])
  assert t3 in [t3]  # identity first, as any Python container

def test_errors_are_python_exceptions_with_the_op_name():
  with pytest.raises(RuntimeError, match="reshape"): Tensor.ones(2, 3).reshape(4, 2)
  with pytest.raises(ValueError): Tensor.ones(2, 3).reshape(4, 2)
  with pytest.raises(RuntimeError): Tensor.ones(2, 3) @ Tensor.ones(2, 3)
  with pytest.raises(RuntimeError): Tensor.ones(3, 4).permute(0, 2)
  with pytest.raises(IndexError): Tensor.ones(3)[5]
  with pytest.raises(IndexError): Tensor.ones(3)[0, 0]
  with pytest.raises(IndexError): Tensor.ones(3)["a"]
  with pytest.raises(RuntimeError): Tensor([1.0]) << 2
  with pytest.raises(TypeError): Tensor([1.0]) + "a"
  with pytest.raises(TypeError): Tensor([1.0]).add(object())
  with pytest.raises(NotImplementedError): Tensor([1.0]).pad((1, 1), mode="typo")
  with pytest.raises(RuntimeError): Tensor([1.0]).div(Tensor([1.0]), rounding_mode="typo")
  with pytest.raises(RuntimeError): Tensor([1, 2]).backward()
  with pytest.raises(TypeError): Tensor.ones(2).sum(axis="x")

def test_context_reaches_the_core():
  from tinygrad.helpers import DEBUG, NOOPT
  assert DEBUG.value == getenv("DEBUG", 0)
  with Context(NOOPT=1, DEBUG=0):
    assert NOOPT.value == 1 and DEBUG.value == 0
    assert (Tensor([1.0, 2.0]) * 3).tolist() == [3.0, 6.0]
    with Context(NOOPT=0): assert NOOPT.value == 0
    assert NOOPT.value == 1
  assert NOOPT.value == getenv("NOOPT", 0)

def test_default_float_and_int_follow_the_context():
  assert dtypes.default_float == dtypes.float32 and dtypes.default_int == dtypes.int32
  with Context(DEFAULT_FLOAT="HALF", DEFAULT_INT="int64"):
    assert dtypes.default_float == dtypes.float16 and dtypes.default_int == dtypes.int64
    assert Tensor([1.5]).dtype == dtypes.float16 and Tensor.rand(2).dtype == dtypes.float16 and Tensor(3).dtype == dtypes.int64
    assert Tensor([1, 2]).exp().dtype == dtypes.float16 and (Tensor([True]) * 2.5).dtype == dtypes.float16
    with Context(DEFAULT_FLOAT=dtypes.float64): assert Tensor.zeros(2).dtype == dtypes.float64
  assert Tensor([1.5]).dtype == dtypes.float32 and Tensor([1, 2]).exp().dtype == dtypes.float32

def test_training_switches():
  assert Tensor.training is False
  with Tensor.train(): assert Tensor.training is True
  assert Tensor.training is False
  @Tensor.train()
  def f(): return Tensor.training
  assert f() is True and Tensor.training is False
  with Context(TRAINING=1): assert Tensor.training is True
  assert Tensor.training is False
  Tensor.training = True
  assert Tensor.training is True
  Tensor.training = False

def test_global_counters_count_kernels():
  GlobalCounters.reset()
  (Tensor.rand(16) + 1).realize()
  assert GlobalCounters.kernel_count >= 1
  GlobalCounters.reset()
  assert GlobalCounters.kernel_count == 0

def test_tinygrads_error_kinds_and_checks():
  with pytest.raises(IndexError): Tensor(3.14).cat(Tensor(3.14))
  with pytest.raises(ValueError): Tensor([1, 2, 4]).one_hot(-1)
  with pytest.raises(TypeError): Tensor.ones(4).scatter(0, Tensor([0]), Tensor.ones(4), reduce="add")
  with pytest.raises(TypeError): Tensor.ones(4).scatter(0, Tensor([0]), 1.0, reduce="max")
  assert Tensor.ones(4).scatter(0, Tensor([1]), 2.0, reduce="add").tolist() == [1.0, 3.0, 1.0, 1.0]
  with pytest.raises(OverflowError): Tensor.arange(129, dtype=dtypes.int8)
  big = Tensor.arange(2**31, 2**31 + 3)
  assert big.dtype == dtypes.int64 and big.tolist() == [2**31, 2**31 + 1, 2**31 + 2]
  with pytest.raises(ValueError): nn.optim.AdamW([Tensor([1.0])], lr=0.1, weight_decay=-0.1)

def test_tinygrads_conveniences():
  assert Tensor([1, 2]).pad_to(4, value=2).tolist() == [1, 2, 2, 2]
  assert Tensor([[1, 2]]).pad_to(None, 3).tolist() == [[1, 2, 0]]
  with pytest.raises(ValueError): Tensor([1, 2]).pad_to(2, 3)  # a dim too many
  with pytest.raises(ValueError): Tensor([[1, 2]]).pad_to(1, 1)  # smaller: not a pad
  r = Tensor.randn(3, dtype=dtypes.int32)
  assert r.dtype == dtypes.int32 and r.shape == (3,)
  a = Tensor.rand(4, 4)
  a.mul(5).mean().backward()
  c = a.clone()
  np.testing.assert_allclose(c.grad.numpy(), a.grad.numpy())
  opt = nn.optim.Adam([Tensor.ones(3)])
  assert len(opt.m) == 1 and len(opt.v) == 1 and opt.b1_t.shape == () and opt.b2_t.shape == ()
  from tinygrad.dtype import _to_np_dtype
  assert _to_np_dtype(dtypes.bfloat16) is np.float32

def test_indexing_errors_are_tinygrads():
  a, b = Tensor.ones(4, 3), Tensor(2)
  with pytest.raises(IndexError, match="too many"): a[1, 77, 77, 77]
  with pytest.raises(IndexError, match="out of bounds"): a[1, 3]
  with pytest.raises(IndexError, match="out of bounds"): a[1, -4]
  with pytest.raises(IndexError, match="single ellipsis"): a[..., ...]
  with pytest.raises(TypeError): a[:Tensor([3]), 1]  # a slice bound is an int or a 0-d int tensor
  with pytest.raises(IndexError): b[:]
  c = Tensor.ones(10, 11, 12)
  for bad in (Tensor(1.1), [1.1], Tensor([True, False]), [True, False]):
    with pytest.raises(IndexError): c[bad]
  x = np.random.uniform(-1, 1, (5, 6)).astype(np.float32)
  np.testing.assert_array_equal(Tensor(x)[[True, False, 2]].numpy(), x[[1, 0, 2]])  # bools among ints are ints
  np.testing.assert_array_equal(Tensor(x)[[True, False, True, True, False]].numpy(), x[[True, False, True, True, False]])
  with pytest.raises(AttributeError): Tensor([3], dtype=(dtypes.int,))

def test_nonzero_fill_value_keeps_int_indices():
  out = Tensor([1, 0]).nonzero(size=3, fill_value=-1.5)
  assert out.dtype == dtypes.int32 and out.tolist() == [[0], [-1], [-1]]

def test_deepcopy_to_and_shard_in_place():
  import copy
  a = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  (a * 2).sum().backward()
  b = copy.deepcopy(a)
  assert b is not a and b.tolist() == a.tolist() and b.grad.tolist() == [2.0, 2.0, 2.0] and b.requires_grad
  b += 1
  assert a.tolist() == [1.0, 2.0, 3.0]  # its own buffer
  c = Tensor([1.0, 2.0])
  assert c.to_("CPU") is c and c.tolist() == [1.0, 2.0]
  d = Tensor.arange(8).reshape(4, 2)
  assert d.shard_(("CPU:0", "CPU:1"), axis=0) is d and d.device == ("CPU", "CPU:1") and d.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
