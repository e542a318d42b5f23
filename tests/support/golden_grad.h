// Checking a golden case's output, and its "grad" lines (PyTorch's float64 input gradients of sum(out * w), w[k] = sin(1 + 0.7 k)
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
// "" when call(the case's inputs) matches the case's output within atol/rtol, else what differs.
std::string compare_output(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call, double atol,
                           double rtol);
// The same with the tolerance of the edge and method goldens: 5e-6 + 1e-3 relative, float16 2e-3 + 4e-3.
std::string compare_output(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call);
// "" when the gradient of sum(call(inputs) * w) for every input with a grad line matches it, else what differs.
std::string compare_gradients(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call,
                              double atol = 1e-5, double rtol = 1e-4);

}  // namespace tg::testing
