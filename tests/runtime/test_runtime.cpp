// The CPU device: allocator, compiling and running C, the program caches, and the errors of each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/cpu.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/thread_pool.h"
#include "tg/context.h"
#include "tg/counters.h"
#include "tg/error.h"
#include "tg/interrupt.h"
#include "tg/tensor.h"

using namespace tg;
using namespace tg::runtime;

namespace {

// A fresh cache folder for one test, removed afterwards.
struct TempCache {
  std::string dir = "/tmp/tg_test_cache_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
  Context ctx{{"XDG_CACHE_HOME", dir}};
  ~TempCache() { std::filesystem::remove_all(dir); }
};

// our kernel ABI: void name(void* const* bufs, const int64_t* vars)
const char* kAdd =
    "#include <stdint.h>\n"
    "void add(void* const* bufs, const int64_t* vars) {\n"
    "  float* out = bufs[0]; const float* a = bufs[1]; const float* b = bufs[2];\n"
    "  *out = *a + *b;\n"
    "}\n";

}  // namespace

// seed 001, "2+3 in raw clang": allocate, copy in, compile, run, copy out
TEST(Runtime, TwoPlusThreeInRawC) {
  TempCache cache;
  Device& cpu = get_device("CPU");
  Buffer a(cpu, 1, dtypes::float32), b(cpu, 1, dtypes::float32), out(cpu, 1, dtypes::float32);
  float two = 2, three = 3, five = 0;
  a.copyin(&two, 4);
  b.copyin(&three, 4);
  std::shared_ptr<Program> add = cpu.program("add", kAdd);
  void* bufs[] = {out.ptr(), a.ptr(), b.ptr()};
  (*add)(bufs, nullptr);
  out.copyout(&five, 4);
  EXPECT_EQ(five, 5.0f);
}

// DEBUG=6 prints a program's machine code when it is loaded: objdump's disassembly of its shared object (the
// addition is an x86 add of two floats), or a line saying objdump is missing
TEST(Runtime, Debug6PrintsTheMachineCodeOfEachNewProgram) {
  TempCache cache;
  Context ctx{{"DEBUG", 6}};
  ::testing::internal::CaptureStderr();
  get_device("CPU").program("add", std::string(kAdd) + "// a source no other test loads\n");
  std::string err = ::testing::internal::GetCapturedStderr();
  if (err.find("needs objdump") != std::string::npos) GTEST_SKIP() << err;
  EXPECT_NE(err.find("assembly of add on CPU:"), std::string::npos) << err;
  EXPECT_NE(err.find("<add>:"), std::string::npos) << err;
  EXPECT_NE(err.find("addss"), std::string::npos) << err;
  EXPECT_NE(err.find("ret"), std::string::npos) << err;
}

// A program's calls bind to its own functions (-Wl,-Bsymbolic), even when the process already has a global symbol
// of the same name: here libm's exp, which a kernel's entry would otherwise call instead of the kernel (a large
// kernel is not inlined into its entry; noinline stands for that).
TEST(Runtime, AProgramCallsItsOwnFunctions) {
  Device& cpu = get_device("CPU");
  Buffer out(cpu, 1, dtypes::float32);
  std::shared_ptr<Program> p = cpu.program("exp_call",
                                           "#include <stdint.h>\n"
                                           "__attribute__((noinline)) void exp(float* d) { d[0] = 7.0f; }\n"
                                           "void exp_call(void* const* bufs, const int64_t* vars) { exp((float*)bufs[0]); }\n");
  void* bufs[] = {out.ptr()};
  (*p)(bufs, nullptr);
  float got = 0;
  out.copyout(&got, 4);
  EXPECT_EQ(got, 7.0f);
}

TEST(Runtime, AllocatorReusesFreedBlocks) {
  Allocator& al = get_device("CPU").allocator();
  al.free_cache();
  void* p = al.alloc(4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  al.free(p, 4096);
  EXPECT_EQ(al.cached_bytes(), 4096u);
  EXPECT_EQ(al.alloc(4096), p);  // the same block comes back
  EXPECT_EQ(al.cached_bytes(), 0u);
  al.free(p, 4096);
  al.free_cache();
  EXPECT_EQ(al.cached_bytes(), 0u);
}

// A buffer of 2 MiB or more starts on a 2 MiB boundary and, where the kernel gives transparent huge pages on
// request, is backed by them once written (/proc/self/smaps: AnonHugePages of its mapping). Skipped where THP is
// off.
TEST(Runtime, ABigBufferIsBackedByHugePages) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator maps the memory";
#endif
  Allocator& al = get_device("CPU").allocator();
  size_t n = size_t{6} << 20;
  void* p = al.alloc(n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20), 0u);
  std::memset(p, 1, n);
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  int64_t huge_kb = -1;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool mine = false;
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) mine = lo <= at && at < hi;  // a mapping's first line
    if (mine && line.rfind("AnonHugePages:", 0) == 0) huge_kb = std::stoll(line.substr(14));
  }
  al.free(p, n);
  al.free_cache();
  if (mode.find("[never]") != std::string::npos || mode.empty()) GTEST_SKIP() << "transparent huge pages are off";
  EXPECT_GE(huge_kb, 2048) << "THP: " << mode;
}

