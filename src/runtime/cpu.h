// The CPU device (cpu.cpp): malloc'd memory, C compiled with clang/gcc, programs dlopen'ed from memory.
#pragma once
#include <atomic>
#include <map>
#include <mutex>

#include "runtime/device.h"

namespace tg::runtime {

class CPUCompiler : public Compiler {
 public:
  CPUCompiler();
  // Runs the compiler in a process group of its own; one that runs longer than CC_TIMEOUT seconds (default 120;
  // 0: no limit) is killed with its children and raises a CompileError naming it and the limit.
  std::string compile(const std::string& src) override;
  // Many kernels in one compiler run per thread, each kernel's shared object linked from the joint object (where
  // the compiler names its linker; else, and where a joint run fails, one compile per kernel).
  std::vector<std::string> compile_many(const std::vector<KernelSource>& kernels) override;
  std::string cache_key() override;  // the flags and the CPU's features: no compiler needed
  std::string compiler_id() override;  // the compiler's path and first line of `--version`; "" when none is found
  bool plausible_binary(const std::string& binary) override;  // a well-formed shared object (elf_check.h)
  std::string cache_table() const override { return "cpu"; }
  std::string disassemble(const std::string& binary) override;  // objdump -d of the shared object's code
  // The compiler's absolute path: $CC, else clang, gcc or cc on PATH, looked up again when CC or PATH change.
  // Throws a CompileError naming what to install when there is none.
  std::string cc();

 private:
  std::string resolve(std::string* error);  // "" and *error set when there is no compiler
  struct LinkTools {
    std::string ld;       // ld on PATH ("" when there is none, or no support library: the driver links then)
    std::string support;  // the compiler's support library (libgcc.a), linked for the helpers its code calls
  };
  const LinkTools& link_tools(const std::string& cc);
  std::vector<std::string> compile_and_link(const std::vector<KernelSource>& kernels, const std::string& cc, const LinkTools& tools);

  std::mutex mu_;
  std::string resolved_for_, resolved_, resolve_error_;  // the last lookup, for the CC and PATH it saw
  std::map<std::string, std::string> versions_;           // compiler path -> first line of its --version
  std::map<std::string, LinkTools> link_tools_;           // compiler path -> its linker and support library
  std::string key_;
  std::vector<std::string> flags_;
};

class CPUDevice : public Device {
 public:
  explicit CPUDevice(std::string name = "CPU");
  Allocator& allocator() override { return allocator_; }
  Compiler& compiler() override { return compiler_; }
  // Refuses (tg::DeviceError) a binary that is not a well-formed shared object, before dlopen sees it.
  std::unique_ptr<Program> load(const std::string& function, const std::string& binary) override;

 private:
  MallocAllocator allocator_;
  CPUCompiler compiler_;
};

}  // namespace tg::runtime
