// tinygrad's beautiful_mnist in C++: a small conv net trained on Fashion-MNIST (or MNIST) with Adam.
//
//   ./build/bin/beautiful_mnist [mnist_folder]     STEPS=70 BS=512 EVAL_BS=2000 by default; SEED=n fixes the random
//                                                  numbers (else they come from the clock); DEV=OPENCL trains on OpenCL
//   DEVICES=CPU:0,CPU:1 trains data-parallel (tinygrad's beautiful_mnist_multigpu): the model is replicated on each
//   device, each batch is split between them, and the gradients are summed across them (an allreduce)
//   mpirun -np 2 ./build/bin/beautiful_mnist trains data-parallel across processes (tg::mpi): every rank starts
//   from rank 0's parameters, takes BS / ranks samples of each batch, and averages the gradients with the others
//   before each identical optimizer step; rank 0 prints the progress and the accuracy
//
// Without a folder it reads Fashion-MNIST from Debian's dataset-fashion-mnist package.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <tg/tg.h>

#include "cli.h"
#include "mnist_model.h"
#include "training_loop.h"

using tg::Tensor;

int main(int argc, char** argv) try {
  const tg::cli::Usage usage{"beautiful_mnist", "usage: beautiful_mnist [MNIST_FOLDER]   (environment: STEPS BS EVAL_BS SEED DEV DEVICES)\n"
                                                "Without a folder it reads Fashion-MNIST from Debian's dataset-fashion-mnist.\n"};
  usage.check(argc, argv);
  if (argc > 2) usage.fail("more than one folder given");
  tg::datasets::MNIST data = tg::datasets::mnist(argc > 1 ? argv[1] : "");
  int64_t steps = env_int("STEPS", 70), bs = env_int("BS", 512);
  if (std::getenv("SEED")) Tensor::manual_seed(static_cast<uint64_t>(env_int("SEED", 0)));
  MnistModel model;
  std::vector<std::string> devices;  // DEVICES: the model on each, every batch split between them
  if (const char* d = std::getenv("DEVICES")) devices = Tensor(0).to(d).devices();  // (names checked, canonical)
  auto spread = [&](const Tensor& batch) { return devices.size() > 1 ? batch.shard(devices, 0) : batch; };
  if (devices.size() > 1)
    model.state(tg::nn::StateVisitor([&](const std::string&, Tensor& t) { t = t.to(devices).realize(); }));
  std::vector<Tensor> params = tg::get_parameters(model);
  // under mpirun: rank 0's parameters everywhere (the others add zeros), each rank its own samples. Before the
  // optimizer is made: it lists a tensor once by its graph, and the two batchnorms' num_batches_tracked are one
  // graph (zeros) until this gives each a buffer of its own
  int ranks = tg::mpi::size();
  if (ranks > 1) {
    for (Tensor& p : params) p.assign(tg::mpi::allreduce(tg::mpi::rank() == 0 ? p : p.zeros_like())).realize();
    Tensor::manual_seed(static_cast<uint64_t>(env_int("SEED", 0)) * 1000003 + static_cast<uint64_t>(tg::mpi::rank()));
    bs = std::max<int64_t>(1, bs / ranks);
  }
  tg::optim::LAMB opt = tg::optim::Adam(params);

  // the step runs under TinyJit: the first two calls build, schedule and compile; later calls replay the kernels
  // (across processes the gradients' allreduce too: an op of the graph, between the backward and the update)
  tg::TinyJit<Tensor> train_step([&](const std::vector<Tensor>&) {
    tg::TrainGuard train;
    opt.zero_grad();
    Tensor samples = Tensor::randint({bs}, 0, data.X_train.shape()[0]);
    Tensor loss = model(spread(data.X_train[{samples}])).sparse_categorical_crossentropy(spread(data.Y_train[{samples}])).backward();
    if (ranks > 1) {
      tg::mpi::allreduce_gradients(params);
      loss = tg::mpi::allreduce(loss.detach()) / static_cast<double>(ranks);
    }
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  });
  auto step = [&] { return train_step().item<float>(); };
  // the test set in batches (tinygrad evaluates all 10000 images at once: 1.25 GB of activations that the TinyJit
  // holds between calls), cut once into buffers of their own; each batch's images and labels are the TinyJit's
  // inputs, so every call reads new ones. A last, smaller batch has shapes of its own: it runs without the TinyJit.
  tg::TinyJit<Tensor> count_correct([&](const std::vector<Tensor>& in) {
    return (model(spread(in[0])).argmax(1) == spread(in[1])).sum();
  });
  int64_t eval_bs = std::max<int64_t>(1, env_int("EVAL_BS", 2000));
  std::vector<Tensor> test_x = data.X_test.split(eval_bs), test_y = data.Y_test.split(eval_bs), batches;
  for (size_t b = 0; b < test_x.size(); b++)
    batches.push_back(test_x[b] = test_x[b].contiguous()), batches.push_back(test_y[b] = test_y[b].contiguous());
  Tensor::realize(batches);
  auto test_accuracy = [&] {
    int64_t correct = 0;
    for (size_t b = 0; b < test_x.size(); b++) {
      bool full = test_x[b].shape()[0] == test_x[0].shape()[0];
      correct += (full ? count_correct({test_x[b], test_y[b]}) : (model(spread(test_x[b])).argmax(1) == spread(test_y[b])).sum())
                     .item<int64_t>();
    }
    return 100.0F * static_cast<float>(correct) / static_cast<float>(data.X_test.shape()[0]);
  };

  Progress progress(steps, 10);
  float acc = NAN;
  bool prints = tg::mpi::rank() == 0;
  for (int64_t i = 0; i < steps; i++) {
    float loss = step();
    if (progress.reports(i) && prints) acc = test_accuracy();
    if (prints) progress.step(i, format("loss: %.2f test_accuracy: %.2f%%", loss, acc));
  }
  if (prints) std::printf("test accuracy: %.2f%%\n", acc);
  return 0;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
