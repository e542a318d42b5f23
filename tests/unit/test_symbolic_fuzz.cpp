// Fuzz: random integer expressions simplify to something equal at random points, and vmin/vmax bound them.
#include <gtest/gtest.h>

#include "support/symbolic_eval.h"
#include "uop/symbolic.h"

using namespace tg;
using namespace tg::testing;

TEST(SymbolicFuzz, SimplifiedEqualsOriginal) {
  ExprGen gen(20261121);
  int checked = 0;
  for (int i = 0; i < 4000; i++) {
    gen.new_vars();
    uop::UOp e = gen.expr(static_cast<int>(gen.rand_int(1, 4)));
    uop::UOp s = uop::simplify(e);
    std::string err = check_expression(e, s, gen, 12);
    ASSERT_EQ(err, "") << "case " << i;
    checked++;
  }
  EXPECT_EQ(checked, 4000);
}
