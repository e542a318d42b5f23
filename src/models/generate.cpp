// Generation: the prompt through forward(), each new token through decode() under TinyJit, and picking the next
// token from the logits on the host (a vocabulary's worth of floats per token).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/models.h"

namespace tg::llm {

namespace {
// the cache allocated, and the last position it holds
int64_t last_position(Transformer& model, int64_t max_context) {
  model.allocate_cache(1, max_context);
  return model.cache_context() - 1;
}
}  // namespace

Generator::Generator(Transformer& model, int64_t max_context, bool jit)
    : model_(model), start_pos_("start_pos", 0, last_position(model, max_context)) {
  if (jit)
    decode_ = std::make_unique<TinyJit<Tensor>>([this](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
      return model_.decode(in[0], in[1], vars[0]).realize();
    });
}

std::vector<float> Generator::prefill(const std::vector<int32_t>& tokens, Loc where) {
  if (tokens.empty()) throw ArgumentError("Generator::prefill", "no tokens", where);
  Tensor t(tokens, {1, static_cast<int64_t>(tokens.size())}, model_.device(), where);
  std::vector<float> logits = model_.forward(t, pos_, true, where).to_vector<float>();
  pos_ += static_cast<int64_t>(tokens.size());
  return logits;
}

std::vector<float> Generator::step(int32_t token, Loc where) {
  if (pos_ >= model_.cache_context())
    throw ArgumentError("Generator::step", "the cache's context of " + std::to_string(model_.cache_context()) + " tokens is full", where);
  Tensor t(std::vector<int32_t>{token}, {1, 1}, model_.device(), where);
  Tensor pos(std::vector<int32_t>{static_cast<int32_t>(pos_)}, {}, model_.device(), where);
  Dim at = start_pos_.bind(pos_, where);
  Tensor logits = decode_ ? (*decode_)({t, pos}, {at}, where) : model_.decode(t, pos, at, where);
  pos_++;
  return logits.to_vector<float>();
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int32_t Sampler::operator()(const std::vector<float>& logits) {
  if (options_.temperature <= 0 || logits.size() < 2) return argmax(logits);
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  size_t keep = options_.top_k > 0 ? std::min<size_t>(static_cast<size_t>(options_.top_k), order.size()) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), by_logit);
  order.resize(keep);
  // softmax of the kept logits / temperature, then the smallest prefix whose probability reaches top_p
  std::vector<double> p(keep);
  double top = logits[order[0]], total = 0;
  for (size_t i = 0; i < keep; i++) total += p[i] = std::exp((logits[order[i]] - top) / options_.temperature);
  if (options_.top_p < 1) {
    double acc = 0;
    size_t n = 0;
    while (n < keep && acc < options_.top_p * total) acc += p[n++];
    p.resize(std::max<size_t>(n, 1));
  }
  std::discrete_distribution<size_t> pick(p.begin(), p.end());
  return order[pick(rng_)];
}

}  // namespace tg::llm
