// The Tensor API at its edges against PyTorch (tests/golden/edges.txt, from tools/gen_edge_goldens.py): activations
// and their gradients across the whole float range, pow at its special points, ties and bounds, zeros in products,
// stable scans, PyTorch's indexing rule, zero-size shapes, and overloads (gelu's erf form, sum/prod with a dtype,
// cummax/cummin with indices, slice bounds as tensors). Then the errors tinygrad and PyTorch raise for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "support/expect_error.h"
#include "support/golden.h"
#include "support/golden_grad.h"

using namespace tg;
using tg::testing::GoldenCase;

namespace {

using In = std::vector<Tensor>;
using Args = std::vector<double>;
using Fn = std::function<Tensor(const In&, const Args&)>;

const std::map<std::string, std::vector<GoldenCase>>& cases() { return tg::testing::golden_cases("edges.txt"); }

int64_t arg(const Args& a, size_t i) { return static_cast<int64_t>(a[i]); }

std::map<std::string, std::function<Tensor(const Tensor&)>> activations() {
  return {
      {"relu", [](const Tensor& x) { return x.relu(); }}, {"relu6", [](const Tensor& x) { return x.relu6(); }},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(); }}, {"elu", [](const Tensor& x) { return x.elu(); }},
      {"celu", [](const Tensor& x) { return x.celu(2.0); }}, {"selu", [](const Tensor& x) { return x.selu(); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }}, {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); }},
      {"logsigmoid", [](const Tensor& x) { return x.logsigmoid(); }}, {"hardtanh", [](const Tensor& x) { return x.hardtanh(); }},
      {"gelu", [](const Tensor& x) { return x.gelu(); }}, {"gelu_none", [](const Tensor& x) { return x.gelu("none"); }},
      {"quick_gelu", [](const Tensor& x) { return x.quick_gelu(); }}, {"silu", [](const Tensor& x) { return x.silu(); }},
      {"mish", [](const Tensor& x) { return x.mish(); }}, {"softplus", [](const Tensor& x) { return x.softplus(); }},
      {"softsign", [](const Tensor& x) { return x.softsign(); }}, {"hardswish", [](const Tensor& x) { return x.hardswish(); }},
      {"tanh", [](const Tensor& x) { return x.tanh(); }},
  };
}

Tensor zero_size(const std::string& name, const In& in) {
  static const std::map<std::string, std::function<Tensor(const In&)>> t = {
      {"sum_all", [](const In& i) { return i[0].sum(); }}, {"sum_axis0", [](const In& i) { return i[0].sum(0); }},
      {"sum_axis1", [](const In& i) { return i[0].sum(1); }}, {"mean_axis0", [](const In& i) { return i[0].mean(0); }},
      {"var_axis0", [](const In& i) { return i[0].var(0); }}, {"std_axis1", [](const In& i) { return i[0].std(1); }},
      {"matmul_inner", [](const In& i) { return i[0].matmul(i[1]); }}, {"matmul_outer", [](const In& i) { return i[0].matmul(i[1]); }},
      {"cat", [](const In& i) { return Tensor::cat({i[0], i[1]}, 0); }}, {"roll", [](const In& i) { return i[0].roll({1}, {1}); }},
      {"cumsum", [](const In& i) { return i[0].cumsum(0); }}, {"cumprod", [](const In& i) { return i[0].cumprod(1); }},
      {"tril", [](const In& i) { return i[0].tril(); }}, {"triu", [](const In& i) { return i[0].triu(); }},
      {"slice", [](const In& i) { return i[0][{Slice(2, 2)}]; }},
      {"slice_sum", [](const In& i) { return i[0][{Slice(), Slice(1, 1)}].sum(1); }},
      {"expand", [](const In& i) { return i[0].expand({0, 3}); }}, {"logsumexp", [](const In& i) { return i[0].logsumexp(1); }},
      {"max_empty_out", [](const In& i) { return i[0].max(1); }}, {"min_empty_out", [](const In& i) { return i[0].min(1); }},
      {"prod_axis0", [](const In& i) { return i[0].prod(0); }}, {"permute", [](const In& i) { return i[0].permute({1, 0}); }},
      {"flip", [](const In& i) { return i[0].flip(0); }}, {"pad", [](const In& i) { return i[0].pad2d({1, 1, 2, 0}); }},
      {"reshape", [](const In& i) { return i[0].reshape({3, 0, 1}); }}, {"repeat", [](const In& i) { return i[0].repeat({2, 3}); }},
      {"stack", [](const In& i) { return Tensor::stack({i[0], i[1]}, 1); }}, {"softmax", [](const In& i) { return i[0].softmax(1); }},
      {"log_softmax", [](const In& i) { return i[0].log_softmax(0); }},
      {"logcumsumexp", [](const In& i) { return i[0].logcumsumexp(0); }}, {"cummax", [](const In& i) { return i[0].cummax(1).first; }},
      {"flatten", [](const In& i) { return i[0].flatten(); }}, {"transpose_sum", [](const In& i) { return i[0].T().sum(0); }},
  };
  return t.at(name)(in);
}

