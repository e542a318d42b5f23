// Sums of products of 16-bit floats (matmul, conv2d) on the default device: the products are taken in float32,
// exactly, and summed in float32, as PyTorch's matmul and conv do (tensor::exact_products), and the kernels stay
// vector code (a float16 matmul on a CPU ran at 1.4 GFLOP/s when each product was rounded to 16 bits). References:
// exact arithmetic where the rounding of one product would show, and float64 sums of the 16-bit inputs elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "codegen/lower.h"
#include "codegen/opts.h"
#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "support/matmul_reference.h"
#include "tg/tg.h"

using namespace tg;

namespace {

std::vector<double> host(const Tensor& x) {
  std::vector<float> v = x.cast(dtypes::float32).to("CPU").to_vector<float>();
  return {v.begin(), v.end()};
}

Tensor random(const Shape& shape, DType dt, uint64_t seed) {
  Tensor::manual_seed(seed);
  return Tensor::randn(shape).cast(dt).realize();
}

using Sums = reference::MatmulSums;
using reference::matmul_sums;

// within the output's 16-bit rounding (half an ulp: 2^-9 bfloat16, 2^-12 float16, relative) and float32 accumulation
void expect_sums(const std::vector<double>& got, const Sums& want, DType out, const std::string& what) {
  ASSERT_EQ(got.size(), want.value.size()) << what;
  double rel = out == dtypes::bfloat16 ? 1.0 / 256 : 1.0 / 2048;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want.value[i], rel * std::abs(want.value[i]) + 1e-6 * want.magnitude[i] + 1e-7) << what << " at " << i;
}

const DType kHalves[] = {dtypes::float16, dtypes::bfloat16};

}  // namespace

TEST(HalfProducts, EachProductIsExactNotRoundedTo16Bits) {
  // pairs of terms (1 + e)(1 + e) + 1 * -(1 + 2e), e the 16-bit type's 2^-(mantissa bits): each pair sums to e^2
  // exactly, which a product rounded to 16 bits loses (it rounds (1 + e)^2 = 1 + 2e + e^2 to 1 + 2e). 4 pairs: every
  // partial sum, in any order, fits float32's 24 bits, and 4 e^2 is a power of two the output holds exactly
  // (float16's as a subnormal); products rounded one by one would give 0
  for (DType dt : kHalves) {
    double e = dt == dtypes::bfloat16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
    const int64_t k = 8;
    std::vector<float> a(k), w(k);
    for (int64_t q = 0; q < k; q += 2) {
      a[q] = static_cast<float>(1 + e), w[q] = static_cast<float>(1 + e);
      a[q + 1] = 1.0f, w[q + 1] = static_cast<float>(-(1 + 2 * e));
    }
    Tensor x = Tensor(a, {1, k}).cast(dt), y = Tensor(w, {k, 1}).cast(dt);
    EXPECT_EQ(host(x.matmul(y))[0], 4 * e * e) << dt.name();
    // as a block of rows and columns (vector code; bfloat16 pairs on a CPU: bf16_pair_dot)
    std::vector<double> block = host(x.expand({16, k}).contiguous().matmul(y.expand({k, 32}).contiguous()));
    for (double v : block) ASSERT_EQ(v, 4 * e * e) << dt.name() << " 16x8x32";
    // a convolution is the same sum: a (1, k, 1, 1) image under a 1x1 kernel of k input channels
    Tensor img = Tensor(a, {1, k, 1, 1}).cast(dt), kernel = Tensor(w, {1, k, 1, 1}).cast(dt);
    EXPECT_EQ(host(img.conv2d(kernel))[0], 4 * e * e) << dt.name() << " conv2d";
  }
}

TEST(HalfProducts, MatmulsOfSizesNoBlockDivides) {
  struct Case {
    int64_t batch, m, k, n;
  };
  // primes, 1, an odd batch, and a weight large enough to be packed in panels (CPU: 2^19 elements, 128 rows)
  for (DType dt : kHalves)
    for (const Case& c : std::vector<Case>{{1, 1, 1, 1}, {1, 67, 129, 33}, {3, 5, 31, 17}, {1, 1, 257, 64}, {1, 256, 1024, 512}}) {
      std::string what = std::string(dt.name()) + " " + std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" +
                         std::to_string(c.k) + "x" + std::to_string(c.n);
      Tensor a = random({c.batch, c.m, c.k}, dt, 1), w = random({c.batch, c.k, c.n}, dt, 2);
      if (c.batch == 1) a = a.reshape({c.m, c.k}), w = w.reshape({c.k, c.n});
      Tensor out = a.matmul(w);
      EXPECT_EQ(out.dtype(), dt) << what;
      expect_sums(host(out), matmul_sums(host(a), host(w), c.batch, c.m, c.k, c.n), dt, what);
    }
}

