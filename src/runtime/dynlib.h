// A driver library opened at run time (dlopen), so that the core links nothing of OpenCL or CUDA and runs where
// they are absent; naming a device whose library is missing raises a DeviceError saying what to install.
#pragma once
#include <mutex>
#include <string>
#include <vector>

namespace tg::runtime {

class DynLib {
 public:
  // The first of `names` that dlopen finds (RTLD_NOW | RTLD_LOCAL). Throws tg::DeviceError naming `device`, every
  // name tried with dlerror()'s reason, and `install` (what to install).
  DynLib(const std::string& device, const std::vector<std::string>& names, const std::string& install);
  // Never dlclose'd: a driver's own threads and atexit handlers may still run its code at exit.
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;

  // The function `name` as type F; throws tg::DeviceError naming the library when it lacks it.
  template <typename F>
  F get(const char* name) const {
    return reinterpret_cast<F>(symbol(name));
  }
  const std::string& path() const { return path_; }

 private:
  void* symbol(const char* name) const;
  std::string device_, path_;
  void* handle_ = nullptr;
};

// A driver's API table T (a struct whose constructor opens its DynLib and looks up its functions), made on first
// use and never destroyed (kernels and buffers may outlive every static at exit). A failure is raised to every
// caller and tried again on the next call (a test may name another library in between).
template <typename T>
const T& load_api() {
  static std::mutex mu;
  static T* loaded = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded) loaded = new T();
  return *loaded;
}

}  // namespace tg::runtime