// The call for a golden case
Tensor call(const GoldenCase& c, const In& in) {
  const std::string& v = c.variant;
  const Args& a = c.args;
  auto has = [&](const char* s) { return v.find(s) != std::string::npos; };
  auto acts = activations();
  if (auto it = acts.find(c.op); it != acts.end()) {
    // the _f32 variants compute in float32 whatever the input (the gradient test feeds float64)
    return it->second(has("f32") ? in[0].cast(dtypes::float32) : in[0]);
  }
  if (c.op == "pow") {
    if (v == "grid") return in[0].pow(in[1]);
    if (has("base")) return in[0].scalar_like(a[0]).pow(in[0]);
    if (v == "int_exponent_3") return in[0].pow(3);
    return in[0].pow(a[0]);
  }
  if ((c.op == "sum" || c.op == "prod") && has("dtype")) {
    DType dt = c.output.dtype;
    return c.op == "sum" ? in[0].sum({}, false, dt) : in[0].prod({}, false, dt);
  }
  if (c.op == "prod") return a.empty() ? in[0].prod() : in[0].prod(arg(a, 0));
  if (c.op == "ties") {
    if (v == "max") return in[0].max(1);
    if (v == "min") return in[0].min(1);
    if (v == "max_all") return in[0].max();
    if (v == "min_all") return in[0].min();
    return v == "maximum" ? in[0].maximum(in[1]) : in[0].minimum(in[1]);
  }
  if (c.op == "clip") {
    if (v == "at_bounds") return in[0].clip(a[0], a[1]);
    return v == "min_at_bound" ? in[0].clip(a[0], std::nullopt) : in[0].clip(std::nullopt, a[0]);
  }
  if (c.op == "abs") return in[0].abs();
  if (c.op == "logcumsumexp") return in[0].logcumsumexp(arg(a, 0));
  if (c.op == "softmax" || c.op == "log_softmax") {
    Tensor x = v == "f32" ? in[0].cast(dtypes::float32) : in[0];
    return c.op == "softmax" ? x.softmax(arg(a, 0)) : x.log_softmax(arg(a, 0));
  }
  if (c.op == "cummax" || c.op == "cummin") {
    auto r = c.op == "cummax" ? in[0].cummax(arg(a, 0)) : in[0].cummin(arg(a, 0));
    return has("values") ? r.first : r.second;
  }
  if (c.op == "getitem") {
    const Tensor& x = in[0];
    if (v == "int_slice_tensor") return x[{1, Slice(), in[1]}];
    if (v == "tensor_slice_int") return x[{in[1], Slice(), 1}];
    if (v == "slice_int_tensor") return x[{Slice(), 1, in[1]}];
    if (v == "tensor_int") return x[{in[1], 1}];
    if (v == "tensor_slice_tensor") return x[{in[1], Slice(), in[1]}];
    if (v.rfind("bool_mask", 0) == 0) return x[{in[1]}];
    if (v == "tensor_bounds") {
      Tensor one(1), three(int64_t{3}), minus4(-4, dtypes::int8), minus1(-1, dtypes::int16);
      return x[{Slice(one, three), Slice(), Slice(minus4, minus1)}];
    }
  }
  if (c.op == "einsum") {
    static const char* formulas[] = {"...ij,...jk->...ik", "...ij,...jk", "i...->...", "...i->i", "...", "b...,b...->b", "...i,i"};
    return Tensor::einsum(formulas[std::stoi(v.substr(8))], in);
  }
  if (c.op == "pad_mode") {  // F.pad's (left, right, top, bottom)
    PadMode mode = has("reflect") ? PadMode::reflect : has("replicate") ? PadMode::replicate : PadMode::circular;
    return in[0].pad({{0, 0}, {0, 0}, {arg(a, 2), arg(a, 3)}, {arg(a, 0), arg(a, 1)}}, mode);
  }
  if (c.op == "binary_crossentropy_logits")
    return in[0].binary_crossentropy_logits(in[1], in[2], v == "pos_weight_mean" ? Reduction::mean : Reduction::none);
  if (c.op == "sdpa") return in[0].scaled_dot_product_attention(in[1], in[2], std::nullopt, 0, v == "gqa_causal", true);
  if (c.op == "copysign") return in[0].copysign(in[1]);
  if (c.op == "fmod") return in[0].fmod(in[1]);
  if (c.op == "logaddexp") return in[0].logaddexp(in[1]);
  if (c.op == "log10") return in[0].log10();
  if (c.op == "isclose") return in[0].isclose(in[1], a[0], a[1], a[2] != 0);
  if (c.op == "softmin") return in[0].softmin(arg(a, 0));
  if (c.op == "normalize") return in[0].normalize(v == "pinf" ? INFINITY : a[0], arg(a, 1));
  if (c.op == "diagonal") return in[0].diagonal(arg(a, 0), arg(a, 1), arg(a, 2));
  if (c.op == "diag") return in[0].diag(arg(a, 0));
  if (c.op == "unfold") return in[0].unfold(arg(a, 0), arg(a, 1), arg(a, 2));
  if (c.op == "reshape") return in[0].reshape({keep_dim, keep_dim, 2, -1});
  if (c.op == "rearrange") {
    static const std::vector<std::pair<std::string, std::vector<std::pair<std::string, int64_t>>>> formulas = {
        {"b (h w) c -> b h w c", {{"h", 2}}}, {"b c h w -> b (h w) c", {}}, {"... c -> c ...", {}},
        {"a 1 b -> a b", {}}, {"a b -> a 1 b 1", {}}, {"(a b) c -> c b a", {{"a", 2}}}};
    const auto& [f, sizes] = formulas[std::stoi(v.substr(1))];
    return in[0].rearrange(f, sizes);
  }
  if (c.op == "pad_to") return in[0].pad_to({5, keep_dim});
  if (c.op == "shrink_to") return in[0].shrink_to({2, 3});
  if (c.op == "masked_select") return in[0].masked_select(in[1], arg(a, 0), a[1]);
  if (c.op == "nonzero") return a.empty() ? in[0].nonzero() : in[0].nonzero(arg(a, 0), arg(a, 1));
  if (c.op == "scatter") {
    std::string reduce = has("add") ? "add" : "multiply";
    return has("value") ? in[0].scatter(arg(a, 0), in[1], a[1], reduce) : in[0].scatter(arg(a, 0), in[1], in[2], reduce);
  }
  if (c.op == "max_pool2d_with_indices" || c.op == "max_unpool2d") {
    std::optional<Ints> stride = a[1] != 0 ? std::optional<Ints>(arg(a, 1)) : std::nullopt;
    if (c.op == "max_unpool2d") {
      std::optional<Shape> size = a.size() > 5 ? std::optional<Shape>(Shape{arg(a, 5), arg(a, 6)}) : std::nullopt;
      return in[0].max_unpool2d(in[1], arg(a, 0), stride, arg(a, 3), arg(a, 2), size);
    }
    auto [values, indices] = in[0].max_pool2d_with_indices(arg(a, 0), stride, arg(a, 3), arg(a, 2), a[4] != 0);
    return has("indices") ? indices : values;
  }
  if (c.op == "interpolate") return in[0].interpolate({arg(a, 0), arg(a, 1)}, "nearest");
  if (c.op == "zero_size") return zero_size(v, in);
  if (c.op == "any" || c.op == "all") {
    Axes axes = a.empty() ? Axes() : Axes(arg(a, 0));
    return c.op == "any" ? in[0].any(axes) : in[0].all(axes);
  }
  if (c.op == "qr") {
    auto [q, r] = in[0].qr();
    return v[0] == 'Q' ? q : r;
  }
  if (c.op == "svd") {
    auto [u, s, vh] = in[0].svd(false);
    if (v[0] == 'S') return s;
    // each singular vector is unique up to its sign: flipped to point as PyTorch's does
    Tensor want = c.output.make().cast(u.dtype());
    if (v[0] == 'U') return u * ((u * want).sum(-2, true) < 0).where(-1.0, 1.0);
    return vh * ((vh * want).sum(-1, true) < 0).where(-1.0, 1.0);
  }
  if (c.op == "cos") return in[0].cos();
  if (c.op == "tan") return in[0].tan();
  if (c.op == "atan") return in[0].atan();
  if (c.op == "asinh") return in[0].asinh();
  if (c.op == "erf") return in[0].erf();
  if (c.op == "asin") return in[0].asin();
  if (c.op == "acos") return in[0].acos();
  if (c.op == "std") return in[0].std(1);
  if (c.op == "binary_crossentropy") return in[0].binary_crossentropy(in[1], Reduction::none);
  if (c.op == "softmax_dtype") return in[0].softmax(1, dtypes::float64);
  if (c.op == "log_softmax_dtype") return in[0].log_softmax(1, dtypes::float64);
  if (c.op == "matmul_acc") return in[0].matmul(in[1], c.output.dtype);
  if (c.op == "einsum_acc") return Tensor::einsum("ik,kj->ij", in, dtypes::float32);
  if (c.op == "linear_acc") return in[0].linear(in[1], in[2], dtypes::float32);
  if (c.op == "bitcast") return in[0].bitcast(c.output.dtype);
  if (c.op == "keccak") return in[0].keccak(v.substr(0, v.find('_', v.find('_') + 1)));
  if (c.op == "hash") {
    if (!in.empty()) return in[0].hash();
    return (Tensor::arange(a[0]) % 251).cast(dtypes::uint8).hash();  // the generator's bytes
  }
  throw std::runtime_error("no C++ binding for " + c.op + "/" + v);
}

