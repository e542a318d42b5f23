// Row reduces (Grouping::row_reduces): a reduction read through a broadcast of its result along the axes it reduces
// (softmax's max and sum, layernorm's mean and variance) computed in the kernel that reads it, in loops of its own
// before the loop over the row's outputs. KernelsRowReduces.* are value tests (run again under NOOPT, RANDOM_OPTS
// and on OpenCL, where the reduces stay kernels of their own); RowReduceFusion.* (test_fusion.cpp) check the kernels
// on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include <tg/tg.h>

using namespace tg;

namespace {

// float64 references over rows of length c, with PyTorch's NaN rules (a NaN anywhere in a row makes its max NaN)
std::vector<double> ref_softmax(const std::vector<float>& x, int64_t c, bool log) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / c; r++) {
    const float* row = x.data() + r * c;
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t j = 0; j < c; j++) m = std::isnan(row[j]) || std::isnan(m) ? NAN : std::max(m, double(row[j]));
    for (int64_t j = 0; j < c; j++) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < c; j++) out[r * c + j] = log ? (row[j] - m) - std::log(s) : std::exp(row[j] - m) / s;
  }
  return out;
}

// (and each row's sqrt(var + eps) in *sd when asked)
std::vector<double> ref_layernorm(const std::vector<float>& x, int64_t c, double eps, std::vector<double>* sd = nullptr) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / c; r++) {
    const float* row = x.data() + r * c;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < c; j++) mean += row[j];
    mean /= c;
    for (int64_t j = 0; j < c; j++) var += (row[j] - mean) * (row[j] - mean);
    var /= c;
    for (int64_t j = 0; j < c; j++) out[r * c + j] = (row[j] - mean) / std::sqrt(var + eps);
    if (sd) sd->push_back(std::sqrt(var + eps));
  }
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " at " << i << ": " << got[i];
      continue;
    }
    if (std::isinf(want[i])) ASSERT_EQ(got[i], want[i]) << what << " at " << i;
    else ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at " << i;
  }
}

std::vector<float> random_rows(int64_t rows, int64_t c, uint32_t seed, float scale = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> x(static_cast<size_t>(rows * c));
  for (float& v : x) v = u(rng);
  return x;
}

}  // namespace

TEST(KernelsRowReduces, SoftmaxLogSoftmaxAndLayernormMatchFloat64AtSizesAroundTheVectors) {
  // rows of 1, a prime, one vector, a remainder, a row that vectors and their unrolled copies cover whole (no loop
  // left: a layernorm's mean and variance one after the other), a long row; 64 rows and more (fused on the CPU)
  // and fewer
  for (auto [rows, c] : std::vector<std::pair<int64_t, int64_t>>{{64, 1}, {64, 7}, {65, 16}, {64, 64}, {128, 100}, {96, 1000}, {8, 33}}) {
    std::vector<float> x = random_rows(rows, c, static_cast<uint32_t>(rows * 131 + c));
    Tensor t(x, {rows, c});
    std::string at = std::to_string(rows) + "x" + std::to_string(c);
    expect_close(t.softmax(1).to_vector<float>(), ref_softmax(x, c, false), 2e-6, "softmax " + at);
    expect_close(t.log_softmax(-1).to_vector<float>(), ref_softmax(x, c, true), 2e-6, "log_softmax " + at);
    expect_close(t.layernorm(-1, 1e-5).to_vector<float>(), ref_layernorm(x, c, 1e-5), 5e-5, "layernorm " + at);
  }
}

TEST(KernelsRowReduces, ThreeDimensionsReducedOverTheLastTwo) {
  std::vector<float> x = random_rows(70, 3 * 11, 7);
  Tensor t(x, {70, 3, 11});
  expect_close(t.layernorm({1, 2}, 1e-5).to_vector<float>(), ref_layernorm(x, 33, 1e-5), 5e-5, "layernorm over (1, 2)");
  expect_close(t.reshape({70, 33}).softmax(1).reshape({70, 3, 11}).to_vector<float>(), ref_softmax(x, 33, false), 2e-6, "softmax");
}

TEST(KernelsRowReduces, NaNAndInfinitiesFollowPyTorch) {
  // a NaN early and late in a row, a row of -inf (0/0: NaN), +inf (inf - inf: NaN), a huge value, -0 and 0
  int64_t rows = 64, c = 37;
  std::vector<float> x = random_rows(rows, c, 3);
  const float inf = std::numeric_limits<float>::infinity();
  x[0 * c + 1] = NAN;
  x[1 * c + 36] = NAN;
  for (int64_t j = 0; j < c; j++) x[2 * c + j] = -inf;
  x[3 * c + 5] = inf;
  x[4 * c + 20] = 3e38f;
  x[5 * c + 0] = -0.0f, x[5 * c + 1] = 0.0f;
  x[6 * c + 9] = -inf;
  Tensor t(x, {rows, c});
  expect_close(t.softmax(1).to_vector<float>(), ref_softmax(x, c, false), 2e-6, "softmax");
  expect_close(t.log_softmax(1).to_vector<float>(), ref_softmax(x, c, true), 2e-6, "log_softmax");
}

TEST(KernelsRowReduces, SoftmaxGradientMatchesItsClosedForm) {
  // d/dx_j sum_k w_k softmax(x)_k = s_j (w_j - sum_k s_k w_k): its backward has a row reduce too (sum_k s_k w_k)
  int64_t rows = 96, c = 50;
  std::vector<float> xv = random_rows(rows, c, 11), wv = random_rows(rows, c, 12, 1.0f);
  Tensor x = Tensor(xv, {rows, c}).requires_grad_();
  Tensor w(wv, {rows, c});
  (x.softmax(1) * w).sum().backward();
  std::vector<double> s = ref_softmax(xv, c, false), want(xv.size());
  for (int64_t r = 0; r < rows; r++) {
    double dot = 0;
    for (int64_t j = 0; j < c; j++) dot += s[r * c + j] * wv[r * c + j];
    for (int64_t j = 0; j < c; j++) want[r * c + j] = s[r * c + j] * (wv[r * c + j] - dot);
  }
  expect_close(x.grad().to_vector<float>(), want, 1e-5, "softmax gradient");
}

TEST(KernelsRowReduces, LayernormGradientMatchesItsClosedForm) {
  // with y = (x - mean) / sd and upstream g: dx = (g - mean(g) - y mean(g y)) / sd. Rows of 64 (no loop left in the
  // row reduces, forward or backward) and of 100
  for (int64_t c : {64, 100}) {
    int64_t rows = 128;
    double eps = 1e-5;
    std::vector<float> xv = random_rows(rows, c, 21), gv = random_rows(rows, c, 22, 1.0f);
    Tensor x = Tensor(xv, {rows, c}).requires_grad_();
    (x.layernorm(-1, eps) * Tensor(gv, {rows, c})).sum().backward();
    std::vector<double> sd, y = ref_layernorm(xv, c, eps, &sd), want(xv.size());
    for (int64_t r = 0; r < rows; r++) {
      double mg = 0, mgy = 0;
      for (int64_t j = 0; j < c; j++) mg += gv[r * c + j] / c, mgy += gv[r * c + j] * y[r * c + j] / c;
      for (int64_t j = 0; j < c; j++) want[r * c + j] = (gv[r * c + j] - mg - y[r * c + j] * mgy) / sd[r];
    }
    expect_close(x.grad().to_vector<float>(), want, 1e-4, "layernorm gradient, rows of " + std::to_string(c));
  }
}
