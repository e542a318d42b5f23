// RENDER_CHECK=CUDA, a developer setting: every kernel the engine builds, for any device, is also lowered for a
// CUDA GPU (grid caps of an sm_80/sm_90 part), rendered as CUDA C++ and compiled by NVRTC for sm_80 and sm_90. Run
// with the value suites on the CPU (ctest cuda_compile.*), it checks that every kernel they make compiles for CUDA
// on a machine without a GPU. The opts follow NOOPT/RANDOM_OPTS as for the device's own kernel.
#pragma once
#include "runtime/device.h"
#include "uop/uop.h"

namespace tg::engine {

// A CUDA GPU of compute capability 8.0 or 9.0 as codegen sees it (the caps CudaDevice reads from one)
runtime::DeviceCaps cuda_gpu_caps();

// Does nothing unless RENDER_CHECK=CUDA. Throws tg::CompileError (NVRTC's log and the source) for a kernel NVRTC
// rejects, tg::DeviceError when NVRTC is missing.
void check_render(const uop::UOp& ast);

}  // namespace tg::engine
