#include "runtime/allocator.h"

#include <cstdlib>
#include <cstring>

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
    throw DeviceError("alloc", "out of memory allocating " + std::to_string(nbytes) + " bytes");
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

void* MallocAllocator::raw_alloc(size_t nbytes) {
  size_t rounded = (nbytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

void MallocAllocator::raw_free(void* ptr, size_t) { std::free(ptr); }

void MallocAllocator::copyin(void* dst, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}
void MallocAllocator::copyout(void* dst, const void* src, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace tg::runtime
