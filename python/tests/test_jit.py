# TinyJit from Python: replays give the plain function's values on new inputs; datasets.
import os
import numpy as np
import pytest
from tinygrad import Tensor, TinyJit, nn

def test_jit_replays_with_new_inputs():
  w = Tensor.randn(4, 3).realize()
  calls = []
  @TinyJit
  def f(x: Tensor, scale: Tensor) -> Tensor:
    calls.append(1)
    return ((x @ w) * scale).relu().realize()
  for i in range(5):
    x = np.random.randn(2, 4).astype(np.float32)
    out = f(Tensor(x), Tensor([float(i)]))
    np.testing.assert_allclose(out.numpy(), np.maximum((x @ w.numpy()) * i, 0), atol=1e-5)
  assert len(calls) == 2 and f.captured  # run, capture, then replays that do not call the Python function

def test_jit_tensors_inside_containers_and_structured_outputs():
  @TinyJit
  def f(d: dict, pair: list):
    return {"sum": (d["a"] + pair[0]).realize(), "rest": [(pair[1] * 2).realize()]}
  for i in range(4):
    out = f({"a": Tensor([i, 1.0])}, [Tensor([1.0, 1.0]), Tensor([float(i)])])
    assert out["sum"].tolist() == [i + 1.0, 2.0] and out["rest"][0].tolist() == [2.0 * i]

def test_jit_method_and_shape_change_raises():
  class M:
    def __init__(self): self.l = nn.Linear(3, 2)
    @TinyJit
    def __call__(self, x): return self.l(x).realize()
  m = M()
  for _ in range(3): m(Tensor.ones(1, 3))
  with pytest.raises(RuntimeError): m(Tensor.ones(2, 3))

def test_training_step_under_jit_matches_plain_steps():
  xn = np.random.randn(64, 4).astype(np.float32)
  X, Y = Tensor(xn), Tensor((xn @ np.random.randn(4, 1)).astype(np.float32))
  def make():
    lin = nn.Linear(4, 1)
    lin.weight.assign(Tensor([[0.1, -0.2, 0.3, 0.0]])); lin.bias.assign(Tensor([0.5]))
    opt = nn.optim.Adam(nn.state.get_parameters(lin), lr=0.05)
    def step():
      opt.zero_grad()
      loss = (lin(X) - Y).square().mean().backward()
      opt.step()
      return loss
    return step
  plain, jitted = make(), TinyJit(make())
  a = [plain().item() for _ in range(30)]
  b = [jitted().item() for _ in range(30)]
  np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
  assert a[-1] < a[0] * 0.5

@pytest.mark.skipif(not os.path.isdir("/usr/share/datasets/fashion-mnist"), reason="Debian's dataset-fashion-mnist is not installed")
def test_fashion_mnist():
  from tinygrad.nn.datasets import mnist
  X_train, Y_train, X_test, Y_test = mnist(fashion=True)
  assert X_train.shape == (60000, 1, 28, 28) and Y_train.shape == (60000,) and X_test.shape == (10000, 1, 28, 28)
  assert str(X_train.dtype) == "dtypes.uchar" and 0 <= Y_test[:100].min().item() and Y_test[:100].max().item() <= 9
