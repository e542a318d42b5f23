// assign in place: a realized tensor, or a view of one, takes new values in its own buffer (PyTorch's in-place
// write: every view of the buffer sees them), while tensors computed from the old values keep them. Checked against
// plain loops over the same data, and by the buffer a tensor reads before and after.
#include <gtest/gtest.h>

#include <numeric>
#include <tg/tg.h>

#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "schedule/grouping.h"
#include "support/expect_error.h"

namespace tg {
namespace {

// the BUFFER node a realized tensor reads
uop::UOp buffer_of(const Tensor& t) { return schedule::movement_base(t.uop()); }

Tensor iota(int64_t rows, int64_t cols) { return Tensor::arange(0, static_cast<double>(rows * cols), 1, dtypes::float32).reshape({rows, cols}).contiguous().realize(); }

TEST(Assign, AViewOfARealizedTensorIsWrittenInPlace) {
  Tensor x = iota(3, 4), same = x;
  uop::UOp before = buffer_of(x);
  int64_t kernels = GlobalCounters::kernel_count;
  x.shrink({{1, 2}, {0, 4}}).assign(Tensor({10.f, 11.f, 12.f, 13.f}).reshape({1, 4}));
  EXPECT_EQ(GlobalCounters::kernel_count - kernels, 1) << "one kernel writes the row, at once";
  EXPECT_EQ(buffer_of(x), before) << "the same buffer, not a new one";
  std::vector<float> want(12);
  std::iota(want.begin(), want.end(), 0.f);
  for (int j = 0; j < 4; j++) want[4 + j] = 10.f + j;
  EXPECT_EQ(x.to_vector<float>(), want);
  EXPECT_EQ(same.to_vector<float>(), want);
  // through a transpose: a column of x, from a value of another dtype (cast to x's)
  x.transpose(0, 1).shrink({{2, 3}, {0, 3}}).assign(Tensor({{-1, -2, -3}}));
  for (int i = 0; i < 3; i++) want[i * 4 + 2] = static_cast<float>(-1 - i);
  EXPECT_EQ(x.to_vector<float>(), want);
  // through a flip and a step: x[0, ::-2] = (100, 101), which is x[0, 3] and x[0, 1]
  x[{0, Slice({}, {}, -2)}].assign(Tensor({100.f, 101.f}));
  want[3] = 100.f, want[1] = 101.f;
  EXPECT_EQ(x.to_vector<float>(), want);
}

TEST(Assign, ViewsSeeTheNewValuesAndLazyResultsKeepTheOld) {
  Tensor x = iota(2, 3);
  Tensor row = x.shrink({{1, 2}, {0, 3}});  // a view of x's buffer: it aliases, as in PyTorch
  Tensor doubled = x * 2;                   // computed from the old values, not yet realized
  x.shrink({{1, 2}, {0, 3}}).assign(Tensor::full({1, 3}, 7.f));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ(doubled.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1, 2, 7, 7, 7}));
  // a whole realized tensor given a value that does not read it: in place too
  uop::UOp before = buffer_of(x);
  Tensor lazy = x + 1;
  x.assign(Tensor::full({2, 3}, 3.f));
  EXPECT_EQ(buffer_of(x), before);
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(lazy.to_vector<float>(), (std::vector<float>{1, 2, 3, 8, 8, 8}));
}

TEST(Assign, AValueThatReadsTheBufferIsComputedWholeFirst) {
  // x[1:] = x[:-1] over one buffer: every element takes its left neighbour's old value, whatever order a kernel
  // would write in
  Tensor x = iota(1, 8).reshape({8}).realize();
  x.shrink({{1, 8}}).assign(x.shrink({{0, 7}}) * 10);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 10, 20, 30, 40, 50, 60}));
  // the value a plain view of the same buffer, shifted either way, or flipped over itself: each reads the old values
  std::vector<float> old(8), want(8);
  std::iota(old.begin(), old.end(), 0.f);
  Tensor z = Tensor(old, {8}).contiguous().realize();
  z.shrink({{1, 8}}).assign(z.shrink({{0, 7}}));
  for (int i = 1; i < 8; i++) want[i] = old[i - 1];
  want[0] = old[0];
  EXPECT_EQ(z.to_vector<float>(), want);
  old = want;
  z.shrink({{0, 7}}).assign(z.shrink({{1, 8}}));
  for (int i = 0; i < 7; i++) want[i] = old[i + 1];
  EXPECT_EQ(z.to_vector<float>(), want);
  old = want;
  z.shrink({{0, 6}}).assign(z.shrink({{2, 8}}).flip({0}));
  for (int i = 0; i < 6; i++) want[i] = old[7 - i];
  EXPECT_EQ(z.to_vector<float>(), want);
  // the whole tensor from its own old value stays lazy (an optimizer's update: one schedule, no copy)
  Tensor y = iota(1, 4).reshape({4}).realize();
  int64_t kernels = GlobalCounters::kernel_count;
  y.assign(y * 2 + 1);
  EXPECT_EQ(GlobalCounters::kernel_count, kernels) << "not run yet";
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 3, 5, 7}));
}

