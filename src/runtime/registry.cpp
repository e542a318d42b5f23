// The device registry: every device tinygrad.cpp knows, in one place. Add a device here.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

#include "runtime/cpu.h"
#include "runtime/cuda.h"
#include "runtime/opencl.h"
#include "tg/context.h"
#include "tg/device.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {

struct DeviceEntry {
  const char* name;
  std::vector<const char*> aliases;
  std::function<std::unique_ptr<Device>(const std::string& name)> make;
};

const std::vector<DeviceEntry>& registry() {
  static const std::vector<DeviceEntry> r = {
      {"CPU", {"CLANG"}, [](const std::string& n) { return std::make_unique<CPUDevice>(n); }},
      {"OPENCL", {"CL", "GPU"}, [](const std::string& n) { return std::make_unique<OpenCLDevice>(n); }},
      {"CUDA", {}, [](const std::string& n) { return std::make_unique<CudaDevice>(n); }},
  };
  return r;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string canonical_device(const std::string& name) {
  std::string u = upper(name), index;
  // "CPU:0" is "CPU"; "CPU:1" is a second instance of the device (its own buffers and programs)
  if (size_t colon = u.find(':'); colon != std::string::npos) {
    index = u.substr(colon + 1);
    u = u.substr(0, colon);
    bool digits = !index.empty() && index.size() < 6 && std::all_of(index.begin(), index.end(), ::isdigit);
    if (!digits) throw DeviceError("device", "bad device index in '" + name + "' (expected NAME or NAME:N)");
    if (std::stoi(index) == 0) index.clear();
  }
  for (const DeviceEntry& e : registry()) {
    bool match = u == e.name;
    for (const char* a : e.aliases) match = match || u == a;
    if (match) return index.empty() ? std::string(e.name) : std::string(e.name) + ":" + index;
  }
  std::string known;
  for (const DeviceEntry& e : registry()) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw DeviceError("device", "unknown device '" + name + "' (known: " + known + ")");
}

bool is_multi(const std::string& device) { return device.find(',') != std::string::npos; }

Device& get_device(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Device>> devices;
  std::string canon = canonical_device(name);
  std::lock_guard<std::mutex> lock(mu);
  auto& d = devices[canon];
  if (!d) {
    std::string base = canon.substr(0, canon.find(':'));
    for (const DeviceEntry& e : registry())
      if (base == e.name) d = e.make(canon);
    if (getenv_int("DEBUG") >= 1) std::fprintf(stderr, "opened device %s\n", canon.c_str());
  }
  return *d;
}

std::string default_device() {
  std::string d = getenv_str("DEV", getenv_str("DEVICE", "CPU"));
  return canonical_device(d.empty() ? "CPU" : d);
}

std::vector<std::string> device_names() {
  std::vector<std::string> out;
  for (const DeviceEntry& e : registry()) out.push_back(e.name);
  return out;
}

}  // namespace tg::runtime

namespace tg {

std::string Device::default_device() { return DEFAULT.empty() ? runtime::default_device() : runtime::canonical_device(DEFAULT); }
std::string Device::canonicalize(const std::string& name) { return runtime::canonical_device(name); }
std::vector<std::string> Device::names() { return runtime::device_names(); }

}  // namespace tg