TEST(HalfProducts, MatmulGradientsAreTheSameSums) {
  // d(a @ w) with an all-ones upstream: da = ones @ w^T, dw = a^T @ ones, each a sum of exact products
  for (DType dt : kHalves) {
    const int64_t m = 9, k = 37, n = 21;
    Tensor a = random({m, k}, dt, 3), w = random({k, n}, dt, 4);
    a.requires_grad_(), w.requires_grad_();
    a.matmul(w).cast(dtypes::float32).sum().backward();
    std::vector<double> av = host(a), wv = host(w), ones_mn(static_cast<size_t>(m * n), 1.0), wt(static_cast<size_t>(n * k)), at(static_cast<size_t>(k * m));
    for (int64_t q = 0; q < k; q++)
      for (int64_t j = 0; j < n; j++) wt[static_cast<size_t>(j * k + q)] = wv[static_cast<size_t>(q * n + j)];
    for (int64_t i = 0; i < m; i++)
      for (int64_t q = 0; q < k; q++) at[static_cast<size_t>(q * m + i)] = av[static_cast<size_t>(i * k + q)];
    expect_sums(host(a.grad()), matmul_sums(ones_mn, wt, 1, m, n, k), dt, std::string(dt.name()) + " da");
    expect_sums(host(w.grad()), matmul_sums(at, ones_mn, 1, k, m, n), dt, std::string(dt.name()) + " dw");
  }
}

TEST(HalfProducts, Conv2dAgainstADirectSum) {
  // 3 to 5 channels, and 32 to 32 (its weight is laid out with the output channel innermost by a transposing copy
  // of 16-bit floats, vector loads and scalar stores)
  struct Case {
    int64_t cin, h, wd, cout;
  };
  for (DType dt : kHalves)
    for (const Case& shape : std::vector<Case>{{3, 9, 7, 5}, {32, 6, 6, 32}}) {
      const int64_t bs = 2, cin = shape.cin, h = shape.h, wd = shape.wd, cout = shape.cout, kh = 3, kw = 2;
      Tensor x = random({bs, cin, h, wd}, dt, 5), f = random({cout, cin, kh, kw}, dt, 6);
      Tensor out = x.conv2d(f, std::nullopt, 1, {1, 1}, {1, 1}, {1, 0});  // padding 1 along h
      std::vector<double> xv = host(x), fv = host(f);
      int64_t oh = h + 2 - kh + 1, ow = wd - kw + 1;
      Sums want{std::vector<double>(static_cast<size_t>(bs * cout * oh * ow)), std::vector<double>(static_cast<size_t>(bs * cout * oh * ow))};
      for (int64_t b = 0; b < bs; b++)
        for (int64_t o = 0; o < cout; o++)
          for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
              double s = 0, mag = 0;
              for (int64_t c = 0; c < cin; c++)
                for (int64_t p = 0; p < kh; p++)
                  for (int64_t q = 0; q < kw; q++) {
                    int64_t r = i + p - 1;
                    if (r < 0 || r >= h) continue;
                    double t = xv[static_cast<size_t>(((b * cin + c) * h + r) * wd + j + q)] * fv[static_cast<size_t>(((o * cin + c) * kh + p) * kw + q)];
                    s += t, mag += std::abs(t);
                  }
              size_t at = static_cast<size_t>(((b * cout + o) * oh + i) * ow + j);
              want.value[at] = s, want.magnitude[at] = mag;
            }
      ASSERT_EQ(out.shape(), (Shape{bs, cout, oh, ow}));
      expect_sums(host(out), want, dt, std::string(dt.name()) + " conv2d " + std::to_string(cin) + " to " + std::to_string(cout));
    }
}

TEST(HalfProducts, AHalfMatmulIsVectorCodeOnTheCPU) {
  // the kernel of a 16-bit matmul takes the heuristic's vector opts and keeps them (its loads widened to float32
  // vectors, its results rounded and stored lane by lane): no fallback to a scalar copy of every lane
  for (DType dt : kHalves) {
    Tensor a = random({64, 64}, dt, 7).to("CPU"), w = random({64, 64}, dt, 8).to("CPU");
    schedule::Schedule s = schedule::create_schedule({a.matmul(w).uop()});
    codegen::LoweredKernel plain = codegen::lower(s.items.back().ast, {}, runtime::get_device("CPU").caps());
    std::vector<codegen::Opt> opts = codegen::choose_opts(plain);
    ASSERT_FALSE(opts.empty());
    EXPECT_EQ(opts[0].op, codegen::OptOp::VECTOR) << codegen::opts_str(opts);
    EXPECT_TRUE(codegen::lower(s.items.back().ast, opts, runtime::get_device("CPU").caps()).vectorized) << codegen::opts_str(opts);
    // bfloat16: consecutive steps of k as pairs, one AVX512-BF16 instruction each where the CPU has it
    std::string src = engine::get_kernel(s.items.back().ast, runtime::get_device("CPU"))->rendered.source;
    EXPECT_EQ(src.find("tg_bf16_dot2_16(acc") != std::string::npos, dt == dtypes::bfloat16) << src;
  }
}

