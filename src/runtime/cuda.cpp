// The CUDA device. The driver API is declared here (the types, attributes and ~25 functions used, from NVIDIA's
// cuda.h) and loaded with dlopen: nothing of CUDA is needed to build, and the library runs where it is absent.
// Written against the driver API's documentation; see bench/results/ for what a machine with a GPU has checked.
#include "runtime/cuda.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/dynlib.h"
#include "runtime/nvrtc.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

constexpr CUresult CUDA_SUCCESS = 0, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NO_DEVICE = 100;
constexpr int kMaxThreadsPerBlock = 1, kMaxBlockDimX = 2, kMaxGridDimX = 5, kMaxSharedPerBlock = 8, kCcMajor = 75, kCcMinor = 76;
constexpr int kFuncMaxThreadsPerBlock = 0, kFuncSharedSizeBytes = 1;  // CU_FUNC_ATTRIBUTE_*
constexpr unsigned kEventDisableTiming = 2;                            // CU_EVENT_DISABLE_TIMING
constexpr const char* kNeedDriver = "CUDA needs an NVIDIA GPU with its driver (libcuda.so.1, from the NVIDIA driver package)";

std::vector<std::string> library_names() {
  if (const char* lib = std::getenv("TG_CUDA_LIBRARY")) return {lib};  // another driver library (tests name a missing one)
  return {"libcuda.so.1", "libcuda.so"};
}