std::vector<std::string> ops() {
  std::vector<std::string> out;
  for (const auto& [name, cs] : cases()) out.push_back(name);
  return out;
}

std::vector<std::string> ops_with_gradients() {
  std::vector<std::string> out;
  for (const auto& [name, cs] : cases())
    if (std::any_of(cs.begin(), cs.end(), [](const GoldenCase& c) { return !c.grads.empty(); })) out.push_back(name);
  return out;
}

class Edges : public ::testing::TestWithParam<std::string> {};
class EdgeGradients : public ::testing::TestWithParam<std::string> {};

TEST_P(Edges, MatchesPyTorch) {
  for (const GoldenCase& c : cases().at(GetParam())) {
    SCOPED_TRACE(c.op + "/" + c.variant);
    EXPECT_EQ(tg::testing::compare_output(c, [&](const In& in) { return call(c, in); }), "");
  }
}

// PyTorch's gradients of sum(out * w): NaN exactly where PyTorch's is NaN, infinite where it is infinite. The
// float32 softmax gradients within 1e-7 (tinygrad's test_ops tolerance for them).
TEST_P(EdgeGradients, MatchPyTorch) {
  int checked = 0;
  for (const GoldenCase& c : cases().at(GetParam())) {
    if (c.grads.empty()) continue;
    SCOPED_TRACE(c.op + "/" + c.variant);
    double atol = c.variant == "f32" ? 1e-7 : 1e-5;
    EXPECT_EQ(tg::testing::compare_gradients(c, [&](const In& in) { return call(c, in); }, atol, 1e-4), "");
    checked++;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Golden, Edges, ::testing::ValuesIn(ops()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Golden, EdgeGradients, ::testing::ValuesIn(ops_with_gradients()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Central finite differences in float64 for the new differentiable overloads, away from their kinks.
TEST(EdgesFiniteDifferences, NewOverloads) {
  for (const char* name : {"gelu_none/float32", "cummax/values_axis0", "cummin/values_axis0", "logcumsumexp/large_grad",
                           "getitem/int_slice_tensor", "softmax/f32", "logaddexp/float32",
                           "unfold/v0", "diag/vector_2", "diagonal/v1", "fmod/float32", "einsum/ellipsis0"}) {
    std::string op(name), variant = op.substr(op.find('/') + 1);
    op = op.substr(0, op.find('/'));
    const GoldenCase* found = nullptr;
    for (const GoldenCase& c : cases().at(op))
      if (c.variant == variant) found = &c;
    ASSERT_NE(found, nullptr) << name;
    const GoldenCase& c = *found;
    SCOPED_TRACE(name);
    In in = tg::testing::float64_inputs(c);
    Tensor w = tg::testing::loss_weights(call(c, in).shape());
    auto loss_of = [&](const In& x) { return (call(c, x).cast(dtypes::float64) * w).sum(); };
    std::vector<double> analytic = loss_of(in).gradient({in[0]})[0].to_vector<double>();
    const std::vector<double>& x0 = c.inputs[0].floats;
    double h = variant == "f32" ? 1e-3 : 1e-6;  // through float32, a wider step
    for (size_t j = 0; j < x0.size(); j += 3) {
      auto at = [&](double d) {
        In x = in;
        std::vector<double> xs = x0;
        xs[j] += d;
        x[0] = Tensor(xs, c.inputs[0].shape).realize();
        return loss_of(x).item<double>();
      };
      double fd = (at(h) - at(-h)) / (2 * h);
      EXPECT_NEAR(analytic[j], fd, (variant == "f32" ? 1e-3 : 1e-5) + 1e-4 * std::fabs(fd)) << "element " << j;
    }
  }
}

TEST(EdgeMethods, Allclose) {
  Tensor a({1.0f, 2.0f, NAN}), b({1.0f, 2.00001f, NAN});
  EXPECT_FALSE(a.allclose(b));  // NaN is not close to NaN unless asked
  EXPECT_TRUE(a.allclose(b, 1e-5, 1e-8, true));
  EXPECT_FALSE(a.allclose(b + 0.1f, 1e-5, 1e-8, true));
}

// A 16-bit float's mean and var sum in float32 and round once (tinygrad's mean casts to its sum dtype first): a
// float16 sum of 10000 tens (100000) is past float16's 65504. Before: mean and var were inf, layernorm NaN.
TEST(EdgeMethods, HalfMeanAndVarSumInFloat32) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    SCOPED_TRACE(dt.name());
    Tensor x = Tensor::full({10000}, 10.0, dt);
    EXPECT_EQ(x.mean().dtype(), dt);
    EXPECT_EQ(x.mean().item<float>(), 10.0f);
    EXPECT_EQ(x.var().item<float>(), 0.0f);
    EXPECT_EQ(x.std().item<float>(), 0.0f);
    EXPECT_EQ(x.reshape({1, 10000}).layernorm().abs().sum().item<float>(), 0.0f);
  }
  // (2048 + 1 + 0) / 3 = 683 exactly in float32; a float16 sum rounds 2049 to 2048 first (682.5)
  EXPECT_EQ(Tensor({2048.0, 1.0, 0.0}, dtypes::float16).mean().item<float>(), 683.0f);
}

// Integer pow is exact and wraps in its dtype, as PyTorch's (torch.tensor([3, -7]) ** 39 and ** 21 are exact int64s;
// int32 3 ** 20 wraps to -808182895). The reference multiplies e times in uint64 and keeps the dtype's low bits.
// Before: through float64, 3^39 came out as 4052555153018969600 and 3^20 in int32 as INT_MIN.
TEST(EdgeMethods, IntegerPowIsExactAndWraps) {
  std::vector<int64_t> bases{-7, -3, -2, -1, 0, 1, 2, 3, 5};
  std::vector<int64_t> exps{-3, -1, 0, 1, 2, 7, 20, 21, 39, 40, 63};
  auto want = [](int64_t b, int64_t e, int bits) {
    if (e < 0) return b == 1 ? int64_t{1} : b == -1 ? (e % 2 ? int64_t{-1} : int64_t{1}) : int64_t{0};
    uint64_t r = 1;
    for (int64_t i = 0; i < e; i++) r *= static_cast<uint64_t>(b);
    if (bits == 64) return static_cast<int64_t>(r);
    uint64_t low = r & ((uint64_t{1} << bits) - 1);  // the dtype's bits, read back signed
    return static_cast<int64_t>(low >= (uint64_t{1} << (bits - 1)) ? low - (uint64_t{1} << bits) : low);
  };
  for (DType dt : {dtypes::int8, dtypes::int32, dtypes::int64}) {
    SCOPED_TRACE(dt.name());
    int bits = static_cast<int>(dt.itemsize()) * 8;
    std::vector<int64_t> b, e, expect;
    for (int64_t x : bases)
      for (int64_t k : exps) b.push_back(x), e.push_back(k), expect.push_back(want(x, k, bits));
    Shape n{static_cast<int64_t>(b.size())};
    Tensor tb = Tensor(b, n).cast(dt), te = Tensor(e, n).cast(dt);
    EXPECT_EQ(tb.pow(te).cast(dtypes::int64).to_vector<int64_t>(), expect);
    for (int64_t k : {21, 39}) {  // a constant exponent: as many squarings as its bits
      std::vector<int64_t> c;
      for (int64_t x : b) c.push_back(want(x, k, bits));
      EXPECT_EQ(tb.pow(k).cast(dtypes::int64).to_vector<int64_t>(), c) << "** " << k;
    }
  }
  EXPECT_EQ(Tensor({3LL, -7LL}, dtypes::int64).pow(39).to_vector<int64_t>(),
            (std::vector<int64_t>{4052555153018976267LL, 3522809609551315465LL}));  // torch.tensor([3, -7]) ** 39
}

// A kernel given as a list of one ({3}) pools the last dimension only (tinygrad's make_tuple of (3,)); the number 3
// pools the last two. PyTorch: x = torch.arange(1, 15.).reshape(1, 2, 7); F.avg_pool1d(x, 3, 2, 1) and
// F.max_pool1d(x, 3, 3). Before: {3} was the number 3, a 3x3 window over the channels too.
TEST(EdgeMethods, AKernelOfOneSizePoolsOneDimension) {
  Tensor x = Tensor::arange(1, 15).cast(dtypes::float32).reshape({1, 2, 7});
  Tensor avg = x.avg_pool2d({3}, Ints{2}, 1, 1);
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 4}));
  std::vector<float> want{1, 3, 5, 13.f / 3, 17.f / 3, 10, 12, 9}, got = avg.to_vector<float>();
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5);
  EXPECT_EQ(x.max_pool2d({3}, Ints{3}).to_vector<float>(), (std::vector<float>{3, 6, 10, 13}));
  EXPECT_THROW(x.max_pool2d(3), ShapeError);  // the number: a 3x3 window over the last two, larger than 2 rows
}

