// View: the canonical form, the movement ops other than reshape, and index expressions.
#include "shape/view.h"

#include <algorithm>
#include <sstream>

#include "uop/sint.h"

namespace tg::shape {

using uop::UOp;
using uop::lt_at_values;
using uop::provably_lt;

// A 0 anywhere makes the product 0 before any other factor is multiplied in: (0, 2^40, 2^40) is a legal empty shape
// whose other dims would overflow.
sint prod(const Shape& shape) {
  if (std::find(shape.begin(), shape.end(), Dim(0)) != shape.end()) return 0;
  sint p = 1;
  for (const sint& s : shape) p *= s;
  return p;
}

int64_t prod(const std::vector<int64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t p = 1;
  for (int64_t s : shape) p *= s;
  return p;
}

Shape dims(const std::vector<int64_t>& ints) { return Shape(ints.begin(), ints.end()); }
std::vector<int64_t> ints(const Shape& shape, const char* op) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const sint& s : shape) out.push_back(s.concrete(op));
  return out;
}
bool is_symbolic(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](const sint& s) { return s.is_symbolic(); });
}

Shape strides_for_shape(const Shape& shape) {
  Shape st(shape.size(), 0);
  if (prod(shape) == Dim(0)) return st;  // an empty view reads nothing (View::create zeroes them too)
  sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = shape[i] == 1 ? 0 : acc;
    acc *= shape[i];
  }
  return st;
}

std::string shape_str(const std::vector<int64_t>& shape) { return shape_str(dims(shape)); }
std::string shape_str(const Shape& shape) { return uop::dims_str(shape); }

std::string ranges_str(const Ranges& ranges) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < ranges.size(); i++) os << (i ? ", " : "") << "(" << ranges[i].first << ", " << ranges[i].second << ")";
  os << (ranges.size() == 1 ? ",)" : ")");
  return os.str();
}

View View::create(Shape shape, std::optional<Shape> strides, sint offset, std::optional<Ranges> mask) {
  const size_t n = shape.size();
  Shape st = strides ? std::move(*strides) : strides_for_shape(shape);
  for (size_t i = 0; i < n; i++)
    if (shape[i] == 1) st[i] = 0;
  // an empty view reads nothing: its strides, offset and mask mean nothing either
  if (std::find(shape.begin(), shape.end(), Dim(0)) != shape.end()) return View{std::move(shape), Shape(n, 0), 0, std::nullopt, true};
  if (mask) {
    Ranges& m = *mask;
    if (std::any_of(m.begin(), m.end(), [](const auto& r) { return resolve_lt(r.first, r.second) == std::optional<bool>(false); }))
      return View{std::move(shape), Shape(n, 0), 0, Ranges(n, {0, 0}), false};
    // a dimension masked down to one position reads one element: fold it into the offset
    for (size_t i = 0; i < n; i++) {
      if (m[i].second - m[i].first == Dim(1) && st[i] != Dim(0)) {
        offset += st[i] * m[i].first;
        st[i] = 0;
      }
    }
    bool full = true;
    for (size_t i = 0; i < n; i++) full = full && m[i].first == Dim(0) && m[i].second == shape[i];
    if (full) mask.reset();
  }
  bool contiguous = offset == Dim(0) && !mask && st == strides_for_shape(shape);
  return View{std::move(shape), std::move(st), offset, std::move(mask), contiguous};
}

// no position valid for any value of the variables (a mask that is empty only for some values keeps its bounds)
bool View::fully_masked() const {
  return mask && std::any_of(mask->begin(), mask->end(), [](const auto& r) { return resolve_lt(r.first, r.second) == std::optional<bool>(false); });
}

