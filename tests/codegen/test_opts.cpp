// Kernel opts: what the heuristic picks for a matmul, that opts keep the values, that illegal ones are refused, and
// that BEAM searches a kernel once and then reads its choice from the disk cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <bit>

#include <sys/mman.h>
#include <unistd.h>

#include "codegen/lower.h"
#include "engine/beam.h"
#include "engine/kernel_cache.h"
#include "engine/realize.h"
#include "runtime/buffer_uop.h"
#include "schedule/schedule.h"
#include "tg/tg.h"

namespace tg {
namespace {

using codegen::Opt;
using codegen::OptOp;

// The heuristic vectorizes the kernel that computes t (the schedule's last): its first opt is a VECTOR, and the
// kernel lowered with its opts is vector code
void expect_heuristic_vector(const Tensor& t, const std::string& what = "") {
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items.back().ast));
  ASSERT_FALSE(opts.empty()) << what;
  EXPECT_EQ(opts[0].op, OptOp::VECTOR) << what << " " << codegen::opts_str(opts);
  EXPECT_TRUE(codegen::lower(s.items.back().ast, opts).vectorized) << what << " " << codegen::opts_str(opts);
}

uop::UOp matmul_ast(int64_t n) {
  Tensor a = Tensor::rand({n, n}).realize(), b = Tensor::rand({n, n}).realize();
  schedule::Schedule s = schedule::create_schedule({a.matmul(b).uop()});
  return s.items.at(0).ast;
}

TEST(Opts, HeuristicBlocksAMatmulInRegisters) {
  codegen::LoweredKernel k = codegen::lower(matmul_ast(64));
  ASSERT_EQ(k.full_shape, (std::vector<int64_t>{64, 64, 64}));
  // B's rows are contiguous and A does not depend on the column: columns as 16-wide vectors, two of them sharing
  // each broadcast element of A; rows reuse B's loads: 2 x 8 vector accumulators; the k loop unrolled by 4
  EXPECT_EQ(codegen::choose_opts(k), (std::vector<Opt>{{OptOp::VECTOR, 1, 16}, {OptOp::UPCAST, 1, 2}, {OptOp::UPCAST, 0, 8}, {OptOp::UNROLL, 2, 4}}));
  Context noopt{{"NOOPT", 1}};
  EXPECT_TRUE(codegen::choose_opts(k).empty());
}

TEST(Opts, ADepthwiseConvTakesAVectorOfChannelsAndBlocksItsShortRowWhole) {
  // a depthwise 3x3 conv at 7x7 (mobilenet_v2's last stages) reads its input channels-last (conv2d), so the
  // channels are the vector, under one gate per pixel at the padding (over NCHW no axis took one: 7 columns,
  // channels 49 apart), and 7 accumulators along the row share each weight and the overlapping input columns
  Tensor x = Tensor::rand({1, 16, 7, 7}).realize(), w = Tensor::rand({16, 1, 3, 3}).realize();
  Tensor y = x.conv2d(w, std::nullopt, 16, 1, 1, 1);
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast);
  std::vector<Opt> opts = codegen::choose_opts(k);
  auto vec = std::find_if(opts.begin(), opts.end(), [&](const Opt& o) { return o.op == OptOp::VECTOR; });
  ASSERT_NE(vec, opts.end()) << codegen::opts_str(opts);
  EXPECT_EQ(k.full_shape[vec->axis], 16) << codegen::opts_str(opts);
  auto row = std::find_if(opts.begin(), opts.end(), [&](const Opt& o) { return o.op == OptOp::UPCAST && k.full_shape[o.axis] == 7; });
  ASSERT_NE(row, opts.end()) << codegen::opts_str(opts);
  EXPECT_EQ(row->amount, 7) << codegen::opts_str(opts);
  // at 14x14 a row takes 7 of its 14 columns: a block of 7 x 2 rows, never more than 32 accumulators
  Tensor x14 = Tensor::rand({1, 16, 14, 14}).realize();
  schedule::Schedule s14 = schedule::create_schedule({x14.conv2d(w, std::nullopt, 16, 1, 1, 1).uop()});
  codegen::LoweredKernel k14 = codegen::lower(s14.items.back().ast);
  int64_t block = 1;
  for (const Opt& o : codegen::choose_opts(k14))
    if (o.op == OptOp::UPCAST) block *= o.amount;
  EXPECT_GE(block, 7);
  EXPECT_LE(block, 32);
  std::vector<float> got = y.to_vector<float>(), xv = x.to_vector<float>(), wv = w.to_vector<float>();
  for (int c = 0; c < 16; c++)
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 7; j++) {
        double want = 0;
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++)
            if (i + a - 1 >= 0 && i + a - 1 < 7 && j + b - 1 >= 0 && j + b - 1 < 7)
              want += xv[(c * 7 + i + a - 1) * 7 + j + b - 1] * wv[c * 9 + a * 3 + b];
        EXPECT_NEAR(got[(c * 7 + i) * 7 + j], want, 1e-4);
      }
}

TEST(Opts, AWeightStreamedFromMemoryIsReadAsVectorsOfItsOutputChannels) {
  // a batch-1 1x1 conv from 2048 to 512 channels at 4x4 (resnet50's last stage): its 4 MB weight, in blocks of 32
  // output channels, is the kernel's largest read and few outputs share it; the vector runs along the block's 32
  // channels, reading the weight in whole cache lines, not along the 16 pixels with the weight broadcast a scalar
  // at a time
  auto vector_size = [](const Tensor& y, int64_t reduced) {
    for (const auto& item : schedule::create_schedule({y.uop()}).items) {
      codegen::LoweredKernel k = codegen::lower(item.ast);
      if (k.reduce_axes.size() != 1 || k.full_shape[k.reduce_axes[0]] != reduced) continue;
      std::vector<Opt> opts = codegen::choose_opts(k);
      for (const Opt& o : opts)
        if (o.op == OptOp::VECTOR) return k.full_shape[o.axis];
    }
    return int64_t{0};
  };
  Tensor x = Tensor::rand({1, 2048, 4, 4}).realize(), w = Tensor::rand({512, 2048, 1, 1}).realize();
  EXPECT_EQ(vector_size(x.conv2d(w), 2048), 32);
  // an input that every output channel reads is no streamed weight: mobilenet_v2's 1x1 conv from 16 to 96
  // channels, stored channels-last for the depthwise conv after it, keeps its vector along the output channels
  Tensor x2 = Tensor::rand({8, 16, 56, 56}).realize(), w2 = Tensor::rand({96, 16, 1, 1}).realize();
  Tensor wd = Tensor::rand({96, 1, 3, 3}).realize();
  EXPECT_EQ(vector_size(x2.conv2d(w2).relu6().conv2d(wd, std::nullopt, 96, 1, 1, 1), 16), 96);
}

TEST(Opts, AColumnAxisWithoutAGoodDivisorIsPaddedToABlock) {
  // a 3x3 conv at 13x13 (squeezenet's): 13 columns have no divisor to block by, so the axis is padded to 14 and
  // blocked by 7 (one extra column, which stores nothing), not left with one vector per broadcast weight
  Tensor x = Tensor::rand({1, 8, 13, 13}).realize(), w = Tensor::rand({32, 8, 3, 3}).realize();
  Tensor y = x.conv2d(w, std::nullopt, 1, 1, 1, 1);
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast);
  std::vector<Opt> opts = codegen::choose_opts(k);
  auto pad = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::PADTO; });
  ASSERT_NE(pad, opts.end()) << codegen::opts_str(opts);
  EXPECT_EQ(k.full_shape[pad->axis], 13);
  EXPECT_EQ(pad->amount, 7);
  std::vector<float> got = y.to_vector<float>(), xv = x.to_vector<float>(), wv = w.to_vector<float>();
  for (int o = 0; o < 32; o++)
    for (int i = 0; i < 13; i++)
      for (int j = 0; j < 13; j++) {
        double want = 0;
        for (int c = 0; c < 8; c++)
          for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
              if (i + a - 1 >= 0 && i + a - 1 < 13 && j + b - 1 >= 0 && j + b - 1 < 13)
                want += xv[(c * 13 + i + a - 1) * 13 + j + b - 1] * wv[((o * 8 + c) * 3 + a) * 3 + b];
        EXPECT_NEAR(got[(o * 13 + i) * 13 + j], want, 1e-4);
      }
}

TEST(Opts, AnElementwiseKernelWithGatedLoadsIsVectorized) {
  // a cat of two (64, 27, 27) halves: each half's load is gated by the channel, which the C compiler's loop
  // vectorizer turns into masked loads (3x slower than a plain add of the same size); our vector form loads whole
  // vectors under the one gate every lane shares. A plain add stays the C compiler's to vectorize
  Tensor a = Tensor::rand({1, 64, 27, 27}).realize(), b = Tensor::rand({1, 64, 27, 27}).realize();
  Tensor c = Tensor::cat({a, b}, 1);
  expect_heuristic_vector(c, "cat");
  std::vector<float> got = c.to_vector<float>(), av = a.to_vector<float>(), bv = b.to_vector<float>();
  av.insert(av.end(), bv.begin(), bv.end());
  EXPECT_EQ(got, av);
  schedule::Schedule s = schedule::create_schedule({(a + b).uop()});
  EXPECT_TRUE(codegen::choose_opts(codegen::lower(s.items.back().ast)).empty());
}