TEST(EdgeMethods, CloneIsACopyInItsOwnBuffer) {
  Tensor x = Tensor({1.0f, -0.0f, 3.0f}).realize(), y = x.clone().realize();
  EXPECT_EQ(y.to_bytes(), x.to_bytes());  // bit for bit (-0.0 too)
  x.setitem({0}, 5.0);  // another buffer: y keeps its values
  EXPECT_EQ(y.to_vector<float>()[0], 1.0f);
  Tensor w = Tensor({2.0f}).requires_grad_();
  (w.clone() * 3).sum().backward();
  EXPECT_EQ(w.grad().item<float>(), 3.0f);
  EXPECT_TRUE(w.is_floating_point());
  EXPECT_FALSE(Tensor({1}).is_floating_point());
  EXPECT_EQ(w.half().dtype(), dtypes::float16);
  EXPECT_EQ(w.bfloat16().dtype(), dtypes::bfloat16);
}

// Statistical: the frequencies of 40000 draws within 0.015 of the weights (about 6 standard deviations), with a
// fixed seed so a run is reproducible
TEST(EdgeMethods, MultinomialDrawsByWeight) {
  Tensor::manual_seed(7);
  Tensor w({{1.0f, 2.0f, 0.0f, 5.0f}, {0.0f, 0.0f, 1.0f, 0.0f}});
  std::vector<int32_t> s = w.multinomial(20000, true).to_vector<int32_t>();
  ASSERT_EQ(s.size(), 40000u);
  std::vector<double> freq(4, 0.0);
  for (size_t i = 0; i < 20000; i++) {
    freq[s[i]] += 1.0 / 20000;
    EXPECT_EQ(s[20000 + i], 2);
  }
  std::vector<double> want{1.0 / 8, 2.0 / 8, 0.0, 5.0 / 8};
  for (size_t k = 0; k < 4; k++) EXPECT_NEAR(freq[k], want[k], 0.015) << "category " << k;
  // without replacement: distinct indices, never a zero weight while others remain, all of them when asked for all
  for (int trial = 0; trial < 20; trial++) {
    std::vector<int32_t> t = Tensor({1.0f, 0.0f, 3.0f, 2.0f}).multinomial(3).to_vector<int32_t>();
    std::sort(t.begin(), t.end());
    EXPECT_EQ(t, (std::vector<int32_t>{0, 2, 3}));
  }
  // the first draw without replacement is a weighted draw too: category 3 in about 2/3 of rows
  std::vector<int32_t> first = Tensor::ones({6000, 1}).mul(Tensor({{1.0f, 0.0f, 0.0f, 2.0f}})).multinomial(1).to_vector<int32_t>();
  EXPECT_NEAR(std::count(first.begin(), first.end(), 3) / 6000.0, 2.0 / 3, 0.03);
}

