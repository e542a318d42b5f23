// Kernel ASTs built by hand, lowered, rendered, compiled and run on the default device (DEV: the CPU, or OpenCL in
// the ctest that runs the value suites there); results against plain C++ loops over the same data.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <span>

#include "engine/kernel_cache.h"
#include "engine/realize.h"
#include "runtime/buffer.h"
#include "shape/view_arg.h"
#include "uop/reduce_arg.h"
#include "tg/context.h"

using namespace tg;
using shape::ShapeTracker;
using uop::Ops;
using uop::UOp;

namespace {

UOp global(int64_t i, DType dt = dtypes::float32) { return UOp::make(Ops::DEFINE_GLOBAL, dt.ptr(), {}, uop::Arg(i)); }
UOp load(int64_t i, const ShapeTracker& st, DType dt = dtypes::float32) {
  return UOp::make(Ops::LOAD, dt, {global(i, dt), shape::view_uop(st)});
}
UOp store(const ShapeTracker& st, const UOp& v) {
  return UOp::make(Ops::STORE, dtypes::void_, {global(0, v.dtype()), shape::view_uop(st), v});
}
UOp reduce(const UOp& x, Ops op, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, uop::reduce_arg(op, std::move(axes)));
}

// Runs ast over buffers: bufs[0] is the output of out_size floats, the rest are the inputs.
std::vector<float> run(const UOp& ast, size_t out_size, const std::vector<std::vector<float>>& inputs) {
  runtime::Device& cpu = runtime::get_device(runtime::default_device());
  std::vector<std::unique_ptr<runtime::Buffer>> bufs;
  bufs.push_back(std::make_unique<runtime::Buffer>(cpu, out_size, dtypes::float32));
  for (const auto& in : inputs) {
    bufs.push_back(std::make_unique<runtime::Buffer>(cpu, in.size(), dtypes::float32));
    bufs.back()->copyin(in.data(), in.size() * 4);
  }
  auto k = engine::get_kernel(UOp::sink({ast}), cpu);
  std::vector<runtime::Buffer*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.get());
  engine::run_program(*k, ptrs);
  std::vector<float> out(out_size);
  bufs[0]->copyout(out.data(), out_size * 4);
  return out;
}

std::vector<float> iota(size_t n, float start = 1) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

}  // namespace

TEST(Kernels, ConstantsFoldIntoOneStore) {
  UOp ast = UOp::sink({store(ShapeTracker::from_shape({}), UOp::const_(dtypes::float32, 2.0) + UOp::const_(dtypes::float32, 3.0))});
  auto k = engine::get_kernel(ast, runtime::get_device("CPU"));
  EXPECT_NE(k->rendered.source.find("data0[0] = 5.0f;"), std::string::npos) << k->rendered.source;
  EXPECT_EQ(k->n_buffers, 1u);
  EXPECT_EQ(run(store(ShapeTracker::from_shape({}), UOp::const_(dtypes::float32, 2.0) + UOp::const_(dtypes::float32, 3.0)), 1, {}),
            std::vector<float>{5});
}

TEST(Kernels, ElementwiseThroughAPermutedView) {
  // out(3, 4) = a(4, 3).T + b(3, 4)
  ShapeTracker out = ShapeTracker::from_shape({3, 4});
  UOp ast = store(out, load(1, ShapeTracker::from_shape({4, 3}).permute({1, 0})) + load(2, out));
  std::vector<float> a = iota(12), b = iota(12, 100);
  std::vector<float> want(12);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) want[i * 4 + j] = a[j * 3 + i] + b[i * 4 + j];
  EXPECT_EQ(run(ast, 12, {a, b}), want);
}

