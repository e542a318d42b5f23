# Forward values and gradients against PyTorch.
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tinygrad import Tensor, dtypes
from helpers import check

@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "square",
                                  "reciprocal", "rsqrt", "floor", "ceil", "trunc", "round", "sign", "atan", "sinh", "cosh"])
def test_unary(name):
  positive = name in ("log", "sqrt", "rsqrt", "reciprocal")
  fwd_only = name in ("floor", "ceil", "trunc", "round", "sign")
  check([(3, 4)], lambda x: getattr(x, name)(), low=0.5 if positive else -2, high=3 if positive else 2, forward_only=fwd_only)

def test_activations():
  check([(5, 6)], lambda x: F.gelu(x, approximate="tanh"), lambda x: x.gelu())
  check([(5, 6)], lambda x: F.silu(x), lambda x: x.silu())
  check([(5, 6)], lambda x: F.leaky_relu(x, 0.2), lambda x: x.leaky_relu(0.2))
  check([(5, 6)], lambda x: F.elu(x), lambda x: x.elu())
  check([(5, 6)], lambda x: F.softplus(x), lambda x: x.softplus())
  check([(5, 6)], lambda x: F.hardtanh(x), lambda x: x.hardtanh())
  check([(5, 6)], lambda x: x.clamp(-0.5, 0.7), lambda x: x.clip(-0.5, 0.7))

@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow", "max", "min"])
def test_binary_broadcast(op):
  fns = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "truediv": lambda a, b: a / b,
         "pow": lambda a, b: a ** b, "max": lambda a, b: a.maximum(b) if isinstance(a, Tensor) else torch.maximum(a, b),
         "min": lambda a, b: a.minimum(b) if isinstance(a, Tensor) else torch.minimum(a, b)}
  low = 0.5 if op in ("pow", "truediv") else -2
  check([(3, 4), (1, 4)], fns[op], low=low, high=2)

