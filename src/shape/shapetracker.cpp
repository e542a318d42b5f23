#include "shape/shapetracker.h"

#include <limits>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "shape/view_arg.h"
#include "uop/arg.h"
#include "uop/sint.h"
#include "uop/symbolic.h"

namespace tg::shape {

using uop::UOp;

ShapeTracker::ShapeTracker(std::vector<View> views) : views_(std::move(views)) {
  if (views_.empty()) throw InternalError("ShapeTracker", "a ShapeTracker needs at least one View");
}

ShapeTracker ShapeTracker::with_top(View v) const {
  std::vector<View> vs = views_;
  vs.back() = std::move(v);
  return ShapeTracker(std::move(vs));
}

ShapeTracker ShapeTracker::reshape(const Shape& new_shape, SourceLocation where) const {
  if (std::optional<View> v = views_.back().reshape(new_shape, where)) return with_top(std::move(*v));
  std::vector<View> vs = views_;
  vs.push_back(View::create(new_shape));
  return ShapeTracker(std::move(vs));
}

ShapeTracker ShapeTracker::permute(const std::vector<int64_t>& order, SourceLocation where) const {
  return with_top(views_.back().permute(order, where));
}
ShapeTracker ShapeTracker::expand(const Shape& new_shape, SourceLocation where) const {
  return with_top(views_.back().expand(new_shape, where));
}
ShapeTracker ShapeTracker::pad(const Ranges& before_after, SourceLocation where) const {
  return with_top(views_.back().pad(before_after, where));
}
ShapeTracker ShapeTracker::shrink(const Ranges& ranges, SourceLocation where) const {
  return with_top(views_.back().shrink(ranges, where));
}
ShapeTracker ShapeTracker::stride(const std::vector<int64_t>& steps, SourceLocation where) const {
  return with_top(views_.back().stride(steps, where));
}
ShapeTracker ShapeTracker::flip(const std::vector<bool>& axes, SourceLocation where) const {
  return with_top(views_.back().flip(axes, where));
}

ShapeTracker ShapeTracker::simplify() const {
  if (views_.size() < 2) return *this;
  // remembered: merging asks the symbolic algebra, and the scheduler asks again for every kernel it builds (the
  // same graph realized in a loop gives the same stacks). Bounded: forgotten wholesale past kMaxRemembered.
  constexpr size_t kMaxRemembered = 1 << 16;
  struct Hash {
    size_t operator()(const ShapeTracker& st) const { return static_cast<size_t>(st.hash()); }
  };
  static std::mutex mu;
  static std::unordered_map<ShapeTracker, ShapeTracker, Hash> remembered;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = remembered.find(*this); it != remembered.end()) return it->second;
  }
  // any adjacent pair that merges, the topmost first, until none does: a pair deep in the stack can merge where the
  // top one cannot (a transpose and the permute that undoes it, under a reshape that merges with neither: a
  // gradient read back through a layout copy), and the merged view may then merge with the one above it
  std::vector<View> vs = views_;
  for (size_t i = vs.size() - 1; i > 0;) {
    std::optional<View> merged = merge_views(vs[i - 1], vs[i]);
    if (!merged) {
      i--;
      continue;
    }
    vs[i - 1] = std::move(*merged);
    vs.erase(vs.begin() + static_cast<std::ptrdiff_t>(i));
    i = vs.size() - 1;
  }
  ShapeTracker out(std::move(vs));
  std::lock_guard<std::mutex> lock(mu);
  if (remembered.size() >= kMaxRemembered) remembered.clear();
  remembered.emplace(*this, out);
  return out;
}

ShapeTracker ShapeTracker::compose(const ShapeTracker& upper) const {
  if (upper.real_size() > size().max())
    throw InternalError("ShapeTracker", "cannot compose " + upper.repr() + " over shape " + shape_str(shape()) +
                                            ": it reads past the " + size().str() + " positions");
  std::vector<View> vs = views_;
  vs.insert(vs.end(), upper.views_.begin(), upper.views_.end());
  return ShapeTracker(std::move(vs));
}

