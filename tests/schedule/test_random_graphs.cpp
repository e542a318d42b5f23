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

namespace {

// A 2-d int32 array on the host: the independent reference for the movement chains below.
struct Host {
  int64_t r = 0, c = 0;
  std::vector<int32_t> v;
  int32_t at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * c + j)]; }
  template <class F>
  static Host make(int64_t r, int64_t c, F f) {
    Host h{r, c, {}};
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < c; j++) h.v.push_back(f(i, j));
    return h;
  }
};

}  // namespace

// Chains of pad, circular pad, shrink, flip, transpose, cat and adds of views over positions computed in the kernel
// (a lazy arange, an IOTA) give the host's values. Such leaves have no load to stop the where-narrowing of the
// symbolic algebra, so masks nested in masks reach their index math: two nested wheres' stand-in variables were
// one node and cat(cat(a, a, 1), same, 0) of a 2x2 arange read (0 3 0 1 ...). Buffer leaves ride along.
TEST(RandomGraphs, MovementChainsOfComputedPositionsMatchTheHost) {
  std::mt19937 rng(20261207);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int kChains = 120, kSteps = 4;
  for (int g = 0; g < kChains; g++) {
    int64_t r = pick(1, 4), c = pick(1, 4);
    std::string trace;
    Tensor t;
    Host h;
    switch (pick(0, 3)) {
      case 0: case 1:  // a lazy arange
        t = Tensor::arange(0, static_cast<double>(r * c), 1, dtypes::int32).reshape({r, c});
        h = Host::make(r, c, [&](int64_t i, int64_t j) { return static_cast<int32_t>(i * c + j); });
        trace = "arange";
        break;
      case 2:  // positions through arithmetic: 3*arange + 1
        t = Tensor::arange(1, static_cast<double>(3 * r * c + 1), 3, dtypes::int32).reshape({r, c});
        h = Host::make(r, c, [&](int64_t i, int64_t j) { return static_cast<int32_t>(3 * (i * c + j) + 1); });
        trace = "arange3";
        break;
      default: {  // a realized buffer
        h = Host::make(r, c, [&](int64_t i, int64_t j) { return static_cast<int32_t>(100 + i * c + j); });
        t = Tensor(h.v, {r, c});
        trace = "buffer";
      }
    }
    trace += "(" + std::to_string(r) + "x" + std::to_string(c) + ")";
    for (int s = 0; s < kSteps; s++) {
      int64_t ax = pick(0, 1);
      switch (pick(0, 6)) {
        case 0: {  // zero padding
          int64_t t0 = pick(0, 2), b0 = pick(0, 2), l1 = pick(0, 2), r1 = pick(0, 2);
          if (h.r + t0 + b0 > 10 || h.c + l1 + r1 > 10) break;
          t = t.pad({{t0, b0}, {l1, r1}});
          h = Host::make(h.r + t0 + b0, h.c + l1 + r1, [&](int64_t i, int64_t j) {
            i -= t0, j -= l1;
            return i < 0 || j < 0 || i >= h.r || j >= h.c ? 0 : h.at(i, j);
          });
          trace += " pad(" + std::to_string(t0) + "," + std::to_string(b0) + "," + std::to_string(l1) + "," + std::to_string(r1) + ")";
          break;
        }
        case 1: {  // circular padding along one axis, at most the axis' size on each side
          int64_t n = ax == 0 ? h.r : h.c, b = pick(0, n), a = pick(0, n);
          if (n + a + b > 10) break;
          std::vector<std::pair<int64_t, int64_t>> p{{0, 0}, {0, 0}};
          p[static_cast<size_t>(ax)] = {b, a};
          t = t.pad(p, PadMode::circular);
          h = Host::make(ax == 0 ? n + a + b : h.r, ax == 1 ? n + a + b : h.c, [&](int64_t i, int64_t j) {
            int64_t& k = ax == 0 ? i : j;
            k = ((k - b) % n + n) % n;
            return h.at(i, j);
          });
          trace += " circular(" + std::to_string(ax) + "," + std::to_string(b) + "," + std::to_string(a) + ")";
          break;
        }
        case 2: {  // shrink to a nonempty box
          int64_t i0 = pick(0, h.r - 1), i1 = pick(i0 + 1, h.r), j0 = pick(0, h.c - 1), j1 = pick(j0 + 1, h.c);
          t = t.shrink({{i0, i1}, {j0, j1}});
          h = Host::make(i1 - i0, j1 - j0, [&](int64_t i, int64_t j) { return h.at(i + i0, j + j0); });
          trace += " shrink(" + std::to_string(i0) + ":" + std::to_string(i1) + "," + std::to_string(j0) + ":" + std::to_string(j1) + ")";
          break;
        }
        case 3:
          t = t.flip({ax});
          h = Host::make(h.r, h.c, [&](int64_t i, int64_t j) { return ax == 0 ? h.at(h.r - 1 - i, j) : h.at(i, h.c - 1 - j); });
          trace += " flip(" + std::to_string(ax) + ")";
          break;
        case 4:
          t = t.permute({1, 0});
          h = Host::make(h.c, h.r, [&](int64_t i, int64_t j) { return h.at(j, i); });
          trace += " transpose";
          break;
        case 5: {  // cat with itself, or with its flip
          if ((ax == 0 ? h.r : h.c) > 5) break;
          bool flipped = pick(0, 1) == 1;
          int64_t fax = pick(0, 1);
          Tensor other = flipped ? t.flip({fax}) : t;
          Host ho = flipped ? Host::make(h.r, h.c, [&](int64_t i, int64_t j) { return fax == 0 ? h.at(h.r - 1 - i, j) : h.at(i, h.c - 1 - j); }) : h;
          t = Tensor::cat({t, other}, ax);
          h = Host::make(ax == 0 ? 2 * h.r : h.r, ax == 1 ? 2 * h.c : h.c, [&](int64_t i, int64_t j) {
            if (ax == 0) return i < h.r ? h.at(i, j) : ho.at(i - h.r, j);
            return j < h.c ? h.at(i, j) : ho.at(i, j - h.c);
          });
          trace += std::string(" cat") + (flipped ? "_flip" + std::to_string(fax) : "") + "(" + std::to_string(ax) + ")";
          break;
        }
        default: {  // two paddings of one value added: x.pad(0,1) + 10 * x.pad(1,0) along an axis
          if ((ax == 0 ? h.r : h.c) > 9) break;
          std::vector<std::pair<int64_t, int64_t>> p0{{0, 0}, {0, 0}}, p1{{0, 0}, {0, 0}};
          p0[static_cast<size_t>(ax)] = {0, 1}, p1[static_cast<size_t>(ax)] = {1, 0};
          t = t.pad(p0) + t.pad(p1) * 10;
          h = Host::make(ax == 0 ? h.r + 1 : h.r, ax == 1 ? h.c + 1 : h.c, [&](int64_t i, int64_t j) {
            int64_t k = ax == 0 ? i : j, n = ax == 0 ? h.r : h.c;
            int32_t lo = k < n ? h.at(i, j) : 0, hi = k >= 1 ? (ax == 0 ? h.at(i - 1, j) : h.at(i, j - 1)) : 0;
            return lo + 10 * hi;
          });
          trace += " shifted_sum(" + std::to_string(ax) + ")";
        }
      }
    }
    ASSERT_EQ(t.shape(), (Shape{h.r, h.c})) << "chain " << g << ": " << trace;
    std::vector<int32_t> got = t.to_vector<int32_t>();
    ASSERT_EQ(got, h.v) << "chain " << g << ": " << trace;
  }
}
