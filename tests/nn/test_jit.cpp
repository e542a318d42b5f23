// TinyJit: capture on the second call, replay afterwards; replays must equal the plain function bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "support/expect_error.h"
#include "tg/tg.h"

namespace tg {
namespace {

std::vector<uint32_t> bits(const Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

struct Mlp : nn::Module {
  nn::Linear l1{6, 16}, l2{16, 3};
  Tensor operator()(const Tensor& x) const { return l2(l1(x).relu().dropout(0.25)); }
  void state(const nn::StateVisitor& v) override { v("l1", l1), v("l2", l2); }
};

// A training run: a fixed dataset, randint batches, dropout, Adam. Returns every loss's bits and the final weights.
struct TrainingRun {
  std::vector<std::vector<uint32_t>> losses, weights;
  int body_calls = 0;
  size_t kernels = 0;
};
TrainingRun train(bool jit, int steps) {
  Tensor::manual_seed(7);
  Tensor X = Tensor::randn({40, 6}).realize(), Y = Tensor::randint({40}, 0, 3).realize();
  Mlp model;
  optim::LAMB opt = optim::Adam(get_parameters(model), 0.01);
  TrainingRun r;
  std::function<Tensor(const std::vector<Tensor>&)> step = [&](const std::vector<Tensor>&) {
    r.body_calls++;
    TrainGuard train;
    opt.zero_grad();
    Tensor idx = Tensor::randint({8}, 0, 40);
    Tensor loss = model(X[{idx}]).sparse_categorical_crossentropy(Y[{idx}]).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  };
  TinyJit<Tensor> jitted(step);
  for (int i = 0; i < steps; i++) r.losses.push_back(bits(jit ? jitted() : step({})));
  for (const Tensor& p : get_parameters(model)) r.weights.push_back(bits(p));
  r.kernels = jitted.kernel_count();
  return r;
}

TEST(TinyJit, ReplayIsBitIdenticalToThePlainFunction) {
  TrainingRun plain = train(false, 7), jit = train(true, 7);
  EXPECT_EQ(jit.body_calls, 2);  // called, captured, then 5 replays that never run the body
  EXPECT_GT(jit.kernels, 5u);
  ASSERT_EQ(plain.losses.size(), jit.losses.size());
  for (size_t i = 0; i < plain.losses.size(); i++) EXPECT_EQ(plain.losses[i], jit.losses[i]) << "step " << i;
  EXPECT_EQ(plain.weights, jit.weights);
  // the run learns something and the batches differ (randint is replayed with new numbers, not the same batch)
  EXPECT_NE(jit.losses[5], jit.losses[6]);
}

// y = x @ relayout(w): the relayout kernel reads only w
Tensor project(const Tensor& x, const Tensor& w) { return x.matmul((w * 0.5f).T().contiguous()); }

TEST(TinyJit, KernelsOfWhatNoCallChangesRunOnlyAtTheCapture) {
  Tensor w = Tensor::rand({5, 4}).realize();
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) { return project(in[0], w); });
  for (int i = 0; i < 5; i++) {
    Tensor x = Tensor::rand({3, 4}).realize();
    int64_t before = GlobalCounters::kernel_count;
    std::vector<float> got = f({x}).to_vector<float>();
    if (i >= 2) {
      EXPECT_EQ(f.kernel_count(), 1u) << "the matmul only: w's relayout is invariant";
      // the capture gave the relayout's memory back after the matmul read it (an intermediate): the first replay
      // makes it again, and later replays keep it
      EXPECT_EQ(GlobalCounters::kernel_count - before, i == 2 ? 2 : 1) << "call " << i;
    }
    EXPECT_EQ(got, project(x, w).to_vector<float>()) << "call " << i;
  }
  // w changed between calls (assign makes a new buffer): the replay reads it, relayout included
  w.assign(Tensor::rand({5, 4})).realize();
  Tensor x = Tensor::rand({3, 4}).realize();
  EXPECT_EQ(f({x}).to_vector<float>(), project(x, w).to_vector<float>());
  EXPECT_EQ(f({x}).to_vector<float>(), project(x, w).to_vector<float>());
}

TEST(TinyJit, AnEvaluationSeesWeightsAnotherTinyJitTrains) {
  // the training step updates w in place at each replay (its buffers swap); the evaluation only reads w, so its
  // relayout is invariant for it, yet must follow every update
  Tensor w = Tensor::rand({5, 4}).realize(), x = Tensor::rand({3, 4}).realize();
  TinyJit<Tensor> step([&](const std::vector<Tensor>&) {
    w.assign(w * 0.9f + 0.01f).realize();
    return w;
  });
  TinyJit<Tensor> eval([&](const std::vector<Tensor>& in) { return project(in[0], w); });
  for (int i = 0; i < 6; i++) {
    step();
    EXPECT_EQ(eval({x}).to_vector<float>(), project(x, w).to_vector<float>()) << "step " << i;
  }
}

TEST(TinyJit, MemoryTheCallerOwnsIsReadAgainAtEveryReplay) {
  std::vector<float> host(20, 1.0f);
  Tensor w = Tensor::from_blob(host.data(), {5, 4}, dtypes::float32, "CPU");  // host memory: CPU under any DEV
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) { return project(in[0], w); });
  Tensor x = Tensor::rand({3, 4}, dtypes::float32, "CPU").realize();
  for (int i = 0; i < 4; i++) {
    for (float& h : host) h = static_cast<float>(i + 1);  // written behind the library's back
    EXPECT_EQ(f({x}).to_vector<float>(), project(x, w).to_vector<float>()) << "call " << i;
  }
}

