// Tensors held by several devices (Tensor::shard, src/multi/): every result is checked against the same ops on one
// device (the unsharded values), allreduces against sums computed here on the host, and replicas against each other
// bit for bit. The devices are CPU instances (CPU, CPU:1, CPU:2): each has its own buffers and programs, so every
// part really lives on its own device and moves between them by copies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "support/device_test.h"
#include "support/expect_error.h"
#include "tg/tg.h"

namespace tg {
namespace {

const std::vector<std::string> two{"CPU", "CPU:1"}, three{"CPU", "CPU:1", "CPU:2"};

std::vector<float> floats(const Tensor& t) { return t.cast(dtypes::float32).to_vector<float>(); }

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = floats(got), w = floats(want);
  for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "at " << i;
}

std::vector<uint32_t> bits(const Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

// every device's part equal to the first, bit for bit
void expect_replicas_identical(const Tensor& t) {
  std::vector<Tensor> parts = t.shards();
  ASSERT_GT(parts.size(), 1u);
  for (size_t i = 1; i < parts.size(); i++) {
    EXPECT_EQ(parts[i].device(), t.devices()[i]);
    EXPECT_EQ(bits(parts[i]), bits(parts[0])) << "device " << t.devices()[i];
  }
}

TEST(Multi, ShardAndGatherKeepEveryDtypeAndUnevenSplits) {
  for (DType dt : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int8, dtypes::int32, dtypes::uint64,
                   dtypes::bool_, dtypes::float64}) {
    Tensor x = (Tensor::arange(0, 35).reshape({7, 5}) % 11).cast(dt).contiguous().realize();
    for (const auto& devs : {two, three})
      for (std::optional<int64_t> axis : {std::optional<int64_t>(0), std::optional<int64_t>(1), std::optional<int64_t>()}) {
        Tensor s = x.shard(devs, axis);
        EXPECT_EQ(s.device(), devs.size() == 2 ? "CPU,CPU:1" : "CPU,CPU:1,CPU:2");
        EXPECT_EQ(s.shape(), x.shape());
        EXPECT_EQ(s.dtype(), dt);
        std::vector<Tensor> parts = s.shards();
        ASSERT_EQ(parts.size(), devs.size());
        int64_t n = axis ? x.shape()[static_cast<size_t>(*axis)] : 0, k = static_cast<int64_t>(devs.size()), per = (n + k - 1) / k;
        for (size_t i = 0; i < parts.size(); i++) {
          EXPECT_EQ(parts[i].device(), devs[i]);
          int64_t b = std::min(n, per * static_cast<int64_t>(i)), e = std::min(n, b + per);  // ceil(n/k) each
          Tensor want = !axis ? x : *axis == 0 ? x.shrink({{b, e}, {0, 5}}) : x.shrink({{0, 7}, {b, e}});
          EXPECT_EQ(floats(parts[i]), floats(want)) << dt.name() << " axis " << axis.value_or(-1) << " part " << i;
        }
        EXPECT_EQ(floats(s.to("CPU:1")), floats(x)) << dt.name();
        EXPECT_EQ(floats(s), floats(x)) << dt.name();  // reading gathers
      }
  }
  // more devices than rows: the last parts are empty
  Tensor y = Tensor({1.f, 2.f});
  Tensor s = y.shard(three, 0);
  EXPECT_EQ(s.shards()[2].shape(), (Shape{0}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ((s * 2).sum().item<float>(), 6.f);
}

TEST(Multi, ReplicatedTensorsAreTheSameOnEveryDevice) {
  Tensor x = Tensor::randn({4, 3}).realize();
  Tensor r = x.to(three);
  EXPECT_EQ(r.devices(), three);
  for (const Tensor& p : r.shards()) EXPECT_EQ(bits(p), bits(x));
  Tensor z = Tensor::zeros({2, 2}, dtypes::float32, "CPU,CPU:1");  // constants and random numbers on several devices
  EXPECT_EQ(z.devices(), two);
  expect_replicas_identical(Tensor::rand({5}, dtypes::float32, "cpu:0,cpu:1"));
  EXPECT_EQ(Tensor::arange(0, 5, 1, dtypes::int32, "CPU,CPU:1").to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(Multi, ElementwiseOpsMatchOneDevice) {
  Tensor::manual_seed(3);
  Tensor a = Tensor::randn({6, 5}).realize(), b = Tensor::randn({6, 5}).realize(), c = Tensor::randn({5}).realize();
  auto f = [](const Tensor& x, const Tensor& y, const Tensor& z) { return (x * y + z).relu().exp() - x.maximum(y) / 3; };
  Tensor want = f(a, b, c);
  // split alike, with a replicated tensor and a constant broadcast in
  expect_close(f(a.shard(three, 0), b.shard(three, 0), c.to(three)), want);
  // split along different axes: the second is redistributed
  expect_close(f(a.shard(two, 0), b.shard(two, 1), c.shard(two, 0)), want);
  expect_close(f(a.shard(two, 1), b.to(two), c.shard(two, 0)), want);
  expect_close(a.shard(two, 0).where(a.shard(two, 0) > 0, b.to(two)), a.where(a > 0, b));
  expect_close(a.shard(two, 0).cast(dtypes::float16), a.cast(dtypes::float16), 1e-3);
}

TEST(Multi, ReductionsOverTheSplitAxisAreAllreduces) {
  // odd sizes against a sum computed on the host
  for (int64_t n : {1, 2, 7, 33, 1001}) {
    std::vector<float> host(static_cast<size_t>(n));
    double want = 0, mx = -1e30;
    for (int64_t i = 0; i < n; i++) host[static_cast<size_t>(i)] = static_cast<float>((i * 37 % 101) - 50) / 7.f;
    for (float v : host) want += v, mx = std::max<double>(mx, v);
    Tensor x = Tensor(host, {n}).shard(three, 0);
    Tensor s = x.sum();
    EXPECT_EQ(s.devices(), three);
    EXPECT_NEAR(s.item<float>(), want, 1e-3 * (1 + std::fabs(want))) << n;
    EXPECT_EQ(x.max().item<float>(), static_cast<float>(mx)) << n;
    expect_replicas_identical(s.reshape({1}));
  }
  // a result of 20011 elements on three devices goes around a ring in uneven chunks: against the host's sums, the
  // same bits on every device
  {
    int64_t rows = 7, cols = 20011;
    std::vector<float> host(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 1009) - 504) / 64.f;
    Tensor x = Tensor(host, {rows, cols}).shard(three, 0);
    for (bool max : {false, true}) {
      Tensor r = max ? x.max(0) : x.sum(0);
      std::vector<float> got = r.to_vector<float>();
      for (int64_t c = 0; c < cols; c++) {
        double want = max ? -1e30 : 0;
        for (int64_t i = 0; i < rows; i++) {
          double v = host[static_cast<size_t>(i * cols + c)];
          want = max ? std::max(want, v) : want + v;
        }
        ASSERT_NEAR(got[static_cast<size_t>(c)], want, 1e-4) << "column " << c;
      }
      expect_replicas_identical(r);
    }
  }
  Tensor::manual_seed(5);
  Tensor a = Tensor::randn({9, 4, 3}).realize();
  for (int64_t axis : {0, 1}) {
    Tensor s = a.shard(two, axis);
    expect_close(s.sum(0), a.sum(0));
    expect_close(s.sum(1), a.sum(1));
    expect_close(s.sum({0, 2}), a.sum({0, 2}));
    expect_close(s.mean(), a.mean());
    expect_close(s.max(1), a.max(1));
    expect_close(s.softmax(0), a.softmax(0));
    expect_close(s.std(1), a.std(1));
  }
}

// a large reduction over a batch split unevenly (256/255): each device reduces its own part, nothing is gathered
// (a two-stage split of the batch into chunks of 7 once cut across the parts and copied every part everywhere)
TEST(Multi, LargeReductionsOverAnUnevenSplitStayOnTheirDevices) {
  Tensor x = Tensor::randn({511, 8, 20, 20}).realize();
  Tensor s = x.shard(two, 0).contiguous().realize();
  GlobalCounters::reset();
  Tensor mean = s.mean({0, 2, 3});
  mean.realize();
  int64_t part_bytes = 256 * 8 * 20 * 20 * 4;
  EXPECT_LT(GlobalCounters::mem_peak - GlobalCounters::mem_used, part_bytes / 8) << "a part was copied";
  expect_close(mean, x.mean({0, 2, 3}), 1e-4);
}

TEST(Multi, MovementOpsMatchOneDevice) {
  Tensor::manual_seed(4);
  Tensor a = Tensor::randn({6, 4, 2}).realize();
  for (const auto& devs : {two, three})
    for (int64_t axis : {0, 1, 2}) {
      Tensor s = a.shard(devs, axis);
      expect_close(s.reshape({24, 2}), a.reshape({24, 2}));
      expect_close(s.reshape({6, 8}), a.reshape({6, 8}));
      expect_close(s.reshape({48}), a.reshape({48}));
      expect_close(s.reshape({3, 2, 4, 2}), a.reshape({3, 2, 4, 2}));
      expect_close(s.permute({2, 0, 1}), a.permute({2, 0, 1}));
      expect_close(s.shrink({{1, 5}, {1, 3}, {0, 1}}), a.shrink({{1, 5}, {1, 3}, {0, 1}}));
      expect_close(s.pad({{1, 0}, {0, 2}, {1, 1}}), a.pad({{1, 0}, {0, 2}, {1, 1}}));
      expect_close(s.flip({0, 2}), a.flip({0, 2}));
      expect_close(s.reshape({6, 4, 2, 1}).expand({6, 4, 2, 3}), a.reshape({6, 4, 2, 1}).expand({6, 4, 2, 3}));
      expect_close(s[{Slice(1, 6, 2), Slice(), 1}], a[{Slice(1, 6, 2), Slice(), 1}]);
      expect_close(Tensor::cat({s, s * 2}, 1), Tensor::cat({a, a * 2}, 1));
      expect_close(s.transpose(0, 1).contiguous().sum(2), a.transpose(0, 1).sum(2));
    }
}

TEST(Multi, MatmulsWithASplitBatchOrContraction) {
  Tensor::manual_seed(6);
  Tensor x = Tensor::randn({10, 12}).realize(), w = Tensor::randn({12, 7}).realize();
  Tensor want = x.matmul(w);
  expect_close(x.shard(three, 0).matmul(w.to(three)), want, 1e-4);  // data parallel
  Tensor contracted = x.shard(two, 1).matmul(w.shard(two, 0));      // the contraction split: ends in an allreduce
  expect_close(contracted, want, 1e-4);
  expect_replicas_identical(contracted);
  expect_close(x.shard(two, 0).matmul(w.shard(two, 1)), want, 1e-4);
  // a contraction split between three devices with a large result: the allreduce goes around a ring
  Tensor x2 = Tensor::randn({64, 30}).realize(), w2 = Tensor::randn({30, 300}).realize();
  Tensor ring = x2.shard(three, 1).matmul(w2.shard(three, 0));
  expect_close(ring, x2.matmul(w2), 1e-4);
  expect_replicas_identical(ring);
}

// composite methods: each is built from the primitives above, so it runs per device where it can
TEST(Multi, CompositeMethodsMatchOneDevice) {
  Tensor::manual_seed(9);
  Tensor img = Tensor::randn({5, 3, 8, 8}).realize(), w = Tensor::randn({4, 3, 3, 3}).realize();
  Tensor want = img.conv2d(w).relu().max_pool2d();
  expect_close(img.shard(two, 0).conv2d(w.to(two)).relu().max_pool2d(), want, 1e-4);   // the batch split
  expect_close(img.to(two).conv2d(w.shard(two, 0)).relu().max_pool2d(), want, 1e-4);   // the output channels split
  Tensor a = Tensor::randn({7, 6}).realize();
  for (int64_t axis : {0, 1}) {
    Tensor s = a.shard(three, axis);
    EXPECT_EQ(s.argmax(0).to_vector<int32_t>(), a.argmax(0).to_vector<int32_t>());
    EXPECT_EQ(s.argmax(1).to_vector<int32_t>(), a.argmax(1).to_vector<int32_t>());
    expect_close(s.cumsum(0), a.cumsum(0), 1e-5);
    expect_close(s.cumsum(1), a.cumsum(1), 1e-5);
    Tensor idx = Tensor({{0, 2}, {1, 1}, {5, 0}, {3, 4}, {2, 2}, {0, 1}, {4, 3}});
    expect_close(s.gather(1, idx.to(three)), a.gather(1, idx));
    expect_close(s[{Tensor({6, 0, 3}).to(three)}], a[{Tensor({6, 0, 3})}]);
    expect_close(Tensor::cat({s, s.exp()}, axis), Tensor::cat({a, a.exp()}, axis));
    expect_close(s.sort(0).first, a.sort(0).first);
  }
  // assign: a multi tensor takes new values, lazily, keeping its devices
  Tensor t = a.shard(two, 0).contiguous().realize();
  t.assign(t * 2 + 1).realize();
  EXPECT_EQ(t.devices(), two);
  expect_close(t, a * 2 + 1);
}

// the gradients of a small network on a batch split between devices: equal to one device's, the same on every device
TEST(Multi, GradientsOfReplicatedWeightsOnASplitBatch) {
  Tensor::manual_seed(8);
  Tensor X = Tensor::randn({12, 5}).realize(), Y = Tensor::randint({12}, 0, 3).realize();
  Tensor W1 = Tensor::randn({5, 8}).realize(), W2 = Tensor::randn({8, 3}).realize();
  auto loss_grads = [&](const Tensor& x, const Tensor& y, Tensor w1, Tensor w2) {
    w1.requires_grad_(), w2.requires_grad_();
    Tensor h = x.matmul(w1).layernorm().gelu();
    Tensor loss = h.matmul(w2).sparse_categorical_crossentropy(y);
    loss.backward();
    return std::vector<Tensor>{loss, w1.grad(), w2.grad()};
  };
  std::vector<Tensor> want = loss_grads(X, Y, W1.clone(), W2.clone());
  std::vector<Tensor> got = loss_grads(X.shard(three, 0), Y.shard(three, 0), W1.to(three), W2.to(three));
  for (size_t i = 0; i < want.size(); i++) {
    expect_close(got[i], want[i], 1e-4);
    EXPECT_EQ(got[i].devices(), three);
  }
  expect_replicas_identical(got[1]);
  expect_replicas_identical(got[2]);
  // a gradient flowing back through shard() to the tensor that was split
  Tensor x = X.clone().requires_grad_();
  (x.shard(two, 0) * W1.to(two).sum(1).reshape({1, 5})).square().sum().backward();
  Tensor x1 = X.clone().requires_grad_();
  (x1 * W1.sum(1).reshape({1, 5})).square().sum().backward();
  EXPECT_EQ(x.grad().device(), "CPU");
  expect_close(x.grad(), x1.grad(), 1e-5);
}

// The gradients of a sharded computation equal one device's, for every reduction of the loss, every split axis
// and 2 to 4 devices, through a matmul and a convolution: the weight replicated, the input split; leaves made from
// one tensor with detach() (PyTorch's idiom), each its own leaf
TEST(Multi, ShardedGradientsMatchOneDeviceForEveryReductionAxisAndCount) {
  Tensor::manual_seed(5);
  Tensor X = Tensor::randn({12, 24}).realize(), W = Tensor::randn({24, 8}).realize();
  Tensor I = Tensor::randn({4, 3, 6, 6}).realize(), K = Tensor::randn({5, 3, 3, 3}).realize();
  const std::vector<std::string> all{"CPU", "CPU:1", "CPU:2", "CPU:3"};
  using Reduce = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, Reduce>> reductions = {
      {"sum", [](const Tensor& t) { return t.relu().sum(); }},
      {"mean", [](const Tensor& t) { return t.mean(); }},
      {"max", [](const Tensor& t) { return t.max(); }},
  };
  for (size_t k = 2; k <= 4; k++) {
    std::vector<std::string> d(all.begin(), all.begin() + static_cast<int64_t>(k));
    for (const auto& [name, reduce] : reductions) {
      for (int64_t axis = 0; axis < 2; axis++) {
        SCOPED_TRACE(std::string(name) + " over " + std::to_string(k) + " devices, split axis " + std::to_string(axis));
        Tensor x1 = X.detach().requires_grad_(), w1 = W.detach().requires_grad_();
        Tensor x2 = X.detach().requires_grad_(), w2 = W.detach().shard(d).requires_grad_();
        Tensor l1 = reduce(x1.matmul(w1)), l2 = reduce(x2.shard(d, axis).matmul(w2));
        l1.backward(), l2.backward();
        expect_close(l2.to("CPU"), l1, 1e-5);
        expect_close(w2.grad().to("CPU"), w1.grad(), 1e-5);
        expect_close(x2.grad(), x1.grad(), 1e-5);
        if (k != 3 || (axis == 1 && std::string(name) != "sum")) continue;  // (the conv's kernels are slow to compile)
        // conv2d with the batch or the channels split
        Tensor i1 = I.detach().requires_grad_(), k1 = K.detach().requires_grad_();
        Tensor i2 = I.detach().requires_grad_(), k2 = K.detach().shard(d).requires_grad_();
        Tensor c1 = reduce(i1.conv2d(k1, std::nullopt, 1, 1, 1, 1)), c2 = reduce(i2.shard(d, axis).conv2d(k2, std::nullopt, 1, 1, 1, 1));
        c1.backward(), c2.backward();
        expect_close(c2.to("CPU"), c1, 1e-5);
        expect_close(k2.grad().to("CPU"), k1.grad(), 1e-4);
        expect_close(i2.grad(), i1.grad(), 1e-4);
      }
    }
  }
}

struct Net : nn::Module {
  nn::Linear l1{6, 16}, l2{16, 3};
  nn::BatchNorm bn{16};
  Tensor operator()(const Tensor& x) { return l2(bn(l1(x)).relu()); }
  void state(const nn::StateVisitor& v) override { v("l1", l1), v("bn", bn), v("l2", l2); }
};

// data-parallel training: the batch split, the model replicated; the loss curve of one device within float
// tolerance, and the replicas of every parameter identical after every step
std::vector<float> train(const std::vector<std::string>& devices, bool jit, Net& model, Reduction reduction = Reduction::mean) {
  Tensor::manual_seed(11);
  Tensor X = Tensor::randn({24, 6}).realize(), Y = Tensor::randint({24}, 0, 3).realize();
  model.state(nn::StateVisitor([&](const std::string&, Tensor& t) {
    if (devices.size() > 1) t = t.to(devices).realize();
  }));
  // SGD with momentum: Adam divides by the root of tiny second moments, which magnifies float rounding past a tight
  // comparison of the weights
  optim::LARS opt = optim::SGD(get_parameters(model), 0.05, 0.9);
  std::function<Tensor(const std::vector<Tensor>&)> step = [&](const std::vector<Tensor>& in) {
    TrainGuard train;
    opt.zero_grad();
    Tensor x = in[0], y = in[1];
    if (devices.size() > 1) x = x.shard(devices, 0), y = y.shard(devices, 0);
    Tensor loss = model(x).sparse_categorical_crossentropy(y, -1, 0, reduction).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  };
  TinyJit<Tensor> jitted(step);
  std::vector<float> losses;
  for (int i = 0; i < 5; i++) {
    Tensor xb = X.shrink({{(i % 3) * 8, (i % 3) * 8 + 8}, {0, 6}}).contiguous().realize();
    Tensor yb = Y.shrink({{(i % 3) * 8, (i % 3) * 8 + 8}}).contiguous().realize();
    losses.push_back((jit ? jitted({xb, yb}) : step({xb, yb})).item<float>());
  }
  return losses;
}

TEST(Multi, DataParallelTrainingFollowsOneDevice) {
  Tensor::manual_seed(1);
  Net one;
  Tensor::manual_seed(1);  // the same initial weights
  Net many;
  Tensor::manual_seed(1);
  Net jitted;
  std::vector<float> want = train({"CPU"}, false, one), got = train(two, false, many), got_jit = train(two, true, jitted);
  for (size_t i = 0; i < want.size(); i++) {
    EXPECT_NEAR(got[i], want[i], 1e-4) << "step " << i;
    EXPECT_EQ(got_jit[i], got[i]) << "step " << i;  // TinyJit's replays compute what the plain calls do
  }
  StateDict a = get_state_dict(one), b = get_state_dict(many), c = get_state_dict(jitted);
  for (const auto& [name, t] : b) {
    EXPECT_EQ(t.devices(), two) << name;
    expect_replicas_identical(t);
    expect_replicas_identical(c.at(name));
    expect_close(t, a.at(name), 1e-4);
    EXPECT_EQ(bits(c.at(name)), bits(t)) << name;
  }
}

// the same with a summed loss, whose gradients are not scaled down by the batch: parameters equal one device's
TEST(Multi, DataParallelTrainingWithASummedLossFollowsOneDevice) {
  for (const std::vector<std::string>& devices : {two, three}) {
    Tensor::manual_seed(1);
    Net one;
    Tensor::manual_seed(1);
    Net many;
    std::vector<float> want = train({"CPU"}, false, one, Reduction::sum), got = train(devices, false, many, Reduction::sum);
    for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "step " << i;
    StateDict a = get_state_dict(one), b = get_state_dict(many);
    for (const auto& [name, t] : b) {
      expect_replicas_identical(t);
      expect_close(t, a.at(name), 1e-4);
    }
  }
}

// a checkpoint read on one device loads into a replicated model, and into one whose weight is split
TEST(Multi, LoadStateDictPlacesValuesLikeTheModel) {
  Net single, replicated;
  StateDict state = get_state_dict(single);
  replicated.state(nn::StateVisitor([&](const std::string& name, Tensor& t) {
    t = (name == "l1.weight" ? t.shard(two, 0) : t.to(two)).realize();
  }));
  load_state_dict(replicated, state);
  for (const auto& [name, t] : get_state_dict(replicated)) {
    EXPECT_EQ(t.devices(), two) << name;
    EXPECT_EQ(bits(t.cast(dtypes::float32)), bits(state.at(name).cast(dtypes::float32))) << name;
  }
  EXPECT_EQ(get_state_dict(replicated).at("l1.weight").shards()[0].shape(), (Shape{8, 6}));  // still split
}

// a function of sharded inputs and replicated weights under TinyJit: the replays give the plain call's values
TEST(Multi, TinyJitReplaysAShardedForward) {
  Net model;
  model.state(nn::StateVisitor([&](const std::string&, Tensor& t) { t = t.to(two).realize(); }));
  std::function<Tensor(const std::vector<Tensor>&)> f = [&](const std::vector<Tensor>& in) {
    return model(in[0].shard(two, 0)).softmax(1).sum(0).contiguous();
  };
  TinyJit<Tensor> jitted(f);
  for (int i = 0; i < 4; i++) {
    Tensor x = Tensor::randn({10, 6}).realize();
    EXPECT_EQ(bits(jitted({x})), bits(f({x}))) << "call " << i;
  }
  EXPECT_GT(jitted.kernel_count(), 3u);
}

// one tensor split between the CPU and OpenCL (PoCL here): the same values as on one device
TEST(Multi, CpuAndOpenclTogether) {
  NEED_DEVICE(cl, "OPENCL");
  const std::vector<std::string> mixed{"CPU", "OPENCL"};
  Tensor::manual_seed(2);
  Tensor a = Tensor::randn({8, 300}).realize(), w = Tensor::randn({300, 5}).realize();
  Tensor data_parallel = a.shard(mixed, 0).matmul(w.to(mixed)).softmax(1).sum(0);
  EXPECT_EQ(data_parallel.devices(), mixed);
  expect_close(data_parallel, a.matmul(w).softmax(1).sum(0), 1e-5);
  expect_close(a.shard(mixed, 1).matmul(w.shard(mixed, 0)), a.matmul(w), 1e-4);
}

TEST(Multi, MismatchedDevicesAndBadArgumentsAreNamed) {
  Tensor a = Tensor::ones({4, 2}).shard(two, 0), b = Tensor::ones({4, 2}).shard(three, 0);
  testing::expect_error<ArgumentError>([&] { (void)(a + b); }, "add", {"CPU,CPU:1", "CPU,CPU:1,CPU:2"}, __FILE__, __LINE__);
  testing::expect_error<ArgumentError>([&] { (void)(a + Tensor::ones({4, 2})); }, "add", {"CPU,CPU:1", "CPU"}, __FILE__, __LINE__);
  testing::expect_error<ArgumentError>([&] { (void)Tensor::ones({2}).shard({"CPU", "CPU:0"}, 0); }, "shard", {"names CPU twice"}, __FILE__, __LINE__);
  testing::expect_error<ArgumentError>([&] { (void)Tensor::ones({2}).shard({}, 0); }, "shard", {"at least one device"}, __FILE__, __LINE__);
  testing::expect_error<ShapeError>([&] { (void)Tensor(1.f).shard(two, 0); }, "shard", {"0-d"}, __FILE__, __LINE__);
  testing::expect_error<ArgumentError>([&] { (void)Tensor::ones({2}).shard(two, 3); }, "shard", {"axis 3"}, __FILE__, __LINE__);
  float data[2] = {1, 2};
  unsigned line = __LINE__ + 1;
  testing::expect_error<ArgumentError>([&] { (void)Tensor::from_blob(data, {2}, dtypes::float32, "CPU,CPU:1"); }, "from_blob",
                                       {"one device"}, __FILE__, line);
  try {
    (void)Tensor::ones({2}).to("CPU,NOSUCH");
    ADD_FAILURE() << "no error for an unknown device";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device 'NOSUCH'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tg
