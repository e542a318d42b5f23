// Rules of the symbolic algebra. The div/mod and valid rules live in divmod.cpp and valid.cpp.
#include "uop/symbolic.h"

#include <numeric>

#include "tg/error.h"
#include "uop/exec_alu.h"
#include "uop/linear.h"
#include "uop/symbolic_rules.h"

namespace tg::uop {

namespace {

// integer dtypes whose values vmin/vmax bound exactly
bool exact_dtype(DType dt) { return dt.is_bool() || (dt.is_int() && dt.scalar_type() != ScalarType::UInt64); }
bool is_int(const UOp& u) { return u.dtype().is_int(); }

UOp fold_constants(const Match& m) {
  const UOp& u = m.root();
  std::vector<ConstValue> args;
  for (const UOp& s : u.src()) {
    if (!s.is_const()) return UOp();
    args.push_back(s.const_value());
  }
  DType in = u.op() == Ops::WHERE ? u.src(1).dtype() : u.src(0).dtype();
  std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), in, args);
  if (!r && (u.op() == Ops::IDIV || u.op() == Ops::MOD) && const_to_int(args[1]) == 0)
    throw ArgumentError(u.op() == Ops::IDIV ? "idiv" : "mod", "division by zero in " + u.render());
  return r ? UOp::const_(u.dtype(), *r) : UOp();
}

// ---- linear (sum) canonicalization ----

UOp canonicalize_linear(const Match& m) {
  const UOp& u = m.root();
  if (u.op() == Ops::MUL && !u.src(0).is_const() && !u.src(1).is_const()) {
    // a product of two non-constants: constants move out, the factors go in term order
    for (int i = 0; i < 2; i++) {
      const UOp& a = u.src(i);
      if (a.op() == Ops::MUL && a.src(1).is_const()) return (a.src(0) * u.src(1 - i)) * a.src(1);
    }
    return term_less(u.src(1), u.src(0)) ? u.src(1) * u.src(0) : UOp();
  }
  std::optional<LinearForm> f = decompose(u);
  if (!f) return UOp();
  UOp r = f->build();
  return r == u ? UOp() : r;
}

// ---- comparisons ----

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : a / b; }  // b > 0

UOp fold_lt_const(const Match& m) {
  const UOp& x = m["x"];
  int64_t c = const_to_int(m["c"].const_value());
  if (!exact_dtype(x.dtype()) || x.dtype().is_bool()) return UOp();
  std::optional<LinearForm> f = decompose(x);
  if (!f || f->terms.empty() || !f->exact_range()) return UOp();
  DType dt = x.dtype();
  int64_t dmin = const_to_int(dt.min()), dmax = const_to_int(dt.max());
  // L + k < c  ->  L < c - k
  if (f->constant != 0) {
    __int128 nc = static_cast<__int128>(c) - f->constant;
    LinearForm l = *f;
    l.constant = 0;
    if (nc < dmin || nc > dmax || !l.exact_range()) return UOp();
    return l.build().lt(l.build().const_like(static_cast<int64_t>(nc)));
  }
  // g*L < c  ->  L < ceil(c/g)
  int64_t g = 0;
  for (const auto& [t, k] : f->terms) g = std::gcd(g, k < 0 ? -k : k);
  if (g > 1) {
    LinearForm l = *f;
    for (auto& [t, k] : l.terms) k /= g;
    return l.build().lt(l.build().const_like(ceil_div(c, g)));
  }
  return UOp();
}

// x//d < c  ->  x < c*d (c > 0), x < c*d - (d-1) (c <= 0), for d > 0
UOp fold_div_lt(const Match& m) {
  const UOp& x = m["x"];
  int64_t d = const_to_int(m["d"].const_value()), c = const_to_int(m["c"].const_value());
  if (d <= 0 || !exact_dtype(x.dtype())) return UOp();
  __int128 bound = static_cast<__int128>(c) * d - (c > 0 ? 0 : d - 1);
  if (bound < const_to_int(x.dtype().min()) || bound > const_to_int(x.dtype().max())) return UOp();
  return x.lt(x.const_like(static_cast<int64_t>(bound)));
}

// ---- the rule tables ----

UOp self(const Match& m) { return m["x"]; }