def test_scalar_operands_and_reflected():
  check([(2, 3)], lambda x: 2 - x * 3 + 1 / (x + 4) - (x ** 2) / 5 + 2 ** x)
  x = Tensor([1, 2, 3])
  assert (x + 1).tolist() == [2, 3, 4] and (10 - x).tolist() == [9, 8, 7] and (x * 2.5).tolist() == [2.5, 5.0, 7.5]
  assert (7 // x).tolist() == [7, 3, 2] and (x % 2).tolist() == [1, 0, 1] and (-x).tolist() == [-1, -2, -3]
  assert (x << 1).tolist() == [2, 4, 6] and (x & 1).tolist() == [1, 0, 1] and (~Tensor([0], dtype="int8")).tolist() == [-1]

def test_reductions():
  check([(3, 4, 5)], lambda x: x.sum())
  check([(3, 4, 5)], lambda x: x.sum(axis=1), lambda x: x.sum(axis=1))
  check([(3, 4, 5)], lambda x: x.sum(dim=(0, 2), keepdim=True), lambda x: x.sum(axis=(0, 2), keepdim=True))
  check([(3, 4, 5)], lambda x: x.mean(dim=-1), lambda x: x.mean(axis=-1))
  check([(3, 4, 5)], lambda x: x.amax(dim=1), lambda x: x.max(axis=1))
  check([(3, 4, 5)], lambda x: x.amin(dim=(0, 1)), lambda x: x.min(axis=(0, 1)))
  check([(3, 4, 5)], lambda x: x.std(dim=2), lambda x: x.std(axis=2))
  check([(3, 4, 5)], lambda x: x.var(dim=0, unbiased=False), lambda x: x.var(axis=0, correction=0))
  check([(4, 6)], lambda x: x.softmax(-1), lambda x: x.softmax())
  check([(4, 6)], lambda x: x.log_softmax(0), lambda x: x.log_softmax(0))
  check([(4, 6)], lambda x: x.logsumexp(1), lambda x: x.logsumexp(1))
  check([(4, 6)], lambda x: x.cumsum(1), lambda x: x.cumsum(1))
  v = np.random.randn(4, 6).astype(np.float32)
  np.testing.assert_array_equal(Tensor(v).argmax(axis=1).numpy(), v.argmax(1))
  np.testing.assert_array_equal(Tensor(v).argmin().numpy(), v.argmin())

def test_movement():
  check([(2, 3, 4)], lambda x: x.reshape(4, 6))
  check([(2, 3, 4)], lambda x: x.reshape((6, -1)), lambda x: x.reshape((6, -1)))
  check([(2, 3, 4)], lambda x: x.permute(2, 0, 1))
  check([(2, 3, 4)], lambda x: x.transpose(0, 2))
  check([(2, 3, 4)], lambda x: x.flatten(1))
  check([(2, 1, 4)], lambda x: x.expand(2, 3, 4))
  check([(2, 1, 4)], lambda x: x.squeeze(1).unsqueeze(0))
  check([(2, 3, 4)], lambda x: x.flip(1) if isinstance(x, Tensor) else x.flip((1,)))
  check([(2, 3, 4)], lambda x: F.pad(x, (1, 2, 0, 1)), lambda x: x.pad((1, 2, 0, 1)))
  check([(2, 3, 4)], lambda x: F.pad(x, (1, 1), value=2.0), lambda x: x.pad(((0, 0), (0, 0), (1, 1)), value=2.0))
  check([(2, 3, 4)], lambda x: x[:, 1:3, :2], lambda x: x.shrink(((0, 2), (1, 3), (0, 2))))
  check([(2, 3), (2, 3)], lambda a, b: torch.cat([a, b], 1), lambda a, b: a.cat(b, dim=1))
  check([(2, 3), (2, 3)], lambda a, b: torch.stack([a, b], 0), lambda a, b: Tensor.stack(a, b))
  # the tensors as one sequence, as tinygrad (and torch) take them too
  check([(2, 3), (2, 3), (2, 3)], lambda a, b, c: torch.stack((a, b, c), 2), lambda a, b, c: Tensor.stack((a, b, c), dim=2))
  check([(2, 3), (1, 3)], lambda a, b: torch.cat([a, b], 0), lambda a, b: Tensor.cat([a, b]))
  with pytest.raises(ValueError): Tensor.stack((Tensor([1, 2]), Tensor([3, 4])), Tensor([5, 6]))
  with pytest.raises(ValueError): Tensor.cat([])
  check([(2, 3)], lambda x: x.repeat(2, 3))
  x = Tensor.arange(12).reshape(3, 4)
  assert [t.shape for t in x.split(2, dim=1)] == [(3, 2), (3, 2)] and len(x.chunk(3)) == 3
  assert x.view(4, 3).shape == (4, 3) and x.T.shape == (4, 3) and x.reshape(None, 2, 2).shape == (3, 2, 2)

@pytest.mark.parametrize("idx", [
  (1,), (-1,), (slice(None, None, 2),), (slice(1, None), 2), (Ellipsis, 1), (None, 0), (slice(None, None, -1),),
  (slice(None), None, slice(3, 0, -2)), (0, Ellipsis, None), ([0, 2],), (slice(None), [1, 3, 3]),
])
def test_getitem_against_numpy(idx):
  a = np.arange(3 * 4 * 5).reshape(3, 4, 5).astype(np.float32)
  key = idx if len(idx) > 1 else idx[0]
  np.testing.assert_array_equal(Tensor(a)[key].numpy(), a[key])

def test_getitem_with_tensor_index_and_grad():
  idx = np.array([[0, 2], [1, 1]])
  check([(3, 4)], lambda x: x[torch.tensor(idx)], lambda x: x[Tensor(idx)])
  check([(3, 4)], lambda x: x[1:, ::2])

def test_setitem():
  t = Tensor.zeros(3, 4).contiguous()
  t[1] = 5.0
  t[:, 2] = Tensor([1.0, 2.0, 3.0])
  ref = np.zeros((3, 4), np.float32); ref[1] = 5; ref[:, 2] = [1, 2, 3]
  np.testing.assert_array_equal(t.numpy(), ref)

def test_setitem_aliases_and_differentiates_as_torch():
  # a realized tensor is written in place: a view taken before sees it (a row swap through it), as torch's views do
  t, tt = Tensor.arange(6, dtype=dtypes.float).reshape(3, 2).contiguous().realize(), torch.arange(6.).reshape(3, 2)
  rows = []
  for x in (t, tt):
    tmp = x[0]
    x[0] = x[1]
    x[2] = tmp
    x[:] = x * 2 + 1  # the whole tensor, from its own values
    x[[0, 2], 1] = -1.0  # integer indices
    rows.append(tmp.numpy().copy())
  np.testing.assert_array_equal(t.numpy(), tt.numpy())
  np.testing.assert_array_equal(rows[0], rows[1])
  # overlapping source and destination in one buffer, and a detached handle writing through
  t, tt = Tensor.arange(8, dtype=dtypes.float).contiguous().realize(), torch.arange(8.)
  for x in (t, tt):
    x[1:] = x[:-1].clone() if isinstance(x, torch.Tensor) else x[:-1]
    x.detach()[0] = 9
  np.testing.assert_array_equal(t.numpy(), tt.numpy())
  # a lazy tensor: the gradient flows to the value written and to the rest
  x, v = Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([10.0, 20.0])
  xt, vt = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True), torch.tensor([10.0, 20.0], requires_grad=True)
  z, zt = x * 3, xt * 3
  z[:2] = v * v
  zt[:2] = vt * vt
  z.sum().backward(); zt.sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
  np.testing.assert_array_equal(v.grad.numpy(), vt.grad.numpy())

