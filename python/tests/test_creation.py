import numpy as np
import pytest
from tinygrad import Tensor, dtypes

def test_scalars_get_tinygrads_default_dtypes():
  assert Tensor(3).dtype is dtypes.int32 and Tensor(3).item() == 3 and isinstance(Tensor(3).item(), int)
  assert Tensor(2.5).dtype is dtypes.float32 and Tensor(2.5).item() == 2.5 and isinstance(Tensor(2.5).item(), float)
  assert Tensor(True).dtype is dtypes.bool and Tensor(True).item() is True
  assert Tensor(3).shape == () and Tensor(3).ndim == 0

def test_nested_lists_infer_bool_int_float():
  assert Tensor([True, False]).dtype == dtypes.bool
  assert Tensor([True, 2]).dtype == dtypes.int32
  assert Tensor([[1, 2], [3, 4.5]]).dtype == dtypes.float32
  assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
  assert Tensor([[1, 2], [3, 4]]).shape == (2, 2)
  assert Tensor(((1, 2), (3, 4))).tolist() == [[1, 2], [3, 4]]
  assert Tensor([]).shape == (0,) and Tensor([]).dtype == dtypes.float32

@pytest.mark.parametrize("bad", [[[1, 2], [3]], [1, [2]], [[1], 2], [[[1]], [2]]])
def test_ragged_lists_raise_value_error(bad):
  with pytest.raises(ValueError): Tensor(bad)

def test_lists_with_dtype():
  t = Tensor([1, 2, 300], dtype=dtypes.uint8)
  assert t.dtype == dtypes.uint8 and t.tolist() == [1, 2, 300 % 256]
  assert Tensor([1.5, 2.5], dtype="float64").dtype == dtypes.float64
  assert Tensor([1, 0, 2], dtype="bool").tolist() == [True, False, True]
  assert Tensor([1.7, -2.7], dtype=dtypes.int32).tolist() == [1, -2]

@pytest.mark.parametrize("npdt", [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.bool_])
def test_numpy_arrays_keep_their_dtype(npdt):
  a = (np.arange(12).reshape(3, 4) % 5).astype(npdt)
  t = Tensor(a)
  assert t.shape == (3, 4)
  assert t.numpy().dtype == a.dtype
  np.testing.assert_array_equal(t.numpy(), a)

def test_numpy_non_contiguous_and_0d():
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 0, 1)[::2]
  np.testing.assert_array_equal(Tensor(a).numpy(), a)
  assert Tensor(np.float32(2.5)).item() == 2.5 and Tensor(np.array(7)).shape == ()

def test_bytes():
  assert Tensor(b"\x01\x02\xff").tolist() == [1, 2, 255] and Tensor(b"ab").dtype == dtypes.uint8

def test_shape_as_varargs_tuple_or_list():
  for t in (Tensor.zeros(2, 3), Tensor.zeros((2, 3)), Tensor.zeros([2, 3])): assert t.shape == (2, 3)
  assert Tensor.ones(2, 3, dtype="int8").dtype == dtypes.int8
  assert Tensor.ones(2, dtype=dtypes.float16).numpy().dtype == np.float16

def test_full_zeros_ones_arange_eye():
  np.testing.assert_array_equal(Tensor.full((2, 3), 7).numpy(), np.full((2, 3), 7))
  assert Tensor.full((2,), 7).dtype == dtypes.int32 and Tensor.full((2,), 7.0).dtype == dtypes.float32
  np.testing.assert_array_equal(Tensor.arange(5).numpy(), np.arange(5))
  np.testing.assert_allclose(Tensor.arange(1, 3, 0.5).numpy(), np.arange(1, 3, 0.5))
  assert Tensor.arange(0.0, 3).dtype == dtypes.float32 and Tensor.arange(3).dtype == dtypes.int32
  np.testing.assert_array_equal(Tensor.arange(10, 0, -3).numpy(), np.arange(10, 0, -3))
  np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
  np.testing.assert_array_equal(Tensor.eye(2, 4).numpy(), np.eye(2, 4, dtype=np.float32))
  np.testing.assert_allclose(Tensor.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5), atol=1e-7)
  assert Tensor.empty(4, 5).shape == (4, 5)

def test_like_functions():
  x = Tensor([[1, 2, 3]], dtype=dtypes.int16)
  assert x.zeros_like().dtype == dtypes.int16 and x.zeros_like().tolist() == [[0, 0, 0]]
  assert x.ones_like(dtype=dtypes.float32).tolist() == [[1.0, 1.0, 1.0]]
  assert x.full_like(4).tolist() == [[4, 4, 4]]
  assert x.rand_like().dtype == dtypes.float32 and x.rand_like().shape == (1, 3)
  assert Tensor.randn(2, 2).randn_like().shape == (2, 2)

def test_random_ranges_and_seed():
  r = Tensor.rand(1000).numpy()
  assert r.min() >= 0 and r.max() < 1 and 0.4 < r.mean() < 0.6
  n = Tensor.randn(4000).numpy()
  assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
  i = Tensor.randint(1000, low=3, high=7).numpy()
  assert i.min() == 3 and i.max() == 6 and Tensor.randint(2).dtype == dtypes.int32
  u = Tensor.uniform(1000, low=-2, high=-1).numpy()
  assert u.min() >= -2 and u.max() < -1
  Tensor.manual_seed(123); a = Tensor.rand(5).tolist()
  Tensor.manual_seed(123); b = Tensor.rand(5).tolist()
  assert a == b and a != Tensor.rand(5).tolist()

def test_requires_grad_keyword_and_states():
  assert Tensor([1.0]).requires_grad is None
  assert Tensor([1.0], requires_grad=True).requires_grad is True
  assert Tensor([1.0], requires_grad=False).requires_grad is False
  assert Tensor.eye(3, requires_grad=True).requires_grad is True
  t = Tensor([1.0]).requires_grad_()
  assert t.requires_grad is True

def test_bad_creation_arguments_raise():
  with pytest.raises(TypeError): Tensor.zeros(2, "a")
  with pytest.raises(ValueError): Tensor.zeros(-1)
  for make in (Tensor.kaiming_uniform, Tensor.kaiming_normal, Tensor.rand, Tensor.empty):  # as tinygrad's test_ops
    with pytest.raises(ValueError): make(-3, 3)
    with pytest.raises(ValueError): make((-3, 3), 3)
    with pytest.raises(ValueError): make((3, 3), 3)
  with pytest.raises(AttributeError): Tensor([1], dtype="notadtype")
  with pytest.raises(AttributeError): Tensor([1], dtype=3.5)  # tinygrad looks it up as a name
  with pytest.raises(TypeError): Tensor(object())
  with pytest.raises(TypeError): Tensor(["a"])
  with pytest.raises(TypeError): Tensor.zeros(2, unknown_kw=1)
  with pytest.raises(ValueError): Tensor.randint(3, low=5, high=5)
