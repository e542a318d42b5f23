// Activation functions, as tinygrad defines them (all composed from the primitives). Written so their values and
// gradients are PyTorch's across the whole float range: no exp that overflows in a branch where() discards (its
// zero gradient times inf is NaN), sigmoid from exp(-|x|), and at kinks the one-sided derivative PyTorch picks.
#include <cmath>

#include "tensor/custom_grad.h"

namespace tg {

using tensor::float_math;

namespace {

// x where x <= 0, else 0: the input of an exp that only the negative branch uses
Tensor non_positive(const Tensor& x) { return (x > 0).where(x.zeros_like(), x); }

}  // namespace

Tensor Tensor::relu(Loc where) const {
  if (dtype().is_bool()) throw DTypeError("relu", "needs a number tensor, not bool", where);
  return (*this <= 0).where(zeros_like(), *this);  // NaN stays NaN; the gradient at 0 is 0
}
Tensor Tensor::relu6(Loc where) const {
  if (dtype().is_bool()) throw DTypeError("relu6", "needs a number tensor, not bool", where);
  return hardtanh(0, 6, where);
}
Tensor Tensor::leaky_relu(double neg_slope, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, x * neg_slope); });
}
Tensor Tensor::elu(double alpha, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, (non_positive(x).exp() - 1.0) * alpha); });
}
Tensor Tensor::celu(double alpha, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, ((non_positive(x) / alpha).exp() - 1.0) * alpha); });
}
Tensor Tensor::selu(Loc where) const {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return float_math(*this, where, [&](const Tensor& x) { return (x > 0).where(x, (non_positive(x).exp() - 1.0) * alpha) * scale; });
}
Tensor Tensor::sigmoid(Loc where) const {
  // from z = exp(-|x|) in (0, 1]: 1 / (1 + z) for x >= 0, z / (1 + z) below. Neither side overflows, nor does any
  // part of the gradient (1 / (1 + exp(-x)) has exp(1000) = inf inside, and 0 * inf for its gradient)
  return float_math(*this, where, [](const Tensor& x) {
    Tensor up = x >= 0, z = up.where(-x, x).exp(), r = (z + 1.0).reciprocal();
    return up.where(r, z * r);
  });
}
Tensor Tensor::hardsigmoid(double alpha, double beta, Loc where) const {
  return float_math(*this, where, [&](const Tensor& x) { return (x * alpha + beta).hardtanh(0, 1); });
}
Tensor Tensor::logsigmoid(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return -(-x).softplus(); });
}
Tensor Tensor::gelu(const std::string& approximate, Loc where) const {
  if (approximate == "none")  // the exact form, x P(X <= x) for a standard normal X
    return float_math(*this, where, [](const Tensor& x) { return x * 0.5 * ((x * M_SQRT1_2).erf() + 1.0); });
  if (approximate != "tanh")
    throw ArgumentError("gelu", "approximate is \"tanh\" or \"none\", not \"" + approximate + "\"", where);
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
  // log(1 + exp(beta x)) / beta, stable for large |x|: max(bx, 0) + log(1 + exp(-|bx|)), both branches split at
  // the same point so the gradient at 0 is 1/2
  return float_math(*this, where, [&](const Tensor& x) {
    Tensor bx = x * beta, up = bx >= 0;
    return (up.where(bx, 0.0) + (up.where(-bx, bx).exp() + 1.0).log()) / beta;
  });
}
Tensor Tensor::softsign(Loc where) const {
  return float_math(*this, where, [](const Tensor& x) { return x / (x.abs() + 1.0); });
}
Tensor Tensor::hardswish(Loc where) const {
  // PyTorch's formula (NaN at -inf), with its gradient: the chain rule would give 0 at -3 and 3, and NaN at -inf
  return float_math(*this, where, [](const Tensor& x) {
    return tensor::with_gradient_rule(x * (x + 3.0).relu6() * (1.0 / 6), tensor::GradRule::hardswish, {x});
  });
}

namespace tensor {

// 0 below -3, (2x + 3) / 6 from -3 up to (not at) 3, 1 from there (PyTorch's hardswish_backward)
std::vector<Tensor> hardswish_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>&) {
  Tensor x = source_of(u, 1);
  Tensor slope = (x < -3.0).where(x.zeros_like(), (x < 3.0).where(x * (1.0 / 3) + 0.5, x.ones_like()));
  return {Tensor(), g * slope};
}

}  // namespace tensor

}  // namespace tg