TEST(Opts, ATransposingCopyIsBlockedAsVectorsOfItsLoadsTimesCopiesOfItsStores) {
  // x (R, C) stored transposed: the output (C, R) loads contiguously along its axis 0 and stores along axis 1; the
  // heuristic takes a vector along the loads and copies along the stores, a block of 8 vectors of 16 (or what
  // divides the sizes); values against the host's transpose
  struct Case {
    int64_t r, c;
    std::vector<Opt> opts;
  };
  for (const Case& t : {Case{48, 64, {{OptOp::VECTOR, 0, 16}, {OptOp::UPCAST, 1, 8}}},
                        Case{6, 20, {{OptOp::VECTOR, 0, 4}, {OptOp::UPCAST, 1, 2}}}, Case{7, 9, {}}}) {
    Tensor x = Tensor::randn({t.r, t.c}).realize(), y = x.transpose().contiguous();
    schedule::Schedule s = schedule::create_schedule({y.uop()});
    ASSERT_EQ(s.items.size(), 1u);
    EXPECT_EQ(codegen::choose_opts(codegen::lower(s.items[0].ast)), t.opts) << t.r << "x" << t.c;
    std::vector<float> xv = x.to_vector<float>(), got = y.to_vector<float>();
    for (int64_t i = 0; i < t.c; i++)
      for (int64_t j = 0; j < t.r; j++) ASSERT_EQ(got[i * t.r + j], xv[j * t.c + i]) << t.r << "x" << t.c << " " << i << " " << j;
  }
  // a copy whose loads and stores run along the same axis stays the C compiler's to vectorize
  Tensor x = Tensor::randn({48, 64}).realize();
  schedule::Schedule s = schedule::create_schedule({(x * 2.0f).uop()});
  EXPECT_TRUE(codegen::choose_opts(codegen::lower(s.items.back().ast)).empty());
}

// got == a 3x3 max pool with stride 2 of x (channels x in x in), padded by `pad` on each side, into channels x out x
// out, by a plain loop over the window's elements inside x; NaN wins
void expect_max_pool_3x3_stride_2(const std::vector<float>& got, const float* x, int channels, int in, int out, int pad = 0) {
  for (int c = 0; c < channels; c++)
    for (int i = 0; i < out; i++)
      for (int j = 0; j < out; j++) {
        float want = -INFINITY;
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++) {
            int row = 2 * i + a - pad, col = 2 * j + b - pad;
            if (row < 0 || row >= in || col < 0 || col >= in) continue;
            float v = x[(c * in + row) * in + col];
            want = std::isnan(v) || std::isnan(want) ? NAN : std::max(want, v);
          }
        float g = got[(c * out + i) * out + j];
        if (std::isnan(want)) EXPECT_TRUE(std::isnan(g)) << c << " " << i << " " << j;
        else EXPECT_EQ(g, want) << c << " " << i << " " << j;
      }
}

TEST(Opts, AStride2PoolVectorizesOverItsOutputColumns) {
  // a 3x3 max pool with stride 2 (resnet's, squeezenet's): each output column reads input columns two apart, so
  // the vector over output columns loads two vectors of the span and takes their even elements. Checked against a
  // plain loop, with a NaN that must win its windows
  Tensor x = Tensor::rand({1, 4, 33, 33}).realize();
  std::vector<float> xv = x.to_vector<float>();
  xv[5 * 33 + 7] = NAN;
  x = Tensor(xv, {1, 4, 33, 33}).realize();
  Tensor y = x.max_pool2d({3, 3}, 2);  // 16 x 16 outputs
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast);
  std::vector<Opt> opts = codegen::choose_opts(k);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0].op, OptOp::VECTOR) << codegen::opts_str(opts);
  EXPECT_EQ(k.full_shape[opts[0].axis], 16) << codegen::opts_str(opts);
  EXPECT_TRUE(codegen::lower(s.items.back().ast, opts).vectorized) << codegen::opts_str(opts);
  expect_max_pool_3x3_stride_2(y.to_vector<float>(), xv.data(), 4, 33, 16);
}

TEST(Opts, DimensionsReadAsOneLoopAsOne) {
  // lower() merges adjacent dims that every view reads as one: fewer loops, a longer axis to vectorize
  auto loops = [](const Tensor& t) {
    schedule::Schedule s = schedule::create_schedule({t.uop()});
    return codegen::lower(s.items.back().ast).full_shape;
  };
  Tensor x = Tensor::rand({4, 8, 6, 6}).realize(), bias = Tensor::rand({8}).realize();
  EXPECT_EQ(loops(x * 2), (std::vector<int64_t>{1152}));
  EXPECT_EQ(loops(x.sum({2, 3})), (std::vector<int64_t>{32, 36}));   // reduce dims with reduce dims
  EXPECT_EQ(loops(x + bias.reshape({1, 8, 1, 1})), (std::vector<int64_t>{4, 8, 36}));  // the bias' dim stays its own
  EXPECT_EQ(loops(x.permute({0, 1, 3, 2}) + 1), (std::vector<int64_t>{32, 6, 6}));      // a transposed pair does not merge
  // read through a stack of Views (a transpose, then flattened): a pair merges when no division or modulo of the
  // index math depends on it. The batch and channel dims are one run in both Views; the flattened 36 is unravelled
  // by the lower View (/ 6, % 6), so it merges with nothing
  EXPECT_EQ(loops(x.permute({0, 1, 3, 2}).reshape({4, 8, 36}) + 1), (std::vector<int64_t>{32, 36}));
  // with the batch and channel swapped below, a merged (4, 8) would be unravelled with / 8 and % 8: kept apart
  Tensor y = Tensor::rand({8, 4, 6, 6}).realize();
  EXPECT_EQ(loops(y.permute({1, 0, 3, 2}).reshape({4, 8, 36}) + 1), (std::vector<int64_t>{4, 8, 36}));
  // a channel shuffle (shufflenet's: channels regrouped, then half of them) splits the channels only: its pixels
  // merge into one axis to vectorize
  Tensor shuffled = x.reshape({4, 2, 4, 6, 6}).transpose(1, 2).reshape({4, 8, 6, 6}).shrink({{0, 4}, {4, 8}, {0, 6}, {0, 6}});
  EXPECT_EQ(loops(shuffled + 1), (std::vector<int64_t>{4, 4, 36}));
  std::vector<float> sv = (shuffled + 1).to_vector<float>(), xs = x.to_vector<float>();
  for (int n = 0; n < 4; n++)
    for (int c = 0; c < 4; c++)
      for (int p = 0; p < 36; p++) {
        int src = (4 + c) % 2 * 4 + (4 + c) / 2;  // the shuffled channel 4 + c came from this one
        EXPECT_EQ(sv[(n * 4 + c) * 36 + p], xs[(n * 8 + src) * 36 + p] + 1);
      }
  std::vector<float> xv = x.to_vector<float>(), bv = bias.to_vector<float>();
  std::vector<float> got = (x + bias.reshape({1, 8, 1, 1})).sum({2, 3}).to_vector<float>();
  for (int i = 0; i < 32; i++) {
    double want = 0;
    for (int j = 0; j < 36; j++) want += xv[i * 36 + j] + bv[i % 8];
    EXPECT_NEAR(got[i], want, 1e-4);
  }
}

TEST(Opts, SwapPutsTheColumnLoopOutsideWhenThatReadsLess) {
  // 512 x 512 operands (1 MiB each): rows outside re-read all of B once per block of 8 rows, columns outside
  // re-read A once per 32 columns; the heuristic swaps
  codegen::LoweredKernel k = codegen::lower(matmul_ast(512));
  std::vector<Opt> opts = codegen::choose_opts(k);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts.back(), (Opt{OptOp::SWAP, 0, 1}));
  std::vector<int64_t> trips{512 / 8, 512 / 32, 512 / 4};
  double mib = 1 << 20;
  EXPECT_EQ(codegen::loop_traffic(k, {0, 1}, trips), mib + 64 * mib);  // A once, B 64 times
  EXPECT_EQ(codegen::loop_traffic(k, {1, 0}, trips), 16 * mib + mib);  // A 16 times, B once
  EXPECT_EQ(codegen::loop_traffic(k, {}, trips), 2 * mib);
  // the kernel's outermost loop (the one the CPU cuts between threads) is the column loop
  codegen::LoweredKernel swapped = codegen::lower(matmul_ast(512), opts);
  EXPECT_EQ(swapped.loop_order, (std::vector<int64_t>{1, 0, 2}));
  auto kernel = engine::build_kernel(runtime::get_device("CPU"), swapped, "swap_test");
  size_t first = kernel->rendered.source.find("for (");
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(kernel->rendered.source.find("ridx1 = (int)core_start", first), std::string::npos) << kernel->rendered.source;
  // small operands stay in cache whatever the order: no swap (the 64 x 64 test above)
  std::vector<Opt> small = codegen::choose_opts(codegen::lower(matmul_ast(64)));
  EXPECT_TRUE(std::none_of(small.begin(), small.end(), [](const Opt& o) { return o.op == OptOp::SWAP; }));
}

TEST(Opts, OptsReadBackFromTheirText) {
  std::vector<Opt> all{{OptOp::UPCAST, 0, 4}, {OptOp::UNROLL, 2, 3}, {OptOp::VECTOR, 1, 16}, {OptOp::LOCAL, 1, 8},
                       {OptOp::GROUP, 2, 32}, {OptOp::GROUPTOP, 2, 4}, {OptOp::SWAP, 0, 1}, {OptOp::PADTO, 0, 8}};
  EXPECT_EQ(codegen::opts_str(all), "UPCAST(0,4) UNROLL(2,3) VECTOR(1,16) LOCAL(1,8) GROUP(2,32) GROUPTOP(2,4) SWAP(0,1) PADTO(0,8)");
  EXPECT_EQ(codegen::parse_opts(codegen::opts_str(all)), all);
  EXPECT_TRUE(codegen::parse_opts("").empty());
  for (const char* bad : {"UPCAST(0,4) TILE(1,2)", "UPCAST(0,4", "UPCAST 0 4", "upcast(0,4)"})
    EXPECT_TRUE(codegen::parse_opts(bad).empty()) << bad;
}

