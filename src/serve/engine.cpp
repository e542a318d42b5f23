// The conversation engine: the cache kept between turns, generation until a stop, text released as it is final.
#include <algorithm>

#include "base/json.h"
#include "serve/openai.h"
#include "tg/serve.h"

namespace tg::serve {

namespace {

// The length of the longest prefix of `s` that ends on a whole UTF-8 character (a token may end inside one).
size_t complete_utf8(const std::string& s) {
  size_t i = s.size(), back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) i--, back++;
  if (i == 0) return s.size();
  unsigned char lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return back + 1 >= need ? s.size() : i - 1;
}

}  // namespace

Engine::Engine(llm::Transformer& model, text::Tokenizer tokenizer, text::ChatTemplate chat, int64_t max_context, bool jit)
    : model_(model), tokenizer_(std::move(tokenizer)), chat_(std::move(chat)), gen_(model, max_context, jit) {
  stop_ids_ = model.config().eos_token_ids;
  for (const std::string& t : chat_.end_of_turn())
    if (std::optional<int32_t> id = tokenizer_.token_id(t)) stop_ids_.push_back(*id);
}

std::vector<int32_t> Engine::chat_prompt(const std::vector<text::ChatMessage>& messages) const {
  return tokenizer_.encode(chat_.render(messages, true));
}

Outcome Engine::run(const Request& req, const std::function<bool(const std::string&)>& on_text) {
  std::lock_guard turn(turn_);
  const int64_t n = static_cast<int64_t>(req.prompt.size()), context = gen_.max_context();
  if (n == 0) throw ArgumentError("completion", "the prompt is empty");
  if (n >= context)
    throw ArgumentError("completion", "the prompt is " + std::to_string(n) + " tokens, and the context holds " + std::to_string(context) +
                                          " (with room for at least one new token)");
  for (int32_t t : req.prompt)
    if (t < 0 || t >= model_.config().vocab_size) throw ArgumentError("completion", "token " + std::to_string(t) + " is outside the vocabulary");
  try {
    return generate(req, on_text);
  } catch (...) {
    gen_.rewind(0);  // a turn that failed midway leaves no half-written cache for the next one to reuse
    throw;
  }
}

Outcome Engine::generate(const Request& req, const std::function<bool(const std::string&)>& on_text) {
  const int64_t n = static_cast<int64_t>(req.prompt.size()), context = gen_.max_context();
  Outcome out;
  out.prompt_tokens = n;
  // the cache's tokens that start the prompt stay; at least the prompt's last token is fed again for its logits
  const std::vector<int32_t>& cached = gen_.history();
  int64_t keep = std::mismatch(cached.begin(), cached.end(), req.prompt.begin(), req.prompt.end()).first - cached.begin();
  keep = std::min({keep, n - 1, gen_.position()});
  gen_.rewind(keep);
  out.reused_tokens = keep;
  llm::Sampler sampler(req.sampling);
  std::vector<int32_t> fresh(req.prompt.begin() + keep, req.prompt.end());
  int32_t next = gen_.next(fresh, sampler);
  // the reply's text is the decoded prompt tail plus the new tokens, minus the tail's own text: a SentencePiece
  // vocabulary drops the space in front of a first token
  std::vector<int32_t> decoded{req.prompt.back()};
  const size_t tail = tokenizer_.decode(decoded).size();
  size_t released = 0;
  std::string raw, reply;
  out.finish_reason = "length";
  while (out.completion_tokens < req.max_tokens) {
    if (std::find(stop_ids_.begin(), stop_ids_.end(), next) != stop_ids_.end()) {
      out.finish_reason = "stop";
      break;
    }
    decoded.push_back(next);
    out.completion_tokens++;
    std::string all = tokenizer_.decode(decoded);
    raw = all.size() > tail ? all.substr(tail) : std::string();
    // whole characters only, and a model's invalid bytes as U+FFFD: the text is UTF-8 wherever it goes
    reply = base::valid_utf8(raw.substr(0, complete_utf8(raw)));
    // a stop text ends the reply where it begins; text that could still grow into one is held back
    size_t cut = reply.size(), hold = reply.size();
    bool stopped = false;
    for (const std::string& s : req.stop) {
      if (s.empty()) continue;
      if (size_t at = reply.find(s); at != std::string::npos && at < cut) cut = at, stopped = true;
      for (size_t k = std::min(s.size() - 1, reply.size()); k > 0; k--)
        if (reply.compare(reply.size() - k, k, s, 0, k) == 0) {
          hold = std::min(hold, reply.size() - k);
          break;
        }
    }
    if (stopped) reply.resize(cut), hold = reply.size();
    if (hold > released) {
      if (on_text && !on_text(reply.substr(released, hold - released))) {
        out.cancelled = true;
        break;
      }
      released = hold;
    }
    if (stopped) {
      out.finish_reason = "stop";
      break;
    }
    if (out.completion_tokens == req.max_tokens || gen_.position() >= context) break;  // "length"
    next = gen_.next({next}, sampler);
  }
  if (!out.cancelled && released < reply.size() && on_text) on_text(reply.substr(released));  // what was held back
  out.text = reply;
  return out;
}

}  // namespace tg::serve
