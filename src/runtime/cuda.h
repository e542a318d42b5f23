// The CUDA device (cuda.cpp): NVIDIA GPUs through the driver API (libcuda.so.1) and NVRTC (nvrtc.h), both opened at
// run time with dlopen. "CUDA" is the first GPU, "CUDA:N" the N-th. Buffers are device pointers (CUdeviceptr);
// kernels are CUDA C++ (renderer/cuda.cpp) compiled by NVRTC for the GPU's own architecture (sm_XY cubins, cached
// on disk per architecture and NVRTC version); launches are queued on one stream per device.
#pragma once
#include <memory>

#include "runtime/device.h"

namespace tg::runtime {

class CudaDevice : public Device {
 public:
  // Throws tg::DeviceError when there is no driver (saying what to install), no GPU, or no GPU N.
  explicit CudaDevice(std::string name);
  ~CudaDevice() override;
  Allocator& allocator() override;
  Compiler& compiler() override;
  std::unique_ptr<Program> load(const std::string& function, const std::string& binary) override;
  const DeviceCaps& caps() const override;

  struct State;  // the driver's objects (cuda.cpp)

 protected:
  // Waits for the device's stream; an error a kernel met while running is a tg::DeviceError.
  void wait() override;

 private:
  std::unique_ptr<State> s_;
};

// The launch shape of a grid kernel on CUDA: per dimension, threads per block and blocks, exactly covering the
// dimension's work-items. The threads are the kernel's work-groups (LOCAL opts), or where it names none, divisors of
// each dimension's size: the largest within 256 threads a block (x first) and the dimension's own limit (max_local),
// larger where y or z would otherwise need more than 65535 blocks. Throws tg::DeviceError naming `kernel` where no
// such shape exists (a y size that is a prime above 65535). Exposed for tests.
struct CudaLaunch {
  std::array<unsigned, 3> blocks{1, 1, 1}, threads{1, 1, 1};
};
CudaLaunch cuda_launch_shape(const LaunchDims& dims, const DeviceCaps& caps, const std::string& kernel = "kernel");

}  // namespace tg::runtime