TEST(Opts, IllegalOptsAreRefused) {
  uop::UOp ast = matmul_ast(12);
  codegen::LoweredKernel k = codegen::lower(ast);
  EXPECT_TRUE(codegen::legal(k, {{OptOp::UPCAST, 0, 3}, {OptOp::UNROLL, 2, 12}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UPCAST, 2, 2}}));                            // the reduce axis
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UNROLL, 0, 2}}));                            // a global axis
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UPCAST, 0, 5}}));                            // 5 does not divide 12
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UPCAST, 0, 2}, {OptOp::UPCAST, 0, 3}}));     // an axis twice
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UPCAST, 3, 2}}));                            // no such axis
  EXPECT_TRUE(codegen::legal(k, {{OptOp::SWAP, 0, 1}, {OptOp::UPCAST, 0, 3}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::SWAP, 0, 2}}));                              // the reduce axis
  EXPECT_FALSE(codegen::legal(k, {{OptOp::SWAP, 1, 1}}));                              // an axis with itself
  EXPECT_FALSE(codegen::legal(k, {{OptOp::SWAP, 0, 7}}));                              // no such axis
  EXPECT_THROW(codegen::lower(ast, {{OptOp::SWAP, 0, 2}}), InternalError);
  EXPECT_THROW(codegen::lower(ast, {{OptOp::UPCAST, 0, 5}}), InternalError);
}

TEST(Opts, EveryOptKeepsTheValues) {
  Tensor a = Tensor::rand({12, 10}).realize(), b = Tensor::rand({10, 6}).realize();
  std::vector<float> want;
  {
    Context c{{"NOOPT", 1}};
    want = a.matmul(b).to_vector<float>();
  }
  for (int seed = 1; seed <= 8; seed++) {
    Context c{{"RANDOM_OPTS", seed}};
    std::vector<float> got = a.matmul(b).to_vector<float>();
    for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << "seed " << seed << " element " << i;
  }
}

// a matmul's three n x n float32 buffers (out, B, A, in the kernel's argument order) holding `data`
struct MatmulBuffers {
  std::vector<std::unique_ptr<runtime::Buffer>> owned;
  std::vector<runtime::Buffer*> bufs;
  MatmulBuffers(int64_t n, const std::vector<std::vector<float>>& data) {
    for (const std::vector<float>& d : data) {
      owned.push_back(std::make_unique<runtime::Buffer>(runtime::get_device("CPU"), n * n, dtypes::float32));
      owned.back()->copyin(d.data(), d.size() * 4);
      bufs.push_back(owned.back().get());
    }
  }
};

// kernels built or fetched from a cache so far
int64_t builds() { return runtime::compile_stats().compiled + runtime::compile_stats().memory_hits + runtime::compile_stats().disk_hits; }

// C = A @ B (n x n, float32) through a kernel built with `opts`, against a double-precision loop
void check_matmul_with(const std::vector<Opt>& opts, int64_t n, bool expect_vector) {
  uop::UOp ast = matmul_ast(n);
  codegen::LoweredKernel k = codegen::lower(ast, opts);
  EXPECT_EQ(k.vectorized, expect_vector) << codegen::opts_str(opts);
  runtime::Device& cpu = runtime::get_device("CPU");
  auto kernel = engine::build_kernel(cpu, k, "vector_test");
  if (expect_vector) {
    EXPECT_NE(kernel->rendered.source.find("__attribute__((vector_size("), std::string::npos);
  }
  std::vector<std::vector<float>> data(3, std::vector<float>(n * n));
  for (int64_t i = 0; i < n * n; i++) data[1][i] = static_cast<float>((i * 7) % 13) - 6, data[2][i] = static_cast<float>((i * 5) % 11) * 0.5f;
  MatmulBuffers m(n, data);
  engine::run_program(*kernel, m.bufs);
  std::vector<float> out(n * n);
  m.bufs[0]->copyout(out.data(), out.size() * 4);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double want = 0;
      for (int64_t r = 0; r < n; r++) want += double(data[2][i * n + r]) * data[1][r * n + j];  // buffer 1 is B
      ASSERT_NEAR(out[i * n + j], want, 1e-3) << codegen::opts_str(opts) << " at " << i << "," << j;
    }
}

TEST(Opts, AnUnrolledSumWithFewAccumulatorsKeepsPartialSumsAddedAfterTheLoop) {
  // one accumulator waits 4 cycles per add: the 4 copies of an unrolled k go to 4 partial sums, added once the k
  // loop ends (the C dialect keeps 8 sums going: 2 accumulators get 4 partials each, 8 get none)
  auto source = [](const std::vector<Opt>& opts) {
    return engine::build_kernel(runtime::get_device("CPU"), codegen::lower(matmul_ast(32), opts), "partials_test")->rendered.source;
  };
  std::string one = source({{OptOp::UNROLL, 2, 4}});
  size_t update = one.find("acc0_3 = tg_fma_float("), sum = one.find("acc0 = acc0 + acc0_1 + acc0_2 + acc0_3;");
  ASSERT_NE(update, std::string::npos) << one;
  ASSERT_NE(sum, std::string::npos) << one;
  EXPECT_LT(one.find('}', update), sum) << "added after the k loop's end: " << one;
  EXPECT_NE(source({{OptOp::UPCAST, 0, 2}, {OptOp::UNROLL, 2, 4}}).find("acc1_3"), std::string::npos);
  EXPECT_EQ(source({{OptOp::UPCAST, 0, 8}, {OptOp::UNROLL, 2, 4}}).find("acc0_1"), std::string::npos);
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{{{OptOp::UNROLL, 2, 4}}, {{OptOp::UNROLL, 2, 2}, {OptOp::UPCAST, 1, 2}},
                                                                    {{OptOp::VECTOR, 1, 16}, {OptOp::UNROLL, 2, 4}}})
    check_matmul_with(opts, 32, opts[0].op == OptOp::VECTOR);
}

TEST(Opts, SwappedLoopsKeepTheValues) {
  check_matmul_with({{OptOp::SWAP, 0, 1}}, 8, false);
  check_matmul_with({{OptOp::VECTOR, 1, 16}, {OptOp::UPCAST, 1, 2}, {OptOp::UPCAST, 0, 8}, {OptOp::UNROLL, 2, 4}, {OptOp::SWAP, 0, 1}}, 64, true);
  // twice is the axis order again; a swap before the upcasts names the same axes
  check_matmul_with({{OptOp::SWAP, 0, 1}, {OptOp::UPCAST, 0, 4}, {OptOp::SWAP, 1, 0}}, 16, false);
  // a batched matmul's three global loops, the batch moved inside
  Tensor a = Tensor::rand({3, 8, 5}).realize(), b = Tensor::rand({3, 5, 12}).realize();
  schedule::Schedule s = schedule::create_schedule({a.matmul(b).uop()});
  ASSERT_EQ(s.items.size(), 1u);
  std::vector<float> want;
  {
    Context c{{"NOOPT", 1}};
    want = a.matmul(b).to_vector<float>();
  }
  codegen::LoweredKernel k = codegen::lower(s.items[0].ast);
  ASSERT_TRUE(codegen::legal(k, {{OptOp::SWAP, 0, 2}}));
  codegen::LoweredKernel swapped = codegen::lower(s.items[0].ast, {{OptOp::SWAP, 0, 2}, {OptOp::UPCAST, 1, 4}});
  auto kernel = engine::build_kernel(runtime::get_device("CPU"), swapped, "swap_batched");
  std::vector<runtime::Buffer*> bufs;
  runtime::Buffer out(runtime::get_device("CPU"), 3 * 8 * 12, dtypes::float32);
  bufs.push_back(&out);
  for (size_t i = 1; i < s.items[0].bufs.size(); i++) bufs.push_back(&runtime::buffer_of(s.items[0].bufs[i]));
  engine::run_program(*kernel, bufs);
  std::vector<float> got(want.size());
  out.copyout(got.data(), got.size() * 4);
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(Opts, PaddedAxesKeepTheValues) {
  // rows padded 12 -> 16 and blocked by 8; columns padded 12 -> 16 as the vector (reads gated per lane: one vector
  // load where every lane is inside; stores gated per lane); both at once
  check_matmul_with({{OptOp::PADTO, 0, 8}, {OptOp::UPCAST, 0, 8}}, 12, false);
  check_matmul_with({{OptOp::PADTO, 1, 16}, {OptOp::VECTOR, 1, 16}}, 12, true);
  check_matmul_with({{OptOp::PADTO, 0, 5}, {OptOp::PADTO, 1, 8}, {OptOp::VECTOR, 1, 4}, {OptOp::UPCAST, 1, 2}, {OptOp::UPCAST, 0, 5}, {OptOp::SWAP, 0, 1}}, 13, true);
  uop::UOp ast = matmul_ast(12);
  codegen::LoweredKernel k = codegen::lower(ast);
  EXPECT_TRUE(codegen::legal(k, {{OptOp::PADTO, 0, 8}, {OptOp::UPCAST, 0, 8}}));
  EXPECT_FALSE(codegen::legal(k, {{OptOp::PADTO, 0, 8}, {OptOp::UPCAST, 0, 3}}));  // 3 does not divide 16
  EXPECT_FALSE(codegen::legal(k, {{OptOp::UPCAST, 0, 3}, {OptOp::PADTO, 0, 8}}));  // after the axis' other opts
  EXPECT_FALSE(codegen::legal(k, {{OptOp::PADTO, 2, 8}}));                         // the reduce axis
  EXPECT_THROW(codegen::lower(ast, {{OptOp::PADTO, 2, 8}}), InternalError);
}

// `n` floats that end where an inaccessible page begins: a kernel reading past them crashes the test (data is null
// when the pages cannot be mapped)
struct FloatsBeforeAGuardPage {
  float* data = nullptr;
  void* mem = MAP_FAILED;
  size_t mapped = 0;
  explicit FloatsBeforeAGuardPage(int64_t n) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = static_cast<size_t>(n) * 4;
    size_t span = (bytes + page - 1) / page * page;
    mapped = span + page;
    mem = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem != MAP_FAILED && mprotect(static_cast<char*>(mem) + span, page, PROT_NONE) == 0)
      data = reinterpret_cast<float*>(static_cast<char*>(mem) + span - bytes);
  }
  ~FloatsBeforeAGuardPage() {
    if (mem != MAP_FAILED) munmap(mem, mapped);
  }
};

