# Symbolic sizes from Python: Variable, bound sizes in movement ops and slices, and TinyJit replays at new values.
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, Variable

def test_variable_bind_unbind_and_arithmetic():
  v = Variable("i", 1, 10)
  assert (v.expr, v.vmin, v.vmax) == ("i", 1, 10)
  vi = v.bind(3)
  assert vi.val == 3 and vi.unbind() == (v, 3)
  assert (vi + 1).val == 4 and (2 * vi).val == 6 and (vi - 1).vmax == 9 and (vi // 2).val == 1 and (vi % 2).val == 1
  assert vi * 0 == 0  # a size that no longer depends on the variable is an int
  with pytest.raises(ValueError): v.bind(11)
  with pytest.raises(ValueError): vi.bind(4)
  with pytest.raises(ValueError): (vi + 1).unbind()
  with pytest.raises(TypeError): bool(vi)
  with pytest.raises(ValueError): Variable("i", 5, 2)

def test_symbolic_shrink_slice_and_reshape():
  a = np.random.uniform(-1, 1, (3, 10)).astype(np.float32)
  for n in (1, 4, 10):
    vi = Variable("n", 1, 10).bind(n)
    for t in (Tensor(a).shrink(((0, 3), (0, vi))), Tensor(a)[:, :vi], Tensor(a)[..., :vi]):
      assert t.shape == (3, vi)
      np.testing.assert_allclose((t * 2).sum(1).numpy(), (a[:, :n] * 2).sum(1), rtol=1e-5)
      np.testing.assert_allclose(t.reshape(3 * vi).max().numpy(), a[:, :n].max(), rtol=1e-6)
      np.testing.assert_allclose(t.reshape(3, vi, 1).expand(3, vi, 2).sum((1, 2)).numpy(), 2 * a[:, :n].sum(1), rtol=1e-5)

def test_jit_replays_at_each_bound_value():
  a = np.random.uniform(-1, 1, (4, 16)).astype(np.float32)
  x = Tensor(a).realize()
  @TinyJit
  def f(t: Tensor) -> Tensor: return (t * t).sum(1).realize()
  @TinyJit
  def g(t: Tensor, n) -> Tensor: return t.shrink(((0, 4), (0, n))).mean(1).realize()
  for n in (2, 5, 9, 16, 3):
    vn = Variable("n", 1, 16).bind(n)
    np.testing.assert_allclose(f(x[:, :vn]).numpy(), (a[:, :n] ** 2).sum(1), rtol=1e-5)
    np.testing.assert_allclose(g(x, vn).numpy(), a[:, :n].mean(1), rtol=1e-5)
  assert f.captured and g.captured
