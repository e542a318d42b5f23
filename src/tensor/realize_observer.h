// TinyJit's view of what a capture realizes (src/jit/jit.cpp).
#pragma once
#include <unordered_set>

#include "uop/uop.h"

namespace tg::detail {

// While a RealizeObserver lives on this thread, realize_graphs also adds every node of the graphs it realizes to
// `nodes`: a TinyJit's capture tells from them which lazy tensors the function computed from their graphs. Only
// the addresses are kept (holding the graphs would keep their buffers from going back to the allocator): compare
// them with nodes that stayed alive throughout.
class RealizeObserver {
 public:
  explicit RealizeObserver(std::unordered_set<const uop::UOpNode*>& nodes);
  ~RealizeObserver();
  RealizeObserver(const RealizeObserver&) = delete;
  RealizeObserver& operator=(const RealizeObserver&) = delete;

 private:
  std::unordered_set<const uop::UOpNode*>* outer_;
};

}  // namespace tg::detail
