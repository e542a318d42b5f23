#include "base/json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace tg::base {

Json::Json() = default;
Json::Json(const Json&) = default;
Json::Json(Json&&) noexcept = default;
Json& Json::operator=(const Json&) = default;
Json& Json::operator=(Json&&) noexcept = default;
Json::~Json() = default;

namespace {

constexpr int kMaxDepth = 64;

struct Parser {
  std::string_view s;
  size_t i = 0;
  const char* op;
  const std::string& what;
  SourceLocation where;

  [[noreturn]] void fail(const std::string& msg) const {
    throw ArgumentError(op, what + ": bad JSON header at byte " + std::to_string(i) + ": " + msg, where);
  }
  void skip_ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  }
  char peek() {
    skip_ws();
    if (i >= s.size()) fail("unexpected end");
    return s[i];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    i++;
  }
  void literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) fail("unknown literal");
    i += word.size();
  }

  unsigned hex4() {
    if (i + 4 > s.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++, i++) {
      char c = s[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) fail("bad \\u escape");
      v = v * 16 + static_cast<unsigned>(d);
    }
    return v;
  }
  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) out += static_cast<char>(0xC0 | cp >> 6), out += static_cast<char>(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
      out += static_cast<char>(0xE0 | cp >> 12), out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)),
          out += static_cast<char>(0x80 | (cp & 0x3F));
    else
      out += static_cast<char>(0xF0 | cp >> 18), out += static_cast<char>(0x80 | (cp >> 12 & 0x3F)),
          out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
  }

  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i >= s.size()) fail("unterminated string");
      char c = s[i++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) fail("unterminated string");
      switch (char e = s[i++]) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (s.substr(i, 2) != "\\u") fail("lone surrogate");
            i += 2;
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("lone surrogate");
          }
          put_utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  Json number() {
    size_t start = i;
    if (s[i] == '-') i++;
    auto digits = [&] {
      size_t d = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
      if (i == d) fail("bad number");
    };
    if (i + 1 < s.size() && s[i] == '0' && s[i + 1] >= '0' && s[i + 1] <= '9') fail("number with a leading zero");
    digits();
    bool integral = true;
    if (i < s.size() && s[i] == '.') i++, digits(), integral = false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      i++;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) i++;
      digits();
      integral = false;
    }
    std::string text(s.substr(start, i - start));
    Json j;
    j.number = std::strtod(text.c_str(), nullptr);
    j.kind = Json::Kind::Float;
    // "-0" stays a Float, as serde_json (the reference safetensors reader) keeps it: it is no size or offset
    if (integral && text != "-0") {
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == 0) j.kind = Json::Kind::Int, j.integer = v;
    }
    return j;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth));
    Json j;
    char c = peek();
    if (c == '{') {
      j.kind = Json::Kind::Object;
      i++;
      if (peek() == '}') return i++, j;
      std::unordered_set<std::string> keys;
      while (true) {
        std::string key = string();
        if (!keys.insert(key).second) fail("duplicate key \"" + key + "\"");
        expect(':');
        j.members.emplace_back(std::move(key), value(depth + 1));
        if (peek() == '}') return i++, j;
        expect(',');
      }
    }
    if (c == '[') {
      j.kind = Json::Kind::Array;
      i++;
      if (peek() == ']') return i++, j;
      while (true) {
        j.items.push_back(value(depth + 1));
        if (peek() == ']') return i++, j;
        expect(',');
      }
    }
    if (c == '"') {
      j.kind = Json::Kind::String;
      j.str = string();
      return j;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (c == 't' || c == 'f') {
      literal(c == 't' ? "true" : "false");
      j.kind = Json::Kind::Bool, j.boolean = c == 't';
      return j;
    }
    literal("null");
    return j;
  }
};

}  // namespace

size_t utf8_error_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned c = b(i);
    if (c < 0x80) {
      i++;
      continue;
    }
    // the length of the sequence and the range of its second byte (no overlong forms, surrogates or > U+10FFFF)
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (s.size() - i < len || b(i + 1) < lo || b(i + 1) > hi) return i;
    for (size_t k = 2; k < len; k++)
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string valid_utf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t bad_at = utf8_error_at(std::string_view(s).substr(i));
    if (bad_at == std::string_view::npos) {
      out.append(s, i, std::string::npos);
      break;
    }
    out.append(s, i, bad_at);
    out += "\xEF\xBF\xBD";
    i += bad_at + 1;
  }
  return out;
}

Json parse_json(std::string_view text, const char* op, const std::string& what, SourceLocation where) {
  Parser p{text, 0, op, what, where};
  if (size_t bad = utf8_error_at(text); bad != std::string_view::npos) {
    p.i = bad;
    p.fail("not UTF-8");
  }
  Json j = p.value(0);
  p.skip_ws();
  if (p.i != text.size()) p.fail("text after the value");
  return j;
}

}  // namespace tg::base
