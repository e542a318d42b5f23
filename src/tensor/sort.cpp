// Sorting: sort, argsort, topk, randperm.
//
// Every sort orders (value, index) pairs, so ties keep their original order (stable) and NaN sorts as the largest
// value. Short rows are rank-sorted: each element's position is the number of elements that come before it, in
// O(n^2) work and three kernels. Long rows go through a bitonic network, O(n log^2 n) work in log^2 n steps.
#include <bit>

#include "tensor/tensor_impl.h"

namespace tg {

namespace {

// Rows are rank-sorted while rows * n^2 stays under this; past it the bitonic network, whose cost is mostly its
// log^2 n kernels, is faster (tg_bench sort --rows R --cols C; bench/results/2026-12-03.md).
constexpr double kMostRankSortWork = double(1 << 24);

// "(va, ia) comes before (vb, ib)": smaller (larger when descending) or, for equal values, an earlier index
Tensor comes_before(const Tensor& va, const Tensor& ia, const Tensor& vb, const Tensor& ib, bool descending) {
  Tensor nan_a = va.isnan(), nan_b = vb.isnan();
  Tensor ordered = descending ? (va > vb) | (nan_a & !nan_b) : (va < vb) | (nan_b & !nan_a);
  Tensor same = (va == vb) | (nan_a & nan_b);
  return ordered | (same & (ia < ib));
}

// xs: the rows to sort on its last axis, of length n
std::pair<Tensor, Tensor> rank_sort(const Tensor& xs, bool descending, SourceLocation where) {
  int64_t n = xs.shape().back();
  Tensor xi = xs.unsqueeze(-1, where), xj = xs.unsqueeze(-2, where);  // (..., i, 1) and (..., 1, j)
  Tensor idx = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, xs.device(), where);
  Tensor rank = comes_before(xj, idx.reshape({1, n}), xi, idx.reshape({n, 1}), descending)
                    .sum(-1, false, where).cast(dtypes::int32);  // (..., i)
  // out[k] = x[i] where rank[i] == k
  Tensor hit = rank.unsqueeze(-2, where) == idx.reshape({n, 1});  // (..., k, i)
  Tensor indices = hit.where(idx.reshape({1, n}), 0).sum(-1, false, where).cast(dtypes::int32);
  // a gather, which reads each value as it is (a one-hot sum would turn -0.0 into 0.0)
  return {xs.gather(-1, indices, where), indices};
}

// The rows padded to 2^k and viewed as (..., 2, ..., 2), bit b of a position being dimension -(b+1). Stage s sorts
// blocks of 2^s: first each element of a block's lower half meets its mirror in the upper half, then the halves of
// halves meet as in a half-cleaner. Padding sits at indices >= n and always sorts last.
std::pair<Tensor, Tensor> bitonic_sort(const Tensor& xs, bool descending, SourceLocation where) {
  int64_t n = xs.shape().back(), k = std::bit_width(static_cast<uint64_t>(n - 1));
  int64_t padded = int64_t{1} << k, nd = xs.ndim() - 1 + k;
  Shape flat = xs.shape(), bits = xs.shape();
  flat.back() = padded;
  bits.pop_back();
  bits.insert(bits.end(), static_cast<size_t>(k), 2);
  Tensor v = xs.pad_to(flat, where).reshape(bits, where);
  Tensor i = Tensor::arange(0, static_cast<double>(padded), 1, dtypes::int32, xs.device(), where)
                 .reshape(Shape(static_cast<size_t>(k), 2), where).expand(bits, where);
  auto exchange = [&](int64_t bit, bool mirror) {
    int64_t d = nd - 1 - bit;
    Shape at_d(static_cast<size_t>(nd), 1);
    at_d[d] = 2;
    Tensor first_half = Tensor::arange(0, 2, 1, dtypes::int32, xs.device(), where).reshape(at_d, where) == 0;
    std::vector<int64_t> lower;
    for (int64_t b = 0; b < bit; b++) lower.push_back(nd - 1 - b);
    auto vs = v.split(1, d, where), is = i.split(1, d, where);
    Tensor vb = vs[1], ib = is[1];
    if (mirror && !lower.empty()) vb = vb.flip(lower, where), ib = ib.flip(lower, where);
    Tensor swap = (ib < n) & ((is[0] >= n) | comes_before(vb, ib, vs[0], is[0], descending));
    Tensor v_lo = swap.where(vb, vs[0]), v_hi = swap.where(vs[0], vb);
    Tensor i_lo = swap.where(ib, is[0]), i_hi = swap.where(is[0], ib);
    if (mirror && !lower.empty()) v_hi = v_hi.flip(lower, where), i_hi = i_hi.flip(lower, where);
    // the halves joined by a choice rather than cat's sum, which would turn -0.0 into 0.0
    auto join = [&](const Tensor& lo, const Tensor& hi) { return first_half.where(lo.expand(bits), hi.expand(bits)); };
    // contiguous_backward: the gradient, too, is realized per step, not grown into one expression of all of them
    v = join(v_lo, v_hi).contiguous().contiguous_backward();
    i = join(i_lo, i_hi).contiguous();
  };
  for (int64_t stage = 1; stage <= k; stage++) {
    exchange(stage - 1, true);
    for (int64_t bit = stage - 2; bit >= 0; bit--) exchange(bit, false);
  }
  return {v.reshape(flat, where).shrink_to(xs.shape(), where), i.reshape(flat, where).shrink_to(xs.shape(), where)};
}

}  // namespace

std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, Loc where) const {
  int64_t ax = tensor::normalize_axis(dim, ndim(), "sort", where);
  if (ndim() == 0) return {*this, Tensor(0, dtypes::int32, device(), where)};
  Tensor xs = transpose(ax, -1, where);
  int64_t n = xs.shape().back();
  if (n > (int64_t{1} << 31))
    throw ArgumentError("sort", "rows of " + std::to_string(n) + " elements (shape " + tensor::shape_str(shape()) +
                                    "): the indices are int32, so a row holds at most 2^31", where);
  double rank_work = static_cast<double>(xs.numel()) * static_cast<double>(n);
  auto [values, indices] = rank_work <= kMostRankSortWork ? rank_sort(xs, descending, where) : bitonic_sort(xs, descending, where);
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