// got == a (m x k) @ b (k x n), row-major, each within 1e-4 of a float64 sum
void expect_matmul(const std::vector<float>& got, const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double want = 0;
      for (int64_t r = 0; r < k; r++) want += double(a[i * k + r]) * b[r * n + j];
      ASSERT_NEAR(got[i * n + j], want, 1e-4) << i << "," << j;
    }
}

TEST(Opts, APrimeRowCountIsPaddedAndNeverReadPast) {
  // 197 rows (vit's tokens; a prime, so no divisor to block by): the heuristic pads to a multiple of its block and
  // the extra rows read row 196 again. A ends where an inaccessible page begins: a read past it would crash here
  const int64_t m = 197, k = 64, n = 48;
  FloatsBeforeAGuardPage guarded(m * k);
  ASSERT_NE(guarded.data, nullptr);
  float* av = guarded.data;
  for (int64_t i = 0; i < m * k; i++) av[i] = static_cast<float>((i * 7) % 13) * 0.25f - 1.5f;
  {
    Tensor a = Tensor::from_blob(av, {m, k}), b = Tensor::rand({k, n}).realize();
    schedule::Schedule s = schedule::create_schedule({a.matmul(b).uop()});
    ASSERT_EQ(s.items.size(), 1u);
    std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items[0].ast));
    auto pad = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::PADTO; });
    ASSERT_NE(pad, opts.end()) << codegen::opts_str(opts);
    EXPECT_EQ(pad->axis, 0);
    auto kernel = engine::get_kernel(s.items[0].ast, runtime::get_device("CPU"));
    EXPECT_NE(kernel->rendered.source.find("if ("), std::string::npos) << "the stores of the padded rows are gated";
    std::vector<float> bv = b.to_vector<float>();
    expect_matmul(a.matmul(b).to_vector<float>(), av, bv.data(), m, k, n);
  }
}

TEST(Opts, AColumnCountWithoutAWideDivisorIsPaddedToAVectorAndNeverReadPast) {
  // 100 output columns (squeezenet's 1000 classes, shufflenet's 116 channels): vectors of 4 by divisibility, or of
  // 16 over the columns padded to 112. The padded lanes read nothing: B ends where an inaccessible page begins, and
  // its last row's padded lanes would read past it
  const int64_t m = 24, k = 64, n = 100;
  FloatsBeforeAGuardPage guarded(k * n);
  ASSERT_NE(guarded.data, nullptr);
  float* bv = guarded.data;
  for (int64_t i = 0; i < k * n; i++) bv[i] = static_cast<float>((i * 5) % 11) * 0.25f - 1.25f;
  {
    Tensor a = Tensor::rand({m, k}).realize(), b = Tensor::from_blob(bv, {k, n});
    schedule::Schedule s = schedule::create_schedule({a.matmul(b).uop()});
    ASSERT_EQ(s.items.size(), 1u);
    std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items[0].ast));
    ASSERT_GE(opts.size(), 2u);
    EXPECT_EQ(codegen::opts_str({opts[0], opts[1]}), "PADTO(1,16) VECTOR(1,16)") << codegen::opts_str(opts);
    EXPECT_TRUE(codegen::lower(s.items[0].ast, opts).vectorized) << codegen::opts_str(opts);
    std::vector<float> av = a.to_vector<float>();
    expect_matmul(a.matmul(b).to_vector<float>(), av.data(), bv, m, k, n);
  }
}

TEST(Opts, AStride2PoolWithAnOddOutputWidthIsPaddedToVectorsAndNeverReadPast) {
  // squeezenet's first max pool: 27 output columns, stride 2, no vector width divides them. Padded to 28 they are 7
  // vectors of 4; each lane's window column is read as two vector loads and their even elements, under a gate per
  // element in the last vector of each row (its padded lane reads nothing: the input ends where an inaccessible
  // page begins, and the last row's padded lane would read past it). Checked against a plain loop, with a NaN at
  // the edge of a row that must win its windows
  const int64_t n = 3 * 55 * 55;
  FloatsBeforeAGuardPage guarded(n);
  ASSERT_NE(guarded.data, nullptr);
  float* xv = guarded.data;
  for (int64_t i = 0; i < n; i++) xv[i] = static_cast<float>((i * 7) % 19) * 0.5f - 4.f;
  xv[(1 * 55 + 10) * 55 + 54] = NAN;  // the last column, read only by the last output column
  Tensor x = Tensor::from_blob(xv, {1, 3, 55, 55});
  Tensor y = x.max_pool2d({3, 3}, 2);  // 27 x 27 outputs
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast);
  std::vector<Opt> opts = codegen::choose_opts(k);
  auto vec = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::VECTOR; });
  ASSERT_NE(vec, opts.end()) << codegen::opts_str(opts);
  EXPECT_EQ(k.full_shape[vec->axis], 27) << codegen::opts_str(opts);
  EXPECT_TRUE(codegen::lower(s.items.back().ast, opts).vectorized) << codegen::opts_str(opts);
  expect_max_pool_3x3_stride_2(y.to_vector<float>(), xv, 3, 55, 27);
}

TEST(Opts, PaddedAndNarrowStride2PoolsVectorizeOverTheirOutputColumns) {
  // resnet's stem pool pads by 1: its window columns are read under a gate per lane (two vector loads, lane by lane
  // where a window reaches the padding) and the padding is -inf by a mask per lane. All values negative: a padding
  // read as 0 would win the edge windows. A NaN in the first column must win its windows
  auto check = [](const Tensor& y, int64_t columns, int64_t width) {
    schedule::Schedule s = schedule::create_schedule({y.uop()});
    codegen::LoweredKernel k = codegen::lower(s.items.back().ast);
    std::vector<Opt> opts = codegen::choose_opts(k);
    auto vec = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::VECTOR; });
    ASSERT_NE(vec, opts.end()) << codegen::opts_str(opts);
    EXPECT_EQ(k.full_shape[vec->axis], columns) << codegen::opts_str(opts);
    EXPECT_EQ(vec->amount, width) << codegen::opts_str(opts);
    EXPECT_TRUE(codegen::lower(s.items.back().ast, opts).vectorized) << codegen::opts_str(opts);
  };
  std::vector<float> xv(2 * 48 * 48);
  for (size_t i = 0; i < xv.size(); i++) xv[i] = -1.f - static_cast<float>((i * 7) % 19) * 0.5f;
  xv[(1 * 48 + 9) * 48 + 0] = NAN;
  Tensor x = Tensor(xv, {1, 2, 48, 48}).realize();
  Tensor y = x.max_pool2d({3, 3}, 2, 1, 1);  // 24 x 24 outputs
  check(y, 24, 8);
  expect_max_pool_3x3_stride_2(y.to_vector<float>(), xv.data(), 2, 48, 24, 1);
  // squeezenet's later pools: 13 output columns, where padding to 16 adds more than the eighth that other kernels
  // allow; with no vector otherwise, vectors of 8 with 3 lanes reading nothing (the input ends at an inaccessible
  // page)
  const int64_t n = 3 * 27 * 27;
  FloatsBeforeAGuardPage guarded(n);
  ASSERT_NE(guarded.data, nullptr);
  for (int64_t i = 0; i < n; i++) guarded.data[i] = static_cast<float>((i * 5) % 17) * 0.25f - 2.f;
  guarded.data[(2 * 27 + 26) * 27 + 26] = NAN;  // the last element, read only by the last output
  Tensor narrow = Tensor::from_blob(guarded.data, {1, 3, 27, 27}).max_pool2d({3, 3}, 2);
  check(narrow, 13, 8);
  expect_max_pool_3x3_stride_2(narrow.to_vector<float>(), guarded.data, 3, 27, 13);
}

