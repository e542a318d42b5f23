// The pre-tokenizer regexes as hand-written matchers (std::regex has no \p{..}). Each alternative of the pattern is
// tried in order at the current character, as a backtracking regex engine would; the first that matches wins.
#include <vector>

#include "text/unicode.h"
#include "tg/text.h"

namespace tg::text {
namespace {

enum : uint8_t { kLetter = 1, kNumber = 2, kSpace = 4, kNewline = 8 };  // kNewline: \r or \n (also kSpace)

struct Chars {
  std::vector<uint32_t> offset;  // byte offset of each character, and the text's size at the end
  std::vector<uint32_t> cp;
  std::vector<uint8_t> cls;
  size_t n = 0;
  bool letter(size_t i) const { return i < n && (cls[i] & kLetter); }
  bool number(size_t i) const { return i < n && (cls[i] & kNumber); }
  bool space(size_t i) const { return i < n && (cls[i] & kSpace); }
  bool newline(size_t i) const { return i < n && (cls[i] & kNewline); }
  bool other(size_t i) const { return i < n && !(cls[i] & (kLetter | kNumber | kSpace)); }  // [^\s\p{L}\p{N}]
  size_t run(size_t i, bool (Chars::*pred)(size_t) const) const {
    while ((this->*pred)(i)) i++;
    return i;
  }
};

Chars decode(std::string_view text) {
  Chars c;
  c.offset.reserve(text.size() + 1);
  c.cp.reserve(text.size());
  c.cls.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    Char ch = next_char(text, at);
    uint8_t cls = (is_letter(ch.cp) ? kLetter : 0) | (is_number(ch.cp) ? kNumber : 0) | (is_space(ch.cp) ? kSpace : 0) |
                  (ch.cp == '\r' || ch.cp == '\n' ? kNewline : 0);
    c.offset.push_back(static_cast<uint32_t>(at));
    c.cp.push_back(ch.cp);
    c.cls.push_back(cls);
    at += ch.len;
  }
  c.n = c.cp.size();
  c.offset.push_back(static_cast<uint32_t>(text.size()));
  return c;
}

// 's|'t|'re|'ve|'m|'ll|'d (ASCII case folded when `fold`): the end of the match at i, or i when none
size_t contraction(const Chars& c, size_t i, bool fold) {
  if (c.cp[i] != '\'' || i + 1 >= c.n) return i;
  auto at = [&](size_t k) -> uint32_t {
    if (k >= c.n) return 0;
    uint32_t cp = c.cp[k];
    return fold && cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  };
  uint32_t a = at(i + 1), b = at(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return i;
}

// \s+(?!\S)|\s+ at a whitespace character: the run, less its last character when a non-space follows (that one
// goes with the next word, as " word")
size_t trailing_space(const Chars& c, size_t i) {
  size_t e = c.run(i, &Chars::space);
  return e < c.n && e - i >= 2 ? e - 1 : e;
}

size_t match_gpt2(const Chars& c, size_t i) {
  if (size_t e = contraction(c, i, false); e > i) return e;
  size_t k = c.cp[i] == ' ' ? i + 1 : i;  // the optional space of " ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
  if (c.letter(k)) return c.run(k, &Chars::letter);
  if (c.number(k)) return c.run(k, &Chars::number);
  if (c.other(k)) return c.run(k, &Chars::other);
  return trailing_space(c, i);
}

size_t match_llama3(const Chars& c, size_t i, size_t max_digits) {
  if (size_t e = contraction(c, i, true); e > i) return e;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.letter(i)) return c.run(i, &Chars::letter);
  if (!c.newline(i) && !c.number(i) && c.letter(i + 1)) return c.run(i + 1, &Chars::letter);
  // \p{N}{1,3}
  if (c.number(i)) {
    size_t e = i;
    while (e - i < max_digits && c.number(e)) e++;
    return e;
  }
  // ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t k = c.cp[i] == ' ' ? i + 1 : i;
  if (c.other(k)) return c.run(c.run(k, &Chars::other), &Chars::newline);
  // \s*[\r\n]+ : the whitespace run up to its last newline
  size_t e = c.run(i, &Chars::space);
  for (size_t j = e; j > i; j--)
    if (c.newline(j - 1)) return j;
  return trailing_space(c, i);
}

}  // namespace

std::vector<std::string_view> split_words(std::string_view text, SplitPattern pattern) {
  Chars c = decode(text);
  std::vector<std::string_view> words;
  for (size_t i = 0; i < c.n;) {
    size_t e =
        pattern == SplitPattern::GPT2 ? match_gpt2(c, i) : match_llama3(c, i, pattern == SplitPattern::Llama3 ? 3 : 1);
    words.push_back(text.substr(c.offset[i], c.offset[e] - c.offset[i]));
    i = e;
  }
  return words;
}

}  // namespace tg::text
