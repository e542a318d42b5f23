// Autograd behaviour: the seed's example, higher-order gradients, accumulation, detach, NoGradGuard, the functional
// gradient(), broadcasting undone, and the errors. (Per-method gradients: tests/ops/test_tensor_api.cpp.)
#include <gtest/gtest.h>

#include <cmath>

#include <tg/tg.h>

using namespace tg;

namespace {

std::vector<float> vec(const Tensor& t) { return t.to_vector<float>(); }

TEST(Autograd, SeedExampleMatmulSum) {
  // tinygrad's README: x.grad is [[2, 2, 2], [0, 0, 0], [-2, -2, -2]] and y.grad is [[1, 1, 1]]
  Tensor x = Tensor::eye(3).requires_grad_();
  Tensor y = Tensor({{2.0f, 0.0f, -2.0f}}).requires_grad_();
  Tensor z = y.matmul(x).sum();
  z.backward();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{2, 2, 2, 0, 0, 0, -2, -2, -2}));
  EXPECT_EQ(vec(y.grad()), (std::vector<float>{1, 1, 1}));
}

TEST(Autograd, SecondAndThirdOrder) {
  Tensor x = Tensor({1.0, 2.0, -3.0}).requires_grad_();
  Tensor g1 = (x * x * x).sum().gradient({x})[0];  // 3x^2
  Tensor g2 = g1.sum().gradient({x})[0];            // 6x
  Tensor g3 = g2.sum().gradient({x})[0];            // 6
  EXPECT_EQ(g1.to_vector<double>(), (std::vector<double>{3, 12, 27}));
  EXPECT_EQ(g2.to_vector<double>(), (std::vector<double>{6, 12, -18}));
  EXPECT_EQ(g3.to_vector<double>(), (std::vector<double>{6, 6, 6}));
  // tanh: 1 - tanh^2, then -2 tanh (1 - tanh^2)
  Tensor t = Tensor({0.5, -1.25}, dtypes::float64).requires_grad_();
  Tensor d1 = t.tanh().sum().gradient({t})[0], d2 = d1.sum().gradient({t})[0];
  std::vector<double> v1 = d1.to_vector<double>(), v2 = d2.to_vector<double>();
  for (size_t i = 0; i < 2; i++) {
    double th = std::tanh(i == 0 ? 0.5 : -1.25);
    EXPECT_NEAR(v1[i], 1 - th * th, 1e-12);
    EXPECT_NEAR(v2[i], -2 * th * (1 - th * th), 1e-12);
  }
}

// two clones of one tensor are two leaves: the backward of one leaves the other's gradient alone (PyTorch's and
// tinygrad's clones are distinct tensors; interned nodes made them one)
TEST(Autograd, TwoClonesOfOneTensorAreTwoLeaves) {
  Tensor x = Tensor({1.f, 2.f, 3.f});
  Tensor a = x.clone().requires_grad_(), b = x.clone().requires_grad_();
  (a * a).sum().backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_FALSE(b.grad().defined());
  (b * 3).sum().backward();
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

// PyTorch's x.detach().requires_grad_() makes a new leaf each time: two of them, and a tensor made from x.detach()
// again (moved to several devices, here), take no gradient from one another
TEST(Autograd, TwoDetachedCopiesOfOneTensorAreTwoLeaves) {
  Tensor x = Tensor::randn({3}).realize();
  Tensor a = x.detach().requires_grad_(), b = x.detach().requires_grad_();
  (a * 2).sum().backward();
  (b * 3).sum().backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{3, 3, 3}));
  Tensor c = x.detach().to("CPU,CPU:1").requires_grad_();
  (c * 5).sum().backward();
  EXPECT_EQ(c.grad().to("CPU").to_vector<float>(), (std::vector<float>{5, 5, 5}));
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
  EXPECT_THROW((x.detach() * 4).sum().backward(), ArgumentError);  // nothing in it requires a gradient
}

// The softmaxes of a row sum to 1, so the gradient of their sum is 0: within 1e-7 (tinygrad's tolerance against
// PyTorch, whose y (g - sum(g y)) gives that), where the chain through exp and the division left 4e-7
TEST(Autograd, TheSumOfASoftmaxHasNoGradient) {
  Tensor::manual_seed(3);
  for (int64_t axis : {0, 1}) {
    Tensor x = Tensor::randn({45, 65}).realize().requires_grad_();
    x.softmax(axis).sum().backward();
    for (float g : x.grad().to_vector<float>()) ASSERT_LE(std::fabs(g), 1e-7f) << "axis " << axis;
  }
}

