// The full Tensor API against PyTorch (tests/golden/api.txt, from tools/gen_api_goldens.py). Each golden case is
// bound here to the same call in C++: by "method/variant" where the variant needs its own call, else by "method".
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <functional>
#include <set>

#include "support/golden.h"
#include "support/golden_grad.h"

using namespace tg;
using tg::testing::GoldenCase;

namespace {

using In = std::vector<Tensor>;
using Args = std::vector<double>;
using Fn = std::function<Tensor(const In&, const Args&)>;

std::vector<int64_t> ints(const Args& a, size_t from = 0, size_t to = SIZE_MAX) {
  return std::vector<int64_t>(a.begin() + static_cast<int64_t>(from), a.begin() + static_cast<int64_t>(std::min(to, a.size())));
}
// args [keepdim, axes...]: no axes means all
Axes axes_of(const Args& a, size_t from) { return a.size() > from ? Axes(ints(a, from)) : Axes(); }
Reduction reduction_of(double r) { return r == 0 ? Reduction::none : r == 1 ? Reduction::mean : Reduction::sum; }

template <class F> Fn unary(F f) {
  return [f](const In& in, const Args&) { return f(in[0]); };
}
template <class F> Fn binary(F f) {
  return [f](const In& in, const Args&) { return f(in[0], in[1]); };
}
// x (made a realized copy) with x[idx] = v
Tensor set(const Tensor& x, const std::vector<Index>& idx, double v) {
  Tensor y = x.contiguous().realize();
  y.setitem(idx, v);
  return y;
}

#define U(name) {#name, unary([](const Tensor& x) { return x.name(); })}
#define R(name) {#name, [](const In& in, const Args& a) { return in[0].name(axes_of(a, 1), a[0] != 0); }}

const std::map<std::string, Fn>& bindings() {
  static const std::map<std::string, Fn> t = {
      U(exp), U(log), U(rsqrt), U(cos), U(tan), U(asin), U(acos), U(atan), U(sinh), U(cosh), U(tanh), U(asinh),
      U(acosh), U(atanh), U(erf), U(abs), U(sign), U(trunc), U(floor), U(ceil), U(round), U(square), U(isnan),
      U(isinf), U(isfinite), U(bitwise_not), U(relu), U(relu6), U(leaky_relu), U(elu), U(celu), U(selu), U(sigmoid),
      U(hardsigmoid), U(logsigmoid), U(hardtanh), U(gelu), U(quick_gelu), U(silu), U(swish), U(mish), U(softplus),
      U(softsign), U(hardswish), U(T),
      {"isinf/positive_only", unary([](const Tensor& x) { return x.isinf(true, false); })},
      {"leaky_relu/slope", [](const In& in, const Args& a) { return in[0].leaky_relu(a[0]); }},
      {"elu/alpha", [](const In& in, const Args& a) { return in[0].elu(a[0]); }},
      {"celu/alpha", [](const In& in, const Args& a) { return in[0].celu(a[0]); }},
      {"softplus/beta", [](const In& in, const Args& a) { return in[0].softplus(a[0]); }},
      {"hardtanh/range", [](const In& in, const Args& a) { return in[0].hardtanh(a[0], a[1]); }},
      {"hardsigmoid/params", [](const In& in, const Args& a) { return in[0].hardsigmoid(a[0], a[1]); }},
      {"minimum", binary([](const Tensor& a, const Tensor& b) { return a.minimum(b); })},
      {"pow", [](const In& in, const Args& a) { return in.size() == 2 ? in[0].pow(in[1]) : in[0].pow(a[0]); }},
      {"pow/int_scalar_2", unary([](const Tensor& x) { return x.pow(2); })},
      {"pow/scalar_2", unary([](const Tensor& x) { return x.pow(2); })},
      {"pow/scalar_3", unary([](const Tensor& x) { return x.pow(3); })},
      {"pow/scalar_0", unary([](const Tensor& x) { return x.pow(0); })},
      {"pow/scalar_m1", unary([](const Tensor& x) { return x.pow(-1); })},
      {"lerp", [](const In& in, const Args& a) { return in.size() == 3 ? in[0].lerp(in[1], in[2]) : in[0].lerp(in[1], a[0]); }},
      {"clip", [](const In& in, const Args& a) {
         return a.size() == 2 ? in[0].clip(a[0], a[1]) : in[0].clip(a[0], std::nullopt);
       }},
      {"div/trunc_float32", binary([](const Tensor& a, const Tensor& b) { return a.div(b, "trunc"); })},
      {"div/trunc_int32", binary([](const Tensor& a, const Tensor& b) { return a.div(b, "trunc"); })},
      {"div/floor_float32", binary([](const Tensor& a, const Tensor& b) { return a.div(b, "floor"); })},
      {"div/floor_int32", binary([](const Tensor& a, const Tensor& b) { return a.div(b, "floor"); })},
      R(prod), R(min), R(mean), R(any), R(all), R(count_nonzero), R(logsumexp),
      {"var", [](const In& in, const Args& a) { return in[0].var(axes_of(a, 2), a[0] != 0, a[1]); }},
      {"std", [](const In& in, const Args& a) { return in[0].std(axes_of(a, 2), a[0] != 0, a[1]); }},
      {"var_mean", [](const In& in, const Args& a) { return in[0].var_mean(axes_of(a, 2), a[0] != 0, a[1]).first; }},
      {"std_mean", [](const In& in, const Args& a) { return in[0].std_mean(axes_of(a, 2), a[0] != 0, a[1]).second; }},
      {"argmax", [](const In& in, const Args& a) {
         return a.empty() ? in[0].argmax() : in[0].argmax(static_cast<int64_t>(a[0]), a[1] != 0);
       }},
      {"argmin", [](const In& in, const Args& a) {
         return a.empty() ? in[0].argmin() : in[0].argmin(static_cast<int64_t>(a[0]), a[1] != 0);
       }},
      {"softmax", [](const In& in, const Args& a) { return in[0].softmax(static_cast<int64_t>(a[0])); }},
      {"log_softmax", [](const In& in, const Args& a) { return in[0].log_softmax(static_cast<int64_t>(a[0])); }},
      {"cumsum", [](const In& in, const Args& a) { return in[0].cumsum(static_cast<int64_t>(a[0])); }},
      {"cumprod", [](const In& in, const Args& a) { return in[0].cumprod(static_cast<int64_t>(a[0])); }},
      {"cummax", [](const In& in, const Args& a) { return in[0].cummax(static_cast<int64_t>(a[0])).first; }},
      {"logcumsumexp", [](const In& in, const Args& a) { return in[0].logcumsumexp(static_cast<int64_t>(a[0])); }},
      // movement
      {"view", [](const In& in, const Args& a) { return in[0].view(ints(a)); }},
      {"transpose", [](const In& in, const Args& a) { return in[0].transpose(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1])); }},
      {"flatten", [](const In& in, const Args& a) { return in[0].flatten(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1])); }},
      {"unflatten", [](const In& in, const Args& a) { return in[0].unflatten(static_cast<int64_t>(a[0]), ints(a, 1)); }},
      {"squeeze", [](const In& in, const Args& a) { return a.empty() ? in[0].squeeze() : in[0].squeeze(static_cast<int64_t>(a[0])); }},
      {"unsqueeze", [](const In& in, const Args& a) { return in[0].unsqueeze(static_cast<int64_t>(a[0])); }},
      {"repeat", [](const In& in, const Args& a) { return in[0].repeat(ints(a)); }},
      {"repeat_interleave", [](const In& in, const Args& a) {
         return a.size() == 1 ? in[0].repeat_interleave(static_cast<int64_t>(a[0]))
                              : in[0].repeat_interleave(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1]));
       }},
      {"cat", [](const In& in, const Args& a) { return Tensor::cat(in, static_cast<int64_t>(a[0])); }},
      {"stack", [](const In& in, const Args& a) { return Tensor::stack(in, static_cast<int64_t>(a[0])); }},
      {"split", [](const In& in, const Args& a) {
         if (a.size() == 1) return in[0].split(std::vector<int64_t>{2, 5}, 0)[static_cast<size_t>(a[0])];
         return in[0].split(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1]))[static_cast<size_t>(a[2])];
       }},
      {"chunk", [](const In& in, const Args& a) {
         return in[0].chunk(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1]))[static_cast<size_t>(a[2])];
       }},
      {"roll", [](const In& in, const Args& a) {
         if (a.size() == 1) return in[0].roll({static_cast<int64_t>(a[0])}, {});
         size_t n = a.size() / 2;
         return in[0].roll(ints(a, 0, n), ints(a, n));
       }},
      {"meshgrid/ij_0", binary([](const Tensor& a, const Tensor& b) { return Tensor::meshgrid({a, b}, "ij")[0]; })},
      {"meshgrid/ij_1", binary([](const Tensor& a, const Tensor& b) { return Tensor::meshgrid({a, b}, "ij")[1]; })},
      {"meshgrid/xy_0", binary([](const Tensor& a, const Tensor& b) { return Tensor::meshgrid({a, b}, "xy")[0]; })},
      {"meshgrid/xy_1", binary([](const Tensor& a, const Tensor& b) { return Tensor::meshgrid({a, b}, "xy")[1]; })},
      {"triu", [](const In& in, const Args& a) { return in[0].triu(static_cast<int64_t>(a[0])); }},
      {"tril", [](const In& in, const Args& a) { return in[0].tril(static_cast<int64_t>(a[0])); }},
      // F.pad's (left, right, top, bottom) on the last two dims
      {"pad_mode/reflect", unary([](const Tensor& x) { return x.pad({{0, 0}, {0, 0}, {1, 3}, {2, 1}}, PadMode::reflect); })},
      {"pad_mode/replicate", unary([](const Tensor& x) { return x.pad({{0, 0}, {0, 0}, {1, 3}, {2, 1}}, PadMode::replicate); })},
      {"pad_mode/circular", unary([](const Tensor& x) { return x.pad({{0, 0}, {0, 0}, {1, 3}, {2, 1}}, PadMode::circular); })},
      {"pad_mode/constant", unary([](const Tensor& x) { return x.pad({{0, 0}, {0, 0}, {1, 3}, {2, 1}}, PadMode::constant, 0.5); })},
      {"pad2d", [](const In& in, const Args& a) { return a.size() == 5 ? in[0].pad2d(ints(a, 0, 4), a[4]) : in[0].pad2d(ints(a)); }},
      // indexing: the same indices as the Python in tools/gen_api_goldens.py
      {"getitem/int", unary([](const Tensor& x) { return x[1]; })},
      {"getitem/neg_int", unary([](const Tensor& x) { return x[-1]; })},
      {"getitem/int_int", unary([](const Tensor& x) { return x[{1, 2}]; })},
      {"getitem/slice", unary([](const Tensor& x) { return x[{Slice(1, 3)}]; })},
      {"getitem/slice_step", unary([](const Tensor& x) { return x[{Slice({}, {}, 2)}]; })},
      {"getitem/slice_neg_step", unary([](const Tensor& x) { return x[{Slice({}, {}, -1)}]; })},
      {"getitem/slice_neg_step2", unary([](const Tensor& x) { return x[{Slice(3, 0, -2)}]; })},
      {"getitem/slice_neg_bounds", unary([](const Tensor& x) { return x[{Slice(-3, -1)}]; })},
      {"getitem/slice_out_of_range", unary([](const Tensor& x) { return x[{Slice(2, 100)}]; })},
      {"getitem/empty_slice", unary([](const Tensor& x) { return x[{Slice(3, 1)}]; })},
      {"getitem/newaxis", unary([](const Tensor& x) { return x[{newaxis, 0}]; })},
      {"getitem/ellipsis", unary([](const Tensor& x) { return x[{ellipsis, 1}]; })},
      {"getitem/ellipsis_mid", unary([](const Tensor& x) { return x[{0, ellipsis, Slice({}, {}, 3)}]; })},
      {"getitem/mixed", unary([](const Tensor& x) { return x[{Slice(1, 4, 2), newaxis, -2, Slice({}, {}, -3)}]; })},
      {"getitem/tensor", binary([](const Tensor& x, const Tensor& i) { return x[{i}]; })},
      {"getitem/tensor_dim1", binary([](const Tensor& x, const Tensor& i) { return x[{Slice(), i}]; })},
      {"getitem/two_tensors", [](const In& in, const Args&) { return in[0][{in[1], in[2]}]; }},
      {"getitem/split_tensors", [](const In& in, const Args&) { return in[0][{in[1], Slice(), in[2]}]; }},
      {"getitem/tensor_and_int", binary([](const Tensor& x, const Tensor& i) { return x[{1, Slice(), i}]; })},
      {"setitem/slice", [](const In& in, const Args& a) { return set(in[0], {Slice(1, 3)}, a[0]); }},
      {"setitem/step", [](const In& in, const Args& a) { return set(in[0], {Slice({}, {}, 2), 1}, a[0]); }},
      {"setitem/neg_step", [](const In& in, const Args& a) { return set(in[0], {0, Slice({}, {}, -2)}, a[0]); }},
      {"setitem/int", [](const In& in, const Args& a) { return set(in[0], {2, 3, 4}, a[0]); }},
      {"setitem/tensor_value", [](const In& in, const Args&) {
         Tensor x = in[0].contiguous().realize();
         x.setitem({1}, in[1]);
         return x;
       }},
      {"gather", [](const In& in, const Args& a) { return in[0].gather(static_cast<int64_t>(a[0]), in[1]); }},
      {"scatter", [](const In& in, const Args& a) {
         return in.size() == 3 ? in[0].scatter(static_cast<int64_t>(a[0]), in[1], in[2]) : in[0].scatter(static_cast<int64_t>(a[0]), in[1], a[1]);
       }},
      {"masked_fill", [](const In& in, const Args& a) { return in[0].masked_fill(in[1], a[0]); }},
      {"masked_select", binary([](const Tensor& x, const Tensor& m) { return x.masked_select(m); })},
      {"one_hot", [](const In& in, const Args& a) { return in[0].one_hot(static_cast<int64_t>(a[0])); }},
      {"argsort", [](const In& in, const Args& a) { return in[0].argsort(static_cast<int64_t>(a[0]), a[1] != 0); }},
      // linear algebra and nn
      {"matmul", binary([](const Tensor& a, const Tensor& b) { return a.matmul(b); })},
      {"dot", binary([](const Tensor& a, const Tensor& b) { return a.dot(b); })},
      {"linear", [](const In& in, const Args&) { return in.size() == 3 ? in[0].linear(in[1], in[2]) : in[0].linear(in[1]); }},
      {"conv_transpose2d", [](const In& in, const Args& a) {
         std::optional<Tensor> bias = in.size() == 3 ? std::optional<Tensor>(in[2]) : std::nullopt;
         auto i = [&](size_t k) { return static_cast<int64_t>(a[k]); };
         return in[0].conv_transpose2d(in[1], bias, i(0), i(1), i(2), i(3), i(4));
       }},
      {"avg_pool2d", [](const In& in, const Args& a) {
         auto i = [&](size_t k) { return static_cast<int64_t>(a[k]); };
         std::optional<Ints> stride = i(1) ? std::optional<Ints>(i(1)) : std::nullopt;
         return in[0].avg_pool2d(i(0), stride, i(4), i(2), a[3] != 0, a[5] != 0);
       }},
      {"max_pool2d", [](const In& in, const Args& a) {
         auto i = [&](size_t k) { return static_cast<int64_t>(a[k]); };
         std::optional<Ints> stride = i(1) ? std::optional<Ints>(i(1)) : std::nullopt;
         return in[0].max_pool2d(i(0), stride, i(4), i(2), a[3] != 0);
       }},
      {"adaptive_avg_pool2d", [](const In& in, const Args& a) { return in[0].adaptive_avg_pool2d(ints(a)); }},
      {"layernorm", [](const In& in, const Args& a) { return in[0].layernorm(ints(a)); }},
      {"batchnorm", [](const In& in, const Args&) {
         return in[0].batchnorm(in[1], in[2], in[3], (in[4] + 1e-5).rsqrt());
       }},
      {"sdpa", [](const In& in, const Args&) {
         return in.size() == 4 ? in[0].scaled_dot_product_attention(in[1], in[2], in[3]) : in[0].scaled_dot_product_attention(in[1], in[2]);
       }},
      {"sdpa/causal", [](const In& in, const Args&) { return in[0].scaled_dot_product_attention(in[1], in[2], std::nullopt, 0, true); }},
      {"cross_entropy", [](const In& in, const Args& a) { return in[0].cross_entropy(in[1], reduction_of(a[0]), a[1]); }},
      {"sparse_categorical_crossentropy", [](const In& in, const Args& a) {
         return in[0].sparse_categorical_crossentropy(in[1], static_cast<int64_t>(a[0]), a[1], reduction_of(a[2]));
       }},
      {"binary_crossentropy", [](const In& in, const Args& a) { return in[0].binary_crossentropy(in[1], reduction_of(a[0])); }},
      {"binary_crossentropy_logits", [](const In& in, const Args& a) {
         return in[0].binary_crossentropy_logits(in[1], reduction_of(a[0]));
       }},
      {"nll_loss", [](const In& in, const Args& a) {
         std::optional<Tensor> w = in.size() == 3 ? std::optional<Tensor>(in[2]) : std::nullopt;
         return in[0].nll_loss(in[1], w, static_cast<int64_t>(a[1]), reduction_of(a[0]));
       }},
      {"mse", [](const In& in, const Args& a) { return in[0].mse(in[1], reduction_of(a[0])); }},
      {"l1", [](const In& in, const Args& a) { return in[0].l1(in[1], reduction_of(a[0])); }},
      {"eye", [](const In&, const Args& a) { return Tensor::eye(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1])); }},
      {"linspace", [](const In&, const Args& a) { return Tensor::linspace(a[0], a[1], static_cast<int64_t>(a[2])); }},
      {"linspace/int", [](const In&, const Args& a) { return Tensor::linspace(a[0], a[1], static_cast<int64_t>(a[2]), dtypes::int32); }},
  };
  return t;
}
#undef U
#undef R

