// The subset of Jinja that chat templates are written in (GGUF's tokenizer.chat_template, Hugging Face's
// chat_template.jinja), rendered as Hugging Face renders them: jinja2 with trim_blocks and lstrip_blocks, Python's
// value semantics, and the functions raise_exception and strftime_now.
//
// Supported: text, {{ }}, {% %} and {# #} with whitespace control (- and +); if/elif/else, for (one or two targets,
// an `if` filter, else, loop.index/index0/first/last/length/revindex/revindex0, break, continue), set (to a name
// or a namespace's attribute, and the block form), generation blocks (rendered as their body); literals (strings,
// numbers, true/false/none, lists, dicts), names, .attr, [index], [a:b:c], calls, filters and `is` tests, the
// operators of Python's expressions (not, and, or, in, not in, comparisons, + - * / // % **, ~, x if c else y).
// Anything else raises ArgumentError naming the construct and the line, and no partial output is produced.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tg/error.h"

namespace tg::text::jinja {

struct Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // in insertion order, as Python's dicts

// A template value with Python's semantics. Lists and dicts are shared (a namespace() is a dict that `set ns.x`
// changes in place, as in Jinja).
struct Value {
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };  // Function: a builtin, by name
  Kind kind = Kind::Undefined;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string str;
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;

  static Value none() { return with(Kind::None); }
  static Value of(bool b) { Value v = with(Kind::Bool); v.boolean = b; return v; }
  static Value of(int64_t i) { Value v = with(Kind::Int); v.integer = i; return v; }
  static Value of(double d) { Value v = with(Kind::Float); v.number = d; return v; }
  static Value of(std::string s) { Value v = with(Kind::String); v.str = std::move(s); return v; }
  static Value of(const char* s) { return of(std::string(s)); }
  static Value of(List l) { Value v = with(Kind::List); v.list = std::make_shared<List>(std::move(l)); return v; }
  static Value of(Dict d) { Value v = with(Kind::Dict); v.dict = std::make_shared<Dict>(std::move(d)); return v; }
  const Value* find(const std::string& key) const;  // a dict's member, or null

 private:
  static Value with(Kind k) { Value v; v.kind = k; return v; }
};

class Template {
 public:
  // Parses `source`; ArgumentError("chat template", ...) on a syntax error or an unsupported construct.
  explicit Template(const std::string& source, SourceLocation where = SourceLocation::current());
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  // The output for these variables (a name not given is undefined). raise_exception(msg) in the template raises
  // ArgumentError with msg; so does an error of evaluation (an undefined value in arithmetic, a bad index).
  std::string render(const std::map<std::string, Value>& vars, SourceLocation where = SourceLocation::current()) const;

 private:
  struct Program;
  std::unique_ptr<Program> program_;
};

}  // namespace tg::text::jinja
