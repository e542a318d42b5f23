// Random tensors cannot match PyTorch's numbers (another generator), so these check the distributions: moments and
// ranges over many draws, against the distribution's own values or PyTorch's initialization bounds
// (tests/golden/api.txt, "init" cases). Bounds are 6 standard errors wide: a correct generator fails ~1e-9 of runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/golden.h"

using namespace tg;

namespace {

struct Moments {
  double mean, std, min, max;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = t.cast(dtypes::float64).to_vector<double>();
  double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / static_cast<double>(v.size())), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

constexpr int64_t kN = 200000;
const double kSe = 6.0 / std::sqrt(static_cast<double>(kN));  // six standard errors, in units of the std

TEST(Random, RandIsUniformOnZeroOne) {
  Moments m = moments(Tensor::rand({kN}));
  EXPECT_NEAR(m.mean, 0.5, kSe * std::sqrt(1.0 / 12));
  EXPECT_NEAR(m.std, std::sqrt(1.0 / 12), 0.01);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LT(m.max, 1.0);
}

TEST(Random, RandnIsStandardNormal) {
  Tensor x = Tensor::randn({kN});
  Moments m = moments(x);
  EXPECT_NEAR(m.mean, 0.0, kSe);
  EXPECT_NEAR(m.std, 1.0, 0.01);
  // the fraction within one sigma: 0.6827
  double inside = (x.abs() < 1.0).cast(dtypes::float32).mean().item<float>();
  EXPECT_NEAR(inside, 0.6827, 0.01);
  EXPECT_FALSE(x.isnan().any().item<bool>());
}

TEST(Random, NormalAndUniformScale) {
  Moments n = moments(Tensor::normal({kN}, 3.0, 0.5));
  EXPECT_NEAR(n.mean, 3.0, 0.5 * kSe);
  EXPECT_NEAR(n.std, 0.5, 0.01);
  Moments u = moments(Tensor::uniform({kN}, -2.0, 6.0));
  EXPECT_NEAR(u.mean, 2.0, 8 * kSe);
  EXPECT_GE(u.min, -2.0);
  EXPECT_LT(u.max, 6.0);
  EXPECT_EQ(Tensor::uniform({3}, 0, 1, dtypes::float16).dtype(), dtypes::float16);
}

TEST(Random, RandintCoversTheRangeAndNothingElse) {
  Tensor r = Tensor::randint({kN}, -3, 5);
  EXPECT_EQ(r.dtype(), dtypes::int32);
  std::vector<int32_t> v = r.to_vector<int32_t>();
  std::vector<int64_t> counts(8, 0);
  for (int32_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 5);
    counts[x + 3]++;
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c) / kN, 1.0 / 8, 0.01);
  EXPECT_EQ(Tensor::randint({2, 3}, 0, 10, dtypes::int64).dtype(), dtypes::int64);
}

TEST(Random, RandpermIsAPermutation) {
  for (int64_t n : {0, 1, 7, 100}) {
    std::vector<int32_t> v = Tensor::randperm(n).to_vector<int32_t>();
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; i++) EXPECT_EQ(v[i], i);
  }
}

TEST(Random, ManualSeedRepeatsTheSameNumbers) {
  Tensor::manual_seed(42);
  std::vector<float> a = Tensor::randn({16}).to_vector<float>();
  std::vector<int32_t> b = Tensor::randint({16}, 0, 100).to_vector<int32_t>();
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::randn({16}).to_vector<float>(), a);
  EXPECT_EQ(Tensor::randint({16}, 0, 100).to_vector<int32_t>(), b);
}

TEST(Random, LikeFormsKeepShapeDtypeAndDevice) {
  Tensor x = Tensor::zeros({3, 2}, dtypes::float16);
  for (const Tensor& t : {x.rand_like(), x.randn_like(), x.zeros_like(), x.ones_like(), x.full_like(2), x.empty_like()}) {
    EXPECT_EQ(t.shape(), (Shape{3, 2}));
    EXPECT_EQ(t.dtype(), dtypes::float16);
    EXPECT_EQ(t.device(), x.device());
  }
  EXPECT_EQ(x.ones_like(dtypes::int8).dtype(), dtypes::int8);
  EXPECT_EQ(x.full_like(2.5).to_vector<float>(), std::vector<float>(6, 2.5f));
}

TEST(Random, InitializationsMatchPyTorchBounds) {
  for (const auto& c : tg::testing::golden_cases("api.txt").at("init")) {
    SCOPED_TRACE(c.variant);
    Shape shape;
    bool has_a = c.variant.rfind("kaiming", 0) == 0;
    for (size_t i = 0; i + (has_a ? 1 : 0) < c.args.size(); i++) shape.push_back(static_cast<int64_t>(c.args[i]));
    double scale = c.output.floats[0], a = has_a ? c.args.back() : 0;
    Tensor w = c.variant == "kaiming_normal" ? Tensor::kaiming_normal(shape, a)
               : c.variant == "glorot_uniform" ? Tensor::glorot_uniform(shape)
                                               : Tensor::kaiming_uniform(shape, a);
    EXPECT_EQ(w.shape(), shape);
    Moments m = moments(w);
    double se = 6.0 / std::sqrt(static_cast<double>(w.numel()));
    if (c.variant == "kaiming_normal") {
      EXPECT_NEAR(m.std / scale, 1.0, 0.02);
    } else {  // uniform(-bound, bound): std is bound / sqrt(3), and the extremes come close to the bound.
      // The values are float32: rand * 2*bound - bound rounds to at most the bound as a float32, which can lie
      // half an ulp above the exact one (a time-seeded run met it: 0.0416667 both ways).
      EXPECT_LE(std::max(-m.min, m.max), static_cast<double>(static_cast<float>(scale)));
      EXPECT_GE(std::max(-m.min, m.max), 0.99 * scale);
      EXPECT_NEAR(m.std / (scale / std::sqrt(3.0)), 1.0, 0.02);
    }
    EXPECT_NEAR(m.mean / scale, 0.0, se);
  }
}

TEST(Random, DropoutOnlyWhileTraining) {
  Tensor x = Tensor::ones({kN});
  EXPECT_FALSE(Tensor::training);
  EXPECT_EQ(x.dropout(0.3).sum().item<float>(), static_cast<float>(kN));  // identity outside training
  {
    TrainGuard train;
    EXPECT_TRUE(Tensor::training);
    std::vector<float> v = x.dropout(0.25).to_vector<float>();
    int64_t zeros = std::count(v.begin(), v.end(), 0.0f);
    EXPECT_NEAR(static_cast<double>(zeros) / kN, 0.25, 0.01);
    for (float f : v) ASSERT_TRUE(f == 0.0f || std::fabs(f - 1 / 0.75f) < 1e-6);
    EXPECT_EQ(x.dropout(1.0).sum().item<float>(), 0.0f);
  }
  EXPECT_FALSE(Tensor::training);
}

}  // namespace
