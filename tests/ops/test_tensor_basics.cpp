// The Tensor handle: creation, dtypes of literals, properties, laziness, reading, printing, devices, random numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <tg/tg.h>

#include "runtime/device.h"
#include "support/golden.h"

using namespace tg;

namespace {
// programs looked up through the compiler caches so far (a kernel already loaded skips them)
int64_t runtime_compiles() {
  const runtime::CompileStats& s = runtime::compile_stats();
  return s.compiled + s.disk_hits + s.memory_hits;
}
}  // namespace

TEST(TensorBasics, NestedListsGiveShapeAndTinygradsDefaultDtypes) {
  Tensor a({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.dtype(), dtypes::int32);
  EXPECT_EQ(Tensor({1.0, 2.5}).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor({true, false}).dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor({{1.0, 2}, {3, 4}}).dtype(), dtypes::float32);  // any float makes it float
  EXPECT_EQ(Tensor({2}).shape(), (Shape{1}));                      // a list, not a scalar
  EXPECT_EQ(Tensor({{{1}, {2}}}).shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(Tensor({1, 2}, dtypes::float16).dtype(), dtypes::float16);
  EXPECT_EQ(a.to_vector<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(a.ndim(), 2);
  EXPECT_EQ(a.nbytes(), 24);
  EXPECT_EQ(a.device(), "CPU");
}

TEST(TensorBasics, ScalarsAreZeroDimensional) {
  Tensor s(2.5f);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.dtype(), dtypes::float32);
  EXPECT_EQ(Tensor(3).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor(int64_t{3}).dtype(), dtypes::int64);
  EXPECT_EQ(Tensor(true).dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor(2.0).dtype(), dtypes::float32);  // a double literal is a Python float: float32
  EXPECT_EQ(s.item<float>(), 2.5f);
  EXPECT_EQ((s * 2).item<double>(), 5.0);
}

TEST(TensorBasics, HostVectorsKeepTheirElementType) {
  std::vector<double> d{1, 2, 3, 4};
  Tensor t(d, {2, 2});
  EXPECT_EQ(t.dtype(), dtypes::float64);
  EXPECT_EQ(Tensor(std::vector<uint8_t>{1, 2}, {2}).dtype(), dtypes::uint8);
  Tensor b(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  std::vector<int16_t> raw{5, 6};
  EXPECT_EQ(Tensor(std::span<const int16_t>(raw), {2}).to_vector<int16_t>(), raw);
}

TEST(TensorBasics, CreationHelpers) {
  EXPECT_EQ(Tensor::zeros({2, 2}).to_vector<float>(), std::vector<float>(4, 0));
  EXPECT_EQ(Tensor::ones({3}, dtypes::int8).to_vector<int>(), std::vector<int>(3, 1));
  EXPECT_EQ(Tensor::full({2}, 7.5).to_vector<float>(), std::vector<float>(2, 7.5f));
  EXPECT_EQ(Tensor::arange(5).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Tensor::arange(1, 2, 0.25).to_vector<float>(), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(Tensor::arange(10, 0, -3).to_vector<int>(), (std::vector<int>{10, 7, 4, 1}));
  EXPECT_EQ(Tensor::arange(3, 3).numel(), 0);
  Tensor e = Tensor::empty({2, 3}, dtypes::int64);
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_TRUE(e.is_realized());  // a buffer, contents unspecified
  EXPECT_EQ(Tensor::zeros({0, 4}).to_vector<float>().size(), 0u);
}

TEST(TensorBasics, NothingRunsUntilAResultIsNeeded) {
  int64_t before = GlobalCounters::kernel_count;
  Tensor a = Tensor::arange(6).reshape({2, 3}) * 2 + 1;
  Tensor b = a.sum(1);
  EXPECT_EQ(GlobalCounters::kernel_count, before);
  EXPECT_FALSE(b.is_realized());
  EXPECT_EQ(b.to_vector<int>(), (std::vector<int>{9, 27}));
  EXPECT_GT(GlobalCounters::kernel_count, before);
  EXPECT_GT(GlobalCounters::global_ops, 0);
  EXPECT_GT(GlobalCounters::global_mem, 0);
}

TEST(TensorBasics, CopiesShareTheTensor) {
  Tensor a = Tensor::arange(4) + 1;
  Tensor b = a;
  b.realize();
  EXPECT_TRUE(a.is_realized());
}

TEST(TensorBasics, PrintsAsNumpy) {
  std::ifstream in(std::string(TG_GOLDEN_DIR) + "/print.txt");
  ASSERT_TRUE(in);
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.rfind("in ", 0) != 0) continue;
    std::istringstream is(line.substr(3));
    std::string dt;
    size_t ndim;
    is >> dt >> ndim;
    Shape shape(ndim);
    for (auto& d : shape) is >> d;
    std::string colon, v;
    is >> colon;
    std::vector<double> vals;
    while (is >> v) vals.push_back(std::strtod(v.c_str(), nullptr));
    std::getline(in, line);
    int n = std::stoi(line.substr(7));
    std::string want;
    for (int i = 0; i < n; i++) std::getline(in, line), want += (i ? "\n" : "") + line;
    Tensor t = Tensor(vals, shape).cast(tg::testing::dtype_from_name(dt));
    std::ostringstream os;
    os << t;
    EXPECT_EQ(os.str(), want);
    cases++;
  }
  EXPECT_GE(cases, 10);
}

TEST(TensorBasics, RandIsUniformReproducibleAndFreshPerCall) {
  Tensor::manual_seed(1234);
  std::vector<float> a = Tensor::rand({1000}).to_vector<float>();
  std::vector<float> b = Tensor::rand({1000}).to_vector<float>();
  Tensor::manual_seed(1234);
  EXPECT_EQ(Tensor::rand({1000}).to_vector<float>(), a);
  EXPECT_NE(a, b);
  double mean = 0;
  for (float x : a) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    mean += x / a.size();
  }
  EXPECT_NEAR(mean, 0.5, 0.05);  // the mean of 1000 uniforms: sd 0.009
  EXPECT_EQ(std::set<float>(a.begin(), a.end()).size(), a.size());
  for (float x : Tensor::rand({4096}, dtypes::float16).to_vector<float>()) ASSERT_LT(x, 1.0f);
  // every call reuses one compiled kernel: the key is read from a buffer
  int64_t before = runtime_compiles();
  Tensor::rand({1000}).realize();
  EXPECT_EQ(runtime_compiles(), before);
}

TEST(TensorBasics, CopyToAnotherDevice) {
  Tensor a = Tensor::arange(6).reshape({2, 3}).cast(dtypes::float32);
  Tensor b = (a * 2).to("CPU:1");
  EXPECT_EQ(b.device(), "CPU:1");
  int64_t copies = GlobalCounters::copy_count;
  Tensor c = b + 1;  // computed on CPU:1
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(GlobalCounters::copy_count, copies + 1);
  EXPECT_EQ(a.to("cpu").device(), "CPU");
}

TEST(TensorBasics, SixteenBitFloatsRoundLikeTheirFormat) {
  // float16: 1 + 2^-11 is not representable and rounds to even (1.0); 65520 overflows to inf
  Tensor h = Tensor({1.0f, 65504.0f}).cast(dtypes::float16) + Tensor({0.00048828125f, 16.0f}).cast(dtypes::float16);
  std::vector<float> v = h.to_vector<float>();
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_TRUE(std::isinf(v[1]));
  // bfloat16 keeps float32's range with 8 bits of precision
  EXPECT_EQ(Tensor({1.0f / 3}).cast(dtypes::bfloat16).to_vector<float>()[0], 0.333984375f);
}

TEST(TensorBasics, DefaultDeviceFromDevOrDeviceDEFAULT) {
  EXPECT_EQ(Device::default_device(), "CPU");
  {
    Context ctx{{"DEV", "cpu:2"}};
    EXPECT_EQ(Tensor::ones({2}).device(), "CPU:2");
  }
  Device::DEFAULT = "CLANG:3";
  EXPECT_EQ(Tensor({1, 2}).device(), "CPU:3");
  Device::DEFAULT = "";
  EXPECT_EQ(Tensor(1.0f).device(), "CPU");
  EXPECT_EQ(Device::canonicalize("clang"), "CPU");
  EXPECT_THROW(Device::canonicalize("CPU:x"), DeviceError);
}

TEST(TensorBasics, PropertiesAsPyTorch) {
  Tensor x = Tensor::zeros({2, 3, 4}, dtypes::float16);
  EXPECT_EQ(x.ndim(), 3);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.element_size(), 2);
  EXPECT_EQ(x.nbytes(), 48);
  EXPECT_EQ(Tensor(1.5f).ndim(), 0);
  EXPECT_EQ(Tensor(1.5f).numel(), 1);
  EXPECT_EQ(Tensor::empty({0, 5}).numel(), 0);
}

