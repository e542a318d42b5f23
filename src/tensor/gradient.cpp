// Autograd on the lazy graph: reverse-mode differentiation over the tensor-level UOps, one local rule per primitive
// (tinygrad's list). Every composed method differentiates through the primitives it is built from, and the
// gradients are themselves lazy tensors: they fuse with the rest of the step, and can be differentiated again.
//
// The rules are a switch over the op rather than a PatternMatcher table: each primitive has exactly one rule and
// no rule needs to match a pattern deeper than the node itself.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>
#include <unordered_map>
#include <unordered_set>

#include "runtime/buffer_uop.h"
#include "tensor/custom_grad.h"
#include "viz/graph_dot.h"
#include "tg/context.h"
#include "tg/mpi.h"
#include "uop/reduce_arg.h"

namespace tg {

using uop::Ops;
using uop::UOp;

thread_local bool Tensor::no_grad = false;

namespace {

Tensor view(const UOp& u) { return tensor::wrap(u, uop::device_of(u)); }

const std::vector<int64_t>& ints_arg(const UOp& u) { return u.arg().get<std::vector<int64_t>>(); }

// The gradients of u's sources given the gradient g of u; an undefined Tensor where none flows.
std::vector<Tensor> local_gradients(const UOp& u, const Tensor& g) {
  auto src = [&](size_t i) { return view(u.src(i)); };
  // leaves (BUFFER, CONST, IOTA) have a DEVICE source, which has no shape: read it only where a rule needs it
  auto in_shape_of = [&]() -> const Shape& { return u.src(0).shape(); };
  switch (u.op()) {
    case Ops::ADD: return {g, g};
    case Ops::MUL: return {g * src(1), g * src(0)};
    case Ops::NEG: return {-g};
    case Ops::EXP2: return {g * view(u) * std::numbers::ln2};
    case Ops::LOG2: return {g / (src(0) * std::numbers::ln2)};
    case Ops::SIN: return {g * (std::numbers::pi / 2 - src(0)).sin()};
    case Ops::SQRT: return {g / (view(u) * 2.0)};
    case Ops::RECIPROCAL: return {-g * view(u) * view(u)};
    case Ops::MAX: {  // ties share the gradient equally, as tinygrad
      Tensor a = src(0), b = src(1), share = (a > b).where(1.0, (a == b).where(0.5, 0.0)).cast(g.dtype());
      return {g * share, g * (1.0 - share)};
    }
    case Ops::WHERE: {
      Tensor c = src(0), zero = g.zeros_like();
      return {Tensor(), c.where(g, zero), c.where(zero, g)};
    }
    case Ops::CAST: return {u.src(0).dtype().is_float() ? g.cast(u.src(0).dtype()) : Tensor()};
    case Ops::REDUCE_AXIS: {
      const Shape& in_shape = in_shape_of();
      const uop::ReduceArg& ra = uop::get_reduce_arg(u);
      Tensor ge = g.expand(in_shape);
      if (ra.op == Ops::ADD) return {ge};
      Tensor x = src(0), ret = view(u).expand(in_shape);
      // the same axes reduced by another op, expanded back
      auto reduced = [&](Ops op, const Tensor& t) {
        return tensor::wrap(UOp::make(Ops::REDUCE_AXIS, t.dtype(), {t.uop()}, uop::reduce_arg(op, ra.axes)), g.device()).expand(in_shape);
      };
      if (ra.op == Ops::MUL) {
        // the product of the others: ret / x where x is not 0; at a zero, the product of the rest if it is the only
        // zero, else 0 (ret / x would be 0/0)
        Tensor zero = x == 0, safe = zero.where(x.ones_like(), x);
        Tensor zeros = reduced(Ops::ADD, zero.cast(dtypes::int32));
        return {ge * zero.where((zeros == 1).where(reduced(Ops::MUL, safe), x.zeros_like()), ret / safe)};
      }
      // MAX: the gradient goes to the maxima, split equally between ties
      Tensor hit = (x == ret).cast(g.dtype());
      return {ge * hit / reduced(Ops::ADD, hit)};
    }
    case Ops::RESHAPE: return {g.reshape(in_shape_of())};
    case Ops::EXPAND: {
      const Shape& in_shape = in_shape_of();
      std::vector<int64_t> axes;
      for (size_t i = 0; i < in_shape.size(); i++)
        if (in_shape[i] != u.shape()[i]) axes.push_back(static_cast<int64_t>(i));
      return {axes.empty() ? g : g.sum(axes, true).cast(g.dtype())};
    }
    case Ops::PERMUTE: {
      const std::vector<int64_t>& order = ints_arg(u);
      std::vector<int64_t> inverse(order.size());
      for (size_t i = 0; i < order.size(); i++) inverse[order[i]] = static_cast<int64_t>(i);
      return {g.permute(inverse)};
    }
    case Ops::PAD: {
      const Shape& in_shape = in_shape_of();
      const std::vector<int64_t>& p = ints_arg(u);
      std::vector<std::pair<int64_t, int64_t>> keep;
      for (size_t i = 0; i < in_shape.size(); i++) keep.push_back({p[2 * i], p[2 * i] + in_shape[i]});
      return {g.shrink(keep)};
    }
    case Ops::SHRINK: {
      const Shape& in_shape = in_shape_of();
      const std::vector<int64_t>& r = ints_arg(u);
      std::vector<std::pair<int64_t, int64_t>> grow;
      for (size_t i = 0; i < in_shape.size(); i++) grow.push_back({r[2 * i], in_shape[i] - r[2 * i + 1]});
      return {g.pad(grow)};
    }
    case Ops::FLIP: {
      std::vector<int64_t> axes;
      const std::vector<int64_t>& f = ints_arg(u);
      for (size_t i = 0; i < f.size(); i++)
        if (f[i]) axes.push_back(static_cast<int64_t>(i));
      return {g.flip(axes)};
    }
    case Ops::CONTIGUOUS: return {g};
    case Ops::CONTIGUOUS_BACKWARD: return {g.contiguous()};
    case Ops::CUSTOM_GRAD: return tensor::custom_gradient(u, g);
    case Ops::COPY: return {g.to(uop::device_of(u.src(0))), Tensor()};
    case Ops::ALLREDUCE:  // every rank's output is the sum of every rank's x: x's gradient sums the ranks' gradients
      if (u.arg().get<std::string>() != "sum") throw ArgumentError("backward", "an allreduce by " + u.arg().get<std::string>() + " has no gradient");
      return {mpi::allreduce(g, "sum")};
    case Ops::MULTI: {  // each device's part of the gradient
      std::vector<Tensor> out{Tensor()};
      int64_t axis = u.arg().get<int64_t>(), at = 0;
      for (size_t i = 1; i < u.src().size(); i++) {
        int64_t n = axis < 0 ? 0 : u.src(i).shape()[static_cast<size_t>(axis)];
        const std::string& dev = uop::device_of(u.src(i));
        UOp sel = UOp::make(Ops::MSELECT, g.dtype(), {g.uop(), tensor::device_uop(dev)},
                            uop::Arg(std::vector<int64_t>{static_cast<int64_t>(i - 1), axis, at, at + n}));
        out.push_back(tensor::wrap(sel, dev));
        at += n;
      }
      return out;
    }
    case Ops::MSELECT: {  // the part in its place, zeros elsewhere, as a value of the whole (held by every device)
      const std::vector<int64_t>& a = ints_arg(u);
      std::vector<std::pair<int64_t, int64_t>> grow(u.shape().size(), {0, 0});
      if (a[1] >= 0) grow[static_cast<size_t>(a[1])] = {a[2], in_shape_of()[static_cast<size_t>(a[1])] - a[3]};
      return {g.pad(grow).to(uop::device_of(u.src(0))), Tensor()};
    }
    default: return std::vector<Tensor>(u.src().size());  // comparisons, integer ops, DETACH, leaves: no gradient
  }
}

}  // namespace

namespace tensor {

Tensor source_of(const UOp& u, size_t i) { return view(u.src(i)); }

Tensor with_gradient_rule(const Tensor& value, GradRule rule, const std::vector<Tensor>& inputs, std::vector<int64_t> params) {
  if (Tensor::no_grad || !value.dtype().is_float()) return value;
  std::vector<UOp> src{value.uop()};
  for (const Tensor& t : inputs) src.push_back(t.uop());
  params.insert(params.begin(), static_cast<int64_t>(rule));
  return wrap(UOp::make(Ops::CUSTOM_GRAD, value.dtype(), src, uop::Arg(std::move(params))), value.device());
}

std::vector<Tensor> custom_gradient(const UOp& u, const Tensor& g) {
  std::vector<int64_t> arg = ints_arg(u);
  std::vector<int64_t> params(arg.begin() + 1, arg.end());
  switch (static_cast<GradRule>(arg[0])) {
    case GradRule::conv: return conv_gradient(u, g, params);
    case GradRule::pow: return pow_gradient(u, g, params);
    case GradRule::clamp: return clamp_gradient(u, g, params);
    case GradRule::hardswish: return hardswish_gradient(u, g, params);
    case GradRule::unpool: return unpool_gradient(u, g, params);
    case GradRule::stored_permuted: return stored_permuted_gradient(u, g, params);
    case GradRule::matmul: return matmul_gradient(u, g, params);
    case GradRule::bce: return bce_gradient(u, g, params);
    case GradRule::softmax: return softmax_gradient(u, g, params);
  }
  throw InternalError("gradient", "unknown gradient rule " + std::to_string(arg[0]));
}

std::unordered_set<const uop::UOpNode*> nodes_reaching(const std::vector<UOp>& order,
                                                      const std::unordered_set<const uop::UOpNode*>& wanted) {
  // DETACH stops a gradient, but a DETACH can be a target itself (x.detach().requires_grad_(), PyTorch's way to
  // make a leaf)
  std::unordered_set<const uop::UOpNode*> on_path;
  for (const UOp& u : order) {
    if (!u.dtype().is_float()) continue;
    bool reaches = wanted.count(u.get()) > 0;
    if (u.op() != Ops::DETACH)
      for (const UOp& s : u.src()) reaches = reaches || on_path.count(s.get());
    if (reaches) on_path.insert(u.get());
  }
  return on_path;
}

std::vector<Tensor> compute_gradients(const UOp& root, const Tensor& root_grad, const std::vector<UOp>& targets) {
  std::vector<UOp> order = root.toposort();
  std::unordered_set<const uop::UOpNode*> wanted;
  for (const UOp& t : targets) wanted.insert(t.get());
  std::unordered_set<const uop::UOpNode*> on_path = nodes_reaching(order, wanted);  // where a gradient flows
  std::unordered_map<const uop::UOpNode*, Tensor> grads;
  if (on_path.count(root.get())) grads[root.get()] = root_grad;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp& u = *it;
    auto g = grads.find(u.get());
    if (g == grads.end() || u.src().empty()) continue;
    std::vector<Tensor> local = local_gradients(u, g->second);
    for (size_t i = 0; i < u.src().size(); i++) {
      const UOp& s = u.src(i);
      if (!local[i].defined() || !on_path.count(s.get())) continue;
      Tensor gi = local[i].cast(s.dtype());
      auto [slot, fresh] = grads.emplace(s.get(), gi);
      if (!fresh) slot->second = slot->second + gi;
    }
  }
  std::vector<Tensor> out;
  for (const UOp& t : targets) {
    auto g = grads.find(t.get());
    out.push_back(g == grads.end() ? Tensor() : g->second);
  }
  return out;
}

}  // namespace tensor

