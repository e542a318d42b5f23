// Reductions: sum, prod and max are the reduce primitives; min, mean, var, any, argmax, softmax ... compose them.
#include <algorithm>
#include <optional>

#include "multi/multi.h"
#include "tensor/custom_grad.h"
#include "tensor/tensor_impl.h"
#include "tg/context.h"
#include "uop/reduce_arg.h"

namespace tg {

using uop::Ops;
using uop::UOp;

std::vector<int64_t> Axes::resolve(int64_t ndim) const {
  if (axes_) return *axes_;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < ndim; i++) all.push_back(i);
  return all;
}

namespace {

// tinygrad's accumulation dtypes: small ints sum as int32 (unsigned as uint32), 16- and 8-bit floats as float32
DType sum_acc_dtype(DType dt) {
  if (dt.is_bool()) return dtypes::int32;
  if (dt.is_int() && dt.itemsize() < 4) return dt.is_unsigned() ? dtypes::uint32 : dtypes::int32;
  if (dt.is_half() || dt.is_fp8()) return dtypes::float32;
  return dt;
}

// the REDUCE_AXIS node itself, keeping the reduced axes as 1
Tensor reduce_node(const Tensor& x, Ops op, std::vector<int64_t> axes, SourceLocation where) {
  return tensor::wrap(UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x.uop()}, uop::reduce_arg(op, std::move(axes))), x.device(), where);
}

// The value of a tensor that is one constant broadcast (zeros, ones, full, through movement ops and casts), else
// nullopt. A sum or max of it needs no kernel: ones({1 << 40}).sum() would loop 2^40 times.
std::optional<ConstValue> broadcast_constant(const UOp& u) {
  std::vector<DType> casts;  // outermost first
  const UOp* n = &u;
  for (;; n = &n->src(0)) {
    Ops op = n->op();
    if (op == Ops::CAST) casts.push_back(n->dtype());
    else if (op != Ops::RESHAPE && op != Ops::EXPAND && op != Ops::PERMUTE && op != Ops::SHRINK && op != Ops::FLIP &&
             op != Ops::DETACH)
      break;
  }
  if (n->op() != Ops::CONST) return std::nullopt;
  ConstValue v = n->arg().get<ConstValue>();
  for (auto it = casts.rbegin(); it != casts.rend(); ++it) v = cast_const(v, *it);
  return v;
}

// where(idx == arange, x, 0): a one-hot selection (indexing, gather, embedding, losses), which codegen folds into a
// read of the selected elements (fold_gathers) when the sum is one kernel
bool one_hot_selection(const UOp& x) {
  const UOp* u = &x;
  while (u->op() == Ops::CAST) u = &u->src(0);
  if (u->op() != Ops::WHERE) return false;
  for (const UOp& n : u->src(0).toposort())
    if (n.op() == Ops::IOTA) return true;
  return false;
}

