// Chat templates' Jinja: a lexer that applies jinja2's whitespace rules (trim_blocks, lstrip_blocks, - and +), a
// recursive-descent parser into a small tree, and an evaluator with Python's value semantics.
#include "text/jinja.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>

namespace tg::text::jinja {

const Value* Value::find(const std::string& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : *dict)
    if (k == key) return &v;
  return nullptr;
}

namespace {

using Kind = Value::Kind;

[[noreturn]] void fail(const std::string& what, int line, SourceLocation where) {
  throw ArgumentError("chat template", "line " + std::to_string(line) + ": " + what, where);
}

// ---- lexing: the template's text and tags, whitespace rules applied ----

struct Segment {
  enum class Type { Text, Expr, Stmt } type;
  std::string text;  // the text, or the tag's inside
  int line;
};

// The line of each position asked for, in increasing order: one pass over the text in all (a template of many tags
// would otherwise be counted from its start for each)
class LineCounter {
 public:
  explicit LineCounter(const std::string& s) : s_(s) {}
  int at(size_t pos) {
    pos = std::min(pos, s_.size());
    if (pos > counted_) line_ += static_cast<int>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(counted_), s_.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    counted_ = std::max(counted_, pos);
    return line_;
  }

 private:
  const std::string& s_;
  size_t counted_ = 0;
  int line_ = 1;
};

// where the tag that opens at `from` ends (the index of its closing delimiter), quotes respected
size_t tag_end(const std::string& s, size_t from, const char* close) {
  char quote = 0;
  for (size_t i = from; i + 1 < s.size(); i++) {
    char c = s[i];
    if (quote) {
      if (c == '\\') i++;
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == close[0] && s[i + 1] == close[1]) {
      return i;
    }
  }
  return std::string::npos;
}

std::vector<Segment> segments(std::string src, SourceLocation where) {
  // jinja2 drops one newline at the end of a template (keep_trailing_newline is off)
  if (!src.empty() && src.back() == '\n') src.pop_back();
  if (!src.empty() && src.back() == '\r') src.pop_back();
  std::vector<Segment> out;
  std::string text;
  LineCounter lines(src);
  size_t pos = 0, text_start = 0;  // where in src the pending text began
  while (pos < src.size()) {
    size_t open = src.find('{', pos);
    while (open != std::string::npos && open + 1 < src.size() && src[open + 1] != '{' && src[open + 1] != '%' && src[open + 1] != '#')
      open = src.find('{', open + 1);
    if (open == std::string::npos || open + 1 >= src.size()) {
      text += src.substr(pos);
      break;
    }
    text += src.substr(pos, open - pos);
    char kind = src[open + 1];
    const char* close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t inner = open + 2;
    bool strip_before = inner < src.size() && src[inner] == '-', keep_before = inner < src.size() && src[inner] == '+';
    if (strip_before || keep_before) inner++;
    size_t end = kind == '#' ? src.find("#}", inner) : tag_end(src, inner, close);
    if (end == std::string::npos) fail(std::string("unclosed ") + "{" + kind + " tag", lines.at(open), where);
    bool strip_after = end > inner && src[end - 1] == '-';
    std::string body = src.substr(inner, end - inner - (strip_after ? 1 : 0));
    bool block = kind != '{';
    if (strip_before) {
      text.erase(text.find_last_not_of(" \t\r\n") + 1);
    } else if (block && !keep_before) {  // lstrip_blocks: spaces and tabs from the line's start to a block tag
      size_t nl = text.find_last_of('\n');
      bool line_start = nl != std::string::npos || text_start == 0 || src[text_start - 1] == '\n';
      size_t start = nl == std::string::npos ? 0 : nl + 1;
      if (line_start && text.find_first_not_of(" \t", start) == std::string::npos) text.erase(start);
    }
    int line = lines.at(open);
    if (!text.empty()) out.push_back({Segment::Type::Text, text, line});
    text.clear();
    if (kind != '#') out.push_back({kind == '{' ? Segment::Type::Expr : Segment::Type::Stmt, body, line});
    pos = end + 2;
    if (strip_after) {
      while (pos < src.size() && std::isspace(static_cast<unsigned char>(src[pos]))) pos++;
    } else if (block && pos < src.size() && src[pos] == '\n') {  // trim_blocks: the newline after a block tag
      pos++;
    } else if (block && pos + 1 < src.size() && src[pos] == '\r' && src[pos + 1] == '\n') {
      pos += 2;
    }
    text_start = pos;
  }
  if (!text.empty()) out.push_back({Segment::Type::Text, text, lines.at(src.size())});
  return out;
}

// ---- tokens inside a tag ----

struct Token {
  enum class Type { Name, Int, Float, String, Op, End } type;
  std::string text;
  int64_t integer = 0;
  double number = 0;
};

std::vector<Token> tokenize(const std::string& s, int line, SourceLocation where) {
  std::vector<Token> out;
  size_t i = 0;
  static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ".", ",", ":", "|", "~",
                              "+", "-", "*", "/", "%", "<", ">", "="};
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      i++;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) j++;
      out.push_back({Token::Type::Name, s.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) j++;
      bool is_float = j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]));
      if (is_float) {
        j++;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) j++;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) k++;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
          is_float = true, j = k;
          while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) j++;
        }
      }
      std::string digits = s.substr(i, j - i);
      digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
      Token t{is_float ? Token::Type::Float : Token::Type::Int, digits};
      try {
        if (is_float) t.number = std::stod(digits);
        else t.integer = std::stoll(digits);
      } catch (const std::exception&) {
        fail("number " + digits + " out of range", line, where);
      }
      out.push_back(t);
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string v;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; j++) {
        if (s[j] != '\\' || j + 1 >= s.size()) {
          v += s[j];
          continue;
        }
        char e = s[++j];
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case '\\': v += '\\'; break;
          case '\'': v += '\''; break;
          case '"': v += '"'; break;
          default: v += '\\', v += e;
        }
      }
      if (j >= s.size()) fail("unclosed string", line, where);
      out.push_back({Token::Type::String, v});
      i = j + 1;
    } else {
      bool matched = false;
      for (const char* op : ops) {
        size_t n = std::char_traits<char>::length(op);
        if (s.compare(i, n, op) == 0) {
          out.push_back({Token::Type::Op, op});
          i += n, matched = true;
          break;
        }
      }
      if (!matched) fail(std::string("unexpected character '") + c + "'", line, where);
    }
  }
  out.push_back({Token::Type::End, ""});
  return out;
}

// ---- the tree ----