TEST(TinyJit, ReplaysReadTheNewInputs) {
  int body_calls = 0;
  TinyJit<std::vector<Tensor>> f([&](const std::vector<Tensor>& in) {
    body_calls++;
    return std::vector<Tensor>{(in[0] * 2 + in[1]).sum(0), in[0].exp()};
  });
  for (int i = 0; i < 5; i++) {
    // a lazy input and a non-contiguous view: both are made buffers before the call
    Tensor a = Tensor::arange(6).reshape({2, 3}).cast(dtypes::float32) + static_cast<float>(i);
    Tensor b = Tensor::full({3, 2}, static_cast<float>(i * i)).realize().permute({1, 0});
    std::vector<Tensor> got = f({a, b});
    EXPECT_EQ(got[0].to_vector<float>(), (a * 2 + b).sum(0).to_vector<float>()) << "call " << i;
    EXPECT_EQ(got[1].to_vector<float>(), a.exp().to_vector<float>()) << "call " << i;
  }
  EXPECT_EQ(body_calls, 2);
  EXPECT_TRUE(f.captured());
}

TEST(TinyJit, RandomNumbersAreNewOnEveryReplay) {
  TinyJit<Tensor> f([](const std::vector<Tensor>&) { return Tensor::rand({5}).realize(); });
  Tensor::manual_seed(3);
  std::vector<std::vector<float>> jitted;
  for (int i = 0; i < 4; i++) jitted.push_back(f().to_vector<float>());
  Tensor::manual_seed(3);
  for (int i = 0; i < 4; i++) EXPECT_EQ(jitted[i], Tensor::rand({5}).to_vector<float>()) << "call " << i;
  EXPECT_NE(jitted[2], jitted[3]);
}

TEST(TinyJit, ChangedInputsRaiseAClearError) {
  TinyJit<Tensor> f([](const std::vector<Tensor>& in) { return in[0] + 1; });
  f({Tensor::ones({4})});
  f({Tensor::ones({4})});
  tg::testing::expect_error<ArgumentError>([&] { f({Tensor::ones({5})}); }, "TinyJit", {"input 0 is (5,) float32", "the first call had (4,) float32"}, "test_jit.cpp", __LINE__);
  tg::testing::expect_error<ArgumentError>([&] { f({Tensor::ones({4}, dtypes::int32)}); }, "TinyJit", {"(4,) int32"}, "test_jit.cpp", __LINE__);
  tg::testing::expect_error<ArgumentError>([&] { f({Tensor::ones({4}), Tensor::ones({4})}); }, "TinyJit", {"called with 2 inputs", "had 1"}, "test_jit.cpp", __LINE__);
  tg::testing::expect_error<ArgumentError>([&] { f({Tensor::ones({4}, dtypes::float32, "CPU:1")}); }, "TinyJit", {"on CPU:1"}, "test_jit.cpp", __LINE__);
  EXPECT_EQ(f({Tensor::ones({4})}).to_vector<float>(), std::vector<float>(4, 2.f));  // still usable
}

