# The Python examples of the seeds (../shared/seeds: tinygrad's README and its quick reference), run as written
# (the quick reference's one-line summaries split into their statements, and the data they leave to the reader
# supplied), checked against PyTorch or against what the example says it shows.
import numpy as np
import pytest
import torch
from tinygrad import nn

def test_readme_example_gradients_match_torch():
  from tinygrad.tensor import Tensor
  x = Tensor.eye(3, requires_grad=True)
  y = Tensor([[2.0,0,-2.0]], requires_grad=True)
  z = y.matmul(x).sum()
  z.backward()
  # "Same example in torch"
  tx = torch.eye(3, requires_grad=True)
  ty = torch.tensor([[2.0,0,-2.0]], requires_grad=True)
  tz = ty.matmul(tx).sum()
  tz.backward()
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())  # dz/dx
  np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())  # dz/dy

def test_readme_broadcast_matmul_is_one_kernel_and_right():
  from tinygrad.tensor import Tensor
  from tinygrad import GlobalCounters
  N = 1024; a, b = Tensor.randn(N, N), Tensor.randn(N, N)
  Tensor.realize(a, b)  # (the random numbers are kernels of their own)
  c = (a.reshape(N, 1, N) * b.permute(1,0).reshape(1, N, N)).sum(axis=2)
  before = GlobalCounters.kernel_count
  c.realize()
  assert GlobalCounters.kernel_count - before == 1  # "fused into one kernel with the power of laziness"
  assert abs((c.numpy() - (a.numpy() @ b.numpy())).mean()) < 1e-4

def test_readme_neural_network_example_steps_as_torch():
  from tinygrad.tensor import Tensor
  import tinygrad.nn.optim as optim
  class TinyBobNet:
    def __init__(self):
      self.l1 = Tensor.uniform(784, 128)
      self.l2 = Tensor.uniform(128, 10)
    def forward(self, x):
      return x.dot(self.l1).relu().dot(self.l2).log_softmax()
  model = TinyBobNet()
  optim = optim.SGD([model.l1, model.l2], lr=0.001)
  # ... and complete like pytorch, with (x,y) data (and in training mode, which tinygrad's optimizers require)
  Tensor.training = True
  xn = np.random.rand(16, 784).astype(np.float32)
  yn = np.eye(10, dtype=np.float32)[np.random.randint(0, 10, 16)] * -1.0
  x, y = Tensor(xn), Tensor(yn)
  l1, l2 = torch.tensor(model.l1.numpy(), requires_grad=True), torch.tensor(model.l2.numpy(), requires_grad=True)
  out = model.forward(x)
  loss = out.mul(y).mean()
  optim.zero_grad()
  loss.backward()
  optim.step()
  Tensor.training = False
  tloss = (torch.tensor(xn).matmul(l1).relu().matmul(l2).log_softmax(-1) * torch.tensor(yn)).mean()
  tloss.backward()
  np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
  np.testing.assert_allclose(model.l1.numpy(), (l1 - 0.001 * l1.grad).detach().numpy(), atol=1e-6)
  np.testing.assert_allclose(model.l2.numpy(), (l2 - 0.001 * l2.grad).detach().numpy(), atol=1e-6)

def test_readme_gpu_example():
  from tinygrad.tensor import Tensor
  from tinygrad import Device
  try: Device["GPU"]
  except Exception: pytest.skip("no OpenCL device here (the README's GPU is OpenCL)")
  np.testing.assert_equal((Tensor.ones(4,4).gpu() + Tensor.ones(4,4).gpu()).cpu().numpy(), np.full((4, 4), 2.0))

def test_quick_reference_creation_laziness_and_device():
  from tinygrad import Tensor, TinyJit, nn, dtypes, Device, GlobalCounters
  x = Tensor([1, 2, 3])
  assert x.dtype == dtypes.int32 and x.tolist() == [1, 2, 3]
  x = Tensor.rand(2, 3)
  assert x.shape == (2, 3) and 0 <= x.min().item() and x.max().item() < 1
  x = Tensor.kaiming_uniform(128, 784)
  bound = np.sqrt(6 / 784)  # kaiming_uniform's bound with a=0: gain sqrt(2) times sqrt(3 / fan_in)
  assert x.shape == (128, 784) and -bound <= x.min().item() and x.max().item() <= bound
  # Operations are lazy until realized
  before = GlobalCounters.kernel_count
  y = (x + 1).relu().sum()
  assert GlobalCounters.kernel_count == before
  y.realize() # or y.numpy()
  assert GlobalCounters.kernel_count > before
  np.testing.assert_allclose(y.numpy(), np.maximum(x.numpy() + 1, 0).sum(), rtol=1e-5)
  print(Device.DEFAULT)  # Auto-detected: METAL, CUDA, AMD, CPU, etc.
  assert Device.DEFAULT in ("CPU", "OPENCL", "CUDA")
  # Force device
  x = Tensor.rand(10, device="CPU")
  assert x.device == "CPU"

class Model:
  def __init__(self):
    self.l1 = nn.Linear(784, 128)
    self.l2 = nn.Linear(128, 10)
  def __call__(self, x):
    return self.l1(x).relu().sequential([self.l2])

def test_quick_reference_training_loop_state_dict_and_jit(tmp_path):
  from tinygrad import Tensor, TinyJit, nn
  from tinygrad.nn.datasets import mnist
  from tinygrad.nn.state import safe_save, safe_load, get_state_dict, load_state_dict, get_parameters

  X_train, Y_train, X_test, Y_test = mnist(fashion=True)  # the digits are not on this machine: Fashion-MNIST
  X_train, X_test = X_train.reshape(-1, 784).float() / 255, X_test.reshape(-1, 784).float() / 255
  model = Model()
  optim = nn.optim.Adam(nn.state.get_parameters(model))

  @TinyJit
  @Tensor.train()
  def train_step():
    optim.zero_grad()
    samples = Tensor.randint(512, high=X_train.shape[0])
    loss = model(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples]).backward()
    return loss.realize(*optim.schedule_step())

  for i in range(100):
    loss = train_step()
  accuracy = (model(X_test).argmax(axis=1) == Y_test).mean().item()
  assert accuracy > 0.75, accuracy

  # Save/load safetensors
  path = str(tmp_path / "model.safetensors")
  safe_save(get_state_dict(model), path)
  fresh = Model()
  load_state_dict(fresh, safe_load(path))
  # Get all trainable params
  params = get_parameters(fresh)
  assert len(params) == 4
  for a, b in zip(get_parameters(model), params): np.testing.assert_array_equal(a.numpy(), b.numpy())

  @TinyJit
  def forward(x):
    return fresh(x).realize()
  # First call captures, subsequent calls replay
  for i in range(3):
    batch = X_test[i * 64:(i + 1) * 64]
    out = forward(batch)
    np.testing.assert_allclose(out.numpy(), model(batch).numpy(), rtol=1e-5, atol=1e-5)
  assert forward.captured
