// Running reductions along one axis: cumsum, cumprod, cummax, logcumsumexp.
//
// out[k] = reduce over i <= k of x[i]: x is compared against a (k, i) triangle and reduced over i. The (n, n)
// intermediate is never stored (it fuses into the reduce); the work is O(n^2) per row, like tinygrad's pooling form.
#include "tensor/tensor_impl.h"

namespace tg {

namespace {

enum class Running { sum, prod };

Tensor running(const Tensor& x, int64_t axis, Running kind, const char* name, SourceLocation where) {
  int64_t ax = tensor::normalize_axis(axis, x.ndim(), name, where);
  if (x.ndim() == 0) return x;
  // the axis moved last: (..., n) -> (..., n_k, n_i) with the triangle i <= k
  Tensor xs = x.transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor i = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, x.device(), where);
  Tensor tri = i.reshape({1, n}) <= i.reshape({n, 1});
  Tensor rows = xs.unsqueeze(-2, where);
  Tensor r = kind == Running::sum ? tri.where(rows, rows.zeros_like()).sum(-1, false, where)
                                   : tri.where(rows, rows.ones_like()).prod(-1, false, where);
  return r.transpose(ax, -1, where);
}

}  // namespace

Tensor Tensor::cumsum(int64_t axis, Loc where) const { return running(*this, axis, Running::sum, "cumsum", where); }
Tensor Tensor::cumprod(int64_t axis, Loc where) const { return running(*this, axis, Running::prod, "cumprod", where); }

Tensor Tensor::cummax(int64_t axis, Loc where) const {
  int64_t ax = tensor::normalize_axis(axis, ndim(), "cummax", where);
  if (ndim() == 0) return *this;
  Tensor xs = transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor i = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device(), where);
  Tensor tri = i.reshape({1, n}) <= i.reshape({n, 1});
  Tensor rows = xs.unsqueeze(-2, where);
  // elements after k are replaced by the dtype's lowest value, so they never win
  Tensor lowest = tensor::const_tensor(dtype().min(), dtype(), {}, device());
  return tri.where(rows, lowest).max(-1, false, where).transpose(ax, -1, where);
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
