// The CPU device: C source compiled by clang (or gcc, or $CC) into a shared object, loaded with dlopen from memory.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/cpu.h"
#include "runtime/disk_cache.h"
#include "tg/context.h"
#include "tg/error.h"

extern char** environ;

namespace tg::runtime {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool on_path(const std::string& exe) {
  if (exe.find('/') != std::string::npos) return ::access(exe.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (!d.empty() && ::access((d + "/" + exe).c_str(), X_OK) == 0) return true;
  return false;
}

// Runs argv, waits; returns the exit status and what it wrote to stdout and stderr.
int run(const std::vector<std::string>& argv, const std::string& output_path, std::string& output) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  output = read_file(output_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

class CPUProgram : public Program {
 public:
  CPUProgram(const std::string& function, const std::string& binary) {
    // dlopen wants a file: an anonymous in-memory one leaves nothing behind
    fd_ = ::memfd_create(function.c_str(), MFD_CLOEXEC);
    if (fd_ < 0 || ::write(fd_, binary.data(), binary.size()) != static_cast<ssize_t>(binary.size()))
      throw DeviceError("CPU", "cannot stage the shared object of " + function);
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
  void operator()(void* const* bufs, const int64_t* vars) override { fn_(bufs, vars); }

 private:
  int fd_ = -1;
  void* handle_ = nullptr;
  void (*fn_)(void* const*, const int64_t*) = nullptr;
};

}  // namespace

CPUCompiler::CPUCompiler() {
  std::string cc = getenv_str("CC");
  if (!cc.empty()) {
    if (!on_path(cc)) throw CompileError("CPU", "CC=" + cc + " is not an executable on PATH");
    cc_ = cc;
  } else {
    for (const char* c : {"clang", "gcc", "cc"})
      if (on_path(c)) {
        cc_ = c;
        break;
      }
  }
  // -Bsymbolic: a kernel's entry calls its own kernel function, never a same-named symbol already in the process
  flags_ = {"-O2", "-march=native", "-fPIC", "-shared", "-Wl,-Bsymbolic", "-std=c11", "-fno-math-errno", "-ffp-contract=off", "-fwrapv", "-w"};
}

const std::string& CPUCompiler::cc() const {
  if (cc_.empty())
    throw CompileError("CPU", "no C compiler on PATH: the CPU device needs clang or gcc (apt-get install clang), "
                              "or CC pointing at one");
  return cc_;
}

std::string CPUCompiler::cache_key() {
  if (key_.empty()) {
    // the compiler's version and the machine's CPU features decide the binary (-march=native)
    std::string version, out = temp_dir() + "/tg_cc_version_" + std::to_string(::getpid());
    run({cc(), "--version"}, out, version);
    std::remove(out.c_str());
    std::string cpu = read_file("/proc/cpuinfo"), features;
    size_t at = cpu.find("flags");
    if (at != std::string::npos) features = cpu.substr(at, cpu.find('\n', at) - at);
    key_ = cc() + "\n" + version.substr(0, version.find('\n'));
    for (const std::string& f : flags_) key_ += " " + f;
    key_ += "\n" + hash_hex(features);
  }
  return key_;
}

std::string CPUCompiler::compile(const std::string& src) {
  static std::atomic<uint64_t> counter{0};
  std::string base = temp_dir() + "/tg_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  std::string c_path = base + ".c", so_path = base + ".so", log_path = base + ".log";
  {
    std::ofstream f(c_path);
    f << src;
    if (!f) throw CompileError("CPU", "cannot write " + c_path);
  }
  std::vector<std::string> argv{cc()};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  argv.insert(argv.end(), {"-o", so_path, c_path, "-lm"});
  std::string log;
  int rc = run(argv, log_path, log);
  std::string binary = rc == 0 ? read_file(so_path) : "";
  for (const std::string& p : {c_path, so_path, log_path}) std::remove(p.c_str());
  if (rc != 0 || binary.empty()) {
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    throw CompileError("CPU", cc() + " failed (exit " + std::to_string(rc) + "):\n" + log + "\nsource:\n" + src);
  }
  return binary;
}

CPUDevice::CPUDevice(std::string name) : Device(std::move(name)) {}

Compiler& CPUDevice::compiler() {
  std::call_once(compiler_once_, [this] { compiler_ = std::make_unique<CPUCompiler>(); });
  return *compiler_;
}

std::unique_ptr<Program> CPUDevice::load(const std::string& function, const std::string& binary) {
  return std::make_unique<CPUProgram>(function, binary);
}

}  // namespace tg::runtime
