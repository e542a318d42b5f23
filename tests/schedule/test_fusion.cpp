// How graphs split into kernels: the fusion rules of GUIDE section 2, counted on real runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <tg/tg.h>

#include "codegen/lower.h"
#include "codegen/opts.h"
#include "engine/kernel_cache.h"
#include "runtime/device.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "schedule/schedule.h"
#include "state/gguf_quants.h"

using namespace tg;

namespace {

// kernels launched while realizing `t`
int64_t kernels_for(Tensor t) {
  int64_t before = GlobalCounters::kernel_count;
  t.realize();
  return GlobalCounters::kernel_count - before;
}

Tensor iota(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::arange(static_cast<double>(n)).cast(dtypes::float32).reshape(shape).contiguous().realize();
}

// the one kernel that computes t, and its source
std::shared_ptr<const engine::CompiledKernel> only_kernel(const Tensor& t) {
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  EXPECT_EQ(s.items.size(), 1u);
  return engine::get_kernel(s.items.at(0).ast, runtime::get_device("CPU"));
}
std::string kernel_source(const Tensor& t) { return only_kernel(t)->rendered.source; }

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
  return n;
}

}  // namespace

TEST(Fusion, ConstantsFoldToOneKernelThatReadsNothing) {
  Tensor r = Tensor(2.0f) + Tensor(3.0f);
  schedule::Schedule s = schedule::create_schedule({r.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].bufs.size(), 1u);  // the output only
  std::string src = kernel_source(r);
  EXPECT_NE(src.find("data0[0] = 5.0f;"), std::string::npos) << src;
  EXPECT_EQ(r.item<float>(), 5.0f);
}

TEST(Fusion, AReduceOfABroadcastConstantCountsItsElements) {
  // regression: the constant's VIEW was dropped, so the kernel lost the reduce's loop and stored 1
  EXPECT_EQ(Tensor::ones({4}).sum().item<float>(), 4.0f);
  EXPECT_EQ(Tensor::full({2, 3}, 2.0).sum(1).to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_EQ(Tensor::ones({4, 4}).reshape({2, 2, 2, 2}).permute({0, 2, 1, 3}).sum({2, 3}).to_vector<float>(), std::vector<float>(4, 4));
  EXPECT_EQ(Tensor::ones({3}, dtypes::int32).prod().item<int32_t>(), 1);
}

TEST(Fusion, ConvAndPoolingAreOneKernelEach) {
  Tensor x = Tensor::rand({1, 2, 8, 8}).realize(), w = Tensor::rand({4, 2, 3, 3}).realize();
  // the conv is one kernel, after a small copy of the weight with the output channel innermost
  EXPECT_EQ(kernels_for(x.conv2d(w)), 2);
  EXPECT_EQ(kernels_for(x.max_pool2d()), 1);
  EXPECT_EQ(kernels_for(x.conv2d(w).relu().max_pool2d()), 3);  // the pool reads the conv's windows from a buffer
  // a computed input is stored before a conv reads it k*k times; a 1x1 conv reads it once, fused
  EXPECT_EQ(kernels_for((x + 1).conv2d(w)), 3);
  EXPECT_EQ(kernels_for((x + 1).conv2d(Tensor::rand({4, 2, 1, 1}).realize())), 2);
  // a conv's bias and activation are computed in its kernel, which stores what the next window conv reads: two
  // weight copies and two convs (mobilenet's blocks)
  Tensor b = Tensor::rand({4}).realize(), w2 = Tensor::rand({4, 1, 3, 3}).realize();
  EXPECT_EQ(kernels_for(x.conv2d(w, b).relu6().conv2d(w2, std::nullopt, 4)), 4);
  // a strided conv's gradient is read channels-last; its value is still the conv kernel's own store
  EXPECT_EQ(kernels_for(x.conv2d(w, std::nullopt, 1, 2)), 2);
  // a depthwise conv reads its input channels-last: a realized NCHW input is copied so first
  EXPECT_EQ(kernels_for(x.conv2d(Tensor::rand({2, 1, 3, 3}).realize(), std::nullopt, 2)), 3);
  {
    NoGradGuard no_grad;
    EXPECT_EQ(kernels_for(x.conv2d(w, std::nullopt, 1, 2)), 2);
  }
}

// the buffers the last kernel of t's schedule reads and writes
size_t buffers_of_last_kernel(const Tensor& t) {
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  return s.items.empty() ? 0 : s.items.back().bufs.size();
}

void expect_same_values(const Tensor& a, const Tensor& b) {
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); i++) EXPECT_NEAR(x[i], y[i], 1e-5f * (1 + std::fabs(y[i]))) << "at " << i;
}

TEST(Fusion, AnEpilogueReadByAReduceRunsOnceInItsOwnKernel) {
  // a depthwise conv's bias and clip are stored by the depthwise kernel: the 1x1 conv that reads them once per
  // block of its output channels reads one buffer (and its weight), not the raw conv and the bias
  Tensor x = Tensor::rand({1, 4, 8, 8}).realize(), wd = Tensor::rand({4, 1, 3, 3}).realize();
  Tensor bd = Tensor::rand({4}).realize(), w1 = Tensor::rand({6, 4, 1, 1}).realize();
  Tensor y = x.conv2d(wd, bd, 4, 1, 1, 1).relu6().conv2d(w1);
  EXPECT_EQ(buffers_of_last_kernel(y), 3u);
  Tensor stored = x.conv2d(wd, bd, 4, 1, 1, 1).relu6().realize();
  expect_same_values(y, stored.conv2d(w1));
  // a residual sum: the first block's conv stores its output with the bias; the second block's conv stores the sum
  Tensor wa = Tensor::rand({4, 4, 1, 1}).realize(), wb = Tensor::rand({4, 4, 1, 1}).realize(), b = Tensor::rand({4}).realize();
  Tensor h = x.conv2d(wa, b), out = (h + h.conv2d(wb, b)).conv2d(w1);
  Tensor h_ref = x.conv2d(wa, b).realize(), sum_ref = (h_ref + h_ref.conv2d(wb, b)).realize();
  expect_same_values(out, sum_ref.conv2d(w1));
  EXPECT_EQ(buffers_of_last_kernel(out), 3u);
}

