#include "support/device_test.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/device.h"
#include "tg/tg.h"

namespace {

// The child: TG_TEST_MISSING_DEVICE names the device, TG_TEST_MISSING_SAYS what its error must contain ('|' apart)
const bool missing_driver_child = [] {
  const char* device = std::getenv("TG_TEST_MISSING_DEVICE");
  if (!device) return false;
  std::string says = std::getenv("TG_TEST_MISSING_SAYS") ? std::getenv("TG_TEST_MISSING_SAYS") : "";
  int status = 1;
  try {
    tg::runtime::get_device(device);
    std::fprintf(stderr, "no error\n");
  } catch (const tg::DeviceError& e) {
    std::string m = e.what();
    bool all = true;
    for (size_t at = 0; at <= says.size();) {
      size_t bar = std::min(says.find('|', at), says.size());
      all = all && m.find(says.substr(at, bar - at)) != std::string::npos;
      at = bar + 1;
    }
    bool cpu_goes_on = (tg::Tensor({1.0f, 2.0f}) * 2).to_vector<float>() == std::vector<float>{2, 4};
    std::fprintf(stderr, "%s\n", m.c_str());
    status = all && cpu_goes_on ? 0 : 2;
  }
  std::fflush(stderr);
  ::_exit(status);
}();

}  // namespace

tg::runtime::Device* open_device(const std::string& name, std::string* why) {
  try {
    return &tg::runtime::get_device(name);
  } catch (const tg::DeviceError& e) {
    *why = e.what();
    return nullptr;
  }
}

std::pair<bool, std::string> device_missing_in_child(const std::string& device, const std::string& env, const std::vector<std::string>& says) {
  std::string joined;
  for (const std::string& s : says) joined += (joined.empty() ? "" : "|") + s;
  std::string cmd = "TG_TEST_MISSING_DEVICE='" + device + "' TG_TEST_MISSING_SAYS='" + joined + "' " + env + " DEV= /proc/" +
                    std::to_string(::getpid()) + "/exe 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {false, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  return {::pclose(p) == 0, out};
}