// A recursion depth limit for the parser and the tree builder: a file's template is untrusted input, and a deep
// nesting would otherwise overflow the stack.
struct Nesting {
  int& depth;
  Nesting(int& d, int line, SourceLocation where) : depth(d) {
    if (++depth > 200) fail("nested too deeply", line, where);
  }
  ~Nesting() { depth--; }
};

}  // namespace

// the parsed template (named, not anonymous: Template::Program holds it)
namespace ast {

struct Expr;
using ExprP = std::shared_ptr<const Expr>;
struct Expr {
  enum class Type { Literal, Name, Attr, Index, Slice, Call, Filter, Test, Not, Neg, Binary, And, Or, Cond, ListOf, DictOf };
  Type type;
  std::string name;  // Name, Attr, Filter and Test names; Binary's operator
  Value literal;
  std::vector<ExprP> args;  // operands; a call's, filter's or test's subject first, then its positional arguments
  std::vector<std::pair<std::string, ExprP>> kwargs;
  bool negated = false;  // `is not`, `not in`
  int line = 0;
};

struct Node {
  enum class Type { Text, Print, If, For, Set, SetBlock, Break, Continue };
  explicit Node(Type t, std::string s = "") : type(t), text(std::move(s)) {}
  Type type;
  std::string text;                 // Text
  ExprP expr;                       // Print, Set's value, For's iterable
  std::vector<std::string> target;  // For: the loop variables; Set: a name, or a name and an attribute
  ExprP filter;                     // For's `if`
  std::vector<std::pair<ExprP, std::vector<Node>>> branches;  // If: (condition, body), else with a null condition
  std::vector<Node> body, otherwise;                          // For, SetBlock
  int line = 0;
};

}  // namespace ast
using ast::Expr;
using ast::ExprP;
using ast::Node;

namespace {

const std::set<std::string> kFilters = {"abs", "capitalize", "count", "d", "default", "first", "float", "indent", "int",
                                        "items", "join", "last", "length", "list", "lower", "replace", "reverse",
                                        "safe", "string", "title", "tojson", "trim", "upper"};
const std::set<std::string> kTests = {"defined", "undefined", "none", "string", "number", "integer", "float", "boolean",
                                      "true", "false", "mapping", "iterable", "sequence", "odd", "even", "eq",
                                      "equalto", "ne", "in"};

class Parser {
 public:
  Parser(std::vector<Token> tokens, int line, SourceLocation where) : t_(std::move(tokens)), line_(line), where_(where) {}

  ExprP expression() {  // x if c else y
    Nesting guard(depth_, line_, where_);
    ExprP e = or_expr();
    if (accept_name("if")) {
      ExprP cond = or_expr();
      ExprP other = accept_name("else") ? expression() : literal(Value());
      return make(Expr::Type::Cond, {cond, e, other});
    }
    return e;
  }
  bool at_end() const { return t_[i_].type == Token::Type::End; }
  void expect_end() {
    if (!at_end()) fail("unexpected '" + t_[i_].text + "'", line_, where_);
  }
  bool accept_name(const char* n) {
    if (t_[i_].type != Token::Type::Name || t_[i_].text != n) return false;
    i_++;
    return true;
  }
  std::string name() {
    if (t_[i_].type != Token::Type::Name) fail("expected a name, got '" + t_[i_].text + "'", line_, where_);
    return t_[i_++].text;
  }
  bool accept_op(const char* op) {
    if (t_[i_].type != Token::Type::Op || t_[i_].text != op) return false;
    i_++;
    return true;
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(std::string("expected '") + op + "', got '" + t_[i_].text + "'", line_, where_);
  }
  ExprP or_expr() {
    ExprP e = and_expr();
    while (accept_name("or")) e = make(Expr::Type::Or, {e, and_expr()});
    return e;
  }

