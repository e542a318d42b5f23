// NVRTC, NVIDIA's run-time CUDA C++ compiler (libnvrtc.so.*), opened with dlopen at first use: the CUDA device's
// compiler, and usable without a GPU (NVRTC needs none), which is how kernels are checked for CUDA on any machine.
#pragma once
#include <mutex>
#include <string>

#include "runtime/device.h"

namespace tg::runtime {

// `src` (CUDA C++) compiled for `arch` ("sm_90": a cubin for that GPU; "compute_90": PTX the driver compiles).
// Throws tg::CompileError with NVRTC's log and the source when NVRTC rejects it, tg::DeviceError naming the
// libraries tried when NVRTC is not installed. Searched: $TG_NVRTC_LIBRARY, then libnvrtc.so.13/12/11.2 and
// libnvrtc.so on the loader's path, under $CUDA_PATH and /usr/local/cuda.
std::string nvrtc_compile(const std::string& src, const std::string& arch);
// NVRTC's version ("13.0"); throws like nvrtc_compile when it is missing.
std::string nvrtc_version();
// What to compile for a GPU of architecture `arch` ("sm_90"): `arch` itself where NVRTC knows it, else PTX for the
// newest architecture below it that NVRTC knows ("compute_120" for a GPU newer than this NVRTC; the driver compiles
// PTX for its GPU when the module loads).
std::string nvrtc_target(const std::string& arch);
// Whether NVRTC can be loaded here.
bool nvrtc_available();
// DEBUG=6: a cubin's machine code (SASS) from the CUDA toolkit's nvdisasm, found under $CUDA_PATH/bin,
// /usr/local/cuda/bin or on PATH (where it is missing, a line saying so and where it comes from); PTX as it is.
std::string nvrtc_disassemble(const std::string& binary);

// NVRTC as a Compiler for one GPU architecture (through nvrtc_target: a cubin, or PTX for a GPU newer than NVRTC):
// binaries cached in memory and on disk (table "cuda"), keyed by the target and the source, each entry stamped with
// NVRTC's version (another version's entry is rebuilt).
class NvrtcCompiler : public Compiler {
 public:
  explicit NvrtcCompiler(std::string arch) : arch_(std::move(arch)) {}
  std::string compile(const std::string& src) override { return nvrtc_compile(src, target()); }
  std::string cache_key() override { return "nvrtc " + target() + " --fmad=false --std=c++17"; }
  std::string compiler_id() override { return nvrtc_available() ? "nvrtc " + nvrtc_version() : ""; }
  std::string cache_table() const override { return "cuda"; }
  std::string disassemble(const std::string& binary) override { return nvrtc_disassemble(binary); }

 private:
  std::string arch_, target_;
  std::once_flag targeted_;  // BEAM compiles candidates on several threads at once
  const std::string& target() {
    std::call_once(targeted_, [this] { target_ = nvrtc_target(arch_); });
    return target_;
  }
};

}  // namespace tg::runtime
