// Memory of a deep network's forward + backward: the peak next to what it has to hold.
#include <cstdio>
#include <vector>

#include "bench.h"
#include "runtime/buffer_uop.h"
#include "schedule/schedule.h"
#include "tg/counters.h"
#include "tg/tensor.h"

namespace tg::bench {

// A `--layers`-deep MLP (Linear + ReLU, `--width` wide, batch `--batch`): forward, loss, backward and every
// weight's gradient realized together, as one schedule. Prints the peak of the bytes held by buffers while it runs
// (GlobalCounters::mem_peak) next to what must be held: the parameters, their gradients (the results), and one
// activation per layer (what the backward reads). `all_buffers_mb` is what the schedule's buffers sum to, the
// peak if no intermediate were freed before the end.
int mlp_backward(const Args& args) {
  int64_t layers = args.get("--layers", 50), width = args.get("--width", 256), batch = args.get("--batch", 64);
  std::vector<Tensor> params;
  for (int64_t i = 0; i < layers; i++) {
    params.push_back(Tensor::glorot_uniform({width, width}).requires_grad_().realize());
    params.push_back(Tensor::zeros({width}).requires_grad_().realize());
  }
  Tensor x = Tensor::randn({batch, width}).realize();
  auto step = [&] {
    Tensor h = x;
    for (int64_t i = 0; i < layers; i++) h = h.linear(params[2 * i], params[2 * i + 1]).relu();
    Tensor loss = h.square().mean();
    loss.backward();
    std::vector<Tensor> outs{loss};
    for (const Tensor& p : params) outs.push_back(p.grad());
    return outs;
  };
  Tensor::realize(step());  // compile once, so the measured run allocates only buffers
  for (Tensor& p : params) p.zero_grad();
  std::vector<Tensor> outs = step();
  int64_t all_buffers = 0;
  std::vector<uop::UOp> uops;
  for (const Tensor& t : outs) uops.push_back(t.uop());
  for (const auto& item : schedule::create_schedule(uops).items)
    all_buffers += static_cast<int64_t>(runtime::buffer_of(item.bufs[0]).nbytes());
  int64_t before = GlobalCounters::mem_used;
  GlobalCounters::reset();
  Tensor::realize(outs);
  double mb = 1.0 / (1 << 20);
  int64_t param_bytes = 0;
  for (const Tensor& p : params) param_bytes += p.numel() * 4;
  int64_t act_bytes = layers * batch * width * 4, input_bytes = x.numel() * 4;
  std::printf("{\"name\": \"mlp_backward\", \"layers\": %lld, \"width\": %lld, \"batch\": %lld, \"peak_mb\": %.2f, "
              "\"params_mb\": %.2f, \"grads_mb\": %.2f, \"activations_mb\": %.2f, \"input_mb\": %.2f, \"needed_mb\": %.2f, "
              "\"all_buffers_mb\": %.2f, \"held_before_mb\": %.2f}\n",
              static_cast<long long>(layers), static_cast<long long>(width), static_cast<long long>(batch),
              GlobalCounters::mem_peak * mb, param_bytes * mb, param_bytes * mb, act_bytes * mb, input_bytes * mb,
              (2 * param_bytes + act_bytes + input_bytes) * mb, (all_buffers + param_bytes + input_bytes) * mb,
              before * mb);
  return 0;
}

}  // namespace tg::bench
