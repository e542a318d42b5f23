// UOp: interning, lifetime, printing, toposort, derived ranges, and graphs too deep for recursion.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tg/error.h"
#include "uop/pattern_matcher.h"
#include "uop/symbolic.h"
#include "uop/uop.h"

using namespace tg;
using namespace tg::uop;

TEST(UOp, InterningReturnsTheSameNode) {
  UOp a = UOp::variable("a", 0, 10);
  UOp x = a + 1, y = a + 1;
  EXPECT_EQ(x, y);
  EXPECT_EQ(x.get(), y.get());
  EXPECT_EQ(UOp::const_(dtypes::int32, 5), UOp::const_(dtypes::int32, 5));
  EXPECT_EQ(UOp::variable("a", 0, 10), a);
}

TEST(UOp, DifferentArgOrDtypeIsADifferentNode) {
  EXPECT_NE(UOp::const_(dtypes::int32, 5), UOp::const_(dtypes::int32, 6));
  EXPECT_NE(UOp::const_(dtypes::int32, 5), UOp::const_(dtypes::int64, 5));
  EXPECT_NE(UOp::variable("a", 0, 10), UOp::variable("a", 0, 11));
  EXPECT_NE(UOp::variable("a", 0, 10), UOp::variable("b", 0, 10));
  // 0.0 and -0.0 are different constants; nan interns like any other value
  EXPECT_NE(UOp::const_(dtypes::float32, 0.0), UOp::const_(dtypes::float32, -0.0));
  EXPECT_EQ(UOp::const_(dtypes::float32, NAN), UOp::const_(dtypes::float32, NAN));
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  EXPECT_NE(a + b, b + a);  // the order of sources is part of the node
}

TEST(UOp, NodesAreFreedWhenUnreferenced) {
  size_t before = live_uop_count();
  {
    UOp a = UOp::variable("freed_a", 0, 10);
    UOp e = (a * 30011 + 70001) % 50021;  // constants no other test (or kernel cache) holds
    EXPECT_GE(live_uop_count(), before + 6);
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOp, ConstantsAreCastToTheirDtype) {
  EXPECT_EQ(std::get<int64_t>(UOp::const_(dtypes::int8, int64_t{300}).const_value()), 44);
  EXPECT_EQ(std::get<double>(UOp::const_(dtypes::float32, int64_t{3}).const_value()), 3.0);
  EXPECT_EQ(std::get<bool>(UOp::const_(dtypes::bool_, int64_t{3}).const_value()), true);
}

TEST(UOp, PrintingListsEachNodeOnce) {
  UOp a = UOp::variable("a", 0, 10);
  UOp s = a * 2 + a * 2;  // a*2 is shared: printed once
  std::ostringstream os;
  os << s;
  std::string out = os.str();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4);  // a, 2, a*2, the ADD
  EXPECT_NE(out.find("   0 Ops.DEFINE_VAR"), std::string::npos);
  EXPECT_NE(out.find("('a', 0, 10)"), std::string::npos);
  EXPECT_NE(out.find("Ops.ADD"), std::string::npos);
  EXPECT_NE(out.find("[2, 2]"), std::string::npos);  // the ADD reads node 2 twice
}

TEST(UOp, ToposortPutsSourcesFirst) {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp e = (a + b) * (a + 1);
  std::vector<UOp> order = e.toposort();
  EXPECT_EQ(order.back(), e);
  for (size_t i = 0; i < order.size(); i++)
    for (const UOp& s : order[i].src()) {
      auto pos = std::find(order.begin(), order.end(), s) - order.begin();
      EXPECT_LT(pos, static_cast<long>(i));
    }
  EXPECT_EQ(order.size(), 6u);  // a, b, a+b, 1, a+1, the product
}

TEST(UOp, DeepChainsNeedNoRecursion) {
  // 100k nodes deep: print, toposort, rewrite, range and free without overflowing the stack
  UOp x = UOp::variable("x", 0, 10);
  UOp e = x;
  for (int i = 0; i < 100000; i++) e = e + 1;
  EXPECT_EQ(e.toposort().size(), 100002u);  // x, the constant 1, and 100000 ADDs
  EXPECT_EQ(e.vmax(), 100010);
  std::ostringstream os;
  os << e;
  EXPECT_GT(os.str().size(), 100000u);
  UOp s = simplify(e);
  EXPECT_EQ(s, x + 100000);
  PatternMatcher noop({{UPat(Ops::MUL), [](const Match&) { return UOp(); }}});
  EXPECT_EQ(graph_rewrite(e, noop), e);
}

