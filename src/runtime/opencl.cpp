// The OpenCL device. The API is declared here (the few types, constants and functions we call, values from Khronos'
// CL/cl.h) and loaded with dlopen: nothing of OpenCL is needed to build, and the library runs where it is absent.
#include "runtime/opencl.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/dynlib.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {

using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

constexpr cl_int CL_SUCCESS = 0, CL_PLATFORM_NOT_FOUND_KHR = -1001;
constexpr cl_ulong CL_DEVICE_TYPE_ALL = 0xFFFFFFFF, CL_MEM_READ_WRITE = 1, CL_QUEUE_PROFILING_ENABLE = 2;
constexpr cl_ulong CL_DEVICE_TYPE_GPU = 4, CL_DEVICE_TYPE_ACCELERATOR = 8;
constexpr cl_uint CL_TRUE = 1, CL_DEVICE_TYPE = 0x1000, CL_PLATFORM_VERSION = 0x0901, CL_PLATFORM_NAME = 0x0902, CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004,
                  CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005, CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010, CL_DEVICE_LOCAL_MEM_SIZE = 0x1023,
                  CL_DEVICE_NAME = 0x102B, CL_DRIVER_VERSION = 0x102D, CL_DEVICE_VERSION = 0x102F, CL_DEVICE_EXTENSIONS = 0x1030,
                  CL_PROGRAM_BINARY_SIZES = 0x1165, CL_PROGRAM_BINARIES = 0x1166, CL_PROGRAM_BUILD_LOG = 0x1183,
                  CL_KERNEL_NUM_ARGS = 0x1191, CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2, CL_PROFILING_COMMAND_START = 0x1282, CL_PROFILING_COMMAND_END = 0x1283;

// OpenCL's float division and sqrt may be 2.5 ulp off unless asked; ours must match the CPU's IEEE results
constexpr const char* kBuildOptions = "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt";
constexpr const char* kNeedOpenCL =
    "OpenCL needs the ICD loader and a driver: apt-get install ocl-icd-libopencl1 pocl-opencl-icd (PoCL runs OpenCL on "
    "the CPU), or your GPU vendor's OpenCL driver";

const char* error_name(cl_int e) {
  switch (e) {
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -30: return "CL_INVALID_VALUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an OpenCL error";
  }
}
std::string cl_err_str(cl_int e) { return std::string(error_name(e)) + " (" + std::to_string(e) + ")"; }
bool out_of_memory(cl_int e) { return e == -4 || e == -5 || e == -6 || e == -61; }

// The functions we call, loaded once per process. The library stays loaded (see DynLib).
struct CL {
  DynLib lib;
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*);
  cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void*, size_t*);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_ulong, cl_uint, cl_device_id*, cl_uint*);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_context (*CreateContext)(const intptr_t*, cl_uint, const cl_device_id*, void*, void*, cl_int*);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_ulong, cl_int*);
  cl_mem (*CreateBuffer)(cl_context, cl_ulong, size_t, void*, cl_int*);
  cl_int (*ReleaseMemObject)(cl_mem);
  cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void*, cl_uint, const cl_event*, cl_event*);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void*, cl_uint, const cl_event*, cl_event*);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*);
  cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*, cl_int*);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, void*, void*);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_int (*GetProgramInfo)(cl_program, cl_uint, size_t, void*, size_t*);
  cl_int (*ReleaseProgram)(cl_program);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_kernel (*CreateKernel)(cl_program, const char*, cl_int*);
  cl_int (*GetKernelInfo)(cl_kernel, cl_uint, size_t, void*, size_t*);
  cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,
                                 const cl_event*, cl_event*);
  cl_int (*WaitForEvents)(cl_uint, const cl_event*);
  cl_int (*GetEventProfilingInfo)(cl_event, cl_uint, size_t, void*, size_t*);
  cl_int (*ReleaseEvent)(cl_event);
  cl_int (*Finish)(cl_command_queue);

  // TG_OPENCL_LIBRARY names another library (tests use a missing one)
  static std::vector<std::string> names() {
    const char* lib = std::getenv("TG_OPENCL_LIBRARY");
    if (lib && *lib) return {lib};
    return {"libOpenCL.so.1", "libOpenCL.so"};
  }
  CL() : lib("OPENCL", names(), kNeedOpenCL) {
#define TG_CL_LOAD(f) f = lib.get<decltype(f)>("cl" #f)
    TG_CL_LOAD(GetPlatformIDs), TG_CL_LOAD(GetPlatformInfo), TG_CL_LOAD(GetDeviceIDs), TG_CL_LOAD(GetDeviceInfo);
    TG_CL_LOAD(CreateContext), TG_CL_LOAD(CreateCommandQueue), TG_CL_LOAD(CreateBuffer), TG_CL_LOAD(ReleaseMemObject);
    TG_CL_LOAD(EnqueueWriteBuffer), TG_CL_LOAD(EnqueueReadBuffer), TG_CL_LOAD(CreateProgramWithSource);
    TG_CL_LOAD(CreateProgramWithBinary), TG_CL_LOAD(BuildProgram), TG_CL_LOAD(GetProgramBuildInfo), TG_CL_LOAD(GetProgramInfo);
    TG_CL_LOAD(ReleaseProgram), TG_CL_LOAD(ReleaseKernel), TG_CL_LOAD(CreateKernel), TG_CL_LOAD(GetKernelInfo), TG_CL_LOAD(SetKernelArg);
    TG_CL_LOAD(GetKernelWorkGroupInfo);
    TG_CL_LOAD(EnqueueNDRangeKernel), TG_CL_LOAD(WaitForEvents), TG_CL_LOAD(GetEventProfilingInfo), TG_CL_LOAD(ReleaseEvent);
    TG_CL_LOAD(Finish);
#undef TG_CL_LOAD
  }
};

