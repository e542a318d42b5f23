// Losses. Reductions as PyTorch's (none, mean, sum).
#include <cmath>

#include "tensor/custom_grad.h"

namespace tg {

using tensor::shape_str;

namespace {

Tensor reduced(const Tensor& x, Reduction r) {
  if (r == Reduction::none) return x;
  return r == Reduction::sum ? x.sum() : x.mean();
}

// Y (class indices, shape of x without `axis`) as a bool mask with the classes along `axis`
Tensor classes_along(const Tensor& Y, const Tensor& x, int64_t axis, const char* op, SourceLocation where) {
  if (!Y.dtype().is_int()) throw DTypeError(op, "class indices must be integers, not " + Y.dtype().name(), where);
  Shape expect = x.shape();
  expect.erase(expect.begin() + axis);
  if (Y.shape() != expect)
    throw ShapeError(op, "targets " + shape_str(Y.shape()) + " do not match input " + shape_str(x.shape()) + " (expected " +
                             shape_str(expect) + ")", where);
  int64_t c = x.shape()[axis];
  Shape cs(x.ndim(), 1);
  cs[axis] = c;
  return Y.unsqueeze(axis, where) == Tensor::arange(0, static_cast<double>(c), 1, Y.dtype(), x.device(), where).reshape(cs, where);
}

void check_same_shape(const Tensor& x, const Tensor& Y, const char* op, SourceLocation where) {
  if (x.shape() != Y.shape())
    throw ShapeError(op, "input " + shape_str(x.shape()) + " and target " + shape_str(Y.shape()) + " differ", where);
}

}  // namespace

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index, double label_smoothing,
                                               Reduction reduction, Loc where) const try {
  const char* op = "sparse_categorical_crossentropy";
  if (ndim() == 0) throw ShapeError(op, "needs logits with a class dimension, got a 0-d tensor", where);
  if (!(label_smoothing >= 0 && label_smoothing <= 1)) throw ArgumentError(op, "label_smoothing must be in [0, 1]", where);
  // classes on the last axis, as tinygrad
  Tensor logp = log_softmax(-1, where), hit = classes_along(Y, *this, ndim() - 1, op, where);
  Tensor counted = Y != ignore_index;
  Tensor picked = hit.where(logp, logp.zeros_like()).sum(-1, false, where);
  // without smoothing, no mean over the classes: it would read every class again (and its 0 * -inf a NaN)
  Tensor loss = label_smoothing == 0 ? picked.neg() : (picked * (1 - label_smoothing) + logp.mean(-1, false, where) * label_smoothing).neg();
  loss = counted.where(loss, loss.zeros_like());
  if (reduction == Reduction::mean) return loss.sum().div(counted.sum().cast(loss.dtype()), where);
  return reduced(loss, reduction);
} catch (const Error& e) {
  tensor::rethrow_in(e, "sparse_categorical_crossentropy", where);
}

Tensor Tensor::cross_entropy(const Tensor& Y, Reduction reduction, double label_smoothing, Loc where) const try {
  if (ndim() == 0) throw ShapeError("cross_entropy", "needs logits with a class dimension, got a 0-d tensor", where);
  if (!(label_smoothing >= 0 && label_smoothing <= 1)) throw ArgumentError("cross_entropy", "label_smoothing must be in [0, 1]", where);
  // classes on axis 1 (axis 0 for a 1-d input), as PyTorch; Y is indices, or probabilities of this shape
  int64_t axis = ndim() == 1 ? 0 : 1, c = shape()[axis];
  bool indices = !(Y.dtype().is_float() && Y.shape() == shape());
  Tensor logp = log_softmax(axis, where);
  if (indices && label_smoothing == 0) {  // each row's target picked (a gathered read), not a product with a one-hot
    Tensor hit = classes_along(Y, *this, axis, "cross_entropy", where);
    return reduced(hit.where(logp, logp.zeros_like()).sum(axis, false, where).neg(), reduction);
  }
  Tensor probs = indices ? classes_along(Y, *this, axis, "cross_entropy", where).cast(dtype()) : Y;
  probs = probs * (1 - label_smoothing) + label_smoothing / static_cast<double>(c);
  return reduced(logp.mul(probs, where).sum(axis, false, where).neg(), reduction);
} catch (const Error& e) {
  tensor::rethrow_in(e, "cross_entropy", where);
}

