#!/usr/bin/env python3
# beautiful_mnist from Python: the GUIDE's model trained on Fashion-MNIST (Debian's dataset-fashion-mnist) with Adam,
# one TinyJit'd step per batch of 512. STEPS=70 by default; prints the test accuracy every 10 steps.
#   PYTHONPATH=build/python python3 examples/python/beautiful_mnist.py
import time
from tinygrad import Tensor, TinyJit, nn, GlobalCounters
from tinygrad.helpers import getenv, trange
from tinygrad.nn.datasets import mnist

class Model:
  def __init__(self):
    self.layers = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]
  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

if __name__ == "__main__":
  X_train, Y_train, X_test, Y_test = mnist(fashion=getenv("FASHION", 1))
  Tensor.manual_seed(getenv("SEED", 42))
  model = Model()
  opt = nn.optim.Adam(nn.state.get_parameters(model))

  @TinyJit
  @Tensor.train()
  def train_step() -> Tensor:
    opt.zero_grad()
    samples = Tensor.randint(getenv("BS", 512), high=X_train.shape[0])
    loss = model(X_train[samples]).sparse_categorical_crossentropy(Y_train[samples]).backward()
    opt.step()
    return loss

  @TinyJit
  def get_test_acc() -> Tensor: return (model(X_test).argmax(axis=1) == Y_test).mean() * 100

  st, test_acc = time.perf_counter(), float("nan")
  for i in (t := trange(getenv("STEPS", 70))):
    GlobalCounters.reset()
    loss = train_step()
    if i % 10 == 9: test_acc = get_test_acc().item()
    t.set_description(f"loss: {loss.item():6.2f} test_accuracy: {test_acc:5.2f}%")
  print(f"trained {getenv('STEPS', 70)} steps in {time.perf_counter()-st:.1f} s, test accuracy {test_acc:.2f}%")
  if (target := getenv("TARGET_EVAL_ACC_PCT", 0.0)) and test_acc < target:
    raise SystemExit(f"test accuracy {test_acc:.2f}% is below {target}%")