// Ints from args stored as (count, values...) at position `at`, which moves past them
Ints ints_at(const Args& a, size_t& at) {
  size_t n = static_cast<size_t>(a[at]);
  std::vector<int64_t> v = ints(a, at + 1, at + 1 + n);
  at += 1 + n;
  return Ints(v);
}

// Cases whose call depends on the variant's name
std::optional<Tensor> by_variant(const GoldenCase& c, const In& in) {
  const Args& a = c.args;
  auto has = [&](const char* s) { return c.variant.find(s) != std::string::npos; };
  if (c.op == "sort" || c.op == "topk") {
    auto r = c.op == "sort" ? in[0].sort(static_cast<int64_t>(a[0]), a[1] != 0)
                            : in[0].topk(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1]), a[2] != 0);
    return has("values") ? r.first : r.second;
  }
  if (c.op == "scatter_reduce") {
    std::string reduce = c.variant.substr(0, c.variant.find('_'));
    return in[0].scatter_reduce(0, in[1], in[2], reduce, a[0] != 0);
  }
  if (c.op == "conv2d") {
    size_t at = 1;
    Ints stride = ints_at(a, at), dilation = ints_at(a, at), padding = ints_at(a, at);
    std::optional<Tensor> bias = in.size() == 3 ? std::optional<Tensor>(in[2]) : std::nullopt;
    return in[0].conv2d(in[1], bias, static_cast<int64_t>(a[0]), stride, dilation, padding);
  }
  if (c.op == "interpolate") {
    std::string mode = has("nearest_exact") ? "nearest-exact" : has("nearest") ? "nearest" : has("bilinear") ? "bilinear" : "linear";
    return in[0].interpolate(ints(a, 0, a.size() - 1), mode, a.back() != 0);
  }
  if (c.op == "einsum") {
    static const char* formulas[] = {"ij,jk->ik", "ij->ji", "ii->i", "ii", "bij,bjk->bik", "i,j->ij", "ij,ij->", "ijk->",
                                     "ij,jk,kl->il", "ab,b"};
    return Tensor::einsum(formulas[std::stoi(c.variant.substr(1))], in);
  }
  return std::nullopt;
}