Tensor Tensor::nll_loss(const Tensor& Y, const std::optional<Tensor>& weight, int64_t ignore_index, Reduction reduction,
                        Loc where) const try {
  if (ndim() == 0) throw ShapeError("nll_loss", "needs log-probabilities with a class dimension, got a 0-d tensor", where);
  int64_t axis = ndim() == 1 ? 0 : 1, c = shape()[axis];
  Tensor hit = classes_along(Y, *this, axis, "nll_loss", where) & (Y != ignore_index).unsqueeze(axis);
  Tensor w = weight ? *weight : Tensor::ones({c}, dtype(), device(), where);
  if (w.shape() != Shape{c}) throw ShapeError("nll_loss", "weight " + shape_str(w.shape()) + " must be (" + std::to_string(c) + ",)", where);
  Shape ws(ndim(), 1);
  ws[axis] = c;
  Tensor wi = hit.where(w.reshape(ws).cast(dtype()), zeros_like()).sum(axis, false, where);  // each target's weight
  Tensor loss = hit.where(*this, zeros_like()).sum(axis, false, where).neg() * wi;
  if (reduction == Reduction::mean) return loss.sum().div(wi.sum(), where);
  return reduced(loss, reduction);
} catch (const Error& e) {
  tensor::rethrow_in(e, "nll_loss", where);
}

namespace tensor {
namespace {
// log(p) no lower than -100, as PyTorch's, so 0 and 1 give finite losses
Tensor clamped_log(const Tensor& p) { return p.log().maximum(-100.0); }
}  // namespace

// PyTorch's binary_cross_entropy_backward: (p - y) / max(p (1 - p), 1e-12) for the input, finite where the clamped
// logs' chain rule gives 0 * inf (a saturated sigmoid is exactly 1); log(1 - p) - log(p), unclamped, for the target
std::vector<Tensor> bce_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>&) {
  Tensor p = source_of(u, 1), y = source_of(u, 2);
  DType dt = compute_float(p.dtype());  // 1e-12 is 0 in float16
  Tensor pc = p.cast(dt), yc = y.cast(dt), gc = g.cast(dt);
  Tensor dp = gc * (pc - yc) / (pc * (1.0 - pc)).maximum(1e-12);
  Tensor dy = gc * ((1.0 - pc).log() - pc.log());
  return {Tensor(), dp.cast(p.dtype()), dy.cast(y.dtype())};
}
}  // namespace tensor

Tensor Tensor::binary_crossentropy(const Tensor& Y, Reduction reduction, Loc where) const {
  check_same_shape(*this, Y, "binary_crossentropy", where);
  DType dt = least_upper_float(least_upper_dtype({dtype(), Y.dtype()}));
  Tensor p = cast(dt, where), y = Y.cast(dt, where);
  Tensor loss = (y * tensor::clamped_log(p) + (1.0 - y) * tensor::clamped_log(1.0 - p)).neg();
  return reduced(tensor::with_gradient_rule(loss, tensor::GradRule::bce, {p, y}), reduction);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, Reduction reduction, Loc where) const {
  check_same_shape(*this, Y, "binary_crossentropy_logits", where);
  // max(x, 0) - x*y + log(1 + exp(-|x|)): stable for large |x|
  Tensor x = cast(least_upper_float(dtype()), where);
  return reduced(x.maximum(0.0) - x * Y + (x.abs().neg().exp() + 1.0).log(), reduction);
}
Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, const Tensor& pos_weight, Reduction reduction, Loc where) const try {
  check_same_shape(*this, Y, "binary_crossentropy_logits", where);
  // -(w y log(sigmoid(x)) + (1 - y) log(sigmoid(-x))), both logs stable (logsigmoid)
  Tensor x = cast(least_upper_float(dtype()), where);
  return reduced(-(pos_weight * Y * x.logsigmoid(where) + (1.0 - Y) * (-x).logsigmoid(where)), reduction);
} catch (const Error& e) {
  tensor::rethrow_in(e, "binary_crossentropy_logits", where);
}

Tensor Tensor::mse(const Tensor& Y, Reduction reduction, Loc where) const {
  check_same_shape(*this, Y, "mse", where);
  return reduced(sub(Y, where).square(), reduction);
}

Tensor Tensor::l1(const Tensor& Y, Reduction reduction, Loc where) const {
  check_same_shape(*this, Y, "l1", where);
  return reduced(sub(Y, where).abs(), reduction);
}

}  // namespace tg