// A user's sigmoid written as exp(x) / (1 + exp(x)) gives 1 and a zero gradient where exp(x) overflows to inf
// (inf/inf would be nan), as tinygrad's kernels do, and keeps its relative precision where exp(x) is tiny; the
// reference is the logistic function in double
TEST(Autograd, ASigmoidWrittenAsAQuotientSurvivesOverflow) {
  std::vector<float> at{300.0f, -300.0f, 0.5f, -2.0f, 80.0f, -20.0f, -60.0f};
  Tensor x = Tensor(at, {static_cast<int64_t>(at.size())}).requires_grad_();
  Tensor y = x.exp() / (x.exp() + 1);
  y.sum().backward();
  std::vector<float> got = vec(y), grad = vec(x.grad());
  for (size_t i = 0; i < at.size(); i++) {
    double s = 1.0 / (1.0 + std::exp(-static_cast<double>(at[i]))), ds = s * (1 - s);
    EXPECT_NEAR(got[i], s, 1e-5 * s + 1e-37) << "x = " << at[i];
    EXPECT_NEAR(grad[i], ds, 1e-5 * ds + 1e-37) << "x = " << at[i];
  }
}

TEST(Autograd, GradientsAccumulateUntilZeroed) {
  Tensor w = Tensor({1.0f, 2.0f}).requires_grad_();
  (w * 3).sum().backward();
  (w * w).sum().backward();
  EXPECT_EQ(vec(w.grad()), (std::vector<float>{5, 7}));  // 3 + 2w
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  (w * 3).sum().backward();
  EXPECT_EQ(vec(w.grad()), (std::vector<float>{3, 3}));
}

// tinygrad's backward (Python's Tensor.backward): every live float tensor in the graph gets its gradient, leaves
// and intermediates, without requires_grad; an integer one in the graph and a float one outside it get none
TEST(Autograd, BackwardAllFillsEveryLiveFloatTensorInTheGraph) {
  Tensor x = Tensor({1.0f, -2.0f});
  Tensor k = Tensor({2, 3});  // int32
  Tensor outside = Tensor({5.0f});
  Tensor y = x * 3 * k;       // 3k x
  Tensor z = (y * y).sum();   // 9 k^2 x^2
  z.backward_all();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{72, -324}));  // 18 k^2 x
  EXPECT_EQ(vec(y.grad()), (std::vector<float>{12, -36}));   // 2y
  EXPECT_EQ(vec(z.grad()), (std::vector<float>{1}));
  EXPECT_FALSE(k.grad().defined());
  EXPECT_FALSE(outside.grad().defined());
  EXPECT_FALSE(x.requires_grad());
  z.backward_all();  // accumulates, as backward()
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{144, -648}));
}

// Reading x.grad realizes the max that o is; a second backward_all() from o must still reach x (tinygrad's
// test_accumulate_gradients). A tensor realized after its gradient was taken keeps getting gradients.
TEST(Autograd, BackwardAllAgainAfterReadingTheGradient) {
  Tensor x = Tensor({1.0f, 3.0f, 2.0f});
  Tensor o = x.max();
  o.backward_all();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{0, 1, 0}));
  o.backward_all();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{0, 2, 0}));
  Tensor a = Tensor({1.0f, 2.0f}), b = Tensor({3.0f, 4.0f});
  Tensor d = a.dot(b);
  d.backward_all();
  EXPECT_EQ(vec(a.grad()), (std::vector<float>{3, 4}));
  d.backward_all();
  EXPECT_EQ(vec(a.grad()), (std::vector<float>{6, 8}));
  Tensor r = Tensor::rand({3});  // lazy until read
  (r * 2).sum().backward_all();
  r.realize();
  (r * 2).sum().backward_all();
  EXPECT_EQ(vec(r.grad()), (std::vector<float>{4, 4, 4}));
}

// a gradient is no target of a later backward_all(): the seed 1.0 of an earlier one, still live as o.grad, is the
// same node as the 1.0 of x - 1, and took that graph's gradient
TEST(Autograd, BackwardAllLeavesGradientsAlone) {
  Tensor o = Tensor({2.0f, 5.0f}).sum();
  o.backward_all();
  ASSERT_TRUE(o.grad().defined());  // a 0-d constant 1.0
  Tensor x = Tensor({1.0f, 2.0f, 3.0f});
  (x - 1).sum().backward_all();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(vec(o.grad()), (std::vector<float>{1}));
  EXPECT_FALSE(o.grad().grad().defined());
  Tensor s = Tensor(2.0f), f = Tensor::full({2}, 5.0f);  // constants made as tensors are targets, as tinygrad's
  (s * 3 + (f * f).sum()).backward_all();
  EXPECT_EQ(vec(s.grad()), (std::vector<float>{3}));
  EXPECT_EQ(vec(f.grad()), (std::vector<float>{10, 10}));
}

