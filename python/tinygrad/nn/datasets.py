"""Datasets (tinygrad's nn.datasets): MNIST and Fashion-MNIST from local files."""
from __future__ import annotations
import os, pathlib
from tinygrad import _core
from tinygrad.tensor import Tensor

def _mnist_dir(fashion: bool) -> str:
  env = os.getenv("FASHION_MNIST_DIR" if fashion else "MNIST_DIR")
  if env: return env
  if fashion: return _core.FASHION_MNIST_DIR
  for d in (pathlib.Path.home() / ".cache/tinygrad/downloads/mnist", pathlib.Path("/usr/share/datasets/mnist")):
    if (d / "train-images-idx3-ubyte.gz").exists() or (d / "train-images-idx3-ubyte").exists(): return str(d)
  raise FileNotFoundError("MNIST digits not found and cannot be downloaded here: set MNIST_DIR to a folder with the four IDX "
                          "files (train-images-idx3-ubyte.gz ...), or use mnist(fashion=True) (Debian: dataset-fashion-mnist)")

def mnist(device=None, fashion=False) -> tuple[Tensor, Tensor, Tensor, Tensor]:
  """X_train (60000, 1, 28, 28) uint8, Y_train (60000,) uint8, X_test, Y_test. fashion=True reads Fashion-MNIST
  ($FASHION_MNIST_DIR, else Debian's /usr/share/datasets/fashion-mnist); the digits come from $MNIST_DIR."""
  out = _core.mnist(_mnist_dir(bool(fashion)))
  return tuple(t.to(device) for t in out) if device is not None else out
