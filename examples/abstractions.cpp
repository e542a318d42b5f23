// A walk through the abstractions of tinygrad.cpp, after tinygrad's docs/abstractions2.py (seed 001): from a
// Tensor down to the runtime, then the ShapeTracker and the symbolic layer. The printed lines are checked against
// tests/golden/abstractions.txt; where tinygrad.cpp differs from the seed, a comment says how.
#include <cassert>
#include <cstring>
#include <iostream>

#include <tg/tg.h>

#include "codegen/linearize.h"
#include "codegen/lower.h"
#include "engine/kernel_cache.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "schedule/schedule.h"
#include "shape/shapetracker.h"
#include "uop/symbolic.h"
#include "uop/uop.h"

using tg::Tensor;
using tg::shape::ShapeTracker;
using tg::uop::Ops;
using tg::uop::simplify;
using tg::uop::UOp;

namespace {

void tensor_to_runtime() {
  // == Example: Tensor 2+3 ==
  // let's trace an addition down through the layers of abstraction; we use the CPU device (C through clang or gcc)
  Tensor a({2});
  Tensor b({3});
  Tensor result = a + b;
  std::cout << result.to_vector<int>()[0] << "\n";

  // == The lazy graph of 2+3 ==
  // what tinygrad's LazyBuffer holds lives in the tensor's UOp: device, shape, dtype and the op that computes it
  result = Tensor({2}) + Tensor({3});
  const UOp& lazy = result.uop();
  std::cout << lazy;  // the ADD and its two sources
  assert(lazy.op() == Ops::ADD && lazy.src().size() == 2);
  // each source is a buffer on the CPU already holding its number (the seed's old tinygrad copied it there lazily)
  const UOp& two = lazy.src(0);
  assert(two.op() == Ops::BUFFER && tg::uop::device_of(two) == "CPU");
  int held = 0;
  tg::runtime::buffer_of(two).copyout(&held, sizeof held);
  std::cout << "the first source holds " << held << "\n";
  std::cout << "realized before realize(): " << (result.is_realized() ? "yes" : "no") << "\n";
  result.realize();
  std::cout << "realized after realize(): " << (result.is_realized() ? "yes" : "no") << "\n";
  // the tensor is now a Buffer on the device; copied out, it is 5
  tg::runtime::Buffer& realized = tg::runtime::buffer_of(tg::schedule::plain_buffer(result.uop()));
  int out = 0;
  realized.copyout(&out, sizeof out);
  std::cout << "Buffer on " << realized.device().name() << " holding " << out << "\n";

  // == Example: 2+3 in raw C ==
  // a Device is an Allocator, a Compiler and a Program loader; allocate three one-float buffers
  tg::runtime::Device& cpu = tg::runtime::get_device("CPU");
  tg::runtime::Buffer input_a(cpu, 1, tg::dtypes::float32), input_b(cpu, 1, tg::dtypes::float32), output(cpu, 1, tg::dtypes::float32);
  float va = 2, vb = 3;
  input_a.copyin(&va, 4);
  input_b.copyin(&vb, 4);
  // compile the program and run it: every program is called through one entry point (buffers, variables)
  std::string src =
      "void add(float *a, float *b, float *c) { *a = *b + *c; }\n"
      "void add_call(void* const* bufs, const long long* vars) { add(bufs[0], bufs[1], bufs[2]); }\n";
  std::shared_ptr<tg::runtime::Program> program = cpu.program("add_call", src);
  void* bufs[3] = {output.ptr(), input_a.ptr(), input_b.ptr()};
  (*program)(bufs, nullptr);
  float vout = 0;
  output.copyout(&vout, 4);
  std::cout << "raw C: 2+3 = " << vout << "\n";

  // == Linearizer ==
  // an AST becomes a linear list of uops; constants fold, so 2+3 is a store of 5 (constants are written into
  // their users, so unlike the seed's listing they get no line of their own)
  Tensor r = Tensor(2.0f).realize() + Tensor(3.0f).realize();
  tg::schedule::Schedule sched = tg::schedule::create_schedule({r.uop()});
  std::vector<UOp> uops = tg::codegen::linearize(tg::codegen::lower(sched.items.back().ast));
  std::cout << tg::codegen::print_uops(uops);

  // == Example: 2+3 generated C ==
  // the 2 and the 3 are constant folded into one store
  r = Tensor(2.0f) + Tensor(3.0f);
  sched = tg::schedule::create_schedule({r.uop()});
  std::cout << tg::engine::get_kernel(sched.items.back().ast, cpu)->rendered.source;
}

}  // namespace

int main() {
  tensor_to_runtime();

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
