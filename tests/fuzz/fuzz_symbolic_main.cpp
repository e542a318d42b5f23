// Standalone symbolic fuzzer for long runs: fuzz_symbolic [cases=100000] [seed=1] [depth=5]
// Prints the first expression whose simplification is wrong, with the point where it differs.
#include <cstdlib>
#include <iostream>

#include "support/symbolic_eval.h"
#include "uop/symbolic.h"

int main(int argc, char** argv) {
  long cases = argc > 1 ? std::atol(argv[1]) : 100000;
  uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  int depth = argc > 3 ? std::atoi(argv[3]) : 5;
  tg::testing::ExprGen gen(seed);
  for (long i = 0; i < cases; i++) {
    gen.new_vars();
    tg::uop::UOp e = gen.expr(static_cast<int>(gen.rand_int(1, depth)));
    std::string err;
    try {
      err = tg::testing::check_expression(e, tg::uop::simplify(e), gen, 20);
    } catch (const std::exception& ex) {
      err = std::string("exception: ") + ex.what() + " while simplifying " + e.render();
    }
    if (!err.empty()) {
      std::cout << "case " << i << " (seed " << seed << "): " << err << "\n";
      return 1;
    }
  }
  std::cout << cases << " cases passed (seed " << seed << ")\n";
  return 0;
}