// More memory than the machine has, or a byte count that overflows, is a DeviceError naming the bytes and the
// device: never std::bad_alloc, a tiny block from a wrapped size, or a process killed on first touch.
TEST(Runtime, AnAllocationTooLargeIsADeviceError) {
  Device& cpu = get_device("CPU");
  Allocator& al = cpu.allocator();
  int64_t used = GlobalCounters::mem_used;
  for (size_t n : {size_t{1} << 50, SIZE_MAX - 10, SIZE_MAX}) {
    try {
      al.alloc(n);
      FAIL() << n << " bytes allocated";
    } catch (const DeviceError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("out of memory: " + std::to_string(n) + " bytes on CPU"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(GlobalCounters::mem_used, used);
  // elements * itemsize past what size_t holds
  try {
    Buffer b(cpu, SIZE_MAX / 2, dtypes::float32);
    FAIL() << "a buffer of 2^63 float32 elements";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  // a buffer is allocated on first use: that is where a petabyte fails
  Buffer huge(cpu, size_t{1} << 48, dtypes::float32);
  EXPECT_THROW(huge.ptr(), DeviceError);
  EXPECT_EQ(GlobalCounters::mem_used, used);
}

TEST(Runtime, ProgramsAreCachedInMemoryAndOnDisk) {
  TempCache cache;
  Compiler& cc = get_device("CPU").compiler();
  std::string src = std::string(kAdd) + "// memory and disk\n";
  CompileStats before = compile_stats();
  std::string bin = cc.compile_cached(src);
  EXPECT_EQ(compile_stats().compiled, before.compiled + 1);
  EXPECT_EQ(cc.compile_cached(src), bin);
  EXPECT_EQ(compile_stats().memory_hits, before.memory_hits + 1);
  // what another process would find: the disk entry, the compiler's id line and then the binary
  std::optional<std::string> entry = disk_cache_get("cpu", cc.cache_key() + "\n" + src);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->substr(0, entry->find('\n')), cc.compiler_id());
  EXPECT_EQ(entry->substr(entry->find('\n') + 1), bin);
}

TEST(Runtime, CorruptCacheEntriesAreRebuilt) {
  TempCache cache;
  disk_cache_put("test", "key", "value");
  EXPECT_EQ(disk_cache_get("test", "key"), "value");
  std::string path = disk_cache_dir() + "/test/" + hash_hex("key");
  // flip one byte of the value: the checksum no longer matches
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4 + 8 + 3 + 8);
    f.put('V');
  }
  EXPECT_EQ(disk_cache_get("test", "key"), std::nullopt);
  // truncated
  std::filesystem::resize_file(path, 10);
  EXPECT_EQ(disk_cache_get("test", "key"), std::nullopt);
  // an entry written for another key (a hash collision) is not taken either
  disk_cache_put("test", "other", "x");
  std::filesystem::copy_file(disk_cache_dir() + "/test/" + hash_hex("other"), path,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(disk_cache_get("test", "key"), std::nullopt);
}

TEST(Runtime, CacheCanBeDisabled) {
  TempCache cache;
  Context off{{"DISABLE_COMPILER_CACHE", 1}};
  disk_cache_put("test", "k", "v");
  EXPECT_EQ(disk_cache_get("test", "k"), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(cache.dir));
}

TEST(Runtime, CompileErrorsCarryTheCompilerMessage) {
  TempCache cache;
  try {
    get_device("CPU").compiler().compile_cached("void broken(void) { this is not C; }\n");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("error"), std::string::npos) << what;
    EXPECT_NE(what.find("this is not C"), std::string::npos) << what;
  }
}

namespace {
// CC for a test: a script that logs each run's arguments to `log`, one line per run, and runs the real compiler
struct LoggingCompiler {
  std::string script, log;
  explicit LoggingCompiler(const std::string& dir) : script(dir + "/logging-cc"), log(dir + "/cc-runs") {
    std::string real = static_cast<CPUCompiler&>(get_device("CPU").compiler()).cc();
    std::filesystem::create_directories(dir);
    std::ofstream(script) << "#!/bin/sh\necho \"$@\" >> " << log << "\nexec " << real << " \"$@\"\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  }
  int compiles() const {  // the runs that compiled code (not the questions asked of the compiler)
    std::ifstream f(log);
    int n = 0;
    for (std::string line; std::getline(f, line);) n += line.rfind("-print", 0) != 0 && line.rfind("--version", 0) != 0;
    return n;
  }
};

// a kernel of our ABI named `name` writing `value` to bufs[0], with a helper every such kernel defines (once per
// translation unit, as the C renderer's helpers are)
std::string constant_kernel(const std::string& name, float value) {
  return "#include <stdint.h>\n#ifndef TG_ONCE_twice\n#define TG_ONCE_twice\nstatic inline float twice(float x) { return 2 * x; }\n"
         "#endif\nvoid " + name + "(void* const* bufs, const int64_t* vars) { *(float*)bufs[0] = twice(" +
         std::to_string(value) + "f); }\n";
}
}  // namespace

// Kernels compiled together: one compiler run per thread at most, not one per kernel; each shared object holds its
// own kernel only (it does not even name the others) and computes its own value.
TEST(Runtime, KernelsAreCompiledTogether) {
  TempCache cache;
  LoggingCompiler cc(cache.dir);
  Context ctx{{"CC", cc.script}};
  Device& cpu = get_device("CPU");
  std::vector<KernelSource> kernels;
  for (int i = 0; i < 5; i++) kernels.push_back({"joint" + std::to_string(i), constant_kernel("joint" + std::to_string(i), i + 0.5f)});
  CompileStats before = compile_stats();
  std::vector<std::shared_ptr<Program>> programs = cpu.programs(kernels);
  EXPECT_EQ(compile_stats().compiled, before.compiled + 5);
  EXPECT_GE(cc.compiles(), 1);
  EXPECT_LE(cc.compiles(), static_cast<int>(std::min<size_t>(5, cpu_threads())));
  Buffer out(cpu, 1, dtypes::float32);
  for (int i = 0; i < 5; i++) {
    void* bufs[] = {out.ptr()};
    (*programs[i])(bufs, nullptr);
    float got = 0;
    out.copyout(&got, 4);
    EXPECT_EQ(got, 2 * (i + 0.5f)) << kernels[i].entry;
  }
  std::vector<std::string> binaries = cpu.compiler().compile_cached_many(kernels);  // now from the memory cache
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 5; j++) {
      if (i != j) {
        EXPECT_EQ(binaries[i].find(kernels[j].entry), std::string::npos) << kernels[j].entry << " in " << kernels[i].entry;
      }
    }
  }
  // asked again: the same programs, nothing compiled
  EXPECT_EQ(cpu.programs(kernels), programs);
  EXPECT_EQ(compile_stats().compiled, before.compiled + 5);
}

