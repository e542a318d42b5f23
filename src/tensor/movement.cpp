// Movement ops: validated here, zero copy below (the scheduler turns them into ShapeTracker VIEWs).
#include <algorithm>
#include <atomic>

#include "runtime/device.h"
#include "schedule/grouping.h"
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::list_str;
using tensor::normalize_axis;
using tensor::shape_str;
using uop::Ops;
using uop::UOp;

namespace {

Tensor move(const Tensor& t, Ops op, std::vector<int64_t> arg, SourceLocation where) {
  return tensor::wrap(tensor::movement(op, t.uop(), std::move(arg)), t.device(), where);
}

}  // namespace

namespace tensor {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op, SourceLocation where) {
  // a 0-d tensor accepts axis 0 and -1, as numpy does for reductions
  int64_t n = std::max<int64_t>(ndim, 1);
  if (axis < -n || axis >= n)
    throw ArgumentError(op, "axis " + std::to_string(axis) + " is out of range for " + std::to_string(ndim) + " dimensions", where);
  return axis < 0 ? axis + n : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op, SourceLocation where) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, ndim, op, where);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ArgumentError(op, "axis " + std::to_string(a) + " given twice in " + list_str(axes), where);
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tensor

Tensor Tensor::reshape(const DimList& sizes, Loc where) const {
  if (sizes.is_symbolic() || is_symbolic()) return tensor::symbolic_reshape(*this, sizes.dims(), where);
  Shape given = sizes.ints();
  Shape new_shape = given;  // with each keep_dim resolved to the size it keeps
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] == keep_dim) {
      if (static_cast<int64_t>(i) >= ndim())
        throw ShapeError("reshape", "keep_dim at position " + std::to_string(i) + " of a new shape for " + shape_str(shape()) +
                                        ", which has no dimension there", where);
      new_shape[i] = shape()[i];
    }
  Shape s = new_shape;
  int64_t known = 1, infer = -1;
  bool over = false;  // a product past int64 cannot be this tensor's element count, unless a 0 comes later
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape", "only one dimension can be -1 in " + shape_str(new_shape), where);
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      throw ShapeError("reshape", "negative dimension in " + shape_str(new_shape), where);
    } else if (s[i] == 0) {
      known = 0, over = false;
    } else if (known != 0) {
      over = over || __builtin_mul_overflow(known, s[i], &known);
    }
  }
  if (over) throw ShapeError("reshape", "cannot reshape " + shape_str(shape()) + " to " + shape_str(new_shape), where);
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      throw ShapeError("reshape", "cannot reshape " + shape_str(shape()) + " to " + shape_str(new_shape), where);
    s[infer] = numel() / known;
    known *= s[infer];
  }
  if (known != numel())
    throw ShapeError("reshape", "cannot reshape " + shape_str(shape()) + " (" + std::to_string(numel()) +
                                    " elements) to " + shape_str(new_shape), where);
  if (s == shape()) return *this;
  return move(*this, Ops::RESHAPE, s, where);
}

Tensor Tensor::permute(const std::vector<int64_t>& order, Loc where) const {
  if (static_cast<int64_t>(order.size()) != ndim())
    throw ShapeError("permute", "order " + list_str(order) + " does not fit shape " + shape_str(shape()), where);
  std::vector<int64_t> o;
  for (int64_t a : order) {
    if (a < -ndim() || a >= ndim()) throw ShapeError("permute", "order " + list_str(order) + " is not a permutation of the axes of " + shape_str(shape()), where);
    o.push_back(a < 0 ? a + ndim() : a);
  }
  std::vector<int64_t> sorted = o;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < ndim(); i++)
    if (sorted[i] != i) throw ShapeError("permute", "order " + list_str(order) + " is not a permutation of the axes of " + shape_str(shape()), where);
  bool identity = true;
  for (int64_t i = 0; i < ndim(); i++) identity = identity && o[i] == i;
  return identity ? *this : move(*this, Ops::PERMUTE, o, where);
}