TEST(Fusion, AReduceStoredThroughAPermuteLoopsInTheStoredOrder) {
  // contiguous() of a permuted reduce is the reduce's own kernel, looping in the permuted order so that it stores
  // in order (Grouping::loop_order): no copy kernel. Values against sums on the host.
  Tensor x = iota({3, 4, 5});
  std::vector<float> xv = x.to_vector<float>();
  auto sum1 = [&](int64_t i, int64_t k) {  // x.sum(1)[i][k]
    float t = 0;
    for (int64_t j = 0; j < 4; j++) t += xv[(i * 4 + j) * 5 + k];
    return t;
  };
  Tensor y = ((x.sum(1) - 40) * 2).relu().permute({1, 0}).contiguous();
  EXPECT_EQ(kernels_for(y), 1);
  std::vector<float> yv = y.to_vector<float>();
  for (int64_t k = 0; k < 5; k++)
    for (int64_t i = 0; i < 3; i++) EXPECT_EQ(yv[k * 3 + i], std::max(0.0f, (sum1(i, k) - 40) * 2)) << k << "," << i;
  // a permute then a reshape that merges two of the reduce's dims: still one kernel
  Tensor x4 = iota({2, 3, 4, 5});
  std::vector<float> x4v = x4.to_vector<float>();
  Tensor z = x4.sum(3).permute({2, 0, 1}).reshape({4, 6}).contiguous();
  EXPECT_EQ(kernels_for(z), 1);
  std::vector<float> zv = z.to_vector<float>();
  for (int64_t c = 0; c < 4; c++)
    for (int64_t ab = 0; ab < 6; ab++) {
      float t = 0;
      for (int64_t d = 0; d < 5; d++) t += x4v[(ab * 4 + c) * 5 + d];
      EXPECT_EQ(zv[c * 6 + ab], t) << c << "," << ab;
    }
  // the reduce read in two orders (s + s.T): no one loop order stores both, so s gets a buffer of its own
  Tensor sq = iota({4, 5, 4});
  std::vector<float> sqv = sq.to_vector<float>();
  Tensor s = sq.sum(1), both = (s + s.permute({1, 0})).contiguous();
  EXPECT_EQ(kernels_for(both), 2);
  std::vector<float> bv = both.to_vector<float>();
  auto ssum = [&](int64_t i, int64_t k) {
    float t = 0;
    for (int64_t j = 0; j < 5; j++) t += sqv[(i * 5 + j) * 4 + k];
    return t;
  };
  for (int64_t i = 0; i < 4; i++)
    for (int64_t k = 0; k < 4; k++) EXPECT_EQ(bv[i * 4 + k], ssum(i, k) + ssum(k, i)) << i << "," << k;
  // a permuted reduce that is itself the output
  Tensor t = x.sum(1).permute({1, 0});
  EXPECT_EQ(kernels_for(t), 1);
  std::vector<float> tv = t.to_vector<float>();
  for (int64_t k = 0; k < 5; k++)
    for (int64_t i = 0; i < 3; i++) EXPECT_EQ(tv[k * 3 + i], sum1(i, k));
}

TEST(Fusion, ADepthwiseConvsComputedInputIsStoredChannelsLastByItsProducer) {
  // the 1x1 conv that computes a depthwise conv's input stores it channels-last itself, looping in that order: two
  // weight copies and two convs, no transposing copy. Values (stride 2 with a 5x5 window, then dilation 2 with
  // asymmetric padding) against loops on the host over the stored input.
  Tensor x = Tensor::rand({2, 8, 11, 11}).realize(), w1 = Tensor::rand({16, 8, 1, 1}).realize();
  Tensor wd = Tensor::rand({16, 1, 5, 5}).realize(), bd = Tensor::rand({16}).realize();
  Tensor h = x.conv2d(w1).relu();
  EXPECT_EQ(kernels_for(h.conv2d(wd, bd, 16, 2, 1, 2)), 4);
  std::vector<float> hv = h.contiguous().to_vector<float>(), wv = wd.to_vector<float>(), bv = bd.to_vector<float>();
  struct Case { int64_t stride, dilation, top, left, bottom, right; };
  for (Case c : {Case{2, 1, 2, 2, 2, 2}, Case{1, 2, 1, 3, 2, 0}}) {
    Tensor y = h.conv2d(wd, bd, 16, c.stride, c.dilation, {c.left, c.right, c.top, c.bottom});
    int64_t span = c.dilation * 4 + 1;
    int64_t oh = (11 + c.top + c.bottom - span) / c.stride + 1, ow = (11 + c.left + c.right - span) / c.stride + 1;
    ASSERT_EQ(y.shape(), (Shape{2, 16, oh, ow}));
    std::vector<float> got = y.to_vector<float>();
    for (int64_t n = 0; n < 2; n++)
      for (int64_t ch = 0; ch < 16; ch++)
        for (int64_t i = 0; i < oh; i++)
          for (int64_t j = 0; j < ow; j++) {
            double want = bv[ch];
            for (int64_t a = 0; a < 5; a++)
              for (int64_t b = 0; b < 5; b++) {
                int64_t r = i * c.stride + a * c.dilation - c.top, q = j * c.stride + b * c.dilation - c.left;
                if (r >= 0 && r < 11 && q >= 0 && q < 11) want += hv[((n * 16 + ch) * 11 + r) * 11 + q] * wv[ch * 25 + a * 5 + b];
              }
            ASSERT_NEAR(got[((n * 16 + ch) * oh + i) * ow + j], want, 1e-4 * (1 + std::fabs(want))) << n << "," << ch << "," << i << "," << j;
          }
  }
}

