// Valid graphs whose fused kernels hold long chains of ops (a chain of 260 multiplies, 300 mixed ops, deep index
// math, thousands of ops in one kernel) compile and give the right values: the renderer binds deep expressions to
// locals instead of nesting them past the C compilers' limits (clang stops at 256 nested brackets). Reference
// values are computed here in double (or exact integers), step by step, not by our kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <tg/tg.h>

#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

using namespace tg;

namespace {

std::vector<float> input(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = start + step * static_cast<float>(i);
  return v;
}

// the sources of the kernels that compute t
std::string kernel_source(const Tensor& t) {
  std::string src;
  for (const schedule::ScheduleItem& item : schedule::create_schedule({t.uop()}).items)
    if (item.kind == schedule::ScheduleItem::Kind::Kernel) src += engine::get_kernel(item.ast, runtime::get_device("CPU"))->rendered.source;
  return src;
}

// the deepest nesting of (), [] and {} in C source (clang's -fbracket-depth counts all three, limit 256)
int max_nesting(const std::string& src) {
  int depth = 0, deepest = 0;
  for (char c : src) {
    if (c == '(' || c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if (c == ')' || c == ']' || c == '}') depth--;
  }
  return deepest;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rtol, double atol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "element " << i;
}

}  // namespace

TEST(DeepExpressions, ChainOf260Multiplies) {
  std::vector<float> v = input(16, -2.0f, 0.25f);
  Tensor x(v, {16});
  for (int i = 0; i < 260; i++) x = x * 1.001f;
  EXPECT_LE(max_nesting(kernel_source(x)), 128);
  std::vector<double> want(v.begin(), v.end());
  for (double& w : want)
    for (int i = 0; i < 260; i++) w *= static_cast<double>(1.001f);
  expect_close(x.to_vector<float>(), want, 1e-4, 0);
}

TEST(DeepExpressions, KernelOf300MixedOps) {
  // multiplies, adds, maxes, negations and wheres on a condition of the (exact) input, so no comparison can flip
  std::vector<float> va = input(32, -1.5f, 0.1f);
  Tensor a(va, {32});
  Tensor x = a;
  for (int i = 0; i < 100; i++) {
    x = x * 0.97f + 0.05f;
    if (i == 70) x = x.maximum(a - 0.5f);
    x = (a > static_cast<float>(i % 7) * 0.3f - 1.0f).where(-x, a * 0.5f);
  }
  EXPECT_LE(max_nesting(kernel_source(x)), 128);
  std::vector<double> want(32);
  for (size_t j = 0; j < 32; j++) {
    double av = va[j], xv = av;
    for (int i = 0; i < 100; i++) {
      xv = xv * static_cast<double>(0.97f) + static_cast<double>(0.05f);
      if (i == 70) xv = std::max(xv, av - static_cast<double>(0.5f));
      xv = av > static_cast<double>(static_cast<float>(i % 7) * 0.3f - 1.0f) ? -xv : av * 0.5;
    }
    want[j] = xv;
  }
  expect_close(x.to_vector<float>(), want, 1e-4, 1e-5);
}

TEST(DeepExpressions, LongChainsOfAddsWheresAndMaxes) {
  std::vector<float> va = input(24, -3.0f, 0.25f), vb = input(24, 1.0f, -0.125f);
  Tensor a(va, {24}), b(vb, {24});
  Tensor adds = a, wheres = a, maxes = a;
  for (int i = 0; i < 300; i++) {
    adds = adds + b;
    wheres = (a > static_cast<float>(i % 11) * 0.5f - 3.0f).where(wheres + 1.0f, b);
    maxes = (maxes - 0.01f).maximum(b);
  }
  for (const Tensor* t : {&adds, &wheres, &maxes}) EXPECT_LE(max_nesting(kernel_source(*t)), 128);
  std::vector<double> want_adds(24), want_wheres(24), want_maxes(24);
  for (size_t j = 0; j < 24; j++) {
    double s = va[j], w = va[j], m = va[j];
    for (int i = 0; i < 300; i++) {
      s += vb[j];
      w = va[j] > static_cast<double>(static_cast<float>(i % 11) * 0.5f - 3.0f) ? w + 1.0 : vb[j];
      m = std::max(m - static_cast<double>(0.01f), static_cast<double>(vb[j]));
    }
    want_adds[j] = s, want_wheres[j] = w, want_maxes[j] = m;
  }
  expect_close(adds.to_vector<float>(), want_adds, 1e-5, 1e-4);
  expect_close(wheres.to_vector<float>(), want_wheres, 1e-6, 0);
  expect_close(maxes.to_vector<float>(), want_maxes, 1e-5, 1e-4);
}

TEST(DeepExpressions, IntegerChain) {
  // multiply, add, xor, and, division: 300 integer ops kept below 2^24 so int32 never wraps
  std::vector<int32_t> v(20);
  for (size_t j = 0; j < v.size(); j++) v[j] = static_cast<int32_t>(j * 37 + 5);
  Tensor x(v, {20});
  for (int i = 0; i < 100; i++) {
    x = ((x * 7 + i) ^ (i * 13 + 1)) & 0xffffff;
    if (i % 40 == 39) x = x.idiv(Tensor(3, dtypes::int32));
  }
  EXPECT_LE(max_nesting(kernel_source(x)), 128);
  std::vector<int32_t> want(v);
  for (int32_t& w : want)
    for (int i = 0; i < 100; i++) {
      w = ((w * 7 + i) ^ (i * 13 + 1)) & 0xffffff;
      if (i % 40 == 39) w /= 3;
    }
  EXPECT_EQ(x.to_vector<int32_t>(), want);
}

TEST(DeepExpressions, DeepIndexMath) {
  // 40 transposes through reshapes: a stack of views whose index expression nests deeply; the result is the
  // permutation of the elements applied 40 times
  const int64_t R = 4, C = 6;
  std::vector<float> v = input(R * C, 0.0f, 1.0f);
  Tensor x(v, {R, C});
  for (int i = 0; i < 40; i++) x = x.permute({1, 0}).reshape({R, C}).flip({i % 2});
  Tensor y = x + 1.0f;
  EXPECT_LE(max_nesting(kernel_source(y)), 128);
  std::vector<double> want(v.begin(), v.end());
  for (int i = 0; i < 40; i++) {
    std::vector<double> t(want.size()), f(want.size());
    for (int64_t r = 0; r < C; r++)  // transpose: (C, R) in row-major order, read as (R, C)
      for (int64_t c = 0; c < R; c++) t[r * R + c] = want[c * C + r];
    for (int64_t r = 0; r < R; r++)
      for (int64_t c = 0; c < C; c++) f[r * C + c] = i % 2 == 0 ? t[(R - 1 - r) * C + c] : t[r * C + (C - 1 - c)];
    want = f;
  }
  for (double& w : want) w += 1.0;
  expect_close(y.to_vector<float>(), want, 0, 0);
}

TEST(DeepExpressions, GatherByADeepIntegerIndex) {
  // an index computed by 160 integer ops on an arange (realized by its own kernel), then gathered
  std::vector<float> v = input(64, 0.5f, 1.0f);
  Tensor x(v, {64});
  Tensor idx = Tensor::arange(64).cast(dtypes::int32);
  for (int i = 0; i < 40; i++) idx = ((idx * 5 + i) ^ 7) & 63;
  Tensor y = x.gather(0, idx) * 2.0f;
  EXPECT_LE(max_nesting(kernel_source(y)), 128);
  std::vector<double> want(64);
  for (int j = 0; j < 64; j++) {
    int k = j;
    for (int i = 0; i < 40; i++) k = ((k * 5 + i) ^ 7) & 63;
    want[j] = 2.0 * v[k];
  }
  expect_close(y.to_vector<float>(), want, 0, 0);
}

TEST(DeepExpressions, ReduceOfADeepExpression) {
  std::vector<float> v = input(8 * 64, -1.0f, 1.0f / 256);
  Tensor x(v, {8, 64});
  for (int i = 0; i < 150; i++) x = x * 1.002f + 0.001f;
  Tensor s = x.sum(1);
  EXPECT_LE(max_nesting(kernel_source(s)), 128);
  std::vector<double> want(8, 0.0);
  for (size_t j = 0; j < v.size(); j++) {
    double w = v[j];
    for (int i = 0; i < 150; i++) w = w * static_cast<double>(1.002f) + static_cast<double>(0.001f);
    want[j / 64] += w;
  }
  expect_close(s.to_vector<float>(), want, 1e-4, 1e-4);
}

TEST(DeepExpressions, ThousandsOfOpsInOneKernel) {
  std::vector<float> v = input(16, -1.0f, 0.125f);
  for (int n : {1000, 5000}) {
    Tensor x(v, {16});
    for (int i = 0; i < n; i++) x = i % 2 ? x * 0.9999f : x + 0.0001f;
    int64_t before = GlobalCounters::kernel_count;
    std::vector<float> got = x.to_vector<float>();
    EXPECT_EQ(GlobalCounters::kernel_count - before, 1) << n << " ops";
    std::vector<double> want(v.begin(), v.end());
    for (double& w : want)
      for (int i = 0; i < n; i++) w = i % 2 ? w * static_cast<double>(0.9999f) : w + static_cast<double>(0.0001f);
    expect_close(got, want, 1e-4, 1e-5);
  }
}

TEST(DeepExpressions, ChainOf20000OpsRealizesWithoutRecursion) {
  // every pass from the Tensor graph to the source walks with explicit stacks: 20k ops deep is no deeper for them
  std::vector<float> v = input(16, 0.5f, 0.0625f);
  Tensor x(v, {16});
  for (int i = 0; i < 20000; i++) x = i % 2 ? x * 0.99995f : x + 0.00002f;
  std::vector<double> want(v.begin(), v.end());
  for (double& w : want)
    for (int i = 0; i < 20000; i++) w = i % 2 ? w * static_cast<double>(0.99995f) : w + static_cast<double>(0.00002f);
  expect_close(x.to_vector<float>(), want, 1e-3, 1e-5);
}
