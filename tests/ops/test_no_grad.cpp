// Realizing under NoGradGuard: every op family gives the same values inside the guard as outside it (a value made
// inside is a DETACH of the same graph, which changes no value), the guard stops gradients, and the evaluation loop
// written the PyTorch way (train outside the guard, evaluate inside) runs.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include <tg/tg.h>

using namespace tg;

namespace {

struct Case {
  const char* name;
  std::function<Tensor()> make;  // builds fresh inputs each call: nothing is shared between the two runs
};

Tensor input(Shape shape, uint64_t seed = 1) {
  Tensor::manual_seed(seed);
  return Tensor::randn(shape);
}

std::vector<Case> op_families() {
  return {
      {"elementwise", [] { return (input({4, 5}).exp2() * 3 + input({5}, 2).sigmoid()).sqrt().abs(); }},
      {"comparison", [] { return (input({3, 3}) < 0).where(input({3, 3}, 2), 1.5f); }},
      {"integer", [] { return (Tensor::arange(12).reshape({3, 4}) * 7) % 5; }},
      {"reduce", [] { return input({6, 7}).sum(1) + input({6, 7}).max(1) + input({6, 7}).mean(1); }},
      {"softmax", [] { return input({4, 10}).log_softmax(1); }},
      {"movement", [] { return input({2, 3, 4}).permute({2, 0, 1}).flip(0).pad({{1, 1}, {0, 0}, {2, 0}}).reshape({6, -1}); }},
      {"movement_only", [] { return input({3, 4}).realize().reshape({4, 3}); }},
      {"realized_leaf", [] { return input({5}).realize(); }},
      {"matmul", [] { return input({8, 16}).matmul(input({16, 4}, 2)); }},
      {"conv", [] { return input({2, 3, 9, 9}).conv2d(input({4, 3, 3, 3}, 2), input({4}, 3), 1, 2, 1, 1).relu(); }},
      {"pool", [] { return input({1, 2, 8, 8}).max_pool2d().avg_pool2d(); }},
      {"indexing", [] { return input({10, 3})[{Tensor({1, 7, 2})}]; }},
      {"scatter", [] { return input({3, 5}).scatter(1, Tensor({{0, 1}, {2, 3}, {4, 0}}), input({3, 2}, 2)); }},
      {"gather", [] { return input({4, 6}).gather(1, Tensor({{0, 5}, {1, 4}, {2, 3}, {3, 2}})); }},
      {"sort", [] { return input({13}).sort().first; }},
      {"cumsum", [] { return input({3, 9}).cumsum(1); }},
      {"cat", [] { return Tensor::cat({input({2, 3}), input({4, 3}, 2)}); }},
      {"random", [] { Tensor::manual_seed(5); return Tensor::rand({7}) + Tensor::randint({7}, 0, 9).cast(dtypes::float32); }},
      {"cast", [] { return (input({6}) * 100).cast(dtypes::int16).cast(dtypes::float16); }},
      {"copy", [] { return input({4}).to("CPU:1") * 2; }},
      {"layernorm", [] { return input({3, 8}).layernorm(); }},
      {"loss", [] { return input({5, 4}).sparse_categorical_crossentropy(Tensor({0, 3, 1, 2, 2})); }},
  };
}

TEST(NoGrad, EveryOpFamilyRealizesInsideTheGuard) {
  for (const Case& c : op_families()) {
    SCOPED_TRACE(c.name);
    Tensor outside = c.make();
    std::vector<uint8_t> want = outside.to_bytes();
    std::ostringstream want_text;
    want_text << outside;
    NoGradGuard guard;
    Tensor inside = c.make();
    EXPECT_EQ(inside.to_bytes(), want);
    std::ostringstream text;
    text << inside;
    EXPECT_EQ(text.str(), want_text.str());
    EXPECT_TRUE(inside.realize().is_realized());
    EXPECT_EQ(inside.contiguous().to_bytes(), want);       // a realized value read again
    EXPECT_EQ((inside + 0).to_bytes(), want);               // and used in a new computation
    if (inside.numel() > 0) {
      EXPECT_NO_THROW(inside.flatten()[0].item<float>());
    }
  }
}

TEST(NoGrad, ValuesMadeInsideCarryNoGradient) {
  Tensor w = Tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
  Tensor frozen;
  {
    NoGradGuard guard;
    frozen = (w * 2).realize();
  }
  Tensor loss = (w * frozen).sum();
  loss.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));  // d/dw of w*c is c: frozen is a constant
}

// The PyTorch evaluation idiom: train outside the guard, evaluate inside it, keep training.
TEST(NoGrad, TrainAndEvaluateLoop) {
  Tensor::manual_seed(3);
  nn::Linear layer(4, 3);
  optim::LARS opt = optim::SGD(get_parameters(layer), 0.1);
  Tensor x = Tensor::randn({8, 4}), y = Tensor({0, 1, 2, 0, 1, 2, 0, 1});
  float first = 0, last = 0;
  for (int step = 0; step < 5; step++) {
    opt.zero_grad();
    Tensor loss = layer(x).sparse_categorical_crossentropy(y).backward();
    opt.step();
    NoGradGuard guard;
    float eval = layer(x).sparse_categorical_crossentropy(y).item<float>();
    std::vector<int32_t> pred = layer(x).argmax(1).to_vector<int32_t>();
    EXPECT_EQ(pred.size(), 8u);
    (step == 0 ? first : last) = eval;
  }
  EXPECT_LT(last, first);  // the steps between the evaluations trained the layer
}

TEST(NoGrad, JitCapturedInsideTheGuard) {
  Tensor w = Tensor({1.0f, -2.0f, 0.5f}).realize();
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) { return (in[0] * w).relu().realize(); });
  NoGradGuard guard;
  for (int i = 0; i < 4; i++) {
    Tensor x = Tensor({float(i), 1.0f, 2.0f}).realize();
    EXPECT_EQ(f({x}).to_vector<float>(), (std::vector<float>{float(i), 0.0f, 1.0f}));
  }
}

}  // namespace
