// Generation: the prompt through decode_chunk() in chunks, each new token through decode(), both under TinyJit; the
// next token either picked by the caller from the logits brought to the host, or picked on the device (sample.cpp)
// in the same step.

#include <algorithm>

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
  const int64_t context = model.cache_context();
  std::vector<int64_t> lengths;
  if (context >= 2 * kLongPromptChunk) lengths.push_back(kLongPromptChunk);
  lengths.push_back(std::max<int64_t>(1, std::min(kPromptChunk, context / 2)));
  if (lengths.back() > kShortPromptChunk) lengths.push_back(kShortPromptChunk);
  for (int64_t n : lengths) {
    const char* name = n == kLongPromptChunk ? "long_chunk_start" : n == kShortPromptChunk ? "short_chunk_start" : "chunk_start";
    chunks_.push_back({n, Variable(name, 0, context - n), nullptr});
    if (jit)
      chunks_.back().jit = std::make_unique<TinyJit<Tensor>>([this](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
        return model_.decode_chunk(in[0], in[1], vars[0], in[2]).realize();
      });
  }
  if (!jit) return;
  decode_ = std::make_unique<TinyJit<Tensor>>([this](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
    return model_.decode(in[0], in[1], vars[0]).realize();
  });
}

void Generator::check_room(size_t n, const char* op, Loc where) const {
  if (n == 0) throw ArgumentError(op, "no tokens", where);
  if (pos_ + static_cast<int64_t>(n) > model_.cache_context())
    throw ArgumentError(op, "the cache's context of " + std::to_string(model_.cache_context()) + " tokens is full" +
                                (pos_ ? " (" + std::to_string(pos_) + " tokens in it, " + std::to_string(n) + " more given)" : ""),
                        where);
}

Generator::StepInputs Generator::step_inputs(int32_t token, const char* op, Loc where) {
  check_room(1, op, where);
  history_.resize(static_cast<size_t>(pos_)), history_.push_back(token);
  return {Tensor(std::vector<int32_t>{token}, {1, 1}, model_.device(), where),
          Tensor(std::vector<int32_t>{static_cast<int32_t>(pos_)}, {}, model_.device(), where), start_pos_.bind(pos_, where)};
}

// The prompt in chunks from pos_: long ones while as many tokens are left, then short ones, the last padded; a chunk
// that would pass the cache's end starts earlier instead, again over tokens already in it (their keys and values
// come out the same).
Tensor Generator::prompt(const std::vector<int32_t>& tokens, const char* op, Loc where) {
  check_room(tokens.size(), op, where);
  history_.resize(static_cast<size_t>(pos_));
  history_.insert(history_.end(), tokens.begin(), tokens.end());
  const int64_t end = pos_ + static_cast<int64_t>(tokens.size()), context = model_.cache_context();
  Tensor logits;
  for (int64_t next = pos_; next < end;) {
    const Chunks& c = *std::find_if(chunks_.begin(), chunks_.end(), [&](const Chunks& k) { return k.length <= end - next || &k == &chunks_.back(); });
    const int64_t n = c.length, start = std::min(next, context - n), stop = std::min(start + n, end);
    std::vector<int32_t> chunk(history_.begin() + start, history_.begin() + stop);
    chunk.resize(static_cast<size_t>(n), 0);
    Tensor t(chunk, {1, n}, model_.device(), where);
    Tensor pos(std::vector<int32_t>{static_cast<int32_t>(start)}, {}, model_.device(), where);
    Tensor last(std::vector<int32_t>{static_cast<int32_t>(stop - 1 - start)}, {}, model_.device(), where);
    if (c.jit && context > n) {
      logits = (*c.jit)({t, pos, last}, {c.start.bind(start, where)}, where);
    } else {  // a context of one chunk has one position for it: a constant, no Variable
      logits = model_.decode_chunk(t, pos, context > n ? c.start.bind(start, where) : Dim(0), last, where);
    }
    next = stop;
  }
  pos_ = end;
  return logits;
}

void Generator::rewind(int64_t position, Loc where) {
  if (position < 0 || position > pos_)
    throw ArgumentError("Generator::rewind", "position " + std::to_string(position) + " is outside the " + std::to_string(pos_) +
                                                 " cached tokens", where);
  pos_ = position;  // the cache past it is written again before a step reads it: steps read positions < pos_ only
  history_.resize(static_cast<size_t>(pos_));
}

std::vector<float> Generator::prefill(const std::vector<int32_t>& tokens, Loc where) {
  return prompt(tokens, "Generator::prefill", where).to_vector<float>();
}

std::vector<float> Generator::step(int32_t token, Loc where) {
  StepInputs in = step_inputs(token, "Generator::step", where);
  Tensor logits = decode_ ? (*decode_)({in.token, in.pos}, {in.at}, where) : model_.decode(in.token, in.pos, in.at, where);
  pos_++;
  return logits.to_vector<float>();
}

int32_t Generator::next(const std::vector<int32_t>& tokens, Sampler& sampler, Loc where) {
  if (tokens.size() != 1) {
    Tensor logits = prompt(tokens, "Generator::next", where);
    return sampler.pick(logits, sampler.draws({1}, model_.device()), where).to_vector<int32_t>()[0];
  }
  StepInputs in = step_inputs(tokens[0], "Generator::next", where);
  Tensor u = sampler.draws({1}, model_.device());
  const SamplingOptions& o = sampler.options();
  if (decode_ && (!decode_pick_ || o.temperature != picked_with_.temperature || o.top_k != picked_with_.top_k ||
                  o.top_p != picked_with_.top_p)) {
    picked_with_ = o;
    decode_pick_ = std::make_unique<TinyJit<Tensor>>([this, picker = Sampler(o)](const std::vector<Tensor>& in,
                                                                                 const std::vector<Dim>& vars) {
      return picker.pick(model_.decode(in[0], in[1], vars[0]), in[2]).realize();
    });
  }
  Tensor token = decode_ ? (*decode_pick_)({in.token, in.pos, u}, {in.at}, where)
                         : sampler.pick(model_.decode(in.token, in.pos, in.at, where), u, where);
  pos_++;
  return token.to_vector<int32_t>()[0];
}

}  // namespace tg::llm