Tensor& Tensor::requires_grad_(bool on, Loc where) {
  if (on && !dtype().is_float())
    throw DTypeError("requires_grad_", "only float tensors can require gradients, not " + dtype().name(), where);
  // gradients are found by graph node, and equal graphs of constants are one node: two zeros({n}) biases would share
  // one gradient, so such a leaf gets a buffer of its own (a graph with a buffer in it is already its own). Through
  // the host: contiguous().realize() is one interned node too, and two threads making zeros({n}) parameters at once
  // got the one buffer it became, each backward() then adding to the other's gradient
  if (on) {
    std::vector<UOp> nodes = uop().toposort();
    if (std::none_of(nodes.begin(), nodes.end(), [](const UOp& u) { return u.op() == Ops::BUFFER; })) {
      std::vector<uint8_t> bytes = to_bytes();
      impl_->set_uop(from_host(bytes.data(), static_cast<size_t>(numel()), dtype(), shape(), device(), where).uop());
    } else if (uop().op() == Ops::DETACH && uop().arg().empty()) {
      // x.detach().requires_grad_() is PyTorch's way to make a new leaf of x's value: a DETACH numbered apart, a node
      // of its own. Else the leaves of two such calls are one node, and one's gradient reaches the other (x.detach()
      // again, or x.detach().shard(devices), holds the first leaf's node)
      static std::atomic<int64_t> leaves{0};
      impl_->set_uop(UOp::make(Ops::DETACH, dtype(), {uop().src(0)}, uop::Arg(++leaves)));
    }
  }
  impl_->requires_grad = on;
  return *this;
}
bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }
Tensor Tensor::grad() const { return impl_ ? impl_->grad : Tensor(); }
Tensor& Tensor::zero_grad() {
  impl_->grad = Tensor();
  impl_->has_grad = false;
  return *this;
}

