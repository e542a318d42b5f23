// Optimizers (tinygrad's nn.optim): SGD, Adam, AdamW, LARS, LAMB, Muon.
//
//   tg::optim::LAMB opt = tg::optim::Adam(tg::get_parameters(model));   // tg/state.h
//   opt.zero_grad();
//   Tensor loss = model(x).sparse_categorical_crossentropy(y).backward();
//   std::vector<Tensor> step = opt.schedule_step();
//   step.push_back(loss);
//   Tensor::realize(step);                                 // or opt.step(), then read the loss
//
// The update is built as lazy tensors: schedule_step() assigns every parameter (and the optimizer's own state) its
// new value and returns them, so they can be realized in one schedule with the loss. The learning rate is a
// 0-d tensor (`lr`): `opt.lr.assign(Tensor(0.01f))` changes it without compiling anything again.
#pragma once
#include <vector>

#include "tg/tensor.h"

namespace tg::optim {

class Optimizer {
 public:
  // params: the tensors with requires_grad() are optimized; the rest (batchnorm's running statistics, from
  // get_parameters(model)) are only realized with each step. Throws if none requires a gradient.
  Optimizer(const std::vector<Tensor>& params, double lr, SourceLocation where = SourceLocation::current());
  virtual ~Optimizer() = default;
  void zero_grad();                    // drops every parameter's gradient
  void step();                         // realizes schedule_step()
  std::vector<Tensor> schedule_step(); // the new parameters, buffers and optimizer state, lazy
  Tensor lr;                           // 0-d float32
  std::vector<Tensor> params, buffers;

 protected:
  // assigns each parameter its update from `grads` (undefined: no gradient this step, left alone); returns the
  // optimizer's own state tensors that changed
  virtual std::vector<Tensor> update(const std::vector<Tensor>& grads) = 0;
  std::vector<Tensor> zeros_like_params() const;
};

// SGD with momentum and LARS's trust ratio: with tcoef > 0 each update is scaled by
// tcoef * |w| / (|g| + weight_decay * |w|). classic: momentum on the lr-scaled gradient (tinygrad's LARS default;
// SGD's momentum is on the gradient, the rate applied after, so a changed lr acts at once as in PyTorch).
// ns_steps > 0 orthogonalizes each 2-d+ update with that many Newton-Schulz steps of ns_coefficients (Muon).
// decoupled_wd: the weight decays by (1 - lr * weight_decay) after the update is made, instead of adding
// weight_decay * w to the gradient (Muon's, as PyTorch's and tinygrad's).
class LARS : public Optimizer {
 public:
  LARS(const std::vector<Tensor>& params, double lr = 0.001, double momentum = 0.9, double weight_decay = 1e-4,
       bool nesterov = false, bool classic = true, double tcoef = 0.001, int ns_steps = 0,
       SourceLocation where = SourceLocation::current());
  double momentum, weight_decay, tcoef;
  bool nesterov, classic;
  int ns_steps;
  std::vector<double> ns_coefficients{3.4445, -4.775, 2.0315};
  bool decoupled_wd = false;
  std::vector<Tensor> b;  // momentum buffers

 protected:
  std::vector<Tensor> update(const std::vector<Tensor>& grads) override;
};

// Adam's moments with LAMB's layer-wise trust ratio |w| / |update| (adam = true: no trust ratio, i.e. Adam/AdamW).
class LAMB : public Optimizer {
 public:
  LAMB(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
       double weight_decay = 0.0, bool adam = false, SourceLocation where = SourceLocation::current());
  double b1, b2, eps, weight_decay;
  bool adam;
  Tensor b1_t, b2_t;           // b1^t and b2^t
  std::vector<Tensor> m, v;    // first and second moments

 protected:
  std::vector<Tensor> update(const std::vector<Tensor>& grads) override;
};

// PyTorch's SGD (momentum buffer b = momentum * b + g; nesterov uses g + momentum * b).
LARS SGD(const std::vector<Tensor>& params, double lr = 0.001, double momentum = 0.0, double weight_decay = 0.0,
         bool nesterov = false, SourceLocation where = SourceLocation::current());
// Adam and AdamW (decoupled weight decay) as PyTorch's: eps outside the square root, bias-corrected moments.
LAMB Adam(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
          SourceLocation where = SourceLocation::current());
LAMB AdamW(const std::vector<Tensor>& params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
           double weight_decay = 0.01, SourceLocation where = SourceLocation::current());
// Muon: nesterov momentum whose update is orthogonalized by 5 Newton-Schulz steps (coefficients 3.4445, -4.775,
// 2.0315) and scaled by sqrt(max(1, rows / cols)); 1-d parameters get the momentum update as it is. Decoupled
// weight decay, as PyTorch's Muon.
LARS Muon(const std::vector<Tensor>& params, double lr = 0.02, double momentum = 0.95, double weight_decay = 0.0,
          int ns_steps = 5, SourceLocation where = SourceLocation::current());

}  // namespace tg::optim
