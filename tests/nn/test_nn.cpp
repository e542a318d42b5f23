// tg::nn layers and tg::optim optimizers against PyTorch (tests/golden/nn.txt from tools/gen_nn_goldens.py; numpy
// references from the papers for LAMB, LARS and Muon, which torch 1.13 lacks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>

#include <tg/tg.h>

#include "support/golden.h"

using namespace tg;
using tg::testing::GoldenCase;

namespace {

using In = std::vector<Tensor>;

const GoldenCase& golden(const std::string& op, const std::string& variant) {
  for (const GoldenCase& c : tg::testing::golden_cases("nn.txt").at(op))
    if (c.variant == variant) return c;
  throw std::runtime_error("no golden " + op + "/" + variant);
}

int64_t arg(const GoldenCase& c, size_t i) { return static_cast<int64_t>(c.args.at(i)); }

// the case's inputs as float64 (integer ones as they are), x first, then the layer's tensors
In inputs(const GoldenCase& c) {
  In in;
  for (const auto& g : c.inputs) in.push_back(g.dtype.is_float() ? Tensor(g.floats, g.shape).realize() : g.make());
  return in;
}

// output and gradients of sum(out * w) against PyTorch's
void check(const GoldenCase& c, const In& in, const std::function<Tensor()>& forward) {
  SCOPED_TRACE(c.op + "/" + c.variant);
  Tensor out = forward();
  std::vector<double> w(static_cast<size_t>(out.numel()));
  for (size_t k = 0; k < w.size(); k++) w[k] = std::sin(1.0 + 0.7 * static_cast<double>(k));
  std::vector<Tensor> targets;
  for (const auto& [i, g] : c.grads) targets.push_back(in[i]);
  std::vector<Tensor> grads = (out * Tensor(w, out.shape())).sum().gradient(targets);
  size_t t = 0;
  for (const auto& [i, want] : c.grads) EXPECT_EQ(tg::testing::compare(grads[t++], want, 1e-5, 1e-4), "") << "gradient of input " << i;
  // after the gradients: realizing `out` first would replace its statistics with buffers and cut the gradient there
  EXPECT_EQ(tg::testing::compare(out.cast(c.output.dtype), c.output, 1e-5, 1e-4), "");
}

TEST(NN, LinearMatchesPyTorch) {
  for (const char* v : {"bias", "nobias"}) {
    const GoldenCase& c = golden("Linear", v);
    In in = inputs(c);
    nn::Linear l(arg(c, 0), arg(c, 1), in.size() == 3);
    EXPECT_EQ(l.weight.shape(), in[1].shape());
    l.weight = in[1];
    if (in.size() == 3) l.bias = in[2];
    check(c, in, [&] { return l(in[0]); });
  }
}

TEST(NN, ConvolutionsMatchPyTorch) {
  {
    const GoldenCase& c = golden("Conv2d", "s2p1");
    In in = inputs(c);
    nn::Conv2d conv(arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3), arg(c, 4));
    EXPECT_EQ(conv.weight.shape(), in[1].shape());
    conv.weight = in[1], conv.bias = in[2];
    check(c, in, [&] { return conv(in[0]); });
  }
  {
    const GoldenCase& c = golden("Conv1d", "plain");
    In in = inputs(c);
    nn::Conv1d conv(arg(c, 0), arg(c, 1), arg(c, 2), 1, 0, 1, 1, false);
    EXPECT_EQ(conv.weight.shape(), in[1].shape());
    conv.weight = in[1];
    check(c, in, [&] { return conv(in[0]); });
  }
  {
    const GoldenCase& c = golden("ConvTranspose2d", "s2");
    In in = inputs(c);
    nn::ConvTranspose2d conv(arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3));
    EXPECT_EQ(conv.weight.shape(), in[1].shape());
    conv.weight = in[1], conv.bias = in[2];
    check(c, in, [&] { return conv(in[0]); });
  }
}