Tensor Tensor::detach(Loc where) const { return tensor::wrap(UOp::make(Ops::DETACH, dtype(), {uop()}), device(), where); }

namespace {

Tensor seed_gradient(const Tensor& root, const std::optional<Tensor>& gradient, const char* op, SourceLocation where) {
  if (!root.dtype().is_float()) throw DTypeError(op, "needs a float tensor to differentiate, not " + root.dtype().name(), where);
  if (!gradient) {
    if (root.numel() != 1)
      throw ShapeError(op, "needs a scalar (one element) without an upstream gradient; got shape " + tensor::shape_str(root.shape()) +
                               " (pass the gradient of the output)", where);
    return root.ones_like(std::nullopt, where);
  }
  if (gradient->shape() != root.shape())
    throw ShapeError(op, "upstream gradient of shape " + tensor::shape_str(gradient->shape()) + " for a tensor of shape " +
                             tensor::shape_str(root.shape()), where);
  return gradient->cast(root.dtype(), where);
}

// GRAPH=1: the backward graph drawn (the first one for each GRAPH_PATH: graph_dot.h)
void draw(const UOp& root, const std::vector<Tensor>& grads) {
  if (getenv_int("GRAPH") < 1) return;
  std::vector<UOp> g;
  for (const Tensor& t : grads)
    if (t.defined()) g.push_back(t.uop());
  viz::draw_autograd_graph(root, g);
}

}  // namespace

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets, std::optional<Tensor> gradient, Loc where) const {
  Tensor seed = seed_gradient(*this, gradient, "gradient", where);
  UOp graph = detail::autograd_graph(*impl_);
  std::vector<UOp> nodes;
  for (const Tensor& t : targets) nodes.push_back(t.uop());
  std::vector<Tensor> grads = tensor::compute_gradients(graph, seed, nodes);
  draw(graph, grads);
  std::unordered_set<const uop::UOpNode*> in_graph;
  for (const UOp& u : graph.toposort()) in_graph.insert(u.get());
  for (size_t i = 0; i < grads.size(); i++) {
    if (grads[i].defined()) continue;
    // in the graph only through comparisons, integer or detached ops: the gradient is zero (as PyTorch's)
    if (!in_graph.count(nodes[i].get()))
      throw ArgumentError("gradient", "target " + std::to_string(i) + " (shape " + tensor::shape_str(targets[i].shape()) +
                                          ") is not part of the graph of this tensor", where);
    grads[i] = targets[i].zeros_like();
  }
  return grads;
}