struct Cuda {
  DynLib lib{"CUDA", library_names(), kNeedDriver};
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int*);
  CUresult (*DeviceGetCount)(int*);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*DeviceGetName)(char*, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*DeviceTotalMem)(size_t*, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)();
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*MemAllocHost)(void**, size_t);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*ModuleLoadData)(CUmodule*, const void*);
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*FuncGetAttribute)(int*, int, CUfunction);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
  CUresult (*StreamCreate)(CUstream*, unsigned);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*EventCreate)(CUevent*, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*GetErrorString)(CUresult, const char**);

  Cuda() {
#define TG_CU(field, symbol) field = lib.get<decltype(field)>(symbol)
    TG_CU(Init, "cuInit");
    TG_CU(DriverGetVersion, "cuDriverGetVersion");
    TG_CU(DeviceGetCount, "cuDeviceGetCount");
    TG_CU(DeviceGet, "cuDeviceGet");
    TG_CU(DeviceGetName, "cuDeviceGetName");
    TG_CU(DeviceGetAttribute, "cuDeviceGetAttribute");
    TG_CU(DeviceTotalMem, "cuDeviceTotalMem_v2");
    TG_CU(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    TG_CU(CtxSetCurrent, "cuCtxSetCurrent");
    TG_CU(CtxSynchronize, "cuCtxSynchronize");
    TG_CU(MemAlloc, "cuMemAlloc_v2");
    TG_CU(MemFree, "cuMemFree_v2");
    TG_CU(MemcpyHtoD, "cuMemcpyHtoD_v2");
    TG_CU(MemcpyDtoH, "cuMemcpyDtoH_v2");
    TG_CU(MemAllocHost, "cuMemAllocHost_v2");
    TG_CU(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    TG_CU(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    TG_CU(ModuleLoadData, "cuModuleLoadData");
    TG_CU(ModuleGetFunction, "cuModuleGetFunction");
    TG_CU(FuncGetAttribute, "cuFuncGetAttribute");
    TG_CU(LaunchKernel, "cuLaunchKernel");
    TG_CU(StreamCreate, "cuStreamCreate");
    TG_CU(StreamSynchronize, "cuStreamSynchronize");
    TG_CU(EventCreate, "cuEventCreate");
    TG_CU(EventRecord, "cuEventRecord");
    TG_CU(EventSynchronize, "cuEventSynchronize");
    TG_CU(EventDestroy, "cuEventDestroy_v2");
    TG_CU(GetErrorString, "cuGetErrorString");
#undef TG_CU
    try {  // CUDA 12.8 renamed it; older drivers have only the first name
      EventElapsedTime = lib.get<decltype(EventElapsedTime)>("cuEventElapsedTime_v2");
    } catch (const DeviceError&) {
      EventElapsedTime = lib.get<decltype(EventElapsedTime)>("cuEventElapsedTime");
    }
  }
};

// Loaded on the first device opened (load_api: a failure is raised and tried again)
const Cuda& cuda_api() { return load_api<Cuda>(); }

std::string cu_err_str(CUresult e) {
  const char* s = nullptr;
  cuda_api().GetErrorString(e, &s);
  return (s ? s : "unknown CUDA error") + std::string(" (") + std::to_string(e) + ")";
}

// The errors after which the driver refuses every later call in the context (a kernel's fault: illegal address or
// instruction, misaligned access, a device-side assert, a timeout): the device is lost to this process
bool context_lost_by(CUresult e) { return e == 700 || e == 702 || (e >= 710 && e <= 719 && e != 711 && e != 712 && e != 713); }

}  // namespace

CudaLaunch cuda_launch_shape(const LaunchDims& dims, const DeviceCaps& caps, const std::string& kernel) {
  CudaLaunch l;
  bool locals = dims.local[0] > 0 || dims.local[1] > 0 || dims.local[2] > 0;
  int64_t used = 1;  // threads a block so far (x, then y)
  for (int d = 0; d < 3; d++) {
    int64_t global = std::max<int64_t>(dims.global[d], 1), threads = locals ? std::max<int64_t>(dims.local[d], 1) : 0;
    int64_t most_blocks = caps.max_groups[d];
    if (!locals) {
      int64_t budget = std::max<int64_t>(std::min<int64_t>(caps.max_local_size, 256) / used, 1);  // where the kernel names none
      for (int64_t t = std::min({budget, global, caps.max_local[d]}); t >= 1 && !threads; t--)
        if (global % t == 0) threads = t;
      int64_t room = std::min({global, caps.max_local[d], caps.max_local_size / used});
      for (int64_t t = threads + 1; global / threads > most_blocks && t <= room; t++)
        if (global % t == 0) threads = t;  // fewer, larger blocks where there would be too many
    }
    if (global % threads != 0 || global / threads > most_blocks || threads > caps.max_local[d])
      throw DeviceError("CUDA", "kernel " + kernel + ": " + std::to_string(global) + " threads in grid dimension " + std::to_string(d) +
                                    " cannot be split into at most " + std::to_string(most_blocks) + " blocks of at most " +
                                    std::to_string(caps.max_local[d]) + " threads");
    used *= threads;
    l.threads[d] = static_cast<unsigned>(threads);
    l.blocks[d] = static_cast<unsigned>(global / threads);
  }
  return l;
}

// The driver's objects of one GPU. Like OpenCL's, never released: modules and buffers live in statics that die at
// exit while the driver tears itself down.
struct CudaDevice::State {
  std::string name;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  DeviceCaps caps;
  std::string arch;  // sm_XY
  size_t total_memory = 0;
  std::string last_kernel;  // launches are asynchronous: a kernel's fault shows at a later call, which names it
  std::string lost;         // the error that made the context unusable, once one has
  // every driver call runs with the device's context current on the calling thread
  void use() {
    if (!lost.empty()) throw DeviceError(name, "the GPU cannot be used after an earlier error (" + lost + "): restart the process");
    check(cuda_api().CtxSetCurrent(context), "cuCtxSetCurrent");
  }
  // raises `what` failed with e; an error that loses the context says so, and names the kernel that caused it
  void check(CUresult e, const std::string& what) {
    if (e == CUDA_SUCCESS) return;
    std::string m = what + " failed: " + cu_err_str(e);
    if (context_lost_by(e)) {
      if (!last_kernel.empty()) m += " (most likely in kernel " + last_kernel + ", the last one launched)";
      lost = cu_err_str(e);
      m += "; CUDA keeps this error: every later use of " + name + " in this process fails";
    }
    throw DeviceError(name, m);
  }

  struct Alloc : Allocator {
    State* s = nullptr;
    size_t capacity() const override { return s->total_memory; }
    void* raw_alloc(size_t nbytes) override {
      s->use();
      CUdeviceptr p = 0;
      CUresult e = cuda_api().MemAlloc(&p, std::max<size_t>(nbytes, 1));
      if (e == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;  // Allocator raises "out of memory: N bytes on CUDA"
      s->check(e, "cuMemAlloc of " + std::to_string(nbytes) + " bytes");
      return reinterpret_cast<void*>(p);
    }
    // the free waits for the kernels and copies that may still use the block; it never throws (destructors call it,
    // also at exit, when the driver may be gone: its errors are ignored)
    void raw_free(void* ptr, size_t) override {
      if (cuda_api().CtxSetCurrent(s->context) != CUDA_SUCCESS) return;
      cuda_api().CtxSynchronize();
      cuda_api().MemFree(reinterpret_cast<CUdeviceptr>(ptr));
    }
    // Small copies go straight from the user's (pageable) memory on the legacy stream, which waits for the device's
    // blocking stream: in order with the kernels. Larger ones go through two pinned staging buffers on the device's
    // stream, the CPU filling (or emptying) one while the GPU copies the other: copies from pinned memory are many
    // times faster than from pageable (DEV=CUDA ./build/bin/tg_bench copy).
    void copyin(void* dst, const void* src, size_t nbytes) override {
      if (nbytes == 0) return;
      s->use();
      std::string what = "copying " + std::to_string(nbytes) + " bytes to the GPU";
      if (nbytes < kStageMin) return s->check(cuda_api().MemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, nbytes), what);
      std::lock_guard<std::mutex> lock(stage_mu);
      stage(what);
      for (size_t off = 0, i = 0; off < nbytes; off += kStageBytes, i ^= 1) {
        size_t n = std::min(kStageBytes, nbytes - off);
        s->check(cuda_api().EventSynchronize(staged[i]), what);  // the GPU has finished reading this buffer's last chunk
        std::memcpy(staging[i], static_cast<const char*>(src) + off, n);
        s->check(cuda_api().MemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst) + off, staging[i], n, s->stream), what);
        s->check(cuda_api().EventRecord(staged[i], s->stream), what);
      }
      // returns with the last chunks maybe still in flight: `src` is no longer needed, and kernels queue behind them
    }
    void copyout(void* dst, const void* src, size_t nbytes) override {
      if (nbytes == 0) return;
      s->use();
      std::string what = "copying " + std::to_string(nbytes) + " bytes from the GPU";
      if (nbytes < kStageMin) return s->check(cuda_api().MemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), nbytes), what);
      std::lock_guard<std::mutex> lock(stage_mu);
      stage(what);
      auto start = [&](size_t off, size_t i) {  // the GPU copies the chunk at `off` into buffer i
        s->check(cuda_api().MemcpyDtoHAsync(staging[i], reinterpret_cast<CUdeviceptr>(src) + off, std::min(kStageBytes, nbytes - off), s->stream), what);
        s->check(cuda_api().EventRecord(staged[i], s->stream), what);
      };
      start(0, 0);
      for (size_t off = 0, i = 0; off < nbytes; off += kStageBytes, i ^= 1) {
        if (off + kStageBytes < nbytes) start(off + kStageBytes, i ^ 1);
        s->check(cuda_api().EventSynchronize(staged[i]), what);
        std::memcpy(static_cast<char*>(dst) + off, staging[i], std::min(kStageBytes, nbytes - off));
      }
    }

   private:
    static constexpr size_t kStageBytes = size_t{8} << 20, kStageMin = size_t{1} << 20;
    std::mutex stage_mu;
    void* staging[2] = {nullptr, nullptr};  // pinned host memory, allocated at the first large copy
    CUevent staged[2] = {nullptr, nullptr};  // recorded after each buffer's last copy
    void stage(const std::string& what) {
      for (int i = 0; i < 2 && !staging[i]; i++) {
        s->check(cuda_api().MemAllocHost(&staging[i], kStageBytes), what + ": allocating pinned host memory");
        s->check(cuda_api().EventCreate(&staged[i], kEventDisableTiming), what);
      }
    }
  } alloc;
  std::unique_ptr<NvrtcCompiler> build;
};

