# The suite runs against the tinygrad package on sys.path: the build tree's (PYTHONPATH=<build>/python, as ctest sets
# it) or an installed one (pip install .). References come from numpy and PyTorch, never from our own code.
import numpy as np
import pytest

@pytest.fixture(autouse=True)
def _seed():
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  np.random.seed(0)