 private:
  ExprP make(Expr::Type type, std::vector<ExprP> args, std::string n = "") const {
    auto e = std::make_shared<Expr>();
    e->type = type, e->args = std::move(args), e->name = std::move(n), e->line = line_;
    return e;
  }
  ExprP literal(Value v) const {
    auto e = std::make_shared<Expr>();
    e->type = Expr::Type::Literal, e->literal = std::move(v), e->line = line_;
    return e;
  }
  ExprP and_expr() {
    ExprP e = not_expr();
    while (accept_name("and")) e = make(Expr::Type::And, {e, not_expr()});
    return e;
  }
  ExprP not_expr() {
    Nesting guard(depth_, line_, where_);
    if (accept_name("not")) return make(Expr::Type::Not, {not_expr()});
    return compare();
  }
  ExprP compare() {
    ExprP e = concat();
    for (;;) {
      static const char* ops[] = {"==", "!=", "<=", ">=", "<", ">"};
      const char* found = nullptr;
      for (const char* op : ops)
        if (!found && accept_op(op)) found = op;
      if (found) {
        e = make(Expr::Type::Binary, {e, concat()}, found);
      } else if (accept_name("in")) {
        e = make(Expr::Type::Binary, {e, concat()}, "in");
      } else if (t_[i_].type == Token::Type::Name && t_[i_].text == "not" && t_[i_ + 1].type == Token::Type::Name && t_[i_ + 1].text == "in") {
        i_ += 2;
        auto n = std::make_shared<Expr>(*make(Expr::Type::Binary, {e, concat()}, "in"));
        n->negated = true;
        e = n;
      } else {
        return e;
      }
    }
  }
  ExprP concat() {
    ExprP e = additive();
    while (accept_op("~")) e = make(Expr::Type::Binary, {e, additive()}, "~");
    return e;
  }
  ExprP additive() {
    ExprP e = multiplicative();
    for (;;) {
      if (accept_op("+")) e = make(Expr::Type::Binary, {e, multiplicative()}, "+");
      else if (accept_op("-")) e = make(Expr::Type::Binary, {e, multiplicative()}, "-");
      else return e;
    }
  }
  ExprP multiplicative() {
    ExprP e = power();
    for (;;) {
      const char* op = accept_op("//") ? "//" : accept_op("*") ? "*" : accept_op("/") ? "/" : accept_op("%") ? "%" : nullptr;
      if (!op) return e;
      e = make(Expr::Type::Binary, {e, power()}, op);
    }
  }
  // as jinja2: a sign binds tighter than ** and than filters (-2 ** 2 is 4, -3|abs is 3)
  ExprP power() {
    ExprP e = unary(true);
    while (accept_op("**")) e = make(Expr::Type::Binary, {e, unary(true)}, "**");
    return e;
  }
  ExprP unary(bool with_filters) {
    Nesting guard(depth_, line_, where_);
    ExprP e = accept_op("-") ? make(Expr::Type::Neg, {unary(false)}) : accept_op("+") ? unary(false) : postfix(primary());
    return with_filters ? filtered(e) : e;
  }
  void call_args(Expr& e) {
    if (accept_op(")")) return;
    do {
      if (t_[i_].type == Token::Type::Name && t_[i_ + 1].type == Token::Type::Op && t_[i_ + 1].text == "=") {
        std::string k = name();
        i_++;
        e.kwargs.emplace_back(k, expression());
      } else {
        e.args.push_back(expression());
      }
    } while (accept_op(","));
    expect_op(")");
  }
  ExprP postfix(ExprP e) {
    for (;;) {
      if (accept_op(".")) {
        e = make(Expr::Type::Attr, {e}, name());
      } else if (accept_op("[")) {
        std::vector<ExprP> parts{e};
        bool slice = false;
        for (int k = 0; k < 3; k++) {
          bool empty = t_[i_].type == Token::Type::Op && (t_[i_].text == ":" || t_[i_].text == "]");
          parts.push_back(empty ? nullptr : expression());
          if (!accept_op(":")) break;
          slice = true;
        }
        expect_op("]");
        if (!slice) e = make(Expr::Type::Index, {parts[0], parts[1]});
        else e = make(Expr::Type::Slice, {parts[0], parts[1], parts.size() > 2 ? parts[2] : nullptr, parts.size() > 3 ? parts[3] : nullptr});
      } else if (accept_op("(")) {
        auto c = std::make_shared<Expr>(*make(Expr::Type::Call, {e}));
        call_args(*c);
        e = c;
      } else {
        return e;
      }
    }
  }
  ExprP filtered(ExprP e) {
    for (;;) {
      if (accept_op("|")) {
        std::string f = name();
        if (!kFilters.count(f)) fail("unsupported filter '" + f + "'", line_, where_);
        auto c = std::make_shared<Expr>(*make(Expr::Type::Filter, {e}, f));
        if (accept_op("(")) call_args(*c);
        e = c;
      } else if (accept_name("is")) {
        bool negated = accept_name("not");
        std::string test = t_[i_].type == Token::Type::Name && (t_[i_].text == "none" || t_[i_].text == "true" || t_[i_].text == "false")
                               ? t_[i_++].text : name();
        if (!kTests.count(test)) fail("unsupported test '" + test + "'", line_, where_);
        auto c = std::make_shared<Expr>(*make(Expr::Type::Test, {e}, test));
        c->negated = negated;
        if (accept_op("(")) {
          call_args(*c);
        } else if (t_[i_].type != Token::Type::End && t_[i_].type != Token::Type::Op && t_[i_].type != Token::Type::Name) {
          c->args.push_back(primary());  // `x is divisibleby 3`'s argument form
        }
        e = c;
      } else {
        return e;
      }
    }
  }
  ExprP primary() {
    const Token t = t_[i_];
    switch (t.type) {
      case Token::Type::Int: i_++; return literal(Value::of(t.integer));
      case Token::Type::Float: i_++; return literal(Value::of(t.number));
      case Token::Type::String: {
        i_++;
        std::string s = t.text;
        while (t_[i_].type == Token::Type::String) s += t_[i_++].text;  // adjacent literals join, as in Python
        return literal(Value::of(s));
      }
      case Token::Type::Name: {
        i_++;
        if (t.text == "true" || t.text == "True") return literal(Value::of(true));
        if (t.text == "false" || t.text == "False") return literal(Value::of(false));
        if (t.text == "none" || t.text == "None") return literal(Value::none());
        auto e = make(Expr::Type::Name, {}, t.text);
        return e;
      }
      case Token::Type::Op:
        if (accept_op("(")) {
          ExprP e = expression();
          if (accept_op(",")) {  // a tuple: a list here
            std::vector<ExprP> items{e};
            if (!accept_op(")")) {
              do items.push_back(expression());
              while (accept_op(",") && !(t_[i_].type == Token::Type::Op && t_[i_].text == ")"));
              expect_op(")");
            }
            return make(Expr::Type::ListOf, items);
          }
          expect_op(")");
          return e;
        }
        if (accept_op("[")) {
          std::vector<ExprP> items;
          if (!accept_op("]")) {
            do {
              if (t_[i_].type == Token::Type::Op && t_[i_].text == "]") break;
              items.push_back(expression());
            } while (accept_op(","));
            expect_op("]");
          }
          return make(Expr::Type::ListOf, items);
        }
        if (accept_op("{")) {
          auto d = std::make_shared<Expr>(*make(Expr::Type::DictOf, {}));
          if (!accept_op("}")) {
            do {
              if (t_[i_].type == Token::Type::Op && t_[i_].text == "}") break;
              ExprP k = expression();
              expect_op(":");
              d->args.push_back(k), d->args.push_back(expression());
            } while (accept_op(","));
            expect_op("}");
          }
          return d;
        }
        break;
      case Token::Type::End: fail("unexpected end of expression", line_, where_);
    }
    fail("unexpected '" + t.text + "'", line_, where_);
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int line_;
  int depth_ = 0;
  SourceLocation where_;
};

// The statements of `segs` from `pos` up to (not including) a statement whose first word is in `stops`.
class TreeBuilder {
 public:
  TreeBuilder(std::vector<Segment> segs, SourceLocation where) : segs_(std::move(segs)), where_(where) {}

  std::vector<Node> block(const std::set<std::string>& stops, std::string* stopped_by, std::unique_ptr<Parser>* rest) {
    Nesting guard(depth_, pos_ < segs_.size() ? segs_[pos_].line : 1, where_);
    std::vector<Node> out;
    while (pos_ < segs_.size()) {
      const Segment& s = segs_[pos_];
      if (s.type == Segment::Type::Text) {
        out.push_back(Node(Node::Type::Text, s.text));
        pos_++;
        continue;
      }
      auto p = std::make_unique<Parser>(tokenize(s.text, s.line, where_), s.line, where_);
      if (s.type == Segment::Type::Expr) {
        Node n(Node::Type::Print);
        n.expr = p->expression(), n.line = s.line;
        p->expect_end();
        out.push_back(std::move(n));
        pos_++;
        continue;
      }
      std::string word = p->name();
      if (stops.count(word)) {
        if (stopped_by) *stopped_by = word;
        if (rest) *rest = std::move(p);
        pos_++;
        return out;
      }
      pos_++;
      out.push_back(statement(word, *p, s.line));
    }
    if (!stops.empty()) fail("missing {% " + *stops.begin() + " %}", segs_.empty() ? 1 : segs_.back().line, where_);
    return out;
  }

