// The methods ported from tinygrad in one batch (copysign, fmod, isclose, diagonal, unfold, nonzero, max_unpool2d,
// rearrange ...) against PyTorch: tests/golden/methods.txt from tools/gen_method_goldens.py. Each golden case is
// bound here to the same call, by "method/variant" where the variant needs its own call, else by "method".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "support/expect_error.h"
#include "support/golden.h"
#include "support/golden_grad.h"

using namespace tg;
using tg::testing::GoldenCase;

namespace {

using In = std::vector<Tensor>;
using Args = std::vector<double>;
using Fn = std::function<Tensor(const In&, const Args&)>;

std::vector<int64_t> ints(const Args& a, size_t from = 0) {
  std::vector<int64_t> v;
  for (size_t i = from; i < a.size(); i++) v.push_back(static_cast<int64_t>(a[i]));
  return v;
}
int64_t at(const Args& a, size_t i) { return static_cast<int64_t>(a[i]); }
Reduction reduction_of(double r) { return r == 0 ? Reduction::none : r == 1 ? Reduction::mean : Reduction::sum; }
PadMode mode_of(const std::string& variant) {
  return variant.rfind("reflect", 0) == 0     ? PadMode::reflect
         : variant.rfind("replicate", 0) == 0 ? PadMode::replicate
                                              : PadMode::circular;
}

// Binary methods take a second input or, without one, the first arg as a C++ number (a weak scalar).
#define BINARY(name)                                                                         \
  {                                                                                          \
#name, [](const In& in, const Args& a) {                                                   \
     if (in.size() == 2) return in[0].name(in[1]);                                            \
     return in[0].dtype().is_int() ? in[0].name(static_cast<int>(a[0])) : in[0].name(a[0]); \
   } \
  }

const std::map<std::string, Fn>& bindings() {
  static const std::map<std::string, Fn> t = {
      {"log10", [](const In& in, const Args&) { return in[0].log10(); }},
      BINARY(copysign),
      BINARY(fmod),
      BINARY(logaddexp),
      {"isclose", [](const In& in, const Args& a) { return in[0].isclose(in[1], a[0], a[1], a[2] != 0); }},
      {"allclose", [](const In& in, const Args& a) { return Tensor(in[0].allclose(in[1], a[0], a[1], a[2] != 0)); }},
      {"softmin", [](const In& in, const Args& a) { return in[0].softmin(at(a, 0)); }},
      {"normalize",
       [](const In& in, const Args& a) { return in[0].normalize(a[0] == -1 ? INFINITY : a[0], at(a, 1), a[2]); }},
      {"diagonal", [](const In& in, const Args& a) { return in[0].diagonal(at(a, 0), at(a, 1), at(a, 2)); }},
      {"diag", [](const In& in, const Args& a) { return in[0].diag(at(a, 0)); }},
      {"unfold", [](const In& in, const Args& a) { return in[0].unfold(at(a, 0), at(a, 1), at(a, 2)); }},
      {"reshape_keep", [](const In& in, const Args& a) { return in[0].reshape(ints(a)); }},
      {"shrink_to", [](const In& in, const Args& a) { return in[0].shrink_to(ints(a)); }},
      {"pad_to", [](const In& in, const Args& a) { return in[0].pad_to(ints(a)); }},
      {"rearrange/split_permute",
       [](const In& in, const Args&) {
         return in[0].rearrange("b (h w) c -> b c h w", {{"h", 2}});
       }},
      {"rearrange/flatten", [](const In& in, const Args&) { return in[0].rearrange("b c h w -> b (c h w)"); }},
      {"rearrange/ellipsis", [](const In& in, const Args&) { return in[0].rearrange("... h w -> ... (h w)"); }},
      {"rearrange/ellipsis_front", [](const In& in, const Args&) { return in[0].rearrange("b ... w -> w ... b"); }},
      {"rearrange/transpose", [](const In& in, const Args&) { return in[0].rearrange("a b -> b a"); }},
      {"rearrange/unit", [](const In& in, const Args&) { return in[0].rearrange("a 1 b -> b a"); }},
      {"rearrange/add_unit", [](const In& in, const Args&) { return in[0].rearrange("a b -> a 1 b"); }},
      {"rearrange/groups_both",
       [](const In& in, const Args&) {
         return in[0].rearrange("(a b) c -> b (c a)", {{"b", 3}});
       }},
      {"rearrange/ellipsis_group", [](const In& in, const Args&) { return in[0].rearrange("a ... -> (...) a"); }},
      {"nonzero", [](const In& in, const Args&) { return in[0].nonzero(); }},
      {"nonzero_sized", [](const In& in, const Args& a) { return in[0].nonzero(at(a, 0), at(a, 1)); }},
      {"masked_select_sized", [](const In& in, const Args& a) { return in[0].masked_select(in[1], at(a, 0), a[1]); }},
      {"max_unpool2d",
       [](const In& in, const Args& a) {
         std::optional<Ints> stride = at(a, 1) ? std::optional<Ints>(at(a, 1)) : std::nullopt;
         std::optional<Shape> size = a.size() > 3 ? std::optional<Shape>(ints(a, 3)) : std::nullopt;
         return in[0].max_unpool2d(in[1], at(a, 0), stride, 1, at(a, 2), size);
       }},
      {"sdpa_gqa",
       [](const In& in, const Args&) {
         std::optional<Tensor> mask = in.size() == 4 ? std::optional<Tensor>(in[3]) : std::nullopt;
         return in[0].scaled_dot_product_attention(in[1], in[2], mask, 0, false, true);
       }},
      {"sdpa_gqa/causal",
       [](const In& in, const Args&) {
         return in[0].scaled_dot_product_attention(in[1], in[2], std::nullopt, 0, true, true);
       }},
      {"newton_schulz",
       [](const In& in, const Args& a) { return in[0].newton_schulz(at(a, 0), Args(a.begin() + 1, a.end())); }},
      {"bce_logits_pos_weight",
       [](const In& in, const Args& a) { return in[0].binary_crossentropy_logits(in[1], in[2], reduction_of(a[0])); }},
  };
  return t;
}
#undef BINARY