TEST(Autograd, SetGradReplacesTheGradient) {
  Tensor w = Tensor({1.0f, 2.0f}).requires_grad_();
  (w * 3).sum().backward();
  w.set_grad(Tensor({10.0, 20.0}, dtypes::float64));  // cast to w's dtype
  EXPECT_EQ(w.grad().dtype(), dtypes::float32);
  (w * 3).sum().backward();
  EXPECT_EQ(vec(w.grad()), (std::vector<float>{13, 23}));
  w.set_grad(Tensor());
  EXPECT_FALSE(w.grad().defined());
  EXPECT_THROW(w.set_grad(Tensor({1.0f, 2.0f, 3.0f})), ShapeError);
}

// Reading a value before backward() (printing a layer's output or the loss, a statistic of an activation) loses no
// gradient: the realize replaced the read tensors (and the nodes the schedule stored) by buffers, and backward()
// differentiates through the graphs they had. The reference is the same step without the reads. Before: h's read
// left w1 without a gradient, a stride-2 conv's printed output its weight, silently.
TEST(Autograd, ReadingValuesBeforeBackwardKeepsEveryGradient) {
  auto run = [](int reads) {
    Tensor::manual_seed(7);
    Tensor w1 = Tensor::randn({4, 8}).requires_grad_(), w2 = Tensor::randn({8, 3}).requires_grad_();
    Tensor cw = Tensor::randn({2, 1, 3, 3}).requires_grad_(), cb = Tensor::randn({2}).requires_grad_();
    Tensor x = Tensor::randn({5, 4}), img = Tensor::randn({1, 1, 7, 7}), y({0, 1, 2, 1, 0});
    Tensor h = x.matmul(w1).relu();
    Tensor conv = img.conv2d(cw, cb, 1, /*stride*/ 2);
    if (reads & 1) (void)h.mean().item<float>();  // h itself is stored: a matmul's output is its own kernel
    if (reads & 2) (void)conv.to_vector<float>();
    Tensor loss = h.matmul(w2).sparse_categorical_crossentropy(y);
    if (reads & 4) (void)loss.item<float>();
    Tensor later = h.square().mean();  // built after h was realized: reads h's buffer
    (loss + conv.square().mean() + later).backward();
    std::vector<std::vector<float>> g;
    for (const Tensor& p : {w1, w2, cw, cb}) {
      EXPECT_TRUE(p.grad().defined()) << "reads " << reads;
      g.push_back(p.grad().defined() ? vec(p.grad()) : std::vector<float>{});
    }
    return g;
  };
  std::vector<std::vector<float>> want = run(0);
  for (int reads : {1, 2, 4, 7}) {
    std::vector<std::vector<float>> got = run(reads);
    for (size_t p = 0; p < want.size(); p++) {
      ASSERT_EQ(got[p].size(), want[p].size()) << "reads " << reads << ", parameter " << p;
      for (size_t i = 0; i < want[p].size(); i++) EXPECT_NEAR(got[p][i], want[p][i], 1e-5) << "reads " << reads << ", parameter " << p;
    }
  }
}

// A layer's lazily made parameter (no buffer yet) realized between the forward and backward() still gets its
// gradient: the graphs kept for backward() name it by its new buffer.
TEST(Autograd, AParameterRealizedAfterTheForwardStillGetsItsGradient) {
  Tensor base = Tensor({1.f, 2.f, 3.f});
  Tensor w = (base * 2).requires_grad_();  // lazy: its graph reads base's buffer
  Tensor y = (w * w).sum();
  (void)y.item<float>();
  w.realize();
  y.backward();
  EXPECT_EQ(vec(w.grad()), (std::vector<float>{4, 8, 12}));  // 2w
}

TEST(Autograd, BroadcastingIsSummedBack) {
  Tensor b = Tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
  Tensor x = Tensor::ones({4, 3});
  (x + b).sum().backward();
  EXPECT_EQ(vec(b.grad()), (std::vector<float>{4, 4, 4}));
  Tensor s = Tensor(2.0f).requires_grad_();
  (x * s).sum().backward();
  EXPECT_EQ(s.grad().item<float>(), 12.0f);
  EXPECT_EQ(s.grad().shape(), Shape{});
}