 private:
  Node statement(const std::string& word, Parser& p, int line) {
    Node n(Node::Type::Text);
    n.line = line;
    if (word == "if") {
      n.type = Node::Type::If;
      ExprP cond = p.expression();
      p.expect_end();
      for (;;) {
        std::string stop;
        std::unique_ptr<Parser> rest;
        std::vector<Node> body = block({"endif", "elif", "else"}, &stop, &rest);
        n.branches.emplace_back(cond, std::move(body));
        if (stop == "endif") break;
        if (stop == "else") {
          rest->expect_end();
          n.branches.emplace_back(nullptr, block({"endif"}, nullptr, &rest));
          break;
        }
        cond = rest->expression();
        rest->expect_end();
      }
    } else if (word == "for") {
      n.type = Node::Type::For;
      n.target.push_back(p.name());
      while (p.accept_op(",")) n.target.push_back(p.name());
      if (!p.accept_name("in")) fail("expected 'in' in for", line, where_);
      n.expr = p.or_expr();  // not expression(): its `if` is the loop's filter
      if (p.accept_name("if")) n.filter = p.expression();
      if (p.accept_name("recursive")) fail("recursive loops are not supported", line, where_);
      p.expect_end();
      std::string stop;
      std::unique_ptr<Parser> rest;
      n.body = block({"endfor", "else"}, &stop, &rest);
      if (stop == "else") n.otherwise = block({"endfor"}, nullptr, nullptr);
    } else if (word == "set") {
      n.target.push_back(p.name());
      if (p.accept_op(".")) n.target.push_back(p.name());
      if (p.accept_op("=")) {
        n.type = Node::Type::Set;
        n.expr = p.expression();
        p.expect_end();
      } else {
        p.expect_end();
        n.type = Node::Type::SetBlock;
        n.body = block({"endset"}, nullptr, nullptr);
      }
    } else if (word == "break" || word == "continue") {
      p.expect_end();
      n.type = word == "break" ? Node::Type::Break : Node::Type::Continue;
    } else if (word == "generation") {  // Hugging Face's marker of the assistant's text: its body, rendered
      p.expect_end();
      n.type = Node::Type::If;
      auto always = std::make_shared<Expr>();
      always->type = Expr::Type::Literal, always->literal = Value::of(true);
      n.branches.emplace_back(always, block({"endgeneration"}, nullptr, nullptr));
    } else {
      fail("unsupported statement '" + word + "'", line, where_);
    }
    return n;
  }

  std::vector<Segment> segs_;
  size_t pos_ = 0;
  int depth_ = 0;
  SourceLocation where_;
};

// ---- values as Python writes them ----

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[40];
  int p = 1;
  for (; p <= 17; p++) {  // the shortest that reads back the same (Python's repr)
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::stoi(s.substr(e + 1));
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return (neg ? "-" : "") + out;
}

std::string str(const Value& v);
std::string repr(const Value& v) {
  if (v.kind != Kind::String) return str(v);
  char q = v.str.find('\'') != std::string::npos && v.str.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (char c : v.str) {
    if (c == q || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + q;
}

std::string str(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "";
    case Kind::Function: return "<function " + v.str + ">";
    case Kind::None: return "None";
    case Kind::Bool: return v.boolean ? "True" : "False";
    case Kind::Int: return std::to_string(v.integer);
    case Kind::Float: return float_repr(v.number);
    case Kind::String: return v.str;
    case Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < v.list->size(); i++) out += (i ? ", " : "") + repr((*v.list)[i]);
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = "{";
      for (size_t i = 0; i < v.dict->size(); i++) out += (i ? ", " : "") + repr(Value::of((*v.dict)[i].first)) + ": " + repr((*v.dict)[i].second);
      return out + "}";
    }
  }
  return "";
}

// Python's json.dumps(v, ensure_ascii=False, indent=indent), as Hugging Face's tojson filter calls it
void to_json(const Value& v, int indent, int depth, std::string& out) {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (v.kind) {
    case Kind::Undefined:
    case Kind::Function:
    case Kind::None: out += "null"; return;
    case Kind::Bool: out += v.boolean ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(v.integer); return;
    case Kind::Float: out += std::isnan(v.number) ? "NaN" : std::isinf(v.number) ? (v.number > 0 ? "Infinity" : "-Infinity") : float_repr(v.number); return;
    case Kind::String:
      out += '"';
      for (unsigned char c : v.str) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\b') out += "\\b";
        else if (c == '\f') out += "\\f";
        else if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
      }
      out += '"';
      return;
    case Kind::List:
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); i++) {
        if (i) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        to_json((*v.list)[i], indent, depth + 1, out);
      }
      newline(depth);
      out += ']';
      return;
    case Kind::Dict:
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < v.dict->size(); i++) {
        if (i) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        to_json(Value::of((*v.dict)[i].first), indent, depth + 1, out);
        out += ": ";
        to_json((*v.dict)[i].second, indent, depth + 1, out);
      }
      newline(depth);
      out += '}';
      return;
  }
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return v.boolean;
    case Kind::Int: return v.integer != 0;
    case Kind::Float: return v.number != 0;
    case Kind::String: return !v.str.empty();
    case Kind::List: return !v.list->empty();
    case Kind::Dict: return !v.dict->empty();
    case Kind::Function: return true;
  }
  return false;
}

bool numeric(const Value& v) { return v.kind == Kind::Int || v.kind == Kind::Float || v.kind == Kind::Bool; }
double as_double(const Value& v) { return v.kind == Kind::Float ? v.number : v.kind == Kind::Bool ? v.boolean : static_cast<double>(v.integer); }
int64_t as_int(const Value& v) { return v.kind == Kind::Bool ? v.boolean : v.integer; }
bool integral(const Value& v) { return v.kind == Kind::Int || v.kind == Kind::Bool; }

bool equal(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) return integral(a) && integral(b) ? as_int(a) == as_int(b) : as_double(a) == as_double(b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::String:
    case Kind::Function: return a.str == b.str;
    case Kind::List:
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); i++)
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Kind::Dict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, v] : *a.dict) {
        const Value* o = b.find(k);
        if (!o || !equal(v, *o)) return false;
      }
      return true;
    default: return true;  // None, Undefined
  }
}

const char* type_name(const Value& v) {
  static const char* names[] = {"undefined", "NoneType", "bool", "int", "float", "str", "list", "dict", "function"};
  return names[static_cast<int>(v.kind)];
}

// ---- evaluation ----

enum class Flow { Normal, Break, Continue };

class Renderer {
 public:
  Renderer(const std::map<std::string, Value>& vars, SourceLocation where) : where_(where) {
    scopes_.emplace_back(vars.begin(), vars.end());
  }

