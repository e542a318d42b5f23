#include "runtime/dynlib.h"

#include <dlfcn.h>

#include "tg/error.h"

namespace tg::runtime {

DynLib::DynLib(const std::string& device, const std::vector<std::string>& names, const std::string& install) : device_(device) {
  std::string tried;
  for (const std::string& n : names) {
    if ((handle_ = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      path_ = n;
      return;
    }
    const char* why = ::dlerror();
    tried += "\n  " + n + ": " + (why ? why : "not found");
  }
  throw DeviceError(device, "cannot load the driver library:" + tried + "\n" + install);
}

void* DynLib::symbol(const char* name) const {
  void* p = ::dlsym(handle_, name);
  if (!p) throw DeviceError(device_, path_ + " has no function " + name + " (an older driver?)");
  return p;
}

}  // namespace tg::runtime