TEST(Autograd, UpstreamGradientForNonScalars) {
  Tensor x = Tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
  (x * x).backward(Tensor({1.0f, 0.0f, -1.0f}));
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{2, 0, -6}));
}

TEST(Autograd, DetachAndNoGradStopTheGradient) {
  Tensor x = Tensor({2.0f, 3.0f}).requires_grad_();
  (x * x.detach()).sum().backward();  // d/dx of x * c with c = x held constant
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{2, 3}));
  x.zero_grad();
  Tensor c;
  {
    NoGradGuard guard;
    c = x * 10;  // made under no_grad: a constant for the gradient
  }
  (x * c).sum().backward();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{20, 30}));
  EXPECT_FALSE(Tensor::no_grad);
}

TEST(Autograd, ADetachedCopyIsALeafOfItsOwn) {
  // PyTorch's idiom for a fresh leaf: x.detach().requires_grad_(); its gradient stops at the detach, not before it
  Tensor x = Tensor({2.0f, 3.0f}).requires_grad_();
  Tensor leaf = (x * 2).detach().requires_grad_();
  Tensor loss = (leaf * leaf).sum();
  EXPECT_EQ(vec(loss.gradient({leaf})[0]), (std::vector<float>{8, 12}));
  EXPECT_EQ(vec(loss.gradient({x})[0]), (std::vector<float>{0, 0}));  // below the detach: nothing flows to x
  loss.backward();
  EXPECT_EQ(vec(leaf.grad()), (std::vector<float>{8, 12}));
}