TEST(TensorBasics, SetitemChangesEveryHandleAndViewButNotEarlierResults) {
  Tensor x = Tensor::arange(6).reshape({2, 3}).contiguous().realize();
  Tensor same = x, row = x[0], doubled = x[0] * 2;
  x.setitem({Slice(), 1}, Tensor({10, 20}));
  EXPECT_EQ(same.to_vector<int32_t>(), (std::vector<int32_t>{0, 10, 2, 3, 20, 5}));
  // a view of x's buffer sees the new values (PyTorch's aliasing, tinygrad's too); a tensor computed from x before
  // the assignment keeps the old ones
  EXPECT_EQ(row.to_vector<int32_t>(), (std::vector<int32_t>{0, 10, 2}));
  EXPECT_EQ(doubled.to_vector<int32_t>(), (std::vector<int32_t>{0, 2, 4}));
  // the value may read the tensor itself
  x.assign(x * 2);
  EXPECT_EQ(x.to_vector<int32_t>(), (std::vector<int32_t>{0, 20, 4, 6, 40, 10}));
  x.setitem({1, Slice({}, {}, -2)}, 7.9);  // cast to the tensor's dtype
  EXPECT_EQ(x.to_vector<int32_t>(), (std::vector<int32_t>{0, 20, 4, 7, 40, 7}));
}

