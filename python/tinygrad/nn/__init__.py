"""tinygrad's nn layers, written over Tensor with tinygrad's constructor arguments and attribute names, so state-dict
keys ("weight", "bias", "running_mean" ...) match tinygrad's and PyTorch's."""
from __future__ import annotations
import math
from tinygrad.tensor import Tensor
from tinygrad.dtype import dtypes
from tinygrad.helpers import prod, make_tuple
from tinygrad.nn import optim, state, datasets  # noqa: F401

class Linear:
  """y = x @ weight.T + bias; weight (out_features, in_features) and bias uniform in +-1/sqrt(in_features)."""
  def __init__(self, in_features: int, out_features: int, bias=True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)

class Conv2d:
  """Convolution over the last len(kernel_size) dims; weight (out, in/groups, *kernel), uniform in +-1/sqrt(fan_in)."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
    self.kernel_size = make_tuple(kernel_size, 2)
    if isinstance(padding, str):
      if padding.lower() != "same": raise ValueError(f"Invalid padding string {padding!r}, only 'same' is supported")
      if stride != 1: raise ValueError("padding='same' is not supported for strided convolutions")
      pad = [(d*(k-1)//2, d*(k-1) - d*(k-1)//2) for d, k in zip(make_tuple(dilation, len(self.kernel_size)), self.kernel_size[::-1])]
      padding = tuple(x for p in pad for x in p)
    self.stride, self.dilation, self.groups, self.padding = stride, dilation, groups, padding
    scale = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = Tensor.uniform(out_channels, in_channels//groups, *self.kernel_size, low=-scale, high=scale)
    self.bias = Tensor.uniform(out_channels, low=-scale, high=scale) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)

def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, dilation=1, groups=1, bias=True) -> Conv2d:
  return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)

class ConvTranspose2d(Conv2d):
  """Transposed convolution; weight (in, out/groups, *kernel)."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
               bias=True):
    super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
    scale = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = Tensor.uniform(in_channels, out_channels//groups, *self.kernel_size, low=-scale, high=scale)
    self.output_padding = output_padding
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding, self.output_padding)

def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, output_padding=0, dilation=1,
                    groups=1, bias=True) -> ConvTranspose2d:
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)

class BatchNorm:
  """Batch normalization over dim 1 (BatchNorm1d/2d/3d alike). In training (Tensor.training) it normalizes with the
  batch's statistics and moves running_mean/running_var (unbiased) by momentum; otherwise it uses the running ones."""
  def __init__(self, sz: int, eps=1e-5, affine=True, track_running_stats=True, momentum=0.1):
    self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
    self.weight: Tensor|None = Tensor.ones(sz) if affine else None
    self.bias: Tensor|None = Tensor.zeros(sz) if affine else None
    self.num_batches_tracked = Tensor.zeros(1, dtype=dtypes.long).is_param_(False)
    if track_running_stats:
      self.running_mean, self.running_var = Tensor.zeros(sz).is_param_(False), Tensor.ones(sz).is_param_(False)
  def calc_stats(self, x: Tensor) -> tuple[Tensor, Tensor]:
    shape_mask = [1, -1, *([1]*(x.ndim-2))]
    if self.track_running_stats and not Tensor.training: return self.running_mean, self.running_var
    reduce_axes = tuple(x for x in range(x.ndim) if x != 1)
    batch_mean = x.mean(axis=reduce_axes)
    y = x - batch_mean.detach().reshape(shape_mask)  # the variance's gradient flows through x only, as tinygrad's
    batch_var = (y*y).mean(axis=reduce_axes)
    return batch_mean, batch_var
  def __call__(self, x: Tensor) -> Tensor:
    if x.ndim < 2: raise ValueError(f"BatchNorm needs at least 2 dimensions (N, C, ...), got {x.shape}")
    batch_mean, batch_var = self.calc_stats(x)
    if self.track_running_stats and Tensor.training:
      n = x.numel() // x.shape[1]
      self.running_mean.assign((1-self.momentum) * self.running_mean + self.momentum * batch_mean.detach())
      self.running_var.assign((1-self.momentum) * self.running_var + self.momentum * n / max(n-1, 1) * batch_var.detach())
      self.num_batches_tracked += 1
    return x.batchnorm(self.weight, self.bias, batch_mean, batch_var.add(self.eps).rsqrt())
