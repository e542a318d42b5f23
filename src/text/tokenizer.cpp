// tg::text::Tokenizer: BPE over Hugging Face tokenizer files.
//
// Two families, told apart by tokenizer.json's pre_tokenizer:
//  - byte-level (GPT-2, LLaMA 3, Qwen2): the text is split into words by a regex (split.cpp), each word's UTF-8 bytes
//    are the initial symbols. The vocabulary spells bytes as printable characters (GPT-2's bytes_to_unicode); we
//    convert it to raw bytes once at load, so encoding works on the text's bytes directly.
//  - SentencePiece-style (LLaMA 2): a normalizer turns spaces into "▁" and prepends one, and the whole segment is one
//    word whose characters are the initial symbols; characters outside the vocabulary become <0xXX> byte tokens.
// Symbols merge by rank with a heap over a linked list (as Hugging Face's Rust BPE does), O(n log n) in a word's
// length: a SentencePiece segment is the whole text.
#include <algorithm>
#include <array>
#include <cstdio>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "state/file_io.h"
#include "state/json.h"
#include "text/unicode.h"
#include "tg/state.h"
#include "tg/text.h"

namespace tg::text {

using state::Json;

struct Tokenizer::Impl {
  bool byte_level = true;
  std::optional<SplitPattern> split;  // byte-level: the words' regex (none: the whole segment is one word)
  bool add_prefix_space = false;      // byte-level: " " before each segment that does not start with one
  struct Step {  // SentencePiece normalizer: prepend `a` to a non-empty segment, or replace every `a` by `b`
    bool prepend;
    std::string a, b;
  };
  std::vector<Step> normalizer;
  size_t strip_leading = 0;  // decoder: spaces dropped from the front of a decoded text (LLaMA 2's Strip)

  bool ignore_merges = false;  // a word that is a token as a whole is that token (LLaMA 3)
  bool byte_fallback = false;
  bool fuse_unk = false;
  int32_t unk_id = -1;

  std::unordered_map<std::string, int32_t>
      piece_id;  // the model's tokens in the encoding domain (raw bytes if byte-level)
  std::unordered_map<std::string, int32_t> name_id;  // every token as the files spell it
  std::vector<std::string> bytes;                    // per id
  std::vector<uint8_t> present;                      // per id: whether a token has it
  std::array<int32_t, 256> byte_id{};                // byte-level: the one-byte tokens; byte fallback: <0xXX>
  struct Merge {
    int32_t rank, id;
  };
  std::unordered_map<uint64_t, Merge> merges;          // by (left id, right id)
  std::vector<std::pair<std::string, int32_t>> added;  // added tokens, longest first (leftmost-longest matching)

  mutable std::mutex cache_mu;  // encode is const and may run on several threads
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;

