// The symbolic algebra: a table of expressions with the render, min and max we expect (worked out by hand, the
// seed's among them), each also checked equal to its unsimplified self at every point of its variables' ranges.
#include <gtest/gtest.h>

#include "support/symbolic_eval.h"
#include "tg/error.h"
#include "uop/symbolic.h"

using namespace tg;
using namespace tg::uop;

namespace {

struct Case {
  int line;
  UOp expr;
  std::string render;
  int64_t min, max;
};

UOp V(const char* name, int64_t lo, int64_t hi) { return UOp::variable(name, lo, hi); }
UOp C(int64_t v) { return UOp::const_(dtypes::int32, v); }

// every assignment of the expression's variables, to compare simplified and original exhaustively
void for_each_point(const UOp& e, const std::function<void(const tg::testing::Env&)>& f) {
  std::vector<VarArg> vars;
  for (const UOp& u : e.toposort())
    if (u.op() == Ops::DEFINE_VAR) vars.push_back(u.arg().get<VarArg>());
  tg::testing::Env env;
  std::function<void(size_t)> rec = [&](size_t i) {
    if (i == vars.size()) return f(env);
    for (int64_t v = vars[i].min; v <= vars[i].max; v++) env[vars[i].name] = v, rec(i + 1);
  };
  rec(0);
}

std::vector<Case> cases() {
  UOp a = V("a", 0, 10), b = V("b", 0, 10), c = V("c", -5, 5), x = V("x", 0, 99), y = V("y", 0, 9), z = V("z", 0, 9),
      i = V("i", 0, 3), n = V("n", -10, -1);
  UOp T = UOp::const_(dtypes::bool_, true), F = UOp::const_(dtypes::bool_, false);
#define CASE(e, r, lo, hi) {__LINE__, (e), (r), (lo), (hi)}
  return {
      // the seed (tinygrad docs/abstractions2.py)
      CASE(a * 10, "(a*10)", 0, 100),
      CASE(a + b, "(a+b)", 0, 20),
      CASE((a + b * 10) % 10, "(a%10)", 0, 9),
      CASE((a * 40 + b) / 20, "(a*2)", 0, 20),
      // constant folding, C semantics for division
      CASE(C(2) + C(3), "5", 5, 5),
      CASE(C(7) / C(2), "3", 3, 3),
      CASE(C(-7) / C(2), "-3", -3, -3),
      CASE(C(-7) % C(2), "-1", -1, -1),
      CASE(C(7) % C(-2), "1", 1, 1),
      CASE(C(3) * C(4) + C(1), "13", 13, 13),
      CASE(C(3).maximum(C(-4)), "3", 3, 3),
      CASE(C(3) < C(4), "true", 1, 1),
      CASE(C(2) - C(5), "-3", -3, -3),
      // identities
      CASE(a + 0, "a", 0, 10),
      CASE(a * 1, "a", 0, 10),
      CASE(a * 0, "0", 0, 0),
      CASE(a / 1, "a", 0, 10),
      CASE(a % 1, "0", 0, 0),
      CASE(a / -1, "(a*-1)", -10, 0),
      CASE(a - a, "0", 0, 0),
      CASE(a * b * 0, "0", 0, 0),
      CASE(y * 0 + z * 0 + 7, "7", 7, 7),
      CASE(c - c, "0", 0, 0),
      CASE(c * -1 * -1, "c", -5, 5),
      // like terms, flattening, sorting, constants last
      CASE(a + a, "(a*2)", 0, 20),
      CASE(a * 2 + a * 3, "(a*5)", 0, 50),
      CASE(a * 3 - a * 2, "a", 0, 10),
      CASE((a + 1) + 2, "(a+3)", 3, 13),
      CASE(1 + a, "(a+1)", 1, 11),
      CASE((a + b) - a, "b", 0, 10),
      CASE((a + 1) * 2, "((a*2)+2)", 2, 22),
      CASE((a * 2) * 3, "(a*6)", 0, 60),
      CASE(a * 2 * b, "((a*b)*2)", 0, 200),
      CASE(b * a, "(a*b)", 0, 100),
      CASE(-(a + b) + a, "(b*-1)", -10, 0),
      CASE(a + b + c, "(a+b+c)", -5, 25),
      CASE(c + b + a, "(a+b+c)", -5, 25),
      CASE((a + b) * 0 + 3, "3", 3, 3),
      CASE(3 * (a - b), "((a*3)+(b*-3))", -30, 30),
      CASE(a - 5, "(a+-5)", -5, 5),
      CASE(y - z, "((z*-1)+y)", -9, 9),
      CASE(y * z, "(y*z)", 0, 81),
      CASE(z * y, "(y*z)", 0, 81),
      CASE((y * z) * 2, "((y*z)*2)", 0, 162),
      CASE((y * 2) * (z * 3), "((y*z)*6)", 0, 486),
      CASE(y * z + z * y, "((y*z)*2)", 0, 162),
      // max and min
      CASE(a.maximum(a), "a", 0, 10),
      CASE(a.maximum(C(20)), "20", 20, 20),
      CASE(a.maximum(C(-1)), "a", 0, 10),
      CASE(a.maximum(b), "max(a, b)", 0, 10),
      CASE(a.maximum(C(5)), "max(a, 5)", 5, 10),
      CASE(a.minimum(C(20)), "a", 0, 10),
      CASE(y.maximum(z) + 0, "max(y, z)", 0, 9),
      // division and modulo by constants
      CASE(a / 20, "0", 0, 0),
      CASE(a % 20, "a", 0, 10),
      CASE((a + 10) / 10, "((a//10)+1)", 1, 2),
      CASE((a + 10) % 10, "(a%10)", 0, 9),
      CASE((x * 4) / 4, "x", 0, 99),
      CASE((x * 4) % 4, "0", 0, 0),
      CASE((x * 6) / 4, "((x//2)+x)", 0, 148),  // gcd: (x*3)//2, then 3x = 2x + x
      CASE((x * 6) % 4, "((x%2)*2)", 0, 2),
      CASE((x / 4) / 5, "(x//20)", 0, 4),
      CASE((x % 20) % 5, "(x%5)", 0, 4),
      CASE((x % 20) % 3, "((x%20)%3)", 0, 2),
      CASE((x / 10) * 10 + x % 10, "x", 0, 99),
      CASE(((x / 10) * 10 + x % 10) * 2, "(x*2)", 0, 198),
      CASE((x % 10) * 10 + x / 10, "(((x%10)*10)+(x//10))", 0, 99),
      CASE((x + 5) % 10, "((x+5)%10)", 0, 9),
      CASE((x * 10 + 5) / 10, "x", 0, 99),
      CASE((x * 10 + 5) % 10, "5", 5, 5),
      CASE((a * 4 + i) / 4, "a", 0, 10),
      CASE((a * 4 + i) % 4, "i", 0, 3),
      CASE((a * 8 + i * 2) / 4, "((a*2)+(i//2))", 0, 21),
      CASE((a * 8 + i * 2) % 4, "((i%2)*2)", 0, 2),
      CASE((a * 4 + i) / 8, "(a//2)", 0, 5),
      CASE((a * 4 + i) % 8, "(((a%2)*4)+i)", 0, 7),
      CASE(c / 2, "(c//2)", -2, 2),
      CASE(c % 3, "(c%3)", -2, 2),
      CASE(n / 3, "(((n*-1)//3)*-1)", -3, 0),
      CASE(n % 3, "(((n*-1)%3)*-1)", -2, 0),
      CASE(a / -2, "((a//2)*-1)", -5, 0),
      CASE(a % -3, "(a%3)", 0, 2),
      CASE((a + b * 10) / 10, "((a//10)+b)", 0, 11),
      CASE((x + 100) / 100, "1", 1, 1),
      CASE((x + 100) % 100, "x", 0, 99),
      CASE((x / 4) * 4, "((x//4)*4)", 0, 96),
      CASE(((x / 4) + 2) / 5, "((x+8)//20)", 0, 5),
      CASE((a * 3) / 3, "a", 0, 10),
      CASE((a * 3 + 1) / 3, "a", 0, 10),
      CASE((a * 3 + 2) % 3, "2", 2, 2),
      CASE((a * 3 + b) % 3, "(b%3)", 0, 2),
      CASE((c + 5) / 5, "((c+5)//5)", 0, 2),
      CASE((c + 5) % 5, "((c+5)%5)", 0, 4),
      CASE((c * 4) % 2, "0", 0, 0),
      CASE((c * 4 + 2) / 2, "((c*2)+1)", -9, 11),
      CASE((c * 4 + 3) / 2, "(((c*4)+3)//2)", -8, 11),
      CASE(((x % 10) * 10 + x / 10) % 10, "(x//10)", 0, 9),
      CASE(((x % 10) * 10 + x / 10) / 10, "(x%10)", 0, 9),
      CASE((y * 10 + z) / 10, "y", 0, 9),
      CASE((y * 10 + z) % 10, "z", 0, 9),
      CASE((y * 10 + z) / 5, "((y*2)+(z//5))", 0, 19),
      CASE((y * 10 + z) % 5, "(z%5)", 0, 4),
      CASE((y * 10 + z) / 20, "(y//2)", 0, 4),
      CASE((y * 10 + z) % 20, "(((y%2)*10)+z)", 0, 19),
      CASE((y * 10 + z) / 100, "0", 0, 0),
      CASE((y + z * 10 + 1) % 10, "((y+1)%10)", 0, 9),
      CASE((y * 2 + z * 2) / 2, "(y+z)", 0, 18),
      CASE((y * 3 + z * 6) % 3, "0", 0, 0),
      CASE((y - z) % 4, "(((z*-1)+y)%4)", -3, 3),
      CASE((y * 4 - 1) / 4, "(((y*4)+-1)//4)", 0, 8),
      CASE(a / 2 * 2 + a % 2, "a", 0, 10),
      CASE((x % 4) / 4, "0", 0, 0),
      CASE((i * 25 + x % 25) / 25, "i", 0, 3),
      CASE((i * 25 + x % 25) % 25, "(x%25)", 0, 24),
      CASE((x * 4 + i) % 4, "i", 0, 3),
      CASE((x * 4 + i) / 4, "x", 0, 99),
      // comparisons
      CASE(a < 11, "true", 1, 1),
      CASE(a < 0, "false", 0, 0),
      CASE(a < 5, "(a<5)", 0, 1),
      CASE(a + 1 < 5, "(a<4)", 0, 1),
      CASE(a * 2 < 7, "(a<4)", 0, 1),
      CASE(a * 2 < 8, "(a<4)", 0, 1),
      CASE(a * 3 + b * 3 < 10, "((a+b)<4)", 0, 1),
      CASE(x / 4 < 3, "(x<12)", 0, 1),
      CASE(c / 2 < -1, "(c<-3)", 0, 1),
      CASE(-a < -b, "(b<a)", 0, 1),
      CASE(a < a, "false", 0, 0),
      CASE(a.ne(a), "false", 0, 0),
      CASE(a.ne(11), "true", 1, 1),
      CASE(a.ne(5), "(a!=5)", 0, 1),
      CASE((x % 4) < 4, "true", 1, 1),
      CASE((x / 25) < 4, "true", 1, 1),
      CASE(x * 4 + i < 8, "(((x*4)+i)<8)", 0, 1),
      // valids: conjunctions of bounds
      CASE((a < 5).logical_not().logical_not(), "(a<5)", 0, 1),
      CASE((a < 5) & (a < 3), "(a<3)", 0, 1),
      CASE((a < 5) & (a < 3).logical_not(), "(((a<3)!=true)&(a<5))", 0, 1),
      CASE((a < 3) & (a < 3).logical_not(), "false", 0, 0),
      CASE((a < 5) & (b < 20), "(a<5)", 0, 1),
      CASE((a < 5) & T, "(a<5)", 0, 1),
      CASE((a < 5) | T, "true", 1, 1),
      CASE((a < 5) & F, "false", 0, 0),
      CASE((a < 5) | F, "(a<5)", 0, 1),
      CASE((a < 5) & (a < 5), "(a<5)", 0, 1),
      // where, and simplifying under a valid
      CASE((a < 5).where(a, a), "a", 0, 10),
      CASE((a < 11).where(a, b), "a", 0, 10),
      CASE((a < 5).where(a % 5, b), "((a<5)?a:b)", 0, 10),
      CASE((a < 5).where(a / 5, C(1)), "((a<5)?0:1)", 0, 1),
      CASE((x < 10).where((x % 10) * 10 + x / 10, C(0)), "((x<10)?(x*10):0)", 0, 990),  // ranges are bounds, not tight
      CASE(T.where(a, b), "a", 0, 10),
      CASE((a < 5).where(T, F), "(a<5)", 0, 1),
      CASE((a < 5).where(F, T), "((a<5)!=true)", 0, 1),
      // other ops keep their ranges
      CASE(y << 2, "(y<<2)", 0, 36),
      CASE(y & 1, "(y&1)", 0, 1),
  };
#undef CASE
}

}  // namespace

