#include "support/golden_grad.h"

#include <cmath>

namespace tg::testing {

std::vector<Tensor> float64_inputs(const GoldenCase& c) {
  std::vector<Tensor> in;
  for (const auto& g : c.inputs) in.push_back(g.dtype.is_float() ? Tensor(g.floats, g.shape).realize() : g.make());
  return in;
}

Tensor loss_weights(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> w(static_cast<size_t>(n));
  for (size_t k = 0; k < w.size(); k++) w[k] = std::sin(1.0 + 0.7 * static_cast<double>(k));
  return Tensor(w, shape).realize();
}

std::string compare_output(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call, double atol,
                           double rtol) {
  std::vector<Tensor> in;
  for (const auto& g : c.inputs) in.push_back(g.make());
  return compare(call(in), c.output, atol, rtol);
}

std::string compare_output(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call) {
  bool half = c.output.dtype == dtypes::float16;
  return compare_output(c, call, half ? 2e-3 : 5e-6, half ? 4e-3 : 1e-3);
}

std::string compare_gradients(const GoldenCase& c, const std::function<Tensor(const std::vector<Tensor>&)>& call,
                              double atol, double rtol) {
  std::vector<Tensor> in = float64_inputs(c);
  Tensor out = call(in);
  std::vector<Tensor> targets;
  for (const auto& [i, want] : c.grads) targets.push_back(in[i]);
  std::vector<Tensor> grads = (out * loss_weights(out.shape())).sum().gradient(targets);
  std::string err;
  size_t t = 0;
  for (const auto& [i, want] : c.grads) {
    std::string e = compare(grads[t++], want, atol, rtol);
    if (!e.empty()) err += "gradient of input " + std::to_string(i) + ": " + e;
  }
  return err;
}

}  // namespace tg::testing