# (key, value shape) pairs; numpy's assignment is the reference, torch's for the keys numpy reads differently
SETITEM_CASES = [
  ((np.array([0, 2]),), (2, 5, 6)),                   # rows by an index tensor, a value per row
  ((np.array([[1, 0], [3, 3]]),), ()),                # a 2-d index and a scalar; a repeated row
  ((slice(None), np.array([4, 0, 1])), (3, 6)),       # columns, the value broadcast over the rows
  ((np.array([0, 3]), np.array([1, 4])), (6,)),       # pairs of indices
  ((np.array([0, 3]), slice(1, 4), np.array([2, 0])), None),  # split by a slice: broadcast dims go first
  ((1, np.array([2, 2, 0])), (3, 6)),                 # an int before the tensor index
  ((Ellipsis, np.array([5, -1])), (2,)),              # negative indices count from the end
]

@pytest.mark.parametrize("case", range(len(SETITEM_CASES)))
def test_setitem_with_tensor_indices(case):
  key, vshape = SETITEM_CASES[case]
  x = np.random.uniform(-1, 1, (4, 5, 6)).astype(np.float32)
  ref = x.copy()
  if vshape is None: vshape = ref[key].shape
  v = np.random.uniform(-1, 1, vshape).astype(np.float32)
  ref[key] = v
  t = Tensor(x)
  t[tuple(Tensor(k.astype(np.int32)) if isinstance(k, np.ndarray) else k for k in key)] = Tensor(v) if vshape else float(v)
  np.testing.assert_array_equal(t.numpy(), ref)

