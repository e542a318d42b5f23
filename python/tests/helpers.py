import numpy as np
import torch
from tinygrad import Tensor

def check(shapes, torch_fn, tiny_fn=None, atol=1e-5, rtol=1e-4, grad_atol=1e-4, grad_rtol=1e-3, low=-2.0, high=2.0, forward_only=False, vals=None):
  """Runs torch_fn on torch tensors and tiny_fn (default: the same lambda) on ours made from the same values, and
  compares the result and (unless forward_only) the gradients of sum(out * r) for a random r."""
  tiny_fn = tiny_fn or torch_fn
  if vals is None: vals = [np.random.uniform(low, high, size=s).astype(np.float32) for s in shapes]
  tt = [torch.tensor(v, requires_grad=not forward_only and v.dtype == np.float32) for v in vals]
  ts = [Tensor(v, requires_grad=not forward_only and v.dtype == np.float32) for v in vals]
  out_t, out = torch_fn(*tt), tiny_fn(*ts)
  np.testing.assert_allclose(out.numpy(), out_t.detach().numpy(), atol=atol, rtol=rtol)
  assert tuple(out.shape) == tuple(out_t.shape)
  if forward_only: return
  r = np.random.uniform(-1, 1, size=tuple(out_t.shape)).astype(np.float32)
  (out_t * torch.tensor(r)).sum().backward()
  (out * Tensor(r)).sum().backward()
  for a, b in zip(tt, ts):
    if a.requires_grad:
      np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=grad_atol, rtol=grad_rtol)