  static uint64_t key(int32_t a, int32_t b) { return uint64_t(uint32_t(a)) << 32 | uint32_t(b); }
  void bpe(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const;
  void bpe_cached(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const;
  void encode_segment(std::string_view seg, std::vector<int32_t>& out, SourceLocation where) const;
};

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& what, SourceLocation where) {
  throw ArgumentError("Tokenizer", file + ": " + what, where);
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for U+0100 onwards in order
std::array<uint32_t, 256> byte_to_cp() {
  std::array<uint32_t, 256> m{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; b++) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    m[b] = printable ? b : next++;
  }
  return m;
}

// A byte-level token's raw bytes, or nullopt if a character of it stands for no byte.
std::optional<std::string> unbyte(std::string_view s) {
  static const std::unordered_map<uint32_t, char> inverse = [] {
    std::unordered_map<uint32_t, char> m;
    auto fwd = byte_to_cp();
    for (int b = 0; b < 256; b++) m[fwd[b]] = static_cast<char>(b);
    return m;
  }();
  std::string out;
  for (size_t at = 0; at < s.size();) {
    Char c = next_char(s, at);
    auto it = inverse.find(c.cp);
    if (it == inverse.end()) return std::nullopt;
    out.push_back(it->second);
    at += c.len;
  }
  return out;
}

const Json* member(const Json& obj, std::string_view key) {
  if (obj.kind != Json::Kind::Object) return nullptr;
  for (const auto& [k, v] : obj.members)
    if (k == key) return &v;
  return nullptr;
}
bool is_null(const Json* j) { return j == nullptr || j->kind == Json::Kind::Null; }
std::string str_of(const Json* j, const std::string& file, const std::string& what, SourceLocation where) {
  if (!j || j->kind != Json::Kind::String) fail(file, what + ": expected a string", where);
  return j->str;
}
bool bool_of(const Json* j, bool fallback, const std::string& file, const std::string& what, SourceLocation where) {
  if (is_null(j)) return fallback;
  if (j->kind != Json::Kind::Bool) fail(file, what + ": expected true or false", where);
  return j->boolean;
}

constexpr int64_t kMaxId = 1 << 24;  // far above any vocabulary; bounds the per-id tables a bad file could ask for

void set_token(Tokenizer::Impl& t, int64_t id, const std::string& name, std::string bytes, const std::string& file,
               SourceLocation where) {
  if (id < 0 || id >= kMaxId)
    fail(file, "token " + state::json_quote(name) + " has id " + std::to_string(id) + ", outside [0, 2^24)", where);
  if (size_t(id) >= t.bytes.size()) {
    t.bytes.resize(id + 1);
    t.present.resize(id + 1, 0);
  }
  t.bytes[id] = std::move(bytes);
  t.present[id] = 1;
  t.name_id[name] = static_cast<int32_t>(id);
}

// vocab (name -> id) into the tables; `byte_level` spells tokens in bytes_to_unicode characters
void read_vocab(Tokenizer::Impl& t, const Json& vocab, const std::string& file, SourceLocation where) {
  if (vocab.kind != Json::Kind::Object) fail(file, "vocab: expected an object of token: id", where);
  std::vector<uint8_t> seen;
  for (const auto& [name, v] : vocab.members) {
    if (v.kind != Json::Kind::Int)
      fail(file, "vocab: the id of " + state::json_quote(name) + " is not an integer", where);
    if (v.integer >= 0 && v.integer < kMaxId) {
      if (size_t(v.integer) >= seen.size()) seen.resize(v.integer + 1, 0);
      if (seen[v.integer]++) fail(file, "vocab: id " + std::to_string(v.integer) + " is given to two tokens", where);
    }
    std::string piece;
    if (t.byte_level) {
      auto raw = unbyte(name);
      if (!raw) fail(file, "vocab: " + state::json_quote(name) + " is not a byte-level token", where);
      piece = *raw;
    } else {
      piece = name;
    }
    set_token(t, v.integer, name, piece, file, where);
    t.piece_id[piece] = static_cast<int32_t>(v.integer);
  }
  if (!t.byte_level) {
    // the decoder's view of a SentencePiece token: "▁" is a space, <0xXX> a byte (set by read_decoder's rules)
    for (const auto& [name, id] : t.name_id) {
      std::string b = name;
      for (size_t p; (p = b.find("\xE2\x96\x81")) != std::string::npos;) b.replace(p, 3, " ");
      t.bytes[id] = b;
    }
  }
}

void read_merges(Tokenizer::Impl& t, const std::vector<std::pair<std::string, std::string>>& merges,
                 const std::string& file, SourceLocation where) {
  for (size_t r = 0; r < merges.size(); r++) {
    auto [a, b] = merges[r];
    if (t.byte_level) {
      auto ra = unbyte(a), rb = unbyte(b);
      if (!ra || !rb) fail(file, "merge " + std::to_string(r) + " (" + a + " " + b + ") is not byte-level", where);
      a = *ra, b = *rb;
    }
    auto ia = t.piece_id.find(a), ib = t.piece_id.find(b), im = t.piece_id.find(a + b);
    if (ia == t.piece_id.end() || ib == t.piece_id.end() || im == t.piece_id.end())
      fail(file,
           "merge " + std::to_string(r) + " (" + merges[r].first + " " + merges[r].second +
               ") names a token not in the vocab",
           where);
    t.merges.try_emplace(Tokenizer::Impl::key(ia->second, ib->second), Tokenizer::Impl::Merge{int32_t(r), im->second});
  }
}

// the byte tokens every input byte can fall back on: byte-level's 256 one-byte tokens, or SentencePiece's <0xXX>
void find_byte_tokens(Tokenizer::Impl& t, const std::string& file, SourceLocation where) {
  for (int b = 0; b < 256; b++) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    auto it = t.byte_level ? t.piece_id.find(std::string(1, char(b))) : t.piece_id.find(hex);
    if (it == t.piece_id.end()) fail(file, std::string("the vocab has no token for byte ") + (hex + 1), where);
    t.byte_id[b] = it->second;
    if (!t.byte_level) t.bytes[it->second] = std::string(1, char(b));
  }
}

void add_token(Tokenizer::Impl& t, int64_t id, const std::string& content, const std::string& file,
               SourceLocation where) {
  if (content.empty()) fail(file, "added_tokens: a token is empty", where);
  set_token(t, id, content, content, file, where);
  t.added.emplace_back(content, static_cast<int32_t>(id));
}

void finish(Tokenizer::Impl& t, const std::string& file, SourceLocation where) {
  if (t.name_id.empty()) fail(file, "the vocabulary is empty", where);
  std::stable_sort(t.added.begin(), t.added.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string read_text(const std::string& path, SourceLocation where) {
  size_t size = 0;
  auto data = state::map_file(path, size, "Tokenizer", where);
  return std::string(reinterpret_cast<const char*>(data.get()), size);
}

// The regexes of tokenizer.json's Split pre-tokenizers that we have matchers for.
std::optional<SplitPattern> known_pattern(const std::string& re) {
  static const std::string contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|";
  static const std::string rest = "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  if (re == "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+")
    return SplitPattern::GPT2;
  if (re == contractions + "\\p{N}{1,3}" + rest) return SplitPattern::Llama3;
  if (re == contractions + "\\p{N}" + rest) return SplitPattern::Qwen2;
  return std::nullopt;
}

void read_pre_tokenizer(Tokenizer::Impl& t, const Json* pre, const std::string& file, SourceLocation where) {
  t.byte_level = false;
  if (is_null(pre)) return;
  std::vector<const Json*> steps;
  std::string type = str_of(member(*pre, "type"), file, "pre_tokenizer.type", where);
  if (type == "Sequence") {
    const Json* list = member(*pre, "pretokenizers");
    if (!list || list->kind != Json::Kind::Array) fail(file, "pre_tokenizer.pretokenizers: expected an array", where);
    for (const Json& s : list->items) steps.push_back(&s);
  } else {
    steps.push_back(pre);
  }
  bool split_seen = false;
  for (const Json* s : steps) {
    std::string st = str_of(member(*s, "type"), file, "pre_tokenizer.type", where);
    if (st == "ByteLevel") {
      t.byte_level = true;
      t.add_prefix_space =
          bool_of(member(*s, "add_prefix_space"), false, file, "pre_tokenizer.add_prefix_space", where);
      if (bool_of(member(*s, "use_regex"), true, file, "pre_tokenizer.use_regex", where)) {
        if (split_seen) fail(file, "pre_tokenizer: two splitting regexes", where);
        t.split = SplitPattern::GPT2;
      }
    } else if (st == "Split" && !split_seen && !t.byte_level) {
      const Json* pattern = member(*s, "pattern");
      std::string re =
          str_of(pattern ? member(*pattern, "Regex") : nullptr, file, "pre_tokenizer Split.pattern.Regex", where);
      auto known = known_pattern(re);
      if (!known) fail(file, "unsupported pre-tokenizer regex " + state::json_quote(re), where);
      if (str_of(member(*s, "behavior"), file, "Split.behavior", where) != "Isolated" ||
          bool_of(member(*s, "invert"), false, file, "Split.invert", where))
        fail(file, "unsupported Split pre-tokenizer (only behavior Isolated, not inverted)", where);
      t.split = known;
      split_seen = true;
    } else {
      fail(file, "unsupported pre-tokenizer " + state::json_quote(st), where);
    }
  }
  if (!t.byte_level) fail(file, "a Split pre-tokenizer without ByteLevel is not supported", where);
}

void read_normalizer(Tokenizer::Impl& t, const Json* norm, const std::string& file, SourceLocation where) {
  if (is_null(norm)) return;
  std::string type = str_of(member(*norm, "type"), file, "normalizer.type", where);
  if (type == "Sequence") {
    const Json* list = member(*norm, "normalizers");
    if (!list || list->kind != Json::Kind::Array) fail(file, "normalizer.normalizers: expected an array", where);
    for (const Json& s : list->items) read_normalizer(t, &s, file, where);
  } else if (type == "Prepend") {
    t.normalizer.push_back({true, str_of(member(*norm, "prepend"), file, "normalizer Prepend.prepend", where), ""});
  } else if (type == "Replace") {
    const Json* pattern = member(*norm, "pattern");
    std::string a =
        str_of(pattern ? member(*pattern, "String") : nullptr, file, "normalizer Replace.pattern.String", where);
    if (a.empty()) fail(file, "normalizer Replace: empty pattern", where);
    t.normalizer.push_back({false, a, str_of(member(*norm, "content"), file, "normalizer Replace.content", where)});
  } else {
    fail(file, "unsupported normalizer " + state::json_quote(type), where);
  }
}

// SentencePiece-style decoders: Replace("▁", " "), ByteFallback, Fuse, Strip(" ", n, 0) are what we apply; any other
// step would change the text in a way we do not reproduce
void read_decoder(Tokenizer::Impl& t, const Json* dec, const std::string& file, SourceLocation where) {
  if (is_null(dec)) return;
  std::string type = str_of(member(*dec, "type"), file, "decoder.type", where);
  if (type == "Sequence") {
    const Json* list = member(*dec, "decoders");
    if (!list || list->kind != Json::Kind::Array) fail(file, "decoder.decoders: expected an array", where);
    for (const Json& s : list->items) read_decoder(t, &s, file, where);
  } else if (type == "Replace") {
    const Json* pattern = member(*dec, "pattern");
    std::string a =
        str_of(pattern ? member(*pattern, "String") : nullptr, file, "decoder Replace.pattern.String", where);
    if (a != "\xE2\x96\x81" || str_of(member(*dec, "content"), file, "decoder Replace.content", where) != " ")
      fail(file, "unsupported decoder Replace (only \"▁\" by \" \")", where);
  } else if (type == "Strip") {
    const Json* start = member(*dec, "start");
    if (str_of(member(*dec, "content"), file, "decoder Strip.content", where) != " " || !start ||
        start->kind != Json::Kind::Int || start->integer < 0)
      fail(file, "unsupported decoder Strip (only leading spaces)", where);
    t.strip_leading = static_cast<size_t>(start->integer);
  } else if (type != "ByteFallback" && type != "Fuse" && type != "ByteLevel") {
    fail(file, "unsupported decoder " + state::json_quote(type), where);
  }
}

std::shared_ptr<Tokenizer::Impl> load_tokenizer_json(const std::string& file, SourceLocation where) {
  auto t = std::make_shared<Tokenizer::Impl>();
  Json root = state::parse_json_file(file, "Tokenizer", where);
  if (root.kind != Json::Kind::Object) fail(file, "expected a JSON object", where);
  const Json* model = member(root, "model");
  if (!model || model->kind != Json::Kind::Object) fail(file, "no \"model\" object", where);
  if (const Json* type = member(*model, "type"); !is_null(type) && str_of(type, file, "model.type", where) != "BPE")
    fail(file, "unsupported model type " + state::json_quote(type->str) + " (only BPE)", where);
  if (const Json* d = member(*model, "dropout"); !is_null(d) && !(d->kind == Json::Kind::Int && d->integer == 0))
    fail(file, "model.dropout is not supported", where);
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json* a = member(*model, affix); !is_null(a) && str_of(a, file, affix, where) != "")
      fail(file, std::string("model.") + affix + " is not supported", where);

  read_pre_tokenizer(*t, member(root, "pre_tokenizer"), file, where);
  if (t->byte_level) {
    if (!is_null(member(root, "normalizer")))
      fail(file, "a normalizer with a byte-level pre-tokenizer is not supported", where);
  } else {
    read_normalizer(*t, member(root, "normalizer"), file, where);
    read_decoder(*t, member(root, "decoder"), file, where);
  }
  t->ignore_merges = bool_of(member(*model, "ignore_merges"), false, file, "model.ignore_merges", where);
  t->byte_fallback = bool_of(member(*model, "byte_fallback"), false, file, "model.byte_fallback", where);
  t->fuse_unk = bool_of(member(*model, "fuse_unk"), false, file, "model.fuse_unk", where);

  const Json* vocab = member(*model, "vocab");
  if (!vocab) fail(file, "no model.vocab", where);
  read_vocab(*t, *vocab, file, where);

  const Json* merges = member(*model, "merges");
  if (!merges || merges->kind != Json::Kind::Array) fail(file, "model.merges: expected an array", where);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Json& m : merges->items) {
    if (m.kind == Json::Kind::String) {  // "a b" (older files)
      size_t sp = m.str.find(' ');
      if (sp == std::string::npos || m.str.find(' ', sp + 1) != std::string::npos)
        fail(file, "merge " + state::json_quote(m.str) + " is not two tokens", where);
      pairs.emplace_back(m.str.substr(0, sp), m.str.substr(sp + 1));
    } else if (m.kind == Json::Kind::Array && m.items.size() == 2 && m.items[0].kind == Json::Kind::String &&
               m.items[1].kind == Json::Kind::String) {  // ["a", "b"] (newer files)
      pairs.emplace_back(m.items[0].str, m.items[1].str);
    } else {
      fail(file, "model.merges: each merge is \"a b\" or [\"a\", \"b\"]", where);
    }
  }
  read_merges(*t, pairs, file, where);

  if (const Json* unk = member(*model, "unk_token"); !is_null(unk)) {
    std::string name = str_of(unk, file, "model.unk_token", where);
    auto it = t->piece_id.find(name);
    if (it == t->piece_id.end())
      fail(file, "model.unk_token " + state::json_quote(name) + " is not in the vocab", where);
    t->unk_id = it->second;
  }
  if (t->byte_level || t->byte_fallback) find_byte_tokens(*t, file, where);

  if (const Json* added = member(root, "added_tokens"); !is_null(added)) {
    if (added->kind != Json::Kind::Array) fail(file, "added_tokens: expected an array", where);
    for (const Json& a : added->items) {
      const Json* id = member(a, "id");
      if (!id || id->kind != Json::Kind::Int) fail(file, "added_tokens: each needs an integer id", where);
      add_token(*t, id->integer, str_of(member(a, "content"), file, "added_tokens.content", where), file, where);
    }
  }
  finish(*t, file, where);
  return t;
}

// GPT-2's original files: vocab.json (token: id) and merges.txt ("#version" line, then "a b" per line)
std::shared_ptr<Tokenizer::Impl> load_gpt2_files(const std::string& folder, SourceLocation where) {
  auto t = std::make_shared<Tokenizer::Impl>();
  t->split = SplitPattern::GPT2;
  std::string vocab_file = folder + "/vocab.json", merges_file = folder + "/merges.txt";
  read_vocab(*t, state::parse_json_file(vocab_file, "Tokenizer", where), vocab_file, where);
  std::string text = read_text(merges_file, where);
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at = end + 1, line_no++;
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string_view::npos)
      fail(merges_file, "line " + std::to_string(line_no) + ": expected two tokens separated by a space", where);
    pairs.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
  }
  read_merges(*t, pairs, merges_file, where);
  find_byte_tokens(*t, vocab_file, where);
  if (auto it = t->name_id.find("<|endoftext|>"); it != t->name_id.end()) t->added.emplace_back(it->first, it->second);
  finish(*t, vocab_file, where);
  return t;
}

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
      if (!raw) fail(file, "token " + std::to_string(i) + " " + state::json_quote(tok) + " is not a byte-level token", where);
      set_token(*t, int64_t(i), tok, *raw, file, where);
      t->piece_id[*raw] = int32_t(i);
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    if (const auto* merges = array("tokenizer.ggml.merges", GGUFValue::Kind::String, true))
      for (const GGUFValue& m : *merges) {
        size_t sp = m.s.find(' ');
        if (sp == std::string::npos || m.s.find(' ', sp + 1) != std::string::npos) fail(file, "merge " + state::json_quote(m.s) + " is not two tokens", where);
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

bool is_file(const std::string& path) {
  size_t size = 0;
  try {
    state::map_file(path, size, "Tokenizer", SourceLocation());
    return true;
  } catch (const ArgumentError&) {
    return false;
  }
}

}  // namespace

