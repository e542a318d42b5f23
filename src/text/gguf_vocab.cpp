// A GGUF file's tokenizer (llama.cpp's tokenizer.ggml.* metadata) as a Tokenizer.
#include <algorithm>
#include <string>

#include "text/vocab.h"

namespace tg::text {

// The vocabulary of a GGUF file (llama.cpp's tokenizer.ggml.* metadata): "gpt2" is byte-level BPE with a merge list
// and a pre-tokenizer named by tokenizer.ggml.pre; "llama" is SentencePiece with a score per token, from which the
// merges are made as Hugging Face's converter makes them (every split of a token into two tokens, by the token's
// score, highest first). Control and user-defined tokens are matched in the text as added tokens.
std::shared_ptr<Tokenizer::Impl> load_gguf_vocab(const std::map<std::string, GGUFValue>& meta, const std::string& file,
                                                 SourceLocation where) {
  auto get = [&](const std::string& key) -> const GGUFValue* {
    auto it = meta.find(key);
    return it == meta.end() ? nullptr : &it->second;
  };
  auto array = [&](const std::string& key, GGUFValue::Kind kind, bool required) -> const std::vector<GGUFValue>* {
    const GGUFValue* v = get(key);
    if (!v) return required ? (fail(file, "no " + key, where), nullptr) : nullptr;
    if (v->kind != GGUFValue::Kind::Array) fail(file, key + " is not an array", where);
    for (const GGUFValue& item : v->items)
      if (item.kind != kind && !(kind == GGUFValue::Kind::Int && item.kind == GGUFValue::Kind::UInt))
        fail(file, key + " holds a value of the wrong type", where);
    return &v->items;
  };
  const GGUFValue* model = get("tokenizer.ggml.model");
  if (!model || model->kind != GGUFValue::Kind::String) fail(file, "no tokenizer.ggml.model", where);
  const auto& tokens = *array("tokenizer.ggml.tokens", GGUFValue::Kind::String, true);
  const auto* types = array("tokenizer.ggml.token_type", GGUFValue::Kind::Int, false);
  if (types && types->size() != tokens.size()) fail(file, "tokenizer.ggml.token_type and tokens differ in length", where);
  auto type_of = [&](size_t i) { return types ? (*types)[i].kind == GGUFValue::Kind::Int ? (*types)[i].i : int64_t((*types)[i].u) : 1; };
  constexpr int64_t kControl = 3, kUserDefined = 4, kUnknown = 2;
  auto t = std::make_shared<Tokenizer::Impl>();
  if (model->s == "gpt2") {
    const GGUFValue* pre = get("tokenizer.ggml.pre");
    std::string name = pre && pre->kind == GGUFValue::Kind::String ? pre->s : "default";
    if (name == "llama-bpe" || name == "llama3" || name == "llama-v3" || name == "smaug-bpe") {
      t->split = SplitPattern::Llama3, t->ignore_merges = true;
    } else if (name == "qwen2") {
      t->split = SplitPattern::Qwen2;
    } else if (name == "default" || name == "gpt-2" || name == "gpt2") {
      t->split = SplitPattern::GPT2;
    } else {
      fail(file, "tokenizer.ggml.pre \"" + name + "\" is not supported (default, gpt-2, llama-bpe, qwen2)", where);
    }
    for (size_t i = 0; i < tokens.size(); i++) {
      const std::string& tok = tokens[i].s;
      if (type_of(i) == kControl || type_of(i) == kUserDefined) {
        if (!tok.empty()) add_token(*t, int64_t(i), tok, file, where);
        continue;
      }
      auto raw = unbyte(tok);
      if (!raw) fail(file, "token " + std::to_string(i) + " " + base::json_quote(tok) + " is not a byte-level token", where);
      set_token(*t, int64_t(i), tok, *raw, file, where);
      t->piece_id[*raw] = int32_t(i);
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    if (const auto* merges = array("tokenizer.ggml.merges", GGUFValue::Kind::String, true))
      for (const GGUFValue& m : *merges) {
        size_t sp = m.s.find(' ');
        if (sp == std::string::npos || m.s.find(' ', sp + 1) != std::string::npos) fail(file, "merge " + base::json_quote(m.s) + " is not two tokens", where);
        pairs.emplace_back(m.s.substr(0, sp), m.s.substr(sp + 1));
      }
    read_merges(*t, pairs, file, where);
    find_byte_tokens(*t, file, where);
  } else if (model->s == "llama") {
    t->byte_level = false, t->byte_fallback = true, t->strip_leading = 1;
    t->normalizer = {{true, "\xE2\x96\x81", ""}, {false, " ", "\xE2\x96\x81"}};  // LLaMA 2's: prepend and replace by "▁"
    const auto& scores = *array("tokenizer.ggml.scores", GGUFValue::Kind::Float, true);
    if (scores.size() != tokens.size()) fail(file, "tokenizer.ggml.scores and tokens differ in length", where);
    for (size_t i = 0; i < tokens.size(); i++) {
      const std::string& tok = tokens[i].s;
      std::string bytes = tok;
      for (size_t p; (p = bytes.find("\xE2\x96\x81")) != std::string::npos;) bytes.replace(p, 3, " ");
      set_token(*t, int64_t(i), tok, bytes, file, where);
      t->piece_id[tok] = int32_t(i);
      if (type_of(i) == kUnknown) t->unk_id = int32_t(i);
      if (type_of(i) == kControl || type_of(i) == kUserDefined) t->added.emplace_back(tok, int32_t(i));
    }
    // merges: each normal token split in two tokens, by the token's score
    struct Candidate { double score; int32_t id; std::string a, b; };
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < tokens.size(); i++) {
      if (type_of(i) != 1) continue;
      const std::string& tok = tokens[i].s;
      for (size_t cut = 1; cut < tok.size(); cut++) {
        if ((static_cast<unsigned char>(tok[cut]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
        std::string a = tok.substr(0, cut), b = tok.substr(cut);
        if (t->piece_id.count(a) && t->piece_id.count(b)) candidates.push_back({scores[i].f, int32_t(i), a, b});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](const Candidate& x, const Candidate& y) {
      if (x.score != y.score) return x.score > y.score;
      return std::make_pair(t->piece_id[x.a], t->piece_id[x.b]) < std::make_pair(t->piece_id[y.a], t->piece_id[y.b]);
    });
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const Candidate& c : candidates) pairs.emplace_back(c.a, c.b);
    read_merges(*t, pairs, file, where);
    find_byte_tokens(*t, file, where);
  } else {
    fail(file, "tokenizer.ggml.model \"" + model->s + "\" is not supported (gpt2, llama)", where);
  }
  finish(*t, file, where);
  return t;
}

Tokenizer Tokenizer::from_gguf(const std::map<std::string, GGUFValue>& metadata, const std::string& file,
                               SourceLocation where) {
  return Tokenizer(load_gguf_vocab(metadata, file, where));
}

}  // namespace tg::text