TEST(Kernels, PaddingReadsZeros) {
  // out(7,) = pad(a(3,), (1, 3)) * 2
  ShapeTracker padded = ShapeTracker::from_shape({3}).pad({{1, 3}});
  UOp ast = store(ShapeTracker::from_shape({7}), load(1, padded) * UOp::const_(dtypes::float32, 2.0));
  EXPECT_EQ(run(ast, 7, {{1, 2, 3}}), (std::vector<float>{0, 2, 4, 6, 0, 0, 0}));
}

TEST(Kernels, SumAndMaxOverAnAxis) {
  // (3, 4) -> (3, 1)
  ShapeTracker in = ShapeTracker::from_shape({3, 4}), out = ShapeTracker::from_shape({3, 1});
  std::vector<float> a = {1, -2, 3, 4, 5, 6, -7, 8, 9, 10, 11, -12};
  EXPECT_EQ(run(store(out, reduce(load(1, in), Ops::ADD, {1})), 3, {a}), (std::vector<float>{6, 12, 18}));
  EXPECT_EQ(run(store(out, reduce(load(1, in), Ops::MAX, {1})), 3, {a}), (std::vector<float>{4, 8, 11}));
  // elementwise after the reduce, in the same kernel: sum * 2 + 1
  UOp post = reduce(load(1, in), Ops::ADD, {1}) * UOp::const_(dtypes::float32, 2.0) + UOp::const_(dtypes::float32, 1.0);
  EXPECT_EQ(run(store(out, post), 3, {a}), (std::vector<float>{13, 25, 37}));
}

// seed 001's matmul: (a.reshape(N,1,N) * b.permute(1,0).reshape(1,N,N)).sum(2), one kernel
TEST(Kernels, MatmulIsOneReduceKernel) {
  const int N = 5;
  ShapeTracker sa = ShapeTracker::from_shape({N, N}).reshape({N, 1, N}).expand({N, N, N});
  ShapeTracker sb = ShapeTracker::from_shape({N, N}).permute({1, 0}).reshape({1, N, N}).expand({N, N, N});
  UOp ast = store(ShapeTracker::from_shape({N, N, 1}), reduce(load(1, sa) * load(2, sb), Ops::ADD, {2}));
  std::vector<float> a = iota(N * N), b = iota(N * N, -7), want(N * N, 0);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) want[i * N + j] += a[i * N + k] * b[k * N + j];
  EXPECT_EQ(run(ast, N * N, {a, b}), want);
  // (random opts may pad an axis, which the name shows: which one depends on the kernel's hash)
  if (getenv_int("RANDOM_OPTS") == 0) {
    EXPECT_EQ(engine::get_kernel(UOp::sink({ast}), runtime::get_device(runtime::default_device()))->name, "r_5_5_5");
  }
}

TEST(Kernels, IntegerDivisionByZeroDoesNotTrap) {
  runtime::Device& cpu = runtime::get_device(runtime::default_device());
  ShapeTracker st = ShapeTracker::from_shape({4});
  UOp ast = UOp::sink({store(st, load(1, st, dtypes::int32) / load(2, st, dtypes::int32))});
  runtime::Buffer out(cpu, 4, dtypes::int32), a(cpu, 4, dtypes::int32), b(cpu, 4, dtypes::int32);
  int32_t av[] = {7, -7, INT32_MIN, 9}, bv[] = {2, 0, -1, -3}, got[4];
  a.copyin(av, 16), b.copyin(bv, 16);
  engine::run_program(*engine::get_kernel(ast, cpu), {&out, &a, &b});
  out.copyout(got, 16);
  EXPECT_EQ(got[0], 3);
  EXPECT_EQ(got[1], 0);
  EXPECT_EQ(got[2], INT32_MIN);  // wraps, as int32 arithmetic does
  EXPECT_EQ(got[3], -3);
}