TEST(Opts, ARowReadInRunsAcrossATransposeIsStillAVector) {
  // attention's output: (heads, tokens, 64) read as (tokens, heads * 64), times a weight read as (out, in).T: along
  // the reduce axis both are contiguous in runs of 16 (the address jumps at each head), so it is the vector axis
  Tensor heads = Tensor::rand({12, 20, 64}).realize(), w = Tensor::rand({24, 768}).realize();
  Tensor y = heads.permute({1, 0, 2}).reshape({20, 768}).matmul(w.T());
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  codegen::LoweredKernel k = codegen::lower(s.items[0].ast);
  std::vector<Opt> opts = codegen::choose_opts(k);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0], (Opt{OptOp::VECTOR, 2, 16})) << codegen::opts_str(opts);
  EXPECT_TRUE(codegen::lower(s.items[0].ast, opts).vectorized);
  std::vector<float> want;
  {
    Context c{{"NOOPT", 1}};
    want = heads.permute({1, 0, 2}).reshape({20, 768}).matmul(w.T()).to_vector<float>();
  }
  std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < want.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-3) << i;
}

TEST(Opts, VectorLanesBecomeOneVectorValue) {
  // columns as 16-wide vectors (B's rows are contiguous, A's element is broadcast), rows as 4 copies
  check_matmul_with({{OptOp::VECTOR, 1, 16}, {OptOp::UPCAST, 0, 4}, {OptOp::UNROLL, 2, 4}}, 32, true);
  check_matmul_with({{OptOp::VECTOR, 1, 4}}, 8, true);
  check_matmul_with({}, 8, false);
  // rows as the vector: A is read with a stride, gathered; the stores are scattered
  check_matmul_with({{OptOp::VECTOR, 0, 8}, {OptOp::UNROLL, 2, 2}}, 16, true);
  // the reduce axis as the vector: one vector accumulator per output, summed across after the loop
  check_matmul_with({{OptOp::VECTOR, 2, 8}, {OptOp::UPCAST, 0, 2}}, 16, true);
  check_matmul_with({{OptOp::VECTOR, 2, 16}}, 16, true);  // the whole axis: no loop left
  // a vector axis copied too: 4 vectors of 8 columns; a reduce axis as 2 vectors of 8 added before the accumulator
  check_matmul_with({{OptOp::UPCAST, 1, 4}, {OptOp::VECTOR, 1, 8}}, 64, true);
  check_matmul_with({{OptOp::VECTOR, 2, 8}, {OptOp::UNROLL, 2, 2}, {OptOp::UPCAST, 1, 2}}, 32, true);
  EXPECT_THROW(codegen::lower(matmul_ast(16), {{OptOp::VECTOR, 1, 8}, {OptOp::UPCAST, 1, 4}}), InternalError);  // 32 > 16
  EXPECT_THROW(codegen::lower(matmul_ast(12), {{OptOp::VECTOR, 0, 3}}), InternalError);  // not a vector width
  EXPECT_THROW(codegen::lower(matmul_ast(16), {{OptOp::VECTOR, 0, 2}, {OptOp::VECTOR, 1, 2}}), InternalError);
}

TEST(Opts, AVectorWithoutAVectorFormFallsBackToCopies) {
  // float64 has no vector form: VECTOR on the axis of max(float64(a)) is lowered as UNROLL, with the same values
  Tensor a = Tensor::rand({4, 32}).realize();
  schedule::Schedule s = schedule::create_schedule({a.cast(dtypes::float64).max(1).uop()});
  // alone, and sharing its axis with an UNROLL (the copies then cover both)
  for (const std::vector<Opt>& opts : {std::vector<Opt>{{OptOp::VECTOR, 1, 16}}, std::vector<Opt>{{OptOp::VECTOR, 1, 8}, {OptOp::UNROLL, 1, 2}}}) {
    codegen::LoweredKernel k = codegen::lower(s.items.at(0).ast, opts);
    EXPECT_FALSE(k.vectorized);
    EXPECT_EQ(k.opts, opts);
    runtime::Device& cpu = runtime::get_device("CPU");
    auto kernel = engine::build_kernel(cpu, k, "vector_fallback_test");
    std::vector<runtime::Buffer*> bufs;
    for (const uop::UOp& b : s.items.at(0).bufs) bufs.push_back(&runtime::buffer_of(b));
    engine::run_program(*kernel, bufs);
    std::vector<double> got(4);
    std::vector<float> x = a.to_vector<float>();
    bufs[0]->copyout(got.data(), 32);
    for (int r = 0; r < 4; r++)
      EXPECT_EQ(got[r], double(*std::max_element(x.begin() + r * 32, x.begin() + r * 32 + 32))) << codegen::opts_str(opts);
  }
}

// A reduction over the vector axis of a value that does not vary along the lanes (here a comparison that folds
// to true: a uint8 is never -1) still counts every lane: the count of 32 elements read 2 (32 / 16 lanes) before
// the lane was named among the reduction's ranges. Float counts keep a vector accumulator; int ones fall back to
// copies.
TEST(Opts, AReduceOverTheVectorCountsEveryLaneOfAnInvariantValue) {
  Tensor u8 = Tensor::randint({4, 32}, 0, 256, dtypes::int32).cast(dtypes::uint8).realize();
  Tensor always = u8.cast(dtypes::int32) != -1;
  for (DType dt : {dtypes::float32, dtypes::int32}) {
    schedule::Schedule s = schedule::create_schedule({always.cast(dt).sum(1).uop()});
    for (const std::vector<Opt>& opts : {std::vector<Opt>{{OptOp::VECTOR, 1, 16}}, std::vector<Opt>{{OptOp::VECTOR, 1, 8}, {OptOp::UNROLL, 1, 2}}}) {
      codegen::LoweredKernel k = codegen::lower(s.items.at(0).ast, opts);
      EXPECT_EQ(k.vectorized, dt == dtypes::float32) << codegen::opts_str(opts);
      auto kernel = engine::build_kernel(runtime::get_device("CPU"), k, "vector_count_test");
      std::vector<runtime::Buffer*> bufs;
      for (const uop::UOp& b : s.items.at(0).bufs) bufs.push_back(&runtime::buffer_of(b));
      engine::run_program(*kernel, bufs);
      std::vector<int32_t> got(4);
      std::vector<float> gotf(4);
      if (dt == dtypes::float32) bufs[0]->copyout(gotf.data(), 16), std::copy(gotf.begin(), gotf.end(), got.begin());
      else bufs[0]->copyout(got.data(), 16);
      EXPECT_EQ(got, std::vector<int32_t>(4, 32)) << dt.name() << " " << codegen::opts_str(opts);
    }
  }
  // the same through the API: a mean loss over targets read from a uint8 buffer (where it was found: 4x too big)
  Tensor logits = Tensor::rand({2, 4, 8}).realize();
  Tensor y8 = Tensor(std::vector<uint8_t>{5, 2, 7, 4, 6, 3, 0, 5, 1, 2}, {2, 5}).realize();
  Tensor y = y8.shrink({{0, 2}, {1, 5}}).cast(dtypes::int32);
  Tensor y32(y.to_vector<int32_t>(), {2, 4});
  EXPECT_FLOAT_EQ(logits.sparse_categorical_crossentropy(y).item<float>(), logits.sparse_categorical_crossentropy(y32).item<float>());
}

TEST(Opts, AScatteredVectorKeepsItsElementType) {
  // a float64 transpose with the vector across the stored rows: each lane's stores keep float64 (1 + 2^-40 does
  // not survive a float32), and the same lane of the 4 upcast columns is joined into one vector store
  std::vector<double> v(16 * 8);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<double>(i) + 0x1p-40;
  Tensor a = Tensor(v, {16, 8}).realize();
  schedule::Schedule s = schedule::create_schedule({a.transpose(0, 1).contiguous().uop()});
  std::vector<Opt> opts{{OptOp::VECTOR, 0, 4}, {OptOp::UPCAST, 1, 4}};
  codegen::LoweredKernel k = codegen::lower(s.items.at(0).ast, opts);
  ASSERT_TRUE(k.vectorized);
  auto kernel = engine::build_kernel(runtime::get_device("CPU"), k, "scatter_f64_test");
  std::vector<runtime::Buffer*> bufs;
  for (const uop::UOp& b : s.items.at(0).bufs) bufs.push_back(&runtime::buffer_of(b));
  engine::run_program(*kernel, bufs);
  std::vector<double> got(16 * 8);
  bufs[0]->copyout(got.data(), got.size() * 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 16; j++) ASSERT_EQ(got[i * 16 + j], v[j * 8 + i]) << i << "," << j;
}

TEST(Opts, SqrtAndSinAreLibmPerLaneInVectorCode) {
  // the lanes of a vector sqrt or sin call libm one by one: the same values as scalar code, and the kernel's other
  // ops stay vectors (a row sum of sqrt(a) + sin(a))
  Tensor a = (Tensor::rand({4, 64}) * 10).realize();
  Tensor y = (a.sqrt() + a.sin()).sum(1);
  ASSERT_NO_FATAL_FAILURE(expect_heuristic_vector(y));
  std::vector<float> x = a.to_vector<float>(), got = y.to_vector<float>();
  for (int r = 0; r < 4; r++) {
    double want = 0;
    for (int c = 0; c < 64; c++) want += double(std::sqrt(x[r * 64 + c])) + double(std::sin(x[r * 64 + c]));
    EXPECT_NEAR(got[r], want, 1e-4) << r;
  }
}

