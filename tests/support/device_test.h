// Tests of a device that may be absent here: opening it or skipping, and its missing-driver error.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tg::runtime {
class Device;
}

// The device `name`, or nullptr with the reason there is none in *why (the test is then skipped).
tg::runtime::Device* open_device(const std::string& name, std::string* why);
#define NEED_DEVICE(dev, name)                    \
  std::string why;                                \
  tg::runtime::Device* dev = open_device(name, &why); \
  if (!dev) GTEST_SKIP() << why

// A device whose driver library is missing, checked in a fresh process (a library once loaded stays loaded in a
// process): this test binary runs again with `env` naming a library that does not exist; before any test runs
// (device_test.cpp) it opens `device`, which must raise a DeviceError containing every one of `says`, and the CPU
// must still compute. Returns the child's output and whether all of that held.

std::pair<bool, std::string> device_missing_in_child(const std::string& device, const std::string& env, const std::vector<std::string>& says);