Tensor Tensor::expand(const DimList& sizes, Loc where) const {
  if (sizes.is_symbolic() || is_symbolic()) return tensor::symbolic_expand(*this, sizes.dims(), where);
  Shape new_shape = sizes.ints();
  if (new_shape.size() < shape().size())
    throw ShapeError("expand", "cannot expand " + shape_str(shape()) + " to fewer dimensions " + shape_str(new_shape), where);
  // new leading dimensions first, as broadcasting adds them
  size_t lead = new_shape.size() - shape().size();
  Shape padded(lead, 1), target = new_shape;
  padded.insert(padded.end(), shape().begin(), shape().end());
  for (size_t i = 0; i < target.size(); i++) {
    if (target[i] == -1) {
      if (i < lead) throw ShapeError("expand", "-1 is not allowed for a new dimension in " + shape_str(new_shape), where);
      target[i] = padded[i];
    }
    if (target[i] != padded[i] && padded[i] != 1)
      throw ShapeError("expand", "cannot expand " + shape_str(shape()) + " to " + shape_str(new_shape) +
                                     " (only dimensions of size 1 expand)", where);
    if (target[i] < 0) throw ShapeError("expand", "negative dimension in " + shape_str(new_shape), where);
  }
  UOp u = uop();
  if (padded != shape()) u = tensor::movement(Ops::RESHAPE, u, padded);
  if (target != padded) u = tensor::movement(Ops::EXPAND, u, target);
  return tensor::wrap(u, device(), where);
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value, Loc where) const {
  if (is_symbolic()) {  // negative amounts cut (a shrink), then the padding proper
    if (static_cast<int64_t>(padding.size()) != ndim())
      throw ShapeError("pad", std::to_string(padding.size()) + " (before, after) pairs for shape " + uop::dims_str(sym_shape()), where);
    std::vector<Dim> s = sym_shape();
    std::vector<std::pair<Dim, Dim>> cut, grow;
    for (size_t i = 0; i < s.size(); i++) {
      auto [b, a] = padding[i];
      if (b == INT64_MIN || a == INT64_MIN)  // (its negation, the amount cut, is not an int64)
        throw ShapeError("pad", "padding (" + std::to_string(b) + ", " + std::to_string(a) + ") removes more than axis " +
                                    std::to_string(i) + " of " + uop::dims_str(s) + " holds", where);
      cut.push_back({Dim(std::max<int64_t>(-b, 0)), s[i] - Dim(std::max<int64_t>(-a, 0))});
      grow.push_back({Dim(std::max<int64_t>(b, 0)), Dim(std::max<int64_t>(a, 0))});
    }
    return tensor::symbolic_pad(tensor::symbolic_shrink(*this, cut, where), grow, value, where);
  }
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw ShapeError("pad", std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_str(shape()), where);
  // negative amounts cut: a shrink first, then the padding proper
  std::vector<std::pair<int64_t, int64_t>> cut, grow;
  bool any_cut = false, any_grow = false;
  for (int64_t i = 0; i < ndim(); i++) {
    auto [b, a] = padding[i];
    // in 128 bits: any int64 amounts are legal arguments; the size they give is checked when the tensor is made
    __int128 begin = b < 0 ? -static_cast<__int128>(b) : 0, end = shape()[i] - (a < 0 ? -static_cast<__int128>(a) : 0);
    if (begin > end || static_cast<__int128>(shape()[i]) + std::max<int64_t>(b, 0) + std::max<int64_t>(a, 0) > INT64_MAX)
      throw ShapeError("pad", "padding (" + std::to_string(b) + ", " + std::to_string(a) + ") " +
                                  (begin > end ? "removes more than the " : "is too large for the ") +
                                  std::to_string(shape()[i]) + " elements of axis " + std::to_string(i), where);
    cut.push_back({static_cast<int64_t>(begin), static_cast<int64_t>(end)});
    grow.push_back({std::max<int64_t>(b, 0), std::max<int64_t>(a, 0)});
    any_cut = any_cut || begin != 0 || end != shape()[i];
    any_grow = any_grow || grow.back().first || grow.back().second;
  }
  Tensor x = any_cut ? shrink(cut, where) : *this;
  if (!any_grow) return x;
  std::vector<int64_t> arg;
  for (auto [b, a] : grow) arg.push_back(b), arg.push_back(a);
  Tensor padded = move(x, Ops::PAD, arg, where);
  if (value == 0 && !std::signbit(value)) return padded;
  // the new elements read 0; a padded mask of trues tells them apart
  Tensor mask = move(tensor::const_tensor(true, dtypes::bool_, x.shape(), device()), Ops::PAD, arg, where);
  return mask.where(padded, Tensor(value, dtype(), device(), where), where);
}

