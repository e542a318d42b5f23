// A walk through the abstractions of tinygrad.cpp, after tinygrad's docs/abstractions2.py (seed 001).
// Each printed line is a value the seed shows in a comment; tests/golden/abstractions.txt holds them.
//
// So far the walk covers the ShapeTracker and the symbolic layer; the Tensor, schedule and runtime sections follow
// as those layers land.
#include <iostream>

#include "shape/shapetracker.h"
#include "uop/symbolic.h"
#include "uop/uop.h"

using tg::shape::ShapeTracker;
using tg::uop::simplify;
using tg::uop::UOp;

int main() {
  // == Example: ShapeTracker (in tinygrad/shape/shapetracker.py) ==
  // All movement ops are zero copy: a ShapeTracker tracks the indices into the buffer.
  // Create a virtual (10, 10) tensor: just a shape, there's no actual tensor. It has one view.
  ShapeTracker st = ShapeTracker::from_shape({10, 10});
  std::cout << st << "\n";

  // we can permute it, and the strides change
  st = st.permute({1, 0});
  std::cout << st << "\n";

  // we can then reshape it, and the strides change again; note how the permute stays applied
  st = st.reshape({5, 2, 5, 2});
  std::cout << st << "\n";

  // reshaping it to (100,) needs a second view: views stack, so any number of movement ops stays zero copy
  st = st.reshape({100});
  std::cout << st << "\n";

  // we can render the index expression at any time
  std::cout << st.to_indexed().first.render() << "\n";

  // if we reshape it back, the index gets simple again
  st = st.reshape({10, 10});
  std::cout << st.to_indexed().first.render() << "\n";

  // the ShapeTracker still has two views though...
  std::cout << st << "\n";

  // ...until we simplify it!
  st = st.simplify();
  std::cout << st << "\n";

  // and now we permute it back, and it's even contiguous
  st = st.permute({1, 0});
  std::cout << st << "\n";
  std::cout << "contiguous: " << (st.contiguous() ? "true" : "false") << "\n";

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