BatchNorm1d = BatchNorm2d = BatchNorm3d = BatchNorm

class LayerNorm:
  """Normalizes over the last len(normalized_shape) dims, then weight * x + bias."""
  def __init__(self, normalized_shape: int|tuple[int, ...], eps=1e-5, elementwise_affine=True):
    self.normalized_shape = make_tuple(normalized_shape, 1)
    self.axis, self.eps, self.elementwise_affine = tuple(-1-i for i in range(len(self.normalized_shape))), eps, elementwise_affine
    self.weight = Tensor.ones(*self.normalized_shape) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if self.normalized_shape != x.shape[-len(self.normalized_shape):]:
      raise ValueError(f"last dimensions of {x.shape} must match {self.normalized_shape}")
    x = x.layernorm(eps=self.eps, axis=self.axis)
    if not self.elementwise_affine: return x
    return x * self.weight + self.bias

class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of an NCHW tensor."""
  def __call__(self, x: Tensor) -> Tensor: return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

class GroupNorm:
  """Normalizes each of num_groups channel groups over its channels and spatial dims; per-channel weight and bias."""
  def __init__(self, num_groups: int, num_channels: int, eps=1e-5, affine=True):
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = Tensor.ones(num_channels) if affine else None
    self.bias = Tensor.zeros(num_channels) if affine else None
  def __call__(self, x: Tensor) -> Tensor:
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
    if self.weight is None or self.bias is None: return x
    return x * self.weight.reshape(1, -1, *[1] * (x.ndim-2)) + self.bias.reshape(1, -1, *[1] * (x.ndim-2))

class InstanceNorm(GroupNorm):
  """Normalizes each channel of each sample over its spatial dims (N, C, ...): a GroupNorm with a group per channel."""
  def __init__(self, num_features: int, eps=1e-5, affine=True):
    super().__init__(num_features, num_features, eps, affine)
    self.num_features = num_features

class RMSNorm:
  """x / sqrt(mean(x^2) + eps) * weight over the last dim."""
  def __init__(self, dim: int, eps=1e-6, elementwise_affine=True):
    self.eps = eps
    self.weight = Tensor.ones(dim) if elementwise_affine else None
  def _norm(self, x: Tensor) -> Tensor: return x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()
  def __call__(self, x: Tensor) -> Tensor:
    x = self._norm(x.float()).cast(x.dtype)
    return x if self.weight is None else x * self.weight

class Embedding:
  """Rows of weight (vocab_size, embed_size), glorot_uniform, picked by integer indices of any shape."""
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_sz, self.embed_sz, self.weight = vocab_size, embed_size, Tensor.glorot_uniform(vocab_size, embed_size)
  def __call__(self, idx: Tensor) -> Tensor:
    if not dtypes.is_int(idx.dtype): raise TypeError(f"Embedding takes integer indices, not {idx.dtype}")
    return self.weight[idx]

class LSTMCell:
  """One step of an LSTM: (h, c) from the input x (batch, input_size) and the previous (h, c), zeros when None.
  The gates (input, forget, cell, output) are stacked in weight_ih (4*hidden, input) and weight_hh (4*hidden, hidden)."""
  def __init__(self, input_size: int, hidden_size: int, bias=True):
    bound = 1 / math.sqrt(hidden_size)
    self.weight_ih = Tensor.uniform(hidden_size*4, input_size, low=-bound, high=bound)
    self.weight_hh = Tensor.uniform(hidden_size*4, hidden_size, low=-bound, high=bound)
    self.bias_ih: Tensor|None = Tensor.zeros(hidden_size*4) if bias else None
    self.bias_hh: Tensor|None = Tensor.zeros(hidden_size*4) if bias else None
  def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor]|None = None) -> tuple[Tensor, Tensor]:
    if hc is None: hc = (Tensor.zeros(x.shape[0], self.weight_hh.shape[1], dtype=x.dtype),)*2
    h, c = hc
    gates = x.linear(self.weight_ih.T, self.bias_ih) + h.linear(self.weight_hh.T, self.bias_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c