def test_setitem_with_lists_and_masks():
  t, ref = Tensor.zeros(4, 3).contiguous(), np.zeros((4, 3), np.float32)
  t[[0, 2]] = 7.0; ref[[0, 2]] = 7.0
  t[[1, 3], [2, 0]] = Tensor([1.0, 2.0]); ref[[1, 3], [2, 0]] = [1, 2]
  np.testing.assert_array_equal(t.numpy(), ref)
  # repeated indices: the last value written is kept, as numpy's (and tinygrad's) order
  t, ref = Tensor.zeros(5).contiguous(), np.zeros(5, np.float32)
  t[Tensor([1, 3, 1, 1])] = Tensor([10.0, 20.0, 30.0, 40.0]); ref[[1, 3, 1, 1]] = [10, 20, 30, 40]
  np.testing.assert_array_equal(t.numpy(), ref)
  # bool masks: a scalar, a row broadcast over the selected rows, and one row per true element (torch's rule)
  x = np.random.uniform(-1, 1, (4, 3)).astype(np.float32)
  for value in (0.5, np.array([1.0, 2.0, 3.0], np.float32), None):
    t, tt = Tensor(x), torch.tensor(x)
    mask = x[:, 0] > 0
    if value is None: value = np.arange(mask.sum() * 3, dtype=np.float32).reshape(-1, 3)
    t[Tensor(mask)] = value if np.isscalar(value) else Tensor(value)
    tt[torch.tensor(mask)] = value if np.isscalar(value) else torch.tensor(value)
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
  t, tt = Tensor(x), torch.tensor(x)
  t[Tensor(x > 0)] = 0.0; tt[torch.tensor(x > 0)] = 0.0
  np.testing.assert_array_equal(t.numpy(), tt.numpy())

def test_normalize_with_negative_p_and_empty_unfold():
  check([(6, 7)], lambda x: F.normalize(x, p=-1), lambda x: x.normalize(p=-1), low=0.5)
  check([(6, 7)], lambda x: F.normalize(x, p=-3, dim=0), lambda x: x.normalize(p=-3, dim=0), low=0.5)
  check([(3, 3, 3)], lambda x: x.unfold(1, 0, 8))  # no element is read: the gradient is zeros

def test_matmul_and_linear():
  check([(3, 4), (4, 5)], lambda a, b: a @ b)
  check([(2, 3, 4), (4,)], lambda a, b: a.matmul(b))
  check([(3, 4), (4, 5)], lambda a, b: a.dot(b) if isinstance(a, Tensor) else a @ b)
  check([(2, 4), (5, 4), (5,)], lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x.linear(w.T, b))

def test_conv_and_pool():
  check([(2, 3, 9, 9), (4, 3, 3, 3), (4,)], lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
        lambda x, w, b: x.conv2d(w, b, stride=2, padding=1), atol=1e-4)
  check([(2, 4, 8, 8), (4, 2, 3, 3)], lambda x, w: F.conv2d(x, w, groups=2, dilation=2),
        lambda x, w: x.conv2d(w, groups=2, dilation=2), atol=1e-4)
  check([(2, 3, 8, 8)], lambda x: F.max_pool2d(x, 2), lambda x: x.max_pool2d())
  check([(2, 3, 9, 9)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1), lambda x: x.max_pool2d(3, stride=2, padding=1))
  check([(2, 3, 8, 8)], lambda x: F.avg_pool2d(x, (2, 4)), lambda x: x.avg_pool2d((2, 4)))

def test_losses():
  y = np.array([1, 0, 3, 2])
  check([(4, 5)], lambda x: F.cross_entropy(x, torch.tensor(y)), lambda x: x.sparse_categorical_crossentropy(Tensor(y)))
  check([(4, 5)], lambda x: F.cross_entropy(x, torch.tensor(y), label_smoothing=0.1),
        lambda x: x.sparse_categorical_crossentropy(Tensor(y), label_smoothing=0.1))
  check([(4, 5)], lambda x: F.cross_entropy(x, torch.tensor(y), reduction="sum"), lambda x: x.cross_entropy(Tensor(y), reduction="sum"))
  # a class that can never be the answer (a masked logit of -inf) leaves the loss finite, as in PyTorch
  masked = np.random.uniform(-1, 1, (4, 5)).astype(np.float32)
  masked[:, 4] = -np.inf
  want = F.cross_entropy(torch.tensor(masked), torch.tensor(y)).item()
  for got in (Tensor(masked).sparse_categorical_crossentropy(Tensor(y)), Tensor(masked).cross_entropy(Tensor(y))):
    assert np.isclose(got.item(), want, rtol=1e-5), (got.item(), want)
  p = np.random.uniform(0.1, 0.9, (4, 5)).astype(np.float32)
  check([(4, 5)], lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(p)), lambda x: x.binary_crossentropy_logits(Tensor(p)))

