// The stream is tinygrad's: checked against JAX's Threefry (the numbers tinygrad's own tests print) and against a
// Threefry-2x32 written here from Salmon et al. 2011, itself checked on Random123's known answers. PyTorch has
// another generator, so the distributions are checked by moments and ranges over many draws, against the
// distribution's own values or PyTorch's initialization bounds (tests/golden/api.txt, "init" cases). Bounds are 6
// standard errors wide: a correct generator fails ~1e-9 of runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <tuple>

#include "base/util.h"
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

// Threefry-2x32 with 20 rounds, on the host
std::pair<uint32_t, uint32_t> host_threefry(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0], x1 += ks[1];
  for (uint32_t i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) x0 += x1, x1 = std::rotl(x1, kRot[(i % 2) * 4 + j]) ^ x0;
    x0 += ks[(i + 1) % 3], x1 += ks[(i + 2) % 3] + i + 1;
  }
  return {x0, x1};
}

// the words a device's stream gives at counter (low 32 bits) `at`: tinygrad's scheme, on the host
std::vector<uint32_t> host_words(uint32_t device_place, uint32_t seed, uint32_t at, uint32_t n) {
  const unsigned char be[4] = {0, 0, 0, static_cast<unsigned char>(device_place)};
  std::array<unsigned char, 32> d = base::sha256(be, 4);
  uint32_t key0 = uint32_t{d[28]} << 24 | uint32_t{d[29]} << 16 | uint32_t{d[30]} << 8 | d[31];
  auto [k0, k1] = host_threefry(key0, seed, at, 0);
  uint32_t half = (n + 1) / 2;
  std::vector<uint32_t> out(2 * half);
  for (uint32_t i = 0; i < half; i++) std::tie(out[i], out[half + i]) = host_threefry(k0, k1, i, i + half);
  out.resize(n);
  return out;
}

TEST(Random, HostThreefryGivesRandom123sKnownAnswers) {
  EXPECT_EQ(host_threefry(0, 0, 0, 0), std::make_pair(0x6b200159u, 0x99ba4efeu));
  EXPECT_EQ(host_threefry(~0u, ~0u, ~0u, ~0u), std::make_pair(0x1cb996fcu, 0xbb002be7u));
  EXPECT_EQ(host_threefry(0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3), std::make_pair(0xc4923a9cu, 0x483df7a0u));
}

TEST(Random, Sha256GivesTheStandardsDigests) {  // FIPS 180-4's examples, one and two blocks, and the empty message
  auto hex = [](const std::string& m) {
    std::array<unsigned char, 32> d = base::sha256(m.data(), m.size());
    std::string s;
    for (unsigned char c : d) s += "0123456789abcdef"[c >> 4], s += "0123456789abcdef"[c & 15];
    return s;
  };
  EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// tinygrad's test_threefry_against_reference_full: JAX's numbers for seed 1337, three calls in a row
TEST(Random, TheStreamIsTinygrads) {
  Tensor::manual_seed(1337);
  const std::vector<float> first = {0.45735931396484375f, 0.6311527490615845f, 0.15571284294128418f, 0.8149417638778687f, 0.7862188816070557f,
                                    0.8008807897567749f,  0.568588376045227f,  0.9852620363235474f,  0.42314577102661133f, 0.9811755418777466f,
                                    0.38059568405151367f, 0.09186363220214844f, 0.9497315883636475f, 0.5826880931854248f, 0.3796330690383911f,
                                    0.5610522031784058f,  0.16122901439666748f, 0.3732343912124634f, 0.9795231819152832f, 0.3280656337738037f};
  const std::vector<float> second = {0.09199333190917969f, 0.9130761623382568f, 0.7048608064651489f, 0.22254979610443115f, 0.0014830827713012695f,
                                     0.37023448944091797f, 0.7790107727050781f, 0.7484984397888184f, 0.7524604797363281f, 0.19875383377075195f,
                                     0.48537540435791016f, 0.10002851486206055f, 0.5369305610656738f, 0.3294715881347656f, 0.5246957540512085f,
                                     0.7659651041030884f, 0.7949080467224121f, 0.34988296031951904f, 0.9798505306243896f, 0.2599533796310425f};
  const std::vector<float> third = {0.3198714256286621f, 0.7984923124313354f, 0.320881724357605f,  0.4716068506240845f, 0.7323365211486816f,
                                    0.9663800001144409f, 0.13873648643493652f, 0.16062307357788086f, 0.49300849437713623f, 0.10077548027038574f};
  EXPECT_EQ(Tensor::rand({20}).to_vector<float>(), first);
  EXPECT_EQ(Tensor::rand({4, 5}).to_vector<float>(), second);  // the shape does not matter, only the count
  EXPECT_EQ(Tensor::rand({10}).to_vector<float>(), third);
}

// every float dtype takes its bytes from the words in order, a second device its own key, and the counter counts
// words, not numbers
TEST(Random, EachDtypeAndDeviceReadsTheStreamAsTinygradDoes) {
  Tensor::manual_seed(0xdeadbeefcafeull);  // the low word is the seed
  std::vector<uint32_t> w = host_words(0, 0xbeefcafe, 0, 3);  // 5 halves: 3 words
  std::vector<uint16_t> halves(6);
  std::memcpy(halves.data(), w.data(), 12);
  std::vector<float> want16;
  for (int i = 0; i < 5; i++) want16.push_back(half_bits_to_float(static_cast<uint16_t>((halves[i] >> 6) | 0x3c00)) - 1.0f);
  EXPECT_EQ(Tensor::rand({5}, dtypes::float16).cast(dtypes::float32).to_vector<float>(), want16);
  w = host_words(0, 0xbeefcafe, 3, 4);  // 2 doubles: 4 words
  std::vector<double> want64;
  for (int i = 0; i < 2; i++) {
    uint64_t u = (uint64_t{w[2 * i + 1]} << 32 | w[2 * i]) >> 12 | 0x3ff0000000000000ull;
    want64.push_back(std::bit_cast<double>(u) - 1.0);
  }
  EXPECT_EQ(Tensor::rand({2}, dtypes::float64).to_vector<double>(), want64);
  w = host_words(1, 0xbeefcafe, 0, 3);  // the second device drawn on
  std::vector<float> want32;
  for (uint32_t x : w) want32.push_back(std::bit_cast<float>((x >> 9) | 0x3f800000u) - 1.0f);
  EXPECT_EQ(Tensor::rand({3}, dtypes::float32, "CPU:1").to_vector<float>(), want32);
  w = host_words(0, 0xbeefcafe, 7, 2);  // 7 fp8 numbers: 2 words, after the first device's 7 words
  std::vector<float> want8;
  for (int i = 0; i < 7; i++) want8.push_back(fp8_bits_to_float(static_cast<uint8_t>(((w[i / 4] >> (8 * (i % 4))) & 0xff) >> 5 | 0x38), dtypes::fp8e4m3) - 1.0f);
  EXPECT_EQ(Tensor::rand({7}, dtypes::fp8e4m3).cast(dtypes::float32).to_vector<float>(), want8);
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
