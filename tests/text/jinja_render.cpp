// Renders a chat template with variables from a JSON object, as tests/text/jinja_vs_jinja2.py needs:
//   jinja_render TEMPLATE VARS.json     prints the output, or "ERROR: <message>" and exits 1
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/json.h"
#include "text/jinja.h"

namespace {
using tg::text::jinja::Value;
Value from_json(const tg::base::Json& j) {
  using K = tg::base::Json::Kind;
  switch (j.kind) {
    case K::Null: return Value::none();
    case K::Bool: return Value::of(j.boolean);
    case K::Int: return Value::of(j.integer);
    case K::Float: return Value::of(j.number);
    case K::String: return Value::of(j.str);
    case K::Array: {
      tg::text::jinja::List l;
      for (const tg::base::Json& x : j.items) l.push_back(from_json(x));
      return Value::of(std::move(l));
    }
    case K::Object: {
      tg::text::jinja::Dict d;
      for (const auto& [k, v] : j.members) d.emplace_back(k, from_json(v));
      return Value::of(std::move(d));
    }
  }
  return Value();
}
std::string read(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::cerr << "usage: jinja_render TEMPLATE VARS.json\n", 2;
  try {
    tg::text::jinja::Template t(read(argv[1]));
    tg::base::Json vars = tg::base::parse_json(read(argv[2]), "jinja_render", argv[2], tg::SourceLocation::current());
    std::map<std::string, Value> v;
    for (const auto& [k, x] : vars.members) v[k] = from_json(x);
    std::cout << t.render(v);
  } catch (const std::exception& e) {
    std::cout << "ERROR: " << e.what();
    return 1;
  }
}
