// Running reductions along one axis: cumsum, cumprod, cummax and cummin (with indices), logcumsumexp.
//
// out[k] = reduce over i <= k of x[i]: x is compared against a (k, i) triangle and reduced over i. The (n, n)
// intermediate is never stored (it fuses into the reduce); the work is O(n^2) per row, like tinygrad's pooling form.
#include <cmath>

#include "tensor/tensor_impl.h"

namespace tg {

namespace {

// reduce(x[..., k, i] with the elements after k replaced by fill, the reduction's identity) over i
template <class Reduce>
Tensor running(const Tensor& x, int64_t axis, ConstValue fill, Reduce reduce, const char* name, SourceLocation where) {
  int64_t ax = tensor::normalize_axis(axis, x.ndim(), name, where);
  if (x.ndim() == 0) return x;
  // the axis moved last: (..., n) -> (..., n_k, n_i) with the triangle i <= k
  Tensor xs = x.transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor i = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, x.device(), where);
  Tensor tri = i.reshape({1, n}) <= i.reshape({n, 1});
  Tensor rows = xs.unsqueeze(-2, where);
  return reduce(tri.where(rows, tensor::const_tensor(fill, x.dtype(), {}, x.device()))).transpose(ax, -1, where);
}

}  // namespace

Tensor Tensor::cumsum(int64_t axis, Loc where) const {
  return running(*this, axis, int64_t{0}, [&](const Tensor& t) { return t.sum(-1, false, where); }, "cumsum", where);
}
Tensor Tensor::cumprod(int64_t axis, Loc where) const {
  return running(*this, axis, int64_t{1}, [&](const Tensor& t) { return t.prod(-1, false, where); }, "cumprod", where);
}
namespace {

// (values, indices) of a running max or min: the indices are the last i <= k where x[i] is values[k] (NaN matching
// NaN), found as a max over the same triangle
std::pair<Tensor, Tensor> running_extreme(const Tensor& x, int64_t axis, bool is_max, SourceLocation where) {
  const char* name = is_max ? "cummax" : "cummin";
  int64_t ax = tensor::normalize_axis(axis, x.ndim(), name, where);
  if (x.ndim() == 0) return {x, Tensor::zeros({}, dtypes::int32, x.device(), where)};
  Tensor values = is_max ? running(x, ax, x.dtype().min(), [&](const Tensor& t) { return t.max(-1, false, where); }, name, where)
                         : running(x, ax, x.dtype().max(), [&](const Tensor& t) { return t.min(-1, false, where); }, name, where);
  Tensor xs = x.transpose(ax, -1, where), vs = values.transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor i = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, x.device(), where);
  Tensor row = xs.unsqueeze(-2, where), v = vs.unsqueeze(-1, where);  // (..., 1, n_i) and (..., n_k, 1)
  Tensor hit = row == v;
  if (x.dtype().is_float()) hit = hit | (row.isnan() & v.isnan());
  Tensor tri = i.reshape({1, n}) <= i.reshape({n, 1});
  Tensor index = (tri & hit).where(i.reshape({1, n}), -1).max(-1, false, where);
  return {values, index.transpose(ax, -1, where)};
}

}  // namespace

std::pair<Tensor, Tensor> Tensor::cummax(int64_t axis, Loc where) const { return running_extreme(*this, axis, true, where); }
std::pair<Tensor, Tensor> Tensor::cummin(int64_t axis, Loc where) const { return running_extreme(*this, axis, false, where); }

Tensor Tensor::logcumsumexp(int64_t axis, Loc where) const {
  int64_t ax = tensor::normalize_axis(axis, ndim(), "logcumsumexp", where);
  Tensor x = cast(least_upper_float(dtype()), where);
  if (ndim() == 0 || numel() == 0) return x;
  // out[k] = m[k] + log(sum over i <= k of exp(x[i] - m[k])) with m the running max: every exp is at most 1 and the
  // largest term of each sum is 1, so nothing overflows or vanishes (a shift by the axis max gives log(0) = -inf
  // for early terms far below it). m carries no gradient: the sum's derivative in it is 0. An infinite m shifts by 0
  Tensor m = x.cummax(ax, where).first.detach();
  m = m.isinf().where(0.0, m).transpose(ax, -1, where);
  Tensor xs = x.transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor i = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device(), where);
  Tensor tri = i.reshape({1, n}) <= i.reshape({n, 1});
  Tensor terms = tri.where(xs.unsqueeze(-2, where) - m.unsqueeze(-1, where), -INFINITY);
  return (terms.exp(where).sum(-1, false, where).log(where) + m).transpose(ax, -1, where);
}

}  // namespace tg