TEST(Opts, MaxWhereComparisonsAndCastsHaveVectorForms) {
  // a row sum of max(x - 100, 0) * where(x < 50, 2, x) over uint8 input: the heuristic vectorizes the contiguous
  // reduce axis, and the values match a plain loop
  std::vector<uint8_t> bytes(4 * 64);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>((i * 37) % 251);
  Tensor x = Tensor(bytes, {4, 64}).realize(), f = x.cast(dtypes::float32);
  Tensor y = ((f - 100).maximum(0) * (f < 50).where(2.0f, f)).sum(1) + (f * -1).max(1);  // a max reduce too
  ASSERT_NO_FATAL_FAILURE(expect_heuristic_vector(y));
  std::vector<float> got = y.to_vector<float>();
  for (int r = 0; r < 4; r++) {
    double want = 0;
    for (int c = 0; c < 64; c++) {
      double v = bytes[r * 64 + c];
      want += std::max(v - 100, 0.0) * (v < 50 ? 2.0 : v);
    }
    want += -double(*std::min_element(bytes.begin() + r * 64, bytes.begin() + r * 64 + 64));
    EXPECT_NEAR(got[r], want, 1e-6 * want) << "row " << r;
  }
}

TEST(Opts, SixteenBitFloatLoadsAreVectors) {
  // a row sum of float16 / bfloat16 values times a float32 vector (a half weight's matrix-vector product): the
  // heuristic vectorizes the contiguous rows, the 16-bit loads are vector loads widened to float32, and every value
  // comes out as the scalar conversion gives it: subnormals, -0, inf and NaN included (one per row)
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    std::vector<float> xs(4 * 64);
    for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<float>(static_cast<int>((i * 29) % 23) - 11) * 0.25f;
    xs[3] = dt == dtypes::float16 ? 6e-8f : 1e-39f;  // subnormal in the 16-bit format
    xs[70] = -0.0f;
    xs[130] = INFINITY;
    xs[200] = NAN;
    Tensor w = Tensor(xs, {4, 64}).cast(dt).realize(), v = Tensor::arange(64).cast(dtypes::float32).realize();
    Tensor y = (w.cast(dtypes::float32) * v).sum(1);
    ASSERT_NO_FATAL_FAILURE(expect_heuristic_vector(y, dt.name()));
    std::vector<float> wv = w.cast(dtypes::float32).to_vector<float>(), got = y.to_vector<float>();
    EXPECT_GT(wv[3], 0.0f) << "the subnormal survives the cast: " << wv[3];
    // rows padded around the matrix: the vector loads are gated (the same gate for every lane)
    std::vector<float> padded = (w.pad({{1, 1}, {0, 0}}).cast(dtypes::float32) * v).sum(1).to_vector<float>();
    ASSERT_EQ(padded.size(), 6u);
    EXPECT_EQ(padded[0], 0.0f);
    EXPECT_EQ(padded[5], 0.0f);
    EXPECT_EQ(padded[1], y.to_vector<float>()[0]);
    for (int r = 0; r < 4; r++) {
      float want = 0;
      for (int c = 0; c < 64; c++) want += wv[r * 64 + c] * static_cast<float>(c);
      if (r == 2 || r == 3) {
        EXPECT_EQ(std::isnan(got[r]), r == 3 || std::isnan(want)) << dt.name() << " row " << r << " " << got[r];
      }
      if (r == 2) {
        EXPECT_TRUE(std::isinf(got[r])) << dt.name() << " " << got[r];
      }
      if (r < 2) {
        EXPECT_NEAR(got[r], want, 1e-4 * std::fabs(want) + 1e-30) << dt.name() << " row " << r;
      }
    }
  }
}

TEST(Opts, EveryFloat16ReadAloneOrAsAVectorIsTheHostConversion) {
  // all 65536 float16 bit patterns cast to float32 by a kernel whose loads are scalars or vectors of 4, 8 and 16 (the
  // widths that take the CPU's conversion instruction where it has one, F16C or AVX-512, integer ops elsewhere),
  // bit for bit against the host's scalar conversion; a NaN keeps its sign and payload, and may come out quieted
  // (IEEE 754's conversions quiet a signaling NaN, the instruction does)
  std::vector<uint16_t> bits(65536);
  std::iota(bits.begin(), bits.end(), uint16_t{0});
  Tensor x = Tensor(bits, {4096, 16}).bitcast(dtypes::float16).realize();
  schedule::Schedule s = schedule::create_schedule({x.cast(dtypes::float32).uop()});
  runtime::Device& cpu = runtime::get_device("CPU");
  runtime::Buffer in(cpu, 65536, dtypes::float16), out(cpu, 65536, dtypes::float32);
  in.copyin(bits.data(), bits.size() * 2);
  for (int64_t n : {1, 4, 8, 16}) {
    std::vector<Opt> opts;
    if (n > 1) opts.push_back({OptOp::VECTOR, 0, n});  // the kernel is one loop of 65536
    codegen::LoweredKernel k = codegen::lower(s.items.back().ast, opts);
    ASSERT_EQ(k.vectorized, n > 1) << n;
    auto kernel = engine::build_kernel(cpu, k, "f16_widen_" + std::to_string(n));
    std::string helper = n > 1 ? "tg_f16_to_f32_" + std::to_string(n) + "(" : "tg_f16_to_f32(";
    EXPECT_NE(kernel->rendered.source.find(helper), std::string::npos) << n;
    EXPECT_NE(kernel->rendered.source.find("__builtin_ia32_vcvtph2ps"), std::string::npos) << n;
    engine::run_program(*kernel, {&out, &in});
    std::vector<uint32_t> got(65536);
    out.copyout(got.data(), got.size() * 4);
    for (uint32_t h = 0; h < 65536; h++) {
      uint32_t want = std::bit_cast<uint32_t>(half_bits_to_float(static_cast<uint16_t>(h)));
      bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
      ASSERT_EQ(nan ? got[h] | 0x400000u : got[h], nan ? want | 0x400000u : want) << "width " << n << " bits 0x" << std::hex << h;
    }
  }
}

TEST(Opts, ANarrowMatrixVectorProductStreamsItsRowsOneByOne) {
  // a product whose matrix is bytes (a quantized weight's) or float16: the vector along the reduce axis, unrolled by
  // up to 16 for one row of x (a K-quant's block of 256 per step; less where the row is shorter), and no block over
  // the matrix's rows (it streams row after row), however long the row. With more rows of x, a byte
  // matrix is blocked over x's rows first (each dequantized value serves 8 of them) and unrolled by 4; a float16 one
  // over its own rows first, unrolled by 2. A float32 matrix keeps its block of 8 rows and no unroll. The values are
  // integers, exact in any order of summation
  struct Case {
    DType dt;
    int64_t m, k;
    std::vector<Opt> want;
  };
  std::vector<Case> cases{
      {dtypes::uint8, 1, 64, {{OptOp::VECTOR, 1, 16}, {OptOp::UNROLL, 1, 4}}},
      {dtypes::float16, 1, 64, {{OptOp::VECTOR, 1, 16}, {OptOp::UNROLL, 1, 4}}},
      {dtypes::float32, 1, 64, {{OptOp::VECTOR, 1, 16}, {OptOp::UPCAST, 0, 8}}},
      {dtypes::uint8, 1, 8192, {{OptOp::VECTOR, 1, 16}, {OptOp::UNROLL, 1, 16}}},
      {dtypes::float16, 1, 128, {{OptOp::VECTOR, 1, 16}, {OptOp::UNROLL, 1, 8}}},
      {dtypes::uint8, 2, 64, {{OptOp::VECTOR, 2, 16}, {OptOp::UPCAST, 0, 2}, {OptOp::UPCAST, 1, 8}, {OptOp::UNROLL, 2, 4}}},
      {dtypes::uint8, 32, 64, {{OptOp::VECTOR, 2, 16}, {OptOp::UPCAST, 0, 8}, {OptOp::UPCAST, 1, 2}, {OptOp::UNROLL, 2, 4}}},
      {dtypes::float16, 32, 64, {{OptOp::VECTOR, 2, 16}, {OptOp::UPCAST, 1, 8}, {OptOp::UPCAST, 0, 2}, {OptOp::UNROLL, 2, 2}}},
  };
  for (const Case& c : cases) {
    std::vector<float> xs(static_cast<size_t>(c.m * c.k));
    for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<float>(i % 7) - 3.0f;
    Tensor x = Tensor(xs, {c.m, 1, c.k}).realize();
    Tensor w = (Tensor::arange(0, static_cast<double>(8 * c.k), 1, dtypes::int32).reshape({8, c.k}) % 13).cast(c.dt).realize();
    Tensor y = (w.cast(dtypes::float32) * x).sum(2);
    schedule::Schedule s = schedule::create_schedule({y.uop()});
    std::string what = c.dt.name() + " m=" + std::to_string(c.m) + " k=" + std::to_string(c.k);
    EXPECT_EQ(codegen::opts_str(codegen::choose_opts(codegen::lower(s.items.back().ast))), codegen::opts_str(c.want)) << what;
    std::vector<float> got = y.to_vector<float>();
    for (int64_t i = 0; i < c.m; i++)
      for (int64_t r = 0; r < 8; r++) {
        float want = 0;
        for (int64_t j = 0; j < c.k; j++) want += static_cast<float>((r * c.k + j) % 13) * xs[static_cast<size_t>(i * c.k + j)];
        EXPECT_EQ(got[static_cast<size_t>(i * 8 + r)], want) << what << " at " << i << ", " << r;
      }
  }
}

