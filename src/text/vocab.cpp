#include "text/vocab.h"

#include <algorithm>
#include <cstdio>

namespace tg::text {

using base::Json;

[[noreturn]] void fail(const std::string& file, const std::string& what, SourceLocation where) {
  throw ArgumentError("Tokenizer", file + ": " + what, where);
}

namespace {

constexpr int64_t kMaxId = 1 << 24;  // far above any vocabulary; bounds the per-id tables a bad file could ask for

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

}  // namespace

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

void set_token(Tokenizer::Impl& t, int64_t id, const std::string& name, std::string bytes, const std::string& file,
               SourceLocation where) {
  if (id < 0 || id >= kMaxId)
    fail(file, "token " + base::json_quote(name) + " has id " + std::to_string(id) + ", outside [0, 2^24)", where);
  if (size_t(id) >= t.bytes.size()) {
    t.bytes.resize(id + 1);
    t.present.resize(id + 1, 0);
  }
  t.bytes[id] = std::move(bytes);
  t.present[id] = 1;
  t.name_id[name] = static_cast<int32_t>(id);
}

void read_vocab(Tokenizer::Impl& t, const Json& vocab, const std::string& file, SourceLocation where) {
  if (vocab.kind != Json::Kind::Object) fail(file, "vocab: expected an object of token: id", where);
  std::vector<uint8_t> seen;
  for (const auto& [name, v] : vocab.members) {
    if (v.kind != Json::Kind::Int)
      fail(file, "vocab: the id of " + base::json_quote(name) + " is not an integer", where);
    if (v.integer >= 0 && v.integer < kMaxId) {
      if (size_t(v.integer) >= seen.size()) seen.resize(v.integer + 1, 0);
      if (seen[v.integer]++) fail(file, "vocab: id " + std::to_string(v.integer) + " is given to two tokens", where);
    }
    std::string piece;
    if (t.byte_level) {
      auto raw = unbyte(name);
      if (!raw) fail(file, "vocab: " + base::json_quote(name) + " is not a byte-level token", where);
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

}  // namespace tg::text
