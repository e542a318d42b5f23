#include "runtime/nvrtc.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include "runtime/dynlib.h"
#include "runtime/process.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {

// where a CUDA toolkit is looked for: $CUDA_PATH, then /usr/local/cuda (NVRTC under its lib folders, nvdisasm in bin)
std::vector<std::string> toolkit_roots() {
  std::vector<std::string> roots;
  if (const char* cuda = std::getenv("CUDA_PATH")) roots.push_back(cuda);
  roots.push_back("/usr/local/cuda");
  return roots;
}

// nvrtc.h's declarations (CUDA 11-13): a program is an opaque handle, results an int enum (0: success)
using nvrtcProgram = struct _nvrtcProgram*;
using nvrtcResult = int;

struct Nvrtc {
  DynLib lib;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetPTX)(nvrtcProgram, char*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*GetNumSupportedArchs)(int*) = nullptr;  // since CUDA 11.2
  nvrtcResult (*GetSupportedArchs)(int*) = nullptr;
  const char* (*GetErrorString)(nvrtcResult);

  static std::vector<std::string> names() {
    std::vector<std::string> n;
    if (const char* lib = std::getenv("TG_NVRTC_LIBRARY")) n.push_back(lib);
    for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}) n.push_back(so);
    for (const std::string& d : toolkit_roots())
      for (const char* sub : {"/lib64/", "/lib/", "/targets/x86_64-linux/lib/"})
        for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) n.push_back(d + sub + so);
    return n;
  }
  Nvrtc() : lib("NVRTC", names(), "install the CUDA toolkit's NVRTC (cuda-nvrtc), or set CUDA_PATH or TG_NVRTC_LIBRARY") {
    CreateProgram = lib.get<decltype(CreateProgram)>("nvrtcCreateProgram");
    CompileProgram = lib.get<decltype(CompileProgram)>("nvrtcCompileProgram");
    GetProgramLogSize = lib.get<decltype(GetProgramLogSize)>("nvrtcGetProgramLogSize");
    GetProgramLog = lib.get<decltype(GetProgramLog)>("nvrtcGetProgramLog");
    GetCUBINSize = lib.get<decltype(GetCUBINSize)>("nvrtcGetCUBINSize");
    GetCUBIN = lib.get<decltype(GetCUBIN)>("nvrtcGetCUBIN");
    GetPTXSize = lib.get<decltype(GetPTXSize)>("nvrtcGetPTXSize");
    GetPTX = lib.get<decltype(GetPTX)>("nvrtcGetPTX");
    DestroyProgram = lib.get<decltype(DestroyProgram)>("nvrtcDestroyProgram");
    Version = lib.get<decltype(Version)>("nvrtcVersion");
    GetErrorString = lib.get<decltype(GetErrorString)>("nvrtcGetErrorString");
    try {
      GetNumSupportedArchs = lib.get<decltype(GetNumSupportedArchs)>("nvrtcGetNumSupportedArchs");
      GetSupportedArchs = lib.get<decltype(GetSupportedArchs)>("nvrtcGetSupportedArchs");
    } catch (const DeviceError&) {  // an older NVRTC: every architecture is taken as supported
    }
  }
};

// Loaded on first use (load_api: a failure is raised and tried again; a test may change TG_NVRTC_LIBRARY)
const Nvrtc& nvrtc_api() { return load_api<Nvrtc>(); }

void check(const Nvrtc& n, nvrtcResult r, const char* what) {
  if (r != 0) throw DeviceError("NVRTC", std::string(what) + " failed: " + n.GetErrorString(r));
}

}  // namespace

std::string nvrtc_compile(const std::string& src, const std::string& arch) {
  const Nvrtc& n = nvrtc_api();
  nvrtcProgram prog = nullptr;
  check(n, n.CreateProgram(&prog, src.c_str(), "kernel.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> destroy(&prog, [](nvrtcProgram* p) { nvrtc_api().DestroyProgram(p); });
  std::string gpu = "--gpu-architecture=" + arch;
  // IEEE float math (no fast math, no contraction: sums of products round as on the CPU, fmaf where one rounding
  // is meant), C++17
  const char* options[] = {gpu.c_str(), "--fmad=false", "--std=c++17"};
  nvrtcResult r = n.CompileProgram(prog, 3, options);
  if (r != 0) {
    size_t size = 0;
    n.GetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    if (size) n.GetProgramLog(prog, log.data());
    log = log.substr(0, log.find('\0'));
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    throw CompileError("CUDA", "NVRTC rejected the kernel for " + arch + " (" + n.GetErrorString(r) + "):\n" + log + "\nsource:\n" + src);
  }
  bool cubin = arch.rfind("sm_", 0) == 0;
  size_t size = 0;
  check(n, cubin ? n.GetCUBINSize(prog, &size) : n.GetPTXSize(prog, &size), "reading the compiled size");
  std::string binary(size, '\0');
  check(n, cubin ? n.GetCUBIN(prog, binary.data()) : n.GetPTX(prog, binary.data()), "reading the compiled kernel");
  return binary;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtc_api(), nvrtc_api().Version(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_target(const std::string& arch) {
  const Nvrtc& n = nvrtc_api();
  int count = 0;
  if (arch.rfind("sm_", 0) != 0 || !n.GetNumSupportedArchs || n.GetNumSupportedArchs(&count) != 0 || count <= 0) return arch;
  std::vector<int> archs(static_cast<size_t>(count));
  if (n.GetSupportedArchs(archs.data()) != 0) return arch;
  int want = std::atoi(arch.c_str() + 3), best = 0;
  for (int a : archs) {
    if (a == want) return arch;
    if (a < want) best = std::max(best, a);
  }
  // a GPU newer than this NVRTC: PTX for the newest architecture it knows, which the driver compiles for the GPU
  return best ? "compute_" + std::to_string(best) : arch;
}

bool nvrtc_available() {
  try {
    nvrtc_api();
    return true;
  } catch (const DeviceError&) {
    return false;
  }
}

std::string nvrtc_disassemble(const std::string& binary) {
  if (binary.rfind("\x7f" "ELF", 0) != 0) return binary;  // PTX: the assembly the driver compiles for its GPU
  std::string dirs;
  for (const std::string& root : toolkit_roots()) dirs += root + "/bin:";
  if (const char* path = std::getenv("PATH")) dirs += path;
  std::string nvdisasm = find_executable("nvdisasm", dirs);
  if (nvdisasm.empty())
    return "(DEBUG=6 shows a cubin's SASS with nvdisasm, which is not installed here: it comes with the CUDA toolkit "
           "(its cuda-nvdisasm package); searched $CUDA_PATH/bin, /usr/local/cuda/bin and PATH)\n";
  TempDir dir("DEBUG=6");
  std::string cubin = dir.path + "/kernel.cubin";
  std::ofstream(cubin, std::ios::binary).write(binary.data(), static_cast<std::streamsize>(binary.size()));
  RunResult r = run({nvdisasm, "-c", cubin}, dir.path + "/sass", 60);
  if (r.exit_code != 0) return "(nvdisasm failed: " + (r.started ? r.output : r.spawn_error) + ")\n";
  return r.output;
}

}  // namespace tg::runtime
