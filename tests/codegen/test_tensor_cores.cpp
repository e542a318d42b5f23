// Tensor cores (the TC opt, codegen/tensor_core.cpp) on the default device: half and bfloat16 matmuls of many
// shapes, every configuration, fused epilogues, gradients, and the kernels they do not fit. The reference is a
// float64 sum of the 16-bit inputs' exact products, as the tensor cores compute them (float32 accumulation, the
// result rounded to the output's dtype). Skipped where the device has no tensor cores: ctest runs them on OpenCL
// with TC_EMULATE=1 (opencl_tc.values: the fragments through local memory) and tools/cuda_gpu_check.sh on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "codegen/lower.h"
#include "codegen/opts.h"
#include "engine/kernel_cache.h"
#include "engine/realize.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/buffer_uop.h"
#include "schedule/schedule.h"
#include "support/matmul_reference.h"
#include "tg/tg.h"

using namespace tg;

namespace {

runtime::Device& default_dev() { return runtime::get_device(runtime::default_device()); }

#define NEED_TENSOR_CORES()                                  \
  if (default_dev().caps().tensor_cores.empty())            \
  GTEST_SKIP() << runtime::default_device() << " has no tensor cores (CUDA sm_80+, or OPENCL with TC_EMULATE=1)"

// the opts the heuristic picks for t's last kernel
std::vector<codegen::Opt> chosen_opts(const Tensor& t) {
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  return codegen::choose_opts(codegen::lower(s.items.back().ast, {}, default_dev().caps()));
}
bool uses_tc(const Tensor& t) {
  std::vector<codegen::Opt> o = chosen_opts(t);
  return o.size() == 1 && o[0].op == codegen::OptOp::TC;
}

// x (any 16-bit or float32 tensor) as float64 on the host
std::vector<double> host(const Tensor& x) {
  std::vector<float> v = x.cast(dtypes::float32).to("CPU").to_vector<float>();
  return {v.begin(), v.end()};
}

using Reference = reference::MatmulSums;
Reference matmul_reference(const std::vector<double>& a, const std::vector<double>& w, int64_t batch, int64_t m, int64_t k, int64_t n) {
  return reference::matmul_sums(a, w, batch, m, k, n);
}

// got within the output dtype's rounding of the reference, plus float32 accumulation over the terms
void expect_close(const std::vector<double>& got, const Reference& want, DType out, const std::string& what) {
  ASSERT_EQ(got.size(), want.value.size()) << what;
  double rel = out == dtypes::bfloat16 ? 1.0 / 128 : out == dtypes::float16 ? 1.0 / 1024 : 1e-6;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want.value[i], rel * std::abs(want.value[i]) + 1e-5 * want.magnitude[i] + 1e-6) << what << " at " << i;
}

Tensor random(const std::vector<int64_t>& shape, DType dt, uint64_t seed) {
  Tensor::manual_seed(seed);
  return Tensor::randn(shape).cast(dt).to(runtime::default_device()).realize();
}

}  // namespace

TEST(TensorCores, HalfMatmulsOfManyShapes) {
  NEED_TENSOR_CORES();
  struct Case {
    int64_t batch, m, k, n;
    bool a_t, w_t;  // the operand stored transposed
  };
  for (const Case& c : std::vector<Case>{{1, 16, 16, 8, false, false},  {1, 64, 32, 64, false, false},
                                         {1, 128, 96, 256, false, false}, {1, 48, 80, 40, false, false},
                                         {3, 32, 48, 16, false, false},   {1, 64, 64, 32, true, false},
                                         {1, 32, 64, 64, false, true},    {2, 16, 32, 128, true, true}}) {
    std::string what = std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
                       (c.a_t ? " A^T" : "") + (c.w_t ? " W^T" : "");
    Tensor a = c.a_t ? random({c.batch, c.k, c.m}, dtypes::float16, 1).transpose(1, 2) : random({c.batch, c.m, c.k}, dtypes::float16, 1);
    Tensor w = c.w_t ? random({c.batch, c.n, c.k}, dtypes::float16, 2).transpose(1, 2) : random({c.batch, c.k, c.n}, dtypes::float16, 2);
    Tensor out = a.matmul(w);
    EXPECT_TRUE(uses_tc(out)) << what << ": " << codegen::opts_str(chosen_opts(out));
    expect_close(host(out), matmul_reference(host(a), host(w), c.batch, c.m, c.k, c.n), dtypes::float16, what);
  }
}

