// Activation functions, as tinygrad defines them (all composed from the primitives).
#include <cmath>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::float_math;

Tensor Tensor::relu(Loc where) const {
  if (dtype().is_bool()) throw DTypeError("relu", "needs a number tensor, not bool", where);
  return (*this > 0).where(*this, zeros_like());
}
Tensor Tensor::relu6(Loc where) const {
  if (dtype().is_bool()) throw DTypeError("relu6", "needs a number tensor, not bool", where);
  return relu(where).minimum(6, where);
}
Tensor Tensor::leaky_relu(double neg_slope, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x < 0).where(x * neg_slope, x); });
}
Tensor Tensor::elu(double alpha, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, (x.exp() - 1.0) * alpha); });
}
Tensor Tensor::celu(double alpha, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return x.maximum(0.0) + ((x / alpha).exp() - 1.0).minimum(0.0) * alpha; });
}
Tensor Tensor::selu(Loc where) const {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, (x.exp() - 1.0) * alpha) * scale; });
}
Tensor Tensor::sigmoid(Loc where) const {
  // 1 / (1 + 2^(-x/ln2))
  return float_math(*this, where, [](const Tensor& x) { return ((x * (-1 / std::log(2.0))).exp2() + 1.0).reciprocal(); });
}
Tensor Tensor::hardsigmoid(double alpha, double beta, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x * alpha + beta).relu().minimum(1.0); });
}
Tensor Tensor::logsigmoid(Loc where) const {
  // -softplus(-x), written so neither side overflows: min(x, 0) - log(1 + exp(-|x|))
  return float_math(*this, where, [](const Tensor& x) { return x.minimum(0.0) - (x.abs().neg().exp() + 1.0).log(); });
}
Tensor Tensor::hardtanh(double min_val, double max_val, Loc where) const { return clip(min_val, max_val, where); }
Tensor Tensor::gelu(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) {
    // 0.5 x (1 + tanh(z)) = x sigmoid(2z): fewer ops, and no 1 + tanh cancelling to nothing for large negative z
    return x * (x * (2 * std::sqrt(2.0 / M_PI)) * (1.0 + x * x * 0.044715)).sigmoid();
  });
}
Tensor Tensor::quick_gelu(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x * (x * 1.702).sigmoid(); });
}
Tensor Tensor::silu(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x * x.sigmoid(); });
}
Tensor Tensor::swish(Loc where) const { return silu(where); }
Tensor Tensor::mish(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x * x.softplus().tanh(); });
}
Tensor Tensor::softplus(double beta, Loc where) const {
  // log(1 + exp(beta x)) / beta, stable for large |x|: max(bx, 0) + log(1 + exp(-|bx|))
  return float_math(*this, where, [&](const Tensor& x) {
    Tensor bx = x * beta;
    return (bx.maximum(0.0) + (bx.abs().neg().exp() + 1.0).log()) / beta;
  });
}
Tensor Tensor::softsign(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x / (x.abs() + 1.0); });
}
Tensor Tensor::hardswish(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x * (x + 3.0).relu6() * (1.0 / 6); });
}

}  // namespace tg
