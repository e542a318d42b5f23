// Allocator: device memory with a cache of freed blocks, so the steady state of a training loop allocates nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tg::runtime {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // A block of at least nbytes; a freed block of the same size is reused first. One the device cannot hold
  // (more than its memory, or refused) is a tg::DeviceError "out of memory: N bytes on CPU", never std::bad_alloc.
  void* alloc(size_t nbytes);
  // Returns the block to the cache (up to cache_limit bytes are kept; beyond that it is released).
  void free(void* ptr, size_t nbytes);
  // Releases every cached block.
  void free_cache();
  virtual void copyin(void* dst, const void* src, size_t nbytes) = 0;   // host -> device
  virtual void copyout(void* dst, const void* src, size_t nbytes) = 0;  // device -> host

  // Whether blocks are host pointers the CPU can read and write (Tensor::from_blob wraps such memory)
  virtual bool host_addressable() const { return false; }

  size_t cached_bytes() const;
  size_t cache_limit = size_t{1} << 30;
  std::string device_name = "device";  // for errors

 protected:
  // The most one block can ever be on this device (an allocation beyond it fails without asking the system).
  virtual size_t capacity() const { return SIZE_MAX; }
  virtual void* raw_alloc(size_t nbytes) = 0;  // nullptr when out of memory
  virtual void raw_free(void* ptr, size_t nbytes) = 0;

 private:
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> cache_;
  size_t cached_ = 0;
};

// Host memory, 64-byte aligned (a cache line; what AVX-512 loads want).
class MallocAllocator : public Allocator {
 public:
  ~MallocAllocator() override { free_cache(); }
  void copyin(void* dst, const void* src, size_t nbytes) override;
  void copyout(void* dst, const void* src, size_t nbytes) override;
  bool host_addressable() const override { return true; }

 protected:
  void* raw_alloc(size_t nbytes) override;
  void raw_free(void* ptr, size_t nbytes) override;
  size_t capacity() const override;  // the machine's memory and swap, or the cgroup's limit when lower
};

}  // namespace tg::runtime