namespace {

// d(root)/d(t) added to t.grad() for each live tensor t in root's graph that requires a gradient (or is float)
void accumulate_gradients(const Tensor& root, const UOp& graph, const Tensor& seed, bool every_float, SourceLocation where) {
  std::unordered_set<const uop::UOpNode*> in_graph;
  for (const UOp& u : graph.toposort()) in_graph.insert(u.get());
  std::vector<UOp> nodes;
  std::vector<Tensor> found;
  for (const Tensor& t : detail::tensors_requiring_grad(every_float))
    if (in_graph.count(t.uop().get())) found.push_back(t), nodes.push_back(t.uop());
  if (found.empty())
    throw ArgumentError("backward", "nothing in the graph of this tensor (shape " + tensor::shape_str(root.shape()) +
                                        ") requires a gradient (call requires_grad_() on the parameters)", where);
  std::vector<Tensor> grads = tensor::compute_gradients(graph, seed, nodes);
  draw(graph, grads);
  for (size_t i = 0; i < found.size(); i++) {
    Tensor g = grads[i].defined() ? grads[i] : found[i].zeros_like();
    Tensor old = found[i].grad();
    found[i].set_grad(old.defined() ? old + g : g, where);  // accumulates until zeroed
  }
}

}  // namespace

Tensor& Tensor::backward(std::optional<Tensor> gradient, Loc where) {
  Tensor seed = seed_gradient(*this, gradient, "backward", where);
  accumulate_gradients(*this, detail::autograd_graph(*impl_), seed, false, where);
  return *this;
}

Tensor& Tensor::backward_all(std::optional<Tensor> gradient, Loc where) {
  Tensor seed = seed_gradient(*this, gradient, "backward", where);
  accumulate_gradients(*this, detail::autograd_graph(*impl_), seed, true, where);
  return *this;
}

Tensor& Tensor::set_grad(const Tensor& grad, Loc where) {
  if (grad.defined() && grad.shape() != shape())
    throw ShapeError("grad", "a gradient of shape " + tensor::shape_str(grad.shape()) + " for a tensor of shape " + tensor::shape_str(shape()),
                     where);
  impl_->grad = !grad.defined() ? Tensor() : grad.dtype() == dtype() && grad.device() == device() ? grad : grad.cast(dtype(), where).to(device(), where);
  impl_->has_grad = grad.defined();
  if (grad.defined()) impl_->grad.impl_->is_gradient = true;
  return *this;
}

}  // namespace tg
