// A small, strict JSON reader for file headers (safetensors): every read is bounds-checked, nesting is limited,
// the text must be UTF-8, and any malformed input raises tg::ArgumentError naming the byte where it went wrong.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/util.h"
#include "tg/error.h"

namespace tg::base {

struct Json {
  enum class Kind { Null, Bool, Int, Float, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;  // Int: a number without fraction or exponent that fits int64
  double number = 0;    // Int and Float
  std::string str;
  std::vector<Json> items;                            // Array
  std::vector<std::pair<std::string, Json>> members;  // Object, in file order (keys are distinct)

  // defined in json.cpp, where Json is complete: clang 14 with libstdc++ 12 instantiates the vector of pairs'
  // destructor and copy at the class otherwise, and refuses the incomplete pair
  Json();
  Json(const Json&);
  Json(Json&&) noexcept;
  Json& operator=(const Json&);
  Json& operator=(Json&&) noexcept;
  ~Json();
};

// The offset of the first byte of `s` that is not part of valid UTF-8 (overlong forms, surrogates and code points
// above U+10FFFF are invalid, as in Rust's str::from_utf8), or npos when all of `s` is valid.
size_t utf8_error_at(std::string_view s);
// `s` with each byte that does not start a valid UTF-8 character replaced by U+FFFD (a model may emit any bytes)
std::string valid_utf8(const std::string& s);

// Parses all of `text` (one value, surrounded by whitespace only), which must be UTF-8. Strict RFC 8259 JSON: no
// leading zeros, no trailing commas, no comments, no literals other than true, false and null. `op` and `what` name the caller and the input
// in errors: "tg::ArgumentError in safe_load: model.safetensors: bad JSON header at byte 17: expected ':'".
Json parse_json(std::string_view text, const char* op, const std::string& what, SourceLocation where);

}  // namespace tg::base