  Flow run(const std::vector<Node>& nodes, std::string& out) {
    for (const Node& n : nodes) {
      Flow f = exec(n, out);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

 private:
  [[noreturn]] void error(const std::string& what, int line) const { fail(what, line, where_); }

  // a file's template is untrusted: loops and output are bounded, so a render never hangs or exhausts memory
  static constexpr int64_t kMaxSteps = 1'000'000;
  static constexpr size_t kMaxText = size_t{64} << 20;
  void spend(int line) {
    if (++steps_ > kMaxSteps) error("the template runs too long (over a million loop steps)", line);
  }
  void check_size(size_t n, int line) const {
    if (n > kMaxText) error("the template's output grows past 64 MB", line);
  }

  Flow exec(const Node& n, std::string& out) {
    check_size(out.size(), n.line);
    switch (n.type) {
      case Node::Type::Text: out += n.text; return Flow::Normal;
      case Node::Type::Print: out += str(eval(*n.expr)); return Flow::Normal;
      case Node::Type::If:
        for (const auto& [cond, body] : n.branches)
          if (!cond || truthy(eval(*cond))) return run(body, out);
        return Flow::Normal;
      case Node::Type::For: return loop(n, out);
      case Node::Type::Set: assign(n, eval(*n.expr)); return Flow::Normal;
      case Node::Type::SetBlock: {
        std::string captured;
        run(n.body, captured);
        assign(n, Value::of(captured));
        return Flow::Normal;
      }
      case Node::Type::Break: return Flow::Break;
      case Node::Type::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  void assign(const Node& n, Value v) {
    if (n.target.size() == 1) {
      scopes_.back()[n.target[0]] = std::move(v);
      return;
    }
    Value ns = lookup(n.target[0]);
    if (ns.kind != Kind::Dict) error("cannot set an attribute of " + std::string(type_name(ns)) + " '" + n.target[0] + "'", n.line);
    for (auto& [k, old] : *ns.dict)
      if (k == n.target[1]) {
        old = std::move(v);
        return;
      }
    ns.dict->emplace_back(n.target[1], std::move(v));
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end()) return f->second;
    static const std::set<std::string> builtins = {"range", "namespace", "dict", "raise_exception", "strftime_now"};
    if (builtins.count(name)) {  // `strftime_now is defined` holds, as in Hugging Face's environment
      Value f;
      f.kind = Kind::Function, f.str = name;
      return f;
    }
    return Value();
  }

  List items_of(const Value& v, int line) const {
    switch (v.kind) {
      case Kind::List: return *v.list;
      case Kind::Dict: {
        List keys;
        for (const auto& [k, _] : *v.dict) keys.push_back(Value::of(k));
        return keys;
      }
      case Kind::String: {
        List chars;
        for (size_t i = 0; i < v.str.size();) {  // by UTF-8 character
          size_t n = 1;
          unsigned char c = static_cast<unsigned char>(v.str[i]);
          if (c >= 0xf0) n = 4;
          else if (c >= 0xe0) n = 3;
          else if (c >= 0xc0) n = 2;
          chars.push_back(Value::of(v.str.substr(i, n)));
          i += n;
        }
        return chars;
      }
      case Kind::Undefined: return {};
      default: error(std::string("'") + type_name(v) + "' object is not iterable", line);
    }
  }

  Flow loop(const Node& n, std::string& out) {
    List all = items_of(eval(*n.expr), n.line);
    List items;
    for (const Value& v : all) {
      spend(n.line);
      if (n.filter) {
        scopes_.emplace_back();
        bind(n, v);
        bool keep = truthy(eval(*n.filter));
        scopes_.pop_back();
        if (!keep) continue;
      }
      items.push_back(v);
    }
    if (items.empty()) return run(n.otherwise, out);
    for (size_t i = 0; i < items.size(); i++) {
      spend(n.line);
      scopes_.emplace_back();  // each iteration's own: a set inside does not outlive it
      bind(n, items[i]);
      int64_t len = static_cast<int64_t>(items.size()), k = static_cast<int64_t>(i);
      Dict loopvar{{"index", Value::of(k + 1)}, {"index0", Value::of(k)}, {"first", Value::of(i == 0)},
                   {"last", Value::of(i + 1 == items.size())}, {"length", Value::of(len)},
                   {"revindex", Value::of(len - k)}, {"revindex0", Value::of(len - k - 1)},
                   {"previtem", i ? items[i - 1] : Value()}, {"nextitem", i + 1 < items.size() ? items[i + 1] : Value()}};
      scopes_.back()["loop"] = Value::of(std::move(loopvar));
      Flow f = run(n.body, out);
      scopes_.pop_back();
      if (f == Flow::Break) break;
    }
    return Flow::Normal;
  }

  void bind(const Node& n, const Value& v) {
    if (n.target.size() == 1) {
      scopes_.back()[n.target[0]] = v;
      return;
    }
    if (v.kind != Kind::List || v.list->size() != n.target.size())
      error("cannot unpack " + std::string(type_name(v)) + " into " + std::to_string(n.target.size()) + " loop variables", n.line);
    for (size_t i = 0; i < n.target.size(); i++) scopes_.back()[n.target[i]] = (*v.list)[i];
  }

  Value eval(const Expr& e) {
    switch (e.type) {
      case Expr::Type::Literal: return e.literal;
      case Expr::Type::Name: return lookup(e.name);
      case Expr::Type::ListOf: {
        List l;
        for (const ExprP& a : e.args) l.push_back(eval(*a));
        return Value::of(std::move(l));
      }
      case Expr::Type::DictOf: {
        Dict d;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = eval(*e.args[i]);
          if (k.kind != Kind::String) error("dict keys must be strings here", e.line);
          d.emplace_back(k.str, eval(*e.args[i + 1]));
        }
        return Value::of(std::move(d));
      }
      case Expr::Type::Attr: {
        Value obj = eval(*e.args[0]);
        if (obj.kind == Kind::Undefined) error("'" + describe(*e.args[0]) + "' is undefined", e.line);
        const Value* m = obj.find(e.name);
        return m ? *m : Value();
      }
      case Expr::Type::Index: return index(eval(*e.args[0]), eval(*e.args[1]), e);
      case Expr::Type::Slice: return slice(e);
      case Expr::Type::Call: return call(e);
      case Expr::Type::Filter: return filter(e);
      case Expr::Type::Test: {
        bool r = test(e);
        return Value::of(e.negated ? !r : r);
      }
      case Expr::Type::Not: return Value::of(!truthy(eval(*e.args[0])));
      case Expr::Type::Neg: {
        Value v = eval(*e.args[0]);
        if (integral(v)) return Value::of(-as_int(v));
        if (v.kind == Kind::Float) return Value::of(-v.number);
        error(std::string("bad operand type for unary -: '") + type_name(v) + "'", e.line);
      }
      case Expr::Type::And: {
        Value a = eval(*e.args[0]);
        return truthy(a) ? eval(*e.args[1]) : a;
      }
      case Expr::Type::Or: {
        Value a = eval(*e.args[0]);
        return truthy(a) ? a : eval(*e.args[1]);
      }
      case Expr::Type::Cond: return truthy(eval(*e.args[0])) ? eval(*e.args[1]) : eval(*e.args[2]);
      case Expr::Type::Binary: return binary(e);
    }
    return Value();
  }

  static std::string describe(const Expr& e) {
    if (e.type == Expr::Type::Name) return e.name;
    if (e.type == Expr::Type::Attr) return describe(*e.args[0]) + "." + e.name;
    return "value";
  }

  Value index(const Value& obj, const Value& key, const Expr& e) {
    if (obj.kind == Kind::Undefined) error("'" + describe(*e.args[0]) + "' is undefined", e.line);
    if (obj.kind == Kind::Dict) {
      if (key.kind != Kind::String) return Value();
      const Value* m = obj.find(key.str);
      return m ? *m : Value();
    }
    if ((obj.kind == Kind::List || obj.kind == Kind::String) && integral(key)) {
      int64_t n = obj.kind == Kind::List ? static_cast<int64_t>(obj.list->size()) : static_cast<int64_t>(obj.str.size());
      int64_t i = as_int(key) < 0 ? as_int(key) + n : as_int(key);
      if (i < 0 || i >= n) return Value();  // jinja2: an undefined value, not an error
      return obj.kind == Kind::List ? (*obj.list)[static_cast<size_t>(i)] : Value::of(obj.str.substr(static_cast<size_t>(i), 1));
    }
    return Value();
  }

  Value slice(const Expr& e) {
    Value obj = eval(*e.args[0]);
    if (obj.kind != Kind::List && obj.kind != Kind::String) error(std::string("cannot slice ") + type_name(obj), e.line);
    int64_t n = obj.kind == Kind::List ? static_cast<int64_t>(obj.list->size()) : static_cast<int64_t>(obj.str.size());
    auto part = [&](const ExprP& p) -> std::optional<int64_t> {
      if (!p) return std::nullopt;
      Value v = eval(*p);
      if (v.kind == Kind::None) return std::nullopt;
      if (!integral(v)) error("slice indices must be integers", e.line);
      return as_int(v);
    };
    std::optional<int64_t> step_v = part(e.args[3]);
    int64_t step = step_v.value_or(1);
    if (step == 0) error("slice step cannot be zero", e.line);
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {  // Python's slice.indices
      if (!v) return dflt;
      int64_t x = *v < 0 ? *v + n : *v;
      return step > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
    };
    int64_t start = clamp(part(e.args[1]), step > 0 ? 0 : n - 1), stop = clamp(part(e.args[2]), step > 0 ? n : -1);
    List l;
    std::string s;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (obj.kind == Kind::List) l.push_back((*obj.list)[static_cast<size_t>(i)]);
      else s += obj.str[static_cast<size_t>(i)];
    }
    return obj.kind == Kind::List ? Value::of(std::move(l)) : Value::of(s);
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    Value a = eval(*e.args[0]), b = eval(*e.args[1]);
    if (op == "~") {
      std::string r = str(a);
      check_size(r.size() + str(b).size(), e.line);
      return Value::of(r + str(b));
    }
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    if (op == "in") {
      bool r = false;
      if (b.kind == Kind::String && a.kind == Kind::String) r = b.str.find(a.str) != std::string::npos;
      else if (b.kind == Kind::List) r = std::any_of(b.list->begin(), b.list->end(), [&](const Value& x) { return equal(a, x); });
      else if (b.kind == Kind::Dict) r = a.kind == Kind::String && b.find(a.str);
      else if (b.kind != Kind::Undefined) error(std::string("argument of type '") + type_name(b) + "' is not iterable", e.line);
      return Value::of(e.negated ? !r : r);
    }
    if (a.kind == Kind::Undefined || b.kind == Kind::Undefined)
      error("'" + describe(*e.args[a.kind == Kind::Undefined ? 0 : 1]) + "' is undefined", e.line);
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      int c;
      if (numeric(a) && numeric(b)) c = as_double(a) < as_double(b) ? -1 : as_double(a) > as_double(b) ? 1 : 0;
      else if (a.kind == Kind::String && b.kind == Kind::String) c = a.str.compare(b.str);
      else error(std::string("'") + op + "' not supported between " + type_name(a) + " and " + type_name(b), e.line);
      return Value::of(op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0);
    }
    if (op == "+" && a.kind == Kind::String && b.kind == Kind::String) {
      check_size(a.str.size() + b.str.size(), e.line);
      return Value::of(a.str + b.str);
    }
    if (op == "+" && a.kind == Kind::List && b.kind == Kind::List) {
      check_size(a.list->size() + b.list->size(), e.line);
      List l = *a.list;
      l.insert(l.end(), b.list->begin(), b.list->end());
      return Value::of(std::move(l));
    }
    if (op == "*" && ((a.kind == Kind::String && integral(b)) || (integral(a) && b.kind == Kind::String))) {
      const std::string& s = a.kind == Kind::String ? a.str : b.str;
      int64_t n = integral(a) ? as_int(a) : as_int(b);
      if (n > 0 && !s.empty()) check_size(static_cast<size_t>(std::min<int64_t>(n, int64_t{1} << 40)) * s.size(), e.line);
      std::string r;
      for (int64_t i = 0; i < n; i++) r += s;
      return Value::of(r);
    }
    if (!numeric(a) || !numeric(b))
      error("unsupported operand types for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'", e.line);
    bool ints = integral(a) && integral(b);
    int64_t x = as_int(a), y = as_int(b);
    double p = as_double(a), q = as_double(b);
    if (op == "+") return ints ? Value::of(x + y) : Value::of(p + q);
    if (op == "-") return ints ? Value::of(x - y) : Value::of(p - q);
    if (op == "*") return ints ? Value::of(x * y) : Value::of(p * q);
    if (op == "**") return ints && y >= 0 ? Value::of(static_cast<int64_t>(std::llround(std::pow(p, q)))) : Value::of(std::pow(p, q));
    if ((ints && y == 0) || (!ints && q == 0)) error("division by zero", e.line);
    if (op == "/") return Value::of(p / q);
    if (op == "//") {
      if (ints) return Value::of(x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0));
      return Value::of(std::floor(p / q));
    }
    if (op == "%") {
      if (ints) {
        int64_t r = x % y;
        return Value::of(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
      }
      double r = std::fmod(p, q);
      return Value::of(r != 0 && ((r < 0) != (q < 0)) ? r + q : r);
    }
    error("unsupported operator " + op, e.line);
  }

