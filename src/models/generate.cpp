// Generation: the prompt through forward(), each new token through decode() under TinyJit; the next token either
// picked by the caller from the logits brought to the host, or picked on the device (sample.cpp) in the same step.

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

Tensor Generator::feed(const std::vector<int32_t>& tokens, const char* op, Loc where) {
  if (tokens.empty()) throw ArgumentError(op, "no tokens", where);
  if (pos_ + static_cast<int64_t>(tokens.size()) > model_.cache_context())
    throw ArgumentError(op, "the cache's context of " + std::to_string(model_.cache_context()) + " tokens is full" +
                                (pos_ ? " (" + std::to_string(pos_) + " tokens in it, " + std::to_string(tokens.size()) + " more given)" : ""),
                        where);
  return Tensor(tokens, {1, static_cast<int64_t>(tokens.size())}, model_.device(), where);
}

std::vector<float> Generator::prefill(const std::vector<int32_t>& tokens, Loc where) {
  Tensor t = feed(tokens, "Generator::prefill", where);
  std::vector<float> logits = model_.forward(t, pos_, true, where).to_vector<float>();
  pos_ += static_cast<int64_t>(tokens.size());
  return logits;
}

std::vector<float> Generator::step(int32_t token, Loc where) {
  Tensor t = feed({token}, "Generator::step", where);
  Tensor pos(std::vector<int32_t>{static_cast<int32_t>(pos_)}, {}, model_.device(), where);
  Dim at = start_pos_.bind(pos_, where);
  Tensor logits = decode_ ? (*decode_)({t, pos}, {at}, where) : model_.decode(t, pos, at, where);
  pos_++;
  return logits.to_vector<float>();
}

int32_t Generator::next(const std::vector<int32_t>& tokens, Sampler& sampler, Loc where) {
  Tensor t = feed(tokens, "Generator::next", where);
  Tensor u = sampler.draws({1}, model_.device());
  Tensor token;
  if (tokens.size() > 1) {  // a prompt
    token = sampler.pick(model_.forward(t, pos_, true, where).reshape({1, model_.config().vocab_size}), u, where);
  } else {
    Tensor pos(std::vector<int32_t>{static_cast<int32_t>(pos_)}, {}, model_.device(), where);
    Dim at = start_pos_.bind(pos_, where);
    const SamplingOptions& o = sampler.options();
    if (decode_ && (!decode_pick_ || o.temperature != picked_with_.temperature || o.top_k != picked_with_.top_k ||
                    o.top_p != picked_with_.top_p)) {
      picked_with_ = o;
      decode_pick_ = std::make_unique<TinyJit<Tensor>>([this, picker = Sampler(o)](const std::vector<Tensor>& in,
                                                                                   const std::vector<Dim>& vars) {
        return picker.pick(model_.decode(in[0], in[1], vars[0]), in[2]).realize();
      });
    }
    token = decode_ ? (*decode_pick_)({t, pos, u}, {at}, where) : sampler.pick(model_.decode(t, pos, at, where), u, where);
  }
  pos_ += static_cast<int64_t>(tokens.size());
  return token.to_vector<int32_t>()[0];
}

}  // namespace tg::llm