// every configuration tc_opts offers (BEAM times them all) computes the same values
TEST(TensorCores, EveryConfigurationGivesTheSameValues) {
  NEED_TENSOR_CORES();
  runtime::Device& dev = default_dev();
  Tensor a = random({128, 64}, dtypes::float16, 3), w = random({64, 256}, dtypes::float16, 4);
  Reference want = matmul_reference(host(a), host(w), 1, 128, 64, 256);
  Tensor out = a.matmul(w).cast(dtypes::float32);
  schedule::Schedule s = schedule::create_schedule({out.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  const schedule::ScheduleItem& item = s.items.back();
  codegen::LoweredKernel plain = codegen::lower(item.ast, {}, dev.caps());
  std::vector<codegen::Opt> configs = codegen::tc_opts(plain);
  ASSERT_GE(configs.size(), 8u);
  for (const codegen::Opt& tc : configs) {
    auto k = engine::build_kernel(dev, codegen::lower(item.ast, {tc}, dev.caps()), "tc_config");
    std::vector<runtime::Buffer*> bufs;
    for (const uop::UOp& b : item.bufs) bufs.push_back(&runtime::buffer_of(b));
    engine::run_program(*k, bufs);
    std::vector<float> got(bufs[0]->size());
    bufs[0]->copyout(got.data(), bufs[0]->nbytes());
    // the sum cast to float16 before float32: the half output's rounding
    expect_close(std::vector<double>(got.begin(), got.end()), want, dtypes::float16, codegen::opts_str({tc}));
  }
}

// bfloat16 inputs; float16 inputs cast to float32 before the product (exact products either way) give a float32 sum
TEST(TensorCores, BFloat16AndAFloat32Result) {
  NEED_TENSOR_CORES();
  Tensor a = random({64, 48}, dtypes::bfloat16, 5), w = random({48, 32}, dtypes::bfloat16, 6);
  Tensor out = a.matmul(w);
  EXPECT_TRUE(uses_tc(out));
  expect_close(host(out), matmul_reference(host(a), host(w), 1, 64, 48, 32), dtypes::bfloat16, "bfloat16");
  Tensor h = random({32, 64}, dtypes::float16, 7), g = random({64, 64}, dtypes::float16, 8);
  Tensor wide = h.cast(dtypes::float32).matmul(g.cast(dtypes::float32));
  EXPECT_TRUE(uses_tc(wide));
  expect_close(host(wide), matmul_reference(host(h), host(g), 1, 32, 64, 64), dtypes::float32, "float16 cast to float32");
}

// a bias and an activation fuse into the tensor-core kernel, applied at each thread's own outputs
TEST(TensorCores, AnEpilogueFusesIntoTheKernel) {
  NEED_TENSOR_CORES();
  Tensor a = random({64, 32}, dtypes::float16, 9), w = random({32, 128}, dtypes::float16, 10);
  Tensor bias = random({128}, dtypes::float16, 11);
  Tensor out = (a.matmul(w) + bias).relu();
  EXPECT_TRUE(uses_tc(out));
  Reference r = matmul_reference(host(a), host(w), 1, 64, 32, 128);
  std::vector<double> b = host(bias);
  for (size_t i = 0; i < r.value.size(); i++) {
    // the half sum is rounded before the add (2^-11 of it): allowed for through the magnitude (times 1e-5)
    r.magnitude[i] += (std::abs(r.value[i]) + std::abs(b[i % 128])) * 1e5 / 2048;
    r.value[i] = std::max(0.0, r.value[i] + b[i % 128]);
  }
  expect_close(host(out), r, dtypes::float16, "relu(a @ w + bias)");
}

// a 1x1 convolution is a matmul over channels: the pixels are m, the output channels n
TEST(TensorCores, AOneByOneConvolution) {
  NEED_TENSOR_CORES();
  Tensor x = random({2, 32, 4, 16}, dtypes::float16, 12), w = random({16, 32, 1, 1}, dtypes::float16, 13);
  Tensor out = x.conv2d(w);
  EXPECT_TRUE(uses_tc(out)) << codegen::opts_str(chosen_opts(out));
  std::vector<double> xv = host(x), wv = host(w), got = host(out);
  Reference r{std::vector<double>(got.size()), std::vector<double>(got.size())};
  for (int64_t b = 0; b < 2; b++)
    for (int64_t o = 0; o < 16; o++)
      for (int64_t p = 0; p < 64; p++) {
        size_t at = static_cast<size_t>((b * 16 + o) * 64 + p);
        for (int64_t c = 0; c < 32; c++) {
          double prod = xv[static_cast<size_t>((b * 32 + c) * 64 + p)] * wv[static_cast<size_t>(o * 32 + c)];
          r.value[at] += prod, r.magnitude[at] += std::abs(prod);
        }
      }
  expect_close(got, r, dtypes::float16, "conv2d 1x1");
}

// the gradients of a half matmul are half matmuls too
TEST(TensorCores, GradientsOfAHalfMatmul) {
  NEED_TENSOR_CORES();
  Tensor a = random({32, 64}, dtypes::float16, 14).requires_grad_(), w = random({64, 48}, dtypes::float16, 15).requires_grad_();
  Tensor g = random({32, 48}, dtypes::float16, 16);
  (a.matmul(w) * g).cast(dtypes::float32).sum().backward();
  // da = g @ w^T (32 x 48 x 64), dw = a^T @ g (64 x 32 x 48); the product with g is rounded to half before the sum
  std::vector<double> gv = host(g), wv = host(w), av = host(a), wt(64 * 48), at(32 * 64);
  for (int64_t i = 0; i < 64; i++)
    for (int64_t j = 0; j < 48; j++) wt[static_cast<size_t>(j * 64 + i)] = wv[static_cast<size_t>(i * 48 + j)];
  for (int64_t i = 0; i < 32; i++)
    for (int64_t j = 0; j < 64; j++) at[static_cast<size_t>(j * 32 + i)] = av[static_cast<size_t>(i * 64 + j)];
  expect_close(host(a.grad()), matmul_reference(gv, wt, 1, 32, 48, 64), dtypes::float16, "da");
  expect_close(host(w.grad()), matmul_reference(at, gv, 1, 64, 32, 48), dtypes::float16, "dw");
}

// sizes the tiles do not divide: rounded up to whole tiles, the positions past the ends gated (nothing read or
// stored there, and k's padding adds nothing), also under a fused epilogue that reads another buffer
TEST(TensorCores, SizesTheTilesDoNotDivideAreGated) {
  NEED_TENSOR_CORES();
  struct Case {
    int64_t batch, m, k, n;
  };
  for (const Case& c : std::vector<Case>{{1, 20, 30, 16}, {1, 33, 40, 24}, {1, 100, 30, 50}, {2, 17, 16, 24}, {1, 60, 24, 40}}) {
    std::string what = std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n);
    Tensor a = random({c.batch, c.m, c.k}, dtypes::float16, 20), w = random({c.batch, c.k, c.n}, dtypes::float16, 21);
    Tensor bias = random({c.n}, dtypes::float32, 22);
    Tensor out = a.matmul(w).cast(dtypes::float32) + bias;
    EXPECT_TRUE(uses_tc(out)) << what << ": " << codegen::opts_str(chosen_opts(out));
    Reference r = matmul_reference(host(a), host(w), c.batch, c.m, c.k, c.n);
    std::vector<double> b = host(bias);
    for (size_t i = 0; i < r.value.size(); i++) {
      r.magnitude[i] += std::abs(r.value[i]) * 1e5 / 2048;  // the product is rounded to half before the bias is added
      r.value[i] += b[i % static_cast<size_t>(c.n)];
    }
    expect_close(host(out), r, dtypes::float16, what);
  }
}

// where they do not fit (float32 inputs; padding that would more than double the work) the kernels are the usual ones
TEST(TensorCores, NotWhereTheyDoNotFit) {
  NEED_TENSOR_CORES();
  Tensor f = random({32, 32}, dtypes::float32, 17), h = random({5, 16}, dtypes::float16, 18), k = random({16, 16}, dtypes::float16, 19);
  EXPECT_FALSE(uses_tc(f.matmul(f)));  // float32 stays exact: no tensor cores
  Tensor few = h.matmul(k);
  EXPECT_FALSE(uses_tc(few));  // 5 rows: a tile of 16 would be mostly padding
  std::vector<double> got = host(few);
  Reference r = matmul_reference(host(h), host(k), 1, 5, 16, 16);
  expect_close(got, r, dtypes::float16, "5 x 16 x 16");
}

// TC=0 set while the program runs (a Context) reaches kernels already compiled with TC: the setting is part of the
// kernel cache's key, as NOOPT and BEAM are, so the same AST is compiled again without the tensor cores
TEST(TensorCores, TC0InAContextCompilesTheSameKernelWithoutThem) {
  NEED_TENSOR_CORES();
  Tensor a = random({32, 64}, dtypes::float16, 21), w = random({64, 32}, dtypes::float16, 22);
  schedule::Schedule s = schedule::create_schedule({a.matmul(w).uop()});
  const uop::UOp& ast = s.items.back().ast;
  auto with = engine::get_kernel(ast, default_dev());
  EXPECT_NE(with->opts.find("TC"), std::string::npos) << with->opts;
  {
    Context off{{"TC", 0}};
    auto without = engine::get_kernel(ast, default_dev());
    EXPECT_EQ(without->opts.find("TC"), std::string::npos) << without->opts;
    std::vector<double> got = host(a.matmul(w));
    expect_close(got, matmul_reference(host(a), host(w), 1, 32, 64, 32), dtypes::float16, "32 x 64 x 32 with TC=0");
  }
  EXPECT_EQ(engine::get_kernel(ast, default_dev()), with);  // TC on again: the first kernel, from the cache
}
