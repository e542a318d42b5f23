// Reductions and what is built on them: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum, TopK.
#include <cmath>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// The axes of a Reduce*: the attribute, or (ReduceSum from opset 13) the optional second input. No axes reduce
// everything, unless noop_with_empty_axes.
std::optional<std::vector<int64_t>> reduce_axes(OpContext& c, bool axes_input) {
  std::vector<int64_t> axes;
  if (axes_input) {
    if (c.has(1)) axes = c.ints(1);
  } else {
    axes = c.attr_ints("axes", std::vector<int64_t>{});
  }
  if (axes.empty()) {
    if (c.attr_int("noop_with_empty_axes", 0)) return std::nullopt;
    for (int64_t d = 0; d < c.in(0).ndim(); d++) axes.push_back(d);
  }
  for (int64_t& a : axes) a = c.axis(a, c.in(0).ndim());
  return axes;
}

using ReduceFn = Tensor (*)(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);

void reduce(OpTable& t, const char* name, ReduceFn f, int64_t axes_input_from) {
  t[name] = [f, axes_input_from](OpContext& c) {
    bool keep = c.attr_int("keepdims", 1) != 0;
    auto axes = reduce_axes(c, c.opset >= axes_input_from);
    if (!axes) return one(c.in(0));
    return one(f(c.in(0), *axes, keep));
  };
}

// Softmax-like ops before opset 13 work on the input flattened to 2-d at `axis` (default 1); from 13 on, along
// one axis (default -1).
Tensor along_axis(OpContext& c, Tensor (*f)(const Tensor&, int64_t)) {
  const Tensor& x = c.in(0);
  c.need_float(x, "the input");
  if (c.opset >= 13) return f(x, c.axis(c.attr_int("axis", -1), x.ndim()));
  int64_t axis = c.axis(c.attr_int("axis", 1), x.ndim());
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; d++) rows *= x.shape()[static_cast<size_t>(d)];
  return f(x.reshape({rows, rows ? x.numel() / std::max<int64_t>(rows, 1) : 0}), 1).reshape(x.shape());
}

Tensor hardmax(const Tensor& x, int64_t axis) {
  // one-hot of the first maximum along the axis
  Tensor idx = x.argmax(axis, true);
  Shape s(static_cast<size_t>(x.ndim()), 1);
  s[static_cast<size_t>(axis)] = x.shape()[static_cast<size_t>(axis)];
  Tensor ar = Tensor::arange(0, static_cast<double>(s[static_cast<size_t>(axis)]), 1, idx.dtype(), x.device()).reshape(s);
  return ar.eq(idx).cast(x.dtype());
}

}  // namespace

void register_reduce_ops(OpTable& t) {
  reduce(t, "ReduceSum", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.sum(a, k); }, 13);
  reduce(t, "ReduceMean", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.mean(a, k); }, 18);
  reduce(t, "ReduceMax", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.max(a, k); }, 18);
  reduce(t, "ReduceMin", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.min(a, k); }, 18);
  reduce(t, "ReduceProd", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.prod(a, k); }, 18);
  reduce(t, "ReduceL1", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.abs().sum(a, k); }, 18);
  reduce(t, "ReduceL2", [](const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return x.mul(x).sum(a, k).sqrt().cast(x.dtype()); }, 18);
  reduce(t, "ReduceSumSquare", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.mul(x).sum(a, k); }, 18);
  reduce(t, "ReduceLogSum", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.sum(a, k).log(); }, 18);
  reduce(t, "ReduceLogSumExp", [](const Tensor& x, const std::vector<int64_t>& a, bool k) { return x.logsumexp(a, k); }, 18);

  for (const char* name : {"ArgMax", "ArgMin"}) {
    bool is_max = std::string(name) == "ArgMax";
    t[name] = [is_max](OpContext& c) {
      const Tensor& x = c.in(0);
      int64_t axis = c.axis(c.attr_int("axis", 0), x.ndim());
      bool keep = c.attr_int("keepdims", 1) != 0, last = c.attr_int("select_last_index", 0) != 0;
      Tensor v = is_max ? x : (x.dtype().is_bool() ? x.logical_not() : x.neg());
      if (x.dtype().is_unsigned() && !is_max) v = x.cast(dtypes::int64).neg();
      Tensor r;
      if (last) {  // the last extreme: the first of the flipped axis, counted from the end
        int64_t n = x.shape()[static_cast<size_t>(axis)];
        r = v.flip(axis).argmax(axis, keep);
        r = r.scalar_like(n - 1).sub(r);
      } else {
        r = v.argmax(axis, keep);
      }
      return one(r.cast(dtypes::int64));
    };
  }
  t["Softmax"] = [](OpContext& c) { return one(along_axis(c, [](const Tensor& x, int64_t a) { return x.softmax(a); })); };
  t["LogSoftmax"] = [](OpContext& c) { return one(along_axis(c, [](const Tensor& x, int64_t a) { return x.log_softmax(a); })); };
  t["Hardmax"] = [](OpContext& c) { return one(along_axis(c, hardmax)); };

  t["CumSum"] = [](OpContext& c) {
    Tensor x = c.in(0);
    int64_t axis = c.axis(c.int_scalar(1), x.ndim());
    bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
    if (x.ndim() == 0) return one(exclusive ? x.zeros_like() : x);
    if (reverse) x = x.flip(axis);
    Tensor r = x.cumsum(axis);
    if (exclusive) r = r.sub(x);
    if (reverse) r = r.flip(axis);
    return one(r);
  };
  t["TopK"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t k = c.opset < 10 ? c.attr_int("k") : c.int_scalar(1);
    int64_t axis = c.axis(c.attr_int("axis", -1), x.ndim());
    bool largest = c.attr_int("largest", 1) != 0, sorted = c.attr_int("sorted", 1) != 0;
    if (k < 0 || k > x.shape()[static_cast<size_t>(axis)])
      c.fail("k = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) + " of shape " + tensor::shape_str(x.shape()));
    auto [values, indices] = x.topk(k, axis, largest, sorted);
    return std::vector<Value>{values, indices.cast(dtypes::int64)};
  };
}

}  // namespace tg::onnx
