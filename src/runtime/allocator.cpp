#include "runtime/allocator.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "tg/counters.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {
std::mutex counters_mu;  // GlobalCounters::mem_used is summed over every device's allocator
void count_in_use(int64_t delta) {
  std::lock_guard<std::mutex> lock(counters_mu);
  GlobalCounters::mem_used += delta;
  if (GlobalCounters::mem_used > GlobalCounters::mem_peak) GlobalCounters::mem_peak = GlobalCounters::mem_used;
}
}  // namespace

void* Allocator::alloc(size_t nbytes) {
  auto oom = [&](const std::string& why) {
    return DeviceError("alloc", "out of memory: " + std::to_string(nbytes) + " bytes on " + device_name + why);
  };
  // larger than the device could ever give: refused before the system is asked (an overcommitting kernel might
  // say yes and kill the process on first touch)
  size_t cap = std::min<size_t>(capacity(), static_cast<size_t>(INT64_MAX));
  if (nbytes > cap) throw oom(" (more than the " + std::to_string(cap) + " bytes it has)");
  count_in_use(static_cast<int64_t>(nbytes));
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(nbytes);
    if (it != cache_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= nbytes;
      return p;
    }
  }
  void* p = raw_alloc(nbytes);
  if (!p) {
    free_cache();  // the cache may be holding what we need
    p = raw_alloc(nbytes);
  }
  if (!p) {
    count_in_use(-static_cast<int64_t>(nbytes));
    throw oom("");
  }
  return p;
}

void Allocator::free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  count_in_use(-static_cast<int64_t>(nbytes));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + nbytes <= cache_limit) {
      cache_[nbytes].push_back(ptr);
      cached_ += nbytes;
      return;
    }
  }
  raw_free(ptr, nbytes);
}

void Allocator::free_cache() {
  std::map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(cache_);
    cached_ = 0;
  }
  for (auto& [n, ps] : blocks)
    for (void* p : ps) raw_free(p, n);
}

size_t Allocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

// A buffer of 2 MiB or more starts on a 2 MiB boundary and asks for transparent huge pages (where the kernel's
// setting is `madvise`, the common default): its first touch then faults once per 2 MiB, not once per 4 KiB. On a
// virtual machine each fault exits to the hypervisor, which makes a first write in 4 KiB pages far slower than one
// in huge pages, and every new activation of a training step or a prompt chunk is such a first write
// (./build/bin/tg_bench mnist_step, bench/llm.sh).
constexpr size_t kHugePage = size_t{2} << 20;

void* MallocAllocator::raw_alloc(size_t nbytes) {
  if (nbytes > SIZE_MAX - kHugePage) return nullptr;  // the rounding below would wrap to a tiny block
  size_t rounded = (nbytes + 63) / 64 * 64;
  if (rounded < kHugePage) return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  void* p = std::aligned_alloc(kHugePage, (rounded + kHugePage - 1) / kHugePage * kHugePage);
  if (p) ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: refused (no THP), the pages are 4 KiB as before
  return p;
}

size_t MallocAllocator::capacity() const {
  static const size_t cap = [] {
    size_t total = SIZE_MAX;
    struct sysinfo si;
    if (::sysinfo(&si) == 0 && si.mem_unit > 0) {
      unsigned __int128 t = (static_cast<unsigned __int128>(si.totalram) + si.totalswap) * si.mem_unit;
      total = t > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(t);
    }
    // a cgroup (v2) limit of this process, when lower: a container's memory
    std::ifstream cg("/proc/self/cgroup");
    std::string line;
    while (std::getline(cg, line))
      if (line.rfind("0::", 0) == 0) {
        std::ifstream f("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
        unsigned long long limit = 0;
        if (f >> limit && limit > 0 && limit < total) total = static_cast<size_t>(limit);
      }
    return total;
  }();
  return cap;
}

void MallocAllocator::raw_free(void* ptr, size_t) { std::free(ptr); }

void MallocAllocator::copyin(void* dst, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}
void MallocAllocator::copyout(void* dst, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace tg::runtime
