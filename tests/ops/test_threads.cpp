// The thread model (README, "Threads"): grad mode and training mode are per thread; tensors on different threads
// are independent; a graph shared between threads may be built on and realized from all of them (realizes are
// serialized); a TinyJit refuses a second call while one runs. CI runs these under ThreadSanitizer too.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include <tg/tg.h>

using namespace tg;

namespace {

constexpr int kThreads = 4;

template <class F> void on_threads(int n, F f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < n; i++) ts.emplace_back(f, i);
  for (std::thread& t : ts) t.join();
}

// Each thread builds and realizes graphs of its own; every value is checked against the host.
TEST(Threads, IndependentWorkOnEachThread) {
  std::atomic<int> wrong{0};
  on_threads(kThreads, [&](int id) {
    for (int round = 0; round < 5; round++) {
      int n = 8 + id;
      std::vector<float> a(n * n);
      for (int i = 0; i < n * n; i++) a[i] = float((i * (id + 3) + round) % 7) - 3;
      Tensor x = Tensor(a, {n, n});
      std::vector<float> got = (x.matmul(x) * 2 + 1).sum(1).to_vector<float>();
      for (int r = 0; r < n; r++) {
        double want = 0;
        for (int c = 0; c < n; c++) {
          double dot = 0;
          for (int k = 0; k < n; k++) dot += double(a[r * n + k]) * a[k * n + c];
          want += 2 * dot + 1;
        }
        if (std::fabs(got[r] - want) > 1e-3) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// One lazy graph, shared: every thread builds on it and reads it, and one realizes it, at the same time.
TEST(Threads, ASharedGraphIsBuiltOnAndRealizedFromEveryThread) {
  for (int round = 0; round < 3; round++) {
    Tensor base = Tensor::arange(64).cast(dtypes::float32).reshape({8, 8});
    Tensor shared = (base * 0.5f - 1).exp2().log2();  // lazy: realized by whichever thread comes first
    std::atomic<int> wrong{0};
    on_threads(kThreads, [&](int id) {
      if (id == 0) shared.realize();
      std::vector<float> v = (shared + float(id)).sum(0).to_vector<float>();
      for (int c = 0; c < 8; c++) {
        double want = 0;
        for (int r = 0; r < 8; r++) want += 0.5 * (r * 8 + c) - 1 + id;
        if (std::fabs(v[c] - want) > 1e-2) wrong++;
      }
      if (std::fabs(shared.to_vector<float>()[9] - 3.5f) > 1e-5) wrong++;
    });
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_TRUE(shared.is_realized());
  }
}

TEST(Threads, GradAndTrainingModeArePerThread) {
  std::atomic<int> stage{0};
  bool other_no_grad = true, other_training = true, new_thread_no_grad = true;
  std::thread guarded([&] {
    NoGradGuard ng;
    TrainGuard train;
    stage = 1;
    while (stage != 2) std::this_thread::yield();  // the guards stay set while the main thread looks
  });
  while (stage != 1) std::this_thread::yield();
  other_no_grad = Tensor::no_grad;
  other_training = Tensor::training;
  // a value computed here still carries gradients, although the other thread holds a NoGradGuard
  Tensor w = Tensor({1.0f, 2.0f}).requires_grad_();
  (w * w).sum().backward();
  stage = 2;
  guarded.join();
  {
    NoGradGuard ng;
    std::thread([&] { new_thread_no_grad = Tensor::no_grad; }).join();
  }
  EXPECT_FALSE(other_no_grad);
  EXPECT_FALSE(other_training);
  EXPECT_FALSE(new_thread_no_grad);  // a new thread starts with gradients on, as in PyTorch
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 4}));
}

// A small regression trained on each thread at once: each ends where the same training ends on one thread.
std::vector<float> train_regression(int id, bool eval_in_guard) {
  std::vector<float> xs, ys;
  for (int i = 0; i < 16; i++) xs.push_back(float(i % 4) - 1.5f), xs.push_back(float(i / 4) - 1.5f);
  for (int i = 0; i < 16; i++) ys.push_back(0.5f * xs[2 * i] - (id + 1) * xs[2 * i + 1] + 0.25f);
  Tensor X(xs, {16, 2}), Y(ys, {16, 1});
  Tensor w = Tensor::zeros({2, 1}).requires_grad_(), b = Tensor::zeros({1}).requires_grad_();
  optim::LAMB opt = optim::Adam({w, b}, 0.05);
  for (int step = 0; step < 30; step++) {
    opt.zero_grad();
    Tensor loss = (X.matmul(w) + b - Y).square().mean().backward();
    opt.step();
    if (eval_in_guard) {
      NoGradGuard ng;
      (X.matmul(w) + b).realize();
    }
  }
  std::vector<float> out = w.to_vector<float>();
  out.push_back(b.item<float>());
  return out;
}

TEST(Threads, TrainingOnTwoThreadsAtOnce) {
  std::vector<std::vector<float>> alone, together(2);
  for (int id = 0; id < 2; id++) alone.push_back(train_regression(id, false));
  on_threads(2, [&](int id) { together[id] = train_regression(id, id == 1); });
  EXPECT_EQ(together, alone);  // bit for bit: the same kernels on the same data
  EXPECT_LT(alone[1][1], -1.0f);  // and the training went somewhere (towards -2)
}

TEST(Threads, ATinyJitRefusesASecondCallWhileOneRuns) {
  std::atomic<int> stage{0};
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) {
    if (stage == 0) {  // the first call waits inside the function until the second one has been refused
      stage = 1;
      while (stage != 2) std::this_thread::yield();
    }
    return (in[0] + 1).realize();
  });
  Tensor x = Tensor({1.0f, 2.0f}).realize();
  std::thread first([&] { f({x}); });
  while (stage != 1) std::this_thread::yield();
  try {
    f({x});
    ADD_FAILURE() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "TinyJit");
    EXPECT_NE(std::string(e.what()).find("one call at a time"), std::string::npos) << e.what();
  }
  stage = 2;
  first.join();
  EXPECT_EQ(f({x}).to_vector<float>(), (std::vector<float>{2, 3}));  // and it works again afterwards
}

}  // namespace