TEST(Fusion, ACatThatSeveralKernelsReadIsStored) {
  // recomputed, both halves of the cat would be gated loads inside the conv's reduce loop and in the sum
  Tensor x = Tensor::rand({1, 2, 4, 4}).realize(), w = Tensor::rand({3, 4, 1, 1}).realize();
  Tensor c = Tensor::cat({x.relu(), (x * 2).relu()}, 1);
  Tensor y = c.conv2d(w), total = c.sum();
  // x is read by the one kernel that stores the cat
  schedule::Schedule s = schedule::create_schedule({y.uop(), total.uop()});
  uop::UOp xb = schedule::movement_base(x.uop());
  size_t readers = 0;
  for (const auto& it : s.items) readers += std::count(it.bufs.begin(), it.bufs.end(), xb);
  EXPECT_EQ(readers, 1u);
  Tensor c_ref = Tensor::cat({x.relu(), (x * 2).relu()}, 1).realize();
  expect_same_values(y, c_ref.conv2d(w));
  EXPECT_NEAR(total.item<float>(), c_ref.sum().item<float>(), 1e-4);
}

TEST(Fusion, AConvEpilogueReadThroughAPadIsStoredByTheConv) {
  // a pool's padding reads the conv's bias and relu once, in the conv's kernel: the pool reads that one buffer (it
  // used to read the raw conv and the bias, and ran the epilogue again for each of its 9 window positions)
  Tensor x = Tensor::rand({1, 2, 8, 8}).realize(), w = Tensor::rand({4, 2, 3, 3}).realize(), b = Tensor::rand({4}).realize();
  Tensor pooled = x.conv2d(w, b, 1, 1, 1, 1).relu().max_pool2d({3, 3}, 2, 1, 1);
  EXPECT_EQ(buffers_of_last_kernel(pooled), 2u);
  expect_same_values(pooled, x.conv2d(w, b, 1, 1, 1, 1).relu().realize().max_pool2d({3, 3}, 2, 1, 1));
  // shufflenet's unit: a branch's conv epilogue cat'd with the input, read by a 1x1 conv and by a sum. The branch's
  // kernel stores its epilogue, the cat of the two buffers is stored (else both halves are gated loads in the
  // conv's reduce loop), and the conv reads that one buffer and its weight
  Tensor w1 = Tensor::rand({2, 2, 1, 1}).realize(), w2 = Tensor::rand({3, 4, 1, 1}).realize();
  Tensor c = Tensor::cat({x, x.conv2d(w1, b.shrink({{0, 2}})).relu()}, 1);
  Tensor y = c.conv2d(w2), total = c.sum();
  schedule::Schedule s = schedule::create_schedule({y.uop(), total.uop()});
  uop::UOp bb = schedule::movement_base(b.uop());
  size_t bias_readers = 0;
  for (const auto& it : s.items) bias_readers += std::count(it.bufs.begin(), it.bufs.end(), bb);
  EXPECT_EQ(bias_readers, 1u);
  EXPECT_EQ(buffers_of_last_kernel(y), 3u);
  Tensor c_ref = Tensor::cat({x, x.conv2d(w1, b.shrink({{0, 2}})).relu().realize()}, 1).realize();
  expect_same_values(y, c_ref.conv2d(w2));
  EXPECT_NEAR(total.item<float>(), c_ref.sum().item<float>(), 1e-3);
}

TEST(Fusion, AStoredCatIsWrittenInPlaceByItsPiecesKernels) {
  // a squeezenet fire module: two expand convs cat'd along the channels and read by a pool. Each conv's kernel stores
  // into its slice of the cat's buffer; no kernel copies the pieces into the cat
  Tensor x = Tensor::rand({2, 4, 6, 6}).realize(), w1 = Tensor::rand({3, 4, 1, 1}).realize();
  Tensor w3 = Tensor::rand({5, 4, 3, 3}).realize(), b = Tensor::rand({5}).realize();
  auto pieces = [&] { return std::vector<Tensor>{x.conv2d(w1).relu(), x.conv2d(w3, b, 1, 1, 1, 1).relu()}; };
  Tensor c = Tensor::cat(pieces(), 1);
  schedule::Schedule s = schedule::create_schedule({c.uop()});
  std::vector<Tensor> alone = pieces();
  size_t piece_kernels = schedule::create_schedule({alone[0].uop(), alone[1].uop()}).items.size();
  EXPECT_EQ(s.items.size(), piece_kernels);
  auto cat_buffer = std::find_if(s.becomes.begin(), s.becomes.end(), [&](const auto& b) { return b.first == c.uop(); });
  ASSERT_NE(cat_buffer, s.becomes.end());
  const uop::UOp& out = schedule::movement_base(cat_buffer->second);
  EXPECT_EQ(std::count_if(s.items.begin(), s.items.end(), [&](const auto& it) { return it.bufs[0] == out; }), 2);
  Tensor::realize(alone);
  Tensor ref = Tensor::cat(alone, 1).realize();
  expect_same_values(c, ref);
  Tensor pooled = Tensor::cat(pieces(), 1).max_pool2d({3, 3}, 2);
  expect_same_values(pooled, ref.max_pool2d({3, 3}, 2));

  // the pieces' values exactly: a sum of padded pieces made -0.0 into 0.0 (PyTorch's cat keeps it)
  Tensor neg = (x.sum(1) * -0.0f).reshape({2, 1, 6, 6}), pos = x.max(1).reshape({2, 1, 6, 6});
  std::vector<float> v = Tensor::cat({neg, pos}, 1).to_vector<float>();
  for (size_t i = 0; i < 36; i++) EXPECT_TRUE(std::signbit(v[i]) && v[i] == 0.0f) << i;
  // bool pieces are cat'd by OR: in place too
  Tensor big = x.sum(1) > 2.0f, any = x.max(1) > 0.9f;
  EXPECT_EQ(Tensor::cat({big, any}, 0).to_vector<bool>(), Tensor::cat({big.realize(), any.realize()}, 0).to_vector<bool>());
  // a piece read elsewhere too keeps the copy, and its value
  Tensor p0 = x.conv2d(w1).relu(), shared = Tensor::cat({p0, x.conv2d(w1)}, 1);
  Tensor total = p0.sum();
  Tensor::realize({shared, total});
  expect_same_values(shared, Tensor::cat({x.conv2d(w1).relu().realize(), x.conv2d(w1).realize()}, 1));
  EXPECT_NEAR(total.item<float>(), x.conv2d(w1).relu().sum().item<float>(), 1e-3);

  // a cat inside a cat, both stored: the inner one is filled by its pieces, then copied into the outer one
  // (on a fresh input: a freed buffer of the same values reused for an unwritten slice would hide a miss)
  Tensor xn = Tensor::rand({2, 4, 6, 6}).realize();
  Tensor inner = Tensor::cat({xn.conv2d(w1).relu(), xn.conv2d(w3, b, 1, 1, 1, 1).relu()}, 1);
  Tensor w1b = Tensor::rand({3, 4, 1, 1}).realize();
  Tensor outer = Tensor::cat({inner, xn.conv2d(w1b)}, 1);
  Tensor::realize({inner, outer});
  Tensor inner_ref = Tensor::cat({xn.conv2d(w1).relu().realize(), xn.conv2d(w3, b, 1, 1, 1, 1).relu().realize()}, 1).realize();
  expect_same_values(inner, inner_ref);
  expect_same_values(outer, Tensor::cat({inner_ref, xn.conv2d(w1b).realize()}, 1));

  // a TinyJit replay: the cat's buffer has two writers; the memory planner and the replay keep both, before the pool
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) {
    return Tensor::cat({in[0].conv2d(w1).relu(), in[0].conv2d(w3, b, 1, 1, 1, 1).relu()}, 1).max_pool2d({3, 3}, 2).realize();
  });
  for (int i = 0; i < 3; i++) {
    Tensor xi = Tensor::rand({2, 4, 6, 6}).realize();
    Tensor want = Tensor::cat({xi.conv2d(w1).relu().realize(), xi.conv2d(w3, b, 1, 1, 1, 1).relu().realize()}, 1).max_pool2d({3, 3}, 2);
    expect_same_values(f({xi}), want);
  }
  EXPECT_TRUE(f.captured());
}