// A sum or product of many elements into few outputs runs as two kernels (tinygrad's split_reduceop): the first
// reduces d chunks of one reduce axis into d partial results, the second reduces those. The chunk count d becomes
// the outer loop of the first kernel, so threads share a full sum, and a weight gradient (a (N, ...) batch reduced
// into a small weight) streams one chunk of the batch through the cache at a time instead of all of it once per
// output block. Only reduces of at least REDUCEOP_SPLIT_THRESHOLD (16384; tinygrad's 32768 is for GPUs: the CPU
// gains from cache-sized chunks earlier) elements per output are split, into 8..256 chunks, with at most
// 2^REDUCEOP_SPLIT_SIZE (2^22) partial results; SPLIT_REDUCEOP=0 turns it off.
std::optional<Tensor> split_reduce(const Tensor& x, Ops op, const std::vector<int64_t>& ax, const Shape& out,
                                   SourceLocation where) {
  int64_t in_size = tensor::prod(x.shape()), out_size = tensor::prod(out);
  // a tensor on several devices reduces each device's part and then combines the parts (an allreduce): two stages
  // already, and chunks that cut across the parts (a batch of 511 split 256/255, in chunks of 7) would gather every
  // part onto every device
  if (multi::is_multi(x.device())) return {};
  // max stays whole: the gradient of a split max would share ties per chunk first, not equally among all of them
  if (!getenv_int("SPLIT_REDUCEOP", 1) || op == Ops::MAX || out_size == 0 ||
      in_size / out_size < getenv_int("REDUCEOP_SPLIT_THRESHOLD", 16384) || one_hot_selection(x.uop()))
    return {};
  int64_t cap = int64_t{1} << std::clamp<int64_t>(getenv_int("REDUCEOP_SPLIT_SIZE", 22), 0, 40);
  int64_t most = std::min<int64_t>(256, cap / out_size);
  if (most < 8) return {};
  // axis a in d chunks, padded with the reduction's identity to d * (n + pad) / d elements first
  auto split_along = [&](int64_t a, int64_t d, int64_t pad) {
    Tensor xp = x;
    if (pad) {
      std::vector<std::pair<int64_t, int64_t>> padding(static_cast<size_t>(x.ndim()), {0, 0});
      padding[static_cast<size_t>(a)].second = pad;
      xp = x.pad(padding, op == Ops::MUL ? 1.0 : 0.0, where);
    }
    // the chunks of axis a become a new axis 0; every original axis j moves to j + 1
    Shape split = xp.shape();
    split[a] /= d;
    split.insert(split.begin() + a, d);
    std::vector<int64_t> order{a}, inner;
    for (int64_t j = 0; j < static_cast<int64_t>(split.size()); j++)
      if (j != a) order.push_back(j);
    for (int64_t j : ax) inner.push_back(j + 1);
    Tensor chunks = xp.reshape(split, where).permute(order, where);
    // the partial results flattened to (d, outputs): the second kernel loops over one contiguous axis of outputs
    Tensor partial = reduce_node(chunks, op, inner, where).contiguous(where).reshape({d, out_size}, where);
    return reduce_node(partial, op, {0}, where).reshape(out, where);
  };
  // Chunks whose length is a whole number of vectors: the first kernel's loop over a chunk then runs as vectors,
  // not as one chain of dependent adds. A length with no such divisor (GPT-2's vocabulary, 50257 = 29 x 1733) is
  // padded to one, when that adds at most 1/16 of it; otherwise any divisor will do.
  constexpr int64_t kLanes = 16;
  for (int64_t a : ax)
    for (int64_t d = most; d >= 8; d--)
      if (x.shape()[a] % (d * kLanes) == 0) return split_along(a, d, 0);
  for (int64_t a : ax) {
    int64_t n = x.shape()[a], best = 0, best_pad = n / kLanes + 1;
    for (int64_t d = most; d >= 8; d--)
      if (int64_t pad = (n + d * kLanes - 1) / (d * kLanes) * (d * kLanes) - n; pad < best_pad) best = d, best_pad = pad;
    if (best && n / best >= kLanes) return split_along(a, best, best_pad);
  }
  for (int64_t a : ax)
    for (int64_t d = most; d >= 8; d--)
      if (x.shape()[a] % d == 0) return split_along(a, d, 0);
  return {};
}

// A reduce over a symbolic shape: the node as it is (no split into chunks, no constant shortcut: both need the
// sizes as numbers).
Tensor symbolic_reduce(const Tensor& x, Ops op, const std::vector<int64_t>& ax, bool keepdim, SourceLocation where) {
  std::vector<Dim> shape = x.sym_shape(), squeezed;
  for (size_t i = 0; i < shape.size(); i++)
    if (std::find(ax.begin(), ax.end(), static_cast<int64_t>(i)) == ax.end()) squeezed.push_back(shape[i]);
  Tensor r = ax.empty() ? x : reduce_node(x, op, ax, where);
  return keepdim ? r : r.reshape(squeezed, where);
}