// The method's call for a golden case (by variant, else the table)
Tensor call(const GoldenCase& c, const In& in) {
  if (std::optional<Tensor> r = by_variant(c, in)) return *r;
  auto it = bindings().find(c.op + "/" + c.variant);
  if (it == bindings().end()) it = bindings().find(c.op);
  if (it == bindings().end()) throw std::runtime_error("no C++ binding for " + c.op + "/" + c.variant);
  return it->second(in, c.args);
}

// tinygrad's test_ops tolerances; 16-bit floats are one rounding of their own away
std::pair<double, double> tolerance(const GoldenCase& c) {
  if (c.output.dtype == dtypes::float16) return {2e-3, 4e-3};
  // the polynomial erf/asin approximations and exp2-based pow are good to ~1e-6 relative, a little above atol
  return {5e-6, 1e-3};
}

class TensorApi : public ::testing::TestWithParam<std::string> {};

TEST_P(TensorApi, MatchesPyTorch) {
  const std::string& op = GetParam();
  for (const GoldenCase& c : tg::testing::golden_cases("api.txt").at(op)) {
    SCOPED_TRACE(op + "/" + c.variant);
    In in;
    for (const auto& g : c.inputs) in.push_back(g.make());
    Tensor got = call(c, in);
    auto [atol, rtol] = tolerance(c);
    EXPECT_EQ(tg::testing::compare(got, c.output, atol, rtol), "");
  }
}

