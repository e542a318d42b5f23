// The rest: quantization, control flow (If, Loop, Scan), sequences and optionals, the training optimizers of
// ai.onnx.preview.training, the signal windows and Det.
#include <cmath>
#include <numbers>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// A per-tensor (scalar) or per-axis (1-d) quantization parameter, shaped to broadcast against x.
Tensor along(OpContext& c, const Tensor& p, const Tensor& x, int64_t axis) {
  if (p.numel() == 1 && p.ndim() <= 1) return p.reshape({});
  if (p.ndim() != 1) c.fail_shape("a scale or zero point must be a scalar or 1-d");
  int64_t a = c.axis(axis, x.ndim());
  if (p.shape()[0] != x.shape()[u(a)]) c.fail_shape("a per-axis scale of " + std::to_string(p.shape()[0]) + " values does not fit axis " + std::to_string(a) + " of " + tensor::shape_str(x.shape()));
  Shape s(u(x.ndim()), 1);
  s[u(a)] = p.shape()[0];
  return p.reshape(s);
}

Tensor saturate(const Tensor& x, DType to) {
  double lo = to.is_unsigned() ? 0.0 : -std::pow(2.0, to.bits() - 1);
  double hi = to.is_unsigned() ? std::pow(2.0, to.bits()) - 1 : std::pow(2.0, to.bits() - 1) - 1;
  return x.clip(lo, hi).cast(to);
}

Tensor quantize(OpContext& c, const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zp, int64_t axis) {
  DType to = zp ? zp->dtype() : dtypes::uint8;
  if (to != dtypes::uint8 && to != dtypes::int8 && to != dtypes::int32 && to != dtypes::uint16 && to != dtypes::int16)
    c.fail_dtype("quantizing to " + to.name() + " is not supported");
  Tensor y = x.cast(dtypes::float32).div(along(c, scale, x, axis).cast(dtypes::float32)).round();
  if (zp) y = y.add(along(c, *zp, x, axis).cast(dtypes::float32));
  return saturate(y, to);
}

Tensor dequantize(OpContext& c, const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zp, int64_t axis) {
  Tensor y = x.cast(dtypes::float32);
  if (zp) y = y.sub(along(c, *zp, x, axis).cast(dtypes::float32));
  return y.mul(along(c, scale, x, axis).cast(dtypes::float32));
}

std::vector<Value> seq(std::vector<Tensor> v) { return {Value::sequence(std::move(v))}; }

int64_t seq_pos(OpContext& c, int64_t pos, size_t n, bool insert) {
  int64_t len = static_cast<int64_t>(n);
  if (pos < -len || pos > (insert ? len : len - 1)) c.fail("position " + std::to_string(pos) + " is out of range for a sequence of " + std::to_string(n));
  return pos < 0 ? pos + len : pos;
}

Tensor window_fn(OpContext& c, const std::vector<double>& coeffs) {
  int64_t n = c.int_scalar(0);
  bool periodic = c.attr_int("periodic", 1) != 0;
  int64_t out_type = c.attr_int("output_datatype", proto::FLOAT);
  auto dt = proto::to_dtype(static_cast<int32_t>(out_type));
  if (!dt) c.fail_dtype("output_datatype is not one tinygrad.cpp has");
  double denom = periodic ? double(n) : double(n - 1);
  std::vector<double> v(u(std::max<int64_t>(n, 0)));
  for (int64_t k = 0; k < n; k++) {
    double acc = 0;
    for (size_t j = 0; j < coeffs.size(); j++) acc += (j % 2 ? -1 : 1) * coeffs[j] * std::cos(2 * std::numbers::pi * double(j) * double(k) / denom);
    v[u(k)] = acc;
  }
  return host_tensor(v, *dt, {n}, c.device);
}

}  // namespace

