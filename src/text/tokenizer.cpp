// tg::text::Tokenizer: the BPE engine (the vocabulary's loaders: hf_files.cpp, gguf_vocab.cpp; its tables: vocab.h).
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
#include <queue>

#include "text/vocab.h"

namespace tg::text {

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
