// Bad calls on Tensors raise a tg::Error of the right kind that names the op, the shapes, and the line of this file
// that made the bad call; nothing crashes and nothing is computed from bad input.
#include <gtest/gtest.h>

#include <tg/tg.h>

#include "support/expect_error.h"

using namespace tg;

namespace {

template <class E, class F>
void expect_error(F f, const std::string& op, const std::vector<std::string>& parts, unsigned line) {
  tg::testing::expect_error<E>(f, op, parts, "test_tensor_errors.cpp", line);
}

const Tensor a = Tensor::ones({2, 3});
const Tensor b = Tensor::ones({4});

}  // namespace

TEST(TensorErrors, BroadcastMismatchNamesShapesAndTheUsersLine) {
  unsigned line = __LINE__ + 1;
  expect_error<ShapeError>([] { auto c = a + b; }, "add", {"(2, 3)", "(4,)", "broadcast"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { auto c = a * 2 < b; }, "lt", {"(2, 3)", "(4,)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { auto c = a.where(b, 1.0f); }, "where", {"(2, 3)", "(4,)"}, line);
}

TEST(TensorErrors, InvalidAxes) {
  unsigned line = __LINE__ + 1;
  expect_error<ArgumentError>([] { a.sum(2); }, "sum", {"axis 2", "2 dimensions"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { a.max({-3}); }, "max", {"axis -3"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { a.sum({1, -1}); }, "sum", {"given twice"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::ones({0, 3}).max(0); }, "max", {"empty axis", "(0, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { a.flip({5}); }, "flip", {"axis 5"}, line);
}

TEST(TensorErrors, MovementOps) {
  unsigned line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.reshape({4, 2}); }, "reshape", {"(2, 3)", "(4, 2)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.reshape({-1, -1}); }, "reshape", {"only one dimension can be -1"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.permute({0, 0}); }, "permute", {"[0, 0]", "(2, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.expand({4, 3}); }, "expand", {"(2, 3)", "(4, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.pad({{0, 0}}); }, "pad", {"(2, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.pad({{0, 0}, {-2, -2}}); }, "pad", {"removes more"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { a.shrink({{0, 2}, {1, 4}}); }, "shrink", {"[1, 4)", "(2, 3)"}, line);
}

TEST(TensorErrors, DTypes) {
  unsigned line = __LINE__ + 1;
  expect_error<DTypeError>([] { a.bitcast(dtypes::float64); }, "bitcast", {"float32 (4 bytes)", "float64 (8 bytes)", "(2, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<DTypeError>([] { a.cast(dtypes::void_); }, "cast", {"not a value dtype"}, line);
  line = __LINE__ + 1;
  expect_error<DTypeError>([] { a.idiv(a); }, "idiv", {"float32"}, line);
  line = __LINE__ + 1;
  expect_error<DTypeError>([] { auto c = a & a; }, "bitwise_and", {"float32"}, line);
  line = __LINE__ + 1;
  expect_error<DTypeError>([] { auto c = -(a < 1); }, "neg", {"bool"}, line);
  line = __LINE__ + 1;
  expect_error<DTypeError>([] { Tensor::rand({2}, dtypes::int32); }, "rand", {"int32"}, line);
}

TEST(TensorErrors, CreationAndReading) {
  unsigned line = __LINE__ + 1;
  expect_error<ShapeError>([] { Tensor({{1, 2}, {3}}); }, "Tensor", {"ragged"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { Tensor(std::vector<float>{1, 2, 3}, {2, 2}); }, "Tensor", {"3 values", "(2, 2)"}, line);
  line = __LINE__ + 1;
  expect_error<ShapeError>([] { Tensor::zeros({2, -1}); }, "zeros", {"negative"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { a.item<float>(); }, "item", {"(2, 3)"}, line);
  line = __LINE__ + 1;
  expect_error<ArgumentError>([] { Tensor::arange(0, 5, 0); }, "arange", {"nonzero step"}, line);
  EXPECT_THROW(Tensor().shape(), ArgumentError);
  EXPECT_THROW(a.to("NOSUCHDEVICE"), DeviceError);
}

TEST(TensorErrors, DifferentDevices) {
  Tensor c = Tensor::ones({2, 3}, dtypes::float32, "CPU:1");
  unsigned line = __LINE__ + 1;
  expect_error<ArgumentError>([c] { auto d = a + c; }, "add", {"different devices", "CPU:1"}, line);
}

TEST(TensorErrors, AFailedCompileNamesTheTensorAndFailsAgainOnTheNextRead) {
  // a device whose compiler always fails (`false`), so nothing is cached
  Context ctx{{"CC", "false"}};
  Tensor x = Tensor({1.0f, 2.0f}, std::nullopt, "CPU:9");
  unsigned line = __LINE__ + 1;
  Tensor y = x * 3 + 1;
  for (int attempt = 0; attempt < 2; attempt++) {
    try {
      y.to_vector<float>();
      ADD_FAILURE() << "no error";
    } catch (const CompileError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("false failed"), std::string::npos) << what;
      EXPECT_NE(what.find("test_tensor_errors.cpp:" + std::to_string(line)), std::string::npos) << what;
    }
    EXPECT_FALSE(y.is_realized());
  }
}
