// render(): a UOp graph as a C-like expression, sums flattened with their terms sorted and constants last.
#include <algorithm>
#include <unordered_map>

#include "uop/uop.h"

namespace tg::uop {

namespace {

std::string render_const(const UOp& u) {
  const ConstValue& v = u.const_value();
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return const_repr(v);
}

// the terms of a chain of ADDs: sorted by their rendering, constants after the rest
std::string render_sum(const UOp& u, const std::unordered_map<const UOpNode*, std::string>& done) {
  std::vector<std::string> terms, consts;
  std::vector<const UOp*> stack{&u};
  while (!stack.empty()) {
    const UOp* t = stack.back();
    stack.pop_back();
    if (t->op() == Ops::ADD && t->dtype() == u.dtype()) {
      stack.push_back(&t->src(1));
      stack.push_back(&t->src(0));
    } else {
      (t->is_const() ? consts : terms).push_back(done.at(t->get()));
    }
  }
  std::sort(terms.begin(), terms.end());
  terms.insert(terms.end(), consts.begin(), consts.end());
  std::string s = "(";
  for (size_t i = 0; i < terms.size(); i++) s += (i ? "+" : "") + terms[i];
  return s + ")";
}

}  // namespace

std::string UOp::render() const {
  std::unordered_map<const UOpNode*, std::string> done;
  for (const UOp& u : toposort()) {
    std::string s;
    auto r = [&](size_t i) { return done.at(u.src(i).get()); };
    switch (u.op()) {
      case Ops::CONST: s = render_const(u); break;
      case Ops::DEFINE_VAR: s = u.arg().get<VarArg>().name; break;
      case Ops::RANGE: s = "ridx" + u.arg().repr(); break;
      case Ops::SPECIAL: s = u.arg().repr(); break;
      case Ops::ADD: s = render_sum(u, done); break;
      case Ops::NEG: s = "(-" + r(0) + ")"; break;
      case Ops::CAST: s = "((" + std::string(u.dtype().c_type()) + ")" + r(0) + ")"; break;
      case Ops::MAX: s = "max(" + r(0) + ", " + r(1) + ")"; break;
      case Ops::WHERE: s = "(" + r(0) + "?" + r(1) + ":" + r(2) + ")"; break;
      case Ops::MULACC: s = "((" + r(0) + "*" + r(1) + ")+" + r(2) + ")"; break;
      default: {
        // IDIV renders as Python's // so index math reads like tinygrad's
        const char* sym = u.op() == Ops::IDIV ? "//" : infix_symbol(u.op());
        if (sym && u.src().size() == 2) {
          // commutative ops read with the constant on the right
          bool flip = GroupOp::Commutative().contains(u.op()) && u.src(0).is_const() && !u.src(1).is_const();
          s = "(" + r(flip ? 1 : 0) + sym + r(flip ? 0 : 1) + ")";
        } else {
          std::string name(op_name(u.op()));
          std::transform(name.begin(), name.end(), name.begin(), ::tolower);
          s = name + "(";
          for (size_t i = 0; i < u.src().size(); i++) s += (i ? ", " : "") + r(i);
          s += ")";
        }
      }
    }
    done[u.get()] = std::move(s);
  }
  return done.at(get());
}

}  // namespace tg::uop
