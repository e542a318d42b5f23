// tg::Dim and tg::Variable (symbolic shapes, step 1): the algebra and its canonical equality, bound values that
// never fold into constants, bounds, errors, and the uop-layer helpers (to_uop, unbind, eval). Expected values are
// worked out by hand; each symbolic result is also evaluated at every value of its variable against plain ints.
#include <gtest/gtest.h>

#include <sstream>

#include "tg/dim.h"
#include "uop/sint.h"

using namespace tg;

TEST(Dim, ConcreteSizesAreIntegers) {
  Dim a = 6, b = int64_t{4};
  EXPECT_FALSE(a.is_symbolic());
  EXPECT_EQ(a + b, Dim(10));
  EXPECT_EQ(a - b, Dim(2));
  EXPECT_EQ(a * b, Dim(24));
  EXPECT_EQ(Dim(7).idiv(2), Dim(3));
  EXPECT_EQ(Dim(7).mod(4), Dim(3));
  EXPECT_EQ(a.concrete("test"), 6);
  EXPECT_EQ(a.value(), 6);
  EXPECT_EQ(a.min(), 6);
  EXPECT_EQ(a.max(), 6);
  EXPECT_EQ(a.str(), "6");
  EXPECT_EQ(Dim(6).hash(), a.hash());
  EXPECT_THROW(a.idiv(0), ArgumentError);
  EXPECT_THROW(a.mod(-3), ArgumentError);
}

TEST(Dim, ABoundVariableStaysSymbolicWithItsValue) {
  Variable v("start_pos", 1, 1024);
  Dim p = v.bind(7);
  ASSERT_TRUE(p.is_symbolic());
  EXPECT_EQ(p.value(), 7);
  EXPECT_EQ(p.min(), 1);
  EXPECT_EQ(p.max(), 1024);
  EXPECT_EQ(p.str(), "start_pos");
  // p + 1 is not folded to 8: a bound size never becomes its value (a JIT replay would compute with the old one)
  Dim q = p + 1;
  ASSERT_TRUE(q.is_symbolic());
  EXPECT_EQ(q.value(), 8);
  EXPECT_EQ(q.min(), 2);
  EXPECT_EQ(q.max(), 1025);
  std::ostringstream os;
  os << q;
  EXPECT_EQ(os.str(), q.str());
  EXPECT_NE(q.str().find("start_pos"), std::string::npos) << q.str();
  EXPECT_FALSE(Variable("one", 5, 5).bind(5).is_symbolic());  // one possible value: that value
}

TEST(Dim, EqualityIsCanonical) {
  Variable v("n", 0, 100);
  Dim p = v.bind(3);
  EXPECT_EQ(p + 1, Dim(1) + p);
  EXPECT_EQ((p + 1) * 4 - p * 4, Dim(4));  // folds to a concrete size
  EXPECT_FALSE(((p + 1) * 4 - p * 4).is_symbolic());
  EXPECT_EQ(p - p, Dim(0));
  EXPECT_EQ((p * 2 + 6).idiv(2), p + 3);
  EXPECT_EQ((p * 4 + 2).mod(2), Dim(0));
  EXPECT_EQ((p + 1).hash(), (1 + p).hash());
  EXPECT_FALSE(p + 1 == p + 2);
  EXPECT_FALSE(p == Dim(3));                 // symbolic is never equal to its value
  EXPECT_FALSE(v.bind(3) == v.bind(4));      // nor to another binding of the variable
  EXPECT_EQ(v.bind(3), v.bind(3));
  EXPECT_TRUE(provably_equal(p * 3 - p, p * 2));
  EXPECT_FALSE(provably_equal(p, p + 1));
}

TEST(Dim, ValuesMatchPlainIntegersAtEveryPoint) {
  Variable v("k", 0, 40);
  for (int64_t n = 0; n <= 40; n++) {
    Dim p = v.bind(n);
    EXPECT_EQ(((p + 3) * 5).value(), (n + 3) * 5);
    EXPECT_EQ(((p * 7 + 5).idiv(3)).value(), (n * 7 + 5) / 3);
    EXPECT_EQ(((p + 9).mod(4)).value(), (n + 9) % 4);
    EXPECT_EQ((p * p - p).value(), n * n - n);
    Dim e = (p + 3).idiv(2);
    EXPECT_LE(e.min(), e.value());
    EXPECT_GE(e.max(), e.value());
  }
}

