// The OpenCL device (opencl.cpp): any OpenCL 1.2+ driver through the ICD loader (libOpenCL.so.1), opened at run time
// with dlopen. "OPENCL" (aliases "CL", "GPU") is the first device of all platforms, "OPENCL:N" the N-th. Buffers are
// cl_mem objects; kernels are OpenCL C (renderer/opencl.cpp) built by the driver, their binaries cached on disk per
// platform, device and driver version; launches run over the kernel's grid on one in-order queue.
#pragma once
#include <memory>

#include "runtime/device.h"

namespace tg::runtime {

class OpenCLDevice : public Device {
 public:
  // Throws tg::DeviceError when there is no OpenCL library (saying what to install), no platform, or no device N.
  explicit OpenCLDevice(std::string name);
  ~OpenCLDevice() override;
  Allocator& allocator() override;
  Compiler& compiler() override;
  std::unique_ptr<Program> load(const std::string& function, const std::string& binary) override;
  const DeviceCaps& caps() const override;

  struct State;  // the driver's objects (opencl.cpp)

 protected:
  // Waits for every queued command; an error a kernel met while running is a tg::DeviceError.
  void wait() override;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace tg::runtime
