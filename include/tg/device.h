// The device registry as the user sees it: which device new tensors go to, and which devices exist.
#pragma once
#include <string>
#include <vector>

namespace tg {

struct Device {
  // Where tensors go when no device is given. Empty (the default) means the DEV environment variable (or DEVICE),
  // else "CPU". Set it like tinygrad's Device.DEFAULT: tg::Device::DEFAULT = "CPU:1";
  static inline std::string DEFAULT;
  // The device new tensors get now, canonical ("CPU", "CPU:1").
  static std::string default_device();
  // The canonical spelling of a device name ("cpu" -> "CPU", "CLANG" -> "CPU", "CPU:0" -> "CPU"); a tg::DeviceError
  // for a name no device answers to.
  static std::string canonicalize(const std::string& name);
  // Every kind of device this build knows.
  static std::vector<std::string> names();
};

}  // namespace tg