TEST(NN, BatchNormTrainingAndEvalMatchPyTorch) {
  const GoldenCase& c = golden("BatchNorm", "train");
  In in = inputs(c);
  nn::BatchNorm bn(arg(c, 0));
  bn.running_mean = bn.running_mean.cast(dtypes::float64), bn.running_var = bn.running_var.cast(dtypes::float64);
  bn.weight = in[1], bn.bias = in[2];
  {
    TrainGuard train;
    check(c, in, [&] { return bn(in[0]); });
  }
  // the running statistics after that one training step (the gradient pass above ran forward once more: redo it)
  nn::BatchNorm once(arg(c, 0));
  once.running_mean = once.running_mean.cast(dtypes::float64), once.running_var = once.running_var.cast(dtypes::float64);
  {
    TrainGuard train;
    once(in[0]);
  }
  EXPECT_EQ(tg::testing::compare(once.running_mean.cast(dtypes::float32), golden("BatchNorm", "running_mean").output, 1e-6, 1e-5), "");
  EXPECT_EQ(tg::testing::compare(once.running_var.cast(dtypes::float32), golden("BatchNorm", "running_var").output, 1e-6, 1e-5), "");
  EXPECT_EQ(once.num_batches_tracked.item<int64_t>(), 1);
  const GoldenCase& e = golden("BatchNorm", "eval");
  In ein = inputs(e);
  bn.weight = ein[1], bn.bias = ein[2], bn.running_mean = ein[3], bn.running_var = ein[4];
  check(e, ein, [&] { return bn(ein[0]); });  // not training: the running statistics
}

TEST(NN, NormalizationsMatchPyTorch) {
  {
    const GoldenCase& c = golden("LayerNorm", "last2");
    In in = inputs(c);
    nn::LayerNorm ln({arg(c, 0), arg(c, 1)});
    ln.weight = in[1], ln.bias = in[2];
    check(c, in, [&] { return ln(in[0]); });
  }
  {
    const GoldenCase& c = golden("LayerNorm2d", "plain");
    In in = inputs(c);
    nn::LayerNorm2d ln(arg(c, 0));
    ln.weight = in[1], ln.bias = in[2];
    check(c, in, [&] { return ln(in[0]); });
  }
  {
    const GoldenCase& c = golden("RMSNorm", "plain");
    In in = inputs(c);
    nn::RMSNorm rms(arg(c, 0));
    rms.weight = in[1];
    check(c, in, [&] { return rms(in[0]); });
  }
  {
    const GoldenCase& c = golden("GroupNorm", "3groups");
    In in = inputs(c);
    nn::GroupNorm gn(arg(c, 0), arg(c, 1));
    gn.weight = in[1], gn.bias = in[2];
    check(c, in, [&] { return gn(in[0]); });
  }
  {
    const GoldenCase& c = golden("InstanceNorm", "plain");
    In in = inputs(c);
    nn::InstanceNorm inorm(arg(c, 0));
    inorm.weight = in[1], inorm.bias = in[2];
    check(c, in, [&] { return inorm(in[0]); });
  }
}

TEST(NN, EmbeddingAndLSTMCellMatchPyTorch) {
  {
    const GoldenCase& c = golden("Embedding", "plain");
    In in = inputs(c);
    nn::Embedding emb(arg(c, 0), arg(c, 1));
    emb.weight = in[1];
    check(c, in, [&] { return emb(in[0]); });
  }
  for (const char* part : {"h", "c"}) {
    const GoldenCase& c = golden("LSTMCell", part);
    In in = inputs(c);
    nn::LSTMCell cell(arg(c, 0), arg(c, 1));
    cell.weight_ih = in[3], cell.weight_hh = in[4], cell.bias_ih = in[5], cell.bias_hh = in[6];
    std::pair<Tensor, Tensor> hc{in[1], in[2]};
    check(c, in, [&] { auto r = cell(in[0], &hc); return std::string(part) == "h" ? r.first : r.second; });
  }
}