Tensor reduce(const Tensor& x, Ops op, const Axes& axes, bool keepdim, const char* name, SourceLocation where) {
  std::vector<int64_t> ax = tensor::normalize_axes(axes.resolve(x.ndim()), x.ndim(), name, where);
  if (x.ndim() == 0) ax.clear();
  if (x.is_symbolic()) return symbolic_reduce(x, op, ax, keepdim, where);
  Shape out = x.shape(), squeezed;
  bool empty = false;
  for (int64_t a : ax) empty = empty || out[a] == 0, out[a] = 1;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) squeezed.push_back(x.shape()[i]);
  if (empty) tensor::checked_numel(out, name, where);  // reducing an empty axis can make (2^62, 0) into 2^62 values
  Tensor r;
  if (ax.empty()) {
    r = x;
  } else if (empty) {
    // nothing to reduce over: each result is the identity. A max has none, except for bool (any: false), unless
    // there is no result to give. Still a REDUCE_AXIS node (a kernel that loops zero times), not a constant: the
    // input stays in the graph, so its gradient is zeros of its shape, as PyTorch's
    if (op == Ops::MAX && !x.dtype().is_bool() && tensor::prod(out) != 0)
      throw ArgumentError(name, "cannot reduce over an empty axis of shape " + tensor::shape_str(x.shape()) +
                                    " (the result has no identity)", where);
    r = reduce_node(x, op, ax, where);
  } else if (auto c = op == Ops::MUL ? std::nullopt : broadcast_constant(x.uop())) {
    // n * c for a sum (integers wrap as the kernel's adds would), c for a max
    int64_t n = 1;
    for (int64_t a : ax) n *= x.shape()[a];
    ConstValue v = op == Ops::MAX ? *c
                   : x.dtype().is_float() ? ConstValue(const_to_double(*c) * static_cast<double>(n))
                                          : ConstValue(static_cast<uint64_t>(const_to_int(*c)) * static_cast<uint64_t>(n));
    r = tensor::const_tensor(v, x.dtype(), out, x.device());
  } else if (auto split = split_reduce(x, op, ax, out, where)) {
    r = *split;
  } else {
    r = reduce_node(x, op, ax, where);
  }
  return keepdim ? r : r.reshape(squeezed, where);
}

// sum and prod accumulate in a wider dtype; 16-bit floats come back in their own dtype
Tensor accumulate(const Tensor& x, Ops op, const Axes& axes, bool keepdim, const char* name, SourceLocation where) {
  Tensor r = reduce(x.cast(sum_acc_dtype(x.dtype()), where), op, axes, keepdim, name, where);
  return x.dtype().is_float() ? r.cast(x.dtype(), where) : r;
}

// an order-reversing map, so min is max of the inverse: -x for floats, ~x for ints, !x for bool
Tensor inverse(const Tensor& x, SourceLocation where) {
  if (x.dtype().is_float()) return x.neg(where);
  if (x.dtype().is_int()) return x.bitwise_not(where);
  return x.logical_not(where);
}

// how many elements each output value reduces over (possibly symbolic)
Dim reduced_size(const Tensor& x, const Axes& axes, const char* name, SourceLocation where) {
  Dim n = 1;
  std::vector<Dim> s = x.sym_shape();
  for (int64_t a : tensor::normalize_axes(axes.resolve(x.ndim()), x.ndim(), name, where))
    if (x.ndim() > 0) n *= s[static_cast<size_t>(a)];
  return n;
}
int64_t reduced_count(const Tensor& x, const Axes& axes, const char* name, SourceLocation where) {
  return reduced_size(x, axes, name, where).concrete(name, where);
}

// The count of each output's reduced elements as a tensor of dtype dt: a constant, or over a symbolic size the
// sum of int32 ones over the same axes, which fuses into the kernel of the sum it divides (same loop space)
Tensor count_tensor(const Tensor& x, const Axes& axes, bool keepdim, double minus, DType dt, const char* name,
                    SourceLocation where) {
  Dim n = reduced_size(x, axes, name, where);
  if (!n.is_symbolic()) return Tensor(std::max(0.0, static_cast<double>(n.concrete(name, where)) - minus), dt, x.device(), where);
  Tensor c = x.ones_like(dtypes::int32, where).sum(axes, keepdim, where).cast(dt, where);
  return minus == 0 ? c : (c - minus).maximum(0.0, where);
}

}  // namespace