namespace {

class CudaProgram : public Program {
 public:
  CudaProgram(CudaDevice::State& s, const std::string& function, const std::string& binary) : s_(s), name_(function) {
    s.use();
    CUresult e = cuda_api().ModuleLoadData(&module_, binary.data());
    if (e == CUDA_SUCCESS) e = cuda_api().ModuleGetFunction(&function_, module_, function.c_str());
    s.check(e, "loading kernel " + function);
    int shared = 0, threads = 0;
    cuda_api().FuncGetAttribute(&shared, kFuncSharedSizeBytes, function_);
    // a kernel that uses many registers allows fewer threads per block than the GPU
    caps_ = s.caps;
    if (cuda_api().FuncGetAttribute(&threads, kFuncMaxThreadsPerBlock, function_) == CUDA_SUCCESS && threads > 0)
      caps_.max_local_size = std::min<int64_t>(caps_.max_local_size, threads);
    if (shared > s.caps.local_memory)
      throw DeviceError(s.name, "kernel " + function + " needs " + std::to_string(shared) + " bytes of shared memory; the GPU has " +
                                    std::to_string(s.caps.local_memory) + " per block");
  }

  double operator()(void* const* bufs, const int64_t* vars, const LaunchDims& dims, bool timed) override {
    s_.use();
    // kernel parameters: a pointer to each argument's value (the buffers' device pointers, then the int64 variables)
    std::vector<void*> args;
    for (size_t i = 0; i < dims.n_bufs; i++) args.push_back(const_cast<void**>(&bufs[i]));
    for (size_t i = 0; i < dims.n_vars; i++) args.push_back(const_cast<int64_t*>(&vars[i]));
    CudaLaunch l = cuda_launch_shape(dims, caps_, name_);
    if (int64_t(l.threads[0]) * l.threads[1] * l.threads[2] > caps_.max_local_size)
      throw DeviceError(s_.name, "kernel " + name_ + " runs at most " + std::to_string(caps_.max_local_size) + " threads a block, not " +
                                     std::to_string(int64_t(l.threads[0]) * l.threads[1] * l.threads[2]));
    CUevent start = nullptr, end = nullptr;
    if (timed) {
      cuda_api().EventCreate(&start, 0), cuda_api().EventCreate(&end, 0);
      cuda_api().EventRecord(start, s_.stream);
    }
    CUresult e = cuda_api().LaunchKernel(function_, l.blocks[0], l.blocks[1], l.blocks[2], l.threads[0], l.threads[1], l.threads[2], 0,
                                    s_.stream, args.data(), nullptr);
    if (e != CUDA_SUCCESS && timed) cuda_api().EventDestroy(start), cuda_api().EventDestroy(end);
    s_.check(e, "launching kernel " + name_ + " over blocks (" + std::to_string(l.blocks[0]) + ", " + std::to_string(l.blocks[1]) + ", " +
                    std::to_string(l.blocks[2]) + ") of (" + std::to_string(l.threads[0]) + ", " + std::to_string(l.threads[1]) + ", " +
                    std::to_string(l.threads[2]) + ") threads");
    s_.last_kernel = name_;
    if (!timed) return 0;
    cuda_api().EventRecord(end, s_.stream);
    e = cuda_api().EventSynchronize(end);
    float ms = 0;
    if (e == CUDA_SUCCESS) cuda_api().EventElapsedTime(&ms, start, end);
    cuda_api().EventDestroy(start), cuda_api().EventDestroy(end);
    s_.check(e, "running kernel " + name_);
    return ms * 1e-3;
  }