// Properties no golden can show: a rank-deficient matrix still gets an orthogonal U (PyTorch's and LAPACK's
// U is orthogonal whatever the rank), and full_matrices completes both bases.
TEST(EdgeMethods, SvdOfRankDeficientAndBatchedMatrices) {
  Tensor::manual_seed(3);
  for (Shape shape : {Shape{3, 3}, Shape{2, 6, 4}, Shape{4, 7}}) {
    int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
    SCOPED_TRACE(std::to_string(shape.size()) + "-d " + std::to_string(m) + "x" + std::to_string(n));
    Tensor a = Tensor::randn(shape);
    if (shape == Shape{3, 3}) a = a.shrink({{0, 3}, {0, 1}}).expand({3, 3}) * Tensor({1.0f, -2.0f, 0.5f});  // rank 1
    auto [u, s, vh] = a.svd();
    ASSERT_EQ(u.shape().back(), m);
    ASSERT_EQ(vh.shape().back(), n);
    std::vector<std::pair<int64_t, int64_t>> to_mn(shape.size(), {0, 0});
    to_mn[shape.size() - 2] = {0, m - k}, to_mn.back() = {0, n - k};
    Tensor sd = (s.unsqueeze(-2) * Tensor::eye(k)).pad(to_mn);
    EXPECT_LT((u.matmul(sd).matmul(vh) - a).abs().max().item<float>(), 1e-5f);
    EXPECT_LT((u.matmul(u.transpose(-2, -1)) - Tensor::eye(m)).abs().max().item<float>(), 1e-5f);
    EXPECT_LT((vh.matmul(vh.transpose(-2, -1)) - Tensor::eye(n)).abs().max().item<float>(), 1e-5f);
    std::vector<float> sv = s.to_vector<float>();
    for (size_t i = 0; i + 1 < sv.size(); i++)
      if ((i + 1) % static_cast<size_t>(k)) {
        EXPECT_GE(sv[i], sv[i + 1]);  // descending within each matrix
      }
  }
  auto [q, r] = Tensor::zeros({0, 3}).qr();  // empty: Q (0, 0), R (0, 3)
  EXPECT_EQ(q.shape(), (Shape{0, 0}));
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
}