Tensor Tensor::sum(Axes axis, bool keepdim, Loc where) const { return accumulate(*this, Ops::ADD, axis, keepdim, "sum", where); }
Tensor Tensor::prod(Axes axis, bool keepdim, Loc where) const { return accumulate(*this, Ops::MUL, axis, keepdim, "prod", where); }
// accumulated as the plain forms do (int8 in int32, float16 in float32), then cast: integers wrap as PyTorch's
Tensor Tensor::sum(Axes axis, bool keepdim, DType dt, Loc where) const {
  return accumulate(cast(dt, where), Ops::ADD, axis, keepdim, "sum", where).cast(dt, where);
}
Tensor Tensor::prod(Axes axis, bool keepdim, DType dt, Loc where) const {
  return accumulate(cast(dt, where), Ops::MUL, axis, keepdim, "prod", where).cast(dt, where);
}
Tensor Tensor::max(Axes axis, bool keepdim, Loc where) const { return reduce(*this, Ops::MAX, axis, keepdim, "max", where); }
Tensor Tensor::min(Axes axis, bool keepdim, Loc where) const {
  return inverse(reduce(inverse(*this, where), Ops::MAX, axis, keepdim, "min", where), where);
}

// mean and var sum in float32 for 16-bit floats and round once at the end (a float16 sum of 10000 tens overflows)
Tensor Tensor::mean(Axes axis, bool keepdim, Loc where) const {
  Dim size = reduced_size(*this, axis, "mean", where);
  return tensor::float_math(*this, where, [&](const Tensor& x) {
    // an empty mean is 0/0: NaN, as numpy and PyTorch
    if (size.is_symbolic()) return x.sum(axis, keepdim, where).div(count_tensor(x, axis, keepdim, 0, x.dtype(), "mean", where), where);
    return x.sum(axis, keepdim, where).mul(1.0 / static_cast<double>(size.concrete("mean", where)), where);
  });
}

Tensor Tensor::var(Axes axis, bool keepdim, double correction, Loc where) const {
  return tensor::float_math(*this, where, [&](const Tensor& x) {
    Tensor count = count_tensor(x, axis, keepdim, correction, x.dtype(), "var", where);  // checks the axes first
    return (x - x.mean(axis, true, where)).square(where).sum(axis, keepdim, where).div(count, where);
  });
}
Tensor Tensor::std(Axes axis, bool keepdim, double correction, Loc where) const try {
  // a constant row's std is 0 with gradient 0, as PyTorch's (sqrt's gradient there is infinite: 0 * inf is NaN)
  Tensor v = var(axis, keepdim, correction, where), zero = v == 0.0;
  return zero.where(0.0, zero.where(1.0, v).sqrt(where));
} catch (const Error& e) {
  tensor::rethrow_in(e, "std", where);
}
std::pair<Tensor, Tensor> Tensor::var_mean(Axes axis, bool keepdim, double correction, Loc where) const try {
  return {var(axis, keepdim, correction, where), mean(axis, keepdim, where)};
} catch (const Error& e) {
  tensor::rethrow_in(e, "var_mean", where);
}
std::pair<Tensor, Tensor> Tensor::std_mean(Axes axis, bool keepdim, double correction, Loc where) const try {
  return {std(axis, keepdim, correction, where), mean(axis, keepdim, where)};
} catch (const Error& e) {
  tensor::rethrow_in(e, "std_mean", where);
}

Tensor Tensor::any(Axes axis, bool keepdim, Loc where) const {
  return reduce(cast(dtypes::bool_, where), Ops::MAX, axis, keepdim, "any", where);
}
Tensor Tensor::all(Axes axis, bool keepdim, Loc where) const {
  return reduce(logical_not(where), Ops::MAX, axis, keepdim, "all", where).logical_not(where);
}
Tensor Tensor::count_nonzero(Axes axis, bool keepdim, Loc where) const try {
  return ne(zeros_like(std::nullopt, where), where).sum(axis, keepdim, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "count_nonzero", where);
}

