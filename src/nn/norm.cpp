// Normalization layers: BatchNorm, LayerNorm(2d), RMSNorm, GroupNorm, InstanceNorm.
#include "nn/nn_impl.h"
#include "tensor/helpers.h"
#include "tg/nn.h"

namespace tg::nn {

using detail::if_defined;

namespace {

// per-channel weight and bias (dim 1) applied to x
Tensor channel_affine(const Tensor& x, const Tensor& weight, const Tensor& bias, Loc where) {
  if (!weight.defined()) return x;
  Shape s(x.ndim(), 1);
  s[1] = -1;
  return x.mul(weight.reshape(s, where), where).add(bias.reshape(s, where), where);
}

void check_ndim(const Tensor& x, int64_t at_least, int64_t channels, const char* layer, Loc where) {
  if (x.ndim() < at_least || x.shape()[1] != channels)
    throw ShapeError(layer, "expects (N, " + std::to_string(channels) + ", ...) with at least " + std::to_string(at_least) +
                                " dims, got " + tensor::shape_str(x.shape()), where);
}

}  // namespace

BatchNorm::BatchNorm(int64_t num_features, double eps, bool affine, bool track_running_stats, double momentum)
    : eps(eps), momentum(momentum), track_running_stats(track_running_stats) {
  if (affine) weight = Tensor::ones({num_features}).requires_grad_(), bias = Tensor::zeros({num_features}).requires_grad_();
  running_mean = Tensor::zeros({num_features});
  running_var = Tensor::ones({num_features});
  num_batches_tracked = Tensor::zeros({}, dtypes::int64);  // as PyTorch's and tinygrad's: their checkpoints load
}

void BatchNorm::state(const StateVisitor& v) {
  v("weight", weight), v("bias", bias);
  if (track_running_stats) v("running_mean", running_mean), v("running_var", running_var), v("num_batches_tracked", num_batches_tracked);
}

Tensor BatchNorm::operator()(const Tensor& x, Loc where) try {
  check_ndim(x, 2, running_mean.shape()[0], "BatchNorm", where);
  Tensor mean, var;
  if (track_running_stats && !Tensor::training) {
    mean = running_mean, var = running_var;
  } else {
    std::vector<int64_t> axes{0};
    for (int64_t a = 2; a < x.ndim(); a++) axes.push_back(a);
    Shape s(x.ndim(), 1);
    s[1] = -1;
    if (x.numel() > 0 && x.numel() / x.shape()[1] == 1)  // its variance is 0: every output would be the bias
      throw ShapeError("BatchNorm", "needs more than 1 value per channel when training, got input shape " +
                                           tensor::shape_str(x.shape()), where);
    mean = x.mean(axes, false, where);
    Tensor y = x.sub(mean.detach(where).reshape(s, where), where);  // the variance's gradient ignores the mean's
    var = y.mul(y, where).mean(axes, false, where);
    if (track_running_stats) {
      double n = static_cast<double>(x.numel() / x.shape()[1]);
      running_mean.assign(running_mean * (1 - momentum) + mean.detach(where) * momentum, where);
      running_var.assign(running_var * (1 - momentum) + var.detach(where) * (momentum * n / std::max(n - 1, 1.0)), where);
      num_batches_tracked.assign(num_batches_tracked + 1, where);
    }
  }
  return x.batchnorm(if_defined(weight), if_defined(bias), mean, var.add(eps, where).rsqrt(where), 1, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "BatchNorm", where);
}

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool elementwise_affine) : normalized_shape(normalized_shape), eps(eps) {
  if (elementwise_affine) weight = Tensor::ones(normalized_shape).requires_grad_(), bias = Tensor::zeros(normalized_shape).requires_grad_();
}

Tensor LayerNorm::operator()(const Tensor& x, Loc where) const try {
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  if (x.ndim() < k || Shape(x.shape().end() - k, x.shape().end()) != normalized_shape)
    throw ShapeError("LayerNorm", "the last dims of " + tensor::shape_str(x.shape()) + " must be " + tensor::shape_str(normalized_shape), where);
  std::vector<int64_t> axes;
  for (int64_t a = -k; a < 0; a++) axes.push_back(a);
  Tensor y = x.layernorm(axes, eps, where);
  return weight.defined() ? y.mul(weight, where).add(bias, where) : y;
} catch (const Error& e) {
  tensor::rethrow_in(e, "LayerNorm", where);
}

Tensor LayerNorm2d::operator()(const Tensor& x, Loc where) const try {
  if (x.ndim() != 4) throw ShapeError("LayerNorm2d", "expects (N, C, H, W), got " + tensor::shape_str(x.shape()), where);
  return LayerNorm::operator()(x.permute({0, 2, 3, 1}, where), where).permute({0, 3, 1, 2}, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "LayerNorm2d", where);
}

RMSNorm::RMSNorm(int64_t dim, double eps, bool elementwise_affine) : eps(eps) {
  if (elementwise_affine) weight = Tensor::ones({dim}).requires_grad_();
}

Tensor RMSNorm::operator()(const Tensor& x, Loc where) const try {
  Tensor y = tensor::float_math(x, where, [&](const Tensor& f) { return f.mul(f.square(where).mean(-1, true, where).add(eps, where).rsqrt(where), where); });
  return weight.defined() ? y.mul(weight, where) : y;
} catch (const Error& e) {
  tensor::rethrow_in(e, "RMSNorm", where);
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine) : num_groups(num_groups), eps(eps) {
  if (num_groups <= 0 || num_channels % num_groups)
    throw ArgumentError("GroupNorm", std::to_string(num_channels) + " channels do not split into " + std::to_string(num_groups) + " groups");
  if (affine) weight = Tensor::ones({num_channels}).requires_grad_(), bias = Tensor::zeros({num_channels}).requires_grad_();
}

Tensor GroupNorm::operator()(const Tensor& x, Loc where) const try {
  if (x.ndim() < 2 || x.shape()[1] % num_groups)
    throw ShapeError("GroupNorm", "expects (N, C, ...) with C divisible by " + std::to_string(num_groups) + ", got " + tensor::shape_str(x.shape()), where);
  if (weight.defined()) check_ndim(x, 2, weight.shape()[0], "GroupNorm", where);
  Tensor y = x.reshape({x.shape()[0], num_groups, -1}, where).layernorm(-1, eps, where).reshape(x.shape(), where);
  return channel_affine(y, weight, bias, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "GroupNorm", where);
}

InstanceNorm::InstanceNorm(int64_t num_features, double eps, bool affine) : eps(eps) {
  if (affine) weight = Tensor::ones({num_features}).requires_grad_(), bias = Tensor::zeros({num_features}).requires_grad_();
}

Tensor InstanceNorm::operator()(const Tensor& x, Loc where) const try {
  if (x.ndim() < 3) throw ShapeError("InstanceNorm", "expects (N, C, ...) with at least 3 dims, got " + tensor::shape_str(x.shape()), where);
  if (weight.defined()) check_ndim(x, 3, weight.shape()[0], "InstanceNorm", where);
  Tensor y = x.reshape({x.shape()[0], x.shape()[1], -1}, where).layernorm(-1, eps, where).reshape(x.shape(), where);
  return channel_affine(y, weight, bias, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "InstanceNorm", where);
}

}  // namespace tg::nn