TEST(TinyJit, AssigningToAnInputRaises) {
  TinyJit<Tensor> f([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    x.assign(x + 1).realize();
    return x;
  });
  Tensor a = Tensor::zeros({3}).contiguous().realize();
  f({a});
  tg::testing::expect_error<ArgumentError>([&] { f({a}); }, "TinyJit", {"assigns to its input 0"}, "test_jit.cpp", __LINE__);
}

// w after each of `steps` SGD steps (lr 0.1) on sum(w * w), plainly or through a TinyJit; before(i, opt) runs
// before step i
std::vector<std::vector<float>> sgd_on_squares(Tensor w, bool jit, int steps,
                                               const std::function<void(int, optim::LARS&)>& before = {}) {
  w.requires_grad_();
  optim::LARS opt = optim::SGD({w}, 0.1);
  std::function<Tensor(const std::vector<Tensor>&)> step = [&](const std::vector<Tensor>&) {
    opt.zero_grad();
    (w * w).sum().backward();
    opt.step();
    return w;
  };
  TinyJit<Tensor> jitted(step);
  std::vector<std::vector<float>> out;
  for (int i = 0; i < steps; i++) {
    if (before) before(i, opt);
    out.push_back((jit ? jitted() : step({})).to_vector<float>());
  }
  return out;
}

TEST(TinyJit, ALearningRateChangedBetweenCallsIsRead) {
  auto run = [](bool jit) {
    return sgd_on_squares(Tensor({1.f, 2.f, 3.f}), jit, 6, [](int i, optim::LARS& opt) {
      if (i == 4) opt.lr.assign(Tensor(0.5f)).realize();
    });
  };
  std::vector<std::vector<float>> plain = run(false), jit = run(true);
  EXPECT_EQ(plain, jit);
  EXPECT_FLOAT_EQ(plain[4][0], plain[3][0] * 0.0f);  // lr 0.5 on w*w: w - 0.5 * 2w = 0
}

// A parameter over the caller's memory (from_blob) trains under the JIT as any other: its updates go to buffers of
// tinygrad's own, the caller's memory is only read
TEST(TinyJit, FromBlobParametersTrain) {
  if (Tensor({1.f}).device().rfind("CPU", 0) != 0) GTEST_SKIP() << "from_blob wraps host memory: CPU only";
  auto run = [](bool jit) {
    std::vector<float> memory{1.f, 2.f, 3.f};
    std::vector<std::vector<float>> out = sgd_on_squares(Tensor::from_blob(memory.data(), {3}), jit, 5);
    EXPECT_EQ(memory, (std::vector<float>{1.f, 2.f, 3.f}));
    return out;
  };
  std::vector<std::vector<float>> plain = run(false), jit = run(true);
  EXPECT_EQ(plain, jit);
  EXPECT_FLOAT_EQ(plain[4][2], 3.f * std::pow(0.8f, 5.f));
}

TEST(TinyJit, UpdatesLeftUnrealizedRaise) {
  Tensor w = Tensor({1.f, 2.f}).realize();
  TinyJit<Tensor> f([&](const std::vector<Tensor>&) {
    w.assign(w * 2);  // never realized inside the function
    return Tensor::ones({1}).contiguous().realize();
  });
  f();
  tg::testing::expect_error<ArgumentError>([&] { f(); }, "TinyJit", {"with an update it did not realize"}, "test_jit.cpp", __LINE__);
}

TEST(TinyJit, HostDataCopiedInsideTheFunctionIsReportedAtCapture) {
  TinyJit<Tensor> f([](const std::vector<Tensor>&) { return (Tensor({1.f, 2.f}) * 3).realize(); });
  f();
  ::testing::internal::CaptureStderr();
  f();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("copies host data into 1 buffer"), std::string::npos) << err;
  EXPECT_EQ(f().to_vector<float>(), (std::vector<float>{3.f, 6.f}));
  // returned lazy (the host data's tensor is gone when the output is realized), with other allocations between the
  // calls: every replay still reads the host data the capture copied in (the capture gives back the memory only of
  // buffers a captured kernel wrote)
  TinyJit<Tensor> g([](const std::vector<Tensor>&) { return Tensor({1.f, 2.f, 3.f, 4.f}) * 3; });
  for (int i = 0; i < 5; i++) {
    std::vector<float> noise = (Tensor::rand({4}) * 100).to_vector<float>();  // reuses freed blocks of that size
    EXPECT_EQ(g().to_vector<float>(), (std::vector<float>{3.f, 6.f, 9.f, 12.f})) << "call " << i << " " << noise[0];
  }
}

