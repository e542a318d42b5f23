// A walk through the abstractions of tinygrad.cpp, after tinygrad's docs/abstractions2.py (seed 001).
// Each printed line is a value the seed shows in a comment; tests/golden/abstractions.txt holds them.
//
// So far the walk covers the symbolic layer; the Tensor, ShapeTracker, schedule and runtime sections follow as
// those layers land.
#include <iostream>

#include "uop/symbolic.h"
#include "uop/uop.h"

using tg::uop::simplify;
using tg::uop::UOp;

int main() {
  // == Example: Variable (in tinygrad/shape/symbolic.py) ==
  // Under the hood, ShapeTracker is powered by a small symbolic algebra library.
  // A Variable has a name and a min and max (inclusive).
  UOp a = UOp::variable("a", 0, 10);
  UOp b = UOp::variable("b", 0, 10);

  // some math examples: a*10 has a min of 0 and a max of 100
  std::cout << (a * 10).vmin() << " " << (a * 10).vmax() << "\n";
  // 0 20, you get the idea
  std::cout << (a + b).vmin() << " " << (a + b).vmax() << "\n";

  // complex expressions are where it gets fun: b is gone
  UOp expr = simplify((a + b * 10) % 10);
  std::cout << expr.render() << "\n";

  // one more: b only ranges over 0..10, so it can't affect the output
  expr = simplify((a * 40 + b) / 20);
  std::cout << expr.render() << "\n";
  std::cout << expr.vmin() << " " << expr.vmax() << "\n";
  return 0;
}