TEST(Fusion, ContiguousOfAValueTheScheduleStoresIsThatBuffer) {
  // a squeeze conv's output read by a 1x1 conv and by a 3x3 conv (which makes its input contiguous first): stored
  // once, with no copy; clone() still makes a buffer of its own
  Tensor x = Tensor::rand({1, 4, 6, 6}).realize(), ws = Tensor::rand({2, 4, 1, 1}).realize();
  Tensor we1 = Tensor::rand({3, 2, 1, 1}).realize(), we3 = Tensor::rand({3, 2, 3, 3}).realize();
  Tensor sq = x.conv2d(ws).relu();
  Tensor y = Tensor::cat({sq.conv2d(we1), sq.conv2d(we3, std::nullopt, 1, 1, 1, 1)}, 1);
  size_t kernels = schedule::create_schedule({y.uop()}).items.size();
  Tensor sq_ref = x.conv2d(ws).relu().realize();
  Tensor y_ref = Tensor::cat({sq_ref.conv2d(we1), sq_ref.conv2d(we3, std::nullopt, 1, 1, 1, 1)}, 1);
  // the squeeze conv and its weight copy, and no copy of its output
  EXPECT_EQ(kernels, schedule::create_schedule({y_ref.uop()}).items.size() + 2);
  expect_same_values(y, y_ref);
  Tensor a = x + 1, b = a.clone();
  Tensor::realize({a, b});
  EXPECT_NE(schedule::movement_base(a.uop()).get(), schedule::movement_base(b.uop()).get());
  expect_same_values(a, b);
}

TEST(Fusion, ElementwiseChainIsOneKernel) {
  Tensor a = iota({4, 5}), b = iota({4, 5});
  Tensor c = ((a + b) * 2 - a).sqrt() + (b * a).sin();
  EXPECT_EQ(kernels_for(c), 1);
}

TEST(Fusion, ReduceOfElementwiseIsOneKernel) {
  Tensor a = iota({8, 16});
  EXPECT_EQ(kernels_for((a * a + 1).sum(1)), 1);
  EXPECT_EQ(kernels_for((a.exp2() * 3).max()), 1);
}

TEST(Fusion, ElementwiseAfterReduceFusesWhenNotExpanded) {
  Tensor a = iota({8, 16});
  EXPECT_EQ(kernels_for(a.sum(1).sqrt() + 1), 1);
  {
    NoGradGuard no_grad;  // every value detached: DETACH changes nothing, fuses, and costs no copy
    EXPECT_EQ(kernels_for(a.sum(1).sqrt() + 1), 1);
  }
  EXPECT_EQ(kernels_for(a.sum(1) + a.max(1)), 1);  // two reduces over the same loops
  // an expanded reduce is read from a buffer
  EXPECT_EQ(kernels_for(a - a.max(1, true)), 2);
}