TEST(Symbolic, TableOfCases) {
  std::vector<Case> table = cases();
  EXPECT_GE(table.size(), 150u);
  for (const Case& k : table) {
    SCOPED_TRACE("case at test_symbolic.cpp:" + std::to_string(k.line) + " " + k.expr.render());
    UOp s = simplify(k.expr);
    EXPECT_EQ(s.render(), k.render);
    EXPECT_EQ(s.vmin(), k.min);
    EXPECT_EQ(s.vmax(), k.max);
    int bad = 0;
    for_each_point(k.expr, [&](const tg::testing::Env& env) {
      auto want = tg::testing::eval(k.expr, env), got = tg::testing::eval(s, env);
      if (want && want != got && bad++ < 3) ADD_FAILURE() << "differs from the original at a point";
    });
  }
}

TEST(Symbolic, SimplifyIsIdempotent) {
  for (const Case& k : cases()) {
    UOp s = simplify(k.expr);
    EXPECT_EQ(simplify(s), s) << s.render();
  }
}

TEST(Symbolic, GivenValid) {
  UOp x = V("x", 0, 99), i = V("i", 0, 15);
  EXPECT_EQ(uop_given_valid(x < 10, (x % 10) + (x / 10) * 3).render(), "x");
  EXPECT_EQ(uop_given_valid((i < 8).logical_not(), i / 8).render(), "1");
  EXPECT_EQ(uop_given_valid((i < 8).logical_not() & (i < 12), (i - 8) % 4).render(), "(i+-8)");
  // a valid that says nothing about the expression leaves it as it is
  EXPECT_EQ(uop_given_valid(x < 200, x % 10), x % 10);
}