// A realize compiles its schedule's new kernels before running the first: together, not one compiler run each.
TEST(Runtime, ARealizeCompilesItsNewKernelsTogether) {
  TempCache cache;
  LoggingCompiler cc(cache.dir);
  Context ctx{{"CC", cc.script}};
  Tensor x = Tensor::arange(1, 38, 1, dtypes::float32);  // 1..37
  std::vector<Tensor> outs{x.sum(), x.max(), x.sqrt().sum(), (x * x).cumsum(), (x - 19).abs().max()};
  CompileStats before = compile_stats();
  Tensor::realize(outs);
  int64_t kernels = compile_stats().compiled - before.compiled;
  EXPECT_GE(kernels, 5);
  EXPECT_LE(cc.compiles(), static_cast<int>(cpu_threads()));
  double sqrt_sum = 0, squares = 0;
  for (int i = 1; i <= 37; i++) sqrt_sum += std::sqrt(i), squares += i * i;
  EXPECT_EQ(outs[0].item<float>(), 703.0f);
  EXPECT_EQ(outs[1].item<float>(), 37.0f);
  EXPECT_NEAR(outs[2].item<float>(), sqrt_sum, 1e-3);
  EXPECT_EQ(outs[3].to_vector<float>().back(), static_cast<float>(squares));
  EXPECT_EQ(outs[4].item<float>(), 18.0f);
}

// The interrupt check stops a realize between kernels; its tensors keep their graphs and compute again later.
TEST(Runtime, AnInterruptCheckStopsARealizeBetweenKernels) {
  Tensor w = Tensor::eye(8).contiguous().realize(), x0 = Tensor::rand({8, 8}).realize();
  Tensor x = x0;
  for (int i = 0; i < 6; i++) x = x.matmul(w);  // six kernels: a reduce cannot fuse into the next
  int calls = 0;
  set_interrupt_check([&] {
    if (++calls == 3) throw Interrupted();
  });
  int64_t before = GlobalCounters::kernel_count;
  EXPECT_THROW(x.realize(), Interrupted);
  EXPECT_EQ(GlobalCounters::kernel_count - before, 2);  // stopped before the third
  set_interrupt_check(nullptr);
  EXPECT_EQ(x.to_vector<float>(), x0.to_vector<float>());
}