TEST(HalfProducts, BFloat16PairsAreOneInstructionWhereTheCpuHasAvx512Bf16) {
  // the machine code of a bfloat16 matmul's kernel has vdpbf16ps, and its values are the float64 sums'
  std::ifstream info("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(info, line) && flags.empty())
    if (line.rfind("flags", 0) == 0) flags = line + " ";
  if (flags.find(" avx512_bf16 ") == std::string::npos) GTEST_SKIP() << "this CPU has no AVX512-BF16 (/proc/cpuinfo)";
  Tensor a = random({64, 96}, dtypes::bfloat16, 9).to("CPU"), w = random({96, 48}, dtypes::bfloat16, 10).to("CPU");
  Tensor out = a.matmul(w);
  runtime::Device& cpu = runtime::get_device("CPU");
  schedule::Schedule s = schedule::create_schedule({out.uop()});
  std::string code = cpu.compiler().disassemble(cpu.compiler().compile(engine::get_kernel(s.items.back().ast, cpu)->rendered.source));
  if (code.find("objdump") != std::string::npos && code.find("vdpbf16ps") == std::string::npos) GTEST_SKIP() << code;
  EXPECT_NE(code.find("vdpbf16ps"), std::string::npos) << code;
  expect_sums(host(out), matmul_sums(host(a), host(w), 1, 64, 96, 48), dtypes::bfloat16, "64x96x48");
}

TEST(HalfProducts, AVectorStoredAsHalvesRoundsAsTheScalarConversion) {
  // a column sum stored as 16-bit floats is one vector conversion per 16 results (tg_f32_to_bf16_16 and
  // tg_f32_to_f16_16); its bits equal the scalar conversion's (NOOPT), over ties, subnormal and overflowing results,
  // infinities and NaN
  std::vector<float> v;
  for (int i = 0; i < 4000; i++) v.push_back(std::ldexp(1.0f + static_cast<float>(i % 1021) / 1021.0f, i % 80 - 40) * (i % 3 ? 1.0f : -1.0f));
  for (float t : {1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11), 1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8),
                  65504.0f, 65520.0f, 65519.99f, 1e-5f, 6e-8f, 2.9e-8f, 3e-8f, 1e-40f, 3.4e38f, INFINITY, -INFINITY, NAN, -NAN})
    v.push_back(t);
  while (v.size() % 16) v.push_back(0.5f);
  int64_t n = static_cast<int64_t>(v.size());
  std::vector<float> rows(v);
  rows.insert(rows.end(), static_cast<size_t>(n), 0.0f);  // x[0] = v, x[1] = 0: the column sums are v
  Tensor x = Tensor(rows, {2, n}).realize();
  for (DType dt : kHalves) {
    Tensor y = x.sum(0).cast(dt);
    schedule::Schedule s = schedule::create_schedule({y.uop()});
    std::string src = engine::get_kernel(s.items.back().ast, runtime::get_device("CPU"))->rendered.source;
    EXPECT_NE(src.find(dt == dtypes::bfloat16 ? "tg_f32_to_bf16_16(" : "tg_f32_to_f16_16("), std::string::npos) << src;
    std::vector<uint16_t> got = y.bitcast(dtypes::uint16).to_vector<uint16_t>(), want;
    {
      Context noopt{{"NOOPT", 1}};
      want = x.sum(0).cast(dt).bitcast(dtypes::uint16).to_vector<uint16_t>();
    }
    for (int64_t i = 0; i < n; i++) ASSERT_EQ(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << dt.name() << " " << v[static_cast<size_t>(i)];
  }
}

TEST(HalfProducts, ATransposedCopyOfHalvesKeepsTheirBits) {
  // x.T.contiguous() of 16-bit floats: vector loads along one axis, lanes stored along the other (transpose_opts);
  // each lane is stored as its 16 bits (a joined vector store of them had written float32 lanes converted as
  // integers)
  for (DType dt : kHalves) {
    Tensor x = random({48, 32}, dt, 11);
    std::vector<uint16_t> in = x.bitcast(dtypes::uint16).to_vector<uint16_t>();
    std::vector<uint16_t> out = x.transpose().contiguous().bitcast(dtypes::uint16).to_vector<uint16_t>();
    for (int64_t i = 0; i < 48; i++)
      for (int64_t j = 0; j < 32; j++)
        ASSERT_EQ(out[static_cast<size_t>(j * 48 + i)], in[static_cast<size_t>(i * 32 + j)]) << dt.name() << " " << i << "," << j;
  }
}