  std::vector<Value> positional(const Expr& e, size_t from) {
    std::vector<Value> out;
    for (size_t i = from; i < e.args.size(); i++) out.push_back(eval(*e.args[i]));
    return out;
  }
  // argument i of a call, or its keyword, or nothing
  std::optional<Value> arg(const Expr& e, const std::vector<Value>& pos, size_t i, const char* key) {
    if (i < pos.size()) return pos[i];
    for (const auto& [k, v] : e.kwargs)
      if (k == key) return eval(*v);
    return std::nullopt;
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.args[0];
    std::vector<Value> pos = positional(e, 1);
    if (callee.type == Expr::Type::Attr) return method(eval(*callee.args[0]), callee.name, e, pos);
    if (callee.type != Expr::Type::Name) error("this value cannot be called", e.line);
    const std::string& f = callee.name;
    if (f == "raise_exception") error(pos.empty() ? "raise_exception() in the template" : str(pos[0]), e.line);
    if (f == "range") {
      if (pos.empty() || pos.size() > 3 || !std::all_of(pos.begin(), pos.end(), integral)) error("range() takes 1 to 3 integers", e.line);
      int64_t start = pos.size() > 1 ? as_int(pos[0]) : 0, stop = pos.size() > 1 ? as_int(pos[1]) : as_int(pos[0]);
      int64_t step = pos.size() > 2 ? as_int(pos[2]) : 1;
      if (step == 0) error("range() step must not be zero", e.line);
      List l;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        spend(e.line);
        l.push_back(Value::of(i));
      }
      return Value::of(std::move(l));
    }
    if (f == "namespace" || f == "dict") {
      Dict d;
      for (const auto& [k, v] : e.kwargs) d.emplace_back(k, eval(*v));
      return Value::of(std::move(d));
    }
    if (f == "strftime_now") {
      std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      size_t n = std::strftime(buf, sizeof buf, pos.empty() ? "" : str(pos[0]).c_str(), &tm);
      return Value::of(std::string(buf, n));
    }
    error("unknown function '" + f + "'", e.line);
  }

  Value method(const Value& obj, const std::string& m, const Expr& e, const std::vector<Value>& pos) {
    if (obj.kind == Kind::String) {
      const std::string& s = obj.str;
      auto chars = [&]() { return pos.empty() || pos[0].kind == Kind::None ? std::string(" \t\n\r\f\v") : str(pos[0]); };
      if (m == "strip" || m == "lstrip" || m == "rstrip") {
        std::string c = chars();
        size_t b = m == "rstrip" ? 0 : s.find_first_not_of(c);
        if (b == std::string::npos) return Value::of("");
        size_t end = m == "lstrip" ? s.size() : s.find_last_not_of(c) + 1;
        return Value::of(s.substr(b, end - b));
      }
      if (m == "startswith" || m == "endswith") {
        List options = !pos.empty() && pos[0].kind == Kind::List ? *pos[0].list : List{pos.empty() ? Value::of("") : pos[0]};
        for (const Value& o : options) {
          const std::string& p = o.str;
          bool hit = m == "startswith" ? s.compare(0, p.size(), p) == 0
                                       : s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
          if (hit) return Value::of(true);
        }
        return Value::of(false);
      }
      if (m == "split") {
        List parts;
        std::optional<Value> sep = arg(e, pos, 0, "sep");
        int64_t maxsplit = integral(arg(e, pos, 1, "maxsplit").value_or(Value::of(int64_t{-1}))) ? as_int(arg(e, pos, 1, "maxsplit").value_or(Value::of(int64_t{-1}))) : -1;
        if (!sep || sep->kind == Kind::None) {  // runs of whitespace
          size_t i = 0;
          while (i < s.size()) {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++;
            if (i >= s.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
              size_t end = s.find_last_not_of(" \t\n\r\f\v");
              parts.push_back(Value::of(s.substr(i, end + 1 - i)));
              break;
            }
            size_t j = i;
            while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) j++;
            parts.push_back(Value::of(s.substr(i, j - i)));
            i = j;
          }
          return Value::of(std::move(parts));
        }
        const std::string& d = sep->str;
        if (d.empty()) error("empty separator", e.line);
        size_t i = 0;
        for (size_t at; (at = s.find(d, i)) != std::string::npos && (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit); i = at + d.size())
          parts.push_back(Value::of(s.substr(i, at - i)));
        parts.push_back(Value::of(s.substr(i)));
        return Value::of(std::move(parts));
      }
      if (m == "upper" || m == "lower") {
        std::string r = s;
        for (char& c : r) c = static_cast<char>(m == "upper" ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
        return Value::of(r);
      }
      if (m == "replace") return Value::of(replace_all(s, pos, e));
      if (m == "title" || m == "capitalize") return Value::of(cased(s, m == "title"));
    }
    if (obj.kind == Kind::Dict) {
      if (m == "items") {
        List l;
        for (const auto& [k, v] : *obj.dict) l.push_back(Value::of(List{Value::of(k), v}));
        return Value::of(std::move(l));
      }
      if (m == "keys" || m == "values") {
        List l;
        for (const auto& [k, v] : *obj.dict) l.push_back(m == "keys" ? Value::of(k) : v);
        return Value::of(std::move(l));
      }
      if (m == "get") {
        const Value* v = pos.empty() || pos[0].kind != Kind::String ? nullptr : obj.find(pos[0].str);
        return v ? *v : pos.size() > 1 ? pos[1] : Value::none();
      }
    }
    error(std::string("'") + type_name(obj) + "' object has no method '" + m + "'", e.line);
  }

  std::string replace_all(const std::string& s, const std::vector<Value>& pos, const Expr& e) const {
    if (pos.size() < 2) error("replace() takes two strings", e.line);
    std::string from = str(pos[0]), to = str(pos[1]), r;
    int64_t count = pos.size() > 2 && integral(pos[2]) ? as_int(pos[2]) : -1;
    if (from.empty()) return s;
    size_t i = 0;
    for (size_t at; count != 0 && (at = s.find(from, i)) != std::string::npos; i = at + from.size(), count--) r += s.substr(i, at - i) + to;
    return r + s.substr(i);
  }
  static std::string cased(const std::string& s, bool title) {
    std::string r = s;
    bool start = true;
    for (char& c : r) {
      unsigned char u = static_cast<unsigned char>(c);
      c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
      start = title ? !std::isalnum(u) : false;
    }
    return r;
  }

  Value filter(const Expr& e) {
    Value v = eval(*e.args[0]);
    std::vector<Value> pos = positional(e, 1);
    const std::string& f = e.name;
    if (f == "default" || f == "d") {
      bool boolean = truthy(arg(e, pos, 1, "boolean").value_or(Value::of(false)));
      bool missing = boolean ? !truthy(v) : v.kind == Kind::Undefined;
      return missing ? arg(e, pos, 0, "default_value").value_or(Value::of("")) : v;
    }
    if (f == "safe") return v;
    if (f == "string") return Value::of(str(v));
    if (f == "tojson") {
      std::optional<Value> ind = arg(e, pos, 0, "indent");
      std::string out;
      to_json(v, ind && integral(*ind) ? static_cast<int>(as_int(*ind)) : -1, 0, out);
      return Value::of(out);
    }
    if (v.kind == Kind::Undefined && (f == "length" || f == "count")) return Value::of(int64_t{0});
    if (v.kind == Kind::Undefined) error("'" + describe(*e.args[0]) + "' is undefined (filter " + f + ")", e.line);
    if (f == "length" || f == "count") {
      if (v.kind == Kind::String) return Value::of(static_cast<int64_t>(items_of(v, e.line).size()));
      if (v.kind == Kind::List) return Value::of(static_cast<int64_t>(v.list->size()));
      if (v.kind == Kind::Dict) return Value::of(static_cast<int64_t>(v.dict->size()));
      error(std::string("object of type '") + type_name(v) + "' has no length", e.line);
    }
    if (f == "trim") return method(v, "strip", e, pos);
    if (f == "upper" || f == "lower" || f == "title" || f == "capitalize") return method(Value::of(str(v)), f, e, {});
    if (f == "replace") return Value::of(replace_all(str(v), pos, e));
    if (f == "list" || f == "first" || f == "last" || f == "reverse") {
      List l = items_of(v, e.line);
      if (f == "list") return Value::of(std::move(l));
      if (f == "first") return l.empty() ? Value() : l.front();
      if (f == "last") return l.empty() ? Value() : l.back();
      if (v.kind == Kind::String) {
        std::string r;
        for (auto it = l.rbegin(); it != l.rend(); ++it) r += it->str;
        return Value::of(r);
      }
      std::reverse(l.begin(), l.end());
      return Value::of(std::move(l));
    }
    if (f == "join") {
      std::string sep = pos.empty() ? "" : str(pos[0]), r;
      List l = items_of(v, e.line);
      for (size_t i = 0; i < l.size(); i++) r += (i ? sep : "") + str(l[i]);
      return Value::of(r);
    }
    if (f == "items") return method(v, "items", e, {});
    if (f == "int") {
      if (integral(v)) return Value::of(as_int(v));
      if (v.kind == Kind::Float) return Value::of(static_cast<int64_t>(v.number));
      try {
        return Value::of(static_cast<int64_t>(std::stoll(str(v))));
      } catch (const std::exception&) {
        return Value::of(int64_t{0});
      }
    }
    if (f == "float") {
      if (numeric(v)) return Value::of(as_double(v));
      try {
        return Value::of(std::stod(str(v)));
      } catch (const std::exception&) {
        return Value::of(0.0);
      }
    }
    if (f == "abs") {
      if (integral(v)) return Value::of(std::abs(as_int(v)));
      if (v.kind == Kind::Float) return Value::of(std::fabs(v.number));
    }
    if (f == "indent") {  // each line but the first (unless first=true) indented by `width` spaces
      std::optional<Value> w = arg(e, pos, 0, "width");
      std::string pad = w && w->kind == Kind::String ? w->str : std::string(static_cast<size_t>(w && integral(*w) ? as_int(*w) : 4), ' ');
      bool first = truthy(arg(e, pos, 1, "first").value_or(Value::of(false)));
      std::string s = str(v), r = first ? pad : "";
      for (size_t i = 0; i < s.size(); i++) {
        r += s[i];
        if (s[i] == '\n' && i + 1 < s.size() && s[i + 1] != '\n') r += pad;
      }
      return Value::of(r);
    }
    error("filter " + f + " does not apply to " + type_name(v), e.line);
  }

  bool test(const Expr& e) {
    Value v = eval(*e.args[0]);
    std::vector<Value> pos = positional(e, 1);
    const std::string& t = e.name;
    if (t == "defined") return v.kind != Kind::Undefined;
    if (t == "undefined") return v.kind == Kind::Undefined;
    if (t == "none") return v.kind == Kind::None;
    if (t == "string") return v.kind == Kind::String;
    if (t == "number") return numeric(v) && v.kind != Kind::Bool;
    if (t == "integer") return v.kind == Kind::Int;
    if (t == "float") return v.kind == Kind::Float;
    if (t == "boolean") return v.kind == Kind::Bool;
    if (t == "true") return v.kind == Kind::Bool && v.boolean;
    if (t == "false") return v.kind == Kind::Bool && !v.boolean;
    if (t == "mapping") return v.kind == Kind::Dict;
    if (t == "iterable") return v.kind == Kind::List || v.kind == Kind::Dict || v.kind == Kind::String;
    if (t == "sequence") return v.kind == Kind::List || v.kind == Kind::Dict || v.kind == Kind::String;
    if (t == "odd" || t == "even") return integral(v) && (as_int(v) % 2 != 0) == (t == "odd");
    if (pos.empty()) error("test " + t + " needs an argument", e.line);
    if (t == "eq" || t == "equalto") return equal(v, pos[0]);
    if (t == "ne") return !equal(v, pos[0]);
    if (t == "in") {
      const Value& c = pos[0];
      if (c.kind == Kind::List) return std::any_of(c.list->begin(), c.list->end(), [&](const Value& x) { return equal(v, x); });
      if (c.kind == Kind::String) return v.kind == Kind::String && c.str.find(v.str) != std::string::npos;
      if (c.kind == Kind::Dict) return v.kind == Kind::String && c.find(v.str);
      return false;
    }
    error("unsupported test " + t, e.line);
  }

  std::vector<std::map<std::string, Value>> scopes_;
  int64_t steps_ = 0;
  SourceLocation where_;
};

}  // namespace

struct Template::Program {
  std::vector<ast::Node> nodes;
};

Template::Template(const std::string& source, SourceLocation where) : program_(std::make_unique<Program>()) {
  TreeBuilder builder(segments(source, where), where);
  std::string stop;
  program_->nodes = builder.block({}, &stop, nullptr);
}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const std::map<std::string, Value>& vars, SourceLocation where) const {
  Renderer r(vars, where);
  std::string out;
  r.run(program_->nodes, out);
  return out;
}

}  // namespace tg::text::jinja