Tensor Tensor::shrink(const DimRanges& given, Loc where) const {
  if (given.is_symbolic() || is_symbolic()) return tensor::symbolic_shrink(*this, given.pairs(), where);
  std::vector<std::pair<int64_t, int64_t>> ranges = given.ints();
  if (static_cast<int64_t>(ranges.size()) != ndim())
    throw ShapeError("shrink", std::to_string(ranges.size()) + " (begin, end) pairs for shape " + shape_str(shape()), where);
  std::vector<int64_t> arg;
  bool identity = true;
  for (int64_t i = 0; i < ndim(); i++) {
    auto [b, e] = ranges[i];
    if (b < 0 || e < b || e > shape()[i])
      throw ShapeError("shrink", "range [" + std::to_string(b) + ", " + std::to_string(e) + ") does not fit axis " +
                                     std::to_string(i) + " of shape " + shape_str(shape()), where);
    arg.push_back(b), arg.push_back(e);
    identity = identity && b == 0 && e == shape()[i];
  }
  return identity ? *this : move(*this, Ops::SHRINK, arg, where);
}

Tensor Tensor::flip(Axes axes, Loc where) const {
  std::vector<int64_t> ax = tensor::normalize_axes(axes.resolve(ndim()), ndim(), "flip", where), arg(ndim(), 0);
  if (ndim() == 0) return *this;
  for (int64_t a : ax) arg[a] = 1;
  return ax.empty() ? *this : move(*this, Ops::FLIP, arg, where);
}

Tensor Tensor::contiguous_backward(Loc where) const {
  return tensor::wrap(UOp::make(Ops::CONTIGUOUS_BACKWARD, dtype(), {uop()}), device(), where);
}

Tensor Tensor::contiguous(Loc where) const {
  if (schedule::plain_buffer(uop())) return *this;
  return tensor::wrap(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}), device(), where);
}

Tensor Tensor::to(const std::string& dev, Loc where) const {
  std::string d = tensor::resolve_device(dev, "to", where);  // "" is the default device; "A,B" several (shard.cpp)
  if (d == device()) return *this;
  Tensor out = tensor::wrap(UOp::make(Ops::COPY, dtype(), {uop(), tensor::device_uop(d)}), d, where);
  if (requires_grad()) out.requires_grad_();  // as tinygrad: a model moved to another device trains there
  return out;
}

Tensor Tensor::clone(Loc where) const {
  // an arg: a buffer of its own, never the buffer of the value it copies (which contiguous() may share). A new one
  // per call: nodes are interned, so two clones of x made with one arg would be one node, and autograd, which finds
  // a tensor by its node, gave x.clone().requires_grad_() the gradient of every other clone of x (tinygrad's clone
  // stores into a new buffer: two clones are two tensors)
  static std::atomic<int64_t> clones{0};
  return tensor::wrap(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}, uop::Arg(++clones)), device(), where);
}

}  // namespace tg