// Gradients of the loss sum(out * w), w[k] = sin(1 + 0.7 k) over the flat output, with the golden inputs as float64:
// against PyTorch's (the "grad" lines of api.txt) and against central finite differences.
class TensorApiGradient : public ::testing::TestWithParam<std::string> {};

using tg::testing::float64_inputs;
using tg::testing::loss_weights;

TEST_P(TensorApiGradient, MatchesPyTorch) {
  const std::string& op = GetParam();
  int checked = 0;
  for (const GoldenCase& c : tg::testing::golden_cases("api.txt").at(op)) {
    if (c.grads.empty()) continue;
    SCOPED_TRACE(op + "/" + c.variant);
    In in = float64_inputs(c);
    Tensor out = call(c, in);
    std::vector<Tensor> targets;
    for (const auto& [i, want] : c.grads) targets.push_back(in[i]);
    std::vector<Tensor> grads = (out * loss_weights(out.shape())).sum().gradient(targets);
    size_t t = 0;
    for (const auto& [i, want] : c.grads)
      EXPECT_EQ(tg::testing::compare(grads[t++], want, 1e-5, 1e-4), "") << "gradient of input " << i;
    checked++;
  }
  EXPECT_GT(checked, 0) << "tools/gen_api_goldens.py wrote no PyTorch gradient for " << op;
}