def test_where_cast_and_comparisons():
  a = np.array([1.0, -2.0, 3.0], np.float32)
  t = Tensor(a)
  assert (t > 0).tolist() == [True, False, True] and (t == -2).tolist() == [False, True, False]
  assert (t > 0).where(t, 0.0).tolist() == [1.0, 0.0, 3.0]
  assert t.cast("int32").tolist() == [1, -2, 3] and t.int().dtype == Tensor([1]).dtype
  check([(3, 4), (3, 4)], lambda a, b: torch.where(a > b, a * 2, b), lambda a, b: (a > b).where(a * 2, b))

def test_dropout_only_in_training():
  x = Tensor.ones(1000)
  assert (x.dropout(0.5) == 1).all().item()
  with Tensor.train():
    y = x.dropout(0.5).numpy()
  assert 350 < (y == 0).sum() < 650 and set(np.unique(y)) <= {0.0, 2.0}

def test_backward_fills_every_float_tensor_in_the_graph():
  # tinygrad's backward: no requires_grad; leaves and live intermediates get .grad, integer tensors none
  x, k, outside = Tensor([1.0, -2.0]), Tensor([2, 3]), Tensor([5.0])
  y = x * 3 * k
  z = (y * y).sum()
  z.backward()
  tx = torch.tensor([1.0, -2.0], requires_grad=True)
  ty = tx * 3 * torch.tensor([2, 3]); ty.retain_grad()
  (ty * ty).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
  np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
  assert z.grad.tolist() == 1.0 and k.grad is None and outside.grad is None

def test_grad_assignment_replaces_it():
  w = Tensor([1.0, 2.0])
  (w * 3).sum().backward()
  w.grad = Tensor([10.0, 20.0])
  (w * 3).sum().backward()
  assert w.grad.tolist() == [13.0, 23.0]
  with pytest.raises(ValueError): w.grad = Tensor([1.0])

def test_backward_accumulates_and_detach():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * x).sum().backward()
  (x * 3).sum().backward()
  assert x.grad.tolist() == [5.0, 7.0]
  y = Tensor([2.0], requires_grad=True)
  (y.detach() * y).sum().backward()
  assert y.grad.tolist() == [2.0]
  y.grad = None
  assert y.grad is None
  y.grad = Tensor([4.0])
  assert y.grad.tolist() == [4.0]

@pytest.mark.parametrize("n", [1, 2, 16, 33])  # scalar kernels and vector ones (16 and more elements)
def test_float_to_unsigned_casts_wrap_as_numpy(n):
  vals = np.array([-1.5, 300.5, -3.5, 70000.25, 2.75] * n, dtype=np.float32)[:max(n, 5)]
  for dt, npdt in ((dtypes.uint8, np.uint8), (dtypes.uint16, np.uint16), (dtypes.uint32, np.uint32)):
    want = vals.astype(np.int64).astype(npdt)  # numpy's float -> unsigned: truncated, then wrapped
    np.testing.assert_array_equal(Tensor(vals).cast(dt).numpy(), want)
    np.testing.assert_array_equal(Tensor(vals).cast(dt).cast(dtypes.float32).numpy(), want.astype(np.float32))

def test_python_floats_round_once_to_16_bit_floats():
  vals = [65519.999, 1.0 + 2**-11 - 2**-40, 1.0 + 2**-11 + 2**-40, -3.3]
  np.testing.assert_array_equal(Tensor(vals, dtype=dtypes.float16).numpy(), np.array(vals, dtype=np.float64).astype(np.float16))
  assert Tensor(65519.999, dtype=dtypes.float16).item() == 65504.0
