// Buffer: `size` elements of `dtype` on a device. Memory is taken from the device's allocator on first use and
// given back when the last reference goes away.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tg/dtype.h"

namespace tg::runtime {

class Device;

class Buffer {
 public:
  // Throws tg::DeviceError ("out of memory") when size elements of dtype are more bytes than memory can address.
  Buffer(Device& device, size_t size, DType dtype);
  // A buffer that uses the memory of `base` (at least as large), which it keeps alive (TinyJit's planned memory).
  Buffer(std::shared_ptr<Buffer> base, size_t size, DType dtype);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device() const { return device_; }
  size_t size() const { return size_; }  // elements
  DType dtype() const { return dtype_; }
  size_t nbytes() const { return nbytes_; }
  bool allocated() const { return ptr_ != nullptr; }
  void* ptr();  // allocates on first use

  // Gives the memory back to the allocator: the next use takes memory again, with undefined contents (TinyJit's
  // capture frees an intermediate after its last reader, as a plain realize does). Does nothing to a view of
  // another buffer, to the caller's memory, or to a buffer not yet used.
  void release();

  // Exchanges the memory of two buffers of the same device and size (TinyJit's replay of an updated tensor).
  void swap_memory(Buffer& other);

  // The buffer's contents are the nbytes() bytes at `host` (safe_load: a tensor's bytes in the mapped file), which
  // `keep` keeps valid. On a device whose memory the host addresses, with `host` aligned for the dtype, the buffer
  // is that memory, kept alive by `keep` (a file mapped MAP_PRIVATE and writable: a write copies the page and
  // never reaches the file); elsewhere its first use copies them, and `keep` is dropped then.
  void fill_lazily(const void* host, std::shared_ptr<const void> keep);

  // The buffer is `memory`, owned by the caller (Tensor::from_blob): never freed or written here, and refused by
  // swap_memory. Only before first use, on a device whose memory is host memory.
  void use_external(void* memory);

  void copyin(const void* host, size_t nbytes);  // nbytes must equal this->nbytes()
  // Counts the writes to the contents (copyin, swap_memory, and every kernel launch that writes it calls
  // wrote()), so TinyJit can tell whether a buffer changed since it last read it.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void wrote() { version_.fetch_add(1, std::memory_order_relaxed); }
  bool external() const { return !owned_; }  // the caller's memory (use_external): it may change at any time
  void copyout(void* host, size_t nbytes);

 private:
  Device& device_;
  size_t size_;
  DType dtype_;
  size_t nbytes_;  // size_ * itemsize, checked for overflow when the buffer is made
  void* ptr_ = nullptr;
  std::shared_ptr<Buffer> base_;
  bool owned_ = true;  // false: the caller's memory (use_external)
  const void* lazy_src_ = nullptr;
  std::shared_ptr<const void> lazy_keep_;
  std::shared_ptr<const void> borrowed_;  // keeps ptr_ valid when it is fill_lazily's memory in place
  std::atomic<uint64_t> version_{0};
};

}  // namespace tg::runtime