// Cases whose call depends on the variant's name
std::optional<Tensor> by_variant(const GoldenCase& c, const In& in) {
  const Args& a = c.args;
  if (c.op == "pad_negative") {  // F.pad's (left, right, top, bottom)
    return in[0].pad({{0, 0}, {0, 0}, {at(a, 2), at(a, 3)}, {at(a, 0), at(a, 1)}}, mode_of(c.variant));
  }
  if (c.op == "einsum_ellipsis") {
    static const char* formulas[] = {"...ij,...jk->...ik", "...ij,...jk",      "i...->...", "...ii->...i",
                                     "...ij->...ji",       "ab...,b...->a...", "bi...,b..."};
    return Tensor::einsum(formulas[std::stoi(c.variant.substr(1))], in);
  }
  if (c.op == "scatter_reduce_arg") {
    std::string reduce = c.variant.substr(0, c.variant.find('_'));
    return in.size() == 3 ? in[0].scatter(at(a, 0), in[1], in[2], reduce)
                          : in[0].scatter(at(a, 0), in[1], a[1], reduce);
  }
  if (c.op == "max_pool2d_with_indices") {
    std::optional<Ints> stride = at(a, 1) ? std::optional<Ints>(at(a, 1)) : std::nullopt;
    auto [values, indices] = in[0].max_pool2d_with_indices(at(a, 0), stride, at(a, 4), at(a, 2), a[3] != 0);
    return c.variant.rfind("values", 0) == 0 ? values : indices;
  }
  return std::nullopt;
}

Tensor call(const GoldenCase& c, const In& in) {
  if (std::optional<Tensor> r = by_variant(c, in)) return *r;
  auto it = bindings().find(c.op + "/" + c.variant);
  if (it == bindings().end()) it = bindings().find(c.op);
  if (it == bindings().end()) throw std::runtime_error("no C++ binding for " + c.op + "/" + c.variant);
  return it->second(in, c.args);
}

