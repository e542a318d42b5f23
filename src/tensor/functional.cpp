// nn functional ops on the Tensor: dropout, layernorm, batchnorm, scaled_dot_product_attention.
#include <cmath>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

thread_local bool Tensor::training = false;

Tensor Tensor::dropout(double p, Loc where) const {
  if (!(p >= 0 && p <= 1)) throw ArgumentError("dropout", "p must be in [0, 1], got " + std::to_string(p), where);
  if (!training || p == 0) return *this;
  if (p == 1) return zeros_like(std::nullopt, where);
  Tensor keep = Tensor::rand(shape(), dtypes::float32, device(), where) >= p;
  return keep.where(*this * (1.0 / (1.0 - p)), zeros_like());
}

Tensor Tensor::layernorm(Axes axis, double eps, Loc where) const try {
  Tensor y = sub(mean(axis, true, where), where);
  return y.mul(y.square().mean(axis, true, where).add(eps, where).rsqrt(where), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "layernorm", where);
}

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                         const Tensor& invstd, Axes axis, Loc where) const try {
  std::vector<int64_t> ax = tensor::normalize_axes(axis.resolve(ndim()), ndim(), "batchnorm", where);
  // the statistics' shape: this tensor's sizes on `axis`, 1 elsewhere
  Shape s(ndim(), 1);
  for (int64_t a : ax) s[a] = shape()[a];
  auto fit = [&](const Tensor& t, const char* what) {
    if (t.numel() != tensor::prod(s))
      throw ShapeError("batchnorm", std::string(what) + " " + shape_str(t.shape()) + " does not match the " +
                                        tensor::list_str(ax) + " axes of " + shape_str(shape()), where);
    return t.reshape(s, where);
  };
  Tensor x = sub(fit(mean, "mean"), where);
  if (weight) x = x.mul(fit(*weight, "weight"), where);
  x = x.mul(fit(invstd, "invstd"), where);
  return bias ? x.add(fit(*bias, "bias"), where) : x;
} catch (const Error& e) {
  tensor::rethrow_in(e, "batchnorm", where);
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
                                            double dropout_p, bool is_causal, bool enable_gqa, Loc where) const try {
  if (ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    throw ShapeError("scaled_dot_product_attention", "query, key and value need at least 2 dimensions, got " + shape_str(shape()) +
                                                         ", " + shape_str(key.shape()) + ", " + shape_str(value.shape()), where);
  if (is_causal && attn_mask)
    throw ArgumentError("scaled_dot_product_attention", "give attn_mask or is_causal, not both", where);
  Tensor q = cast(least_upper_float(dtype()), where), k = key, v = value;
  if (enable_gqa && ndim() >= 3 && key.ndim() >= 3 && value.ndim() >= 3) {
    // grouped-query attention: each key/value head serves a group of query heads (dimension -3)
    int64_t hq = shape()[ndim() - 3], hk = key.shape()[key.ndim() - 3], hv = value.shape()[value.ndim() - 3];
    if (hk == 0 || hq % hk != 0 || hk != hv)
      throw ShapeError("scaled_dot_product_attention", "enable_gqa: " + std::to_string(hq) + " query heads are not a multiple of " +
                                                           std::to_string(hk) + " key and " + std::to_string(hv) + " value heads", where);
    k = key.repeat_interleave(hq / hk, key.ndim() - 3, where), v = value.repeat_interleave(hq / hk, value.ndim() - 3, where);
  }
  Tensor scores = q.matmul(k.transpose(-1, -2, where), where).div(std::sqrt(static_cast<double>(shape().back())), where);
  int64_t L = shape()[ndim() - 2], S = k.shape()[k.ndim() - 2];
  std::optional<Tensor> mask = attn_mask;
  if (is_causal) mask = Tensor::ones({L, S}, dtypes::bool_, device(), where).tril(0, where);
  if (mask) scores = mask->dtype().is_bool() ? mask->where(scores, -INFINITY) : scores.add(*mask, where);
  return scores.softmax(-1, where).dropout(dropout_p, where).matmul(v, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scaled_dot_product_attention", where);
}

Tensor Tensor::normalize(double p, int64_t dim, double eps, Loc where) const try {
  if (std::isnan(p)) throw ArgumentError("normalize", "p must be a number, got nan", where);
  Tensor x = cast(least_upper_float(dtype()), where);
  tensor::normalize_axis(dim, ndim(), "normalize", where);
  Tensor norm;
  if (p == 0) norm = (x != 0.0).sum(dim, true, where).cast(x.dtype());
  else if (std::isinf(p)) norm = p > 0 ? x.abs().max(dim, true, where) : x.abs().min(dim, true, where);
  else if (p == 1) norm = x.abs().sum(dim, true, where);
  // p = 2 through the squared sum limited by eps^2: for an all-zero row the gradient is 1/eps (PyTorch's), where
  // the square root's would be 0/0
  else if (p == 2) return x * x.square().sum(dim, true, where).clip(eps * eps, std::nullopt, where).rsqrt(where);
  else {  // the root of an all-zero row taken of 1 instead: its gradient there is 0, not 0 * inf (PyTorch's norm)
    Tensor sum = x.abs().pow(p, where).sum(dim, true, where), zero = sum == 0.0;
    norm = zero.where(sum.zeros_like(), zero.where(sum.ones_like(), sum).pow(1.0 / p, where));
  }
  return x / norm.clip(eps, std::nullopt, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "normalize", where);
}

}  // namespace tg
