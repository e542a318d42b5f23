// Small helpers that several layers share, kept at the bottom so that each can call them: the profiler (base),
// the compiler's processes (runtime), the file formats (state).
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tg::base {

// s as a JSON string literal: quotes, backslashes and control characters escaped
std::string json_quote(const std::string& s);
// where temporary files go: $TMPDIR, else /tmp
std::string temp_dir();
// `path` with ".rank<r>" before its extension inside a job of several MPI processes (mpirun sets
// OMPI_COMM_WORLD_RANK and _SIZE; MPICH and Slurm's PMI, PMI_RANK and PMI_SIZE), else `path`: the files that
// PROFILE=1, VIZ=1 and GRAPH=1 write at a fixed place are then one per rank instead of one the ranks overwrite
std::string per_rank(const std::string& path);

// the SHA-256 digest of n bytes (FIPS 180-4)
std::array<unsigned char, 32> sha256(const void* data, size_t n);

// a count that changes whenever a tg::Context begins or ends: a parsed setting is cached against it
uint64_t context_generation();

// An integer setting read where it is hot (each kernel launch): tg::getenv_int's value, read again only after a
// Context begins or ends. Declare it static at the call site: `static base::IntSetting debug("DEBUG");`.
class IntSetting {
 public:
  explicit IntSetting(const char* name, int64_t fallback = 0) : name_(name), fallback_(fallback) {}
  int64_t get() const {
    uint64_t g = context_generation();
    if (g + 1 != seen_.load(std::memory_order_acquire)) {  // seen_ holds generation + 1, so 0 is "never read"
      value_.store(read(), std::memory_order_relaxed);
      seen_.store(g + 1, std::memory_order_release);
    }
    return value_.load(std::memory_order_relaxed);
  }

 private:
  int64_t read() const;
  const char* name_;
  int64_t fallback_;
  mutable std::atomic<uint64_t> seen_{0};
  mutable std::atomic<int64_t> value_{0};
};

}  // namespace tg::base