// A where inside a where's value is simplified with the outer valid's variables narrowed to stand-ins; the inner
// one's stand-ins must stay apart from those. Both as valid0 in [0, 1], the same interned node, i*2 + j came back
// as j*3 (a lazy arange concatenated with itself in both directions read the wrong elements).
TEST(Symbolic, NestedWheresKeepTheirVariablesApart) {
  UOp i = V("i", 0, 3), j = V("j", 0, 3), zero = C(0);
  UOp inner = (j < C(2)).where(i * C(2) + j, zero) + (j < C(2)).logical_not().where(i * C(2) + j - C(2), zero);
  UOp e = (i < C(2)).where(inner, zero) + (i < C(2)).logical_not().where(inner + C(4), zero);
  UOp s = simplify(e);
  EXPECT_EQ(s.render().find("(j*3)"), std::string::npos) << s.render();
  int bad = 0;
  for_each_point(e, [&](const tg::testing::Env& env) {
    auto want = tg::testing::eval(e, env), got = tg::testing::eval(s, env);
    if (want != got && bad++ < 3) ADD_FAILURE() << "i=" << env.at("i") << " j=" << env.at("j") << ": " << s.render();
  });
  // and uop_given_valid itself, called with an expression that already holds a stand-in of an outer call
  UOp x = V("x", 0, 7), y = V("y", 0, 7);
  UOp g = uop_given_valid(x < C(2), (y < C(2)).where(y * C(2) + x, zero));
  for (int64_t xv = 0; xv < 2; xv++)
    for (int64_t yv = 0; yv <= 7; yv++)
      EXPECT_EQ(tg::testing::eval(g, {{"x", xv}, {"y", yv}}), yv < 2 ? yv * 2 + xv : 0) << g.render();
}

