// tinygrad's beautiful_mnist in C++: a small conv net trained on Fashion-MNIST (or MNIST) with Adam.
//
//   ./build/bin/beautiful_mnist [mnist_folder]     STEPS=70 BS=512 by default; SEED=n fixes the random numbers
//                                                  (else they come from the clock); DEV=OPENCL trains on OpenCL
//
// Without a folder it reads Fashion-MNIST from Debian's dataset-fashion-mnist package.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <tg/tg.h>

#include "mnist_model.h"
#include "training_loop.h"

using tg::Tensor;

int main(int argc, char** argv) try {
  tg::datasets::MNIST data = tg::datasets::mnist(argc > 1 ? argv[1] : "");
  int64_t steps = env_int("STEPS", 70), bs = env_int("BS", 512);
  if (std::getenv("SEED")) Tensor::manual_seed(static_cast<uint64_t>(env_int("SEED", 0)));
  MnistModel model;
  tg::optim::LAMB opt = tg::optim::Adam(tg::get_parameters(model));

  // both run under TinyJit: the first two calls build, schedule and compile; later calls replay the kernels
  tg::TinyJit<Tensor> train_step([&](const std::vector<Tensor>&) {
    tg::TrainGuard train;
    opt.zero_grad();
    Tensor samples = Tensor::randint({bs}, 0, data.X_train.shape()[0]);
    Tensor loss = model(data.X_train[{samples}]).sparse_categorical_crossentropy(data.Y_train[{samples}]).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  });
  tg::TinyJit<Tensor> test_accuracy([&](const std::vector<Tensor>&) {
    return (model(data.X_test).argmax(1) == data.Y_test).mean().mul(100);
  });

  Progress progress(steps, 10);
  float acc = NAN;
  for (int64_t i = 0; i < steps; i++) {
    float loss = train_step().item<float>();
    if (progress.reports(i)) acc = test_accuracy().item<float>();
    progress.step(i, format("loss: %.2f test_accuracy: %.2f%%", loss, acc));
  }
  std::printf("test accuracy: %.2f%%\n", acc);
  return 0;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