// x/(x+1) as 1/(1 + 1/x): equal where x is finite (within rounding, and 0 for a subnormal x), and 1 rather than
// inf/inf = nan where x overflowed (x = exp(a): a user's sigmoid and its gradient), as tinygrad's kernels compute
// it. tinygrad writes 1 - 1/(x+1), which cancels to nothing where x is small (the negative tail of our sigmoid)
UOp quotient(const Match& m) { return (m["x"].alu(Ops::RECIPROCAL) + m["x"].const_like(1.0)).alu(Ops::RECIPROCAL); }
const UPat& reciprocal_of_x_plus_1() {
  static const UPat d = UPat(Ops::RECIPROCAL, {UPat::var("x") + UPat::cnst(1)});
  return d;
}

}  // namespace

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm({
      // an ALU op over constants is a constant
      {UPat(GroupOp::ALU()), fold_constants},
      // x+0 -> x, x*1 -> x
      {UPat::var("x") + 0, self},
      {UPat::var("x") * 1, self},
      // x*0 -> 0 for integers (a float x may be nan or inf)
      {UPat::var("x") * 0, [](const Match& m) { return m["x"].dtype().is_float() ? UOp() : m["x"].const_like(0); }},
      // x//1 -> x, x//-1 -> -x, x%1 -> 0, x%-1 -> 0
      {UPat::var("x") / 1, self},
      {UPat::var("x") / -1, [](const Match& m) { return -m["x"]; }},
      {UPat(Ops::MOD, {UPat::var("x"), UPat::cvar("c")}),
       [](const Match& m) {
         int64_t c = const_to_int(m["c"].const_value());
         return c == 1 || c == -1 ? m["x"].const_like(0) : UOp();
       }},
      // max(x,x), x&x, x|x -> x
      {UPat(GroupOp::Idempotent(), {UPat::var("x"), UPat::var("x")}), self},
      // x^0 -> x, x|0 -> x for integers
      {UPat::var("x") ^ 0, self},
      // bool algebra with constants: x&true -> x, x&false -> false, x|true -> true, x|false -> x
      {UPat(Ops::AND).src_permute({UPat::var("x", dtypes::bool_), UPat::cvar("c")}),
       [](const Match& m) { return std::get<bool>(m["c"].const_value()) ? m["x"] : m["c"]; }},
      {UPat(Ops::OR).src_permute({UPat::var("x", dtypes::bool_), UPat::cvar("c")}),
       [](const Match& m) { return std::get<bool>(m["c"].const_value()) ? m["c"] : m["x"]; }},
      // where(c, x, x) -> x; where with a constant condition picks a side
      {UPat::var().where(UPat::var("x"), UPat::var("x")), self},
      {UPat::cvar("c").where(UPat::var("t"), UPat::var("f")),
       [](const Match& m) { return std::get<bool>(m["c"].const_value()) ? m["t"] : m["f"]; }},
      // where(x, true, false) -> x, where(x, false, true) -> !x
      {UPat::var("x").where(UPat::cnst(true), UPat::cnst(false)), self},
      {UPat::var("x").where(UPat::cnst(false), UPat::cnst(true)), [](const Match& m) { return m["x"].logical_not(); }},
      // x<x -> false, x!=x -> false for integers (not floats: nan != nan)
      {UPat(Ops::CMPLT, {UPat::var("x"), UPat::var("x")}),
       [](const Match& m) { return m["x"].dtype().is_float() ? UOp() : UOp::const_(dtypes::bool_, false); }},
      {UPat(Ops::CMPNE, {UPat::var("x"), UPat::var("x")}),
       [](const Match& m) { return m["x"].dtype().is_float() ? UOp() : UOp::const_(dtypes::bool_, false); }},
      // !!x -> x; x != false -> x for bools
      {UPat::var("x", dtypes::bool_).ne(UPat::cnst(true)).ne(UPat::cnst(true)), self},
      {UPat::var("x", dtypes::bool_).ne(UPat::cnst(false)), self},
      // -x -> x*-1 for integers: negation lives in the linear form
      {UPat(Ops::NEG, {UPat::var("x")}), [](const Match& m) { return is_int(m["x"]) ? m["x"] * -1 : UOp(); }},
      // a constant on the left of a commutative op moves right
      {UPat(GroupOp::Commutative(), {UPat::cvar("c"), UPat::var("x")}),
       [](const Match& m) { return m["x"].is_const() ? UOp() : m.root().with_src({m["x"], m["c"]}); }},
  });
  return pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm = symbolic_simple() + PatternMatcher({
      // an integer whose range is one value is that value
      {UPat(GroupOp::ALU() | OpSet{Ops::DEFINE_VAR}),
       [](const Match& m) {
         const UOp& u = m.root();
         if (!exact_dtype(u.dtype()) || u.dtype().count() != 1 || u.vmin() != u.vmax()) return UOp();
         return UOp::const_(u.dtype(), u.dtype().is_bool() ? ConstValue{u.vmin() != 0} : ConstValue{u.vmin()});
       }},
      // max(x, y) -> x when x >= y everywhere (and the other way round)
      {UPat::var("x").maximum(UPat::var("y")),
       [](const Match& m) {
         const UOp &x = m["x"], &y = m["y"];
         if (!exact_dtype(x.dtype())) return UOp();
         return x.vmin() >= y.vmax() ? x : y.vmin() >= x.vmax() ? y : UOp();
       }},
      // sums and constant products: flatten, combine like terms, sort, constant last
      {UPat(OpSet{Ops::ADD, Ops::MUL}).int_dtype(), canonicalize_linear},
      // x//c and x%c for a constant c, using the ranges of x's terms
      {UPat(OpSet{Ops::IDIV, Ops::MOD}, {UPat::var("x"), UPat::cvar("c")}).int_dtype(), fold_divmod},
      // x//d and x%d for a divisor linear in one symbolic size, x = q*d + r with 0 <= r < d
      {UPat(OpSet{Ops::IDIV, Ops::MOD}, {UPat::var("x"), UPat::var("d")}).int_dtype(), fold_symbolic_divmod},
      // (x//c1)//c2 -> x//(c1*c2) and (x%c1)%c2 -> x%c2 when c2 divides c1
      {(UPat::var("x") / UPat::cvar("c1")) / UPat::cvar("c2"), fold_nested_div},
      {(UPat::var("x") % UPat::cvar("c1")) % UPat::cvar("c2"), fold_nested_mod},
      // (x//c + a)//d -> (x + a*c)//(c*d) for x, a >= 0
      {((UPat::var("x") / UPat::cvar("c")) + UPat::cvar("a")) / UPat::cvar("d"), fold_div_add_div},
      // L + k < c -> L < c-k; g*L < c -> L < ceil(c/g)
      {UPat::var("x").int_dtype() < UPat::cvar("c"), fold_lt_const},
      // x//d < c -> x < c*d (or c*d-(d-1) for c <= 0)
      {(UPat::var("x") / UPat::cvar("d")) < UPat::cvar("c"), fold_div_lt},
      // -x < -y -> y < x
      {(UPat::var("x") * -1) < (UPat::var("y") * -1), [](const Match& m) { return m["y"].lt(m["x"]); }},
      // a conjunction of bounds: drop implied clauses, fold contradictions
      {UPat(Ops::AND).dtype(dtypes::bool_), simplify_valid},
      // where(valid, x, y): simplify x knowing valid holds
      {UPat(Ops::WHERE, {UPat::var("valid"), UPat::var("x"), UPat::var("y")}),
       [](const Match& m) {
         UOp x = uop_given_valid(m["valid"], m["x"]);
         return x == m["x"] ? UOp() : m["valid"].where(x, m["y"]);
       }},
      // x * 1/(x+1) -> 1/(1 + 1/x), also negated (a gradient's -x) and inside a product or a sum with a term y
      {UPat::var("x") * reciprocal_of_x_plus_1(), quotient},
      {UPat(Ops::NEG, {UPat::var("x")}) * reciprocal_of_x_plus_1(), [](const Match& m) { return -quotient(m); }},
      {UPat::var("x") * (reciprocal_of_x_plus_1() * UPat::var("y")), [](const Match& m) { return m["y"] * quotient(m); }},
      {UPat::var("x") * (reciprocal_of_x_plus_1() + UPat::var("y")),
       [](const Match& m) { return quotient(m) + m["x"] * m["y"]; }},
  });
  return pm;
}

UOp simplify(const UOp& u) { return graph_rewrite(u, symbolic()); }

}  // namespace tg::uop