TEST(NN, BadInputRaisesTheLayersError) {
  // each a tg::Error naming the layer, never a crash or a std:: exception
  auto raises = [](const char* layer, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << layer << ": no error";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find(layer), std::string::npos) << e.what();
    }
  };
  raises("Linear", [] { nn::Linear(3, 2)(Tensor::zeros({4, 5})); });
  raises("Conv", [] { nn::Conv2d(3, 2, 3)(Tensor::zeros({1, 4, 8, 8})); });
  raises("BatchNorm", [] { nn::BatchNorm(3)(Tensor::zeros({2, 4})); });
  raises("BatchNorm", [] { nn::BatchNorm(3)(Tensor::zeros({3})); });
  raises("BatchNorm", [] {  // one value per channel has no variance to train with (PyTorch raises too)
    TrainGuard train;
    nn::BatchNorm(3)(Tensor::zeros({1, 3, 1}));
  });
  EXPECT_EQ(nn::BatchNorm(3)(Tensor::zeros({1, 3})).shape(), (Shape{1, 3}));  // evaluating one sample is fine
  // no inputs: an empty weight and a zero bias (PyTorch's bound 1 / sqrt(fan_in) is 0 there); it raised in uniform
  EXPECT_EQ(nn::Linear(0, 3)(Tensor::zeros({2, 0})).to_vector<float>(), std::vector<float>(6, 0.0f));
  raises("LayerNorm", [] { nn::LayerNorm({4})(Tensor::zeros({2, 3})); });
  raises("GroupNorm", [] { nn::GroupNorm(2, 4)(Tensor::zeros({4})); });
  raises("InstanceNorm", [] { nn::InstanceNorm(3, 1e-5, false)(Tensor::zeros({3})); });
  raises("InstanceNorm", [] { nn::InstanceNorm(3)(Tensor::zeros({2, 4, 5})); });
  raises("LSTMCell", [] { nn::LSTMCell(4, 5)(Tensor(1.0f)); });
  raises("LSTMCell", [] { nn::LSTMCell(4, 5)(Tensor::zeros({2, 3})); });
  EXPECT_THROW(nn::Embedding(5, 2)(Tensor::zeros({3})), DTypeError);
  // a stride, dilation or padding list that does not fit the layer's dimensions, when the layer is made
  auto refused = [](const char* layer, const char* what, const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << layer << " " << what << ": no error";
    } catch (const ArgumentError& e) {
      EXPECT_EQ(e.op(), layer) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused("Conv", "stride", [] { nn::Conv2d(2, 2, 3, std::vector<int64_t>{}); });
  refused("Conv", "stride", [] { nn::Conv2d(2, 2, 3, 0); });
  refused("Conv", "dilation", [] { nn::Conv2d(2, 2, 3, 1, 0, {1, 1, 1}); });
  refused("Conv", "padding", [] { nn::Conv2d(2, 2, 3, 1, {1, 1, 1}); });
  refused("ConvTranspose", "output_padding", [] { nn::ConvTranspose2d(2, 2, 3, 2, 0, {1, 1, 1}); });
  EXPECT_EQ(nn::Conv2d(1, 1, 3, 1, {1, 1, 0, 0})(Tensor::zeros({1, 1, 4, 4})).shape(), (Shape{1, 1, 2, 4}));  // flat pairs
}

TEST(NN, DefaultInitializationAsTinygrad) {
  // kaiming_uniform(a = sqrt(5)) weights: bound sqrt(6 / ((1 + 5) fan_in)) = 1 / sqrt(fan_in); bias the same bound
  Tensor::manual_seed(5);  // the spread check below fails for 0.5% of seeds on the 50 biases
  nn::Linear l(100, 50);
  double bound = 1.0 / std::sqrt(100.0);
  for (const Tensor* t : {&l.weight, &l.bias}) {
    std::vector<float> v = t->to_vector<float>();
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    EXPECT_GE(*lo, -bound);
    EXPECT_LE(*hi, bound);
    EXPECT_GT(*hi, 0.8 * bound);  // spread over the range, not a constant
  }
  nn::BatchNorm bn(4);
  EXPECT_EQ(bn.weight.to_vector<float>(), std::vector<float>(4, 1));
  EXPECT_EQ(bn.running_var.to_vector<float>(), std::vector<float>(4, 1));
  EXPECT_TRUE(l.weight.requires_grad() && !bn.running_mean.requires_grad());
}

TEST(NN, SequentialAppliesEachLayerInOrder) {
  nn::Linear l1(3, 4), l2(4, 2);
  std::vector<nn::Linear> layers{nn::Linear(3, 3), nn::Linear(3, 2)};
  Tensor x = Tensor::randn({5, 3}).realize();
  auto relu = [](const Tensor& t) { return t.relu(); };
  EXPECT_EQ(x.sequential(l1, relu, l2).to_vector<float>(), l2(l1(x).relu()).to_vector<float>());
  EXPECT_EQ(x.sequential(layers).to_vector<float>(), layers[1](layers[0](x)).to_vector<float>());
  EXPECT_EQ(x.sequential(std::vector<nn::Linear>{}).to_vector<float>(), x.to_vector<float>());
}