// x[...] = v on a realized tensor writes its buffer in place, as PyTorch's: a view taken before sees the new values
// (a row swap through a temporary view gives row 1 twice, as PyTorch and tinygrad), and so does the tensor a
// detached handle shares its buffer with
TEST(Assign, SetitemWritesTheBufferThatViewsAndDetachedHandlesShare) {
  Tensor t = iota(3, 2);
  Tensor first = t[{0}];
  t.setitem({0}, t[{1}]);
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{2, 3}));
  t.setitem({2}, first);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 3, 2, 3, 2, 3}));
  // the whole tensor from its own values, and integer tensor indices: in place too
  t.setitem({Slice()}, t * 2 + Tensor::arange(0, 6, 1, dtypes::float32).reshape({3, 2}));
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{4, 7}));
  t.setitem({Tensor(std::vector<int32_t>{0, 2}, {2}), 1}, -1.0);
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{4, -1}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, -1, 6, 9, 8, -1}));
  Tensor d = iota(3, 3);
  d.detach().setitem({1, 2}, 5.0);
  d[{1}].setitem({0}, -1.0);  // chained: d[1][0] = -1
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{0, 1, 2, -1, 4, 5, 6, 7, 8}));
}

// x[...] = v on a tensor not yet realized is lazy, and the gradient flows through it: to v where it was written, to
// x's inputs elsewhere
TEST(Assign, SetitemOnALazyTensorIsDifferentiable) {
  Tensor x = Tensor({1.f, 2.f, 3.f, 4.f}).requires_grad_(), v = Tensor({10.f, 20.f}).requires_grad_();
  Tensor z = x * 3;
  z.setitem({Slice(0, 2)}, v * v);
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{100, 400, 9, 12}));
  z.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 0, 3, 3}));
  EXPECT_EQ(v.grad().to_vector<float>(), (std::vector<float>{20, 40}));
}

TEST(Assign, EmptyAndZeroDimensionalTargets) {
  Tensor x = iota(2, 3);
  x.shrink({{1, 1}, {0, 3}}).assign(Tensor::empty({0, 3}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  Tensor s = Tensor(2.5f).contiguous().realize();
  s.assign(Tensor(4.f));
  EXPECT_EQ(s.item<float>(), 4.f);
  x.shrink({{0, 1}, {2, 3}}).reshape({}).assign(Tensor(9.f));  // a 0-d view of one element
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1, 9, 3, 4, 5}));
}

TEST(Assign, ViewsThatRepeatOrMakeUpElementsCannotBeWritten) {
  Tensor x = Tensor::zeros({3}).contiguous().realize();
  tg::testing::expect_error<ArgumentError>([&] { x.reshape({1, 3}).expand({2, 3}).assign(Tensor::ones({2, 3})); }, "assign",
                                           {"expanded view", "(2, 3)"}, "test_assign.cpp");
  tg::testing::expect_error<ArgumentError>([&] { x.pad({{1, 1}}).assign(Tensor::ones({5})); }, "assign", {"padded view", "(5,)"},
                                           "test_assign.cpp");
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 0})) << "nothing written";
}

