// Device = Allocator + Compiler + Program loader. Devices live in one registry (registry.cpp), by name.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/allocator.h"

namespace tg::runtime {

// One kernel to compile: the name of its entry function (what the loader looks up) and its source.
struct KernelSource {
  std::string entry, source;
};

// Source -> binary. compile_cached() looks in memory, then on disk, then compiles and fills both.
// A disk entry is keyed by cache_key() and the source; its value is the compiler's id, a newline, the binary.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // `refresh` skips both caches' reads (the binary is compiled again and the entries replaced: a cached binary the
  // loader refused).
  std::string compile_cached(const std::string& src, bool refresh = false);
  // Many kernels through the caches: those found in memory or on disk are taken, the others compiled together by
  // compile_many(). The binaries in the kernels' order.
  std::vector<std::string> compile_cached_many(const std::vector<KernelSource>& kernels);
  // Compiles without caching; throws tg::CompileError with the compiler's message.
  virtual std::string compile(const std::string& src) = 0;
  // Compiles several kernels without caching, the binaries in their order. A compiler that does better than one
  // run per kernel overrides it (the CPU: one compiler run for a schedule's kernels); by default, compile() each.
  virtual std::vector<std::string> compile_many(const std::vector<KernelSource>& kernels);
  // What decides the binary besides the source and the compiler: flags and target. Part of every cache key. Needs
  // no compiler: a warm cache runs where none is installed.
  virtual std::string cache_key() = 0;
  // The compiler that would compile now, one line ("" when there is none). Stored with each entry: a hit made by
  // another compiler is rebuilt when this one is present, and taken when there is no compiler at all.
  virtual std::string compiler_id() { return ""; }
  // Whether a binary read from the disk cache may be loaded (the CPU device checks its ELF structure).
  virtual bool plausible_binary(const std::string& binary) { return !binary.empty(); }
  virtual std::string cache_table() const = 0;  // the disk cache folder of this compiler
  // DEBUG=6: the binary's machine code as text, from the toolchain's disassembler found at run time; where there is
  // none, a line saying what to install (or that this device has none).
  virtual std::string disassemble(const std::string& binary);

 private:
  std::string key_of(const std::string& src);                                 // cache_key(), a newline, src
  std::optional<std::string> cached(const std::string& key);                  // memory, then disk
  void remember(const std::string& key, const std::string& binary);           // both, counted as compiled

  std::mutex mu_;
  std::map<std::string, std::string> memory_;
};

// What a device offers the code generator. The CPU runs a kernel's outer loop split between threads; a grid device
// (OpenCL, CUDA) runs one work-item per point of a launch grid of up to 3 dimensions, in work-groups that share
// local memory.
struct DeviceCaps {
  std::string dialect = "C";                    // the renderer's language (renderer/cstyle.h): "C", "OpenCL"
  bool grid = false;                            // kernels launch over a grid (SPECIAL gidx/lidx), not loops
  std::array<int64_t, 3> max_global{0, 0, 0};   // work-items per grid dimension (grid devices)
  std::array<int64_t, 3> max_groups{INT32_MAX, INT32_MAX, INT32_MAX};  // work-groups per grid dimension (CUDA: 65535 in y, z)
  std::array<int64_t, 3> max_local{1, 1, 1};    // work-items per work-group dimension
  int64_t max_local_size = 1;                   // work-items per work-group, all dimensions together
  int64_t local_memory = 0;                     // bytes of local memory per work-group
  bool half = true;                             // has float16 arithmetic (kernels compute 16-bit floats in float32
                                                // on every device, so values agree across devices; see ARCHITECTURE)
  bool fp64 = true;                             // has float64
  int64_t max_vector = 16;                      // widest float32 vector the renderer writes (1: none)
  bool gpu = false;  // many work-items per core: the heuristic shares small reductions' axes between them (GROUP)
  // matrix instructions for 16-bit float sums of products (the TC opt): "mma" (NVIDIA sm_80 and later: mma.sync
  // m16n8k16), "emulated" (OpenCL under TC_EMULATE=1: the same fragments through local memory, to test the
  // lowering without a GPU), "" none
  std::string tensor_cores;
};

// Where a grid kernel runs: work-items per dimension and per work-group (local all 0: the driver picks), and how
// many values `bufs` and `vars` hold (a grid kernel's parameters are its buffers, then its variables as int64).
struct LaunchDims {
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{0, 0, 0};
  size_t n_vars = 0;
  size_t n_bufs = 0;
};

// A loaded kernel, called with its buffers (what the device's allocator returned: host pointers on the CPU,
// cl_mem handles on OpenCL) and the values of its symbolic variables. A CPU kernel's entry has the C signature
//   void name(void* const* bufs, const int64_t* vars)
// and ignores `dims`; a grid kernel launches over `dims`. A grid launch returns once the kernel is queued: the
// device runs its queue in order, and Device::synchronize waits for it (reading a result does). With `timed` it
// waits and returns the kernel's time on the device in seconds (0 where the device does not measure it).
class Program {
 public:
  virtual ~Program() = default;
  virtual double operator()(void* const* bufs, const int64_t* vars, const LaunchDims& dims = {}, bool timed = false) = 0;
};

class Device {
 public:
  explicit Device(std::string name) : name_(std::move(name)) {}
  virtual ~Device() = default;
  const std::string& name() const { return name_; }
  virtual Allocator& allocator() = 0;
  virtual Compiler& compiler() = 0;
  virtual std::unique_ptr<Program> load(const std::string& function, const std::string& binary) = 0;
  // Compiled (through the caches) and loaded once per (function, source).
  std::shared_ptr<Program> program(const std::string& function, const std::string& src);
  // The same for many kernels, those not loaded yet compiled together (Compiler::compile_cached_many).
  std::vector<std::shared_ptr<Program>> programs(const std::vector<KernelSource>& kernels);
  // Waits until every queued command has finished (counted: tests check that launches do not wait).
  void synchronize() {
    synchronizations_++;
    wait();
  }
  int64_t synchronizations() const { return synchronizations_; }
  virtual const DeviceCaps& caps() const {
    static const DeviceCaps cpu;
    return cpu;
  }

 protected:
  virtual void wait() {}  // a device with a queue waits for it here (the CPU runs every kernel to its end)

 private:
  std::string name_;
  std::atomic<int64_t> synchronizations_{0};
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Program>> programs_;
};

// The device called `name` ("CPU", case-insensitive; "CLANG" is an alias). Throws tg::DeviceError for an unknown one.
Device& get_device(const std::string& name);
// A device name that names several devices joins them with commas: "CPU,CPU:1" (multi/ lowers such graphs).
bool is_multi(const std::string& device);
// DEV, else DEVICE, else "CPU".
std::string default_device();
std::vector<std::string> device_names();
// canonical name: "cpu" -> "CPU"; throws for unknown devices
std::string canonical_device(const std::string& name);

// How often programs were compiled and found in the caches, in this process.
struct CompileStats {
  int64_t compiled = 0, memory_hits = 0, disk_hits = 0;
};
CompileStats& compile_stats();

}  // namespace tg::runtime