const std::map<std::string, std::vector<GoldenCase>>& cases() { return tg::testing::golden_cases("methods.txt"); }

std::vector<std::string> methods() {
  std::vector<std::string> ops;
  for (const auto& [name, cs] : cases()) ops.push_back(name);
  return ops;
}

// Values against PyTorch's, every case of every method
class MethodValues : public ::testing::TestWithParam<std::string> {};

TEST_P(MethodValues, MatchPyTorch) {
  for (const GoldenCase& c : cases().at(GetParam())) {
    SCOPED_TRACE(c.op + "/" + c.variant);
    EXPECT_EQ(tg::testing::compare_output(c, [&](const In& in) { return call(c, in); }), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, MethodValues, ::testing::ValuesIn(methods()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Against PyTorch's float64 gradients of sum(out * w) (the "grad" lines), for every method with a float result
class MethodGradients : public ::testing::TestWithParam<std::string> {};

TEST_P(MethodGradients, MatchPyTorch) {
  int checked = 0;
  for (const GoldenCase& c : cases().at(GetParam())) {
    if (c.grads.empty()) continue;
    SCOPED_TRACE(c.op + "/" + c.variant);
    EXPECT_EQ(tg::testing::compare_gradients(c, [&](const In& in) { return call(c, in); }), "");
    checked++;
  }
  EXPECT_GT(checked, 0) << "tools/gen_method_goldens.py wrote no gradient for " << GetParam();
}

std::vector<std::string> differentiable_methods() {
  static const std::set<std::string> none = {"nonzero", "nonzero_sized", "isclose",
                                             "allclose"};  // int and bool results
  std::vector<std::string> ops;
  for (const std::string& m : methods())
    if (!none.count(m)) ops.push_back(m);
  return ops;
}

INSTANTIATE_TEST_SUITE_P(Methods, MethodGradients, ::testing::ValuesIn(differentiable_methods()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// compare() treats -0.0 as 0.0: copysign's point is the sign, so check the sign bits too
TEST(MethodsExtra, CopysignKeepsSignedZeros) {
  Tensor a({1.5f, 0.0f, 0.0f, -0.0f, 2.0f});
  Tensor b({-0.0f, -1.0f, 2.0f, 3.0f, -INFINITY});
  std::vector<float> got = a.copysign(b).to_vector<float>();
  std::vector<bool> negative = {true, true, false, false, true};
  for (size_t i = 0; i < got.size(); i++) EXPECT_EQ(std::signbit(got[i]), negative[i]) << i << ": " << got[i];
}

// The sized selections have a fixed shape: building them realizes nothing
TEST(MethodsExtra, SizedSelectionsStayLazy) {
  Tensor x = Tensor::arange(6).reshape({2, 3}) % 2;  // a graph, not a buffer
  Tensor nz = x.nonzero(4, -1);
  Tensor sel = x.masked_select(x > 0, 2, 0);
  EXPECT_FALSE(x.is_realized());
  EXPECT_FALSE(nz.is_realized());
  EXPECT_EQ(nz.shape(), (Shape{4, 2}));
  EXPECT_EQ(nz.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 0, 1, 2, -1, -1}));
  EXPECT_EQ(sel.to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
}

// max_unpool2d undoes max_pool2d_with_indices: the maxima in place, zeros elsewhere
TEST(MethodsExtra, UnpoolInvertsPool) {
  Tensor x = Tensor::arange(16, 0, -1, dtypes::float32).reshape({1, 1, 4, 4});
  auto [v, i] = x.max_pool2d_with_indices(2);
  EXPECT_EQ(i.dtype(), dtypes::int32);
  std::vector<float> back = v.max_unpool2d(i, 2).to_vector<float>();
  std::vector<float> want = {16, 0, 14, 0, 0, 0, 0, 0, 8, 0, 6, 0, 0, 0, 0, 0};
  EXPECT_EQ(back, want);
}

TEST(MethodsExtra, SizeAndIsFloatingPoint) {
  Tensor x = Tensor::ones({2, 3, 4});
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_TRUE(x.is_floating_point());
  EXPECT_FALSE(Tensor({1, 2}).is_floating_point());
  EXPECT_TRUE(Tensor::ones({2}, dtypes::float16).is_floating_point());
}

// pad's value -0.0 is not 0.0: the new elements keep its sign, as PyTorch's
TEST(MethodsExtra, PadWithNegativeZeroKeepsItsSign) {
  std::vector<float> got = Tensor({1.0f}).pad({{1, 1}}, -0.0).to_vector<float>();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(std::signbit(got[0]) && std::signbit(got[2]) && got[1] == 1.0f);
}

// The value a stable sort puts first: NaN is the largest, ties keep their order (std::stable_sort as the reference).
template <class T> std::vector<int32_t> stable_order(const std::vector<T>& row, bool descending) {
  std::vector<int32_t> order(row.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = static_cast<int32_t>(i);
  auto key_less = [](T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    }
    return a < b;
  };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return descending ? key_less(row[b], row[a]) : key_less(row[a], row[b]);
  });
  return order;
}

// Rows long enough for the bitonic network (rows * n^2 past the rank sort's budget), n not a power of two, with
// ties, signed zeros, infinities and NaNs: values bit for bit and indices as a stable sort's, both directions.
TEST(MethodsExtra, LongRowsSortStablyAsTheHostDoes) {
  const int64_t rows = 5, n = 1900;
  std::vector<float> x(rows * n);
  std::mt19937 rng(3);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f};
  for (float& v : x) v = rng() % 4 == 0 ? specials[rng() % 6] : static_cast<float>(static_cast<int>(rng() % 64) - 32) / 4;
  for (bool descending : {false, true}) {
    auto [values, indices] = Tensor(x, {rows, n}).sort(1, descending);
    std::vector<float> got = values.to_vector<float>();
    std::vector<int32_t> idx = indices.to_vector<int32_t>();
    for (int64_t r = 0; r < rows; r++) {
      std::vector<float> row(x.begin() + r * n, x.begin() + (r + 1) * n);
      std::vector<int32_t> want = stable_order(row, descending);
      for (int64_t k = 0; k < n; k++) {
        ASSERT_EQ(idx[r * n + k], want[k]) << "row " << r << " position " << k << (descending ? " descending" : "");
        float w = row[want[k]], g = got[r * n + k];
        ASSERT_TRUE((std::isnan(w) && std::isnan(g)) || (w == g && std::signbit(w) == std::signbit(g))) << g << " vs " << w;
      }
    }
  }
  std::vector<int32_t> ints(4099);
  for (int32_t& v : ints) v = static_cast<int32_t>(rng());  // the full int32 range, so no padding value would do
  auto [iv, ii] = Tensor(ints, {4099}).sort(0, true);
  std::vector<int32_t> want = stable_order(ints, true);
  std::vector<int32_t> got = iv.to_vector<int32_t>();
  ASSERT_EQ(ii.to_vector<int32_t>(), want);
  for (size_t k = 0; k < want.size(); k++) ASSERT_EQ(got[k], ints[want[k]]);
}

// The gradient of the sorted values goes back to where each value came from, on the bitonic path too
TEST(MethodsExtra, LongSortGradientFollowsThePermutation) {
  const int64_t rows = 8, n = 1500;
  Tensor x = Tensor::rand({rows, n}).realize();
  Tensor w = Tensor::rand({rows, n}).realize();
  x.requires_grad_(true);
  auto [values, indices] = x.sort(1);
  (values * w).sum().backward();
  std::vector<float> g = x.grad().to_vector<float>(), wv = w.to_vector<float>();
  std::vector<int32_t> idx = indices.to_vector<int32_t>();
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = 0; k < n; k++) ASSERT_EQ(g[r * n + idx[r * n + k]], wv[r * n + k]) << r << ", " << k;
}

// topk over an axis of 2^18 finishes (a quadratic sort would take minutes) and finds the largest
TEST(MethodsExtra, TopkOfAVeryLongAxis) {
  const int64_t n = int64_t{1} << 18;
  Tensor x = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64).reshape({1, n});
  x = (x * 7919 % n).realize();  // a permutation of 0..n-1 (7919 is odd, n a power of 2)
  auto [v, i] = x.topk(3, 1);
  EXPECT_EQ(v.to_vector<int64_t>(), (std::vector<int64_t>{n - 1, n - 2, n - 3}));
  std::vector<int32_t> where = i.to_vector<int32_t>();
  for (int k = 0; k < 3; k++) EXPECT_EQ((int64_t{where[k]} * 7919) % n, n - 1 - k);
}