TEST(Fusion, ALargeReduceRunsAsPartialResultsThenTheirReduce) {
  // 2^18 elements into one: d chunks reduced into d partial sums, then those summed (tinygrad's split_reduceop)
  Tensor x = Tensor::randn({4, 65536}).realize();
  std::vector<float> xv = x.to_vector<float>();
  double total = 0, row0 = 0;
  float top = -INFINITY;
  for (size_t i = 0; i < xv.size(); i++) total += xv[i], top = std::max(top, xv[i]), row0 += i < 65536 ? xv[i] : 0;
  EXPECT_EQ(kernels_for(x.sum()), 2);
  EXPECT_NEAR(x.sum().item<float>(), total, 1e-2);
  EXPECT_EQ(kernels_for(x.max()), 1);  // max is not split: its gradient shares ties equally among all of them
  EXPECT_EQ(x.max().item<float>(), top);
  EXPECT_NEAR(x.sum(1).to_vector<float>()[0], row0, 1e-2);  // 65536 per output: split too
  EXPECT_EQ(kernels_for(x.sum(0)), 1);                      // 4 per output: one kernel
  // the gradient flows through both reduces and the copy between them
  Tensor w = x.detach().requires_grad_();
  (w * 3.0f).sum().backward();
  std::vector<float> g = w.grad().to_vector<float>();
  EXPECT_EQ(g.front(), 3.0f);
  EXPECT_EQ(g.back(), 3.0f);
  {
    Context off{{"SPLIT_REDUCEOP", 0}};
    EXPECT_EQ(kernels_for(x.sum()), 1);
  }
  // a prime length has no chunk count that divides it: padded with zeros (ones for a product) to chunks of whole
  // vectors, then split
  EXPECT_EQ(kernels_for(Tensor::ones({32771}).contiguous().sum()), 3);  // the ones, then the two stages
  EXPECT_EQ(Tensor::ones({32771}).contiguous().sum().item<float>(), 32771.0f);
  Tensor near_one = (Tensor::rand({32771}) * 1e-4f + 1.0f).realize();
  std::vector<float> nv = near_one.to_vector<float>();
  double product = 1;
  for (float v : nv) product *= v;
  EXPECT_EQ(kernels_for(near_one.prod()), 2);
  EXPECT_NEAR(near_one.prod().item<float>(), product, 1e-3 * product);
  Tensor logits = Tensor::randn({50257}).realize();  // GPT-2's vocabulary, 29 x 1733
  std::vector<float> lv = logits.to_vector<float>();
  double lsum = 0;
  for (float v : lv) lsum += v;
  EXPECT_NEAR(logits.sum().item<float>(), lsum, 1e-2);
}

TEST(Fusion, MatmulIsOneKernel) {
  const int64_t N = 16;
  Tensor a = iota({N, N}), b = iota({N, N});
  Tensor c = (a.reshape({N, 1, N}) * b.permute({1, 0}).reshape({1, N, N})).sum(2);
  EXPECT_EQ(kernels_for(c), 1);
  // against a plain triple loop
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < N; k++) acc += av[i * N + k] * bv[k * N + j];
      ASSERT_FLOAT_EQ(cv[i * N + j], static_cast<float>(acc));
    }
}

// x (..., M, K) @ w (K, N) by a plain loop in double, x's batch flattened into its rows
std::vector<double> host_matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t k, int64_t n) {
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t p = 0; p < k; p++) {
      double a = x[static_cast<size_t>(i * k + p)];
      for (int64_t j = 0; j < n; j++) out[static_cast<size_t>(i * n + j)] += a * w[static_cast<size_t>(p * n + j)];
    }
  return out;
}

TEST(Fusion, ALargeMatmulReadsItsRightOperandFromPanelsOfColumns) {
  // w of 2^19 elements shared by 128 rows: copied into panels of 32 columns (N/32, K, 32) by a kernel of its own,
  // which the matmul reads through a view of w's shape (linalg.cpp: packed_in_panels); x's batch broadcasts
  // against w, so its 2 x 64 rows all share it. Against plain loops in double
  const int64_t K = 32, N = 16384;
  Tensor x = Tensor::randn({2, 64, K}).realize(), w = Tensor::randn({K, N}).realize();
  Tensor y = x.matmul(w);
  EXPECT_EQ(kernels_for(y), 2);
  std::vector<double> want = host_matmul(x.to_vector<float>(), w.to_vector<float>(), 128, K, N);
  std::vector<float> got = y.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4 * (std::fabs(want[i]) + 1)) << i;
  // its gradients (products themselves: tensor::matmul_gradient): dL/dw = x^T g, dL/dx = g w^T
  Tensor wg = w.detach().requires_grad_(), xg = x.detach().requires_grad_(), g = Tensor::randn({2, 64, N}).realize();
  (xg.matmul(wg) * g).sum().backward();
  std::vector<float> wv = w.to_vector<float>(), wt(static_cast<size_t>(N * K));
  for (int64_t p = 0; p < K; p++)
    for (int64_t j = 0; j < N; j++) wt[static_cast<size_t>(j * K + p)] = wv[static_cast<size_t>(p * N + j)];
  std::vector<double> dx = host_matmul(g.to_vector<float>(), wt, 128, N, K);
  std::vector<float> got_dx = xg.grad().to_vector<float>();
  for (size_t i = 0; i < dx.size(); i++) ASSERT_NEAR(got_dx[i], dx[i], 1e-4 * (std::fabs(dx[i]) + 1)) << i;
  std::vector<float> xv = x.to_vector<float>(), xt(static_cast<size_t>(K * 128));
  for (int64_t i = 0; i < 128; i++)
    for (int64_t p = 0; p < K; p++) xt[static_cast<size_t>(p * 128 + i)] = xv[static_cast<size_t>(i * K + p)];
  std::vector<double> dw = host_matmul(xt, g.to_vector<float>(), K, 128, N);
  std::vector<float> got_dw = wg.grad().to_vector<float>();
  for (size_t i = 0; i < dw.size(); i++) ASSERT_NEAR(got_dw[i], dw[i], 1e-4 * (std::fabs(dw[i]) + 1)) << i;
  // where the copy does not pay, one kernel: fewer rows (a pass over w for 127 of them), a w that fits the caches,
  // a column count that is no multiple of 32
  EXPECT_EQ(kernels_for(x.reshape({128, K}).shrink({{0, 127}, {0, K}}).matmul(w)), 1);
  EXPECT_EQ(kernels_for(x.matmul(w.shrink({{0, K}, {0, N / 2}}))), 1);
  EXPECT_EQ(kernels_for(x.matmul(w.shrink({{0, K}, {0, N - 16}}))), 1);
}

TEST(Fusion, SoftmaxIsThreeKernels) {
  // max, then sum(exp(x - max)) reading it, then exp(x - max) / sum reading both
  Tensor x = iota({4, 32});
  Tensor e = (x - x.max(1, true)).exp2();
  EXPECT_EQ(kernels_for(e / e.sum(1, true)), 3);
}

TEST(Fusion, ValueUsedTwiceIsComputedOnce) {
  Tensor a = iota({64});
  Tensor e = a.exp2();
  std::string src = kernel_source(e * e + e);
  std::string body = src.substr(src.find("\nvoid "));  // after the helpers (a vector kernel has an exp2 function)
  EXPECT_EQ(count(body, "exp2"), 1u) << src;
}