TEST(Assign, ARowAtABoundPositionIsOneKernelForEveryPosition) {
  // a KV cache's write: cache[pos] = row, pos a bound Variable; compiled once, scheduled once
  Tensor cache = Tensor::zeros({6, 4}).contiguous().realize();
  Variable pos("pos", 0, 5);
  std::vector<float> want(24, 0.f);
  for (int64_t p : {0, 3, 5, 1}) {
    Tensor row = Tensor::full({1, 4}, static_cast<float>(p + 1)).contiguous().realize();
    int64_t compiled = runtime::compile_stats().compiled;
    cache.shrink({{pos.bind(p), pos.bind(p) + 1}, {0, 4}}).assign(row);
    if (p != 0) {
      EXPECT_EQ(runtime::compile_stats().compiled, compiled) << "position " << p << " compiled a kernel of its own";
    }
    for (int j = 0; j < 4; j++) want[p * 4 + j] = static_cast<float>(p + 1);
    EXPECT_EQ(cache.to_vector<float>(), want) << "pos " << p;
  }
}

TEST(Assign, TinyJitReplaysAnInPlaceWriteAtEachPosition) {
  Tensor cache = Tensor::zeros({5, 3}).contiguous().realize();
  Variable pos("pos", 0, 4);
  // writes row pos, then sums the rows so far (read after the write: a replay must keep that order)
  TinyJit<Tensor> step([&](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
    cache.shrink({{vars[0], vars[0] + 1}, {0, 3}}).assign(in[0] * 2);
    return cache.shrink({{0, vars[0] + 1}, {0, 3}}).sum(0).realize();
  });
  std::vector<float> rows(15, 0.f);
  for (int64_t p = 0; p < 5; p++) {
    Tensor x = Tensor::full({1, 3}, static_cast<float>(p + 1)).realize();
    std::vector<float> got = step({x}, {pos.bind(p)}).to_vector<float>();
    for (int j = 0; j < 3; j++) rows[p * 3 + j] = 2.f * (p + 1);
    std::vector<float> want(3, 0.f);
    for (int64_t i = 0; i <= p; i++)
      for (int j = 0; j < 3; j++) want[j] += rows[i * 3 + j];
    EXPECT_EQ(got, want) << "pos " << p;
    EXPECT_EQ(cache.to_vector<float>(), rows) << "pos " << p;
  }
  EXPECT_TRUE(step.captured());
}

TEST(Assign, TinyJitRereadsABufferItWritesInPlaceLaterInTheCall) {
  // the sum is taken before the write, in each call: it reads what the previous call wrote, so a replay must not
  // skip it as a step whose inputs never change
  Tensor acc = Tensor::zeros({2}).contiguous().realize();
  TinyJit<Tensor> step([&](const std::vector<Tensor>& in) {
    Tensor before = (acc * 1).realize();
    acc.assign(in[0] + 0);
    return before;
  });
  std::vector<float> last{0, 0};
  for (int i = 1; i <= 5; i++) {
    Tensor x = Tensor::full({2}, static_cast<float>(i)).contiguous().realize();
    EXPECT_EQ(step({x}).to_vector<float>(), last) << "call " << i;
    last = {static_cast<float>(i), static_cast<float>(i)};
    EXPECT_EQ(acc.to_vector<float>(), last) << "call " << i;
  }
}

TEST(Assign, LazyReadersAmongManyUnrelatedGraphsKeepTheOldValues) {
  // writes skip the graphs whose Bloom filter of buffers (UOp::buffer_bloom) lacks the written buffer's bit: with
  // 300 lazy graphs over other buffers alive, the lazy readers of the written one still see its old values, and a
  // graph's filter holds the bit of every buffer it reads
  Tensor target = Tensor(std::vector<float>{1, 2, 3, 4}, {4}).realize();
  std::vector<Tensor> others, unrelated;
  for (int i = 0; i < 300; i++) {
    others.push_back(Tensor::full({4}, static_cast<double>(i)).contiguous().realize());
    unrelated.push_back(others.back() * 2 + 1);
  }
  Tensor reader = target * 10 + unrelated[7];
  uop::UOp buffer = buffer_of(target);
  uint64_t bit = buffer.buffer_bloom();
  EXPECT_NE(bit, 0u);
  EXPECT_EQ(reader.uop().buffer_bloom() & bit, bit);
  EXPECT_EQ(uop::UOp::const_(dtypes::float32, 1.0).buffer_bloom(), 0u);
  target.assign(Tensor(std::vector<float>{-1, -2, -3, -4}, {4}));
  EXPECT_EQ(reader.to_vector<float>(), (std::vector<float>{25, 35, 45, 55}));
  EXPECT_EQ(target.to_vector<float>(), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(unrelated[299].to_vector<float>(), (std::vector<float>{599, 599, 599, 599}));
}

}  // namespace
}  // namespace tg
