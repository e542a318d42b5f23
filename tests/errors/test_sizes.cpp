// Sizes at the edge of int64: a shape whose element count (or byte size) does not fit is a tg::ArgumentError naming
// the op, the shape and the user's line, raised before anything is allocated or computed; an allocation the device
// cannot satisfy is a tg::DeviceError; empty tensors with huge other dimensions are legal and work.
#include <gtest/gtest.h>

#include <sstream>

#include <tg/tg.h>

#include "support/expect_error.h"

using namespace tg;

namespace {

template <class E, class F>
void expect_error(F f, const std::string& op, const std::vector<std::string>& parts, unsigned line) {
  tg::testing::expect_error<E>(f, op, parts, "test_sizes.cpp", line);
}

constexpr int64_t k21 = int64_t{1} << 21, k31 = int64_t{1} << 31, k62 = int64_t{1} << 62;

}  // namespace

TEST(Sizes, CreationPastTheElementLimitRaises) {
  unsigned line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::zeros({k62}); }, "zeros", {"(4611686018427387904,)", "2^60"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::empty({INT64_MAX}); }, "empty", {"(9223372036854775807,)"}, line);
  line = __LINE__ + 1;  // the product wraps to 0 in int64: must not pass as an empty tensor
  expect_error<ArgumentError>([] { Tensor::ones({k21, k21, k21 * 2}); }, "ones", {"(2097152, 2097152, 4194304)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor(std::vector<float>(5), {k21, k21, k21 * 2}); }, "Tensor", {"(2097152, 2097152, 4194304)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::uniform({INT64_MAX, 2}); }, "uniform", {"(9223372036854775807, 2)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::scaled_uniform({k62, 4}); }, "scaled_uniform", {"(4611686018427387904, 4)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::kaiming_uniform({4, k62, k62}); }, "kaiming_uniform", {"2^60"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::eye(k31); }, "eye", {"(2147483648, 2147483648)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::arange(0, 1e300, 1); }, "arange", {"2^60", "1e+300"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::randperm(k31 + 1); }, "randperm", {"2147483649", "int32"}, line);
}

TEST(Sizes, MovementPastTheElementLimitRaises) {
  Tensor x = Tensor::ones({1, 1});
  unsigned line = __LINE__ + 1;
  expect_error<ArgumentError>([&] { x.expand({int64_t{1} << 40, int64_t{1} << 40}); }, "expand", {"(1099511627776, 1099511627776)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([&] { Tensor::ones({k31, 1}) + Tensor::ones({1, k31}); }, "add", {"(2147483648, 2147483648)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([&] { Tensor::ones({4}).reshape({k62, k62, 1}); }, "reshape", {"cannot reshape"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([&] { Tensor::ones({4}).pad({{INT64_MAX, 1}}); }, "pad", {"too large"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([&] { Tensor::ones({4}).pad({{INT64_MIN, 1}}); }, "pad", {"removes more"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([&] { Tensor::ones({k62 / 8}).pad({{k62 / 4, 0}}); }, "pad", {"2^60"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([&] { Tensor::ones({k31}).repeat({k31}); }, "repeat", {"2^60"}, line);
  line = __LINE__ + 1;  // found by the API fuzzer under UBSan: the (out, in) weights' size overflowed
  expect_error<ArgumentError>([&] { Tensor::ones({2, 3}).interpolate({INT64_MAX, 2}); }, "interpolate", {"2^60"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([&] { Tensor::ones({1, 3, 3}).adaptive_avg_pool2d({k62, 3}); }, "adaptive_avg_pool2d", {"2^60"}, line);
}

TEST(Sizes, EmptyTensorsWithHugeDimensionsWork) {
  Tensor e = Tensor::rand({int64_t{1} << 32, int64_t{1} << 32, 0});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  std::ostringstream printed;
  printed << Tensor::zeros({0, k62, k62}) << Tensor::zeros({k62, k62, 0});
  EXPECT_EQ(printed.str(), "[][]");
  Tensor z = Tensor::zeros({0, k62});
  EXPECT_EQ((z + 1).sum().item<float>(), 0.0f);
  EXPECT_EQ(z.reshape({k62, 0, 7}).shape(), (Shape{k62, 0, 7}));
  EXPECT_EQ(Tensor::empty({3, 0}).sum(1).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  unsigned line = __LINE__ + 1;  // but reducing the empty axis away leaves 2^62 values
  expect_error<ArgumentError>([] { Tensor::empty({k62, 0}).sum(1); }, "sum", {"(4611686018427387904, 1)"}, line);
}

TEST(Sizes, AnAllocationTheDeviceCannotMakeIsADeviceError) {
  // 2^57 float32 elements are a legal shape, 512 PiB of memory: the allocation fails, and says so
  Tensor huge = Tensor::zeros({int64_t{1} << 57}).contiguous();
  try {
    huge.realize();
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Tensor::ones({3}).sum().item<float>(), 3.0f);  // the device still works
}

// Legal but huge: a sum or max of a broadcast constant is known without a kernel (it looped 2^40 times)
TEST(Sizes, ReducingAHugeBroadcastConstantNeedsNoKernel) {
  int64_t n = int64_t{1} << 40;
  EXPECT_EQ(Tensor::ones({n}).sum().item<float>(), 1099511627776.0f);
  EXPECT_EQ(Tensor::full({n, 4}, 3, dtypes::int64).sum(0).to_vector<int64_t>(), std::vector<int64_t>(4, 3 * n));
  EXPECT_EQ(Tensor::full({n}, 2.5).max().item<float>(), 2.5f);
  EXPECT_EQ(Tensor::full({n}, 2.5).mean().item<float>(), 2.5f);
  // integers wrap as a kernel's adds would: 2^40 ones in int32 sum to 0 mod 2^32
  EXPECT_EQ(Tensor::ones({n}, dtypes::int32).sum().item<int32_t>(), 0);
  EXPECT_EQ(Tensor::ones({5}, dtypes::int8).sum().item<int32_t>(), 5);  // int8 sums in int32, as tinygrad
  EXPECT_EQ(Tensor::full({3, 7}, 1.5).cast(dtypes::int32).sum(1).to_vector<int32_t>(), (std::vector<int32_t>{7, 7, 7}));
}
