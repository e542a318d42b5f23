"""Device: which device new tensors go to (Device.DEFAULT, settable) and the canonical device names."""
from __future__ import annotations
from tinygrad import _core

class _DeviceInfo:
  def __init__(self, name: str): self.device = name
  def __repr__(self): return f"<Device {self.device}>"

class _Device:
  """tinygrad's Device: Device.DEFAULT is the device of tensors made without one ("CPU" unless DEV=... says else)."""
  @property
  def DEFAULT(self) -> str: return _core._Device.DEFAULT
  @DEFAULT.setter
  def DEFAULT(self, name: str): _core._Device.DEFAULT = name
  def canonicalize(self, device: str|None) -> str: return _core._Device.canonicalize(device)
  def __getitem__(self, name: str) -> _DeviceInfo: return _DeviceInfo(self.canonicalize(name))
  def get_available_devices(self): return iter(_core._Device.names())

Device = _Device()
def canonicalize_device(device: str|None) -> str: return Device.canonicalize(device)