TEST(EdgeMethods, FromBlobSharesTheCallersMemory) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_blob(data.data(), {2, 3});
  EXPECT_TRUE(t.is_realized());
  Tensor twice = t * 2;  // lazy: the memory is read when the kernel runs
  data[0] = 10;
  EXPECT_EQ(twice.to_vector<float>(), (std::vector<float>{20, 4, 6, 8, 10, 12}));
  EXPECT_EQ(data, (std::vector<float>{10, 2, 3, 4, 5, 6}));  // never written
  std::vector<int16_t> ints{7, -8};
  EXPECT_EQ(Tensor::from_blob(ints.data(), {2}, dtypes::int16).sum().item<int32_t>(), -1);
  EXPECT_EQ(Tensor::from_blob(nullptr, {0, 4}).numel(), 0);
  // the tensor goes away, the caller's memory stays (ASan would see a free of it)
  { Tensor gone = Tensor::from_blob(data.data(), {6}).realize(); }
  EXPECT_EQ(data[5], 6.0f);
}

TEST(EdgeMethods, ReplaceMakesEveryHandleTheOtherTensor) {
  Tensor a = Tensor({1.0f, 2.0f}), alias = a;
  a.replace(Tensor({3.0f, 4.0f}) + 1);
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{4, 5}));
  tg::testing::expect_error<Error>([&] { a.replace(Tensor({1, 2})); }, "replace", {"int32", "float32"}, __FILE__);
  tg::testing::expect_error<Error>([&] { a.replace(Tensor({1.0f})); }, "replace", {"(1,)", "(2,)"}, __FILE__);
}