TEST(NN, StateDictNamesAndLoading) {
  struct Net : nn::Module {
    nn::Linear l1{3, 4};
    std::vector<nn::Linear> layers{nn::Linear(4, 4), nn::Linear(4, 2, false)};
    nn::BatchNorm bn{2};
    void state(const nn::StateVisitor& v) override { v("l1", l1), v("layers", layers), v("bn", bn); }
  } net;
  StateDict sd = get_state_dict(net);
  std::vector<std::string> names;
  for (const auto& [k, t] : sd) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"bn.bias", "bn.num_batches_tracked", "bn.running_mean", "bn.running_var", "bn.weight",
                                             "l1.bias", "l1.weight", "layers.0.bias", "layers.0.weight", "layers.1.weight"}));
  EXPECT_EQ(get_parameters(net).size(), 10u);
  // loading: values arrive; wrong shape, wrong dtype, missing and unexpected names are errors naming the tensor
  StateDict other;
  for (const auto& [k, t] : sd) other[k] = Tensor::full(t.shape(), 0.5, t.dtype());
  load_state_dict(net, other);
  EXPECT_EQ(net.layers[1].weight.to_vector<float>(), std::vector<float>(8, 0.5f));
  StateDict bad = other;
  bad["l1.weight"] = Tensor::zeros({4, 4});
  EXPECT_THROW(load_state_dict(net, bad), ShapeError);
  bad = other;
  bad["l1.weight"] = Tensor::zeros({4, 3}, dtypes::float16);
  EXPECT_THROW(load_state_dict(net, bad), DTypeError);
  bad = other;
  bad.erase("bn.weight");
  bad["extra"] = Tensor::zeros({1});
  try {
    load_state_dict(net, bad);
    ADD_FAILURE() << "no error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("missing from the state: bn.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not in the model: extra"), std::string::npos) << e.what();
  }
  bad.erase("extra");
  load_state_dict(net, bad, false);  // not strict: what is there is loaded
}

// 3 steps from the golden p0 with the golden gradients (loss sum(p * g_k) has gradient g_k)
Tensor run_optimizer(const GoldenCase& c, const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>& make) {
  Tensor p = Tensor(c.inputs[0].floats, c.inputs[0].shape).realize().requires_grad_();
  std::unique_ptr<optim::Optimizer> opt = make({p});
  for (size_t k = 1; k <= 3; k++) {
    opt->zero_grad();
    (p * Tensor(c.inputs[k].floats, c.inputs[k].shape)).sum().backward();
    opt->step();
  }
  return p;
}

TEST(Optim, FirstStepsMatchPyTorchAndThePapers) {
  auto lars = [](optim::LARS o) { return std::make_unique<optim::LARS>(std::move(o)); };
  auto lamb = [](optim::LAMB o) { return std::make_unique<optim::LAMB>(std::move(o)); };
  std::map<std::string, std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>, const std::vector<double>&)>> makers = {
      {"sgd", [&](auto ps, auto& a) { return lars(optim::SGD(ps, a[0], a[1], a[2], a[3] != 0)); }},
      {"sgd_momentum", [&](auto ps, auto& a) { return lars(optim::SGD(ps, a[0], a[1], a[2], a[3] != 0)); }},
      {"sgd_nesterov_wd", [&](auto ps, auto& a) { return lars(optim::SGD(ps, a[0], a[1], a[2], a[3] != 0)); }},
      {"adam", [&](auto ps, auto& a) { return lamb(optim::Adam(ps, a[0], a[1], a[2], a[3])); }},
      {"adam_betas", [&](auto ps, auto& a) { return lamb(optim::Adam(ps, a[0], a[1], a[2], a[3])); }},
      {"adamw", [&](auto ps, auto& a) { return lamb(optim::AdamW(ps, a[0], a[1], a[2], a[3], a[4])); }},
      {"lamb", [&](auto ps, auto& a) { return lamb(optim::LAMB(ps, a[0], a[1], a[2], a[3], a[4])); }},
      {"lars", [&](auto ps, auto& a) { return lars(optim::LARS(ps, a[0], a[1], a[2], false, true, a[3])); }},
      {"muon", [&](auto ps, auto& a) { return lars(optim::Muon(ps, a[0], a[1], 0.0, static_cast<int>(a[2]))); }},
      {"muon_wd", [&](auto ps, auto& a) { return lars(optim::Muon(ps, a[0], a[1], a[3], static_cast<int>(a[2]))); }},
  };
  for (const GoldenCase& c : tg::testing::golden_cases("nn.txt").at("optim")) {
    SCOPED_TRACE(c.variant);
    auto& make = makers.at(c.variant);
    Tensor p = run_optimizer(c, [&](std::vector<Tensor> ps) { return make(std::move(ps), c.args); });
    EXPECT_EQ(tg::testing::compare(p.cast(dtypes::float32), c.output, 2e-6, 1e-4), "");
  }
}