TEST(Dim, ComparisonsResolveOnlyWhenTheyHoldForEveryValue) {
  Dim p = Variable("p", 1, 10).bind(4);
  EXPECT_EQ(resolve_lt(p, p + 1), std::optional<bool>(true));
  EXPECT_EQ(resolve_lt(p + 1, p), std::optional<bool>(false));
  EXPECT_EQ(resolve_lt(Dim(0), p), std::optional<bool>(true));
  EXPECT_EQ(resolve_lt(p, Dim(11)), std::optional<bool>(true));
  EXPECT_EQ(resolve_lt(Dim(5), p), std::nullopt);  // 5 < p for p in 6..10 only
  EXPECT_EQ(resolve_lt(Dim(2), Dim(3)), std::optional<bool>(true));
}

TEST(Dim, ErrorsNameTheSizeAndTheRange) {
  Variable v("pos", 0, 15);
  Dim p = v.bind(2);
  try {
    (void)(p + 1).concrete("reshape");
    FAIL() << "concrete() of a symbolic size";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("reshape"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pos"), std::string::npos) << e.what();
  }
  try {
    (void)v.bind(16);
    FAIL() << "bind outside the range";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("[0, 15]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(v.bind(-1), ArgumentError);
  EXPECT_THROW(Variable("x", 3, 2), ArgumentError);
  EXPECT_THROW(Variable("x", -1, 2), ArgumentError);
  EXPECT_THROW(Variable("x", 0, (int64_t{1} << 62) + 1), ArgumentError);
  EXPECT_THROW(Variable("2x", 0, 2), ArgumentError);
  EXPECT_THROW(Variable("a-b", 0, 2), ArgumentError);
  EXPECT_THROW(Variable("", 0, 2), ArgumentError);
  EXPECT_THROW(Variable("lane3", 0, 2), ArgumentError);  // codegen's own names
  EXPECT_THROW(Variable("idx0", 0, 2), ArgumentError);
  EXPECT_NO_THROW(Variable("index", 0, 2));
  EXPECT_THROW(v.unbound().value(), ArgumentError);  // no value to take
}

TEST(Dim, UnbindRecordsValuesAndRefusesTwoForOneName) {
  Variable v("start_pos", 0, 99), w("batch", 1, 8);
  uop::VarVals vals;
  Dim a = uop::unbind(v.bind(5) + w.bind(2) * 3, &vals);
  EXPECT_EQ(a, v.unbound() + w.unbound() * 3);
  ASSERT_EQ(vals.vals.size(), 2u);
  ASSERT_NE(vals.find("start_pos"), nullptr);
  EXPECT_EQ(*vals.find("start_pos"), 5);
  EXPECT_EQ(*vals.find("batch"), 2);
  EXPECT_EQ(uop::eval(uop::to_uop(a), vals), 11);
  EXPECT_NO_THROW(uop::unbind(v.bind(5), &vals));  // the same value again
  EXPECT_THROW(uop::unbind(v.bind(6), &vals), ArgumentError);
  EXPECT_THROW(uop::eval(uop::to_uop(v.unbound()), uop::VarVals{}), ArgumentError);
}

TEST(Dim, ToUopRetypesTheExpressionForAKernel) {
  Dim p = Variable("n", 0, 50).bind(9) * 2 + 1;
  uop::UOp e32 = uop::to_uop(p, dtypes::int32);
  for (const uop::UOp& u : e32.toposort()) EXPECT_EQ(u.dtype(), dtypes::int32) << uop::op_name(u.op());
  EXPECT_EQ(uop::eval(e32, {}), 19);
  EXPECT_EQ(uop::from_uop(uop::to_uop(p)), p);
  EXPECT_EQ(uop::to_uop(Dim(12), dtypes::int32), uop::UOp::const_(dtypes::int32, 12));
}
