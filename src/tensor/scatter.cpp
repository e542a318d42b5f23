// gather, scatter and scatter_reduce along one dimension, by one-hot comparison with an arange.
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

namespace {

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// index must have x's ndim and no larger size than `limit` outside dim
void check_index(const Tensor& x, int64_t dim, const Tensor& index, const Tensor* src, const char* op, SourceLocation where) {
  if (!index.dtype().is_int()) throw DTypeError(op, "index must be an integer tensor, not " + index.dtype().name(), where);
  if (src && src->dtype() != x.dtype())  // as PyTorch: no silent cast of the values written
    throw DTypeError(op, "src is " + src->dtype().name() + " but the tensor is " + x.dtype().name() + " (cast src first)", where);
  if (index.ndim() != x.ndim())
    throw ShapeError(op, "index " + shape_str(index.shape()) + " needs the " + std::to_string(x.ndim()) + " dimensions of " +
                             shape_str(x.shape()), where);
  if (src && src->ndim() != x.ndim())
    throw ShapeError(op, "src " + shape_str(src->shape()) + " needs the " + std::to_string(x.ndim()) + " dimensions of " +
                             shape_str(x.shape()), where);
  for (int64_t d = 0; d < x.ndim(); d++) {
    if (d != dim && index.shape()[d] > x.shape()[d])
      throw ShapeError(op, "index " + shape_str(index.shape()) + " is larger than " + shape_str(x.shape()) + " outside dimension " +
                               std::to_string(dim), where);
    if (src && index.shape()[d] > src->shape()[d])
      throw ShapeError(op, "index " + shape_str(index.shape()) + " is larger than src " + shape_str(src->shape()), where);
  }
}

Ranges box_of(const Shape& s) {
  Ranges r;
  for (int64_t d : s) r.push_back({0, d});
  return r;
}

// Aligned views of shape (index.shape with dim -> n, I) where I = index.shape[dim] is last:
// hit[..., m, ..., i] = index[..., i, ...] == m, and src at the same positions.
struct Scattered {
  Tensor hit, src, i;
};
Scattered scattered(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, SourceLocation where) {
  int64_t n = self.shape()[dim];
  Shape target = index.shape();
  target[dim] = n;
  target.push_back(index.shape()[dim]);
  auto moved = [&](const Tensor& t) { return t.unsqueeze(-1, where).transpose(dim, -1, where).expand(target, where); };
  Tensor idx = moved(index.cast(dtypes::int64, where));
  idx = (idx < 0).where(idx + n, idx);
  Shape ar(target.size(), 1);
  ar[dim] = n;
  Tensor m = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64, self.device(), where).reshape(ar, where);
  Shape ii(target.size(), 1);
  ii.back() = target.back();
  Tensor i = Tensor::arange(0, static_cast<double>(target.back()), 1, dtypes::int32, self.device(), where).reshape(ii, where);
  return {idx == m, moved(src.shrink(box_of(index.shape()), where).cast(self.dtype(), where)), i.expand(target, where)};
}


}  // namespace

Tensor Tensor::gather(int64_t dim, const Tensor& index, Loc where) const try {
  int64_t d = tensor::normalize_axis(dim, ndim(), "gather", where);
  check_index(*this, d, index, nullptr, "gather", where);
  if (ndim() == 0) return *this;
  // x restricted to index's sizes outside dim, then out[..., i, ...] = sum_m x[..., m, ...] * (index == m)
  Ranges keep = box_of(index.shape());
  keep[d] = {0, shape()[d]};
  int64_t n = shape()[d];
  Tensor xs = shrink(keep, where).unsqueeze(-1, where).transpose(d, -1, where);  // (..., 1 at d, ..., n)
  Shape full = index.shape();
  full.push_back(n);
  Tensor idx = index.cast(dtypes::int64, where);
  idx = (idx < 0).where(idx + n, idx);
  Tensor hit = idx.unsqueeze(-1, where) == Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64, device(), where);
  return hit.where(xs.expand(full, where), xs.zeros_like().expand(full, where)).sum(-1, false, where).cast(dtype(), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "gather", where);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, Loc where) const try {
  int64_t d = tensor::normalize_axis(dim, ndim(), "scatter", where);
  check_index(*this, d, index, &src, "scatter", where);
  if (ndim() == 0) return src.cast(dtype(), where);
  Scattered s = scattered(*this, d, index, src, where);
  // where indices repeat, the last write (the largest i) wins
  Tensor last = s.hit.where(s.i, -1).max(-1, true, where);
  Tensor chosen = s.hit & (s.i == last);
  Tensor value = chosen.where(s.src, s.src.zeros_like()).sum(-1, false, where).cast(dtype(), where);
  Tensor any = s.hit.any(-1, false, where);
  return any.pad_to(shape(), where).where(value.pad_to(shape(), where), *this, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scatter", where);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, double value, Loc where) const {
  return scatter(dim, index, Tensor(value, dtype(), device(), where).expand(index.shape(), where), where);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce, Loc where) const try {
  if (reduce != "add" && reduce != "multiply")
    throw ArgumentError("scatter", "reduce is \"add\" or \"multiply\", not \"" + reduce + "\"", where);
  return scatter_reduce(dim, index, src, reduce == "add" ? "sum" : "prod", true, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scatter", where);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, double value, const std::string& reduce, Loc where) const {
  return scatter(dim, index, Tensor(value, dtype(), device(), where).expand(index.shape(), where), reduce, where);
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                              bool include_self, Loc where) const try {
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    throw ArgumentError("scatter_reduce", "reduce is one of sum, prod, mean, amax, amin; not \"" + reduce + "\"", where);
  int64_t d = tensor::normalize_axis(dim, ndim(), "scatter_reduce", where);
  check_index(*this, d, index, &src, "scatter_reduce", where);
  if (ndim() == 0) throw ShapeError("scatter_reduce", "needs at least one dimension", where);
  if (index.numel() == 0) return *this;  // nothing is scattered (amin and amax would reduce an empty axis)
  Scattered s = scattered(*this, d, index, src, where);
  Tensor hits = s.hit.any(-1, false, where).pad_to(shape(), where);
  Tensor r, self = *this;
  if (reduce == "sum" || reduce == "mean") {
    r = s.hit.where(s.src, s.src.zeros_like()).sum(-1, false, where);
    if (include_self) r = r.pad_to(shape(), where) + self;
    if (reduce == "mean") {
      Tensor count = s.hit.sum(-1, false, where).pad_to(shape(), where) + (include_self ? 1 : 0);
      r = include_self ? r : r.pad_to(shape(), where);
      r = (r.cast(dtypes::float64) / count.maximum(1).cast(dtypes::float64));
      r = dtype().is_float() ? r : r.floor();  // PyTorch floors integer means
    }
  } else if (reduce == "prod") {
    r = s.hit.where(s.src, s.src.ones_like()).prod(-1, false, where);
    if (include_self) r = r.pad_to(shape(), where) * self;
  } else {
    bool mx = reduce == "amax";
    Tensor far = tensor::const_tensor(mx ? dtype().min() : dtype().max(), dtype(), {}, device());
    Tensor picked = s.hit.where(s.src, far);
    r = mx ? picked.max(-1, false, where) : picked.min(-1, false, where);
    if (include_self) r = mx ? r.pad_to(shape(), where).maximum(self) : r.pad_to(shape(), where).minimum(self);
  }
  if (r.shape() != shape()) r = r.pad_to(shape(), where);
  return hits.where(r.cast(dtype(), where), self, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scatter_reduce", where);
}

}  // namespace tg
