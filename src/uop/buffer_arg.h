// BUFFER's argument: which buffer (a unique id), how many elements, and the memory itself.
//
// The memory is type-erased here (the runtime's Buffer sits below the schedule, above this layer): a BUFFER node
// owns its memory, so the memory goes back to the allocator when the last node or tensor that refers to it dies.
#pragma once
#include <memory>

#include "uop/uop.h"

namespace tg::uop {

struct BufferArg : ArgExt {
  int64_t id;                    // unique per buffer in this process: two buffers never intern to one node
  int64_t size;                  // elements
  std::shared_ptr<void> memory;  // a runtime::Buffer
  BufferArg(int64_t i, int64_t n, std::shared_ptr<void> m) : id(i), size(n), memory(std::move(m)) {}
  uint64_t hash() const override { return hash_mix(0x42554646ull, static_cast<uint64_t>(id)); }
  bool equals(const ArgExt& other) const override {
    auto* o = dynamic_cast<const BufferArg*>(&other);
    return o && o->id == id;
  }
  std::string repr() const override { return "buffer " + std::to_string(id) + " (" + std::to_string(size) + ")"; }
};

// A fresh id for a new buffer.
int64_t next_buffer_id();
// The BufferArg of a BUFFER node.
const BufferArg& get_buffer_arg(const UOp& u);

}  // namespace tg::uop
