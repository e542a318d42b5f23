// Composite methods with a gradient rule of their own, rather than the chain rule through the primitives they are
// built from: a CUSTOM_GRAD node whose value is src 0 (the composite), whose other sources are the method's inputs,
// and whose arg is {rule, parameters...}. The scheduler sees only src 0; autograd calls the rule. A convolution
// differentiates as convolutions, a large matmul as matmuls; pow as PyTorch's formulas, which stay right at its
// special points (0, 1, inf, negative bases) where the chain through exp2(e * log2|b|) gives NaN; clip, hardtanh and
// hardswish with PyTorch's one-sided derivatives at their bounds, and 0 (not 0 * inf) where their discarded pieces
// overflow; binary_crossentropy as PyTorch's, finite where its clamped logs' chain gives 0 * inf; softmax as
// PyTorch's y (g - sum(g y)), exactly 0 where g is constant along the axis (the chain leaves rounding noise).
#pragma once
#include "tensor/tensor_impl.h"

namespace tg::tensor {

enum class GradRule : int64_t { conv = 0, pow = 1, clamp = 2, hardswish = 3, unpool = 4, stored_permuted = 5, matmul = 6, bce = 7, softmax = 8 };

// value, differentiated by `rule` with respect to `inputs` (value itself unchanged; under NoGradGuard or for a
// non-float value, value as it is)
Tensor with_gradient_rule(const Tensor& value, GradRule rule, const std::vector<Tensor>& inputs,
                          std::vector<int64_t> params = {});
// The node's source i as a tensor (for the rules).
Tensor source_of(const uop::UOp& u, size_t i);
// The gradients of a CUSTOM_GRAD node's sources given its gradient g (none for src 0).
std::vector<Tensor> custom_gradient(const uop::UOp& u, const Tensor& g);

// The rules, beside their methods. params: the arg after the rule's id.
std::vector<Tensor> conv_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // conv.cpp
std::vector<Tensor> unpool_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // conv.cpp
std::vector<Tensor> stored_permuted_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // conv.cpp
std::vector<Tensor> matmul_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // linalg.cpp
std::vector<Tensor> pow_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);   // math.cpp
std::vector<Tensor> clamp_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params); // math.cpp
std::vector<Tensor> hardswish_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // activation.cpp
std::vector<Tensor> bce_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // loss.cpp
std::vector<Tensor> softmax_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params);  // reduce.cpp

}  // namespace tg::tensor
