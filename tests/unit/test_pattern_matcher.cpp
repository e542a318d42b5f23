// PatternMatcher and graph_rewrite: matching, captures, permutations, composition, fixed points, loops.
#include <gtest/gtest.h>

#include "tg/error.h"
#include "uop/pattern_matcher.h"

using namespace tg;
using namespace tg::uop;

namespace {
UOp a() { return UOp::variable("a", 0, 10); }
UOp b() { return UOp::variable("b", 0, 10); }
UOp c(int64_t v) { return UOp::const_(dtypes::int32, v); }
bool matches(const UPat& p, const UOp& u) {
  Match m;
  return p.match(u, m);
}
}  // namespace

TEST(UPat, MatchesOpDtypeArgAndSources) {
  EXPECT_TRUE(matches(UPat(Ops::ADD), a() + b()));
  EXPECT_FALSE(matches(UPat(Ops::MUL), a() + b()));
  EXPECT_TRUE(matches(UPat(OpSet{Ops::MUL, Ops::ADD}), a() + b()));
  EXPECT_TRUE(matches(UPat::var().dtype(dtypes::int32), a()));
  EXPECT_FALSE(matches(UPat::var().dtype(dtypes::int64), a()));
  EXPECT_TRUE(matches(UPat(Ops::DEFINE_VAR).arg(Arg(VarArg{"a", 0, 10})), a()));
  EXPECT_FALSE(matches(UPat(Ops::DEFINE_VAR).arg(Arg(VarArg{"a", 0, 9})), a()));
  EXPECT_TRUE(matches(UPat(Ops::ADD, {UPat(Ops::DEFINE_VAR), UPat(Ops::CONST)}), a() + 1));
  EXPECT_FALSE(matches(UPat(Ops::ADD, {UPat(Ops::CONST), UPat(Ops::DEFINE_VAR)}), a() + 1));
}

TEST(UPat, CapturesAndRepeatedNames) {
  Match m;
  ASSERT_TRUE((UPat::var("x") + UPat::var("y")).match(a() + b(), m));
  EXPECT_EQ(m["x"], a());
  EXPECT_EQ(m["y"], b());
  // a name used twice must be the same node
  EXPECT_TRUE(matches(UPat::var("x") + UPat::var("x"), a() + a()));
  EXPECT_FALSE(matches(UPat::var("x") + UPat::var("x"), a() + b()));
  EXPECT_THROW(m["nope"], InternalError);
}

TEST(UPat, CommutativeOpsMatchEitherOrder) {
  Match m;
  ASSERT_TRUE((UPat::var("x") * UPat::cvar("c")).match(c(3) * a(), m));
  EXPECT_EQ(m["x"], a());
  EXPECT_EQ(m["c"], c(3));
  // non-commutative ops match in order only
  EXPECT_TRUE(matches(UPat::var("x") < UPat::cvar("c"), a() < 3));
  EXPECT_FALSE(matches(UPat::var("x") < UPat::cvar("c"), c(3) < a()));
  // a failed permutation leaves no stale captures behind
  Match m2;
  EXPECT_FALSE((UPat::var("x") * UPat::cnst(5)).match(a() * b(), m2));
  EXPECT_TRUE(m2.captures.empty());
}

TEST(UPat, ConstantsByValue) {
  EXPECT_TRUE(matches(UPat::cnst(0), c(0)));
  EXPECT_TRUE(matches(UPat::cnst(0), UOp::const_(dtypes::float32, 0.0)));
  EXPECT_FALSE(matches(UPat::cnst(0), c(1)));
  EXPECT_FALSE(matches(UPat::cnst(true), c(1)));  // a bool pattern wants a bool constant
  EXPECT_TRUE(matches(UPat::cnst(true), UOp::const_(dtypes::bool_, true)));
  EXPECT_TRUE(matches(UPat::cvar("c"), c(7)));
  EXPECT_FALSE(matches(UPat::cvar("c"), a()));
}

