// One bad call per Tensor method: each raises the documented tg::Error, names the method and what was wrong, and
// points at the line of this file that made the call. Each row's call is on the row's own line (__LINE__).
#include <gtest/gtest.h>

#include <functional>

#include <tg/tg.h>

#include "support/expect_error.h"

using namespace tg;

namespace {

struct BadCall {
  const char* method;
  ErrorKind kind;
  unsigned line;
  std::function<void()> call;
  std::vector<std::string> parts;  // pieces the message must hold
};

// Lazy constants only: made before main, they must not open a device (DEV=OPENCL without a platform skips the
// suite in main's check; a buffer made here would throw first and abort the binary).
const Tensor x = Tensor::ones({2, 3});
const Tensor img = Tensor::ones({1, 2, 5, 5});
const Tensor ix = Tensor::arange(2);  // int32 {0, 1}
constexpr ErrorKind S = ErrorKind::Shape, D = ErrorKind::DType, A = ErrorKind::Argument;

const std::vector<BadCall>& bad_calls() {
  static const std::vector<BadCall> calls = {
      // creation
      {"eye", A, __LINE__, [] { Tensor::eye(-1); }, {"-1"}},
      {"linspace", A, __LINE__, [] { Tensor::linspace(0, 1, -2); }, {"-2"}},
      {"randn", D, __LINE__, [] { Tensor::randn({2}, dtypes::int32); }, {"int32"}},
      {"randint", A, __LINE__, [] { Tensor::randint({2}, 5, 5); }, {"low < high"}},
      {"randint", D, __LINE__, [] { Tensor::randint({2}, 0, 5, dtypes::float32); }, {"float32"}},
      {"normal", D, __LINE__, [] { Tensor::normal({2}, 0, 1, dtypes::bool_); }, {"bool"}},
      {"uniform", D, __LINE__, [] { Tensor::uniform({2}, 0, 1, dtypes::int8); }, {"int8"}},
      {"scaled_uniform", S, __LINE__, [] { Tensor::scaled_uniform({-2}); }, {"negative"}},
      {"glorot_uniform", S, __LINE__, [] { Tensor::glorot_uniform({3}); }, {"(3,)"}},
      {"kaiming_uniform", S, __LINE__, [] { Tensor::kaiming_uniform({3}); }, {"(3,)"}},
      {"kaiming_normal", S, __LINE__, [] { Tensor::kaiming_normal({}); }, {"()"}},
      {"randperm", A, __LINE__, [] { Tensor::randperm(-1); }, {"-1"}},
      {"rand", D, __LINE__, [] { x.rand_like(dtypes::int32); }, {"int32"}},
      {"randn", D, __LINE__, [] { x.randn_like(dtypes::uint8); }, {"uint8"}},
      {"empty", D, __LINE__, [] { x.empty_like(dtypes::void_); }, {"void"}},
      {"zeros_like", D, __LINE__, [] { x.zeros_like(dtypes::void_); }, {"void"}},
      {"ones_like", D, __LINE__, [] { x.ones_like(dtypes::void_); }, {"void"}},
      {"full_like", A, __LINE__, [] { ix.full_like(1e10); }, {"int32", "overflow"}},
      {"zeros", S, __LINE__, [] { Tensor::zeros({2, -1}); }, {"(2, -1)"}},
      {"ones", D, __LINE__, [] { Tensor::ones({2}, dtypes::void_); }, {"void"}},
      {"full", A, __LINE__, [] { Tensor::full({2}, 300, dtypes::uint8); }, {"300", "uint8"}},
      // elementwise
      {"minimum", S, __LINE__, [] { x.minimum(Tensor::ones({4})); }, {"(2, 3)", "(4,)"}},
      {"pow", S, __LINE__, [] { x.pow(Tensor::ones({4})); }, {"(2, 3)", "(4,)"}},
      {"pow", D, __LINE__, [] { Tensor({true}).pow(Tensor({false})); }, {"bool"}},
      {"le", S, __LINE__, [] { x.le(Tensor::ones({4})); }, {"(2, 3)", "(4,)"}},
      {"ge", S, __LINE__, [] { x.ge(Tensor::ones({4})); }, {"(2, 3)", "(4,)"}},
      {"eq", S, __LINE__, [] { x.eq(Tensor::ones({4})); }, {"(2, 3)", "(4,)"}},
      {"lerp", S, __LINE__, [] { x.lerp(Tensor::ones({4}), 0.5); }, {"(2, 3)", "(4,)"}},
      {"clip", A, __LINE__, [] { x.clip(std::nullopt, std::nullopt); }, {"min or a max"}},
      {"div", A, __LINE__, [] { x.div(x, "round"); }, {"round"}},
      {"mod", D, __LINE__, [] { Tensor({true}) % Tensor({true}); }, {"bool"}},
      {"bitwise_not", D, __LINE__, [] { x.bitwise_not(); }, {"float32"}},
      {"relu", D, __LINE__, [] { Tensor({true}).relu(); }, {"bool"}},
      {"relu6", D, __LINE__, [] { Tensor({true}).relu6(); }, {"bool"}},
      // reductions
      {"prod", A, __LINE__, [] { x.prod(2); }, {"axis 2"}},
      {"min", A, __LINE__, [] { Tensor::ones({0}).min(); }, {"empty"}},
      {"mean", A, __LINE__, [] { x.mean({0, 0}); }, {"twice"}},
      {"var", A, __LINE__, [] { x.var(-3); }, {"axis -3"}},
      {"std", A, __LINE__, [] { x.std(5); }, {"axis 5"}},
      {"var_mean", A, __LINE__, [] { x.var_mean(3); }, {"axis 3"}},
      {"std_mean", A, __LINE__, [] { x.std_mean(3); }, {"axis 3"}},
      {"any", A, __LINE__, [] { x.any(4); }, {"axis 4"}},
      {"all", A, __LINE__, [] { x.all(4); }, {"axis 4"}},
      {"count_nonzero", A, __LINE__, [] { x.count_nonzero(4); }, {"axis 4"}},
      {"argmax", A, __LINE__, [] { x.argmax(2); }, {"axis 2"}},
      {"argmax", A, __LINE__, [] { Tensor::ones({0, 2}).argmax(0); }, {"empty", "(0, 2)"}},
      {"argmin", A, __LINE__, [] { x.argmin(-3); }, {"axis -3"}},
      {"logsumexp", A, __LINE__, [] { x.logsumexp(2); }, {"axis 2"}},
      {"softmax", A, __LINE__, [] { x.softmax(2); }, {"axis 2"}},
      {"log_softmax", A, __LINE__, [] { x.log_softmax(-3); }, {"axis -3"}},
      {"cumsum", A, __LINE__, [] { x.cumsum(2); }, {"axis 2"}},
      {"cumprod", A, __LINE__, [] { x.cumprod(2); }, {"axis 2"}},
      {"cummax", A, __LINE__, [] { x.cummax(2); }, {"axis 2"}},
      {"logcumsumexp", A, __LINE__, [] { x.logcumsumexp(2); }, {"axis 2"}},
      // movement
      {"reshape", S, __LINE__, [] { x.view({4}); }, {"(2, 3)", "(4,)"}},
      {"transpose", A, __LINE__, [] { x.transpose(0, 2); }, {"axis 2"}},
      {"permute", S, __LINE__, [] { Tensor::ones({2, 3, 4}).T().permute({0}); }, {"(3, 2, 4)"}},
      {"flatten", A, __LINE__, [] { x.flatten(1, 0); }, {"start_dim 1", "end_dim 0"}},
      {"unflatten", S, __LINE__, [] { x.unflatten(1, {2, 2}); }, {"reshape", "(3,)", "(2, 2)"}},
      {"squeeze", A, __LINE__, [] { x.squeeze(2); }, {"axis 2"}},
      {"unsqueeze", A, __LINE__, [] { x.unsqueeze(4); }, {"axis 4"}},
      {"repeat", S, __LINE__, [] { x.repeat({2}); }, {"(2, 3)"}},
      {"repeat_interleave", A, __LINE__, [] { x.repeat_interleave(-1, 0); }, {"-1"}},
      {"cat", S, __LINE__, [] { Tensor::cat({x, Tensor::ones({2, 4})}, 0); }, {"(2, 3)", "(2, 4)"}},
      {"cat", A, __LINE__, [] { Tensor::cat({}); }, {"at least one"}},
      {"stack", S, __LINE__, [] { Tensor::stack({x, Tensor::ones({3, 2})}); }, {"(2, 3)", "(3, 2)"}},
      {"split", S, __LINE__, [] { x.split(std::vector<int64_t>{1, 1}, 1); }, {"add up to 2", "(2, 3)"}},
      {"split", A, __LINE__, [] { x.split(0); }, {"positive"}},
      {"split", A, __LINE__, [] { Tensor::empty({int64_t{1} << 32}).split(1); }, {"4294967296 tensors", "shrink"}},
      {"chunk", A, __LINE__, [] { Tensor::empty({int64_t{1} << 32}).chunk(int64_t{1} << 32); }, {"4294967296 tensors"}},
      {"chunk", A, __LINE__, [] { x.chunk(0); }, {"positive"}},
      {"roll", A, __LINE__, [] { x.roll({1, 2}, {0}); }, {"different lengths"}},
      {"meshgrid", A, __LINE__, [] { Tensor::meshgrid({ix, ix}, "ji"); }, {"ji"}},
      {"meshgrid", S, __LINE__, [] { Tensor::meshgrid({x}); }, {"(2, 3)"}},
      {"triu", S, __LINE__, [] { Tensor::ones({3}).triu(); }, {"(3,)"}},
      {"tril", S, __LINE__, [] { Tensor(1.0f).tril(); }, {"()"}},
      {"pad", S, __LINE__, [] { x.pad({{1, 1}}); }, {"(2, 3)"}},
      {"pad (reflect)", A, __LINE__, [] { x.pad({{0, 0}, {3, 0}}, PadMode::reflect); }, {"(3, 0)", "size 3"}},
      {"pad (circular)", A, __LINE__, [] { x.pad({{0, 0}, {4, 0}}, PadMode::circular); }, {"(4, 0)"}},
      {"pad (replicate)", A, __LINE__, [] { x.pad({{-2, -1}, {0, 0}}, PadMode::replicate); }, {"(-2, -1)", "removes more"}},
      {"pad (circular)", A, __LINE__, [] { Tensor::zeros({3, 2, 0}, dtypes::int8).pad({{0, -1}, {0, 3}, {2, INT64_MIN}}, PadMode::circular); }, {"removes more"}},
      {"pad", S, __LINE__, [] { x.pad({{INT64_MIN, 0}, {0, 0}}); }, {"removes more"}},
      {"unflatten", S, __LINE__, [] { x.unflatten(1, {}); }, {"at least one size", "(2, 3)"}},
      {"pad2d", S, __LINE__, [] { x.pad2d({1, 1, 1}); }, {"[1, 1, 1]"}},
      {"shrink", S, __LINE__, [] { x.shrink({{0, 3}, {0, 3}}); }, {"[0, 3)", "(2, 3)"}},
      {"flip", A, __LINE__, [] { x.flip(3); }, {"axis 3"}},
      // indexing
      {"getitem", A, __LINE__, [] { x[2]; }, {"index 2", "size 2", "(2, 3)"}},
      {"getitem", A, __LINE__, [] { x[{0, 0, 0}]; }, {"too many indices", "(2, 3)"}},
      {"getitem", A, __LINE__, [] { x[{ellipsis, ellipsis}]; }, {"single ellipsis"}},
      {"getitem", A, __LINE__, [] { x[{Slice(0, 2, 0)}]; }, {"step cannot be zero"}},
      {"getitem", D, __LINE__, [] { x[{Tensor({0.5f})}]; }, {"float32"}},
      {"getitem", S, __LINE__, [] { x[{Tensor({0, 1}), Tensor({0, 1, 2})}]; }, {"(2,)", "(3,)"}},
      {"setitem", S, __LINE__, [] { Tensor::ones({2, 3}).contiguous().realize().setitem({0}, Tensor::ones({2})); }, {"(2,)"}},
      {"setitem", S, __LINE__, [] { Tensor::ones({2}).contiguous().realize().setitem({ix}, Tensor::ones({3})); }, {"(3,)", "(2,)"}},
      {"assign", S, __LINE__, [] { Tensor::ones({2}).contiguous().realize().assign(x); }, {"(2, 3)", "(2,)"}},
      {"gather", S, __LINE__, [] { x.gather(1, Tensor({0, 1})); }, {"(2,)", "(2, 3)"}},
      {"gather", D, __LINE__, [] { x.gather(1, x); }, {"float32"}},
      {"gather", D, __LINE__, [] { x.gather(0, x > 0); }, {"bool"}},
      {"gather", D, __LINE__, [] { Tensor(1.0f).gather(0, Tensor(0.0f)); }, {"float32"}},
      {"scatter", S, __LINE__, [] { x.scatter(0, Tensor({{0, 1, 0}}), Tensor::ones({6})); }, {"src (6,)", "(2, 3)"}},
      {"scatter_reduce", S, __LINE__, [] { x.scatter_reduce(1, Tensor({{0}}), Tensor::ones({3}), "amax"); }, {"src (3,)"}},
      {"scatter", S, __LINE__, [] { x.scatter(0, Tensor({{0, 1, 0, 1}}), x); }, {"(1, 4)", "(2, 3)"}},
      {"scatter_reduce", A, __LINE__, [] { x.scatter_reduce(0, Tensor({{0}}), x, "median"); }, {"median"}},
      {"masked_fill", D, __LINE__, [] { x.masked_fill(x, 1.0); }, {"bool", "float32"}},
      {"masked_fill", S, __LINE__, [] { x.masked_fill(Tensor::ones({4}, dtypes::bool_), 1.0); }, {"(4,)", "(2, 3)"}},
      {"masked_select", D, __LINE__, [] { x.masked_select(ix); }, {"int32"}},
      {"one_hot", D, __LINE__, [] { x.one_hot(3); }, {"float32"}},
      {"one_hot", A, __LINE__, [] { ix.one_hot(-5); }, {"-5", "non-negative"}},
      {"one_hot", A, __LINE__, [] { ix.one_hot(int64_t{1} << 62); }, {"2^60 elements"}},
      {"sort", A, __LINE__, [] { x.sort(2); }, {"axis 2"}},
      {"argsort", A, __LINE__, [] { x.argsort(-3); }, {"axis -3"}},
      {"topk", A, __LINE__, [] { x.topk(4); }, {"k = 4", "size 3"}},
      // linear algebra and nn
      {"matmul", S, __LINE__, [] { x.matmul(x); }, {"(2, 3)", "inner sizes 3 and 2"}},
      {"matmul", S, __LINE__, [] { x.matmul(Tensor(1.0f)); }, {"1-d"}},
      {"matmul", D, __LINE__, [] { Tensor({true}).matmul(Tensor({true})); }, {"bool"}},
      {"dot", S, __LINE__, [] { x.dot(Tensor::ones({2})); }, {"(2, 3)", "(2,)"}},
      {"linear", S, __LINE__, [] { x.linear(Tensor::ones({4, 5})); }, {"(2, 3)", "(4, 5)"}},
      {"linear", S, __LINE__, [] { x.linear(Tensor::ones({3, 5}), Tensor::ones({4})); }, {"(2, 5)", "(4,)"}},
      {"einsum", S, __LINE__, [] { Tensor::einsum("ij,jk->ik", {x, x}); }, {"'j'", "sizes 3 and 2"}},
      {"einsum", A, __LINE__, [] { Tensor::einsum("ij->iz", {x}); }, {"'z'"}},
      {"einsum", A, __LINE__, [] { Tensor::einsum("ij,jk->ik", {x}); }, {"2 operands"}},
      {"conv2d", S, __LINE__, [] { img.conv2d(Tensor::ones({4, 3, 3, 3})); }, {"(1, 2, 5, 5)", "(4, 3, 3, 3)", "expects 3"}},
      {"conv2d", S, __LINE__, [] { img.conv2d(Tensor::ones({3, 1, 3, 3}), std::nullopt, 2); }, {"groups=2"}},
      {"conv2d", S, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 7, 7})); }, {"larger than the input"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, 0); }, {"stride"}},
      {"conv2d", S, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), Tensor::ones({3})); }, {"bias", "(3,)"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, {1, 1, 1}); }, {"stride", "1 or 2"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, std::vector<int64_t>{}); }, {"stride", "1 or 2"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, 1, std::vector<int64_t>{}); }, {"dilation"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, 1, {1, 1, 1}); }, {"dilation", "1 or 2"}},
      {"conv2d", S, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, 1, 1, int64_t{1} << 32); }, {"larger than any tensor"}},
      {"conv2d", A, __LINE__, [] { img.conv2d(Tensor::ones({4, 2, 3, 3}), std::nullopt, 1, 1, int64_t{1} << 62); }, {"dilation", "larger than any tensor"}},
      {"conv_transpose2d", S, __LINE__, [] { img.conv_transpose2d(Tensor::ones({3, 2, 3, 3})); }, {"expects 3"}},
      {"conv_transpose2d", A, __LINE__, [] { Tensor::ones({2, 2, 4, 1}).conv_transpose2d(Tensor::ones({2, 1, 3, 1}), std::nullopt, 1, 2, {int64_t{1} << 62, 1}, 0, 1); }, {"dilation", "larger than any tensor"}},
      {"conv_transpose2d", S, __LINE__, [] { Tensor::ones({2, 2, 4, 1}).conv_transpose2d(Tensor::ones({2, 1, 3, 1}), std::nullopt, 1, int64_t{1} << 59); }, {"larger than any tensor"}},
      {"conv_transpose2d", A, __LINE__, [] { img.conv_transpose2d(Tensor::ones({2, 2, 3, 3}), std::nullopt, 1, 2, 1, 0, 2); }, {"output_padding"}},
      {"avg_pool2d", S, __LINE__, [] { Tensor::ones({3}).avg_pool2d(); }, {"(3,)"}},
      {"avg_pool2d", S, __LINE__, [] { Tensor({3.0f}).avg_pool2d(4, 1); }, {"(1,)"}},
      {"avg_pool2d", A, __LINE__, [] { img.avg_pool2d(2, std::nullopt, 1, 2); }, {"half the window"}},
      {"max_pool2d", S, __LINE__, [] { img.max_pool2d(6); }, {"larger than the input"}},
      {"max_pool2d", A, __LINE__, [] { img.max_pool2d(0); }, {"kernel_size"}},
      {"adaptive_avg_pool2d", A, __LINE__, [] { img.adaptive_avg_pool2d(0); }, {"positive"}},
      {"interpolate", A, __LINE__, [] { img.interpolate({4, 4}, "cubic"); }, {"cubic"}},
      {"interpolate", S, __LINE__, [] { Tensor::ones({3}).interpolate({2, 2}); }, {"(3,)"}},
      {"dropout", A, __LINE__, [] { x.dropout(1.5); }, {"1.5"}},
      {"layernorm", A, __LINE__, [] { x.layernorm(2); }, {"axis 2"}},
      {"batchnorm", S, __LINE__, [] { img.batchnorm(std::nullopt, std::nullopt, Tensor::ones({3}), Tensor::ones({2})); }, {"mean", "(3,)"}},
      {"scaled_dot_product_attention", S, __LINE__, [] { x.scaled_dot_product_attention(Tensor::ones({2, 4}), x); }, {"(2, 3)", "(4, 2)"}},
      {"scaled_dot_product_attention", A, __LINE__, [] { x.scaled_dot_product_attention(x, x, x > 0, 0, true); }, {"not both"}},
      {"cross_entropy", S, __LINE__, [] { x.cross_entropy(Tensor({0, 1, 2})); }, {"(3,)", "(2, 3)"}},
      {"cross_entropy", A, __LINE__, [] { x.cross_entropy(ix, Reduction::mean, 2.0); }, {"label_smoothing"}},
      {"sparse_categorical_crossentropy", S, __LINE__, [] { x.sparse_categorical_crossentropy(Tensor({0, 1, 2})); }, {"(3,)", "(2, 3)"}},
      {"sparse_categorical_crossentropy", D, __LINE__, [] { x.sparse_categorical_crossentropy(Tensor({0.0f, 1.0f})); }, {"float32"}},
      {"binary_crossentropy", S, __LINE__, [] { x.binary_crossentropy(Tensor::ones({3})); }, {"(2, 3)", "(3,)"}},
      {"binary_crossentropy_logits", S, __LINE__, [] { x.binary_crossentropy_logits(Tensor::ones({3})); }, {"(3,)"}},
      {"nll_loss", S, __LINE__, [] { x.nll_loss(ix, Tensor::ones({2})); }, {"weight", "(2,)"}},
      {"mse", S, __LINE__, [] { x.mse(Tensor::ones({3, 2})); }, {"(3, 2)"}},
      {"l1", S, __LINE__, [] { x.l1(Tensor::ones({3, 2})); }, {"(3, 2)"}},
  };
  return calls;
}

TEST(ApiErrors, EveryBadCallNamesTheMethodTheProblemAndTheLine) {
  for (const BadCall& c : bad_calls()) {
    SCOPED_TRACE(std::string(c.method) + " (line " + std::to_string(c.line) + ")");
    try {
      c.call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind) << e.what();
      tg::testing::check_error(e, c.method, c.parts, "test_api_errors.cpp", c.line);
    }
  }
}

// Methods that take no arguments accept every tensor they can be called on (as PyTorch's do); the one bad call
// left is on an empty handle, which raises instead of crashing.
TEST(ApiErrors, MethodsOnAnEmptyHandleRaise) {
  Tensor none;
  std::vector<std::function<Tensor()>> calls = {
      [&] { return none.exp(); },     [&] { return none.log(); },     [&] { return none.sigmoid(); },
      [&] { return none.relu(); },    [&] { return none.floor(); },   [&] { return none.T(); },
      [&] { return none.softmax(); }, [&] { return none.flatten(); }, [&] { return none.isnan(); },
      [&] { return none.erf(); },     [&] { return none.gelu(); },    [&] { return none.square(); },
      [&] { return none.hardtanh(); },
  };
  for (auto& f : calls) EXPECT_THROW(f(), ArgumentError);
}

}  // namespace
