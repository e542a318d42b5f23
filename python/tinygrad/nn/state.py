"""Model state (tinygrad's nn.state): named tensors of any Python object, loading them back, safetensors files."""
from __future__ import annotations
import os, pathlib
from collections import OrderedDict
from typing import Any
from tinygrad import _core
from tinygrad.tensor import Tensor

def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict[str, Tensor]:
  """Every tensor reachable from obj by attribute, list index and dict key, named by its path ("l1.weight",
  "layers.0.bias"); what tinygrad's nn layers hold gives PyTorch's keys."""
  if isinstance(obj, tensor_type): return {prefix.strip("."): obj}
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix, tensor_type)  # namedtuple
  if isinstance(obj, OrderedDict): return get_state_dict(dict(obj), prefix, tensor_type)
  state_dict: dict[str, Tensor] = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): state_dict.update(get_state_dict(x, f"{prefix}{i}.", tensor_type))
  elif isinstance(obj, dict):
    for k, v in obj.items(): state_dict.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
  elif hasattr(obj, "__dict__") and not isinstance(obj, type):
    for k, v in obj.__dict__.items(): state_dict.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
  return state_dict

def get_parameters(obj) -> list[Tensor]:
  """The tensors of get_state_dict(obj), each once (what an optimizer takes)."""
  return list({id(t): t for t in get_state_dict(obj).values()}.values())

def load_state_dict(model, state_dict: dict[str, Tensor], strict=True, verbose=True, consume=False, realize=True) -> list[str]:
  """Assigns each of the model's tensors the state's tensor of the same name (moved to its device, cast to its dtype).
  strict: a missing name raises KeyError. A shape that differs raises ValueError (but () for (1,) and back, one value
  either way). Returns the names not loaded."""
  model_state = get_state_dict(model)
  missing = [k for k in model_state if k not in state_dict]
  if strict and missing: raise KeyError(f"state dict is missing {missing}")
  for k, v in model_state.items():
    if k not in state_dict: continue
    src = state_dict[k]
    # () and (1,) are one value: PyTorch's BatchNorm saves num_batches_tracked as a 0-d tensor, tinygrad's as (1,)
    if {tuple(v.shape), tuple(src.shape)} == {(), (1,)}: src = src.reshape(v.shape)
    elif tuple(v.shape) != tuple(src.shape):
      raise ValueError(f"Shape mismatch in layer `{k}`: Expected shape {v.shape}, but found {src.shape} in state dict.")
    v.assign(src.to(v.device).cast(v.dtype))
    if consume: del state_dict[k]
  if realize and model_state: Tensor.realize_all(list(model_state.values()))
  return missing

def _path(fn) -> str:
  if isinstance(fn, Tensor): raise TypeError("safetensors from a Tensor of bytes is not supported yet: pass a path")
  return os.fspath(fn)

def safe_save(tensors: dict[str, Tensor], fn: str|pathlib.Path, metadata: dict[str, Any]|None = None):
  """Writes tensors as a safetensors file (every dtype; realizes them)."""
  _core.safe_save(tensors, _path(fn), {k: str(v) for k, v in (metadata or {}).items()})

def safe_load(fn: str|pathlib.Path, device: str|None = None) -> dict[str, Tensor]:
  """Reads a safetensors file (mapped, not read: the bytes are copied when a tensor is first used)."""
  return _core.safe_load(_path(fn), device or "")

def safe_load_metadata(fn) -> dict[str, str]: return _core.safe_load_metadata(_path(fn))

def torch_load(fn: str|pathlib.Path, device: str|None = None) -> dict[str, Tensor]:
  """A PyTorch checkpoint's tensors (torch.save's ZIP format), by a reader that executes nothing."""
  return _core.torch_load(_path(fn), device or "")
