// Device = Allocator + Compiler + Program loader. Devices live in one registry (registry.cpp), by name.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/allocator.h"

namespace tg::runtime {

// Source -> binary. compile_cached() looks in memory, then on disk, then compiles and fills both.
// A disk entry is keyed by cache_key() and the source; its value is the compiler's id, a newline, the binary.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // `from_disk` tells whether the binary came from the disk cache; `refresh` skips both caches' reads (the
  // binary is compiled again and the entries replaced: a cached binary the loader refused).
  std::string compile_cached(const std::string& src, bool* from_disk = nullptr, bool refresh = false);
  // Compiles without caching; throws tg::CompileError with the compiler's message.
  virtual std::string compile(const std::string& src) = 0;
  // What decides the binary besides the source and the compiler: flags and target. Part of every cache key. Needs
  // no compiler: a warm cache runs where none is installed.
  virtual std::string cache_key() = 0;
  // The compiler that would compile now, one line ("" when there is none). Stored with each entry: a hit made by
  // another compiler is rebuilt when this one is present, and taken when there is no compiler at all.
  virtual std::string compiler_id() { return ""; }
  // Whether a binary read from the disk cache may be loaded (the CPU device checks its ELF structure).
  virtual bool plausible_binary(const std::string& binary) { return !binary.empty(); }
  virtual std::string cache_table() const = 0;  // the disk cache folder of this compiler

 private:
  std::mutex mu_;
  std::map<std::string, std::string> memory_;
};

// A loaded kernel. Every kernel has the same C signature:
//   void name(void* const* bufs, const int64_t* vars)
// bufs: the buffer pointers in argument order; vars: the values of the symbolic variables.
class Program {
 public:
  virtual ~Program() = default;
  virtual void operator()(void* const* bufs, const int64_t* vars) = 0;
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
  virtual void synchronize() {}

 private:
  std::string name_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Program>> programs_;
};

// The device called `name` ("CPU", case-insensitive; "CLANG" is an alias). Throws tg::DeviceError for an unknown one.
Device& get_device(const std::string& name);
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