TEST(Autograd, ContiguousBackwardKeepsValuesAndRealizesTheGradient) {
  // the value passes unchanged; the gradient is the same, realized as its own contiguous buffer in the tensor's
  // shape (a permuted upstream gradient is copied once, in this tensor's order)
  Tensor x = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor c = Tensor(std::vector<float>{1, 10, 100, 1000, 10000, 100000}, {3, 2});
  Tensor y = (x * 2).contiguous_backward();
  EXPECT_EQ(vec(y), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  Tensor g = (y.permute({1, 0}) * c).sum().gradient({x})[0];
  EXPECT_EQ(vec(g), (std::vector<float>{2, 200, 20000, 20, 2000, 200000}));
  int64_t before = GlobalCounters::kernel_count;
  (y.permute({1, 0}) * c).sum().gradient({x})[0].realize();
  int64_t with = GlobalCounters::kernel_count - before;
  before = GlobalCounters::kernel_count;
  ((x * 2).permute({1, 0}) * c).sum().gradient({x})[0].realize();
  EXPECT_EQ(with, GlobalCounters::kernel_count - before + 1);  // one kernel more: the realized gradient
}

TEST(Autograd, AConvWithALargeWeightMatchesItsChannelSlices) {
  // a weight of 2^18 elements or more over few output pixels (2 x 5 x 5 here) is read in blocks of 32 output
  // channels (conv.cpp); each 32-channel slice of
  // it is small and read the plain way: the cat of the slices' convs is the reference, values and gradients, for a
  // stride-1 conv (gradients through convolutions), a stride-2 one (through the window gather) and a grouped one
  Tensor::manual_seed(3);
  struct Case { int64_t groups, stride, pad; };
  for (Case c : {Case{1, 1, 1}, Case{1, 2, 0}, Case{2, 1, 1}}) {
    Tensor x = Tensor::randn({2, 512 * c.groups, 5, 5}).realize(), w = Tensor::randn({64 * c.groups, 512, 3, 3}).realize();
    Tensor b = Tensor::randn({64 * c.groups}).realize();
    ASSERT_GE(w.numel(), int64_t{1} << 18);
    Tensor xa = x.detach().requires_grad_(), wa = w.detach().requires_grad_(), ba = b.detach().requires_grad_();
    Tensor y = xa.conv2d(wa, ba, c.groups, c.stride, 1, c.pad);
    Tensor up = Tensor::randn(y.shape()).realize();
    std::vector<Tensor> g = (y * up).sum().gradient({xa, wa, ba});
    Tensor xb = x.detach().requires_grad_(), wb = w.detach().requires_grad_(), bb = b.detach().requires_grad_();
    std::vector<Tensor> parts;  // per group, its two 32-channel slices over the group's input channels
    for (int64_t grp = 0; grp < c.groups; grp++)
      for (int64_t s = 0; s < 2; s++) {
        int64_t lo = grp * 64 + s * 32;
        Tensor xs = xb.shrink({{0, 2}, {grp * 512, grp * 512 + 512}, {0, 5}, {0, 5}});
        Tensor ws = wb.shrink({{lo, lo + 32}, {0, 512}, {0, 3}, {0, 3}}), bs = bb.shrink({{lo, lo + 32}});
        ASSERT_LT(ws.numel(), int64_t{1} << 18);
        parts.push_back(xs.conv2d(ws, bs, 1, c.stride, 1, c.pad));
      }
    Tensor y_ref = Tensor::cat(parts, 1);
    std::vector<Tensor> g_ref = (y_ref * up).sum().gradient({xb, wb, bb});
    auto near = [&](const Tensor& got, const Tensor& want, const char* what) {
      std::vector<float> a = vec(got), r = vec(want);
      ASSERT_EQ(a.size(), r.size()) << what;
      for (size_t i = 0; i < a.size(); i++)
        ASSERT_NEAR(a[i], r[i], 1e-3f * (1 + std::fabs(r[i]))) << what << " at " << i << " groups " << c.groups << " stride " << c.stride;
    };
    near(y, y_ref, "y");
    near(g[0], g_ref[0], "dx");
    near(g[1], g_ref[1], "dw");
    near(g[2], g_ref[2], "db");
  }
}

TEST(Autograd, StrideOneConvolutionGradientsMatchFiniteDifferences) {
  // conv2d with stride 1 and symmetric padding differentiates through convolutions (a transposed one for the
  // input); central differences of the loss in float64 check both gradients element by element
  Tensor::manual_seed(7);
  Tensor x = Tensor::randn({2, 3, 5, 5}, dtypes::float64).realize(), w = Tensor::randn({4, 3, 3, 3}, dtypes::float64).realize();
  Tensor c = Tensor::randn({2, 4, 5, 5}, dtypes::float64).realize();
  auto loss = [&](const Tensor& a, const Tensor& b) { return (a.conv2d(b, std::nullopt, 1, 1, 1, 1) * c).sum(); };
  Tensor xg = x.detach().requires_grad_(), wg = w.detach().requires_grad_();
  std::vector<Tensor> g = loss(xg, wg).gradient({xg, wg});
  std::vector<double> gx = g[0].to_vector<double>(), gw = g[1].to_vector<double>();
  auto check = [&](const Tensor& t, const std::vector<double>& analytic, bool is_x) {
    std::vector<double> v = t.to_vector<double>();
    for (size_t i = 0; i < v.size(); i += 7) {
      std::vector<double> up = v, down = v;
      up[i] += 1e-6, down[i] -= 1e-6;
      Tensor tu = Tensor(up, t.shape()), td = Tensor(down, t.shape());
      double f1 = (is_x ? loss(tu, w) : loss(x, tu)).item<double>(), f0 = (is_x ? loss(td, w) : loss(x, td)).item<double>();
      EXPECT_NEAR(analytic[i], (f1 - f0) / 2e-6, 1e-5) << (is_x ? "x" : "w") << " element " << i;
    }
  };
  check(x, gx, true);
  check(w, gw, false);
}

TEST(Autograd, FunctionalGradientLeavesGradAlone) {
  Tensor x = Tensor({1.0f, 2.0f}).requires_grad_(), y = Tensor({3.0f, 4.0f}).requires_grad_();
  std::vector<Tensor> g = (x * y).sum().gradient({x, y});
  EXPECT_EQ(vec(g[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(vec(g[1]), (std::vector<float>{1, 2}));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(y.grad().defined());
  // works without requires_grad too, and through integer-only paths gives zeros
  Tensor z = Tensor({1.5f, -2.5f});
  EXPECT_EQ(vec((z * 2).sum().gradient({z})[0]), (std::vector<float>{2, 2}));
  EXPECT_EQ(vec(z.sign().sum().gradient({z})[0]), (std::vector<float>{0, 0}));
}

TEST(Autograd, IntegerAndBoolPathsCarryNoGradient) {
  Tensor x = Tensor({1.7f, -2.2f}).requires_grad_();
  Tensor r = (x.cast(dtypes::int32).cast(dtypes::float32) * x).sum();  // trunc(x) * x: d/dx = trunc(x)
  r.backward();
  EXPECT_EQ(vec(x.grad()), (std::vector<float>{1, -2}));
}

TEST(Autograd, ThroughAConvNetAndLoss) {
  // a small conv net: the loss gradient flows to every parameter and matches finite differences in float64
  Tensor::manual_seed(7);
  Tensor img = Tensor::randn({2, 1, 6, 6}, dtypes::float64).realize();
  Tensor w = Tensor::kaiming_uniform({3, 1, 3, 3}, 0.01, dtypes::float64).realize().requires_grad_();
  Tensor lw = Tensor::glorot_uniform({12, 4}, dtypes::float64).realize().requires_grad_();
  Tensor y = Tensor({1, 3});
  auto loss = [&](const Tensor& wc) { return img.conv2d(wc).relu().max_pool2d().flatten(1).linear(lw).sparse_categorical_crossentropy(y); };
  loss(w).backward();
  std::vector<double> g = w.grad().to_vector<double>(), wv = w.to_vector<double>();
  for (size_t j = 0; j < wv.size(); j += 4) {
    std::vector<double> hi = wv, lo = wv;
    hi[j] += 1e-6, lo[j] -= 1e-6;
    double fd = (loss(Tensor(hi, w.shape())).item<double>() - loss(Tensor(lo, w.shape())).item<double>()) / 2e-6;
    EXPECT_NEAR(g[j], fd, 1e-6 + 1e-5 * std::fabs(fd)) << j;
  }
  EXPECT_EQ(lw.grad().shape(), (Shape{12, 4}));
}

TEST(Autograd, EqualConstantLeavesKeepTheirOwnGradients) {
  // two zeros biases are the same graph of constants; each must get only its own gradient
  Tensor b1 = Tensor::zeros({2}).requires_grad_(), b2 = Tensor::zeros({2}).requires_grad_();
  Tensor x = Tensor({1.0f, 2.0f});
  ((x + b1) * 3.0f + (x + b2) * 5.0f).sum().backward();
  EXPECT_EQ(vec(b1.grad()), (std::vector<float>{3, 3}));
  EXPECT_EQ(vec(b2.grad()), (std::vector<float>{5, 5}));
}

TEST(Autograd, DeepBackwardFreesIntermediatesEarly) {
  // forward + backward of a 20-layer MLP as one realize: the peak of the bytes held stays within the parameters, the
  // gradients, one activation per layer and a few temporaries (every buffer of the schedule held to the end would
  // add a gradient per layer and more)
  const int64_t layers = 20, width = 64, batch = 256;
  std::vector<Tensor> ws;
  for (int64_t i = 0; i < layers; i++) ws.push_back(Tensor::glorot_uniform({width, width}).requires_grad_().realize());
  Tensor x = Tensor::randn({batch, width}).realize();
  auto grads = [&] {
    Tensor h = x;
    for (const Tensor& w : ws) h = h.matmul(w).relu();
    return h.square().mean().gradient(ws);
  };
  Tensor::realize(grads());  // compile first
  std::vector<Tensor> g = grads();
  int64_t held = GlobalCounters::mem_used, weight = width * width * 4, act = batch * width * 4;
  GlobalCounters::reset();
  Tensor::realize(g);
  int64_t peak = GlobalCounters::mem_peak - held;  // above the parameters and the input
  EXPECT_LE(peak, layers * (weight + act) + 4 * act);
  EXPECT_EQ(GlobalCounters::mem_used - held, layers * weight);  // afterwards only the gradients stay
}

TEST(Autograd, BadCallsRaise) {
  Tensor x = Tensor({1.0f, 2.0f}).requires_grad_();
  EXPECT_THROW((x * 2).backward(), ShapeError);                       // not a scalar, no upstream gradient
  EXPECT_THROW((x * 2).backward(Tensor({1.0f})), ShapeError);         // upstream of the wrong shape
  EXPECT_THROW(Tensor({1.0f, 2.0f}).sum().backward(), ArgumentError);  // nothing requires a gradient
  EXPECT_THROW(x.sum().gradient({Tensor({5.0f})}), ArgumentError);     // unrelated target
  EXPECT_THROW(Tensor({1, 2}).requires_grad_(), DTypeError);           // integers carry no gradient
  EXPECT_THROW(Tensor({1, 2}).sum().backward(), DTypeError);
  try {
    (x * 2).backward();
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "backward");
    EXPECT_NE(std::string(e.what()).find("(2,)"), std::string::npos);
    EXPECT_NE(std::string(e.where().file_name()).find("test_autograd.cpp"), std::string::npos);
  }
}

}  // namespace
