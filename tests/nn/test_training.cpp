// A short training run end to end: a small MLP learns a 2-d task that a linear model cannot (the inside of a
// circle), with randint batches, Adam and the step under TinyJit, and must reach a known accuracy on held-out data.
#include <gtest/gtest.h>

#include <numbers>

#include "tg/tg.h"

namespace tg {
namespace {

struct CircleMlp : nn::Module {
  nn::Linear l1{2, 32}, l2{32, 32}, l3{32, 2};
  Tensor operator()(const Tensor& x) const { return l3(l2(l1(x).relu()).relu()); }
  void state(const nn::StateVisitor& v) override { v("l1", l1), v("l2", l2), v("l3", l3); }
};

// points uniform in [-1, 1]^2; class 1 inside the circle of radius sqrt(2/pi) (half of the square's area)
std::pair<Tensor, Tensor> circle_data(int64_t n) {
  Tensor x = (Tensor::rand({n, 2}) * 2 - 1).realize();
  Tensor y = ((x * x).sum(1) < 2 / std::numbers::pi).cast(dtypes::int32).realize();
  return {x, y};
}

TEST(Training, SmallMlpLearnsTheCircle) {
  Tensor::manual_seed(42);
  auto [X, Y] = circle_data(1024);
  auto [Xt, Yt] = circle_data(1024);
  CircleMlp model;
  optim::LAMB opt = optim::Adam(get_parameters(model), 0.01);
  auto accuracy = [&] { return (model(Xt).argmax(1) == Yt).cast(dtypes::float32).mean().item<float>(); };
  float before = accuracy();
  TinyJit<Tensor> step([&](const std::vector<Tensor>&) {
    TrainGuard train;
    opt.zero_grad();
    Tensor idx = Tensor::randint({128}, 0, 1024);
    Tensor loss = model(X[{idx}]).sparse_categorical_crossentropy(Y[{idx}]).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  });
  float first_loss = step().item<float>(), loss = first_loss;
  for (int i = 1; i < 400; i++) loss = step().item<float>();
  float after = accuracy();
  EXPECT_LT(before, 0.75f);  // a fresh network is no better than guessing the majority (~50%)
  // seeds 1, 2, 3, 42 reach 96.9% to 98.8%; a network that does not learn the boundary stays near 50-70%
  EXPECT_GE(after, 0.95f) << "test accuracy after 400 steps (loss " << first_loss << " -> " << loss << ")";
  EXPECT_LT(loss, 0.3f * first_loss);
}

}  // namespace
}  // namespace tg
