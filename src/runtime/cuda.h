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

// The launch shape of a grid kernel on CUDA: per dimension, threads per block (the kernel's local size, or where
// the driver would pick, the largest divisor of the dimension's work-items that keeps the block within
// `max_threads` threads, the x dimension first) and blocks. Exposed for tests.
struct CudaLaunch {
  std::array<unsigned, 3> blocks{1, 1, 1}, threads{1, 1, 1};
};
CudaLaunch cuda_launch_shape(const LaunchDims& dims, int64_t max_threads);

}  // namespace tg::runtime
