// Sorting: sort, argsort, topk, randperm.
//
// A rank sort: each element's position is the number of elements that come before it (ties broken by index, so it
// is stable), then values and indices are gathered by comparing ranks with an arange. O(n^2) work per sorted row,
// all fused, no data-dependent control flow; tinygrad uses a bitonic network of movement ops instead.
#include "tensor/tensor_impl.h"

namespace tg {

std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, Loc where) const {
  int64_t ax = tensor::normalize_axis(dim, ndim(), "sort", where);
  if (ndim() == 0) return {*this, Tensor(0, dtypes::int32, device(), where)};
  Tensor xs = transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  Tensor xi = xs.unsqueeze(-1, where), xj = xs.unsqueeze(-2, where);  // (..., i, 1) and (..., 1, j)
  // "j sorts before i": smaller (larger when descending) or, for equal values, an earlier index; NaN is the largest
  Tensor nan_i = xi.isnan(), nan_j = xj.isnan();
  Tensor less = descending ? (xj > xi) | (nan_j & !nan_i) : (xj < xi) | (nan_i & !nan_j);
  Tensor same = (xj == xi) | (nan_i & nan_j);
  Tensor idx = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device(), where);
  Tensor earlier = idx.reshape({1, n}) < idx.reshape({n, 1});
  Tensor rank = (less | (same & earlier)).sum(-1, false, where).cast(dtypes::int32);  // (..., i)
  // out[k] = x[i] where rank[i] == k
  Tensor hit = rank.unsqueeze(-2, where) == idx.reshape({n, 1});  // (..., k, i)
  Tensor values = hit.where(xj, xj.zeros_like()).sum(-1, false, where).cast(dtype(), where);
  Tensor indices = hit.where(idx.reshape({1, n}), 0).sum(-1, false, where).cast(dtypes::int32);
  return {values.transpose(ax, -1, where), indices.transpose(ax, -1, where)};
}

Tensor Tensor::argsort(int64_t dim, bool descending, Loc where) const try {
  return sort(dim, descending, where).second;
} catch (const Error& e) {
  tensor::rethrow_in(e, "argsort", where);
}

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted, Loc where) const try {
  int64_t ax = tensor::normalize_axis(dim, ndim(), "topk", where);
  int64_t n = ndim() == 0 ? 1 : shape()[ax];
  if (k < 0 || k > n)
    throw ArgumentError("topk", "k = " + std::to_string(k) + " is out of range for dimension " + std::to_string(ax) +
                                    " of size " + std::to_string(n) + " (shape " + tensor::shape_str(shape()) + ")", where);
  (void)sorted;  // the k results always come sorted
  auto [v, i] = sort(ax, largest, where);
  if (ndim() == 0) return {v, i};
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t d = 0; d < ndim(); d++) keep.push_back({0, d == ax ? k : shape()[d]});
  return {v.shrink(keep, where), i.shrink(keep, where)};
} catch (const Error& e) {
  tensor::rethrow_in(e, "topk", where);
}

Tensor Tensor::randperm(int64_t n, DType dtype, const std::string& device, Loc where) try {
  if (n < 0) throw ArgumentError("randperm", "needs n >= 0, got " + std::to_string(n), where);
  tensor::check_value_dtype(dtype, "randperm", where);
  // the order that sorts n random numbers (stable, so even equal draws give a permutation)
  return rand({n}, dtypes::float32, device, where).argsort(0, false, where).cast(dtype, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "randperm", where);
}

}  // namespace tg