TEST(Fusion, ExpensiveSharedValueIsStoredUnexpanded) {
  // 40 ops on 16 numbers, expanded to (64, 16) and read by two kernels: stored once, as 16 numbers, not 1024
  Tensor w = iota({16});
  for (int i = 0; i < 40; i++) w = (w * 1.01f).sin();
  Tensor big = w.reshape({1, 16}).expand({64, 16});
  schedule::Schedule s = schedule::create_schedule({big.sum(0).uop(), (big * 2.0f).sum(1).uop()});
  ASSERT_EQ(s.items.size(), 3u);
  std::vector<size_t> sizes;
  for (const auto& item : s.items) sizes.push_back(runtime::buffer_of(item.bufs[0]).size());
  EXPECT_EQ(sizes, (std::vector<size_t>{16, 16, 64}));
}

TEST(Fusion, AMatmulOperandOfMoreThanAFewOpsIsStoredBeforeTheBroadcast) {
  // a LayerNorm over a sum of residuals feeding a matmul: broadcast along B's 128 columns it would run once per
  // block of columns; it is stored first (two kernels), while a cheap operand (a relu) still fuses (one kernel)
  Tensor w = iota({64, 128}) * 0.001f;
  std::vector<Tensor> parts;
  for (int i = 0; i < 6; i++) parts.push_back(iota({32, 64}) * (0.01f * static_cast<float>(i + 1)));
  Tensor x = parts[0];
  for (int i = 1; i < 6; i++) x = x + parts[i];
  Tensor mean = x.mean(1, true).realize(), var = x.var(1, true).realize();
  Tensor normed = (x - mean) * (var + 1e-5f).rsqrt() * 0.5f + 0.1f;
  Tensor y = normed.matmul(w);
  EXPECT_EQ(kernels_for(y), 2);
  EXPECT_EQ(kernels_for(parts[0].relu().matmul(w)), 1);
  // a LayerNorm whose statistics its reduce kernels store (rstd is the end of the variance's epilogue): what is left
  // is 6 ops, but read by a matmul of 1024 columns it would run once per block of 32 of them, so it is stored, and
  // the matmul reads that buffer and its weight (vit_b_16's MLP: 4x slower fused)
  Tensor h = (iota({64, 256}) * 0.01f).realize(), g = (iota({256}) * 0.001f).realize(), b = (iota({256}) * 0.002f).realize();
  Tensor wide = (iota({256, 1024}) * 0.0001f).realize();
  Tensor centered = h - h.mean(1, true);  // h: a residual sum, stored because the residual path reads it too
  Tensor ln = centered / ((centered * centered).mean(1, true) + 1e-5f).sqrt() * g + b, out = ln.matmul(wide);
  EXPECT_EQ(buffers_of_last_kernel(out), 3u);
  Tensor out_ref = ln.contiguous().realize().matmul(wide);
  std::vector<float> got_ln = out.to_vector<float>(), ref_ln = out_ref.to_vector<float>();
  for (size_t i = 0; i < ref_ln.size(); i++) ASSERT_NEAR(got_ln[i], ref_ln[i], 1e-4 * std::fabs(ref_ln[i]) + 1e-4) << i;
  // a one-hot made from positions (an embedding lookup, broadcast along 128 columns) is not stored: it folds into
  // a read of the picked rows (GPT-2's prefill stored a 16 x 50257 one-hot and multiplied it out). One kernel, which
  // stores the rows with the index dim first (IndexingByATensorReadsOnlyTheRowsItPicks)
  Tensor table = iota({1000, 128}), ids = Tensor(std::vector<int32_t>{3, 999, 0, 42}, {4});
  EXPECT_EQ(kernels_for(table[{ids}]), 1);
  EXPECT_EQ(table[{ids}].to_vector<float>()[128 + 5], 999.0f * 128 + 5);
  // the values: the same product from a stored operand
  Tensor want = normed.contiguous().realize().matmul(w);
  std::vector<float> have = y.to_vector<float>(), ref = want.to_vector<float>();
  for (size_t i = 0; i < ref.size(); i++) ASSERT_NEAR(have[i], ref[i], 1e-4 * std::fabs(ref[i]) + 1e-4) << i;
}

