// UTF-8 decoding and Unicode classes by binary search over generated range tables (no ICU), with an ASCII fast path.
#include "text/unicode.h"

#include <algorithm>
#include <iterator>

#include "tg/text.h"

namespace tg::text {
namespace {

struct CodeRange {
  uint32_t lo, hi;
};
#include "text/unicode_tables.inc"

template <size_t N>
bool in(const CodeRange (&table)[N], uint32_t cp) {
  auto it =
      std::upper_bound(std::begin(table), std::end(table), cp, [](uint32_t c, const CodeRange& r) { return c < r.lo; });
  return it != std::begin(table) && cp <= std::prev(it)->hi;
}

}  // namespace

Char next_char(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  uint8_t c = b(at);
  if (c < 0x80) return {c, 1};
  uint32_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (len == 0 || c > 0xF4 || at + len > s.size()) return {kInvalid, 1};
  uint32_t cp = c & (0x7F >> len);
  for (uint32_t i = 1; i < len; i++) {
    if ((b(at + i) & 0xC0) != 0x80) return {kInvalid, 1};
    cp = cp << 6 | (b(at + i) & 0x3F);
  }
  // overlong forms, surrogates and code points past U+10FFFF are not characters
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return {kInvalid, 1};
  return {cp, len};
}

bool is_letter(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return cp != kInvalid && in(kLetterRanges, cp);
}
bool is_number(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return cp != kInvalid && in(kNumberRanges, cp);
}
bool is_space(uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  return cp != kInvalid && in(kSpaceRanges, cp);
}

const char* unicode_version() { return TG_UNICODE_VERSION; }

}  // namespace tg::text
