// The CPU device: C source compiled by clang (or gcc, or $CC) into a shared object, loaded with dlopen from memory.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "runtime/cpu.h"
#include "runtime/disk_cache.h"
#include "runtime/elf_check.h"
#include "runtime/process.h"
#include "runtime/thread_pool.h"
#include "tg/context.h"
#include "tg/error.h"
#include "tg/profile.h"


namespace tg::runtime {

namespace {

constexpr const char* kNeedCompiler = "the CPU device needs clang or gcc (apt-get install clang), or CC pointing at one";
constexpr size_t kMaxBinaryBytes = size_t{1} << 30;

int64_t cc_timeout_s() { return std::max<int64_t>(0, getenv_int("CC_TIMEOUT", 120)); }


class CPUProgram : public Program {
 public:
  CPUProgram(const std::string& function, const std::string& binary) {
    // a cached binary is checked before dlopen maps it: a truncated one would SIGBUS on the first touch
    std::string problem = elf_problem(binary);
    if (!problem.empty()) throw DeviceError("CPU", "the shared object of " + function + " is not loadable: " + problem);
    // dlopen wants a file: an anonymous in-memory one of our own, which nothing else can truncate (sealed where
    // the kernel allows), and which leaves nothing behind
    fd_ = ::memfd_create(function.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd_ < 0) throw DeviceError("CPU", "cannot stage the shared object of " + function + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < binary.size()) {
      ssize_t n = ::write(fd_, binary.data() + done, binary.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw DeviceError("CPU", "cannot stage the shared object of " + function + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    std::string path = "/proc/self/fd/" + std::to_string(fd_);
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw DeviceError("CPU", "dlopen of " + function + " failed: " + ::dlerror());
    fn_ = reinterpret_cast<void (*)(void* const*, const int64_t*)>(::dlsym(handle_, function.c_str()));
    if (!fn_) throw DeviceError("CPU", "the shared object has no function " + function);
  }
  ~CPUProgram() override {
    if (handle_) ::dlclose(handle_);
    if (fd_ >= 0) ::close(fd_);
  }
  double operator()(void* const* bufs, const int64_t* vars, const LaunchDims&, bool) override {
    fn_(bufs, vars);
    return 0;
  }

 private:
  int fd_ = -1;
  void* handle_ = nullptr;
  void (*fn_)(void* const*, const int64_t*) = nullptr;
};

}  // namespace

CPUCompiler::CPUCompiler() {
  // -Bsymbolic: a kernel's entry calls its own kernel function, never a same-named symbol already in the process
  flags_ = {"-O2", "-march=native", "-fPIC", "-shared", "-Wl,-Bsymbolic", "-std=c11", "-fno-math-errno", "-ffp-contract=off", "-fwrapv", "-w"};
}

std::string CPUCompiler::resolve(std::string* error) {
  // looked up when first needed and again when CC or PATH change: nothing about the compiler is needed before a
  // cache miss
  std::string cc = getenv_str("CC"), path = getenv_str("PATH", "/usr/bin:/bin");
  std::lock_guard<std::mutex> lock(mu_);
  std::string state = cc + '\0' + path;
  if (state != resolved_for_) {
    resolved_for_ = state;
    resolve_error_.clear();
    if (!cc.empty()) {
      resolved_ = find_executable(cc, path);
      if (resolved_.empty()) resolve_error_ = "CC=" + cc + " is not an executable on PATH: " + kNeedCompiler;
    } else {
      resolved_.clear();
      for (const char* c : {"clang", "gcc", "cc"})
        if (!(resolved_ = find_executable(c, path)).empty()) break;
      if (resolved_.empty()) resolve_error_ = std::string("no C compiler on PATH: ") + kNeedCompiler;
    }
  }
  if (error) *error = resolve_error_;
  return resolved_;
}

std::string CPUCompiler::cc() {
  std::string error, cc = resolve(&error);
  if (cc.empty()) throw CompileError("CPU", error);
  return cc;
}

std::string CPUCompiler::compiler_id() {
  std::string cc = resolve(nullptr);
  if (cc.empty()) return "";
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = versions_.find(cc);
    if (it != versions_.end()) return cc + " " + it->second;
  }
  // the version decides the binary: an upgraded compiler rebuilds the cache
  std::string version = "(no version)";
  try {
    TempDir dir;
    RunResult r = run({cc, "--version"}, dir.path + "/version", cc_timeout_s());
    if (r.exit_code == 0) version = r.output.substr(0, r.output.find('\n'));
  } catch (const Error&) {  // no temporary folder: the path alone names the compiler
  }
  std::lock_guard<std::mutex> lock(mu_);
  versions_[cc] = version;
  return cc + " " + version;
}

std::string CPUCompiler::cache_key() {
  std::lock_guard<std::mutex> lock(mu_);
  if (key_.empty()) {
    // the flags and the machine's CPU features decide the binary (-march=native); the compiler is checked with
    // compiler_id() on a hit, so that a warm cache needs no compiler
    std::ifstream f("/proc/cpuinfo");
    std::string line, features;
    while (std::getline(f, line))
      if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
        features = line;
        break;
      }
    key_ = "cpu v2:";
    for (const std::string& fl : flags_) key_ += " " + fl;
    key_ += "\n" + hash_hex(features);
  }
  return key_;
}

bool CPUCompiler::plausible_binary(const std::string& binary) { return elf_problem(binary).empty(); }

namespace {
// The CompileError of a compiler or linker run that failed or did not give its output (`produced` false); `what`
// says what was compiled.
void check_run(const RunResult& r, const std::string& tool, bool produced, const std::string& what) {
  if (!r.started) throw CompileError("CPU", "cannot run " + tool + ": " + r.spawn_error);
  if (r.timed_out)
    throw CompileError("CPU", tool + " did not finish within CC_TIMEOUT=" + std::to_string(cc_timeout_s()) +
                                  " seconds and was killed (a hung compiler; set CC_TIMEOUT higher for a slow one)");
  if (r.exit_code == 0 && produced) return;
  std::string log = r.output;
  if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
  std::string how = r.signal ? "killed by signal " + std::to_string(r.signal) : "exit " + std::to_string(r.exit_code);
  throw CompileError("CPU", tool + " failed (" + how + "):\n" + log + "\n" + what);
}

// The shared object the run `r` of `tool` wrote to so_path, checked (elf_check.h), or the CompileError saying why
// there is none.
std::string shared_object(const RunResult& r, const std::string& tool, const std::string& so_path, const std::string& what) {
  std::string binary = r.exit_code == 0 ? read_regular_file(so_path, kMaxBinaryBytes).value_or("") : "";
  check_run(r, tool, !binary.empty(), what);
  std::string problem = elf_problem(binary);
  if (!problem.empty()) throw CompileError("CPU", tool + " wrote an unusable shared object: " + problem);
  return binary;
}

void write_source(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw CompileError("CPU", "cannot write " + path);
}
}  // namespace

std::string CPUCompiler::compile(const std::string& src) {
  std::string cc = this->cc();
  const LinkTools& tools = link_tools(cc);
  if (!tools.ld.empty()) return compile_and_link({{"", src}}, cc, tools)[0];
  // the compiler's driver compiles and links
  TempDir dir;
  std::string c_path = dir.path + "/kernel.c", so_path = dir.path + "/kernel.so", log_path = dir.path + "/cc.log";
  write_source(c_path, src);
  std::vector<std::string> argv{cc};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  argv.insert(argv.end(), {"-o", so_path, c_path, "-lm"});
  return shared_object(run(argv, log_path, cc_timeout_s()), cc, so_path, "source:\n" + src);
}

const CPUCompiler::LinkTools& CPUCompiler::link_tools(const std::string& cc) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = link_tools_.find(cc);
  if (it != link_tools_.end()) return it->second;
  // the system's linker, which gcc and clang run (asked once per compiler: each question starts it), and the
  // compiler's support library (libgcc.a: the helpers its code may call), asked of the compiler; without either,
  // the compiler's driver links
  LinkTools tools;
  try {
    TempDir dir;
    RunResult r = run({cc, "-print-libgcc-file-name"}, dir.path + "/answer", cc_timeout_s());
    std::string support = r.exit_code == 0 ? r.output.substr(0, r.output.find('\n')) : "";
    if (!support.empty() && usable_file(support, R_OK)) {
      tools.support = support;
      tools.ld = find_executable("ld", getenv_str("PATH", "/usr/bin:/bin"));
    }
  } catch (const Error&) {  // no temporary folder: the driver links
  }
  return link_tools_[cc] = tools;
}

// The kernels as one translation unit (the C renderer defines each helper once per unit, and kernel names are
// distinct), compiled to an object by one compiler run (-c: a compiler's start and its driver's link are most of a
// small kernel's compile); then each kernel's shared object linked from it by the linker itself, much faster than
// the driver, exporting only its entry (every symbol for an entry "") and keeping the sections it reaches. Library
// functions (libm's) are left to dlopen, which finds them in the process, as it does for the driver's -lm.
// Measured by ./build/bin/tg_bench compile.
std::vector<std::string> CPUCompiler::compile_and_link(const std::vector<KernelSource>& kernels, const std::string& cc,
                                                       const LinkTools& tools) {
  profile::Span span("cc and ld: " + std::to_string(kernels.size()) + (kernels.size() == 1 ? " kernel" : " kernels"), "compile");
  TempDir dir;
  std::string c_path = dir.path + "/kernels.c", o_path = dir.path + "/kernels.o", log_path = dir.path + "/cc.log";
  std::string unit;
  for (const KernelSource& k : kernels) unit += k.source + "\n";
  write_source(c_path, unit);
  std::vector<std::string> argv{cc};
  for (const std::string& fl : flags_)
    if (fl != "-shared" && fl.rfind("-Wl,", 0) != 0) argv.push_back(fl);
  argv.insert(argv.end(), {"-ffunction-sections", "-fdata-sections", "-c", "-o", o_path, c_path});
  RunResult r = run(argv, log_path, cc_timeout_s());  // (before the object is looked for)
  check_run(r, cc, usable_file(o_path, R_OK),
            kernels.size() == 1 ? "source:\n" + kernels[0].source : "(" + std::to_string(kernels.size()) + " kernels compiled together)");
  std::vector<std::string> binaries;
  for (size_t i = 0; i < kernels.size(); i++) {
    std::string so_path = dir.path + "/k" + std::to_string(i) + ".so", script = dir.path + "/k" + std::to_string(i) + ".map";
    std::vector<std::string> link{tools.ld, "-shared", "-Bsymbolic", "-o", so_path, o_path};
    if (!kernels[i].entry.empty()) {
      std::ofstream f(script);
      f << "{ global: " << kernels[i].entry << "; local: *; };\n";
      link.insert(link.begin() + 3, {"--gc-sections", "--version-script=" + script});
    }
    if (!tools.support.empty()) link.push_back(tools.support);
    binaries.push_back(shared_object(run(link, log_path, cc_timeout_s()), tools.ld, so_path,
                                     "linking " + (kernels[i].entry.empty() ? "a kernel" : kernels[i].entry)));
  }
  return binaries;
}

std::vector<std::string> CPUCompiler::compile_many(const std::vector<KernelSource>& kernels) {
  std::string cc = this->cc();
  const LinkTools& tools = link_tools(cc);
  if (tools.ld.empty()) return Compiler::compile_many(kernels);
  // one run per thread, kernels dealt out in turn (neighbours in a schedule are often alike in size)
  size_t runs = std::min(kernels.size(), std::max<size_t>(1, cpu_threads()));
  std::vector<std::vector<KernelSource>> parts(runs);
  for (size_t i = 0; i < kernels.size(); i++) parts[i % runs].push_back(kernels[i]);
  std::vector<std::vector<std::string>> built(runs);
  std::vector<char> failed(runs, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < runs; t++)
    threads.emplace_back([&, t] {
      try {
        built[t] = compile_and_link(parts[t], cc, tools);
      } catch (const Error& e) {  // compiled one by one below, where a broken kernel reports its own error
        if (getenv_int("DEBUG") >= 1) std::fprintf(stderr, "CPU: %s; compiling one kernel at a time\n", e.what());
        failed[t] = 1;
      }
    });
  for (std::thread& th : threads) th.join();
  std::vector<std::string> binaries(kernels.size());
  for (size_t t = 0; t < runs; t++)
    for (size_t j = 0; j < parts[t].size(); j++)
      binaries[j * runs + t] = failed[t] ? compile(parts[t][j].source) : std::move(built[t][j]);
  return binaries;
}

std::string CPUCompiler::disassemble(const std::string& binary) {
  std::string objdump = find_executable("objdump", getenv_str("PATH", "/usr/bin:/bin"));
  if (objdump.empty()) return "(DEBUG=6 needs objdump on PATH: apt-get install binutils)\n";
  TempDir dir("DEBUG=6");
  std::string so_path = dir.path + "/kernel.so";
  write_source(so_path, binary);
  RunResult r = run({objdump, "-d", "--no-show-raw-insn", "-j", ".text", so_path}, dir.path + "/asm", cc_timeout_s());
  if (r.exit_code != 0) return "(objdump failed: " + (r.started ? r.output : r.spawn_error) + ")\n";
  // from the first symbol on: the header names the temporary file
  size_t at = r.output.find(">:\n");
  at = at == std::string::npos ? 0 : r.output.rfind('\n', at) + 1;
  return r.output.substr(at);
}

CPUDevice::CPUDevice(std::string name) : Device(std::move(name)) { allocator_.device_name = this->name(); }

std::unique_ptr<Program> CPUDevice::load(const std::string& function, const std::string& binary) {
  return std::make_unique<CPUProgram>(function, binary);
}

}  // namespace tg::runtime
