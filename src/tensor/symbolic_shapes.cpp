// The movement methods and broadcasting over symbolic sizes (a dimension shrunk to a bound Variable). Sizes compare
// as canonical expressions; a check that holds for some values of the variables and not others is made at their
// bound values, as tinygrad's resolve() does: x.shrink({{0, p}}) of a 10-row x is legal while p is bound to 10 or
// less, and a bind past that raises here, not in a kernel.
#include "tensor/tensor_impl.h"
#include "uop/sint.h"

namespace tg::tensor {

using uop::Ops;
using uop::UOp;

namespace {

Dim product(const std::vector<Dim>& s) {
  Dim p = 1;
  for (const Dim& d : s) p *= d;
  return p;
}

Tensor moved(const Tensor& t, Ops op, std::vector<Dim> arg, SourceLocation where) {
  return wrap(movement(op, t.uop(), std::move(arg)), t.device(), where);
}

}  // namespace

Tensor symbolic_reshape(const Tensor& t, std::vector<Dim> sizes, SourceLocation where) {
  std::vector<Dim> old = t.sym_shape();
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == Dim(keep_dim)) {
      if (i >= old.size())
        throw ShapeError("reshape", "keep_dim at position " + std::to_string(i) + " of a new shape for " + uop::dims_str(old) +
                                        ", which has no dimension there", where);
      sizes[i] = old[i];
    } else if (!sizes[i].is_symbolic() && sizes[i].min() < 0) {
      throw ShapeError("reshape", "reshape of " + uop::dims_str(old) + " to " + uop::dims_str(sizes) +
                                      ": a symbolic shape takes every size explicitly (no -1)", where);
    }
  }
  if (!provably_equal(product(old), product(sizes)))
    throw ShapeError("reshape", "cannot reshape " + uop::dims_str(old) + " to " + uop::dims_str(sizes) +
                                    " (the element counts differ)", where);
  if (sizes == old) return t;
  return moved(t, Ops::RESHAPE, std::move(sizes), where);
}

Tensor symbolic_expand(const Tensor& t, std::vector<Dim> sizes, SourceLocation where) {
  std::vector<Dim> old = t.sym_shape();
  if (sizes.size() < old.size())
    throw ShapeError("expand", "cannot expand " + uop::dims_str(old) + " to fewer dimensions " + uop::dims_str(sizes), where);
  size_t lead = sizes.size() - old.size();
  std::vector<Dim> padded(lead, Dim(1));
  padded.insert(padded.end(), old.begin(), old.end());
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == Dim(-1)) {
      if (i < lead) throw ShapeError("expand", "-1 is not allowed for a new dimension in " + uop::dims_str(sizes), where);
      sizes[i] = padded[i];
    }
    if (!(sizes[i] == padded[i]) && !(padded[i] == Dim(1)))
      throw ShapeError("expand", "cannot expand " + uop::dims_str(old) + " to " + uop::dims_str(sizes) +
                                     " (only dimensions of size 1 expand)", where);
    if (!sizes[i].is_symbolic() && sizes[i].min() < 0)
      throw ShapeError("expand", "negative dimension in " + uop::dims_str(sizes), where);
  }
  Tensor x = padded == old ? t : moved(t, Ops::RESHAPE, padded, where);
  return sizes == padded ? x : moved(x, Ops::EXPAND, sizes, where);
}

Tensor symbolic_shrink(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& ranges, SourceLocation where) {
  std::vector<Dim> old = t.sym_shape();
  if (ranges.size() != old.size())
    throw ShapeError("shrink", std::to_string(ranges.size()) + " (begin, end) pairs for shape " + uop::dims_str(old), where);
  std::vector<Dim> arg;
  bool identity = true;
  for (size_t i = 0; i < old.size(); i++) {
    const auto& [b, e] = ranges[i];
    if (uop::lt_at_values(b, 0) || uop::lt_at_values(e, b) || uop::lt_at_values(old[i], e))
      throw ShapeError("shrink", "range [" + b.str() + ", " + e.str() + ") does not fit axis " + std::to_string(i) +
                                     " of shape " + uop::dims_str(old) + " (at the variables' bound values)", where);
    // every value in the variables' ranges reads inside the memory: a kernel runs for each of them
    if (b.min() < 0 || e.max() > old[i].max())
      throw ShapeError("shrink", "range [" + b.str() + ", " + e.str() + ") of axis " + std::to_string(i) + " of shape " +
                                     uop::dims_str(old) + " reaches " + std::to_string(e.max()) + " at the variables' largest values, past " +
                                     std::to_string(old[i].max()) + ": declare the Variable with a smaller max", where);
    arg.push_back(b), arg.push_back(e);
    identity = identity && b == Dim(0) && e == old[i];
  }
  return identity ? t : moved(t, Ops::SHRINK, std::move(arg), where);
}

