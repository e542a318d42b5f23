// Bad input to the foundation raises the documented tg::Error, with the op and the user's line in the message.
#include <gtest/gtest.h>

#include "tg/error.h"
#include "uop/pattern_matcher.h"
#include "uop/symbolic.h"

using namespace tg;
using namespace tg::uop;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(FoundationErrors, VariableWithMinAboveMax) {
  std::string m = message_of([] { UOp::variable("idx", 10, 3); });
  EXPECT_NE(m.find("tg::ArgumentError in Variable"), std::string::npos) << m;
  EXPECT_NE(m.find("min 10 > max 3"), std::string::npos) << m;
  EXPECT_NE(m.find("test_foundation_errors.cpp:"), std::string::npos) << m;
}

TEST(FoundationErrors, DivisionAndModuloByConstantZero) {
  UOp a = UOp::variable("a", 0, 10);
  std::string m = message_of([&] { (void)(a / 0); });
  EXPECT_NE(m.find("tg::ArgumentError in IDIV"), std::string::npos) << m;
  EXPECT_NE(m.find("division by zero"), std::string::npos) << m;
  m = message_of([&] { (void)(a % 0); });
  EXPECT_NE(m.find("modulo by zero"), std::string::npos) << m;
}

TEST(FoundationErrors, RewriteThatNeverConverges) {
  PatternMatcher grow({{UPat(Ops::DEFINE_VAR), [](const Match& m) { return m.root() * 2; }}});
  std::string m = message_of([&] { graph_rewrite(UOp::variable("a", 0, 10), grow); });
  EXPECT_NE(m.find("tg::CompileError in graph_rewrite"), std::string::npos) << m;
}

TEST(FoundationErrors, ErrorKindsAndHierarchy) {
  ShapeError s("reshape", "cannot reshape (2, 3) to (4,)");
  EXPECT_EQ(s.kind(), ErrorKind::Shape);
  EXPECT_EQ(s.op(), "reshape");
  EXPECT_TRUE(s.is_user_error());
  EXPECT_FALSE(InternalError("x", "y").is_user_error());
  const std::runtime_error& base = s;
  EXPECT_NE(std::string(base.what()).find("tg::ShapeError in reshape: cannot reshape (2, 3) to (4,)"), std::string::npos);
  EXPECT_THROW(throw DeviceError("alloc", "out of memory"), Error);
  EXPECT_THROW(throw CompileError("cc", "failed"), Error);
}