// Finite differences: up to 6 elements of each float input perturbed by +-1e-6 (the first suitable case of each
// method: inputs without NaN or infinity, away from kinks).

TEST_P(TensorApiGradient, MatchesFiniteDifferences) {
  const std::string& op = GetParam();
  int checked = 0;
  for (const GoldenCase& c : tg::testing::golden_cases("api.txt").at(op)) {
    // points where the function has a kink or no derivative are not for finite differences
    static const char* skip[] = {"special", "halves", "nan", "int", "empty", "large", "edges", "float16", "0d", "bool", "negative_base"};
    bool finite = std::all_of(c.inputs.begin(), c.inputs.end(), [](const auto& g) {
      return std::all_of(g.floats.begin(), g.floats.end(), [](double v) { return std::isfinite(v); });
    });
    if (checked == 1 || !finite || c.output.dtype != dtypes::float32 ||
        std::any_of(std::begin(skip), std::end(skip), [&](const char* s) { return c.variant.find(s) != std::string::npos; }))
      continue;
    SCOPED_TRACE(op + "/" + c.variant);
    In in = float64_inputs(c);
    Tensor out = call(c, in);
    if (out.dtype() != dtypes::float64 || out.numel() == 0) continue;
    Tensor w = loss_weights(out.shape());
    auto loss_of = [&](const In& x) { return (call(c, x) * w).sum(); };
    std::vector<Tensor> targets;
    std::vector<size_t> which;
    for (size_t i = 0; i < in.size(); i++)  // the float inputs the output uses (PyTorch's list, where the case has one)
      if (in[i].dtype() == dtypes::float64 && (c.grads.empty() || c.grads.count(i))) targets.push_back(in[i]), which.push_back(i);
    std::vector<Tensor> grads = loss_of(in).gradient(targets);
    checked++;
    for (size_t t = 0; t < targets.size(); t++) {
      size_t i = which[t];
      std::vector<double> analytic = grads[t].to_vector<double>();
      size_t n = c.inputs[i].floats.size(), step = std::max<size_t>(1, n / 6);
      for (size_t j = 0; j < n; j += step) {
        auto at = [&](double delta) {
          In x = in;
          std::vector<double> d = c.inputs[i].floats;
          d[j] += delta;
          x[i] = Tensor(d, c.inputs[i].shape).realize();
          return loss_of(x).item<double>();
        };
        double fd = (at(1e-6) - at(-1e-6)) / 2e-6;
        EXPECT_NEAR(analytic[j], fd, 1e-5 + 1e-4 * std::fabs(fd)) << "input " << i << " element " << j;
      }
    }
  }
}