TEST(Opts, LogicOnMasksHasVectorForms) {
  // row sums of relu (x <= 0 is x < 0 | !(x != 0), NaN kept) plus a select on an xor of two masks and-ed with a
  // scalar bool: masks are vectors of -1/0, a scalar bool beside them -1 or 0. The heuristic vectorizes the rows,
  // and the sums (exact: halves) match a plain loop, a NaN row included
  std::vector<float> xs(4 * 64);
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<float>(static_cast<int>((i * 37) % 29) - 14) * 0.5f;
  xs[70] = NAN;
  for (bool on : {true, false}) {
    Tensor x = Tensor(xs, {4, 64}).realize(), flag = Tensor(on).realize();
    Tensor y = (x.relu() + (x < 2).bitwise_xor(x > -3).bitwise_and(flag).where(10.0f, 0.0f)).sum(1);
    ASSERT_NO_FATAL_FAILURE(expect_heuristic_vector(y));
    std::vector<float> got = y.to_vector<float>();
    for (int r = 0; r < 4; r++) {
      float want = 0;
      for (int c = 0; c < 64; c++) {
        float v = xs[r * 64 + c];
        want += (v <= 0 ? 0.0f : v) + (on && ((v < 2) != (v > -3)) ? 10.0f : 0.0f);
      }
      if (r == 1) EXPECT_TRUE(std::isnan(got[r])) << got[r];
      else EXPECT_EQ(got[r], want) << "row " << r << " flag " << on;
    }
  }
}

// A padded read along the vector axis (a convolution's zero border) is one vector load where every lane is inside
// and lane by lane where some are outside: vectors wholly inside, straddling either edge and wholly outside the
// input all give the values of a plain loop.
TEST(Opts, PaddedReadsAlongTheVectorKeepTheirValues) {
  struct Case {
    int64_t len, pad;
  };
  for (Case c : {Case{24, 5}, Case{10, 20}}) {
    Tensor x = (Tensor::rand({2, 1, 1, c.len}) - 0.5f).realize(), w = Tensor::rand({1, 1, 1, 3}).realize();
    Tensor y = x.conv2d(w, std::nullopt, 1, 1, 1, {0, c.pad});
    ASSERT_NO_FATAL_FAILURE(expect_heuristic_vector(y));
    std::vector<float> xs = x.to_vector<float>(), ws = w.to_vector<float>(), got = y.to_vector<float>();
    int64_t out = c.len + 2 * c.pad - 2;
    ASSERT_EQ(got.size(), static_cast<size_t>(2 * out));
    for (int64_t b = 0; b < 2; b++)
      for (int64_t i = 0; i < out; i++) {
        double want = 0;
        for (int64_t k = 0; k < 3; k++) {
          int64_t at = i + k - c.pad;
          if (at >= 0 && at < c.len) want += double(xs[b * c.len + at]) * ws[k];
        }
        ASSERT_NEAR(got[b * out + i], want, 1e-6) << "length " << c.len << " pad " << c.pad << " at " << b << "," << i;
      }
  }
}

// A convolution's input is broadcast to a vector of output channels: with a reuse axis to block for, the heuristic
// gives each broadcast two vectors of channels (padded or not). A column sum has nothing to reuse: its vector axis
// is copied 8 times instead (independent accumulators).
TEST(Opts, BroadcastsServeTwoVectorsWhenThereIsReuse) {
  Tensor x = Tensor::rand({2, 8, 10, 10}).realize(), w = Tensor::rand({32, 8, 3, 3}).realize();
  for (int64_t pad : {1, 0}) {
    schedule::Schedule s = schedule::create_schedule({x.conv2d(w, std::nullopt, 1, 1, 1, pad).uop()});
    std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items.back().ast));
    ASSERT_FALSE(opts.empty());
    ASSERT_EQ(opts[0].op, OptOp::VECTOR) << codegen::opts_str(opts);
    EXPECT_EQ(opts[0].amount, 16);
    EXPECT_EQ(opts[1], (Opt{OptOp::UPCAST, opts[0].axis, 2})) << "padding " << pad << ": " << codegen::opts_str(opts);
  }
  Tensor a = Tensor::rand({64, 256}).realize();
  schedule::Schedule s = schedule::create_schedule({a.sum(0).uop()});
  std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items.back().ast));
  ASSERT_FALSE(opts.empty());
  ASSERT_EQ(opts[0].op, OptOp::VECTOR) << codegen::opts_str(opts);
  EXPECT_NE(std::find(opts.begin(), opts.end(), Opt{OptOp::UPCAST, opts[0].axis, 8}), opts.end()) << codegen::opts_str(opts);
}

// got[i] is libm's f(xs[i]) in double: within 3 ulp, a subnormal's last bit, and exactly for infinities, zeros and NaN
void expect_libm_values(const std::vector<float>& xs, const std::vector<float>& got, double (*want_of)(double)) {
  for (size_t i = 0; i < xs.size(); i++) {
    double want = want_of(static_cast<double>(xs[i]));
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << xs[i];
    else if (std::fabs(want) > FLT_MAX || std::fabs(want) < 1e-46) EXPECT_EQ(got[i], static_cast<float>(want)) << xs[i];
    else EXPECT_NEAR(got[i], want, std::max(std::fabs(want) * 4e-7, 1.5e-45)) << xs[i];
  }
}

// the sources of the kernels that compute t
std::string kernel_source(const Tensor& t) {
  std::string src;
  for (const schedule::ScheduleItem& item : schedule::create_schedule({t.uop()}).items)
    if (item.kind == schedule::ScheduleItem::Kind::Kernel) src += engine::get_kernel(item.ast, runtime::get_device("CPU"))->rendered.source;
  return src;
}

// f over xs (padded to whole vectors) must be vectorized by the heuristic and match libm's f (expect_libm_values)
void check_vector_math(std::vector<float> xs, const std::function<Tensor(const Tensor&)>& f, double (*want_of)(double)) {
  while (xs.size() % 16) xs.push_back(1.0f);
  Tensor x = Tensor(xs, {static_cast<int64_t>(xs.size())}).realize(), y = f(x);
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  std::vector<Opt> opts = codegen::choose_opts(codegen::lower(s.items.back().ast));
  ASSERT_EQ(opts.size(), 1u);
  EXPECT_EQ(opts[0].op, OptOp::VECTOR);
  EXPECT_TRUE(codegen::lower(s.items.back().ast, opts).vectorized);
  expect_libm_values(xs, y.to_vector<float>(), want_of);
}

TEST(Opts, Exp2AndLog2OfAVectorMatchLibm) {
  // exp2 and log2 in vector code are the renderer's polynomials: across the float range, subnormal inputs and
  // results, the overflow edge and the special values
  std::vector<float> xs;
  for (int i = -1600; i < 1600; i++) xs.push_back(static_cast<float>(i) * 0.0913f);  // -146 .. 146
  for (float v : {-149.0f, -149.7f, -126.5f, -125.99f, 127.99f, 128.0f, 0.0f, -0.0f, 1e-8f, 0.5f, -0.5f, 300.0f, -300.0f})
    xs.push_back(v);
  for (float v : {INFINITY, -INFINITY, NAN}) xs.push_back(v);
  check_vector_math(xs, [](const Tensor& t) { return t.exp2(); }, [](double v) { return std::exp2(v); });
  std::vector<float> ps;
  for (int i = 0; i < 3000; i++) ps.push_back(std::ldexp(1.0f + static_cast<float>(i % 97) / 97.0f, i / 10 - 149));
  for (float v : {1.0f, 0.999999f, 1.000001f, 2.0f, 0.5f, 1e-45f, 1e-40f, 1.17549435e-38f, FLT_MAX, 0.0f, -0.0f, -1.0f})
    ps.push_back(v);
  for (float v : {INFINITY, -INFINITY, NAN}) ps.push_back(v);
  check_vector_math(ps, [](const Tensor& t) { return t.log2(); }, [](double v) { return std::log2(v); });
}

TEST(Opts, Exp2OfAScalarIsThePolynomialAndMatchesLibm) {
  // scalar float32 exp2 is the same polynomial inlined (no libm call, so clang can vectorize a loop the opts could
  // not, one of symbolic length): the source calls no exp2f, and the values are libm's across the range
  std::vector<float> xs;
  for (int i = -1600; i < 1600; i++) xs.push_back(static_cast<float>(i) * 0.0913f);
  for (float v : {-149.0f, -149.7f, -150.5f, -126.5f, 127.99f, 128.0f, 0.0f, -0.0f, 1e-8f, 300.0f, -300.0f})
    xs.push_back(v);
  for (float v : {INFINITY, -INFINITY, NAN}) xs.push_back(v);
  Context noopt{{"NOOPT", 1}};
  Tensor x = Tensor(xs, {static_cast<int64_t>(xs.size())}).realize(), y = x.exp2();
  std::string src = kernel_source(y);
  EXPECT_EQ(src.find("exp2f"), std::string::npos) << src;
  EXPECT_NE(src.find("tg_exp2_float("), std::string::npos) << src;
  expect_libm_values(xs, y.to_vector<float>(), [](double v) { return std::exp2(v); });
}