void Tokenizer::Impl::bpe(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const {
  if (word.empty()) return;
  if (ignore_merges)
    if (auto it = piece_id.find(std::string(word)); it != piece_id.end()) return out.push_back(it->second);
  struct Sym {
    int32_t id;  // -1: a character outside the vocabulary (SentencePiece)
    int32_t prev, next;
    uint32_t start, len;  // len 0: merged into its left neighbour
  };
  std::vector<Sym> syms;
  syms.reserve(word.size());
  for (size_t at = 0; at < word.size();) {
    uint32_t len = 1;
    int32_t id;
    if (byte_level) {
      id = byte_id[static_cast<uint8_t>(word[at])];
    } else {
      len = next_char(word, at).len;
      auto it = piece_id.find(std::string(word.substr(at, len)));
      id = it == piece_id.end() ? -1 : it->second;
    }
    int32_t n = static_cast<int32_t>(syms.size());
    syms.push_back({id, n - 1, -1, uint32_t(at), len});
    if (n > 0) syms[n - 1].next = n;
    at += len;
  }
  struct Cand {
    int32_t rank, pos, id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push = [&](int32_t pos) {
    if (pos < 0 || syms[pos].next < 0) return;
    auto it = merges.find(key(syms[pos].id, syms[syms[pos].next].id));
    if (it != merges.end()) heap.push({it->second.rank, pos, it->second.id});
  };
  for (int32_t i = 0; i + 1 < int32_t(syms.size()); i++) push(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Sym& s = syms[c.pos];
    if (s.len == 0 || s.next < 0) continue;  // stale: this symbol or its right neighbour merged since
    auto it = merges.find(key(s.id, syms[s.next].id));
    if (it == merges.end() || it->second.id != c.id) continue;
    Sym& r = syms[s.next];
    s.id = c.id;
    s.len += r.len;
    r.len = 0;
    s.next = r.next;
    if (s.next >= 0) syms[s.next].prev = c.pos;
    push(s.prev);
    push(c.pos);
  }
  bool last_unk = false;
  for (int32_t i = 0; i >= 0; i = syms[i].next) {
    const Sym& s = syms[i];
    if (s.id >= 0) {
      out.push_back(s.id);
      last_unk = false;
    } else if (byte_fallback) {
      for (uint32_t k = 0; k < s.len; k++) out.push_back(byte_id[static_cast<uint8_t>(word[s.start + k])]);
    } else if (unk_id >= 0) {
      if (!(fuse_unk && last_unk)) out.push_back(unk_id);
      last_unk = true;
    } else {
      throw ArgumentError("Tokenizer", "encode: the text has a character the vocabulary lacks, and no unk_token",
                          where);
    }
  }
}

void Tokenizer::Impl::bpe_cached(std::string_view word, std::vector<int32_t>& out, SourceLocation where) const {
  constexpr size_t kMaxCachedWord = 64, kMaxEntries = 1 << 16;
  if (word.size() > kMaxCachedWord) return bpe(word, out, where);
  std::string w(word);
  {
    std::lock_guard lock(cache_mu);
    if (auto it = cache.find(w); it != cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  bpe(word, ids, where);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard lock(cache_mu);
  if (cache.size() >= kMaxEntries) cache.clear();  // bounded memory; the common words come right back
  cache.emplace(std::move(w), std::move(ids));
}

void Tokenizer::Impl::encode_segment(std::string_view seg, std::vector<int32_t>& out, SourceLocation where) const {
  if (seg.empty()) return;
  if (byte_level) {
    std::string prefixed;
    if (add_prefix_space && seg.front() != ' ') seg = prefixed = " " + std::string(seg);
    if (!split) return bpe(seg, out, where);
    for (std::string_view w : split_words(seg, *split)) bpe_cached(w, out, where);
    return;
  }
  std::string s(seg);
  for (const Step& step : normalizer) {
    if (step.prepend) {
      s = step.a + s;
      continue;
    }
    std::string r;
    for (size_t at = 0;;) {
      size_t p = s.find(step.a, at);
      r.append(s, at, p == std::string::npos ? std::string::npos : p - at);
      if (p == std::string::npos) break;
      r += step.b;
      at = p + step.a.size();
    }
    s = std::move(r);
  }
  bpe(s, out, where);
}

Tokenizer::Tokenizer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_gguf(const std::map<std::string, GGUFValue>& metadata, const std::string& file,
                               SourceLocation where) {
  return Tokenizer(load_gguf_vocab(metadata, file, where));
}

Tokenizer Tokenizer::load(const std::string& folder, SourceLocation where) {
  if (folder.ends_with(".json") && is_file(folder)) return Tokenizer(load_tokenizer_json(folder, where));
  if (is_file(folder + "/tokenizer.json")) return Tokenizer(load_tokenizer_json(folder + "/tokenizer.json", where));
  if (is_file(folder + "/vocab.json") && is_file(folder + "/merges.txt"))
    return Tokenizer(load_gpt2_files(folder, where));
  fail(folder, "no tokenizer.json, nor vocab.json and merges.txt", where);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, SourceLocation where) const {
  const Impl& t = *impl_;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 1);
  size_t seg = 0;  // the start of the text not yet encoded
  for (size_t i = 0; i < text.size(); i++) {
    for (const auto& [content, id] : t.added) {  // longest first
      if (content[0] != text[i] || text.compare(i, content.size(), content) != 0) continue;
      t.encode_segment(text.substr(seg, i - seg), out, where);
      out.push_back(id);
      seg = i + content.size();
      i = seg - 1;
      break;
    }
  }
  t.encode_segment(text.substr(seg), out, where);
  return out;
}

std::string Tokenizer::token_bytes(int32_t id, SourceLocation where) const {
  if (id < 0 || size_t(id) >= impl_->bytes.size() || !impl_->present[id])
    throw ArgumentError(
        "Tokenizer",
        "token id " + std::to_string(id) + " is not in the vocabulary (size " + std::to_string(vocab_size()) + ")",
        where);
  return impl_->bytes[id];
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, SourceLocation where) const {
  std::string out;
  for (int32_t id : ids) out += token_bytes(id, where);
  size_t strip = 0;
  while (strip < impl_->strip_leading && strip < out.size() && out[strip] == ' ') strip++;
  return out.substr(strip);
}

int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->bytes.size()); }

std::optional<int32_t> Tokenizer::token_id(const std::string& token) const {
  auto it = impl_->name_id.find(token);
  if (it == impl_->name_id.end()) return std::nullopt;
  return it->second;
}

}  // namespace tg::text
