#include "codegen/grid.h"

#include <algorithm>
#include <map>

#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

int64_t size_of(const UOp& range) { return const_to_int(range.src(0).const_value()); }

// `ranges` (outermost first, any may be null) as one index `idx` of their product: the innermost is idx % size,
// the next (idx / size) % its size, the outermost takes no modulo (so it alone may have a symbolic size)
void unmerge(const std::vector<UOp>& ranges, const UOp& idx, std::vector<std::pair<UOp, UOp>>& replace) {
  DType dt = idx.dtype();
  int64_t inner = 1;
  size_t first = 0;
  while (first < ranges.size() && !ranges[first]) first++;
  for (size_t i = ranges.size(); i-- > first;) {
    if (!ranges[i]) continue;
    UOp v = inner == 1 ? idx : idx / UOp::const_(dt, inner);
    replace.push_back({ranges[i], i == first ? v : v % UOp::const_(dt, size_of(ranges[i]))});
    if (i > first) inner *= size_of(ranges[i]);
  }
}

}  // namespace

runtime::LaunchDims to_grid(LoweredKernel& k, const runtime::DeviceCaps& caps, const std::string& device,
                            std::array<UOp, 3>* symbolic_global) {
  // per global axis: the RANGE over its groups (or over all of it) and, with a LOCAL opt, the one over its work-items
  std::map<int64_t, std::pair<UOp, UOp>> axes;
  bool locals = false;
  for (const UOp& u : k.sink.toposort()) {
    if (u.op() != Ops::RANGE) continue;
    int64_t a = u.arg().get<int64_t>();
    if (a >= kGroupReduceAxis) continue;  // GROUP's loop over the partial results: a loop in every work-item
    if (a >= kLocalAxis) axes[a - kLocalAxis].second = u, locals = true;
    else if (std::find(k.reduce_axes.begin(), k.reduce_axes.end(), a) == k.reduce_axes.end()) axes[a].first = u;
  }
  std::vector<std::pair<UOp, UOp>> order;  // outermost axis first
  for (const auto& [a, r] : axes) order.push_back(r);
  // a symbolic size (no opt cuts it) is a grid dimension of the launch's size when no modulo needs it: alone in
  // dimension 0 or 1, or outermost in dimension 2; else its loops stay loops in every work-item
  auto symbolic = [](const std::pair<UOp, UOp>& r) { return r.first && !r.first.src(0).is_const(); };
  bool any_symbolic = std::any_of(order.begin(), order.end(), symbolic);
  if (any_symbolic && (!symbolic_global || (order.size() > 3 && std::any_of(order.begin() + 1, order.end() - 2, symbolic))))
    std::erase_if(order, symbolic);
  runtime::LaunchDims dims;
  std::vector<std::pair<UOp, UOp>> replace;
  // grid dimension 0 holds the innermost axis (neighbouring work-items read neighbouring memory), 1 the next, 2 every
  // axis outside those; where dimension 1 or 2 has more work-groups than the device allows there (CUDA: 65535, or
  // work-items where the driver picks the groups), its outermost axes move out to dimension 0, whose limit is 2^31-1
  size_t n = order.size();
  std::array<std::vector<size_t>, 3> parts;  // the axes (positions in `order`) of each grid dimension, outermost first
  for (size_t i = 0; i < n; i++) parts[i + 2 >= n ? n - 1 - i : 2].push_back(i);
  auto groups_of = [&](size_t d) {
    int64_t count = 1;
    for (size_t i : parts[d]) {
      if (symbolic(order[i])) return int64_t{0};  // a symbolic axis stays where it is (see above)
      if (order[i].first) count *= size_of(order[i].first);
      if (!locals && order[i].second) count *= size_of(order[i].second);
    }
    return count;
  };
  for (size_t d : {size_t{2}, size_t{1}})
    while (!parts[d].empty() && groups_of(d) > caps.max_groups[d] && !symbolic(order[parts[d].front()])) {
      parts[0].push_back(parts[d].front());
      parts[d].erase(parts[d].begin());
    }
  std::sort(parts[0].begin(), parts[0].end());
  for (size_t d = 0; d < std::min<size_t>(n, 3); d++) {
    if (parts[d].empty()) continue;
    std::vector<UOp> groups, items;
    int64_t group_count = 1, group_size = 1;
    UOp size_expr;  // a symbolic dimension's work-items: its loop's end times the sizes inside it
    for (size_t i : parts[d]) {
      groups.push_back(order[i].first), items.push_back(order[i].second);
      if (symbolic(order[i])) size_expr = order[i].first.src(0);
      else if (order[i].first) group_count *= size_of(order[i].first);
      if (order[i].second) group_size *= size_of(order[i].second);
    }
    const std::pair<UOp, UOp>& outer = order[parts[d].front()];
    DType dt = (outer.first ? outer.first : outer.second).dtype();
    if (size_expr) {  // its groups' count, and the launch's work-items (the groups times their size)
      size_expr = uop::simplify(size_expr * UOp::const_(dt, group_count));
      group_count = size_expr.vmax();
      (*symbolic_global)[d] = group_size > 1 ? uop::simplify(size_expr * UOp::const_(dt, group_size)) : size_expr;
    }
    int64_t total = group_count * group_size;
    if (total > caps.max_global[d] || group_size > caps.max_local[d] || group_count > caps.max_groups[d])
      throw CompileError(device, "a kernel with " + std::to_string(total) + " work-items (" + std::to_string(group_count) +
                                     " work-groups of " + std::to_string(group_size) + ") in grid dimension " + std::to_string(d) +
                                     ": the device has at most " + std::to_string(caps.max_global[d]) + " (" +
                                     std::to_string(caps.max_groups[d]) + " groups of " + std::to_string(caps.max_local[d]) + ")");
    dims.global[d] = total;
    auto special = [&](const std::string& name, int64_t size) {
      UOp bound = size_expr ? size_expr : UOp::const_(dt, size);  // its range: 0 .. the launch's size - 1
      return UOp::make(Ops::SPECIAL, dt, {bound}, uop::Arg(name + std::to_string(d)));
    };
    if (!locals) {  // one global index per dimension; the driver picks the work-groups
      unmerge(groups, special("idx", total), replace);
      continue;
    }
    dims.local[d] = group_size;
    if (group_count > 1 || size_expr) unmerge(groups, special("gidx", group_count), replace);
    if (group_size > 1) unmerge(items, special("lidx", group_size), replace);
  }
  if (locals) {
    int64_t group = dims.local[0] * dims.local[1] * dims.local[2];
    if (group > caps.max_local_size)
      throw CompileError(device, "work-groups of " + std::to_string(group) + " work-items: the device has at most " +
                                     std::to_string(caps.max_local_size));
    for (int64_t& l : dims.local) l = std::max<int64_t>(l, 1);
  }
  if (!replace.empty()) k.sink = n > 3 ? uop::simplify(k.sink.substitute(replace)) : k.sink.substitute(replace);
  return dims;
}

}  // namespace tg::codegen
