// The device registry: every device tinygrad.cpp knows, in one place. Add a device here.
#include <algorithm>
#include <cctype>
#include <functional>

#include "runtime/cpu.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {

struct Entry {
  const char* name;
  std::vector<const char*> aliases;
  std::function<std::unique_ptr<Device>()> make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> r = {
      {"CPU", {"CLANG"}, [] { return std::make_unique<CPUDevice>(); }},
  };
  return r;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string canonical_device(const std::string& name) {
  std::string u = upper(name);
  if (size_t colon = u.find(':'); colon != std::string::npos) u = u.substr(0, colon);  // "CPU:0" -> "CPU"
  for (const Entry& e : registry()) {
    if (u == e.name) return e.name;
    for (const char* a : e.aliases)
      if (u == a) return e.name;
  }
  std::string known;
  for (const Entry& e : registry()) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw DeviceError("device", "unknown device '" + name + "' (known: " + known + ")");
}

Device& get_device(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Device>> devices;
  std::string canon = canonical_device(name);
  std::lock_guard<std::mutex> lock(mu);
  auto& d = devices[canon];
  if (!d)
    for (const Entry& e : registry())
      if (canon == e.name) d = e.make();
  return *d;
}

std::string default_device() {
  std::string d = getenv_str("DEV", getenv_str("DEVICE", "CPU"));
  return canonical_device(d.empty() ? "CPU" : d);
}

std::vector<std::string> device_names() {
  std::vector<std::string> out;
  for (const Entry& e : registry()) out.push_back(e.name);
  return out;
}

}  // namespace tg::runtime
