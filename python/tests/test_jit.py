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
      with Tensor.train(): opt.step()
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

def test_function_decorated_model_trains_as_in_tinygrads_beautiful_mnist():
  from tinygrad import function, Context
  xn = np.random.randn(32, 4).astype(np.float32)
  X, Y = Tensor(xn), Tensor((xn @ np.random.randn(4, 1)).astype(np.float32))
  def model(wrap: bool):  # a class each: a TinyJit on a method is one for the whole class, as tinygrad's
    class Model:
      def __init__(self):
        self.l1, self.l2 = nn.Linear(4, 8), nn.Linear(8, 1)
        self.l1.weight.assign(Tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)))
        self.l2.weight.assign(Tensor(np.linspace(-0.5, 0.5, 8, dtype=np.float32).reshape(1, 8)))
        self.l1.bias.assign(Tensor.full((8,), 0.1)); self.l2.bias.assign(Tensor([0.2]))
        self.opt = nn.optim.SGD(nn.state.get_parameters(self), lr=0.05)
        self.call = function(self.forward) if wrap else self.forward
      def forward(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())
      @TinyJit
      @Context(TRAINING=1)
      def train_step(self) -> Tensor:
        self.opt.zero_grad()
        loss = (self.call(X) - Y).square().mean().backward()
        return loss.realize(*self.opt.schedule_step())
    return Model()
  plain, wrapped = model(False), model(True)
  a = [plain.train_step().item() for _ in range(8)]
  b = [wrapped.train_step().item() for _ in range(8)]
  np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
  assert a[-1] < a[0]
  @function
  def not_a_tensor(x: Tensor): return x.numpy()
  with pytest.raises(RuntimeError): not_a_tensor(X)
  with pytest.raises(NotImplementedError): function(lambda x: x, grad_fxn=lambda *g: g)