TEST(Fusion, AQuantizedWeightStaysFusedAndQuantizedUnderManyRows) {
  // a Q8_0 weight (34-byte blocks: an f16 scale, 32 int8 values) read by a 128-row matmul (a long prompt's chunk):
  // its dequantization, broadcast along the rows, stays fused into the matmul (one kernel), and the weight tensor
  // stays the lazy dequantization of its bytes afterwards, not a float32 buffer four times their size
  const int64_t n = 64, k = 256, blocks = n * k / 32;
  std::vector<uint8_t> raw(static_cast<size_t>(blocks * 34));
  for (size_t i = 0; i < raw.size(); i++) raw[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
  for (int64_t b = 0; b < blocks; b++) raw[static_cast<size_t>(b * 34)] = 0, raw[static_cast<size_t>(b * 34 + 1)] = 0x2c;  // 1/16
  Tensor bytes = Tensor(raw, {static_cast<int64_t>(raw.size())}).realize();
  Tensor w = state::dequantize(bytes, state::GgmlType::Q8_0, n * k).reshape({n, k});
  Tensor x = (iota({128, k}) * 0.001f).realize();
  Tensor y = x.matmul(w.T());
  EXPECT_EQ(kernels_for(y), 1);
  std::vector<float> got = y.to_vector<float>();
  EXPECT_FALSE(schedule::is_realized_form(w.uop()));
  std::vector<float> wv = w.to_vector<float>(), xv = x.to_vector<float>();
  for (int64_t r = 0; r < 128; r += 17)
    for (int64_t c = 0; c < n; c++) {
      double want = 0;
      for (int64_t j = 0; j < k; j++) want += double(xv[static_cast<size_t>(r * k + j)]) * wv[static_cast<size_t>(c * k + j)];
      ASSERT_NEAR(got[static_cast<size_t>(r * n + c)], want, 1e-4 * std::fabs(want) + 1e-3) << r << ", " << c;
    }
}

TEST(Fusion, IndexingByATensorReadsOnlyTheRowsItPicks) {
  // the one-hot sum of a tensor index folds into a gated read (codegen/fold_gather.cpp): no loop over the 6 rows,
  // and an index out of range reads nothing (ASan checks the "nothing" in the sanitized build)
  Tensor x = iota({6, 10});
  Tensor idx = Tensor({3, -1, 100, -100, 6}).realize();
  Tensor y = x[{idx}];
  for (const auto& item : schedule::create_schedule({y.uop()}).items) {
    std::string src = engine::get_kernel(item.ast, runtime::get_device("CPU"))->rendered.source;
    EXPECT_EQ(count(src, "for ("), 2u) << src;  // the output's rows and columns only
  }
  std::vector<float> v = y.to_vector<float>();
  for (int64_t c = 0; c < 10; c++) {
    EXPECT_EQ(v[c], 30 + c);
    EXPECT_EQ(v[10 + c], 50 + c);
    EXPECT_EQ(v[20 + c], 0);
    EXPECT_EQ(v[30 + c], 0);
    EXPECT_EQ(v[40 + c], 0);
  }
  // unsigned indices: no negative wrap, and a large one is out of range
  for (DType dt : {dtypes::uint8, dtypes::uint64}) {
    std::vector<float> u = x[{Tensor({3, 5, 200}).cast(dt)}].to_vector<float>();
    EXPECT_EQ(u[0], 30);
    EXPECT_EQ(u[10], 50);
    EXPECT_EQ(u[20], 0) << dt.name();
  }
  // a table long enough for the one-hot sum to count as a large reduce is not split (a split sum would not fold):
  // one kernel, which loops with the index dim first and so stores the rows in order (Grouping::loop_order)
  Tensor big = iota({40000, 2});
  Tensor rows = big[{Tensor({39999, 7}).realize()}];
  EXPECT_EQ(kernels_for(rows), 1);
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{79998, 79999, 14, 15}));
}