std::vector<UOp> unravel(const Shape& shape, const UOp& idx) {
  std::vector<UOp> out(shape.size());
  size_t outermost = 0;
  while (outermost < shape.size() && shape[outermost] == Dim(1)) outermost++;
  sint inner = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == Dim(1)) {
      out[i] = idx.const_like(int64_t{0});
      continue;
    }
    UOp c = inner == Dim(1) ? idx : idx / uop::to_uop(inner, idx.dtype());
    // the outermost position needs no modulo: a valid flat index is below the product of the sizes
    out[i] = i == outermost ? c : c % uop::to_uop(shape[i], idx.dtype());
    inner *= shape[i];
  }
  return out;
}

std::pair<UOp, UOp> ShapeTracker::to_indexed(const std::vector<UOp>& idxs) const {
  if (idxs.size() != ndim())
    throw InternalError("to_indexed", std::to_string(idxs.size()) + " indices for shape " + shape_str(shape()));
  auto [idx, valid] = views_.back().to_indexed(idxs);
  for (size_t k = views_.size() - 1; k-- > 0;) {
    View v = views_[k].minified();  // fewer dimensions make simpler index math
    auto [below, below_valid] = v.to_indexed(unravel(v.shape, idx));
    idx = below;
    valid = valid & below_valid;
  }
  valid = uop::simplify(valid);
  if (valid.is_const() && !tg::const_to_int(valid.const_value())) return {idx.const_like(int64_t{0}), valid};
  return {uop::simplify(uop::uop_given_valid(valid, uop::simplify(idx))), valid};
}

std::pair<UOp, UOp> ShapeTracker::to_indexed() const {
  DType dt = needs_int64() ? dtypes::int64 : dtypes::int32;
  std::vector<UOp> idxs;
  for (size_t i = 0; i < ndim(); i++) {
    // an empty dimension has no positions; any variable will do, since nothing is read
    int64_t hi = std::max<int64_t>(shape()[i].max() - 1, 0);
    idxs.push_back(UOp::variable("idx" + std::to_string(i), 0, hi, dt));
  }
  return to_indexed(idxs);
}

bool ShapeTracker::needs_int64() const {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  // at the variables' largest magnitudes
  auto most = [](const sint& x) { return std::max(x.max(), -x.min()); };
  for (const View& v : views_) {
    int64_t reach = most(v.offset);
    for (size_t i = 0; i < v.ndim(); i++) reach += most(v.strides[i]) * v.shape[i].max();
    if (reach > kMax || v.size().max() > kMax) return true;
  }
  return false;
}

uint64_t ShapeTracker::hash() const {
  uint64_t h = views_.size();
  for (const View& v : views_) {
    for (const sint& s : v.shape) h = uop::hash_mix(h, s.hash());
    for (const sint& s : v.strides) h = uop::hash_mix(h, s.hash());
    h = uop::hash_mix(h, v.offset.hash());
    if (v.mask)
      for (const auto& [b, e] : *v.mask) h = uop::hash_mix(uop::hash_mix(h, b.hash()), e.hash());
  }
  return h;
}

std::string ShapeTracker::repr() const {
  std::string s = "ShapeTracker(views=(";
  for (size_t i = 0; i < views_.size(); i++) s += (i ? ", " : "") + views_[i].repr();
  return s + (views_.size() == 1 ? ",))" : "))");
}

std::ostream& operator<<(std::ostream& os, const ShapeTracker& st) { return os << st.repr(); }
std::ostream& operator<<(std::ostream& os, const View& v) { return os << v.repr(); }

const ShapeTracker& get_view(const uop::UOp& u) {
  const auto* e = u.arg().get_if<std::shared_ptr<const uop::ArgExt>>();
  const ViewArg* v = e ? dynamic_cast<const ViewArg*>(e->get()) : nullptr;
  if (!v) throw InternalError("VIEW", "argument is not a ShapeTracker: " + u.arg().repr());
  return v->st;
}

}  // namespace tg::shape