TEST(TensorBasics, SetitemWithTensorIndicesKeepsTheLastWrite) {
  // x[rows, 1:4] = v over a (4, 5) tensor, rows with a repeat: the reference is the same assignment as loops
  std::vector<int32_t> rows = {2, 0, 2}, ref(20);
  for (int i = 0; i < 20; i++) ref[i] = i;
  std::vector<int32_t> v(9);
  for (int i = 0; i < 9; i++) v[i] = 100 + i;
  for (size_t r = 0; r < rows.size(); r++)
    for (int c = 1; c < 4; c++) ref[rows[r] * 5 + c] = v[r * 3 + (c - 1)];
  Tensor x = Tensor::arange(20).reshape({4, 5}).contiguous().realize();
  x.setitem({Tensor(rows, {3}), Slice(1, 4)}, Tensor(v, {3, 3}));
  EXPECT_EQ(x.to_vector<int32_t>(), ref);
  // a bool mask: a scalar where it is true, and one value row per true row
  Tensor y = Tensor::arange(6).reshape({3, 2}).contiguous().realize();
  y.setitem({y > 2}, -1.0);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, -1, -1, -1}));
  y.setitem({Tensor(std::vector<bool>{true, false, true}, {3})}, Tensor({7, 8, 9, 10}).reshape({2, 2}));
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{7, 8, 2, -1, 9, 10}));
}

TEST(TensorBasics, IntegerDivisionByZeroGivesZeroInsteadOfTrapping) {
  Tensor a = Tensor({7, -7, INT32_MIN, 5}), b = Tensor({0, 0, -1, -1});
  EXPECT_EQ(a.idiv(b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, INT32_MIN, -5}));
  EXPECT_EQ((a % b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
}