// 8-bit floats: stored as their bytes, computed in float32 and rounded to the format after every op, as the host's
// conversion (tg::double_to_fp8_bits, checked against the formats' definition in DType.Fp8*) rounds. Four kernels
// per format: PoCL compiles each for seconds. (Not in the Kernels suite, which runs again under every opts mode.)
TEST(Fp8, StoresAndArithmeticRoundAsTheHost) {
  std::vector<float> xs{0.f, -0.f, 0.3f, -1.7f, 3.14159f, 100.f, 448.f, 470.f, 1e6f, -1e6f, 1e-3f, -2e-5f, 57344.f,
                        61440.f, INFINITY, -INFINITY, NAN, 0.0625f, 5.5f, -240.f};
  std::vector<float> ys{1.f, 2.5f, -0.3f, -1.7f, 0.01f, 30.f, 16.f, -470.f, 2.f, 1e-6f, 7.f, 0.5f, 1.f,
                        -3.f, 1.f, 2.f, 1.f, 0.0625f, -5.5f, 1.1f};
  const int64_t n = static_cast<int64_t>(xs.size());
  auto same = [](float got, float want) { return std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want); };
  auto same_value = [](float got, float want) { return std::isnan(want) ? std::isnan(got) : got == want; };
  Tensor x(std::span<const float>(xs), {n}), y(std::span<const float>(ys), {n});
  Tensor codes = Tensor::arange(0, 256, 1, dtypes::int32).cast(dtypes::uint8);
  for (DType dt : {dtypes::fp8e4m3, dtypes::fp8e5m2, dtypes::fp8e4m3fnuz, dtypes::fp8e5m2fnuz}) {
    auto q = [&](double v) { return fp8_bits_to_float(double_to_fp8_bits(v, dt), dt); };
    Tensor qx = x.cast(dt), qy = y.cast(dt);
    // one kernel: the codes of x, and the sum, product and maximum of each pair. A stack adds its padded parts, so a
    // -0 comes out as 0 in the last three.
    std::vector<float> all = Tensor::stack({qx.bitcast(dtypes::uint8).cast(dtypes::float32), (qx + qy).cast(dtypes::float32),
                                            (qx * qy).cast(dtypes::float32), qx.maximum(qy).cast(dtypes::float32)}).to_vector<float>();
    for (int64_t i = 0; i < n; i++) {
      float a = q(xs[i]), b = q(ys[i]), sum = all[n + i], prod = all[2 * n + i], big = all[3 * n + i];
      EXPECT_TRUE(same(fp8_bits_to_float(static_cast<uint8_t>(all[i]), dt), a)) << dt.name() << " of " << xs[i];
      EXPECT_TRUE(same_value(sum, q(static_cast<double>(a) + b))) << dt.name() << ": " << a << " + " << b << " gave " << sum;
      EXPECT_TRUE(same_value(prod, q(static_cast<double>(a) * b))) << dt.name() << ": " << a << " * " << b << " gave " << prod;
      if (!std::isnan(a) && !std::isnan(b)) {
        EXPECT_EQ(big, std::max(a, b)) << dt.name();
      }
    }
    // a sum accumulates in float32 and rounds once; a max starts from the lowest value the format has (not -inf,
    // which E4M3 and FNUZ store as NaN)
    Tensor steps = Tensor::arange(1, 17, 1, dtypes::float32).mul(0.25f).cast(dt);
    EXPECT_EQ(steps.sum().dtype(), dt);
    EXPECT_EQ(steps.sum().cast(dtypes::float32).item<float>(), q(34.0)) << dt.name();
    EXPECT_EQ(Tensor::stack({steps, -steps}).max(1).cast(dtypes::float32).to_vector<float>(), (std::vector<float>{q(4.0), q(-0.25)})) << dt.name();
    // every code read back: a bitcast from bytes
    std::vector<float> decoded = codes.bitcast(dt).cast(dtypes::float32).to_vector<float>();
    for (int c = 0; c < 256; c++) EXPECT_TRUE(same(decoded[c], fp8_bits_to_float(static_cast<uint8_t>(c), dt))) << dt.name() << " code " << c;
  }
}