// multinomial is random: frequencies against the weights (binomial standard error), shapes, distinct draws
TEST(MethodsExtra, MultinomialFollowsTheWeights) {
  Tensor::manual_seed(7);
  Tensor w({1.0f, 0.0f, 3.0f, 4.0f});
  const int n = 20000;
  std::vector<int32_t> s = w.multinomial(n, true).to_vector<int32_t>();
  ASSERT_EQ(s.size(), static_cast<size_t>(n));
  std::vector<double> count(4, 0);
  for (int32_t v : s) {
    ASSERT_TRUE(v >= 0 && v < 4) << v;
    count[static_cast<size_t>(v)]++;
  }
  EXPECT_EQ(count[1], 0) << "a zero weight is never drawn";
  for (size_t i : {0, 2, 3}) {
    double p = (i == 0 ? 1 : i == 2 ? 3 : 4) / 8.0, se = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(count[i] / n, p, 5 * se) << "category " << i;
  }
  // without replacement: distinct indices per row, never the zero-weight category while others remain
  Tensor rows = Tensor({{1.0f, 0.0f, 3.0f, 4.0f}, {5.0f, 1.0f, 0.0f, 1.0f}});
  Tensor picks = rows.multinomial(3);
  EXPECT_EQ(picks.shape(), (Shape{2, 3}));
  EXPECT_EQ(picks.dtype(), dtypes::int32);
  std::vector<int32_t> p = picks.to_vector<int32_t>();
  for (size_t r = 0; r < 2; r++) {
    std::set<int32_t> seen(p.begin() + 3 * r, p.begin() + 3 * r + 3);
    EXPECT_EQ(seen.size(), 3u);
    EXPECT_FALSE(seen.count(r == 0 ? 1 : 2)) << "row " << r;
  }
  EXPECT_EQ(w.multinomial().shape(), (Shape{1}));
}

