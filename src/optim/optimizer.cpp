#include "tg/optim.h"

#include <cmath>
#include <unordered_set>

#include "uop/uop.h"

namespace tg::optim {

Optimizer::Optimizer(const std::vector<Tensor>& all, double lr, SourceLocation where) {
  std::unordered_set<const void*> seen;  // a tensor listed twice is updated once
  for (const Tensor& t : all) {
    if (!t.defined()) throw ArgumentError("Optimizer", "an empty Tensor handle among the parameters", where);
    if (!seen.insert(t.uop().get()).second) continue;
    (t.requires_grad() ? params : buffers).push_back(t);
  }
  if (params.empty()) throw ArgumentError("Optimizer", "no parameter requires a gradient (call requires_grad_() on them)", where);
  // on the parameters' device (each of them, for a model replicated on several)
  this->lr = Tensor(std::vector<float>{static_cast<float>(lr)}, {}, params[0].device()).realize();
}

void Optimizer::zero_grad() {
  for (Tensor& p : params) p.zero_grad();
}

std::vector<Tensor> Optimizer::schedule_step() {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) grads.push_back(p.grad().defined() ? p.grad().detach() : Tensor());
  std::vector<Tensor> out = update(grads);
  out.insert(out.end(), params.begin(), params.end());
  out.insert(out.end(), buffers.begin(), buffers.end());
  return out;
}

void Optimizer::step() { Tensor::realize(schedule_step()); }

std::vector<Tensor> Optimizer::zeros_like_params() const {
  std::vector<Tensor> z;
  for (const Tensor& p : params) z.push_back(Tensor::zeros(p.shape(), p.dtype(), p.device()).contiguous());
  Tensor::realize(z);  // one schedule: its kernels are compiled together
  return z;
}

LARS::LARS(const std::vector<Tensor>& params, double lr, double momentum, double weight_decay, bool nesterov, bool classic,
           double tcoef, int ns_steps, SourceLocation where)
    : Optimizer(params, lr, where), momentum(momentum), weight_decay(weight_decay), tcoef(tcoef), nesterov(nesterov),
      classic(classic), ns_steps(ns_steps) {
  if (momentum != 0) b = zeros_like_params();
}

std::vector<Tensor> LARS::update(const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < params.size(); i++) {
    if (!grads[i].defined()) continue;
    Tensor& t = params[i];
    Tensor w = t.detach(), g = grads[i];
    Tensor r = Tensor(1.0f, std::nullopt, w.device());
    if (tcoef != 0) {
      Tensor r1 = w.square().sum().sqrt(), r2 = g.square().sum().sqrt();
      r = (r1 > 0).where((r2 > 0).where(r1 * tcoef / (r2 + r1 * weight_decay), 1.0f), 1.0f);
    }
    if (!decoupled_wd) g = g + w * weight_decay;
    if (classic) g = g * r * lr;
    if (momentum != 0) {
      b[i].assign(b[i] * momentum + g);
      g = nesterov ? g + b[i] * momentum : b[i];
    }
    if (ns_steps > 0 && g.ndim() >= 2) {
      int64_t rows = g.shape()[0], cols = g.numel() / std::max<int64_t>(rows, 1);
      g = g.reshape({rows, cols}).newton_schulz(ns_steps, ns_coefficients).reshape(g.shape()) *
          std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(cols, 1))));
    }
    if (!classic) g = g * r * lr;
    if (decoupled_wd && weight_decay != 0) w = w * (1.0f - lr * weight_decay);
    t.assign((w - g).cast(t.dtype()));
  }
  return b;
}

LAMB::LAMB(const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, double weight_decay, bool adam,
           SourceLocation where)
    : Optimizer(params, lr, where), b1(b1), b2(b2), eps(eps), weight_decay(weight_decay), adam(adam) {
  b1_t = Tensor::ones({}, dtypes::float32, this->lr.device()).contiguous().realize();
  b2_t = Tensor::ones({}, dtypes::float32, this->lr.device()).contiguous().realize();
  m = zeros_like_params();
  v = zeros_like_params();
}

std::vector<Tensor> LAMB::update(const std::vector<Tensor>& grads) {
  b1_t.assign(b1_t * b1);
  b2_t.assign(b2_t * b2);
  for (size_t i = 0; i < params.size(); i++) {
    if (!grads[i].defined()) continue;
    Tensor& t = params[i];
    Tensor w = t.detach(), g = grads[i];
    m[i].assign(m[i] * b1 + g * (1.0 - b1));
    v[i].assign(v[i] * b2 + g * g * (1.0 - b2));
    Tensor m_hat = m[i] / (1.0f - b1_t), v_hat = v[i] / (1.0f - b2_t);
    Tensor up = m_hat / (v_hat.sqrt() + eps) + w * weight_decay;
    Tensor r = Tensor(1.0f, std::nullopt, w.device());
    if (!adam) {
      Tensor r1 = w.square().sum().sqrt(), r2 = up.square().sum().sqrt();
      r = (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0f), 1.0f);
    }
    t.assign((w - lr * r * up).cast(t.dtype()));
  }
  std::vector<Tensor> state{b1_t, b2_t};
  state.insert(state.end(), m.begin(), m.end());
  state.insert(state.end(), v.begin(), v.end());
  return state;
}

LARS SGD(const std::vector<Tensor>& params, double lr, double momentum, double weight_decay, bool nesterov, SourceLocation where) {
  return LARS(params, lr, momentum, weight_decay, nesterov, /*classic*/ false, 0.0, 0, where);
}
LAMB Adam(const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, SourceLocation where) {
  return LAMB(params, lr, b1, b2, eps, 0.0, true, where);
}
LAMB AdamW(const std::vector<Tensor>& params, double lr, double b1, double b2, double eps, double weight_decay, SourceLocation where) {
  return LAMB(params, lr, b1, b2, eps, weight_decay, true, where);
}
LARS Muon(const std::vector<Tensor>& params, double lr, double momentum, double weight_decay, int ns_steps, SourceLocation where) {
  LARS muon(params, lr, momentum, weight_decay, true, false, 0.0, ns_steps, where);
  muon.decoupled_wd = true;
  return muon;
}

}  // namespace tg::optim