TEST(TinyJit, ActivationsMuchLargerThanTheirInputsAreNotHeldBetweenCalls) {
  // an evaluation in miniature: a 256-byte weight expanded into 32 MB activations, then three more layers of them.
  // No call changes w, yet the steps run at every replay (their outputs share two blocks of planned memory):
  // holding each layer's output between calls would keep all four, 128 MB
  Tensor w = Tensor::rand({64}).realize();
  auto layers = [&]() {
    Tensor h = (w.reshape({1, 64}).expand({131072, 64}) + 1).contiguous();
    for (int i = 0; i < 3; i++) h = (h * 0.5f + 0.25f).contiguous();
    return h.sum();
  };
  TinyJit<Tensor> f([&](const std::vector<Tensor>&) { return layers().realize(); });
  int64_t held = GlobalCounters::mem_used, before = GlobalCounters::kernel_count;
  float want = layers().item<float>();
  size_t kernels = static_cast<size_t>(GlobalCounters::kernel_count - before);
  for (int i = 0; i < 4; i++) EXPECT_EQ(f().item<float>(), want) << "call " << i;
  EXPECT_EQ(f.kernel_count(), kernels) << "every kernel runs at a replay";
  EXPECT_LE(GlobalCounters::mem_used - held, (2 * 32 + 4) << 20);
}

TEST(TinyJit, TheCaptureHoldsNoMoreMemoryThanAPlainCall) {
  // 16 layers of 4 MB, each read only by the next: a plain call frees each after its reader, and so must the
  // capture (it keeps every kernel for the replays, not every intermediate: 64 MB here); the replays after it
  // compute the same value in planned memory
  auto layers = [](const Tensor& x) {
    Tensor h = x;
    for (int i = 0; i < 16; i++) h = (h * 1.5f + 1).contiguous();
    return h.sum();
  };
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) { return layers(in[0]).realize(); });
  Tensor x = Tensor::ones({1024, 1024}).contiguous().realize();
  auto peak_of = [](const std::function<float()>& call) {
    GlobalCounters::reset();
    int64_t held = GlobalCounters::mem_used;
    float v = call();
    return std::make_pair(GlobalCounters::mem_peak - held, v);
  };
  auto [plain_peak, want] = peak_of([&] { return layers(x).item<float>(); });
  EXPECT_LE(plain_peak, 12 << 20);
  for (int i = 0; i < 4; i++) {  // called, captured, replayed twice
    auto [peak, got] = peak_of([&] { return f({x}).item<float>(); });
    EXPECT_LE(peak, plain_peak) << "call " << i;
    EXPECT_EQ(got, want) << "call " << i;
  }
}

TEST(TinyJit, IntermediatesShareMemoryAfterTheCapture) {
  // 12 steps of 1 MB each, every one read only by the next: a replay needs two blocks at a time, not twelve
  TinyJit<Tensor> f([](const std::vector<Tensor>& in) {
    Tensor h = in[0];
    for (int i = 0; i < 12; i++) h = (h * 1.5f + 1).contiguous();
    return h.sum().realize();
  });
  Tensor x = Tensor::ones({256, 1024}).contiguous().realize();
  int64_t held = GlobalCounters::mem_used;
  f({x});
  f({x});
  float want = f({x}).item<float>();
  EXPECT_LE(GlobalCounters::mem_used - held, 3 << 20);
  Tensor h = x;
  for (int i = 0; i < 12; i++) h = (h * 1.5f + 1).contiguous();
  EXPECT_EQ(want, h.sum().item<float>());
}

// A recurrent loop, h = f(h): each call's output is the next call's input, so a replay reads the buffer it is
// about to write (the flip reads element 5 - i while writing element i)
TEST(TinyJit, AnOutputFedBackAsTheNextInputIsReadBeforeItIsWritten) {
  std::function<Tensor(const std::vector<Tensor>&)> f = [](const std::vector<Tensor>& in) {
    return (in[0].flip(0) + 1).contiguous();
  };
  TinyJit<Tensor> jitted(f);
  Tensor h = Tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}), plain = h;
  for (int i = 0; i < 6; i++) {
    h = jitted({h});
    plain = f({plain}).realize();
    EXPECT_EQ(h.to_vector<float>(), plain.to_vector<float>()) << "call " << i;
  }
}