// The methods with a float result (the rest have no gradient to check)
std::vector<std::string> differentiable_methods() {
  // setitem/assign realize: the graph ends there, as tinygrad's assign
  static const std::set<std::string> none = {"init", "setitem", "isnan", "isinf", "isfinite", "bitwise_not", "argmax", "argmin", "argsort",
                                             "one_hot", "count_nonzero", "any", "all", "eye", "linspace"};
  std::vector<std::string> ops;
  for (const auto& [name, cases] : tg::testing::golden_cases("api.txt"))
    if (!none.count(name)) ops.push_back(name);
  return ops;
}

INSTANTIATE_TEST_SUITE_P(Golden, TensorApiGradient, ::testing::ValuesIn(differentiable_methods()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

std::vector<std::string> api_methods() {
  std::vector<std::string> ops;
  for (const auto& [name, cases] : tg::testing::golden_cases("api.txt"))
    if (name != "init") ops.push_back(name);  // statistical: tests/ops/test_random.cpp
  return ops;
}

// gelu's tail: 0.5 x (1 + tanh(z)) loses every digit once tanh(z) rounds to -1 in float32 (x < -4 or so); computed
// as x sigmoid(2z) it keeps its relative precision (against the formula in double)
// Signed integer overflow wraps on every device, as PyTorch's (torch.tensor([2**31 - 1]) + 1 is -2**31; abs of
// INT_MIN is INT_MIN): OpenCL C and CUDA leave it undefined, so their kernels compute a value's signed math in the
// unsigned type. Before: on PoCL, (INT32_MAX + 1) < 0 was false and abs(INT_MIN) printed 2147483648 in an int32.
// (ctest runs this suite on OpenCL too: opencl.api.)
TEST(TensorApiNumerics, SignedIntegerOverflowWraps) {
  Tensor x = Tensor({INT32_MAX, INT32_MIN, 5}, dtypes::int32);
  EXPECT_EQ((x + 1).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, INT32_MIN + 1, 6}));
  EXPECT_EQ(((x + 1) < 0).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(x.abs().to_vector<int32_t>(), (std::vector<int32_t>{INT32_MAX, INT32_MIN, 5}));
  EXPECT_EQ((x * 2).to_vector<int32_t>(), (std::vector<int32_t>{-2, 0, 10}));
  EXPECT_EQ((-x).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN + 1, INT32_MIN, -5}));
  Tensor y = Tensor({INT64_MAX}, dtypes::int64);
  EXPECT_EQ((y + 1).to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN}));
}

TEST(TensorApiNumerics, GeluKeepsItsPrecisionInTheNegativeTail) {
  std::vector<float> xs{-3.f, -4.5f, -5.f, -6.f, -7.f};
  std::vector<float> got = Tensor(xs, {static_cast<int64_t>(xs.size())}).gelu().template to_vector<float>();
  for (size_t i = 0; i < xs.size(); i++) {
    double x = xs[i], z = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x), want = x / (1.0 + std::exp(-2.0 * z));
    EXPECT_NEAR(got[i], want, 1e-5 * std::fabs(want)) << "x = " << x;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, TensorApi, ::testing::ValuesIn(api_methods()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
