// Running reductions along one axis: cumsum, cumprod, cummax, logcumsumexp.
//
// out[k] = reduce over i <= k of x[i]: x is compared against a (k, i) triangle and reduced over i. The (n, n)
// intermediate is never stored (it fuses into the reduce); the work is O(n^2) per row, like tinygrad's pooling form.
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
Tensor Tensor::cummax(int64_t axis, Loc where) const {
  return running(*this, axis, dtype().min(), [&](const Tensor& t) { return t.max(-1, false, where); }, "cummax", where);
}

Tensor Tensor::logcumsumexp(int64_t axis, Loc where) const {
  int64_t ax = tensor::normalize_axis(axis, ndim(), "logcumsumexp", where);
  if (ndim() == 0 || numel() == 0) return cast(least_upper_float(dtype()), where);
  // shifted by the axis max for range; an all -inf row shifts by 0
  Tensor x = cast(least_upper_float(dtype()), where), m = x.max(ax, true, where);
  m = m.isinf().where(0.0, m);
  return (x - m).exp(where).cumsum(ax, where).log(where) + m;
}

}  // namespace tg