// Once a kernel has written a live tensor's buffer (an assign), the realize runs to its end: stopping after it
// would leave the tensor's graph to apply the update a second time.
TEST(Runtime, AnInterruptCheckNeverStopsAfterAnAssign) {
  Tensor w = Tensor::zeros({4}).contiguous().realize(), v = Tensor::ones({4}).contiguous().realize();
  int calls = 0;
  set_interrupt_check([&] {
    if (++calls > 1) throw Interrupted();  // would stop at the second item, the assign
  });
  w.assign((v + 1).sum() * v * 2);  // a reduce, then the kernel that writes w's buffer
  set_interrupt_check(nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(w.to_vector<float>(), std::vector<float>(4, 16.0f));
}

// A broken kernel among others: its own compiler message comes out (they are compiled one by one to find it).
TEST(Runtime, ABrokenKernelCompiledWithOthersReportsItsOwnError) {
  TempCache cache;
  std::vector<KernelSource> kernels{{"fine0", constant_kernel("fine0", 1)},
                                    {"broken", "void broken(void) { this is not C; }\n"},
                                    {"fine1", constant_kernel("fine1", 2)}};
  try {
    get_device("CPU").programs(kernels);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("this is not C"), std::string::npos) << what;
  }
}

TEST(Runtime, DeviceNames) {
  EXPECT_EQ(canonical_device("cpu"), "CPU");
  EXPECT_EQ(canonical_device("CLANG"), "CPU");
  EXPECT_EQ(canonical_device("CPU:0"), "CPU");
  EXPECT_EQ(&get_device("cpu"), &get_device("CPU"));
  EXPECT_THROW(get_device("TPU"), DeviceError);
  {
    Context ctx{{"DEV", "clang"}};
    EXPECT_EQ(default_device(), "CPU");
  }
  Context ctx{{"DEV", "nope"}};
  EXPECT_THROW(default_device(), DeviceError);
}

// Launches back to back (a worker may still be leaving the last one when the next begins), of varying sizes,
// from two callers at once: every task of every launch runs exactly once, on at most the threads asked for, and
// parallel_for returns only after all of them.
TEST(Runtime, ThreadPoolRunsEveryTaskOnceAndWaitsForAll) {
  auto launches = [](size_t threads, int seed) {
    for (int rep = 0; rep < 2000; rep++) {
      size_t n = static_cast<size_t>((rep * 7 + seed) % 13);
      std::vector<std::atomic<int>> runs(n);
      std::mutex mu;
      std::set<std::thread::id> ran_on;
      tg::runtime::parallel_for(threads, n, [&](size_t i) {
        runs[i].fetch_add(1);
        std::lock_guard lock(mu);
        ran_on.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; i++) ASSERT_EQ(runs[i].load(), 1) << "launch " << rep << " of " << n << " tasks, task " << i;
      ASSERT_LE(ran_on.size(), threads) << "launch " << rep;
    }
  };
  for (size_t threads : {1, 2, 4}) launches(threads, 0);
  std::thread other([&] { launches(3, 5); });
  launches(2, 1);
  other.join();
  // no spinning at all between launches: workers sleep and are woken each time
  Context ctx{{"CPU_SPIN_US", "0"}};
  launches(2, 3);
}

TEST(Context, OverridesNestAndRestore) {
  EXPECT_EQ(getenv_int("TG_TEST_SETTING", 7), 7);
  {
    Context a{{"TG_TEST_SETTING", 1}};
    EXPECT_EQ(getenv_int("TG_TEST_SETTING"), 1);
    {
      Context b{{"TG_TEST_SETTING", "2"}};
      EXPECT_EQ(getenv_int("TG_TEST_SETTING"), 2);
    }
    EXPECT_EQ(getenv_int("TG_TEST_SETTING"), 1);
  }
  EXPECT_EQ(getenv_int("TG_TEST_SETTING", 7), 7);
  ::setenv("TG_TEST_SETTING", "abc", 1);
  EXPECT_EQ(getenv_str("TG_TEST_SETTING", "unset"), "unset");  // the environment as first read, until told
  reread_environment();
  EXPECT_EQ(getenv_int("TG_TEST_SETTING", 3), 3);  // not a number
  EXPECT_EQ(getenv_str("TG_TEST_SETTING"), "abc");
  {
    Context c{{"TG_TEST_SETTING", 4}};  // a Context still wins over the environment
    EXPECT_EQ(getenv_str("TG_TEST_SETTING"), "4");
  }
  ::unsetenv("TG_TEST_SETTING");
  reread_environment();
  EXPECT_EQ(getenv_int("TG_TEST_SETTING", 7), 7);
}