namespace {

// first index of the maximum: (x == max) * (n - i) has its max at the first maximum
Tensor arg_of_max(const Tensor& t, std::optional<int64_t> axis, bool keepdim, const char* name, SourceLocation where) {
  if (!axis) {
    Tensor r = arg_of_max(t.flatten(0, -1, where), 0, false, name, where);
    return keepdim ? r.reshape(Shape(t.ndim(), 1), where) : r;
  }
  int64_t ax = tensor::normalize_axes({*axis}, t.ndim(), name, where)[0];
  if (t.ndim() == 0) return Tensor(0, dtypes::int32, t.device(), where);
  int64_t n = t.shape()[ax];
  if (n == 0) throw ArgumentError(name, "cannot take the index over an empty axis of shape " + tensor::shape_str(t.shape()), where);
  Shape idx_shape(t.ndim(), 1);
  idx_shape[ax] = n;
  Tensor idx = Tensor::arange(static_cast<double>(n), 0, -1, dtypes::int32, t.device(), where).reshape(idx_shape, where);
  Tensor m = t.max(ax, true, where);
  // NaN counts as the maximum, as in PyTorch
  Tensor hit = t.dtype().is_float() ? (t == m) | t.isnan(where) : t == m;
  Tensor first = hit.where(idx, 0).max(ax, keepdim, where);
  return first.scalar_like(static_cast<int>(n), where) - first;
}

}  // namespace

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim, Loc where) const {
  return arg_of_max(*this, axis, keepdim, "argmax", where);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim, Loc where) const {
  return arg_of_max(inverse(*this, where), axis, keepdim, "argmin", where);
}

Tensor Tensor::logsumexp(Axes axis, bool keepdim, Loc where) const try {
  // over nothing: log(0) = -inf, as PyTorch (there is no max to shift by)
  if (reduced_count(*this, axis, "logsumexp", where) == 0) return exp(where).sum(axis, keepdim, where).log(where);
  Tensor m = max(axis, true, where);
  // an all -inf slice has m = -inf: shift by 0 there instead of producing nan
  Tensor shift = m.isinf().where(0.0, m);
  Tensor r = (*this - shift).exp(where).sum(axis, true, where).log(where) + shift;
  if (keepdim) return r;
  Shape out;
  std::vector<int64_t> ax = tensor::normalize_axes(axis.resolve(ndim()), ndim(), "logsumexp", where);
  for (int64_t i = 0; i < ndim(); i++)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) out.push_back(shape()[i]);
  return r.reshape(out, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "logsumexp", where);
}

Tensor Tensor::softmax(int64_t axis, Loc where) const try {
  Tensor x = cast(least_upper_float(dtype()), where);
  // nothing to normalize (no max to take)
  if (!is_symbolic() && numel() == 0) return tensor::normalize_axis(axis, ndim(), "softmax", where), x;
  Tensor e = (x - x.max(axis, true, where)).exp(where);
  Tensor y = e.div(e.sum(axis, true, where), where);
  return tensor::with_gradient_rule(y, tensor::GradRule::softmax, {x}, {tensor::normalize_axis(axis, ndim(), "softmax", where)});
} catch (const Error& e) {
  tensor::rethrow_in(e, "softmax", where);
}

namespace tensor {

std::vector<Tensor> softmax_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& params) {
  Tensor y = source_of(u, 0);
  return {Tensor(), y * (g - (g * y).sum(params[0], true))};
}

}  // namespace tensor

Tensor Tensor::log_softmax(int64_t axis, Loc where) const try {
  Tensor x = cast(least_upper_float(dtype()), where);
  if (!is_symbolic() && numel() == 0) return tensor::normalize_axis(axis, ndim(), "log_softmax", where), x;
  Tensor m = x - x.max(axis, true, where);
  return m - m.exp(where).sum(axis, true, where).log(where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "log_softmax", where);
}

Tensor Tensor::softmax(int64_t axis, DType dt, Loc where) const try {
  if (!dt.is_float()) throw DTypeError("softmax", "computes in a float dtype, not " + dt.name(), where);
  return cast(dt, where).softmax(axis, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "softmax", where);
}

Tensor Tensor::log_softmax(int64_t axis, DType dt, Loc where) const try {
  if (!dt.is_float()) throw DTypeError("log_softmax", "computes in a float dtype, not " + dt.name(), where);
  return cast(dt, where).log_softmax(axis, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "log_softmax", where);
}

Tensor Tensor::softmin(int64_t axis, Loc where) const try {
  return cast(least_upper_float(dtype()), where).neg(where).softmax(axis, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "softmin", where);
}

}  // namespace tg