void register_misc_ops(OpTable& t) {
  t["QuantizeLinear"] = [](OpContext& c) {
    c.ignore("saturate");
    return one(quantize(c, c.in(0), c.in(1), c.opt(2), c.attr_int("axis", 1)));
  };
  t["DequantizeLinear"] = [](OpContext& c) { return one(dequantize(c, c.in(0), c.in(1), c.opt(2), c.attr_int("axis", 1))); };
  t["DynamicQuantizeLinear"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    Tensor lo = x.min().minimum(x.scalar_like(0)), hi = x.max().maximum(x.scalar_like(0));
    Tensor scale = hi.sub(lo).div(x.scalar_like(255));
    Tensor zp = saturate(x.scalar_like(0).sub(lo.div(scale)).round(), dtypes::uint8);
    Tensor y = saturate(x.div(scale).round().add(zp.cast(dtypes::float32)), dtypes::uint8);
    return std::vector<Value>{y, scale, zp};
  };
  t["QLinearMatMul"] = [](OpContext& c) {
    Tensor a = dequantize(c, c.in(0), c.in(1), c.in(2), 1), b = dequantize(c, c.in(3), c.in(4), c.in(5), -1);
    return one(quantize(c, a.matmul(b), c.in(6), c.in(7), 1));
  };
  t["QLinearConv"] = [](OpContext& c) {
    Tensor x = dequantize(c, c.in(0), c.in(1), c.in(2), 1), w = dequantize(c, c.in(3), c.in(4), c.in(5), 0);
    std::optional<Tensor> b;
    if (auto bias = c.opt(8)) b = bias->cast(dtypes::float32).mul(c.in(1).cast(dtypes::float32).reshape({}).mul(along(c, c.in(4), w, 0).cast(dtypes::float32).flatten()));
    return one(quantize(c, conv(c, x, w, b), c.in(6), c.in(7), 1));
  };

  t["If"] = [](OpContext& c) {
    bool cond = c.int_scalar(0) != 0;
    const proto::Graph& then_g = c.attr_graph("then_branch");
    const proto::Graph& else_g = c.attr_graph("else_branch");
    return run_subgraph(c, cond ? then_g : else_g, {});
  };
  t["Loop"] = [](OpContext& c) {
    const proto::Graph& body = c.attr_graph("body");
    std::optional<int64_t> max_trip;
    if (c.has(0)) max_trip = c.int_scalar(0);
    bool cond = c.has(1) ? c.int_scalar(1) != 0 : true;
    std::vector<Value> state;
    for (size_t k = 2; k < c.num_inputs(); k++) state.push_back(c.value(k));
    size_t n_state = state.size();
    if (body.outputs.size() < 1 + n_state) c.fail("the body must return the condition and the loop-carried values");
    std::vector<std::vector<Tensor>> scans(body.outputs.size() - 1 - n_state);
    constexpr int64_t kLimit = 1'000'000;
    for (int64_t i = 0; cond && (!max_trip || i < *max_trip); i++) {
      if (i >= kLimit) c.fail("ran " + std::to_string(kLimit) + " iterations without stopping");
      std::vector<Value> ins{Value(Tensor(i, dtypes::int64, c.device)), Value(Tensor(cond, dtypes::bool_, c.device))};
      ins.insert(ins.end(), state.begin(), state.end());
      std::vector<Value> outs = run_subgraph(c, body, ins);
      cond = outs[0].tensor().cast(dtypes::bool_).item<bool>();
      for (size_t k = 0; k < n_state; k++) state[k] = outs[1 + k];
      for (size_t k = 0; k < scans.size(); k++) scans[k].push_back(outs[1 + n_state + k].tensor());
    }
    std::vector<Value> r = state;
    for (size_t k = 0; k < scans.size(); k++) {
      if (scans[k].empty()) c.fail("a scan output of a loop that ran no iteration has no known shape");
      r.emplace_back(Tensor::stack(scans[k], 0));
    }
    return r;
  };
  t["Scan"] = [](OpContext& c) {
    const proto::Graph& body = c.attr_graph("body");
    int64_t n_scan = c.attr_int("num_scan_inputs");
    size_t first = c.opset < 9 ? 1 : 0;  // opset 8 has a sequence_lens input first
    if (c.opset < 9 && c.has(0)) c.fail("sequence_lens is not supported");
    size_t n_in = c.num_inputs() - first;
    if (n_scan < 1 || u(n_scan) > n_in) c.fail("num_scan_inputs is out of range");
    size_t n_state = n_in - u(n_scan);
    std::vector<int64_t> in_axes = c.attr_ints("scan_input_axes", std::vector<int64_t>(u(n_scan), 0));
    std::vector<int64_t> in_dirs = c.attr_ints("scan_input_directions", std::vector<int64_t>(u(n_scan), 0));
    size_t n_out_scan = body.outputs.size() - n_state;
    std::vector<int64_t> out_axes = c.attr_ints("scan_output_axes", std::vector<int64_t>(n_out_scan, 0));
    std::vector<int64_t> out_dirs = c.attr_ints("scan_output_directions", std::vector<int64_t>(n_out_scan, 0));
    c.ignore("directions");
    std::vector<Value> state;
    for (size_t k = 0; k < n_state; k++) state.push_back(c.value(first + k));
    std::vector<Tensor> xs;
    int64_t steps = -1;
    int64_t batch_axis = c.opset < 9 ? 1 : 0;
    for (size_t k = 0; k < u(n_scan); k++) {
      Tensor x = c.in(first + n_state + k);
      int64_t a = c.axis(c.opset < 9 ? batch_axis : in_axes[k], x.ndim());
      if (c.opset < 9) {  // opset 8: a batch dim first; only batch 1 supported
        if (x.shape()[0] != 1) c.fail("opset 8 Scan with a batch other than 1 is not supported");
        x = x.squeeze(0);
        a = 0;
      }
      x = x.transpose(0, a);
      if (in_dirs[k]) x = x.flip(0);
      if (steps >= 0 && x.shape()[0] != steps) c.fail_shape("scan inputs disagree on the number of steps");
      steps = x.shape()[0];
      xs.push_back(x);
    }
    if (c.opset < 9)
      for (Value& v : state) v = Value(v.tensor().squeeze(0));
    std::vector<std::vector<Tensor>> outs(n_out_scan);
    for (int64_t i = 0; i < steps; i++) {
      std::vector<Value> ins = state;
      for (const Tensor& x : xs) ins.emplace_back(x.getitem({i}));
      std::vector<Value> r = run_subgraph(c, body, ins);
      for (size_t k = 0; k < n_state; k++) state[k] = r[k];
      for (size_t k = 0; k < n_out_scan; k++) outs[k].push_back(r[n_state + k].tensor());
    }
    std::vector<Value> result;
    for (Value& v : state) result.push_back(c.opset < 9 ? Value(v.tensor().unsqueeze(0)) : v);
    for (size_t k = 0; k < n_out_scan; k++) {
      if (out_dirs[k]) std::reverse(outs[k].begin(), outs[k].end());
      Tensor y = Tensor::stack(outs[k], 0);
      if (c.opset < 9) y = y.unsqueeze(0);  // opset 8: (batch 1, steps, ...)
      else {
        int64_t a = c.axis(out_axes[k], y.ndim());
        std::vector<int64_t> perm;
        for (int64_t d = 1; d < y.ndim(); d++) perm.push_back(d);
        perm.insert(perm.begin() + a, 0);
        y = y.permute(perm);
      }
      result.emplace_back(y);
    }
    return result;
  };

  t["SequenceEmpty"] = [](OpContext& c) { c.ignore("dtype"); return seq({}); };
  t["SequenceConstruct"] = [](OpContext& c) { return seq(c.variadic()); };
  t["SequenceLength"] = [](OpContext& c) {
    return one(Tensor(static_cast<int64_t>(c.value(0).sequence().size()), dtypes::int64, c.device));
  };
  t["SequenceAt"] = [](OpContext& c) {
    const auto& s = c.value(0).sequence();
    return one(s[u(seq_pos(c, c.int_scalar(1), s.size(), false))]);
  };
  t["SequenceInsert"] = [](OpContext& c) {
    std::vector<Tensor> s = c.value(0).sequence();
    int64_t pos = c.has(2) ? seq_pos(c, c.int_scalar(2), s.size(), true) : static_cast<int64_t>(s.size());
    s.insert(s.begin() + pos, c.in(1));
    return seq(std::move(s));
  };
  t["SequenceErase"] = [](OpContext& c) {
    std::vector<Tensor> s = c.value(0).sequence();
    int64_t pos = c.has(1) ? seq_pos(c, c.int_scalar(1), s.size(), false) : static_cast<int64_t>(s.size()) - 1;
    if (s.empty()) c.fail("erasing from an empty sequence");
    s.erase(s.begin() + pos);
    return seq(std::move(s));
  };
  t["ConcatFromSequence"] = [](OpContext& c) {
    const auto& s = c.value(0).sequence();
    if (s.empty()) c.fail("the sequence is empty");
    bool new_axis = c.attr_int("new_axis", 0) != 0;
    int64_t axis = c.axis(c.attr_int("axis"), s[0].ndim() + (new_axis ? 1 : 0));
    return one(new_axis ? Tensor::stack(s, axis) : Tensor::cat(s, axis));
  };
  t["SplitToSequence"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.axis(c.attr_int("axis", 0), x.ndim());
    bool keep = c.attr_int("keepdims", 1) != 0;
    int64_t dim = x.shape()[u(axis)];
    std::vector<Tensor> parts;
    if (!c.has(1)) {
      parts = x.split(int64_t{1}, axis);
      if (!keep) for (Tensor& p : parts) p = p.squeeze(axis);
    } else if (c.in(1).ndim() == 0) {
      int64_t each = c.int_scalar(1);
      if (each < 1) c.fail("split must be positive");
      parts = x.split(each, axis);
    } else {
      std::vector<int64_t> sizes = c.ints(1);
      int64_t sum = 0;
      for (int64_t s : sizes) sum += s;
      if (sum != dim) c.fail_shape("split sizes do not add up to the axis");
      parts = x.split(sizes, axis);
    }
    return seq(std::move(parts));
  };
  t["SequenceMap"] = [](OpContext& c) {
    const proto::Graph& body = c.attr_graph("body");
    size_t n = c.value(0).sequence().size();
    std::vector<std::vector<Tensor>> outs(body.outputs.size());
    for (size_t i = 0; i < n; i++) {
      std::vector<Value> ins;
      for (size_t k = 0; k < c.num_inputs(); k++) {
        const Value& v = c.value(k);
        if (v.is_sequence()) {
          if (v.sequence().size() != n) c.fail("input sequences differ in length");
          ins.emplace_back(v.sequence()[i]);
        } else {
          ins.push_back(v);
        }
      }
      std::vector<Value> r = run_subgraph(c, body, ins);
      for (size_t k = 0; k < r.size(); k++) outs[k].push_back(r[k].tensor());
    }
    std::vector<Value> result;
    for (auto& o : outs) result.push_back(Value::sequence(std::move(o)));
    return result;
  };
  t["Optional"] = [](OpContext& c) {
    c.ignore("type");
    return std::vector<Value>{c.has(0) ? c.value(0) : Value()};
  };
  t["OptionalHasElement"] = [](OpContext& c) { return one(Tensor(c.has(0), dtypes::bool_, c.device)); };
  t["OptionalGetElement"] = [](OpContext& c) {
    if (!c.has(0)) c.fail("the optional is empty");
    return std::vector<Value>{c.value(0)};
  };

  // Random values: from our generator (Tensor::manual_seed), not numpy's, so a seed gives other values than ONNX
  // Runtime's; the distribution is the same.
  t["Bernoulli"] = [](OpContext& c) {
    const Tensor& p = c.in(0);
    c.ignore("seed");
    DType dt = p.dtype();
    if (c.has_attr("dtype")) {
      auto d = proto::to_dtype(static_cast<int32_t>(c.attr_int("dtype")));
      if (!d) c.fail_dtype("dtype is not one tinygrad.cpp has");
      dt = *d;
    }
    return one(Tensor::rand(p.shape(), dtypes::float32, c.device).lt(p.cast(dtypes::float32)).cast(dt));
  };
  auto random = [](OpContext& c, const Shape& shape, DType dt, bool normal) {
    c.ignore("seed");
    if (c.has_attr("dtype")) {
      auto d = proto::to_dtype(static_cast<int32_t>(c.attr_int("dtype")));
      if (!d || !d->is_float()) c.fail_dtype("dtype must be a float type");
      dt = *d;
    }
    if (normal) return one(Tensor::normal(shape, c.attr_float("mean", 0.0), c.attr_float("scale", 1.0), dtypes::float32, c.device).cast(dt));
    return one(Tensor::uniform(shape, c.attr_float("low", 0.0), c.attr_float("high", 1.0), dtypes::float32, c.device).cast(dt));
  };
  t["RandomUniformLike"] = [random](OpContext& c) { return random(c, c.in(0).shape(), c.in(0).dtype(), false); };
  t["RandomNormalLike"] = [random](OpContext& c) { return random(c, c.in(0).shape(), c.in(0).dtype(), true); };
  t["RandomUniform"] = [random](OpContext& c) { std::vector<int64_t> s = c.attr_ints("shape"); return random(c, Shape(s.begin(), s.end()), dtypes::float32, false); };
  t["RandomNormal"] = [random](OpContext& c) { std::vector<int64_t> s = c.attr_ints("shape"); return random(c, Shape(s.begin(), s.end()), dtypes::float32, true); };

  t["HannWindow"] = [](OpContext& c) { return one(window_fn(c, {0.5, 0.5})); };
  t["HammingWindow"] = [](OpContext& c) { return one(window_fn(c, {25.0 / 46, 21.0 / 46})); };
  t["BlackmanWindow"] = [](OpContext& c) { return one(window_fn(c, {0.42, 0.5, 0.08})); };

  // ai.onnx.preview.training: one update of each (parameter, gradient, state...) group, as the operators define
  t["ai.onnx.preview.training:Adagrad"] = [](OpContext& c) {
    double lr = c.float_scalar(0), decay = c.attr_float("decay_factor", 0.0), eps = c.attr_float("epsilon", 0.0), norm = c.attr_float("norm_coefficient", 0.0);
    int64_t step = c.int_scalar(1);
    size_t n = (c.num_inputs() - 2) / 3;
    std::vector<Value> xs, hs;
    for (size_t k = 0; k < n; k++) {
      Tensor x = c.in(2 + k), g = c.in(2 + n + k), h = c.in(2 + 2 * n + k);
      double r = lr / (1 + double(step) * decay);
      Tensor gr = g.add(x.mul(norm));
      Tensor hn = h.add(gr.square());
      xs.emplace_back(x.sub(gr.mul(r).div(hn.sqrt().add(eps))));
      hs.emplace_back(hn);
    }
    xs.insert(xs.end(), hs.begin(), hs.end());
    return xs;
  };
  t["ai.onnx.preview.training:Momentum"] = [](OpContext& c) {
    double lr = c.float_scalar(0), alpha = c.attr_float("alpha"), beta = c.attr_float("beta"), norm = c.attr_float("norm_coefficient");
    std::string mode = c.attr_string("mode");
    if (mode != "standard" && mode != "nesterov") c.fail("mode must be standard or nesterov");
    int64_t step = c.int_scalar(1);
    size_t n = (c.num_inputs() - 2) / 3;
    std::vector<Value> xs, vs;
    for (size_t k = 0; k < n; k++) {
      Tensor x = c.in(2 + k), g = c.in(2 + n + k), v = c.in(2 + 2 * n + k);
      Tensor gr = g.add(x.mul(norm));
      double b = step > 0 ? beta : 1.0;
      Tensor vn = v.mul(alpha).add(gr.mul(b));
      xs.emplace_back(mode == "standard" ? x.sub(vn.mul(lr)) : x.sub(gr.add(vn.mul(alpha)).mul(lr)));
      vs.emplace_back(vn);
    }
    xs.insert(xs.end(), vs.begin(), vs.end());
    return xs;
  };
  t["ai.onnx.preview.training:Adam"] = [](OpContext& c) {
    double lr = c.float_scalar(0), alpha = c.attr_float("alpha", 0.9), beta = c.attr_float("beta", 0.999);
    double eps = c.attr_float("epsilon", 1e-6), norm = c.attr_float("norm_coefficient", 0.0), norm_post = c.attr_float("norm_coefficient_post", 0.0);
    int64_t step = c.int_scalar(1);
    size_t n = (c.num_inputs() - 2) / 4;
    std::vector<Value> xs, vs, hs;
    for (size_t k = 0; k < n; k++) {
      Tensor x = c.in(2 + k), g = c.in(2 + n + k), v = c.in(2 + 2 * n + k), h = c.in(2 + 3 * n + k);
      Tensor gr = g.add(x.mul(norm));
      Tensor vn = v.mul(alpha).add(gr.mul(1 - alpha));
      Tensor hn = h.mul(beta).add(gr.square().mul(1 - beta));
      double r = step > 0 ? lr * std::sqrt(1 - std::pow(beta, double(step))) / (1 - std::pow(alpha, double(step))) : lr;
      Tensor xn = x.sub(vn.mul(r).div(hn.sqrt().add(eps)));
      xs.emplace_back(xn.sub(xn.mul(norm_post)));
      vs.emplace_back(vn);
      hs.emplace_back(hn);
    }
    xs.insert(xs.end(), vs.begin(), vs.end());
    xs.insert(xs.end(), hs.begin(), hs.end());
    return xs;
  };
  t["ai.onnx.preview.training:Gradient"] = [](OpContext& c) {
    // d y / d x for each x of xs, through the lazy graph that computed y (the graph's own autograd); a y of more than
    // one element is differentiated as its sum
    std::vector<std::string> xs = c.attr_strings("xs");
    std::string y_name = c.attr_string("y");
    if (!c.attr_strings("zs", std::vector<std::string>{}).empty()) c.fail("zs (inputs held constant) is not supported");
    auto tensor_named = [&](const std::string& n) {
      const Value* v = lookup(c, n);
      if (!v || !v->is_tensor()) c.fail("names '" + n + "', which is not a tensor defined before this node");
      return v->tensor();
    };
    Tensor y = tensor_named(y_name);
    c.need_float(y, "y");
    std::vector<Tensor> targets;
    for (const std::string& n : xs) targets.push_back(tensor_named(n));
    std::vector<Tensor> grads = y.gradient(targets, y.ones_like());
    return std::vector<Value>(grads.begin(), grads.end());
  };
  t["Det"] = [](OpContext& c) {
    // Gaussian elimination with partial pivoting, lazily over the batch: the product of the pivots, negated per swap
    Tensor a = c.in(0);
    c.need_float(a, "X");
    int64_t r = a.ndim();
    if (r < 2 || a.shape()[u(r - 1)] != a.shape()[u(r - 2)]) c.fail_shape("X must be (..., n, n), it is " + tensor::shape_str(a.shape()));
    int64_t n = a.shape().back();
    Shape batch(a.shape().begin(), a.shape().end() - 2);
    Tensor rows = Tensor::arange(0, double(n), 1, dtypes::int64, a.device());  // (n,)
    Tensor det = Tensor::ones(batch, a.dtype(), a.device());
    auto col = [&](const Tensor& m, int64_t k) { return m[{ellipsis, k}]; };  // (..., n)
    for (int64_t k = 0; k < n; k++) {
      Tensor below = rows.ge(rows.full_like(double(k)));
      Tensor p = below.where(col(a, k).abs(), col(a, k).full_like(-1.0)).argmax(-1).cast(dtypes::int64);  // (...)
      Tensor pk = p.unsqueeze(-1);
      // swap rows k and p: row i reads row perm[i]
      Tensor perm = rows.eq(rows.full_like(double(k))).where(pk, rows.eq(pk).where(pk.full_like(double(k)), rows));  // (..., n)
      Shape idx_shape = batch;
      idx_shape.push_back(n);
      idx_shape.push_back(n);
      a = a.gather(r - 2, perm.unsqueeze(-1).expand(idx_shape));
      det = p.ne(p.full_like(double(k))).where(det.neg(), det);
      Tensor pivot = a[{ellipsis, k, k}];  // (...)
      det = det.mul(pivot);
      Tensor safe = pivot.eq(pivot.zeros_like()).where(pivot.ones_like(), pivot).unsqueeze(-1);
      Tensor factor = rows.gt(rows.full_like(double(k))).where(col(a, k).div(safe), col(a, k).zeros_like());  // (..., n)
      Tensor pivot_row = a[{ellipsis, Slice(k, k + 1), Slice()}];  // (..., 1, n)
      a = a.sub(factor.unsqueeze(-1).mul(pivot_row));
    }
    return std::vector<Value>{det};
  };
}

}  // namespace tg::onnx