using tg::testing::expect_error;

TEST(MethodsErrors, BadArgumentsThrowNamedErrors) {
  const char* file = "test_tensor_methods.cpp";
  Tensor x = Tensor::ones({2, 3}), v = Tensor::ones({4}), img = Tensor::ones({1, 1, 4, 4});
  expect_error<ShapeError>([&] { x.copysign(Tensor::ones({4})); }, "copysign", {"(2, 3)", "(4,)"}, file);
  expect_error<DTypeError>([&] { Tensor({true, false}).fmod(Tensor({true, true})); }, "fmod", {"bool"}, file);
  expect_error<ArgumentError>([&] { x.isclose(x, -1.0); }, "isclose", {"rtol"}, file);
  expect_error<ShapeError>([&] { x.allclose(v); }, "allclose", {"(2, 3)", "(4,)"}, file);
  expect_error<ArgumentError>([&] { x.softmin(2); }, "softmin", {"axis 2"}, file);
  expect_error<ArgumentError>([&] { x.normalize(NAN); }, "normalize", {"p must be"}, file);
  expect_error<ArgumentError>([&] { x.normalize(2, 3); }, "normalize", {"axis 3"}, file);
  expect_error<ShapeError>([&] { v.diagonal(); }, "diagonal", {"(4,)"}, file);
  expect_error<ArgumentError>([&] { x.diagonal(0, 1, -1); }, "diagonal", {"dim1 and dim2"}, file);
  expect_error<ShapeError>([&] { Tensor::ones({2, 2, 2}).diag(); }, "diag", {"(2, 2, 2)"}, file);
  expect_error<ShapeError>([&] { x.unfold(1, 4, 1); }, "unfold", {"size 4", "(2, 3)"}, file);
  expect_error<ArgumentError>([&] { x.unfold(1, 2, 0); }, "unfold", {"step"}, file);
  expect_error<ArgumentError>([&] { x.unfold(2, 1, 1); }, "unfold", {"axis 2"}, file);
  expect_error<ShapeError>(
      [&] {
        x.reshape({keep_dim, keep_dim, keep_dim});
      },
      "reshape", {"keep_dim at position 2"}, file);
  expect_error<ShapeError>([&] { x.reshape({keep_dim, 4}); }, "reshape", {"(2, 4)"}, file);
  expect_error<ShapeError>([&] { x.shrink_to({3, 3}); }, "shrink_to", {"(2, 3)"}, file);
  expect_error<ShapeError>([&] { x.pad_to({1, 3}); }, "pad_to", {"smaller"}, file);
  expect_error<ArgumentError>([&] { x.rearrange("a b c"); }, "rearrange", {"->"}, file);
  expect_error<ArgumentError>([&] { x.rearrange("a b -> a c"); }, "rearrange", {"once on both sides"}, file);
  expect_error<ShapeError>([&] { x.rearrange("(a b) c -> a b c", {{"a", 4}}); }, "rearrange", {"(2, 3)"}, file);
  expect_error<ArgumentError>([&] { x.rearrange("(a b) c -> a b c"); }, "rearrange", {"unknown"}, file);
  expect_error<ArgumentError>([&] { x.rearrange("a (b -> a b"); }, "rearrange", {"unclosed"}, file);
  expect_error<ArgumentError>([&] { x.nonzero(-1); }, "nonzero", {"size"}, file);
  expect_error<DTypeError>([&] { x.masked_select(x, 2); }, "masked_select", {"bool", "float32"}, file);
  expect_error<ArgumentError>([&] { x.masked_select(x > 0, -2); }, "masked_select", {"size"}, file);
  expect_error<ArgumentError>([&] { x.scatter(0, Tensor({{0, 1, 0}}), 1.0, "max"); }, "scatter", {"\"max\""}, file);
  expect_error<ShapeError>([&] { v.max_pool2d_with_indices(2); }, "max_pool2d_with_indices", {"(4,)"}, file);
  expect_error<ArgumentError>([&] { img.max_pool2d_with_indices(2, 0); }, "max_pool2d_with_indices", {"stride"}, file);
  expect_error<ShapeError>(
      [&] {
        img.max_unpool2d(Tensor::zeros({1, 1, 3, 4}, dtypes::int32));
      },
      "max_unpool2d", {"(1, 1, 3, 4)"}, file);
  expect_error<DTypeError>([&] { img.max_unpool2d(img); }, "max_unpool2d", {"integers"}, file);
  Tensor q = Tensor::ones({1, 3, 2, 4}), k = Tensor::ones({1, 2, 2, 4});
  expect_error<ShapeError>([&] { q.scaled_dot_product_attention(k, k, std::nullopt, 0, false, true); },
                           "scaled_dot_product_attention", {"3 query heads", "2 key"}, file);
  expect_error<ShapeError>([&] { x.binary_crossentropy_logits(x, Tensor::ones({2}), Reduction::mean); },
                           "binary_crossentropy_logits", {"(2,)"}, file);
  expect_error<ArgumentError>(
      [&] {
        x.pad({{0, 0}, {-2, -2}}, PadMode::reflect);
      },
      "pad (reflect)", {"removes more"}, file);
  expect_error<ArgumentError>(
      [&] {
        x.pad({{0, 0}, {3, -1}}, PadMode::circular);
      },
      "pad (circular)", {"(3, -1)"}, file);
  expect_error<ArgumentError>([&] { Tensor::einsum("...i.", {x}); }, "einsum", {"bad subscript"}, file);
  expect_error<ShapeError>([&] { Tensor::einsum("ijk...->...", {x}); }, "einsum", {"more letters"}, file);
  expect_error<ArgumentError>([&] { Tensor::einsum("......->", {x}); }, "einsum", {"more than one ellipsis"}, file);
}

}  // namespace