// Two outputs fed back crosswise, (a, b) -> (2b, a + b): the first step writes the buffer of a that the second
// reads, and the returned outputs keep the values of this call
TEST(TinyJit, OutputsFedBackCrosswiseKeepTheirValues) {
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[1] * 2).contiguous(), (in[0] + in[1]).contiguous()};
  };
  TinyJit<std::vector<Tensor>> jitted(f);
  std::vector<Tensor> j{Tensor({1.f}), Tensor({2.f})}, p = j;
  for (int i = 0; i < 6; i++) {
    j = jitted({j[0], j[1]});
    p = f({p[0], p[1]});
    Tensor::realize(p);
    EXPECT_EQ(j[0].item<float>(), p[0].item<float>()) << "call " << i;
    EXPECT_EQ(j[1].item<float>(), p[1].item<float>()) << "call " << i;
  }
  // swapped: a is fed back as b and b as a
  j = jitted({j[1], j[0]});
  p = f({p[1], p[0]});
  EXPECT_EQ(j[0].item<float>(), p[0].item<float>());
  EXPECT_EQ(j[1].item<float>(), p[1].item<float>());
}

// An output that is an input, or a view of one, that no kernel reads: every replay returns this call's input
TEST(TinyJit, AnOutputThatIsAnInputFollowsTheInput) {
  TinyJit<std::vector<Tensor>> f([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] + 1).contiguous(), in[1], in[1].reshape({2, 1})};
  });
  for (int i = 0; i < 5; i++) {
    float v = static_cast<float>(i);
    std::vector<Tensor> got = f({Tensor::full({2}, v), Tensor::full({2}, -v)});
    EXPECT_EQ(got[0].to_vector<float>(), std::vector<float>(2, v + 1)) << "call " << i;
    EXPECT_EQ(got[1].to_vector<float>(), std::vector<float>(2, -v)) << "call " << i;
    EXPECT_EQ(got[2].to_vector<float>(), std::vector<float>(2, -v)) << "call " << i;
  }
  // the previous output passed back as the returned input while a kernel writes that output's buffer: the call's
  // value is returned, not the one the kernel wrote
  std::vector<Tensor> prev = f({Tensor::full({2}, 7.f), Tensor::full({2}, 0.f)});
  std::vector<Tensor> got = f({Tensor::full({2}, 1.f), prev[0]});
  EXPECT_EQ(got[0].to_vector<float>(), std::vector<float>(2, 2.f));
  EXPECT_EQ(got[1].to_vector<float>(), std::vector<float>(2, 8.f));
}

// Weights never realized (a Linear's lazy random initialization) are computed from their graphs by the captured
// kernels; loading a checkpoint after the capture gives them new values, which the next calls must use
struct OneLinear : nn::Module {
  nn::Linear l1{2, 2};
  void state(const nn::StateVisitor& v) override { v("l1", l1); }
};
TEST(TinyJit, WeightsLoadedAfterTheCaptureAreUsedEvenWhenTheyWereNeverRealized) {
  OneLinear net;
  std::function<Tensor(const std::vector<Tensor>&)> f = [&](const std::vector<Tensor>& in) { return net.l1(in[0]).contiguous(); };
  TinyJit<Tensor> jitted(f);
  Tensor x = Tensor::ones({1, 2}).contiguous().realize();
  for (int i = 0; i < 3; i++) EXPECT_EQ(jitted({x}).to_vector<float>(), f({x}).to_vector<float>()) << "call " << i;
  ASSERT_TRUE(jitted.captured());
  StateDict s;
  s["l1.weight"] = Tensor::zeros({2, 2});
  s["l1.bias"] = Tensor({5.f, 6.f});
  load_state_dict(net, s);
  for (int i = 0; i < 4; i++) EXPECT_EQ(jitted({x}).to_vector<float>(), (std::vector<float>{5.f, 6.f})) << "call " << i;
  EXPECT_TRUE(jitted.captured());
  // loaded again into the weights now realized: written in place, read by the replays
  s["l1.bias"] = Tensor({-1.f, 2.f});
  load_state_dict(net, s);
  EXPECT_EQ(jitted({x}).to_vector<float>(), (std::vector<float>{-1.f, 2.f}));
}

}  // namespace
}  // namespace tg