Tensor symbolic_pad(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& grow, double value, SourceLocation where) {
  std::vector<Dim> old = t.sym_shape(), arg;
  if (grow.size() != old.size())
    throw ShapeError("pad", std::to_string(grow.size()) + " (before, after) pairs for shape " + uop::dims_str(old), where);
  bool identity = true;
  for (const auto& [b, a] : grow) {
    if (b.min() < 0 || a.min() < 0)
      throw ShapeError("pad", "padding (" + b.str() + ", " + a.str() + ") of a symbolic shape " + uop::dims_str(old) +
                                  " must be >= 0 for every value of its variables", where);
    arg.push_back(b), arg.push_back(a);
    identity = identity && b == Dim(0) && a == Dim(0);
  }
  if (identity) return t;
  Tensor padded = moved(t, Ops::PAD, arg, where);
  if (value == 0) return padded;
  // the new elements read 0; a padded mask of trues tells them apart
  Tensor mask = moved(const_tensor(true, dtypes::bool_, DimList(old), t.device()), Ops::PAD, arg, where);
  return mask.where(padded, Tensor(value, t.dtype(), t.device(), where), where);
}

Tensor symbolic_cat(const std::vector<Tensor>& tensors, int64_t dim, SourceLocation where) {
  const Tensor& first = tensors[0];
  int64_t d = normalize_axis(dim, first.ndim(), "cat", where);
  DType dt = first.dtype();
  Dim total = 0;
  for (const Tensor& t : tensors) {
    std::vector<Dim> a = t.sym_shape(), b = first.sym_shape();
    if (a.size() == b.size()) a[static_cast<size_t>(d)] = b[static_cast<size_t>(d)] = 0;
    if (a != b)
      throw ShapeError("cat", "shapes " + uop::dims_str(first.sym_shape()) + " and " + uop::dims_str(t.sym_shape()) +
                                  " differ outside dimension " + std::to_string(d), where);
    if (t.device() != first.device())
      throw ArgumentError("cat", "tensors on different devices: " + first.device() + " and " + t.device(), where);
    dt = least_upper_dtype({dt, t.dtype()});
    total = total + t.sym_shape()[static_cast<size_t>(d)];
  }
  // as Tensor::cat: each piece padded with zeros to the full length along dim, then summed
  Tensor out;
  Dim offset = 0;
  for (const Tensor& t : tensors) {
    Dim size = t.sym_shape()[static_cast<size_t>(d)];
    std::vector<std::pair<Dim, Dim>> p(static_cast<size_t>(t.ndim()), {Dim(0), Dim(0)});
    p[static_cast<size_t>(d)] = {offset, total - offset - size};
    offset = offset + size;
    Tensor piece = symbolic_pad(t.cast(dt, where), p, 0, where);
    out = out.defined() ? (dt.is_bool() ? out.bitwise_or(piece, where) : out.add(piece, where)) : piece;
  }
  return out;
}

std::vector<Dim> symbolic_broadcast_shape(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where) {
  size_t nd = 0;
  for (const Tensor* t : ts) nd = std::max(nd, static_cast<size_t>(t->ndim()));
  std::vector<Dim> out(nd, Dim(1));
  for (const Tensor* t : ts) {
    std::vector<Dim> s = t->sym_shape();
    for (size_t i = 0; i < s.size(); i++) {
      Dim& o = out[nd - s.size() + i];
      if (s[i] == o || s[i] == Dim(1)) continue;
      if (!(o == Dim(1))) {
        std::string shapes;
        for (const Tensor* u : ts) shapes += (shapes.empty() ? "" : " and ") + uop::dims_str(u->sym_shape());
        throw ShapeError(op, "cannot broadcast " + shapes, where);
      }
      o = s[i];
    }
  }
  return out;
}

Tensor symbolic_broadcast_to(const Tensor& t, const std::vector<Dim>& shape) {
  std::vector<Dim> old = t.sym_shape(), padded(shape.size() - old.size(), Dim(1));
  padded.insert(padded.end(), old.begin(), old.end());
  UOp u = t.uop();
  if (padded != old) u = movement(Ops::RESHAPE, u, padded);
  if (padded != shape) u = movement(Ops::EXPAND, u, shape);
  return wrap(u, t.device());
}

}  // namespace tg::tensor