// Loaded on the first device opened; a failure is raised to every caller (and tried again: TG_OPENCL_LIBRARY may
// change between tests).
const CL& cl_api() { return load_api<CL>(); }

void check(cl_int e, const std::string& device, const std::string& what) {
  if (e != CL_SUCCESS) throw DeviceError(device, what + " failed: " + cl_err_str(e));
}

std::string device_string(cl_device_id d, cl_uint param) {
  size_t n = 0;
  if (cl_api().GetDeviceInfo(d, param, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  cl_api().GetDeviceInfo(d, param, n, s.data(), nullptr);
  return s.substr(0, s.find('\0'));
}
template <typename T>
T device_value(cl_device_id d, cl_uint param) {
  T v{};
  cl_api().GetDeviceInfo(d, param, sizeof v, &v, nullptr);
  return v;
}
std::string platform_string(cl_platform_id p, cl_uint param) {
  char buf[512] = {};
  cl_api().GetPlatformInfo(p, param, sizeof buf - 1, buf, nullptr);
  return buf;
}

}  // namespace

// The driver's objects of one device. Nothing is released when the device is destroyed: devices, their programs
// and their cached buffers live in statics that die at exit, after or while the ICD loader and the driver tear
// themselves down (in an order we do not control; PoCL's threads may be gone), and the OS frees it all anyway.
struct OpenCLDevice::State {
  std::string name;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  DeviceCaps caps;
  std::string key;  // what decides a binary: platform, device, driver, options

  struct Alloc : Allocator {
    State* s = nullptr;
    ~Alloc() override = default;  // the cached blocks are left to the process exit (see State)
    size_t max_alloc = SIZE_MAX;
    size_t capacity() const override { return max_alloc; }
    void* raw_alloc(size_t nbytes) override {
      cl_int e = CL_SUCCESS;
      cl_mem m = cl_api().CreateBuffer(s->context, CL_MEM_READ_WRITE, std::max<size_t>(nbytes, 1), nullptr, &e);
      if (e == CL_SUCCESS) return m;
      if (out_of_memory(e)) return nullptr;  // Allocator raises "out of memory: N bytes on OPENCL"
      throw DeviceError(s->name, "clCreateBuffer of " + std::to_string(nbytes) + " bytes failed: " + cl_err_str(e));
    }
    void raw_free(void* ptr, size_t) override { cl_api().ReleaseMemObject(static_cast<cl_mem>(ptr)); }
    // the driver may allocate a buffer only when it is first written: running out shows up here
    void copyin(void* dst, const void* src, size_t nbytes) override {
      if (nbytes == 0) return;
      cl_int e = cl_api().EnqueueWriteBuffer(s->queue, static_cast<cl_mem>(dst), CL_TRUE, 0, nbytes, src, 0, nullptr, nullptr);
      if (e != CL_SUCCESS)
        throw DeviceError(s->name, std::string(out_of_memory(e) ? "out of memory: " : "") + "copying " + std::to_string(nbytes) +
                                       " bytes to the device failed: " + cl_err_str(e));
    }
    void copyout(void* dst, const void* src, size_t nbytes) override {
      if (nbytes == 0) return;
      cl_int e = cl_api().EnqueueReadBuffer(s->queue, static_cast<cl_mem>(const_cast<void*>(src)), CL_TRUE, 0, nbytes, dst, 0, nullptr, nullptr);
      if (e != CL_SUCCESS)
        throw DeviceError(s->name, "copying " + std::to_string(nbytes) + " bytes from the device failed: " + cl_err_str(e) +
                                       " (a kernel before it may have failed)");
    }
  } alloc;

  struct Build : Compiler {
    State* s = nullptr;
    std::string cache_key() override { return s->key; }
    std::string cache_table() const override { return "opencl"; }
    std::string compile(const std::string& src) override {
      cl_int e = CL_SUCCESS;
      const char* text = src.c_str();
      size_t len = src.size();
      cl_program p = cl_api().CreateProgramWithSource(s->context, 1, &text, &len, &e);
      check(e, s->name, "clCreateProgramWithSource");
      e = cl_api().BuildProgram(p, 1, &s->device, kBuildOptions, nullptr, nullptr);
      if (e != CL_SUCCESS) {
        std::string log = build_log(p);
        cl_api().ReleaseProgram(p);
        if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
        throw CompileError(s->name, "the OpenCL build failed (" + cl_err_str(e) + "):\n" + log + "\nsource:\n" + src);
      }
      size_t size = 0;
      e = cl_api().GetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
      std::string binary(size, '\0');
      unsigned char* out = reinterpret_cast<unsigned char*>(binary.data());
      if (e == CL_SUCCESS && size) e = cl_api().GetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof out, &out, nullptr);
      cl_api().ReleaseProgram(p);
      check(e, s->name, "reading the program binary");
      if (binary.empty()) throw CompileError(s->name, "the driver returned an empty program binary");
      return binary;
    }
    std::string build_log(cl_program p) {
      size_t n = 0;
      cl_api().GetProgramBuildInfo(p, s->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      if (n) cl_api().GetProgramBuildInfo(p, s->device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      return log.substr(0, log.find('\0'));
    }
  } build;
};

namespace {

// Launches are queued: a program that ends without reading its last results leaves kernels in the queues, which
// the driver must not be running while the process tears it down (PoCL aborts). At exit every device's queue is
// finished, by the handler registered last: exit handlers run newest first, and PoCL compiles a kernel in its own
// thread when the kernel first runs over some sizes, with LLVM objects made on first use whose destructors are
// registered then. A handler registered before such a compile ran after them, and a kernel still compiling at exit
// crashed in destroyed LLVM state. So each first launch is waited for (its compile is done) and the handler
// registered again; the newest one finishes the queues, the older ones have nothing left to do.
std::mutex& exit_queues_mutex() {
  static auto* mu = new std::mutex();  // never destroyed: the handlers run at exit
  return *mu;
}
std::vector<cl_command_queue>& exit_queues() {
  static auto* queues = new std::vector<cl_command_queue>();
  return *queues;
}
void finish_queues_at_exit() {
  std::atexit([] {
    static bool finished = false;  // by the newest handler: nothing is queued during exit
    std::lock_guard<std::mutex> lock(exit_queues_mutex());
    if (!finished)
      for (cl_command_queue q : exit_queues()) cl_api().Finish(q);  // errors: nothing is left to report them to
    finished = true;
  });
}
void finish_at_exit(cl_command_queue queue) {
  {
    std::lock_guard<std::mutex> lock(exit_queues_mutex());
    exit_queues().push_back(queue);
  }
  finish_queues_at_exit();
}

class CLProgram : public Program {
 public:
  CLProgram(OpenCLDevice::State& s, const std::string& function, const std::string& binary) : s_(s), name_(function) {
    const unsigned char* data = reinterpret_cast<const unsigned char*>(binary.data());
    size_t size = binary.size();
    cl_int status = CL_SUCCESS, e = CL_SUCCESS;
    program_ = cl_api().CreateProgramWithBinary(s.context, 1, &s.device, &size, &data, &status, &e);
    if (e == CL_SUCCESS) e = status;
    check(e, s.name, "loading the binary of kernel " + function);
    e = cl_api().BuildProgram(program_, 1, &s.device, kBuildOptions, nullptr, nullptr);
    if (e == CL_SUCCESS) kernel_ = cl_api().CreateKernel(program_, function.c_str(), &e);
    if (e == CL_SUCCESS) e = cl_api().GetKernelInfo(kernel_, CL_KERNEL_NUM_ARGS, sizeof n_args_, &n_args_, nullptr);
    if (e != CL_SUCCESS) {
      cl_api().ReleaseProgram(program_);
      throw DeviceError(s.name, "loading kernel " + function + " failed: " + cl_err_str(e));
    }
    // a driver may take a kernel that needs more local memory than the device has (PoCL does) and fail or
    // corrupt memory at launch: refused here
    cl_ulong local = 0;
    cl_api().GetKernelWorkGroupInfo(kernel_, s.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    if (static_cast<int64_t>(local) > s.caps.local_memory)
      throw DeviceError(s.name, "kernel " + function + " needs " + std::to_string(local) + " bytes of local memory; the device has " +
                                    std::to_string(s.caps.local_memory));
  }
  // kernel and program are left to the process exit (see OpenCLDevice::State): programs are cached for its life

  double operator()(void* const* bufs, const int64_t* vars, const LaunchDims& dims, bool timed) override {
    std::lock_guard<std::mutex> lock(mu_);  // arguments and launch are one step per kernel object
    size_t n_bufs = n_args_ - std::min<size_t>(n_args_, dims.n_vars);
    cl_int e = CL_SUCCESS;
    for (size_t i = 0; i < n_bufs && e == CL_SUCCESS; i++) e = cl_api().SetKernelArg(kernel_, static_cast<cl_uint>(i), sizeof(cl_mem), &bufs[i]);
    for (size_t i = 0; i < dims.n_vars && e == CL_SUCCESS; i++)
      e = cl_api().SetKernelArg(kernel_, static_cast<cl_uint>(n_bufs + i), sizeof(int64_t), &vars[i]);
    size_t global[3], local[3];
    bool has_local = false;
    for (int d = 0; d < 3; d++) {
      global[d] = static_cast<size_t>(dims.global[d]), local[d] = static_cast<size_t>(dims.local[d]);
      has_local = has_local || dims.local[d] > 0;
    }
    // the first launch over these sizes compiles the kernel for them (PoCL): waited for, see finish_queues_at_exit
    bool first = launched_.insert({global[0], global[1], global[2], local[0], local[1], local[2]}).second;
    cl_event ev = nullptr;
    if (e == CL_SUCCESS)
      e = cl_api().EnqueueNDRangeKernel(s_.queue, kernel_, 3, nullptr, global, has_local ? local : nullptr, 0, nullptr,
                                        timed || first ? &ev : nullptr);
    if (e != CL_SUCCESS) throw DeviceError(s_.name, "launching kernel " + name_ + " over " + sizes(dims) + " failed: " + cl_err_str(e));
    if (!timed && !first) return 0;
    e = cl_api().WaitForEvents(1, &ev);
    if (first) finish_queues_at_exit();
    cl_ulong start = 0, end = 0;
    if (e == CL_SUCCESS) cl_api().GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    if (e == CL_SUCCESS) cl_api().GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    cl_api().ReleaseEvent(ev);
    if (e != CL_SUCCESS) throw DeviceError(s_.name, "kernel " + name_ + " failed while running: " + cl_err_str(e));
    return timed && end > start ? static_cast<double>(end - start) * 1e-9 : 0;
  }

 private:
  static std::string sizes(const LaunchDims& d) {
    auto three = [](const std::array<int64_t, 3>& a) {
      return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " + std::to_string(a[2]) + ")";
    };
    return "global " + three(d.global) + (d.local[0] ? ", local " + three(d.local) : ", local chosen by the driver");
  }
  OpenCLDevice::State& s_;
  std::string name_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_uint n_args_ = 0;
  std::set<std::array<size_t, 6>> launched_;  // global and local sizes
  std::mutex mu_;
};

}  // namespace

OpenCLDevice::OpenCLDevice(std::string name) : Device(std::move(name)), s_(std::make_unique<State>()) {
  State& s = *s_;
  s.name = this->name();
  const CL& cl = cl_api();
  size_t colon = s.name.find(':');
  size_t index = colon == std::string::npos ? 0 : std::stoul(s.name.substr(colon + 1));
  // every device of every platform, in order
  cl_uint n_platforms = 0;
  cl_int e = cl.GetPlatformIDs(0, nullptr, &n_platforms);
  if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && n_platforms == 0))
    throw DeviceError(s.name, std::string("no OpenCL platform is installed: ") + kNeedOpenCL);
  check(e, s.name, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(n_platforms);
  check(cl.GetPlatformIDs(n_platforms, platforms.data(), nullptr), s.name, "clGetPlatformIDs");
  size_t count = 0;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ds(n);
    cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ds.data(), nullptr);
    for (cl_device_id d : ds)
      if (count++ == index) s.platform = p, s.device = d;
  }
  if (!s.device)
    throw DeviceError(s.name, "no such device: this machine has " + std::to_string(count) + " OpenCL device" + (count == 1 ? "" : "s") +
                                  (count ? " (OPENCL is the first, OPENCL:1 the second, ...)" : std::string(": ") + kNeedOpenCL));
  s.context = cl.CreateContext(nullptr, 1, &s.device, nullptr, nullptr, &e);
  check(e, s.name, "clCreateContext");
  s.queue = cl.CreateCommandQueue(s.context, s.device, CL_QUEUE_PROFILING_ENABLE, &e);
  check(e, s.name, "clCreateCommandQueue");
  finish_at_exit(s.queue);

  std::string extensions = device_string(s.device, CL_DEVICE_EXTENSIONS);
  s.caps.dialect = "OpenCL";
  s.caps.grid = true;
  s.caps.max_global = {INT32_MAX, INT32_MAX, INT32_MAX};  // OpenCL sets no smaller limit; our indices are int32
  size_t items[3] = {1, 1, 1};
  cl.GetDeviceInfo(s.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr);
  for (int d = 0; d < 3; d++) s.caps.max_local[d] = static_cast<int64_t>(std::max<size_t>(items[d], 1));
  s.caps.max_local_size = static_cast<int64_t>(std::max<size_t>(device_value<size_t>(s.device, CL_DEVICE_MAX_WORK_GROUP_SIZE), 1));
  s.caps.local_memory = static_cast<int64_t>(device_value<cl_ulong>(s.device, CL_DEVICE_LOCAL_MEM_SIZE));
  s.caps.half = extensions.find("cl_khr_fp16") != std::string::npos;
  s.caps.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
  // TG_OPENCL_AS_GPU=1 gives any OpenCL device a GPU's heuristics (GROUP for small reductions, blocks that leave
  // thousands of work-items, float4): how CI checks their values on PoCL
  s.caps.gpu = (device_value<cl_ulong>(s.device, CL_DEVICE_TYPE) & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0 ||
               getenv_int("TG_OPENCL_AS_GPU") != 0;
  s.caps.max_vector = s.caps.gpu ? 4 : 16;  // a GPU's vectors are registers of one work-item: float4 (tinygrad's)
  if (getenv_int("TC_EMULATE")) s.caps.tensor_cores = "emulated";  // codegen's TC lowering checked without a GPU
  s.key = "opencl v1\n" + platform_string(s.platform, CL_PLATFORM_NAME) + " " + platform_string(s.platform, CL_PLATFORM_VERSION) + "\n" +
          device_string(s.device, CL_DEVICE_NAME) + "\n" + device_string(s.device, CL_DEVICE_VERSION) + " driver " +
          device_string(s.device, CL_DRIVER_VERSION) + "\n" + kBuildOptions;
  s.alloc.s = &s;
  s.alloc.device_name = s.name;
  s.alloc.max_alloc = device_value<cl_ulong>(s.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  s.build.s = &s;
  if (getenv_int("DEBUG") >= 1)
    std::fprintf(stderr, "%s: %s (%s)\n", s.name.c_str(), device_string(s.device, CL_DEVICE_NAME).c_str(),
                 platform_string(s.platform, CL_PLATFORM_NAME).c_str());
}

// see State: the driver's objects are left to the process exit, kept reachable (not a leak to LeakSanitizer)
OpenCLDevice::~OpenCLDevice() {
  static auto* kept = new std::vector<std::unique_ptr<State>>();
  kept->push_back(std::move(s_));
}

Allocator& OpenCLDevice::allocator() { return s_->alloc; }
Compiler& OpenCLDevice::compiler() { return s_->build; }
const DeviceCaps& OpenCLDevice::caps() const { return s_->caps; }

std::unique_ptr<Program> OpenCLDevice::load(const std::string& function, const std::string& binary) {
  return std::make_unique<CLProgram>(*s_, function, binary);
}

void OpenCLDevice::wait() {
  cl_int e = cl_api().Finish(s_->queue);
  if (e != CL_SUCCESS) throw DeviceError(name(), "a kernel failed while running: " + cl_err_str(e));
}

}  // namespace tg::runtime