TEST(Symbolic, BadInput) {
  UOp a = V("a", 0, 10), b = V("b", 0, 10);
  // a divisor that only becomes zero through simplification
  EXPECT_THROW(simplify(a / (b - b)), ArgumentError);
  EXPECT_THROW(simplify(a % (b * 0)), ArgumentError);
  try {
    simplify(C(3) / (b - b));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
}

// x//d and x%d for d linear in a symbolic size v, over a loop i to v + 32 (attention over a KV cache of
// start_pos + 1 positions, read through a reshape of its heads): folded where x = q*d + r with 0 <= r < d, which
// no bound on r alone shows (r.vmax() passes d.vmin()); left as they are elsewhere. Every point of every variable
// and of the loop gives the original's value.
TEST(Symbolic, DivisionByASymbolicSize) {
  UOp v = V("v", 0, 12), h = V("h", 0, 9), t = V("t", 0, 63), j = V("j", 0, 3);
  UOp i = UOp::make(Ops::RANGE, dtypes::int32, {v + 32}, Arg(int64_t{4}));
  auto same_everywhere = [&](const UOp& e, const UOp& s) {
    for (int64_t vv = 0; vv <= 12; vv++)
      for (int64_t iv = 0; iv < vv + 32; iv += 5)
        for (int64_t hv = 0; hv <= 9; hv++)
          for (int64_t tv = 0; tv <= 63; tv += 7)
            for (int64_t jv = 0; jv <= 3; jv++) {
              tg::testing::Env env{{"v", vv}, {"h", hv}, {"t", tv}, {"j", jv}};
              ASSERT_EQ(tg::testing::eval(e.substitute({{i, C(iv)}}), env), tg::testing::eval(s.substitute({{i, C(iv)}}), env))
                  << e.render() << " -> " << s.render() << " at v=" << vv << " i=" << iv << " h=" << hv << " t=" << tv;
            }
  };
  auto folded = [&](const UOp& e, const std::string& want) {
    UOp s = simplify(e);
    EXPECT_EQ(s.render(), want) << e.render();
    same_everywhere(e, s);
  };
  // rows of v + 32 positions: (i + h*(32*v + 1024) + j*(v + 32)) // (v + 32) is the row, % the position
  UOp rows = i + h * (v * 32 + 1024) + j * (v + 32);
  folded(rows / (v + 32), "((h*32)+j)");
  folded(rows % (v + 32), "ridx4");  // the loop i renders as its index
  // 64-wide heads of v + 32 positions, 8 query heads per key head: the key head is h//8, whatever v is
  UOp heads = i * 64 + t + h * (v * 64 + 2048);
  folded(heads / (v * 512 + 16384), "(h//8)");
  same_everywhere(heads % (v * 512 + 16384), simplify(heads % (v * 512 + 16384)));
  EXPECT_EQ(simplify(heads % (v * 512 + 16384)).render().find("/(("), std::string::npos);
  // a constant divisor of a product of a sum: the product distributed, then the usual rules
  folded((t + h * (v * 64 + 2048)) / 64, "((h*32)+(h*v))");
  folded((t + h * (v * 64 + 2048)) % 64, "t");
  // not folded: a remainder that can reach d (i + 1 at the last position), a dividend that can be negative, a
  // divisor in two symbolic sizes
  for (const UOp& e : {(rows + 1) / (v + 32), (i + (h - 5) * (v + 32)) / (v + 32), rows / (v + h + 32)}) {
    UOp s = simplify(e);
    EXPECT_NE(s.render().find('/'), std::string::npos) << s.render();
    same_everywhere(e, s);
  }
}
