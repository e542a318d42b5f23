// Arguments at the edges of what an op defines, with PyTorch's answers: shift counts outside [0, bits) (C leaves
// them undefined: the kernels used to return what the register held), values that do not fit full()'s dtype,
// and random ranges that are not ranges.
#include <gtest/gtest.h>

#include <cmath>

#include <tg/tg.h>

using namespace tg;

namespace {

// PyTorch's rule (aten's lshift/rshift kernels; checked against python3-torch 1.13): a count < 0 or >= bits gives
// 0 for << and for >> of unsigned x, x >> (bits - 1) for >> of signed x (the sign fill); << shifts the unsigned bits
template <class T> T torch_lshift(T a, int64_t b) {
  constexpr int64_t bits = 8 * sizeof(T);
  if (b < 0 || b >= bits) return 0;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
}
template <class T> T torch_rshift(T a, int64_t b) {
  constexpr int64_t bits = 8 * sizeof(T);
  if ((b < 0 || b >= bits) && !std::is_signed_v<T>) return 0;
  return static_cast<T>(a >> ((b < 0 || b >= bits) ? bits - 1 : b));
}

template <class T> void check_shifts() {
  constexpr int64_t bits = 8 * sizeof(T);
  std::vector<T> xs = {T(1), T(5), T(-1), T(-8), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  std::vector<int64_t> counts = {-1, 0, 3, bits - 1, bits, bits + 5, -bits};
  Tensor x(xs, {int64_t(xs.size()), 1});
  for (int64_t c : counts) {
    SCOPED_TRACE("count " + std::to_string(c) + ", " + std::to_string(bits) + " bits");
    if (!std::is_signed_v<T> && c < 0) continue;
    std::vector<T> l = (x << Tensor(c, dtype_of<T>())).flatten().template to_vector<T>();
    std::vector<T> r = (x >> Tensor(c, dtype_of<T>())).flatten().template to_vector<T>();
    for (size_t i = 0; i < xs.size(); i++) {
      EXPECT_EQ(l[i], torch_lshift(xs[i], c)) << "x = " << int64_t(xs[i]);
      EXPECT_EQ(r[i], torch_rshift(xs[i], c)) << "x = " << int64_t(xs[i]);
    }
  }
  // counts from a tensor, so nothing folds: the guards run in the kernel
  std::vector<T> cs;
  for (int64_t c : counts)
    if (std::is_signed_v<T> || c >= 0) cs.push_back(static_cast<T>(c));
  Tensor ct(cs, {1, int64_t(cs.size())});
  std::vector<T> l = (x << ct).flatten().template to_vector<T>(), r = (x >> ct).flatten().template to_vector<T>();
  for (size_t i = 0; i < xs.size(); i++)
    for (size_t j = 0; j < cs.size(); j++) {
      EXPECT_EQ(l[i * cs.size() + j], torch_lshift(xs[i], int64_t(cs[j]))) << int64_t(xs[i]) << " << " << int64_t(cs[j]);
      EXPECT_EQ(r[i * cs.size() + j], torch_rshift(xs[i], int64_t(cs[j]))) << int64_t(xs[i]) << " >> " << int64_t(cs[j]);
    }
}

TEST(EdgeArgs, ShiftsOutsideTheWidthFollowPyTorch) {
  check_shifts<int8_t>();
  check_shifts<int32_t>();
  check_shifts<int64_t>();
  check_shifts<uint8_t>();
  check_shifts<uint32_t>();
  check_shifts<uint64_t>();
}

TEST(EdgeArgs, FullRefusesValuesItsDtypeCannotHold) {
  EXPECT_THROW(Tensor::full({2}, 300, dtypes::uint8), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, -1, dtypes::uint32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, NAN, dtypes::int32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, INFINITY, dtypes::int64), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, 9223372036854775808.0, dtypes::int64), ArgumentError);
  EXPECT_THROW(Tensor::ones({3}, dtypes::int8).full_like(128), ArgumentError);
  // what fits is kept, truncated toward zero as PyTorch does
  EXPECT_EQ(Tensor::full({2}, 255, dtypes::uint8).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 255}));
  EXPECT_EQ(Tensor::full({1}, -128.9, dtypes::int8).to_vector<int8_t>(), (std::vector<int8_t>{-128}));
  EXPECT_EQ(Tensor::full({1}, -9223372036854775808.0, dtypes::int64).item<int64_t>(), INT64_MIN);
  EXPECT_EQ(Tensor::full({2}, 5, dtypes::bool_).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_TRUE(std::isnan(Tensor::full({1}, NAN, dtypes::float16).item<float>()));
}

TEST(EdgeArgs, RandomRangesAreChecked) {
  EXPECT_THROW(Tensor::normal({3}, 0, -1), ArgumentError);
  EXPECT_THROW(Tensor::normal({3}, 0, NAN), ArgumentError);
  EXPECT_THROW(Tensor::uniform({3}, 1, 0), ArgumentError);
  EXPECT_THROW(Tensor::uniform({3}, 0, INFINITY), ArgumentError);
  EXPECT_THROW(Tensor::uniform({3}, NAN, 1), ArgumentError);
  EXPECT_EQ(Tensor::uniform({0}, 1, 0).numel(), 0);                  // nothing to draw
  EXPECT_EQ(Tensor::kaiming_uniform({4, 0}).shape(), (Shape{4, 0}));  // an empty weight's bound is infinite
  std::vector<float> v = Tensor::uniform({100}, 2, 2).to_vector<float>();
  for (float f : v) EXPECT_EQ(f, 2.0f);  // low == high is a range of one value
}

}  // namespace