TEST(UPat, RepeatAndPrefixSources) {
  UOp s = UOp::sink({a(), b(), a() + 1});
  EXPECT_TRUE(matches(UPat(Ops::SINK).src_repeat(UPat::var().dtype(dtypes::int32)), s));
  EXPECT_FALSE(matches(UPat(Ops::SINK).src_repeat(UPat(Ops::DEFINE_VAR)), s));
  EXPECT_TRUE(matches(UPat(Ops::SINK).src_prefix({UPat(Ops::DEFINE_VAR), UPat(Ops::DEFINE_VAR)}), s));
  EXPECT_FALSE(matches(UPat(Ops::SINK, {UPat(Ops::DEFINE_VAR), UPat(Ops::DEFINE_VAR)}), s));
}

TEST(PatternMatcher, RewriteAndCompose) {
  PatternMatcher add0({{UPat::var("x") + 0, [](const Match& m) { return m["x"]; }}});  // x+0 -> x
  PatternMatcher mul1({{UPat::var("x") * 1, [](const Match& m) { return m["x"]; }}});  // x*1 -> x
  UOp e = (a() * 1) + 0;
  EXPECT_EQ(graph_rewrite(e, add0), a() * 1);
  EXPECT_EQ(graph_rewrite(e, add0 + mul1), a());
  EXPECT_EQ((add0 + mul1).size(), 2u);
  // the first rule that fires wins; a callback returning null passes to the next rule
  PatternMatcher order({{UPat(Ops::ADD), [](const Match&) { return UOp(); }},
                        {UPat(Ops::ADD), [](const Match&) { return c(1); }},
                        {UPat(Ops::ADD), [](const Match&) { return c(2); }}});
  EXPECT_EQ(order.rewrite(a() + b()), c(1));
}

TEST(PatternMatcher, RewritesToAFixedPoint) {
  // x+1 -> x+... repeatedly peels constants: ((a+1)+1)+1 -> a, through results of results
  PatternMatcher peel({{UPat::var("x") + 1, [](const Match& m) { return m["x"]; }}});
  EXPECT_EQ(graph_rewrite(((a() + 1) + 1) + 1, peel), a());
  // rewriting a node's sources first, then the node, then what the rule returned
  PatternMatcher fold({{UPat::cvar("x") + UPat::cvar("y"),
                        [](const Match& m) { return c(std::get<int64_t>(m["x"].const_value()) + std::get<int64_t>(m["y"].const_value())); }}});
  EXPECT_EQ(graph_rewrite((c(1) + c(2)) + (c(3) + c(4)), fold), c(10));
}

TEST(PatternMatcher, ContextReachesTheRules) {
  struct Counter {
    int n = 0;
  } counter;
  PatternMatcher count({{UPat(Ops::DEFINE_VAR), [](const Match& m) { m.ctx<Counter>().n++; return UOp(); }}});
  graph_rewrite(a() + b() + a(), count, counter);
  EXPECT_EQ(counter.n, 2);  // memoized: each node once
  EXPECT_THROW(graph_rewrite(a(), count), InternalError);  // no context given
}

TEST(PatternMatcher, LoopsAndNonConvergenceRaise) {
  // a -> b -> a loops
  PatternMatcher swap({{UPat(Ops::DEFINE_VAR), [](const Match& m) { return m.root() == a() ? b() : a(); }}});
  EXPECT_THROW(graph_rewrite(a() + 1, swap), CompileError);
  // x -> x+1 grows forever
  PatternMatcher grow({{UPat(Ops::DEFINE_VAR), [](const Match& m) { return m.root() + 1; }}});
  try {
    graph_rewrite(a(), grow, RewriteOptions{10});
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("graph_rewrite"), std::string::npos);
  }
}

TEST(PatternMatcher, EndlessFreshRewritesHitTheChainLimit) {
  // c -> c+1 never revisits a node, so only the limit on rewrite chains stops it
  PatternMatcher count_up({{UPat::cvar("c"), [](const Match& m) { return c(std::get<int64_t>(m["c"].const_value()) + 1); }}});
  try {
    graph_rewrite(c(0), count_up, RewriteOptions{50});
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("did not converge"), std::string::npos) << e.what();
  }
}

TEST(PatternMatcher, ARuleMayNotChangeTheDtype) {
  PatternMatcher bad({{UPat(Ops::DEFINE_VAR), [](const Match&) { return UOp::const_(dtypes::int64, 0); }}});
  EXPECT_THROW(graph_rewrite(a(), bad), InternalError);
}