TEST(Optim, LearningRateIsATensorAndBadParamsRaise) {
  Tensor p = Tensor({1.0f, 2.0f}).requires_grad_();
  optim::LARS sgd = optim::SGD({p}, 0.5);
  (p * 2.0f).sum().backward();
  sgd.step();
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{0.0f, 1.0f}));
  sgd.lr.assign(Tensor(0.25f));  // a new rate, same kernels
  sgd.zero_grad();
  (p * 2.0f).sum().backward();
  sgd.step();
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{-0.5f, 0.5f}));
  EXPECT_THROW(optim::Adam({Tensor({1.0f})}), ArgumentError);  // nothing requires a gradient
}

// SGD's momentum buffer holds gradients, not lr-scaled steps: a changed rate acts on the whole buffer at once, as in
// PyTorch (and tinygrad's SGD, classic=False). PyTorch 1.13: w = torch.tensor([1., 2.]); o = torch.optim.SGD([w], 0.1,
// 0.9, nesterov=...); loss (w * w).sum(); lr set to 1.0 before the second step. Before: the buffer held 0.1 * g.
TEST(Optim, SgdMomentumFollowsALearningRateChangeAsPyTorch) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov);
    Tensor w = Tensor({1.0f, 2.0f}).requires_grad_();
    optim::LARS sgd = optim::SGD({w}, 0.1, 0.9, 0.0, nesterov);
    for (int step = 0; step < 2; step++) {
      if (step == 1) sgd.lr.assign(Tensor(1.0f));
      sgd.zero_grad();
      (w * w).sum().backward();
      sgd.step();
    }
    std::vector<float> want_w = nesterov ? std::vector<float>{-3.356f, -6.712f} : std::vector<float>{-2.6f, -5.2f};
    std::vector<float> want_b = nesterov ? std::vector<float>{3.04f, 6.08f} : std::vector<float>{3.4f, 6.8f};
    std::vector<float> got_w = w.to_vector<float>(), got_b = sgd.b[0].to_vector<float>();
    for (size_t i = 0; i < 2; i++) {
      EXPECT_NEAR(got_w[i], want_w[i], 1e-5);
      EXPECT_NEAR(got_b[i], want_b[i], 1e-5);
    }
  }
}

TEST(Datasets, MnistReadsIdxFilesAndRejectsBadOnes) {
  std::string dir = ::testing::TempDir() + "/tg_mnist";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, std::vector<unsigned char> bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  auto idx = [](std::vector<uint32_t> dims, unsigned char fill) {
    std::vector<unsigned char> b{0, 0, 8, static_cast<unsigned char>(dims.size())};
    size_t n = 1;
    for (uint32_t d : dims) {
      for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(d >> s));
      n *= d;
    }
    for (size_t i = 0; i < n; i++) b.push_back(static_cast<unsigned char>(fill + i));
    return b;
  };
  write("train-images-idx3-ubyte", idx({2, 28, 28}, 0));
  write("train-labels-idx1-ubyte", idx({2}, 7));
  write("t10k-images-idx3-ubyte", idx({1, 28, 28}, 3));
  write("t10k-labels-idx1-ubyte", idx({1}, 9));
  datasets::MNIST m = datasets::mnist(dir);
  EXPECT_EQ(m.X_train.shape(), (Shape{2, 1, 28, 28}));
  EXPECT_EQ(m.X_train.dtype(), dtypes::uint8);
  EXPECT_EQ(m.Y_train.to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(m.X_test.to_vector<int32_t>()[5], 8);
  std::vector<unsigned char> truncated = idx({2}, 7);
  truncated.pop_back();
  write("train-labels-idx1-ubyte", truncated);
  EXPECT_THROW(datasets::mnist(dir), ArgumentError);
  write("train-labels-idx1-ubyte", {1, 2, 3});
  EXPECT_THROW(datasets::mnist(dir), ArgumentError);
  EXPECT_THROW(datasets::mnist(dir + "/nowhere"), ArgumentError);
}

}  // namespace
