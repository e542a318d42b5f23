#include "codegen/grid.h"

#include <algorithm>

#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

runtime::LaunchDims to_grid(LoweredKernel& k, const runtime::DeviceCaps& caps, const std::string& device) {
  std::vector<UOp> loops;  // outermost first
  for (const UOp& u : k.sink.toposort())
    if (u.op() == Ops::RANGE &&
        std::find(k.reduce_axes.begin(), k.reduce_axes.end(), u.arg().get<int64_t>()) == k.reduce_axes.end())
      loops.push_back(u);
  std::sort(loops.begin(), loops.end(), [](const UOp& a, const UOp& b) { return a.arg().get<int64_t>() < b.arg().get<int64_t>(); });
  runtime::LaunchDims dims;
  std::vector<std::pair<UOp, UOp>> replace;
  // grid dimension d holds loops [first, last): dimension 0 the innermost loop, 2 everything outside dimension 1
  size_t n = loops.size();
  for (size_t d = 0; d < std::min<size_t>(n, 3); d++) {
    size_t last = n - d, first = d == 2 ? 0 : last - 1;
    int64_t size = 1;
    for (size_t i = first; i < last; i++) size *= const_to_int(loops[i].src(0).const_value());
    if (size > caps.max_global[d])
      throw CompileError(device, "a kernel with " + std::to_string(size) + " work-items in grid dimension " + std::to_string(d) +
                                     " (the device has " + std::to_string(caps.max_global[d]) + ")");
    dims.global[d] = size;
    DType dt = loops[first].dtype();
    UOp idx = UOp::make(Ops::SPECIAL, dt, {UOp::const_(dt, size)}, uop::Arg(std::string("idx") + std::to_string(d)));
    int64_t inner = 1;  // the loops inside loop i in this dimension: idx = ... + loop_i * inner + ...
    for (size_t i = last; i-- > first;) {
      int64_t s = const_to_int(loops[i].src(0).const_value());
      UOp v = inner == 1 ? idx : idx / UOp::const_(dt, inner);
      replace.push_back({loops[i], i == first ? v : v % UOp::const_(dt, s)});
      inner *= s;
    }
  }
  if (!replace.empty()) k.sink = n > 3 ? uop::simplify(k.sink.substitute(replace)) : k.sink.substitute(replace);
  return dims;
}

}  // namespace tg::codegen