namespace {

void check_rank(const char* op, const View& v, size_t got, const std::string& arg, SourceLocation where) {
  if (got != v.ndim())
    throw ShapeError(op, std::string("argument ") + arg + " has " + std::to_string(got) + " entries for the " +
                             std::to_string(v.ndim()) + " dimensions of shape " + shape_str(v.shape),
                     where);
}

// shrink and pad: a window [begin, end) per dimension, which may reach outside the view (pad) or not (shrink)
View resize(const View& v, const Ranges& window, std::optional<Ranges> new_mask) {
  Shape shape;
  sint offset = v.offset;
  for (size_t i = 0; i < v.ndim(); i++) {
    shape.push_back(window[i].second - window[i].first);
    offset += v.strides[i] * window[i].first;
  }
  if (v.mask) {
    // the old mask, moved into the window's coordinates and clipped to it
    Ranges moved;
    for (size_t i = 0; i < v.ndim(); i++) {
      auto clip = [&](const sint& x) { return uop::smin(uop::smax(x - window[i].first, 0), shape[i]); };
      moved.emplace_back(clip((*v.mask)[i].first), clip((*v.mask)[i].second));
    }
    if (new_mask)
      for (size_t i = 0; i < v.ndim(); i++)
        moved[i] = {uop::smax(moved[i].first, (*new_mask)[i].first), uop::smin(moved[i].second, (*new_mask)[i].second)};
    new_mask = std::move(moved);
  }
  return View::create(std::move(shape), v.strides, offset, std::move(new_mask));
}

}  // namespace

View View::permute(const std::vector<int64_t>& order, SourceLocation where) const {
  std::vector<bool> seen(ndim(), false);
  bool ok = order.size() == ndim();
  for (int64_t a : order) {
    ok = ok && a >= 0 && a < static_cast<int64_t>(ndim()) && !seen[a];
    if (ok) seen[a] = true;
  }
  if (!ok)
    throw ShapeError("permute", "order " + shape_str(order) + " is not a permutation of the " + std::to_string(ndim()) +
                                    " axes of shape " + shape_str(shape),
                     where);
  Shape sh, st;
  std::optional<Ranges> m;
  if (mask) m.emplace();
  for (int64_t a : order) {
    sh.push_back(shape[a]);
    st.push_back(strides[a]);
    if (mask) m->push_back((*mask)[a]);
  }
  return create(std::move(sh), std::move(st), offset, std::move(m));
}

View View::expand(const Shape& new_shape, SourceLocation where) const {
  bool ok = new_shape.size() == ndim();
  for (size_t i = 0; ok && i < ndim(); i++) ok = new_shape[i].min() >= 0 && (new_shape[i] == shape[i] || shape[i] == Dim(1));
  if (!ok)
    throw ShapeError("expand", "cannot expand shape " + shape_str(shape) + " to " + shape_str(new_shape) +
                                   ": only dimensions of size 1 can be expanded",
                     where);
  std::optional<Ranges> m = mask;
  // an expanded dimension had size 1, so its mask was all or nothing, and stays so
  if (m)
    for (size_t i = 0; i < ndim(); i++)
      if (shape[i] != new_shape[i]) (*m)[i] = provably_lt((*m)[i].first, (*m)[i].second) ? std::pair<sint, sint>{0, new_shape[i]} : std::pair<sint, sint>{0, 0};
  return create(new_shape, strides, offset, std::move(m));
}

View View::pad(const Ranges& before_after, SourceLocation where) const {
  check_rank("pad", *this, before_after.size(), ranges_str(before_after), where);
  for (const auto& [b, a] : before_after)
    if (b.min() < 0 || a.min() < 0)
      throw ShapeError("pad", "negative padding " + ranges_str(before_after) + " for shape " + shape_str(shape) +
                                  " (use shrink to cut)",
                       where);
  Ranges window, valid;
  for (size_t i = 0; i < ndim(); i++) {
    auto [b, a] = before_after[i];
    window.emplace_back(-b, shape[i] + a);
    valid.emplace_back(b, shape[i] + b);
  }
  return resize(*this, window, std::move(valid));
}

