"""tinygrad's optimizers over the C++ core's (tg::optim): the update is built as lazy tensors and realized with
step() (or returned by schedule_step() to realize with the loss). lr is a 0-d tensor: opt.lr.assign(...) changes it
without compiling anything again."""
from __future__ import annotations
from tinygrad import _core
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes

def _prepare(params: list[Tensor]) -> list[Tensor]:
  # tinygrad's rule: float tensors with is_param are trained; the rest (buffers) are only realized with each step
  params = list({id(p): p for p in params}.values())
  for p in params:
    if not isinstance(p, Tensor): raise TypeError(f"optimizer params must be Tensors, got {type(p).__name__}")
    train = p.is_param and dtypes.is_float(p.dtype)
    if train != bool(p._requires_grad): p._set_requires_grad(train)
  if not any(p._requires_grad for p in params): raise ValueError("optimizer must have at least one param")
  return params

def _check_device(params: list[Tensor], device):
  # the optimizer's state lives with the parameters; tinygrad's device= for another place is not supported
  if device is not None and any(p.device != device for p in params):
    raise NotImplementedError(f"optimizer state on {device} apart from its parameters is not supported")

class Optimizer:
  """The base of SGD, LARS, Adam, AdamW and LAMB: params (trained), buffers (only realized with each step), lr."""
  def __init__(self, core):
    self._core = core
  @property
  def params(self) -> list[Tensor]: return self._core.params
  @property
  def buffers(self) -> list[Tensor]: return self._core.buffers
  @property
  def lr(self) -> Tensor: return self._core.lr
  @lr.setter
  def lr(self, v):
    if isinstance(v, Tensor): self._core.lr = v
    else: self._core.lr.assign(Tensor(float(v), device=self._core.lr.device)).realize()
  def zero_grad(self): self._core.zero_grad()
  def step(self):
    self._check_training()
    self._core.step()
  def schedule_step(self) -> list[Tensor]:
    self._check_training()
    return self._core.schedule_step()
  @staticmethod
  def _check_training():
    # as tinygrad: an update outside training mode is a mistake (BatchNorm would have used its running statistics)
    if not Tensor.training:
      raise RuntimeError("Tensor.training is False: the optimizer updates only in training mode "
                         "(with Context(TRAINING=1): or with Tensor.train():, or Tensor.training = True)")

class LARS(Optimizer):
  """SGD with momentum and LARS's trust ratio tcoef * |w| / (|g| + weight_decay * |w|); with ns_coefficients, each
  update orthogonalized by ns_steps Newton-Schulz steps (Muon); pre_wd=False decays the weight after the update
  (w * (1 - lr * weight_decay)) instead of adding weight_decay * w to the gradient."""
  def __init__(self, params: list[Tensor], lr=0.001, momentum=0.9, weight_decay=1e-4, ns_steps=0, ns_coefficients=None,
               nesterov=False, classic=True, pre_wd=True, tcoef=0.001, device=None, fused=False):
    if lr < 0 or momentum < 0 or weight_decay < 0: raise ValueError(f"invalid LARS arguments {lr=} {momentum=} {weight_decay=}")
    _check_device(params, device)
    super().__init__(_core._LARS(_prepare(params), lr, momentum, weight_decay, nesterov, classic, tcoef,
                                 ns_steps if ns_coefficients else 0))
    if ns_coefficients: self._core.ns_coefficients = [float(c) for c in ns_coefficients]
    self._core.decoupled_wd = not pre_wd
    self.momentum, self.wd, self.ns_steps, self.ns_coefficients = momentum, weight_decay, ns_steps, ns_coefficients
    self.nesterov, self.classic, self.pre_wd, self.tcoef = nesterov, classic, pre_wd, tcoef
  @property
  def b(self) -> list[Tensor]: return self._core.b  # the momentum buffers

class LAMB(Optimizer):
  """Adam's moments with LAMB's layer-wise trust ratio (adam=True: none, i.e. Adam/AdamW)."""
  def __init__(self, params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False, device=None, fused=False):
    _check_device(params, device)
    if lr < 0 or eps < 0 or weight_decay < 0 or not 0 <= b1 < 1 or not 0 <= b2 < 1:
      raise ValueError(f"invalid LAMB arguments {lr=} {b1=} {b2=} {eps=} {weight_decay=}")
    super().__init__(_core._LAMB(_prepare(params), lr, b1, b2, eps, weight_decay, adam))
    self.b1, self.b2, self.eps, self.wd = b1, b2, eps, weight_decay
  # the moments and the running powers of b1 and b2 (tinygrad's names)
  @property
  def m(self) -> list[Tensor]: return self._core.m
  @property
  def v(self) -> list[Tensor]: return self._core.v
  @property
  def b1_t(self) -> Tensor: return self._core.b1_t
  @property
  def b2_t(self) -> Tensor: return self._core.b2_t

def SGD(params: list[Tensor], lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False, classic=False, device=None, fused=False) -> LARS:
  """PyTorch's SGD: the momentum buffer b = momentum * b + g (nesterov: g + momentum * b)."""
  return LARS(params, lr, momentum, weight_decay, nesterov=nesterov, classic=classic, tcoef=0.0)

def Muon(params: list[Tensor], lr=0.001, momentum=0.95, weight_decay=0.1, ns_steps=5, ns_coefficients=(3.4445, -4.775, 2.0315),
         nesterov=True, device=None, fused=False) -> LARS:
  """Muon (PyTorch's): nesterov momentum, each 2-d update orthogonalized by Newton-Schulz and scaled by
  sqrt(max(1, rows / cols)), decoupled weight decay. 1-d parameters get the momentum update as it is."""
  if fused: raise ValueError("fused is not supported by Muon")
  return LARS(params, lr, momentum, weight_decay, ns_steps, ns_coefficients, nesterov, classic=False, pre_wd=False, tcoef=0.0)

def Adam(params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-8, device=None, fused=False) -> LAMB:
  """Adam as PyTorch's: eps outside the square root, bias-corrected moments."""
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True)

def AdamW(params: list[Tensor], lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01, device=None, fused=False) -> LAMB:
  """Adam with decoupled weight decay."""
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True)
