#include <gtest/gtest.h>
#include "uop/symbolic.h"
using namespace tg::uop;
TEST(Smoke, Seed) {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  EXPECT_EQ(simplify((a + b * 10) % 10).render(), "(a%10)");
}
