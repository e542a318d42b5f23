// The schedule cache: a graph of a form scheduled before gets that schedule again, over its own buffers.
#include <gtest/gtest.h>

#include <tg/tg.h>

#include "schedule/schedule_cache.h"

using namespace tg;

namespace {

int64_t hits() { return schedule::schedule_cache_stats().hits; }

// rows of (x * 2 + y).sum(1) on the host, in double
std::vector<double> expected(const std::vector<float>& x, const std::vector<float>& y, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) out[r] += 2.0 * x[r * cols + c] + y[r * cols + c];
  return out;
}

void expect_rows(const Tensor& t, const std::vector<double>& want) {
  std::vector<float> got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4) << "row " << i;
}

}  // namespace

TEST(ScheduleCache, AGraphOfASeenFormRunsItsScheduleOverItsOwnBuffers) {
  const int64_t rows = 7, cols = 13;  // a shape no other test uses: the first schedule is built
  auto f = [](const Tensor& x, const Tensor& y) { return (x * 2 + y).sum(1); };
  Tensor a = Tensor::rand({rows, cols}).realize(), b = Tensor::rand({rows, cols}).realize();
  Tensor c = Tensor::rand({rows, cols}).realize(), d = Tensor::rand({rows, cols}).realize();
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>(), dv = d.to_vector<float>();
  int64_t before = hits();
  Tensor first = f(a, b).realize();
  EXPECT_EQ(hits(), before);
  Tensor second = f(c, d).realize();  // other buffers, the same form
  EXPECT_EQ(hits(), before + 1);
  // one buffer read twice is another form than two buffers: its own schedule
  Tensor same = f(c, c).realize();
  EXPECT_EQ(hits(), before + 1);
  // the same ops over other sizes: another form
  Tensor wide = f(Tensor::rand({rows, cols + 1}).realize(), Tensor::rand({rows, cols + 1}).realize());
  before = hits();
  wide.realize();
  EXPECT_EQ(hits(), before);
  expect_rows(first, expected(av, bv, rows, cols));
  expect_rows(second, expected(cv, dv, rows, cols));
  expect_rows(same, expected(cv, cv, rows, cols));
  // SCHEDULE_CACHE=0 builds every schedule
  Context off{{"SCHEDULE_CACHE", 0}};
  before = hits();
  Tensor uncached = f(a, b).realize();
  EXPECT_EQ(hits(), before);
  expect_rows(uncached, expected(av, bv, rows, cols));
}

TEST(ScheduleCache, AConvolutionGradientCalledAgainIsScheduledOnce) {
  // a layer's gradient as an eager training step computes it each step: every call after the first is a hit,
  // with the values of that call's inputs (checked against a call with the cache off)
  Tensor w = Tensor::randn({4, 3, 3, 3}).realize();
  for (int step = 0; step < 3; step++) {
    Tensor x = Tensor::randn({2, 3, 6, 6}).realize(), up = Tensor::randn({2, 4, 4, 4}).realize();
    Tensor xg = x.detach().requires_grad_(), wg = w.detach().requires_grad_();
    int64_t before = hits();
    std::vector<Tensor> g = xg.conv2d(wg).gradient({xg, wg}, up);
    Tensor::realize(g);
    if (step > 0) {
      EXPECT_EQ(hits(), before + 1) << "step " << step;
    }
    Context off{{"SCHEDULE_CACHE", 0}};
    std::vector<Tensor> fresh = xg.conv2d(wg).gradient({xg, wg}, up);
    for (size_t i = 0; i < g.size(); i++) {
      std::vector<float> got = g[i].to_vector<float>(), want = fresh[i].to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t j = 0; j < got.size(); j++) ASSERT_EQ(got[j], want[j]) << "gradient " << i << " element " << j;
    }
  }
}

TEST(ScheduleCache, KeepsNoBufferAlive) {
  // what the cache remembers is a schedule's form: its buffers go back when the tensors do
  Tensor::rand({1}).realize();  // the random state, made by the first rand of the process, stays
  int64_t before = GlobalCounters::mem_used;
  {
    Tensor a = Tensor::rand({300, 301}).realize(), b = Tensor::rand({300, 301}).realize();
    (a.exp() + b).sum(0).realize();
    (b.exp() + a).sum(0).realize();  // a hit
  }
  EXPECT_EQ(GlobalCounters::mem_used, before);
}
