// Valids: conjunctions of bounds like (idx < 5) & !(idx < 2), as pad masks and gates produce them.
#include <algorithm>
#include <string>
#include <string_view>

#include "uop/symbolic.h"
#include "uop/symbolic_rules.h"

namespace tg::uop {

namespace {

// What a conjunction says: per expression, the bounds [lo, hi] it implies; other clauses are kept as they are.
struct Bounds {
  UOp expr;
  int64_t lo, hi;
};
struct Clauses {
  std::vector<Bounds> bounds;
  std::vector<UOp> other;
};

// the name of uop_given_valid's stand-in variables, followed by a number
constexpr std::string_view kStandIn = "\x01valid";

bool bounded_int(const UOp& x) { return x.dtype().is_int() && !x.dtype().is_unsigned() && !x.is_const(); }

Clauses parse(const UOp& valid) {
  std::vector<UOp> clauses = split_and(valid);
  Clauses out;
  auto bound = [&](const UOp& x, int64_t lo, int64_t hi) {
    for (Bounds& b : out.bounds)
      if (b.expr == x) { b.lo = std::max(b.lo, lo), b.hi = std::min(b.hi, hi); return; }
    out.bounds.push_back({x, std::max(lo, x.vmin()), std::min(hi, x.vmax())});
  };
  constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;
  for (const UOp& c : clauses) {
    // x < k
    if (c.op() == Ops::CMPLT && bounded_int(c.src(0)) && c.src(1).is_const()) {
      int64_t k = const_to_int(c.src(1).const_value());
      if (k != kMin) { bound(c.src(0), kMin, k - 1); continue; }
    }
    // !(x < k), as (x < k) != true
    if (c.op() == Ops::CMPNE && c.src(1).is_const() && const_to_int(c.src(1).const_value()) == 1 &&
        c.src(0).op() == Ops::CMPLT && bounded_int(c.src(0).src(0)) && c.src(0).src(1).is_const()) {
      bound(c.src(0).src(0), const_to_int(c.src(0).src(1).const_value()), kMax);
      continue;
    }
    if (std::find(out.other.begin(), out.other.end(), c) == out.other.end()) out.other.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<UOp> split_and(const UOp& u) {
  std::vector<UOp> out, stack{u};
  while (!stack.empty()) {
    UOp t = stack.back();
    stack.pop_back();
    if (t.op() == Ops::AND && t.dtype().is_bool()) {
      stack.push_back(t.src(1));
      stack.push_back(t.src(0));
    } else {
      out.push_back(t);
    }
  }
  return out;
}

UOp simplify_valid(const Match& m) {
  const UOp& valid = m.root();
  Clauses cl = parse(valid);
  UOp out;
  auto conj = [&](const UOp& c) { out = out ? (out & c) : c; };
  for (const Bounds& b : cl.bounds) {
    if (b.lo > b.hi) return UOp::const_(dtypes::bool_, false);
    if (b.lo > b.expr.vmin()) conj(b.expr.lt(b.expr.const_like(b.lo)).logical_not());
    if (b.hi < b.expr.vmax()) conj(b.expr.lt(b.expr.const_like(b.hi + 1)));
  }
  for (const UOp& c : cl.other) conj(c);
  if (!out) return UOp::const_(dtypes::bool_, true);
  return out == valid ? UOp() : out;
}

UOp uop_given_valid(const UOp& valid, const UOp& expr) {
  Clauses cl = parse(valid);
  std::vector<const Bounds*> narrowing;
  // a clause that narrows nothing tells us nothing; an impossible one leaves expr to the caller
  for (const Bounds& b : cl.bounds)
    if (!(b.lo > b.hi || (b.lo <= b.expr.vmin() && b.hi >= b.expr.vmax()))) narrowing.push_back(&b);
  if (narrowing.empty()) return expr;
  // The stand-ins must be new to valid and expr: simplifying a where inside expr calls this again while the outer
  // call's stand-ins are in it, and one named like them (same name and range: the same interned node) would be
  // substituted back for both (where(i<2, where(j<2, i*2+j)) became j*3).
  size_t first = 0;
  for (const UOp& root : {valid, expr})
    for (const UOp& n : root.toposort())
      if (n.op() == Ops::DEFINE_VAR) {
        const std::string& name = n.arg().get<VarArg>().name;
        if (name.starts_with(kStandIn)) first = std::max(first, std::stoul(name.substr(kStandIn.size())) + 1);
      }
  std::vector<std::pair<UOp, UOp>> to_var, back;
  for (const Bounds* b : narrowing) {
    UOp v = UOp::variable(std::string(kStandIn) + std::to_string(first + to_var.size()), b->lo, b->hi, b->expr.dtype());
    to_var.emplace_back(b->expr, v);
    back.emplace_back(v, b->expr);
  }
  // the bounds reach everything but loads: a load runs whether or not the where picks it, so its address and gate
  // must not lean on the where's condition (an index the condition bounds would read out of bounds otherwise)
  std::unordered_map<const UOpNode*, UOp> narrowed_of;
  for (const auto& [e, v] : to_var) narrowed_of[e.get()] = v;
  for (const UOp& n : expr.toposort()) {
    if (narrowed_of.count(n.get())) continue;
    if (n.op() == Ops::LOAD || n.src().empty()) {
      narrowed_of[n.get()] = n;
      continue;
    }
    std::vector<UOp> src;
    for (const UOp& x : n.src()) src.push_back(narrowed_of.at(x.get()));
    narrowed_of[n.get()] = src == n.src() ? n : n.with_src(src);
  }
  UOp narrowed = narrowed_of.at(expr.get());
  if (narrowed == expr) return expr;
  UOp simplified = simplify(narrowed);
  if (simplified == narrowed) return expr;  // the narrower ranges changed nothing
  // simplify again after substituting back: the stand-in variables sort differently from what they replace, and
  // the result must be in canonical form or the rule would undo and redo itself forever
  return simplify(simplified.substitute(back));
}

}  // namespace tg::uop