View View::shrink(const Ranges& ranges, SourceLocation where) const {
  check_rank("shrink", *this, ranges.size(), ranges_str(ranges), where);
  for (size_t i = 0; i < ndim(); i++) {
    auto [b, e] = ranges[i];
    if (b.min() < 0 || lt_at_values(shape[i], e) || lt_at_values(e, b))
      throw ShapeError("shrink", "range (" + b.str() + ", " + e.str() + ") of dimension " +
                                     std::to_string(i) + " is " + (lt_at_values(e, b) ? "inverted" : "out of bounds") +
                                     " for shape " + shape_str(shape) + " (ranges " + ranges_str(ranges) + ")",
                       where);
  }
  return resize(*this, ranges, std::nullopt);
}

View View::stride(const std::vector<int64_t>& steps, SourceLocation where) const {
  check_rank("stride", *this, steps.size(), shape_str(steps), where);
  if (std::find(steps.begin(), steps.end(), 0) != steps.end())
    throw ShapeError("stride", "step 0 in " + shape_str(steps) + " for shape " + shape_str(shape), where);
  Shape sh, st;
  sint off = offset;
  std::optional<Ranges> m;
  if (mask) m.emplace();
  for (size_t i = 0; i < ndim(); i++) {
    sint s = shape[i];
    int64_t step = steps[i], k = step < 0 ? -step : step;
    auto ceil_div = [k](const sint& x) { return (x + (k - 1)).idiv(k); };
    sh.push_back(ceil_div(s));
    st.push_back(strides[i] * step);
    if (step < 0 && s != Dim(0)) off += (s - 1) * strides[i];  // a backward walk starts at the last position
    if (mask) {
      auto [b, e] = (*mask)[i];
      m->push_back(step > 0 ? std::pair<sint, sint>{ceil_div(b), ceil_div(e)} : std::pair<sint, sint>{ceil_div(s - e), ceil_div(s - b)});
    }
  }
  return create(std::move(sh), std::move(st), off, std::move(m));
}

View View::flip(const std::vector<bool>& axes, SourceLocation where) const {
  check_rank("flip", *this, axes.size(), std::to_string(axes.size()) + " flags", where);
  std::vector<int64_t> steps;
  for (bool f : axes) steps.push_back(f ? -1 : 1);
  return stride(steps, where);
}

std::pair<UOp, UOp> View::to_indexed(const std::vector<UOp>& idxs) const {
  DType dt = idxs.empty() ? dtypes::int32 : idxs[0].dtype().scalar();
  if (fully_masked()) return {UOp::const_(dt, 0), UOp::const_(dtypes::bool_, false)};
  UOp idx = uop::to_uop(offset, dt);
  UOp valid;
  auto conj = [&valid](const UOp& c) { valid = valid ? (valid & c) : c; };
  for (size_t i = 0; i < ndim(); i++) {
    if (shape[i] != Dim(1) && strides[i] != Dim(0)) idx = idx + idxs[i] * uop::to_uop(strides[i], dt);
    if (!mask) continue;
    const auto& [b, e] = (*mask)[i];
    if (b.max() > 0) conj(idxs[i].lt(uop::to_uop(b, dt)).logical_not());
    if (e != shape[i]) conj(idxs[i].lt(uop::to_uop(e, dt)));
  }
  return {idx, valid ? valid : UOp::const_(dtypes::bool_, true)};
}

int64_t View::max_extent() const {
  if (size() == Dim(0) || fully_masked()) return 0;
  sint hi = offset;
  for (size_t i = 0; i < ndim(); i++) {
    auto [b, e] = mask ? (*mask)[i] : std::pair<sint, sint>{0, shape[i]};
    hi += strides[i].min() >= 0 ? strides[i] * (e - 1) : strides[i] * b;
  }
  return hi.max() + 1;
}

std::string View::repr() const {
  return "View(shape=" + shape_str(shape) + ", strides=" + shape_str(strides) + ", offset=" + offset.str() +
         ", mask=" + (mask ? ranges_str(*mask) : "None") + ", contiguous=" + (contiguous ? "True" : "False") + ")";
}

}  // namespace tg::shape
