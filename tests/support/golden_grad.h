// Checking a golden case's "grad" lines (PyTorch's float64 input gradients of sum(out * w), w[k] = sin(1 + 0.7 k)
// over the flat output; see tools/golden_common.py) against our gradient() of the same call.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "support/golden.h"

namespace tg::testing {

// The case's inputs as realized tensors, float ones as float64 (the precision of the reference gradients).
std::vector<Tensor> float64_inputs(const GoldenCase& c);
// w[k] = sin(1 + 0.7 k) in float64, in the given shape.
Tensor loss_weights(const Shape& shape);
// "" when the gradient of sum(call(inputs) * w) for every input with a grad line matches it, else what differs.
std::string compare_gradients(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call,
                              double atol = 1e-5, double rtol = 1e-4);

}  // namespace tg::testing
