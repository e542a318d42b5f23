// The CPU device (cpu.cpp): malloc'd memory, C compiled with clang/gcc, programs dlopen'ed from memory.
#pragma once
#include <atomic>
#include <mutex>

#include "runtime/device.h"

namespace tg::runtime {

class CPUCompiler : public Compiler {
 public:
  CPUCompiler();
  std::string compile(const std::string& src) override;
  std::string cache_key() override;
  std::string cache_table() const override { return "cpu"; }
  const std::string& cc() const;  // the compiler; throws a CompileError naming what to install when there is none

 private:
  std::string cc_, key_;
  std::vector<std::string> flags_;
};

class CPUDevice : public Device {
 public:
  explicit CPUDevice(std::string name = "CPU");
  Allocator& allocator() override { return allocator_; }
  Compiler& compiler() override;
  std::unique_ptr<Program> load(const std::string& function, const std::string& binary) override;

 private:
  MallocAllocator allocator_;
  std::once_flag compiler_once_;
  std::unique_ptr<CPUCompiler> compiler_;
};

}  // namespace tg::runtime