 private:
  CudaDevice::State& s_;
  DeviceCaps caps_;  // the GPU's, with this kernel's own limit of threads per block
  std::string name_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace

CudaDevice::CudaDevice(std::string name) : Device(std::move(name)), s_(std::make_unique<State>()) {
  State& s = *s_;
  s.name = this->name();
  const Cuda& cu = cuda_api();
  size_t colon = s.name.find(':');
  int index = colon == std::string::npos ? 0 : std::stoi(s.name.substr(colon + 1));
  CUresult e = cu.Init(0);
  if (e == CUDA_ERROR_NO_DEVICE) throw DeviceError(s.name, std::string("the NVIDIA driver finds no GPU: ") + kNeedDriver);
  s.check(e, "cuInit");
  int count = 0;
  s.check(cu.DeviceGetCount(&count), "cuDeviceGetCount");
  if (index >= count)
    throw DeviceError(s.name, "no such GPU: this machine has " + std::to_string(count) + " (CUDA is the first, CUDA:1 the second, ...)");
  s.check(cu.DeviceGet(&s.device, index), "cuDeviceGet");
  s.check(cu.DevicePrimaryCtxRetain(&s.context, s.device), "cuDevicePrimaryCtxRetain");
  s.use();
  s.check(cu.StreamCreate(&s.stream, 0), "cuStreamCreate");  // a blocking stream: the legacy stream waits for it
  auto attr = [&](int a) {
    int v = 0;
    s.check(cu.DeviceGetAttribute(&v, a, s.device), "cuDeviceGetAttribute");
    return static_cast<int64_t>(v);
  };
  s.caps.dialect = "CUDA";
  s.caps.grid = s.caps.gpu = true;
  // threads per grid dimension: as many blocks as the GPU allows of as many threads (our indices are int32)
  s.caps.max_local = {attr(kMaxBlockDimX), attr(kMaxBlockDimX + 1), attr(kMaxBlockDimX + 2)};
  for (int d = 0; d < 3; d++) {
    s.caps.max_groups[d] = std::min<int64_t>(attr(kMaxGridDimX + d), INT32_MAX);
    s.caps.max_global[d] = std::min<int64_t>(s.caps.max_groups[d] * s.caps.max_local[d], INT32_MAX);
  }
  s.caps.max_local_size = attr(kMaxThreadsPerBlock);
  s.caps.local_memory = attr(kMaxSharedPerBlock);
  s.caps.max_vector = 1;  // the CUDA dialect has no vector arithmetic
  s.arch = "sm_" + std::to_string(attr(kCcMajor)) + std::to_string(attr(kCcMinor));
  if (attr(kCcMajor) >= 8) s.caps.tensor_cores = "mma";  // mma.sync m16n8k16 for float16 and bfloat16
  s.check(cu.DeviceTotalMem(&s.total_memory, s.device), "cuDeviceTotalMem");
  s.alloc.s = &s;
  s.alloc.device_name = s.name;
  s.build = std::make_unique<NvrtcCompiler>(s.arch);
  if (getenv_int("DEBUG") >= 1) {
    char gpu[256] = {};
    cu.DeviceGetName(gpu, sizeof gpu - 1, s.device);
    int driver = 0;
    cu.DriverGetVersion(&driver);
    std::fprintf(stderr, "%s: %s (%s, driver %d)\n", s.name.c_str(), gpu, s.arch.c_str(), driver);
  }
}

// see State: the driver's objects are left to the process exit, kept reachable
CudaDevice::~CudaDevice() {
  static auto* kept = new std::vector<std::unique_ptr<State>>();
  kept->push_back(std::move(s_));
}

Allocator& CudaDevice::allocator() { return s_->alloc; }
Compiler& CudaDevice::compiler() { return *s_->build; }
const DeviceCaps& CudaDevice::caps() const { return s_->caps; }

std::unique_ptr<Program> CudaDevice::load(const std::string& function, const std::string& binary) {
  return std::make_unique<CudaProgram>(*s_, function, binary);
}

void CudaDevice::wait() {
  s_->use();
  s_->check(cuda_api().StreamSynchronize(s_->stream), "waiting for the GPU's kernels");
}

}  // namespace tg::runtime
