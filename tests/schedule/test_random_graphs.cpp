// Random graphs of primitives give the same values fused (one realize at the end) and unfused (every op
// realized on its own), so fusion, view pushing and the grouping rules never change a result.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include <tg/tg.h>

using namespace tg;

namespace {

using Op = std::function<Tensor(const Tensor&, const Tensor&)>;

// every op maps (4, 4, 4) tensors to a (4, 4, 4) tensor; values stay within a few hundred
std::vector<std::pair<const char*, Op>> ops() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return (a * b).sin() * 2; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b * 0.5f; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return (a < b).where(a, -b); }},
      {"exp2", [](const Tensor& a, const Tensor&) { return a.sin().exp2(); }},
      {"sqrt", [](const Tensor& a, const Tensor&) { return (a * a + 1).sqrt(); }},
      {"permute", [](const Tensor& a, const Tensor&) { return a.permute({2, 0, 1}); }},
      {"flip", [](const Tensor& a, const Tensor&) { return a.flip({1}); }},
      {"shift", [](const Tensor& a, const Tensor&) { return a.pad({{0, 0}, {1, 0}, {0, 2}}).shrink({{0, 4}, {0, 4}, {1, 5}}); }},
      {"reshape", [](const Tensor& a, const Tensor&) { return a.reshape({16, 4}).permute({1, 0}).reshape({4, 4, 4}); }},
      {"sum_bcast", [](const Tensor& a, const Tensor& b) { return a.sum(1, true) * 0.25f + b; }},
      {"max_bcast", [](const Tensor& a, const Tensor& b) { return b - a.max(2, true); }},
      {"sum_then_op", [](const Tensor& a, const Tensor& b) { return (a.sum(0) * 0.25f + 1).reshape({1, 4, 4}).expand({4, 4, 4}) + b; }},
      {"stride_view", [](const Tensor& a, const Tensor&) { return a.pad({{0, 4}, {0, 0}, {0, 0}}).reshape({4, 2, 4, 4}).shrink({{0, 4}, {0, 1}, {0, 4}, {0, 4}}).reshape({4, 4, 4}); }},
  };
}

}  // namespace

TEST(RandomGraphs, FusedEqualsUnfused) {
  std::mt19937 rng(20261121);
  auto all = ops();
  const int kGraphs = 60, kSteps = 7;
  for (int g = 0; g < kGraphs; g++) {
    std::vector<float> data(64);
    std::uniform_real_distribution<float> uni(-1, 1);
    std::vector<Tensor> lazy, eager;
    for (int i = 0; i < 2; i++) {
      for (float& v : data) v = uni(rng);
      lazy.push_back(Tensor(data, {4, 4, 4}));
      eager.push_back(lazy.back());
    }
    std::string trace;
    for (int s = 0; s < kSteps; s++) {
      size_t k = rng() % all.size(), i = rng() % lazy.size(), j = rng() % lazy.size();
      trace += std::string(all[k].first) + "(" + std::to_string(i) + "," + std::to_string(j) + ") ";
      lazy.push_back(all[k].second(lazy[i], lazy[j]));
      eager.push_back(all[k].second(eager[i], eager[j]).contiguous().realize());
    }
    std::vector<float> fused = lazy.back().to_vector<float>(), unfused = eager.back().to_vector<float>();
    for (size_t e = 0; e < fused.size(); e++)
      ASSERT_NEAR(fused[e], unfused[e], 1e-4 + 1e-4 * std::fabs(unfused[e])) << "graph " << g << ": " << trace << "element " << e;
  }
}