TEST(UOp, ExactFloat32ProductsAreThoseWhoseBitsFitAndStayNormal) {
  // a float32 product is exact when its operands' significant bits add up to 24 or fewer and its magnitude stays
  // normal: then a*b + c rounds once as an FMA or not (a dequantization's scale * code - offset)
  auto f32 = [](const UOp& x) { return x.cast(dtypes::float32); };
  UOp code = f32(UOp::variable("q", 0, 255, dtypes::int32) & 15);                             // 4 bits
  UOp scale6 = f32(UOp::variable("s", 0, 63, dtypes::int32));                                 // 6 bits
  UOp half = f32(UOp::variable("h", 0, 65535, dtypes::uint16).bitcast(dtypes::float16));     // 11 bits, >= 2^-24
  UOp any = UOp::variable("w", 0, 1 << 30, dtypes::int32).bitcast(dtypes::float32);           // unknown
  UOp wide = f32(UOp::variable("n", 0, 1 << 20, dtypes::int32));                             // 21 bits
  EXPECT_TRUE(exact_float32_product(half * scale6 * code));   // 11 + 6 + 4
  EXPECT_TRUE(exact_float32_product(-half * f32(UOp::variable("m", -8, 7, dtypes::int32))));
  EXPECT_TRUE(exact_float32_product(half * half));            // 22 bits, >= 2^-48
  EXPECT_TRUE(exact_float32_product(code * UOp::const_(dtypes::float32, 0.375)));  // 0.375 has 2 bits
  EXPECT_FALSE(exact_float32_product(half * half * half));    // 33 bits
  EXPECT_FALSE(exact_float32_product(wide * half));           // 32 bits
  EXPECT_FALSE(exact_float32_product(any * code));            // a float32 of unknown bits
  EXPECT_FALSE(exact_float32_product(code * UOp::const_(dtypes::float32, 0.1)));  // 0.1 has 24 bits
  EXPECT_FALSE(exact_float32_product(f32(UOp::variable("big", 0, (1 << 25) + 1, dtypes::int32)) * code));  // rounded cast
  // small enough to be subnormal: rounded
  UOp tiny = half * UOp::const_(dtypes::float32, std::ldexp(1.0, -110));
  EXPECT_FALSE(exact_float32_product(tiny));
  EXPECT_FALSE(exact_float32_product(half + half));           // not a product
  // lanes gathered from vectors of the same lanes, 5 levels deep: each node is looked at once (not 16^5 times)
  UOp lane = half;
  for (int level = 0; level < 5; level++) {
    UOp v = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(16), std::vector<UOp>(16, lane));
    lane = UOp::make(Ops::GEP, dtypes::float32, {v}, Arg(std::vector<int64_t>{3}));
  }
  EXPECT_TRUE(exact_float32_product(lane * code));
}

TEST(UOp, RangesOfOps) {
  UOp a = UOp::variable("a", -3, 5), b = UOp::variable("b", 2, 4);
  EXPECT_EQ((a * b).vmin(), -12);
  EXPECT_EQ((a * b).vmax(), 20);
  EXPECT_EQ((a / b).vmin(), -1);  // -3/2 truncates to -1
  EXPECT_EQ((a / b).vmax(), 2);
  EXPECT_EQ((a % b).vmin(), -3);
  EXPECT_EQ((a % b).vmax(), 3);
  EXPECT_EQ(a.maximum(b).vmin(), 2);
  EXPECT_EQ((-a).vmin(), -5);
  EXPECT_EQ((a < b).vmin(), 0);
  EXPECT_EQ((b < 5).vmin(), 1);
  EXPECT_EQ((b.ne(7)).vmin(), 1);
  EXPECT_EQ(((b < 3).where(a, b)).vmin(), -3);
  EXPECT_EQ((b & 1).vmax(), 1);
  EXPECT_EQ((b | 1).vmax(), 7);
  EXPECT_EQ((b << 2).vmax(), 16);
  EXPECT_EQ((b >> 1).vmin(), 1);
  // an int32 product that may overflow knows nothing narrower than int32
  UOp big = UOp::variable("big", 0, 1 << 30);
  EXPECT_EQ((big * 4).vmax(), INT32_MAX);
  EXPECT_EQ((big * 4).vmin(), INT32_MIN);
  EXPECT_EQ(a.cast(dtypes::int8).vmin(), -3);
  EXPECT_EQ(big.cast(dtypes::int8).vmin(), -128);
}

TEST(UOp, SubstituteReplacesEverywhere) {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  UOp e = (a + 1) * (a + 2);
  EXPECT_EQ(e.substitute({{a, b}}), (b + 1) * (b + 2));
  EXPECT_EQ(e.substitute({{a + 1, b}}), b * (a + 2));
}

TEST(UOp, BadBuildsRaiseClearErrors) {
  UOp a = UOp::variable("a", 0, 10);
  EXPECT_THROW(UOp::variable("v", 5, 1), ArgumentError);
  try {
    UOp::variable("v", 5, 1);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Variable 'v' has min 5 > max 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test_uop.cpp"), std::string::npos) << e.what();  // the caller's line
    EXPECT_TRUE(e.is_user_error());
  }
  EXPECT_THROW(a / 0, ArgumentError);
  EXPECT_THROW(a % 0, ArgumentError);
  EXPECT_THROW(a + UOp::const_(dtypes::int64, 1), DTypeError);
  EXPECT_THROW(UOp::const_(dtypes::float32, 1.0) % 2.0, DTypeError);
  EXPECT_THROW(a.where(a, a), DTypeError);
  EXPECT_THROW(UOp::variable("f", 0, 1, dtypes::float32), DTypeError);
}