// ---- errors ----

TEST(EdgeErrors, ArangeBeyondItsDtype) {
  tg::testing::expect_error<Error>([] { Tensor::arange(0, 200, 1, dtypes::int8); }, "arange", {"int8", "200"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::arange(0, 70000, 1, dtypes::uint16); }, "arange", {"uint16"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::arange(-129, 0, 1, dtypes::int8); }, "arange", {"-129"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::arange(127, -130, -1, dtypes::int8); }, "arange", {"-129"}, __FILE__);
  // refused when it is made, not when it would be realized (the values would wrap)
  tg::testing::expect_error<Error>([] { Tensor::arange(0, 8589934592.0, 1, dtypes::int32); }, "arange", {"int32"}, __FILE__);
  EXPECT_EQ(Tensor::arange(-128, 128, 1, dtypes::int8).numel(), 256);  // exactly the range fits
}

TEST(EdgeErrors, ArangeBeyondInt32IsInt64) {
  Tensor t = Tensor::arange(2147483646.0, 2147483650.0, 1);
  EXPECT_EQ(t.dtype(), dtypes::int64);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{2147483646, 2147483647, 2147483648, 2147483649}));
  EXPECT_EQ(Tensor::arange(-2147483649.0, -2147483647.0, 1).dtype(), dtypes::int64);
  EXPECT_EQ(Tensor::arange(0, 2147483647.0, 1e9).dtype(), dtypes::int32);
}

TEST(EdgeErrors, LinspaceToBool) {
  tg::testing::expect_error<Error>([] { Tensor::linspace(0, 1, 3, dtypes::bool_); }, "linspace", {"bool"}, __FILE__);
}

TEST(EdgeErrors, IntegerToNegativeIntegerPower) {
  Tensor x({1, 2, 3});
  tg::testing::expect_error<Error>([&] { x.pow(-1); }, "pow", {"negative"}, __FILE__);
  EXPECT_EQ(x.pow(Tensor({0, 2, 1})).to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 3}));  // non-negative ones work
}

TEST(EdgeErrors, ScatterOfAnotherDtype) {
  Tensor x = Tensor::zeros({2, 3}), idx({{0, 1, 0}});
  tg::testing::expect_error<Error>([&] { x.scatter(0, idx, Tensor({{1.0, 2.0, 3.0}}, dtypes::float64)); }, "scatter",
                                   {"float64", "float32"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.scatter_reduce(0, idx, Tensor({{1, 2, 3}}), "sum"); }, "scatter_reduce",
                                   {"int32", "float32"}, __FILE__);
}

TEST(EdgeErrors, GroupedQueryAttentionHeads) {
  Tensor q = Tensor::ones({1, 6, 2, 4}), kv = Tensor::ones({1, 4, 2, 4});
  tg::testing::expect_error<Error>([&] { q.scaled_dot_product_attention(kv, kv, std::nullopt, 0, false, true); },
                                   "scaled_dot_product_attention", {"multiple", "6", "4"}, __FILE__);
}

