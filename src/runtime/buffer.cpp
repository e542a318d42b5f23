#include "runtime/buffer.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "runtime/device.h"
#include "tg/error.h"

namespace tg::runtime {

namespace {
// size * itemsize bytes, or a DeviceError when that does not fit in memory's address space
size_t checked_nbytes(const Device& device, size_t size, DType dtype) {
  size_t item = static_cast<size_t>(dtype.itemsize()), bytes = 0;
  if (__builtin_mul_overflow(size, item, &bytes) || bytes > static_cast<size_t>(INT64_MAX))
    throw DeviceError("alloc", "out of memory: " + std::to_string(size) + " elements of " + dtype.name() +
                                   " are more bytes than memory can address, on " + device.name());
  return bytes;
}
}  // namespace

Buffer::Buffer(Device& device, size_t size, DType dtype)
    : device_(device), size_(size), dtype_(dtype), nbytes_(checked_nbytes(device, size, dtype)) {}

Buffer::Buffer(std::shared_ptr<Buffer> base, size_t size, DType dtype)
    : device_(base->device()), size_(size), dtype_(dtype), nbytes_(checked_nbytes(base->device(), size, dtype)),
      base_(std::move(base)) {
  if (nbytes() > base_->nbytes()) throw InternalError("Buffer", "a view larger than its base buffer");
}

Buffer::~Buffer() {
  if (ptr_ && !base_ && owned_ && !borrowed_) device_.allocator().free(ptr_, nbytes());
}

void* Buffer::ptr() {
  if (ptr_) return ptr_;
  ptr_ = base_ ? base_->ptr() : device_.allocator().alloc(nbytes());
  if (lazy_src_) {
    device_.allocator().copyin(ptr_, lazy_src_, nbytes());
    lazy_src_ = nullptr;
    lazy_keep_.reset();
  }
  return ptr_;
}

void Buffer::release() {
  if (!ptr_ || base_ || !owned_) return;
  if (borrowed_) borrowed_.reset();
  else device_.allocator().free(ptr_, nbytes());
  ptr_ = nullptr;
}

void Buffer::fill_lazily(const void* host, std::shared_ptr<const void> keep) {
  if (ptr_ || base_) throw InternalError("Buffer::fill_lazily", "the buffer is already in use");
  size_t align = static_cast<size_t>(std::max(dtype_.itemsize(), 1));
  if (device_.allocator().host_addressable() && reinterpret_cast<uintptr_t>(host) % align == 0) {
    ptr_ = const_cast<void*>(host);  // the mapping is writable (copy on write): see map_file
    borrowed_ = std::move(keep);
    return;
  }
  lazy_src_ = host;
  lazy_keep_ = std::move(keep);
}

void Buffer::use_external(void* memory) {
  if (ptr_ || base_ || lazy_src_) throw InternalError("Buffer::use_external", "the buffer is already in use");
  ptr_ = memory;
  owned_ = false;
}

void Buffer::swap_memory(Buffer& other) {
  if (&other.device_ != &device_ || other.nbytes() != nbytes() || base_ || other.base_)
    throw InternalError("Buffer::swap_memory", "buffers of different devices or sizes");
  if (!owned_ || !other.owned_) throw InternalError("Buffer::swap_memory", "a buffer over the caller's memory (from_blob)");
  ptr();
  other.ptr();
  std::swap(ptr_, other.ptr_);
  std::swap(borrowed_, other.borrowed_);  // what keeps the memory valid goes with it
  wrote();
  other.wrote();
}

void Buffer::copyin(const void* host, size_t nbytes) {
  if (nbytes != this->nbytes())
    throw InternalError("Buffer::copyin", std::to_string(nbytes) + " bytes into a buffer of " + std::to_string(this->nbytes()));
  device_.allocator().copyin(ptr(), host, nbytes);
  wrote();
}

void Buffer::copyout(void* host, size_t nbytes) {
  if (nbytes != this->nbytes())
    throw InternalError("Buffer::copyout", std::to_string(nbytes) + " bytes from a buffer of " + std::to_string(this->nbytes()));
  device_.allocator().copyout(host, ptr(), nbytes);
}

}  // namespace tg::runtime