TEST(Fusion, AProductOverChosenExpertsReadsOnlyThoseExperts) {
  // a mixture of experts' product as the model writes it: one sum over the experts and the input axis of
  // where(chosen == expert, w * x, 0), w block-quantized (Q8_0). The sum over the experts folds into a gated read of
  // the chosen ones, with or without the input axis unrolled (whose copies lower() adds before the fold sees them),
  // so a launch reads 2 of the 8 experts' bytes (GlobalCounters), and the kernel stores no gathered copy
  const int64_t E = 8, O = 32, I = 64, blocks = E * O * I / 32;
  std::vector<uint8_t> raw(static_cast<size_t>(blocks * 34));
  for (size_t i = 0; i < raw.size(); i++) raw[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
  for (int64_t b = 0; b < blocks; b++) raw[static_cast<size_t>(b * 34)] = 0, raw[static_cast<size_t>(b * 34 + 1)] = 0x2c;  // 1/16
  Tensor bytes = Tensor(raw, {static_cast<int64_t>(raw.size())}).realize();
  Tensor w = state::dequantize(bytes, state::GgmlType::Q8_0, E * O * I).reshape({E, O, I});
  Tensor chosen = Tensor(std::vector<int32_t>{5, 2}, {1, 1, 2}).realize();
  Tensor x = (iota({1, 1, I}) * 0.01f).realize();
  Tensor pick = chosen.unsqueeze(-1).eq(Tensor::arange(0, E, 1, dtypes::int32)).unsqueeze(-1).unsqueeze(-1);
  Tensor y = pick.where(w * x.unsqueeze(2).unsqueeze(3).unsqueeze(4), 0.0f).sum({3, 5});  // (1, 1, 2, O)
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  const uop::UOp& ast = s.items[0].ast;
  size_t w_arg = 0;  // the bytes' place among the kernel's buffers
  for (size_t i = 0; i < s.items[0].bufs.size(); i++)
    if (runtime::buffer_of(s.items[0].bufs[i]).nbytes() == raw.size()) w_arg = i;
  ASSERT_GT(w_arg, 0u);
  runtime::Device& cpu = runtime::get_device("CPU");
  codegen::LoweredKernel plain = codegen::lower(ast, {}, cpu.caps());
  std::vector<std::vector<codegen::Opt>> tries{codegen::choose_opts(plain)};
  for (int64_t a : plain.reduce_axes)
    if (codegen::legal(plain, {{codegen::OptOp::UNROLL, a, 2}})) tries.push_back({{codegen::OptOp::UNROLL, a, 2}});
  ASSERT_GE(tries.size(), 2u);  // the input axis unrolls
  const double share = static_cast<double>(raw.size()) * 2 / E;
  for (const std::vector<codegen::Opt>& opts : tries) {
    auto k = engine::render_kernel(codegen::lower(ast, opts, cpu.caps()), "experts", cpu.caps(), "CPU");
    double read = static_cast<double>(k->buffer_bytes.at(w_arg));
    EXPECT_GE(read, share) << codegen::opts_str(opts);
    // the codes, and each block's scale as often as the loop reads it: at most twice the share, not all 8 experts
    EXPECT_LE(read, 2 * share) << codegen::opts_str(opts) << "\n" << k->rendered.source;
  }
  int64_t before = GlobalCounters::global_mem;
  std::vector<float> got = y.to_vector<float>();
  EXPECT_LT(static_cast<double>(GlobalCounters::global_mem - before), 2 * share + 4096);
  std::vector<float> wv = w.to_vector<float>(), xv = x.to_vector<float>();
  const int64_t picked[2] = {5, 2};
  for (int64_t c = 0; c < 2; c++)
    for (int64_t o = 0; o < O; o++) {
      double want = 0;
      for (int64_t j = 0; j < I; j++) want += double(wv[static_cast<size_t>((picked[c] * O + o) * I + j)]) * xv[static_cast<size_t>(j)];
      ASSERT_NEAR(got[static_cast<size_t>(c * O + o)], want, 1e-4 * std::fabs(want) + 1e-4) << c << ", " << o;
    }
}

TEST(Fusion, CrossEntropyReadsTheLogitsOncePerStatistic) {
  // the row's max and its sum of exponentials read the logits; each row's target is a gathered read of one logit.
  // No third pass: no mean over the classes without label smoothing, no product with a one-hot
  Tensor x = (iota({64, 4000}) * 1e-4f).realize();
  Tensor y = (Tensor::arange(64) * 61).cast(dtypes::int32).realize();
  const double logits = 64.0 * 4000 * 4;
  for (int which = 0; which < 2; which++) {
    Tensor loss = which ? x.cross_entropy(y) : x.sparse_categorical_crossentropy(y);
    int64_t before = GlobalCounters::global_mem;
    loss.realize();
    double moved = static_cast<double>(GlobalCounters::global_mem - before);
    EXPECT_LT(moved, 2.2 * logits) << which;
  }
}

TEST(Fusion, RealizedTensorIsNotRecomputed) {
  Tensor a = iota({16});
  Tensor b = (a * 2).sum();
  Tensor c = b + 1;
  EXPECT_EQ(kernels_for(b), 1);
  EXPECT_EQ(kernels_for(b), 0);
  EXPECT_TRUE(b.is_realized());
  EXPECT_EQ(kernels_for(c), 1);  // reads b's buffer: no reduce inside
  EXPECT_EQ(kernel_source(b + 2).find("for (int ridx"), std::string::npos);
  EXPECT_FLOAT_EQ(c.item<float>(), 241.0f);
}

TEST(Fusion, RealizingSeveralTensorsSharesWork) {
  Tensor a = iota({8, 8});
  Tensor s = a.sum(1);  // used twice: computed once, into its own buffer
  Tensor x = s + 1, y = s * 2;
  int64_t before = GlobalCounters::kernel_count;
  Tensor::realize({x, y});
  EXPECT_EQ(GlobalCounters::kernel_count - before, 3);
  EXPECT_EQ(x.to_vector<float>()[0] * 2 - 2, y.to_vector<float>()[0]);
}

TEST(Fusion, PaddingAComputedValueGivesZerosThere) {
  // exp2(0) is 1: padding must not push into the computation
  Tensor a = iota({3});
  EXPECT_EQ(a.exp2().pad({{1, 1}}).to_vector<float>(), (std::vector<float>{0, 1, 2, 4, 0}));
  EXPECT_EQ(kernels_for(a.exp2().pad({{2, 0}}) + 1), 1);
}

TEST(Fusion, MovementOpsCostNoKernel) {
  Tensor a = iota({4, 6});
  Tensor v = a.reshape({2, 12}).permute({1, 0}).shrink({{0, 6}, {0, 2}}).flip({0});
  EXPECT_EQ(kernels_for(v), 0);  // a view of a buffer needs no kernel until it is read
  std::vector<float> got = v.to_vector<float>();
  EXPECT_EQ(got[0], 5.0f);   // flipped row 5 of the transposed (12, 2): column 5 of (2, 12) -> a[0][5]
  EXPECT_EQ(got[1], 17.0f);  // a[2][5]
}

// Row reduces (Grouping::row_reduces; values in tests/codegen/test_row_reduces.cpp)
TEST(RowReduceFusion, SoftmaxAndLayernormAreOneKernelOnTheCpu) {
  Tensor x = Tensor::rand({128, 300}).realize();
  EXPECT_EQ(kernels_for(x.softmax(1)), 1);
  EXPECT_EQ(kernels_for(x.log_softmax(1)), 1);
  EXPECT_EQ(kernels_for(x.layernorm(-1)), 1);
  // log_softmax's log of the sum, broadcast over 2^24 elements, is not stored apart (expensive_to_broadcast would):
  // computed once per row in the fused kernel
  EXPECT_EQ(kernels_for(Tensor::rand({4096, 4096}).realize().log_softmax(1)), 1);
  // not fused: fewer rows than the threads would share (kMinRows), a reduce over an outer axis
  EXPECT_EQ(kernels_for(Tensor::rand({8, 300}).realize().softmax(1)), 3);
  EXPECT_GT(kernels_for(x.softmax(0)), 1);
}

TEST(RowReduceFusion, EachRowReduceIsAVectorLoopBeforeTheRowsStores) {
  Tensor x = Tensor::rand({128, 4096}).realize();
  std::shared_ptr<const engine::CompiledKernel> k = only_kernel(x.softmax(1));
  // the max, the sum and the stores each a vector loop: three VECTOR opts, none of them lane by lane
  EXPECT_NE(k->opts.find("VECTOR(1,"), std::string::npos) << k->opts;
  EXPECT_NE(k->opts.find("VECTOR(2,"), std::string::npos) << k->opts;
  EXPECT_NE(k->opts.find("VECTOR(3,"), std::string::npos) << k->opts;
  EXPECT_EQ(k->opts.find("as copies"), std::string::npos) << k->opts;
  // the max and the sum each unrolled by 4: the max combines four vectors per step into its one accumulator, the
  // sum keeps four (acc1 to acc1_3)
  const std::string& src = k->rendered.source;
  EXPECT_NE(k->opts.find("UNROLL(2,4)"), std::string::npos) << k->opts;
  EXPECT_NE(src.find("ridx2 < 64;"), std::string::npos) << src;
  EXPECT_NE(src.find("acc1_3"), std::string::npos) << src;
  // the reductions' loops come before the loop over the row's outputs, inside the loop over rows
  size_t rows = src.find("for (int ridx0"), max = src.find("for (int ridx2"), sum = src.find("for (int ridx3"),
         out = src.find("for (int ridx1");
  ASSERT_NE(rows, std::string::npos) << src;
  ASSERT_NE(max, std::string::npos) << src;
  ASSERT_NE(sum, std::string::npos) << src;
  ASSERT_NE(out, std::string::npos) << src;
  EXPECT_LT(rows, max);
  EXPECT_LT(max, sum);
  EXPECT_LT(sum, out);
}