TEST(Opts, AnExactProductPlusAnOffsetIsOneFMAWithTheSameValues) {
  // codes * half scale + offset (a dequantization): the product is exact, so it may be one FMA and the values stay
  // those of one rounding of the sum; a product of float32 values of unknown bits stays unfused
  const int64_t n = 4096;
  std::vector<uint8_t> codes(n);
  std::vector<float> scales(n), offsets(n), a(n), b(n);
  for (int64_t i = 0; i < n; i++) {
    codes[i] = static_cast<uint8_t>((i * 37) % 256);
    scales[i] = std::ldexp(1.0f + static_cast<float>(i % 1023) / 1024.0f, static_cast<int>(i % 30) - 20);
    offsets[i] = std::sin(static_cast<float>(i)) * 1000.0f;
    a[i] = std::cos(static_cast<float>(i)) * 3.1f, b[i] = std::sin(static_cast<float>(i) * 0.7f);
  }
  Tensor q = Tensor(codes, {n}), s = Tensor(scales, {n}).cast(dtypes::float16).realize(), o = Tensor(offsets, {n});
  Tensor y = (q & 15).cast(dtypes::float32) * s.cast(dtypes::float32) + o;
  EXPECT_NE(kernel_source(y).find("tg_fma_float"), std::string::npos) << kernel_source(y);
  std::vector<float> got = y.to_vector<float>(), half = s.cast(dtypes::float32).to_vector<float>();
  for (int64_t i = 0; i < n; i++) {
    float want = static_cast<float>(static_cast<double>(codes[i] & 15) * half[i] + static_cast<double>(offsets[i]));
    ASSERT_EQ(got[i], want) << i;
  }
  Tensor z = Tensor(a, {n}) * Tensor(b, {n}) + o;
  EXPECT_EQ(kernel_source(z).find("tg_fma_float"), std::string::npos) << kernel_source(z);
  std::vector<float> zs = z.to_vector<float>();
  for (int64_t i = 0; i < n; i++) {  // the product rounded, then the sum (a double product of floats is exact)
    float product = static_cast<float>(static_cast<double>(a[i]) * b[i]);
    ASSERT_EQ(zs[i], product + offsets[i]) << i;
  }
}

TEST(Opts, AValueOfA4BitCodeIsATableLookupWithTheSameBits) {
  // dequantized 4-bit codes (a low or a high nibble of each byte, times a per-row scale, minus an offset) summed over
  // 2 rows: where the code's value takes three vector instructions or more (Q4_0's (code - 8) * scale: an add, a
  // convert, a multiply), the vector kernel computes each row's 16 possible values once and permutes them by the
  // codes (tg_lut16); not for two (a convert and a multiply), which cost no more than the permute, nor for 8-bit
  // codes. The bits equal the scalar kernel's (NOOPT), a NaN and an infinite scale too. (The scalar kernel sums a
  // form with an offset in another order, the products apart from the offsets: there, scales of few bits keep
  // every sum exact.)
  const int64_t n = 256;
  std::vector<uint8_t> bytes(2 * n);
  for (int64_t i = 0; i < 2 * n; i++) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>((i * 73 + 11) % 256);
  Tensor b = Tensor(bytes, {2, n}).realize();
  for (auto scales : std::vector<std::vector<float>>{{0.37f, -1.5e-3f}, {0.375f, -3.0f / 2048}, {INFINITY, NAN}}) {
    Tensor d = Tensor(scales, {2, 1}).realize(), m = Tensor(std::vector<float>{0.25f, -7.0f}, {2, 1}).realize();
    struct Form {
      Tensor value;
      bool table;
    };
    std::vector<Form> forms{{((b & 15).cast(dtypes::int32) - 8).cast(dtypes::float32) * d, true},  // Q4_0
                            {(b >> 4).cast(dtypes::float32) * d, false},
                            {b.cast(dtypes::float32) * d, false}};
    if (scales[0] != 0.37f) forms.push_back({(b >> 4).cast(dtypes::float32) * d - m, true});
    for (size_t f = 0; f < forms.size(); f++) {
      Tensor y = forms[f].value.sum(0);
      std::string src = kernel_source(y);
      EXPECT_EQ(src.find("tg_lut16(") != std::string::npos, forms[f].table) << f << "\n" << src;
      std::vector<float> got = y.to_vector<float>(), want;
      {
        Context noopt{{"NOOPT", 1}};
        want = forms[f].value.sum(0).to_vector<float>();
      }
      for (int64_t i = 0; i < n; i++) {
        float g = got[static_cast<size_t>(i)], w = want[static_cast<size_t>(i)];
        if (std::isnan(w)) ASSERT_TRUE(std::isnan(g)) << f << " " << i;
        else ASSERT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(w)) << f << " " << i << ": " << g << " vs " << w;
      }
    }
  }
}

TEST(Opts, ProductsSummedRoundOncePerTermAndNowhereElse) {
  // with a = 1 + 2^-12: a*a = 1 + 2^-11 + 2^-24 exactly, which float rounds to 1 + 2^-11. Summed as
  // -(1 + 2^-11) + a*a with one rounding per term (an FMA), the sum is exactly 2^-24; rounding a*a first gives 0.
  // the kernels' compiler, not CC: with CC unset and no clang on PATH the CPU compiles with gcc (or cc) too
  runtime::Device& dev = runtime::get_device(runtime::default_device());
  if (dev.name().rfind("CPU", 0) == 0 && dev.compiler().compiler_id().find("clang version") == std::string::npos)
    GTEST_SKIP() << "gcc does not contract the helper (the kernels' compiler: " << dev.compiler().compiler_id() << ")";
  float a = 1.0f + std::ldexp(1.0f, -12);
  Tensor x({-(1.0f + std::ldexp(1.0f, -11)), a}), y({1.0f, a});
  {
    Context noopt{{"NOOPT", 1}};  // one scalar accumulator, the terms in order
    EXPECT_EQ((x * y).sum().item<float>(), std::ldexp(1.0f, -24));
  }
  // elementwise code is not contracted: t*t - t*u with t = u = a stays 0 (an FMA there would give 2^-24)
  Tensor t({a}), u({a});
  EXPECT_EQ((t * t - t * u).item<float>(), 0.0f);
}

TEST(Beam, SearchesOnceThenReadsTheDiskCache) {
  Context search_everything{{"BEAM_MIN_US", 0}};  // a small kernel keeps the search short
  constexpr int64_t n = 16;
  uop::UOp ast = matmul_ast(n);
  codegen::LoweredKernel k = codegen::lower(ast);
  runtime::Device& cpu = runtime::get_device("CPU");
  MatmulBuffers m(n, std::vector<std::vector<float>>(3, std::vector<float>(n * n, 1.0f)));
  std::vector<runtime::Buffer*>& bufs = m.bufs;
  std::vector<Opt> first = engine::beam_search(ast, k, cpu, bufs, 1);
  EXPECT_TRUE(codegen::legal(k, first));
  int64_t compiled = builds();
  std::vector<Opt> second = engine::beam_search(ast, k, cpu, bufs, 1);
  EXPECT_EQ(first, second);
  EXPECT_EQ(builds(), compiled);  // read back from the disk cache: no candidate built
  // the chosen kernel computes the matmul of ones: 16 everywhere
  auto kernel = engine::build_kernel(cpu, codegen::lower(ast, first), "beam_test");
  engine::run_program(*kernel, bufs);
  std::vector<float> out(n * n);
  bufs[0]->copyout(out.data(), out.size() * 4);
  EXPECT_EQ(out, std::vector<float>(n * n, 16.0f));
}

TEST(Beam, ABudgetOfZeroSecondsTimesOnlyTheStartingPoints) {
  // BEAM_BUDGET bounds the seconds of search per kernel: with 0 no round runs, and the choice is the faster of no
  // opts and the heuristic's (each candidate is built at most twice: compiled, then loaded)
  std::string dir = ::testing::TempDir() + "tg_beam_budget_cache";
  Context ctx{{"BEAM_MIN_US", 0}, {"BEAM_BUDGET", 0}, {"XDG_CACHE_HOME", dir}};
  constexpr int64_t n = 20;
  uop::UOp ast = matmul_ast(n);
  codegen::LoweredKernel k = codegen::lower(ast);
  runtime::Device& cpu = runtime::get_device("CPU");
  MatmulBuffers m(n, std::vector<std::vector<float>>(3, std::vector<float>(n * n, 1.0f)));
  int64_t before = builds();
  std::vector<Opt> got = engine::beam_search(ast, k, cpu, m.bufs, 2);
  EXPECT_LE(builds() - before, 4);
  EXPECT_TRUE(got.empty() || got == codegen::choose_opts(k)) << codegen::opts_str(got);
  std::filesystem::remove_all(dir);
}

TEST(Beam, AShippedCacheFileDecidesWithoutSearching) {
  // a search with BEAM_CACHE writes one line; a line edited to other legal opts is what the next search returns,
  // with nothing compiled
  Context search_everything{{"BEAM_MIN_US", 0}};
  std::string file = ::testing::TempDir() + "tg_beam_cache_test.txt";
  std::remove(file.c_str());
  Context beam_cache{{"BEAM_CACHE", file}};
  constexpr int64_t n = 12;
  uop::UOp ast = matmul_ast(n);
  codegen::LoweredKernel k = codegen::lower(ast);
  runtime::Device& cpu = runtime::get_device("CPU");
  MatmulBuffers m(n, std::vector<std::vector<float>>(3, std::vector<float>(n * n, 1.0f)));
  engine::beam_search(ast, k, cpu, m.bufs, 1);
  std::string line;
  {
    std::ifstream in(file);
    ASSERT_TRUE(std::getline(in, line)) << "no line in " << file;
  }
  std::string hash = line.substr(0, line.find(' '));
  EXPECT_EQ(hash.size(), 16u);
  // opts the search did not choose
  std::vector<Opt> edited{{OptOp::UPCAST, 0, 3}, {OptOp::UNROLL, 2, 2}};
  if (line.substr(hash.size() + 1) == codegen::opts_str(edited)) edited = {{OptOp::UPCAST, 1, 2}};
  std::ofstream(file) << hash << " " << codegen::opts_str(edited) << "\n";
  int64_t compiled = builds();
  EXPECT_EQ(engine::beam_search(ast, k, cpu, m.bufs, 1), edited);
  EXPECT_EQ(builds(), compiled);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace tg