TEST(EdgeErrors, NewMethodsRejectBadArguments) {
  Tensor x = Tensor::ones({3, 4});
  tg::testing::expect_error<Error>([&] { x.diagonal(0, 1, 1); }, "diagonal", {"same dimension"}, __FILE__);
  tg::testing::expect_error<Error>([&] { Tensor::ones({2, 2, 2}).diag(); }, "diag", {"(2, 2, 2)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.unfold(1, 5, 1); }, "unfold", {"size 5", "(3, 4)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.unfold(1, 2, 0); }, "unfold", {"step 0"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.reshape({keep_dim, keep_dim, keep_dim}); }, "reshape", {"keep_dim", "position 2"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.scatter(0, Tensor({{0, 1}}), 1.0, "max"); }, "scatter", {"\"max\""}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.masked_select(x > 0, -1); }, "masked_select", {"-1"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.nonzero(-2); }, "nonzero", {"-2"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor({true}).fmod(Tensor({false})); }, "fmod", {"bool"}, __FILE__);
  Tensor v = Tensor::ones({1, 1, 2, 2});
  tg::testing::expect_error<Error>([&] { v.max_unpool2d(Tensor::zeros({1, 1, 2, 1}, dtypes::int32)); }, "max_unpool2d", {"(1, 1, 2, 1)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { v.max_unpool2d(v); }, "max_unpool2d", {"float32"}, __FILE__);
}

TEST(EdgeErrors, RearrangeFormulas) {
  Tensor x = Tensor::ones({2, 6});
  tg::testing::expect_error<Error>([&] { x.rearrange("a b"); }, "rearrange", {"->"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a (b c) -> a b c"); }, "rearrange", {"two unknown sizes"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a (b c) -> a b c", {{"b", 4}}); }, "rearrange", {"elements"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a b -> a"); }, "rearrange", {"once"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a b c -> a b c"); }, "rearrange", {"(2, 6)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a b -> b a", {{"z", 1}}); }, "rearrange", {"\"z\""}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.rearrange("a (b -> a b"); }, "rearrange", {"unclosed"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.pad_to({1, 6}); }, "pad_to", {"(2, 6)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x.shrink_to({3, 6}); }, "shrink_to", {"(2, 6)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { Tensor::ones({2, 3, 4}).multinomial(); }, "multinomial", {"(2, 3, 4)"}, __FILE__);
  tg::testing::expect_error<Error>([&] { Tensor({1.0f, 2.0f}).multinomial(3); }, "multinomial", {"3 samples", "2 categories"}, __FILE__);
}

TEST(EdgeErrors, GeluApproximation) {
  tg::testing::expect_error<Error>([] { Tensor({1.0f}).gelu("erf"); }, "gelu", {"\"erf\"", "tanh", "none"}, __FILE__);
}

TEST(EdgeErrors, SliceBoundsMustBeIntegerScalars) {
  Tensor x = Tensor::arange(6);
  tg::testing::expect_error<Error>([&] { x[{Slice(Tensor({1, 2}), Tensor(3))}]; }, "getitem", {"0-d"}, __FILE__);
  tg::testing::expect_error<Error>([&] { x[{Slice(Tensor(1.5f), Tensor(3))}]; }, "getitem", {"integer"}, __FILE__);
}

TEST(EdgeErrors, FactorizationsAndBlobs) {
  tg::testing::expect_error<Error>([] { Tensor({1.0f, 2.0f}).qr(); }, "qr", {"(2,)", "matrix"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::ones({2, 2}, dtypes::bool_).svd(); }, "svd", {"bool"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::ones({2, 2}).softmax(1, dtypes::int32); }, "softmax", {"int32"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::ones({2, 2}).matmul(Tensor::ones({2, 2}), dtypes::bool_); }, "matmul", {"bool"}, __FILE__);
  std::vector<float> data(4);
  tg::testing::expect_error<Error>([&] { Tensor::from_blob(reinterpret_cast<char*>(data.data()) + 1, {2}); }, "from_blob",
                                   {"aligned", "float32"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::from_blob(nullptr, {2}); }, "from_blob", {"null", "(2,)"}, __FILE__);
}

TEST(EdgeErrors, BitcastAndKeccakArguments) {
  tg::testing::expect_error<Error>([] { Tensor::zeros({2, 3}, dtypes::uint8).bitcast(dtypes::int32); }, "bitcast",
                                   {"(2, 3)", "whole number"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor(1.0f).bitcast(dtypes::float16); }, "bitcast", {"()"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::zeros({4}, dtypes::bool_).bitcast(dtypes::int32); }, "bitcast", {"bool"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::zeros({4}, dtypes::uint8).keccak("md5"); }, "keccak", {"\"md5\"", "sha3_256"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::zeros({4}, dtypes::uint8).keccak(100, 6, 16); }, "keccak", {"multiple of 8", "100"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::zeros({4}, dtypes::uint8).keccak(136, 6, 200); }, "keccak", {"200"}, __FILE__);
}

TEST(EdgeErrors, MaxOfAnEmptyAxisHasNoIdentity) {
  tg::testing::expect_error<Error>([] { Tensor::zeros({0, 3}).max(0); }, "max", {"empty"}, __FILE__);
  tg::testing::expect_error<Error>([] { Tensor::zeros({0, 3}).cummax(1).first.max(0); }, "max", {"empty"}, __FILE__);
}

}  // namespace
