// Every Tensor primitive against PyTorch's values (tests/golden/ops.txt, from tools/gen_op_goldens.py): each dtype
// the op accepts, 0-d, empty and broadcast shapes. One test per op, one trace per case.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "support/golden.h"

using namespace tg;
using tg::testing::GoldenCase;

namespace {

using Args = std::vector<double>;
using OpFn = std::function<Tensor(const std::vector<Tensor>&, const Args&, const std::string& variant)>;

template <class F> OpFn binary(F f) {
  return [f](const std::vector<Tensor>& in, const Args&, const std::string&) { return f(in[0], in[1]); };
}
template <class F> OpFn unary(F f) {
  return [f](const std::vector<Tensor>& in, const Args&, const std::string&) { return f(in[0]); };
}
std::vector<int64_t> ints(const Args& a, size_t from = 0) { return std::vector<int64_t>(a.begin() + from, a.end()); }
std::vector<std::pair<int64_t, int64_t>> pairs(const Args& a, size_t n) {
  std::vector<std::pair<int64_t, int64_t>> p;
  for (size_t i = 0; i + 1 < n; i += 2) p.push_back({static_cast<int64_t>(a[i]), static_cast<int64_t>(a[i + 1])});
  return p;
}
DType dst_dtype(const std::string& variant) { return tg::testing::dtype_from_name(variant.substr(variant.find("_to_") + 4)); }

const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> t = {
      {"add", binary([](const Tensor& a, const Tensor& b) { return a + b; })},
      {"sub", binary([](const Tensor& a, const Tensor& b) { return a - b; })},
      {"mul", binary([](const Tensor& a, const Tensor& b) { return a * b; })},
      {"div", binary([](const Tensor& a, const Tensor& b) { return a / b; })},
      {"idiv", binary([](const Tensor& a, const Tensor& b) { return a.idiv(b); })},
      {"mod", binary([](const Tensor& a, const Tensor& b) { return a % b; })},
      {"maximum", binary([](const Tensor& a, const Tensor& b) { return a.maximum(b); })},
      {"lt", binary([](const Tensor& a, const Tensor& b) { return a < b; })},
      {"gt", binary([](const Tensor& a, const Tensor& b) { return a > b; })},
      {"le", binary([](const Tensor& a, const Tensor& b) { return a <= b; })},
      {"ge", binary([](const Tensor& a, const Tensor& b) { return a >= b; })},
      {"eq", binary([](const Tensor& a, const Tensor& b) { return a == b; })},
      {"ne", binary([](const Tensor& a, const Tensor& b) { return a != b; })},
      {"and", binary([](const Tensor& a, const Tensor& b) { return a & b; })},
      {"or", binary([](const Tensor& a, const Tensor& b) { return a | b; })},
      {"xor", binary([](const Tensor& a, const Tensor& b) { return a ^ b; })},
      {"shl", binary([](const Tensor& a, const Tensor& b) { return a << b; })},
      {"shr", binary([](const Tensor& a, const Tensor& b) { return a >> b; })},
      {"neg", unary([](const Tensor& a) { return -a; })},
      {"exp2", unary([](const Tensor& a) { return a.exp2(); })},
      {"log2", unary([](const Tensor& a) { return a.log2(); })},
      {"sin", unary([](const Tensor& a) { return a.sin(); })},
      {"sqrt", unary([](const Tensor& a) { return a.sqrt(); })},
      {"reciprocal", unary([](const Tensor& a) { return a.reciprocal(); })},
      {"logical_not", unary([](const Tensor& a) { return !a; })},
      {"cast", [](const std::vector<Tensor>& in, const Args&, const std::string& v) { return in[0].cast(dst_dtype(v)); }},
      {"bitcast", [](const std::vector<Tensor>& in, const Args&, const std::string& v) { return in[0].bitcast(dst_dtype(v)); }},
      {"where", [](const std::vector<Tensor>& in, const Args&, const std::string&) { return in[0].where(in[1], in[2]); }},
      {"sum", [](const std::vector<Tensor>& in, const Args& a, const std::string&) {
         return a.size() == 1 ? in[0].sum() : in[0].sum(ints(a, 1), a[0] != 0);
       }},
      {"max", [](const std::vector<Tensor>& in, const Args& a, const std::string&) {
         return a.size() == 1 ? in[0].max() : in[0].max(ints(a, 1), a[0] != 0);
       }},
      {"reshape", [](const std::vector<Tensor>& in, const Args& a, const std::string&) { return in[0].reshape(ints(a)); }},
      {"permute", [](const std::vector<Tensor>& in, const Args& a, const std::string&) { return in[0].permute(ints(a)); }},
      {"expand", [](const std::vector<Tensor>& in, const Args& a, const std::string&) { return in[0].expand(ints(a)); }},
      {"pad", [](const std::vector<Tensor>& in, const Args& a, const std::string&) {
         return in[0].pad(pairs(a, a.size() - 1), a.back());
       }},
      {"shrink", [](const std::vector<Tensor>& in, const Args& a, const std::string&) { return in[0].shrink(pairs(a, a.size())); }},
      {"flip", [](const std::vector<Tensor>& in, const Args& a, const std::string&) { return in[0].flip(ints(a)); }},
      // composed from the primitives: they check fusion gives the right numbers
      {"matmul", binary([](const Tensor& a, const Tensor& b) {
         int64_t n = a.shape()[0], k = a.shape()[1], m = b.shape()[1];
         return (a.reshape({n, 1, k}) * b.permute({1, 0}).reshape({1, m, k})).sum(2);
       })},
      {"softmax", unary([](const Tensor& x) {
         Tensor e = ((x - x.max(1, true)) * (1 / std::log(2.0))).exp2();
         return e / e.sum(1, true);
       })},
      {"chain", binary([](const Tensor& a, const Tensor& b) { return ((a.exp2() + b * 2.0) + 1.0).sqrt(); })},
  };
  return t;
}

// tinygrad's test_ops tolerances; 16-bit floats are one rounding of their own away
std::pair<double, double> tolerance(DType dt) {
  if (dt == dtypes::float16) return {1e-3, 2e-3};
  if (dt == dtypes::bfloat16) return {1e-2, 1e-2};
  return {1e-6, 1e-3};
}

class Primitive : public ::testing::TestWithParam<std::string> {};

TEST_P(Primitive, MatchesPyTorch) {
  const std::string& op = GetParam();
  const auto& cases = tg::testing::golden_cases().at(op);
  ASSERT_TRUE(op_table().count(op)) << "no C++ binding for golden op " << op;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(op + " " + c.variant);
    std::vector<Tensor> in;
    for (const auto& g : c.inputs) in.push_back(g.make());
    Tensor out = op_table().at(op)(in, c.args, c.variant);
    auto [atol, rtol] = tolerance(c.output.dtype);
    EXPECT_EQ(tg::testing::compare(out, c.output, atol, rtol), "");
  }
}

std::vector<std::string> golden_ops() {
  std::vector<std::string> ops;
  for (const auto& [name, cases] : tg::testing::golden_cases()) ops.push_back(name);
  return ops;
}

INSTANTIATE_TEST_SUITE_P(Golden, Primitive, ::testing::ValuesIn(golden_ops()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Primitive, EveryBindingHasGoldens) {
  for (const auto& [op, fn] : op_table()) EXPECT_TRUE(tg::testing::golden_cases().count(op)) << op;
}

}  // namespace
