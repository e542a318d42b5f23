// Kernel throughput: matmul, conv (beautiful_mnist's layers, forward and backward), elementwise, reductions,
// softmax and a whole beautiful_mnist training step. Each measurement is the median wall time of realizing the
// result (inputs realized, kernels compiled by a warm-up run), printed as one JSON line. bench/compare.sh runs the
// same workloads through PyTorch (bench/torch_bench.py) and prints both side by side.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include <tg/tg.h>

#include "bench.h"
#include "runtime/device.h"
#include "mnist_model.h"

namespace tg::bench {

namespace {

// median seconds of f() over reps runs after one warm-up run; a device with a queue (DEV=OPENCL, DEV=CUDA) is waited
// for, so the time is the kernels' and not their launch's
double time_median(int64_t reps, const std::function<void()>& f) {
  runtime::Device& dev = runtime::get_device(runtime::default_device());
  f();
  dev.synchronize();
  std::vector<double> ts;
  for (int64_t i = 0; i < reps; i++) {
    double t0 = now_s();
    f();
    dev.synchronize();
    ts.push_back(now_s() - t0);
  }
  return median(ts);
}

void print_line(const std::string& name, const std::string& shape, double s, double flops, double bytes) {
  std::printf("{\"name\": \"%s\", \"shape\": \"%s\", \"median_ms\": %.4f", name.c_str(), shape.c_str(), s * 1e3);
  if (flops > 0) std::printf(", \"gflops\": %.2f", flops / s * 1e-9);
  if (bytes > 0) std::printf(", \"gbs\": %.2f", bytes / s * 1e-9);
  std::printf("}\n");
  std::fflush(stdout);
}

int64_t positional(const Args& args, int64_t fallback) {
  return !args.v.empty() && args.v[0].rfind("--", 0) != 0 ? std::atoll(args.v[0].c_str()) : fallback;
}

}  // namespace

// --half / --bfloat16: the inputs and the result in that dtype (accumulated in float32). --m M --k K: a (M, K) @
// (K, N) product (both N by default); --batch B: B of them; --bt: the right operand stored transposed, (N, K), as
// a Linear layer's weight is
int matmul(const Args& args) {
  int64_t n = positional(args, 1024), reps = args.get("--reps", 5), m = args.get("--m", n), k = args.get("--k", n);
  int64_t batch = args.get("--batch", 0);
  bool half = std::count(args.v.begin(), args.v.end(), "--half"), bf16 = std::count(args.v.begin(), args.v.end(), "--bfloat16");
  bool bt = std::count(args.v.begin(), args.v.end(), "--bt");
  DType dt = half ? dtypes::float16 : bf16 ? dtypes::bfloat16 : dtypes::float32;
  Shape lead = batch ? Shape{batch} : Shape{};
  auto shape = [&](int64_t r, int64_t c) { Shape s = lead; s.push_back(r), s.push_back(c); return s; };
  Tensor a = Tensor::rand(shape(m, k)).cast(dt).realize();
  Tensor b = bt ? Tensor::rand(shape(n, k)).cast(dt).realize().transpose(-1, -2) : Tensor::rand(shape(k, n)).cast(dt).realize();
  double s = time_median(reps, [&] { a.matmul(b).realize(); });
  std::string name = (dt == dtypes::float32 ? "matmul" : "matmul_" + dt.name()) + (bt ? "_bt" : "");
  std::string dims = (batch ? std::to_string(batch) + "x" : "") + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  print_line(name, dims, s, 2.0 * std::max<int64_t>(batch, 1) * m * n * k, 0);
  return 0;
}

// The four convolutions of beautiful_mnist at batch B: forward (conv2d) and backward (gradients of the input and
// the weight, realized together).
int conv(const Args& args) {
  int64_t bs = args.get("--batch", 64), reps = args.get("--reps", 20);
  struct Layer {
    int64_t cin, cout, k, hw;
  };
  const Layer layers[] = {{1, 32, 5, 28}, {32, 32, 5, 24}, {32, 64, 3, 10}, {64, 64, 3, 8}};
  for (const Layer& l : layers) {
    Tensor x = Tensor::randn({bs, l.cin, l.hw, l.hw}).realize();
    Tensor w = Tensor::randn({l.cout, l.cin, l.k, l.k}).realize();
    int64_t out = l.hw - l.k + 1;
    double flops = 2.0 * bs * l.cout * out * out * l.cin * l.k * l.k;
    std::string shape = std::to_string(bs) + "x" + std::to_string(l.cin) + "x" + std::to_string(l.hw) + "x" +
                        std::to_string(l.hw) + " * " + std::to_string(l.cout) + "x" + std::to_string(l.cin) + "x" +
                        std::to_string(l.k) + "x" + std::to_string(l.k);
    print_line("conv_forward", shape, time_median(reps, [&] { x.conv2d(w).realize(); }), flops, 0);
    // a random upstream gradient, as in training (after sum() it would be all ones, and fold away)
    Tensor xg = x.detach().requires_grad_(), wg = w.detach().requires_grad_();
    Tensor up = Tensor::randn({bs, l.cout, out, out}).realize();
    double s = time_median(reps, [&] {
      std::vector<Tensor> g = xg.conv2d(wg).gradient({xg, wg}, up);
      Tensor::realize(g);
    });
    print_line("conv_backward", shape, s, 2 * flops, 0);
  }
  return 0;
}

int elementwise(const Args& args) {
  int64_t n = args.get("--n", 1 << 24), reps = args.get("--reps", 10);
  Tensor a = Tensor::rand({n}).realize(), b = Tensor::rand({n}).realize();
  std::vector<float> src(static_cast<size_t>(n), 1.f), dst(static_cast<size_t>(n));
  double mem = time_median(reps, [&] { std::memcpy(dst.data(), src.data(), static_cast<size_t>(n) * 4); });
  print_line("memcpy", std::to_string(n) + " float32", mem, 0, 2.0 * n * 4);
  print_line("add", std::to_string(n) + " float32", time_median(reps, [&] { (a + b).realize(); }), n, 3.0 * n * 4);
  print_line("gelu", std::to_string(n) + " float32", time_median(reps, [&] { a.gelu().realize(); }), 0, 2.0 * n * 4);
  Tensor square = a.reshape({4096, n / 4096});
  print_line("transpose", "4096x" + std::to_string(n / 4096) + " float32",
             time_median(reps, [&] { square.transpose().contiguous().realize(); }), 0, 2.0 * n * 4);
  return 0;
}

// Copies of N float32 between the host and DEV (pageable host memory, as a user's tensors are)
int copy(const Args& args) {
  int64_t n = args.get("--n", 1 << 26), reps = args.get("--reps", 10);
  std::string dev = runtime::default_device();
  Tensor host = Tensor::rand({n}, dtypes::float32, "CPU").realize(), on_dev = host.to(dev).realize();
  std::string shape = std::to_string(n) + " float32";
  print_line("copy_to_device", shape, time_median(reps, [&] { host.to(dev).realize(); }), 0, n * 4.0);
  print_line("copy_to_host", shape, time_median(reps, [&] { on_dev.to("CPU").realize(); }), 0, n * 4.0);
  return 0;
}

int reduce(const Args& args) {
  int64_t n = args.get("--n", 1 << 24), reps = args.get("--reps", 10);
  Tensor a = Tensor::rand({n}).realize();
  print_line("sum", std::to_string(n) + " float32", time_median(reps, [&] { a.sum().realize(); }), n, n * 4.0);
  int64_t r = 4096, c = n / 4096;
  Tensor m = a.reshape({r, c});
  print_line("sum_rows", std::to_string(r) + "x" + std::to_string(c) + " axis 1", time_median(reps, [&] { m.sum(1).realize(); }), n, n * 4.0);
  print_line("sum_cols", std::to_string(r) + "x" + std::to_string(c) + " axis 0", time_median(reps, [&] { m.sum(0).realize(); }), n, n * 4.0);
  return 0;
}

int softmax(const Args& args) {
  int64_t r = args.get("--rows", 4096), c = args.get("--cols", 4096), reps = args.get("--reps", 5);
  Tensor a = Tensor::rand({r, c}).realize();
  print_line("softmax", std::to_string(r) + "x" + std::to_string(c) + " axis 1",
             time_median(reps, [&] { a.softmax(1).realize(); }), 0, 2.0 * r * c * 4);
  return 0;
}

// A stable sort of R rows of C floats along axis 1, values and indices (rank sort or bitonic network by size).
int sort(const Args& args) {
  int64_t r = args.get("--rows", 1), c = args.get("--cols", 65536), reps = args.get("--reps", 5);
  Tensor a = Tensor::rand({r, c}).realize();
  print_line("sort", std::to_string(r) + "x" + std::to_string(c) + " axis 1", time_median(reps, [&] {
               auto [v, i] = a.sort(1);
               Tensor::realize({v, i});
             }), 0, 0);
  return 0;
}

// One beautiful_mnist training step (the model of GUIDE section 5, Adam) on random data, under TinyJit.
int mnist_step(const Args& args) {
  int64_t bs = args.get("--batch", 512), reps = args.get("--reps", 3);
  MnistModel model;
  Tensor X = (Tensor::rand({2048, 1, 28, 28}) * 255).cast(dtypes::uint8).realize();
  Tensor Y = Tensor::randint({2048}, 0, 10).realize();
  optim::LAMB opt = optim::Adam(get_parameters(model));
  TinyJit<Tensor> step([&](const std::vector<Tensor>&) {
    TrainGuard train;
    opt.zero_grad();
    Tensor s = Tensor::randint({bs}, 0, 2048);
    Tensor loss = model(X[{s}]).sparse_categorical_crossentropy(Y[{s}]).backward();
    std::vector<Tensor> outs = opt.schedule_step();
    outs.push_back(loss);
    Tensor::realize(outs);
    return loss;
  });
  step();  // the first two calls build and capture; time_median warms up once more
  print_line("mnist_step", "batch " + std::to_string(bs), time_median(reps, [&] { step().item<float>(); }), 0, 0);
  return 0;
}

}  // namespace tg::bench
