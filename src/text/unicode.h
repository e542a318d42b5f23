// src/text: the tokenizers (include/tg/text.h). This header: UTF-8 decoding and the Unicode classes the
// pre-tokenizer regexes use, from the generated tables in unicode_tables.inc.
#pragma once
#include <cstdint>
#include <string_view>

namespace tg::text {

// One character of a UTF-8 text: its code point and its length in bytes. A byte that starts no valid sequence is a
// character of its own with code point kInvalid, so that any bytes can be split and encoded.
struct Char {
  uint32_t cp;
  uint32_t len;
};
inline constexpr uint32_t kInvalid = 0xFFFFFFFF;

Char next_char(std::string_view s, size_t at);  // at < s.size()

bool is_letter(uint32_t cp);  // \p{L}
bool is_number(uint32_t cp);  // \p{N}
bool is_space(uint32_t cp);   // \s (White_Space)

}  // namespace tg::text
