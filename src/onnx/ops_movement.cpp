// Shape and movement ops: Reshape, Transpose, Slice, Gather*, Scatter*, Pad, Concat/Split, Expand/Tile, the
// constant makers (Constant, ConstantOfShape, Range, EyeLike) and the rearrangements (DepthToSpace, Trilu, ...).
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// Indices may be negative (counting from the end of a dim of size n).
Tensor wrap_indices(const Tensor& idx, int64_t n) {
  Tensor i = idx.cast(dtypes::int64);
  return i.lt(i.scalar_like(0)).where(i.add(i.scalar_like(n)), i);
}

// An index must lie in [-n, n): checked on the host, so a bad index is an error and never an out-of-bounds read.
void check_indices(OpContext& c, const Tensor& idx, int64_t n, const char* what) {
  if (idx.numel() == 0) return;
  Tensor i = idx.cast(dtypes::int64);
  int64_t lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
  if (lo < -n || hi >= n)
    c.fail(std::string(what) + " hold values in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], outside [" +
           std::to_string(-n) + ", " + std::to_string(n) + ")");
}

Tensor gather(OpContext& c, const Tensor& x, const Tensor& idx, int64_t axis) {
  int64_t n = x.shape()[u(axis)];
  check_indices(c, idx, n, "the indices");
  std::vector<Index> ix = full_slices(axis);
  Tensor w = wrap_indices(idx, n);
  if (w.ndim() == 0) {  // a scalar index drops the axis
    ix.push_back(Index(w.reshape({1})));
    return x.getitem(ix).squeeze(axis);
  }
  ix.push_back(Index(w));
  return x.getitem(ix);
}

Shape reshape_target(OpContext& c, const Tensor& x, std::vector<int64_t> s, bool allowzero) {
  int64_t infer = -1, known = 1;
  for (size_t k = 0; k < s.size(); k++) {
    if (s[k] == 0 && !allowzero) {
      if (k >= x.shape().size()) c.fail_shape("shape entry " + std::to_string(k) + " is 0 (copy) but the input has rank " + std::to_string(x.ndim()));
      s[k] = x.shape()[k];
    }
    if (s[k] == -1) {
      if (infer >= 0) c.fail_shape("more than one -1 in the shape");
      infer = static_cast<int64_t>(k);
    } else if (s[k] < 0) {
      c.fail_shape("shape entry " + std::to_string(s[k]) + " is negative");
    } else {
      known *= s[k];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known) c.fail_shape("cannot infer the -1 of " + tensor::shape_str(Shape(s.begin(), s.end())) + " for " + std::to_string(x.numel()) + " elements");
    s[u(infer)] = x.numel() / known;
  }
  return Shape(s.begin(), s.end());
}

// Slice bounds clamped as ONNX (and Python) do, for a dim of size d.
Slice clamp_slice(int64_t start, int64_t end, int64_t step, int64_t d) {
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < -d ? lo : v + d;
    return std::clamp(v, lo, hi);
  };
  if (step > 0) return Slice(norm(start, 0, d), norm(end, 0, d), step);
  int64_t s = norm(start, -1, d - 1), e = end < -d ? -1 : norm(end, -1, d - 1);
  return Slice(s, e < 0 ? std::nullopt : std::optional<int64_t>(e), step);
}

Tensor constant_from_attrs(OpContext& c) {
  const std::string& dev = c.device;
  if (c.has_attr("value")) return model_tensor(c.attr_tensor("value"), dev, "", "Constant");
  if (c.has_attr("value_float")) return host_tensor(std::vector<double>{c.attr_float("value_float")}, dtypes::float32, {}, dev);
  if (c.has_attr("value_floats")) {
    std::vector<double> v = c.attr_floats("value_floats");
    return host_tensor(v, dtypes::float32, {static_cast<int64_t>(v.size())}, dev);
  }
  if (c.has_attr("value_int")) return host_tensor(std::vector<int64_t>{c.attr_int("value_int")}, dtypes::int64, {}, dev);
  if (c.has_attr("value_ints")) {
    std::vector<int64_t> v = c.attr_ints("value_ints");
    return host_tensor(v, dtypes::int64, {static_cast<int64_t>(v.size())}, dev);
  }
  if (c.has_attr("sparse_value")) c.fail("sparse_value is not supported");
  c.fail("has none of value, value_float(s), value_int(s)");
}

}  // namespace

void register_movement_ops(OpTable& t) {
  t["Constant"] = [](OpContext& c) { return one(constant_from_attrs(c)); };
  t["Shape"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t r = x.ndim();
    int64_t start = c.attr_int("start", 0), end = c.attr_int("end", r);
    start = std::clamp(start < 0 ? start + r : start, int64_t{0}, r);
    end = std::clamp(end < 0 ? end + r : end, int64_t{0}, r);
    std::vector<int64_t> s(x.shape().begin() + start, x.shape().begin() + std::max(start, end));
    return one(host_tensor(s, dtypes::int64, {static_cast<int64_t>(s.size())}, c.device));
  };
  t["Size"] = [](OpContext& c) { return one(host_tensor(std::vector<int64_t>{c.in(0).numel()}, dtypes::int64, {}, c.device)); };
  t["Reshape"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> s = c.opset < 5 ? c.attr_ints("shape") : c.ints(1);
    return one(x.reshape(reshape_target(c, x, s, c.attr_int("allowzero", 0) != 0)));
  };
  t["Flatten"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.attr_int("axis", 1);
    if (axis < -x.ndim() || axis > x.ndim()) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(x.ndim()));
    if (axis < 0) axis += x.ndim();
    int64_t rows = 1;
    for (int64_t d = 0; d < axis; d++) rows *= x.shape()[u(d)];
    int64_t cols = 1;
    for (int64_t d = axis; d < x.ndim(); d++) cols *= x.shape()[u(d)];
    return one(x.reshape({rows, cols}));
  };
  t["Transpose"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> perm(u(x.ndim()));
    std::iota(perm.rbegin(), perm.rend(), 0);
    perm = c.attr_ints("perm", perm);
    return one(x.permute(perm));
  };
  t["Squeeze"] = [](OpContext& c) {
    Tensor x = c.in(0);
    std::vector<int64_t> axes = c.opset < 13 ? c.attr_ints("axes", std::vector<int64_t>{}) : (c.has(1) ? c.ints(1) : std::vector<int64_t>{});
    if (axes.empty()) return one(x.squeeze());
    for (int64_t& a : axes) {
      a = c.axis(a, x.ndim());
      if (x.shape()[u(a)] != 1) c.fail_shape("axis " + std::to_string(a) + " of shape " + tensor::shape_str(x.shape()) + " is not 1");
    }
    Shape s;
    for (int64_t d = 0; d < x.ndim(); d++)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) s.push_back(x.shape()[u(d)]);
    return one(x.reshape(s));
  };
  t["Unsqueeze"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes = c.opset < 13 ? c.attr_ints("axes") : c.ints(1);
    int64_t r = x.ndim() + static_cast<int64_t>(axes.size());
    std::vector<bool> is_new(u(r), false);
    for (int64_t a : axes) {
      int64_t k = c.axis(a, r);
      if (is_new[u(k)]) c.fail("axis " + std::to_string(a) + " is repeated");
      is_new[u(k)] = true;
    }
    Shape s;
    size_t from = 0;
    for (int64_t d = 0; d < r; d++) s.push_back(is_new[u(d)] ? 1 : x.shape()[from++]);
    return one(x.reshape(s));
  };
  t["Concat"] = [](OpContext& c) {
    std::vector<Tensor> xs = c.variadic();
    if (xs.empty()) c.fail("needs at least one input");
    int64_t axis = c.axis(c.opset < 4 ? c.attr_int("axis", 1) : c.attr_int("axis"), xs[0].ndim());
    for (const Tensor& x : xs)
      if (x.dtype() != xs[0].dtype()) c.fail_dtype("inputs must have one type: " + xs[0].dtype().name() + " and " + x.dtype().name());
    return one(Tensor::cat(xs, axis));
  };
  t["Split"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.axis(c.attr_int("axis", 0), x.ndim());
    int64_t dim = x.shape()[u(axis)];
    std::vector<int64_t> sizes;
    if (c.opset >= 13 && c.has(1)) sizes = c.ints(1);
    else if (c.opset < 13 && c.has_attr("split")) sizes = c.attr_ints("split");
    else if (c.opset < 2 && c.has(1)) sizes = c.ints(1);
    size_t outs = c.node.outputs.size();
    if (c.has_attr("num_outputs")) outs = u(c.attr_int("num_outputs"));
    if (sizes.empty()) {
      int64_t each = (dim + static_cast<int64_t>(outs) - 1) / static_cast<int64_t>(std::max<size_t>(outs, 1));
      for (size_t k = 0; k < outs; k++) sizes.push_back(std::max<int64_t>(0, std::min(each, dim - each * static_cast<int64_t>(k))));
    }
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dim)
      c.fail_shape("split sizes do not add up to " + std::to_string(dim) + ", the size of axis " + std::to_string(axis));
    std::vector<Value> r;
    for (const Tensor& p : x.split(sizes, axis)) r.emplace_back(p);
    return r;
  };
  t["Slice"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.opset < 10) {
      starts = c.attr_ints("starts");
      ends = c.attr_ints("ends");
      axes = c.attr_ints("axes", std::vector<int64_t>{});
    } else {
      starts = c.ints(1);
      ends = c.ints(2);
      if (c.has(3)) axes = c.ints(3);
      if (c.has(4)) steps = c.ints(4);
    }
    if (axes.empty()) { axes.resize(starts.size()); std::iota(axes.begin(), axes.end(), 0); }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      c.fail_shape("starts, ends, axes and steps must have one length");
    std::vector<Index> ix = full_slices(x.ndim());
    std::vector<bool> seen(u(x.ndim()), false);
    for (size_t k = 0; k < starts.size(); k++) {
      int64_t a = c.axis(axes[k], x.ndim());
      if (seen[u(a)]) c.fail("axis " + std::to_string(a) + " is repeated");
      seen[u(a)] = true;
      if (steps[k] == 0) c.fail("a step is 0");
      ix[u(a)] = clamp_slice(starts[k], ends[k], steps[k], x.shape()[u(a)]);
    }
    return one(x.ndim() ? x.getitem(ix) : x);
  };
  t["Gather"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    return one(gather(c, x, c.in(1), c.axis(c.attr_int("axis", 0), x.ndim())));
  };
  t["GatherElements"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.axis(c.attr_int("axis", 0), x.ndim());
    const Tensor& idx = c.in(1);
    if (idx.ndim() != x.ndim()) c.fail_shape("indices must have the data's rank");
    check_indices(c, idx, x.shape()[u(axis)], "the indices");
    return one(x.gather(axis, wrap_indices(idx, x.shape()[u(axis)])));
  };
  for (const char* name : {"ScatterElements", "Scatter"}) {
    t[name] = [](OpContext& c) {
      const Tensor& x = c.in(0);
      int64_t axis = c.axis(c.attr_int("axis", 0), x.ndim());
      std::string red = c.attr_string("reduction", "none");
      const Tensor& idx = c.in(1);
      check_indices(c, idx, x.shape()[u(axis)], "the indices");
      Tensor w = wrap_indices(idx, x.shape()[u(axis)]);
      if (red == "none") return one(x.scatter(axis, w, c.in(2)));
      if (red == "add" || red == "mul") return one(x.scatter(axis, w, c.in(2), red == "add" ? "add" : "multiply"));
      if (red == "max" || red == "min") return one(x.scatter_reduce(axis, w, c.in(2), red == "max" ? "amax" : "amin"));
      c.fail("reduction must be none, add, mul, max or min, it is '" + red + "'");
    };
  }
  t["GatherND"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    int64_t b = c.attr_int("batch_dims", 0);
    if (idx.ndim() < 1 || b < 0 || b >= std::min(x.ndim(), idx.ndim())) c.fail("batch_dims " + std::to_string(b) + " does not fit the ranks");
    int64_t k = idx.shape().back();
    if (k < 1 || b + k > x.ndim()) c.fail_shape("index tuples of length " + std::to_string(k) + " do not fit data of shape " + tensor::shape_str(x.shape()));
    int64_t nb = 1, m = 1;
    for (int64_t d = 0; d < b; d++) nb *= x.shape()[u(d)];
    Shape rest(x.shape().begin() + b + k, x.shape().end());
    for (int64_t d = b; d < b + k; d++) m *= x.shape()[u(d)];
    Tensor flat_idx = idx.cast(dtypes::int64).reshape({nb, -1, k});
    // the linear index within the k indexed dims, each index checked and wrapped
    Tensor lin = flat_idx.zeros_like().sum({2});
    for (int64_t j = 0; j < k; j++) {
      int64_t n = x.shape()[u(b + j)];
      Tensor ij = flat_idx.getitem({Slice(), Slice(), j});
      check_indices(c, ij, n, "the indices");
      lin = lin.mul(lin.scalar_like(n)).add(wrap_indices(ij, n));
    }
    Shape xs{nb, m};
    xs.insert(xs.end(), rest.begin(), rest.end());
    Tensor data = x.reshape(xs);
    Tensor batch = Tensor::arange(0, static_cast<double>(nb), 1, dtypes::int64, x.device()).reshape({nb, 1});
    Tensor r = data.getitem({Index(batch), Index(lin)});
    Shape out(idx.shape().begin(), idx.shape().end() - 1);
    out.insert(out.end(), rest.begin(), rest.end());
    return one(r.reshape(out));
  };
  t["ScatterND"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    const Tensor& upd = c.in(2);
    std::string red = c.attr_string("reduction", "none");
    int64_t k = idx.ndim() ? idx.shape().back() : 0;
    if (k < 1 || k > x.ndim()) c.fail_shape("index tuples of length " + std::to_string(k) + " do not fit data of shape " + tensor::shape_str(x.shape()));
    int64_t m = 1;
    for (int64_t d = 0; d < k; d++) m *= x.shape()[u(d)];
    Shape rest(x.shape().begin() + k, x.shape().end());
    int64_t inner = tensor::prod(rest);
    Tensor flat_idx = idx.cast(dtypes::int64).reshape({-1, k});
    int64_t n = flat_idx.shape()[0];
    Tensor lin = Tensor::zeros({n}, dtypes::int64, x.device());
    for (int64_t j = 0; j < k; j++) {
      int64_t dn = x.shape()[u(j)];
      Tensor ij = flat_idx.getitem({Slice(), j});
      check_indices(c, ij, dn, "the indices");
      lin = lin.mul(lin.scalar_like(dn)).add(wrap_indices(ij, dn));
    }
    if (upd.numel() != n * inner) c.fail_shape("updates of shape " + tensor::shape_str(upd.shape()) + " do not fit the indices and data");
    Tensor data = x.reshape({m, inner}), u2 = upd.reshape({n, inner});
    Tensor where = lin.reshape({n, 1}).expand({n, inner});
    Tensor r;
    if (red == "none") r = data.scatter(0, where, u2);
    else if (red == "add" || red == "mul") r = data.scatter(0, where, u2, red == "add" ? "add" : "multiply");
    else if (red == "max" || red == "min") r = data.scatter_reduce(0, where, u2, red == "max" ? "amax" : "amin");
    else c.fail("reduction must be none, add, mul, max or min, it is '" + red + "'");
    return one(r.reshape(x.shape()));
  };
  t["Pad"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::string mode = c.attr_string("mode", "constant");
    std::vector<int64_t> pads;
    double value = 0;
    if (c.opset < 11) {
      pads = c.attr_ints(c.opset < 2 && c.has_attr("paddings") ? "paddings" : "pads");
      value = c.attr_float("value", 0.0);
    } else {
      pads = c.ints(1);
      if (c.has(2)) value = c.float_scalar(2);
    }
    std::vector<int64_t> axes(u(x.ndim()));
    std::iota(axes.begin(), axes.end(), 0);
    if (c.has(3)) { axes = c.ints(3); for (int64_t& a : axes) a = c.axis(a, x.ndim()); }
    if (pads.size() != 2 * axes.size()) c.fail_shape("pads has " + std::to_string(pads.size()) + " values, it needs " + std::to_string(2 * axes.size()));
    std::vector<std::pair<int64_t, int64_t>> p(u(x.ndim()), {0, 0});
    for (size_t k = 0; k < axes.size(); k++) p[u(axes[k])] = {pads[k], pads[k + axes.size()]};
    PadMode m;
    if (mode == "constant") m = PadMode::constant;
    else if (mode == "reflect") m = PadMode::reflect;
    else if (mode == "edge") m = PadMode::replicate;
    else if (mode == "wrap") m = PadMode::circular;
    else c.fail("mode must be constant, reflect, edge or wrap, it is '" + mode + "'");
    return one(x.pad(p, m, value));
  };
  t["Expand"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> s = c.ints(1);
    // bidirectional: the result is the broadcast of both shapes
    size_t r = std::max(s.size(), u(x.ndim()));
    Shape out(r);
    for (size_t k = 0; k < r; k++) {
      int64_t a = k + u(x.ndim()) >= r ? x.shape()[k + u(x.ndim()) - r] : 1;
      int64_t b = k + s.size() >= r ? s[k + s.size() - r] : 1;
      if (a != b && a != 1 && b != 1) c.fail_shape("cannot expand " + tensor::shape_str(x.shape()) + " to " + tensor::shape_str(Shape(s.begin(), s.end())));
      out[k] = a == 1 ? b : a;
    }
    return one(x.expand(out));
  };
  t["Tile"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> reps = c.ints(1);
    if (static_cast<int64_t>(reps.size()) != x.ndim()) c.fail_shape("repeats has " + std::to_string(reps.size()) + " values for rank " + std::to_string(x.ndim()));
    for (int64_t r : reps) if (r < 0) c.fail("a repeat count is negative");
    return one(x.repeat(Shape(reps.begin(), reps.end())));
  };
  t["ConstantOfShape"] = [](OpContext& c) {
    std::vector<int64_t> s = c.ints(0);
    for (int64_t d : s) if (d < 0) c.fail_shape("a dimension is negative");
    Tensor v = c.has_attr("value") ? model_tensor(c.attr_tensor("value"), c.device, "", "ConstantOfShape")
                                   : host_tensor(std::vector<double>{0}, dtypes::float32, {1}, c.device);
    if (v.numel() != 1) c.fail("value must hold one element");
    return one(v.reshape({}).expand(Shape(s.begin(), s.end())).contiguous());
  };
  t["Range"] = [](OpContext& c) {
    DType dt = c.in(0).dtype();
    if (dt.is_float()) {
      double start = c.float_scalar(0), limit = c.float_scalar(1), delta = c.float_scalar(2);
      if (delta == 0) c.fail("delta is 0");
      int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
      return one(Tensor::arange(0, static_cast<double>(n), 1, dtypes::float64, c.device).mul(delta).add(start).cast(dt));
    }
    int64_t start = c.int_scalar(0), limit = c.int_scalar(1), delta = c.int_scalar(2);
    if (delta == 0) c.fail("delta is 0");
    int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
    return one(Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64, c.device).mul(delta).add(start).cast(dt));
  };
  t["EyeLike"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 2) c.fail_shape("the input must be 2-d, it has shape " + tensor::shape_str(x.shape()));
    DType dt = x.dtype();
    if (c.has_attr("dtype")) {
      auto d = proto::to_dtype(static_cast<int32_t>(c.attr_int("dtype")));
      if (!d) c.fail_dtype("dtype is not one tinygrad.cpp has");
      dt = *d;
    }
    int64_t k = c.attr_int("k", 0), rows = x.shape()[0], cols = x.shape()[1];
    Tensor i = Tensor::arange(0, static_cast<double>(rows), 1, dtypes::int64, c.device).reshape({rows, 1});
    Tensor j = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int64, c.device).reshape({1, cols});
    return one(j.sub(i).eq(i.scalar_like(k)).cast(dt));
  };
  t["Trilu"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail_shape("the input must have rank 2 or more");
    int64_t k = c.has(1) ? c.int_scalar(1) : 0;
    return one(c.attr_int("upper", 1) ? x.triu(k) : x.tril(k));
  };
  t["DepthToSpace"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 4) c.fail_shape("the input must be 4-d (N, C, H, W)");
    int64_t b = c.attr_int("blocksize");
    std::string mode = c.attr_string("mode", "DCR");
    int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    if (b <= 0 || ch % (b * b)) c.fail("blocksize " + std::to_string(b) + " does not divide the channels " + std::to_string(ch));
    Tensor r = mode == "DCR" ? x.reshape({n, b, b, ch / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2})
             : mode == "CRD" ? x.reshape({n, ch / (b * b), b, b, h, w}).permute({0, 1, 4, 2, 5, 3})
                             : (c.fail("mode must be DCR or CRD"), x);
    return one(r.reshape({n, ch / (b * b), h * b, w * b}));
  };
  t["SpaceToDepth"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 4) c.fail_shape("the input must be 4-d (N, C, H, W)");
    int64_t b = c.attr_int("blocksize");
    int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    if (b <= 0 || h % b || w % b) c.fail("blocksize " + std::to_string(b) + " does not divide the height and width");
    return one(x.reshape({n, ch, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, ch * b * b, h / b, w / b}));
  };
  t["OneHot"] = [](OpContext& c) {
    const Tensor& idx = c.in(0);
    int64_t depth = static_cast<int64_t>(c.float_scalar(1));
    Tensor values = c.in(2);
    if (values.numel() != 2) c.fail_shape("values must hold (off, on)");
    int64_t r = idx.ndim() + 1;
    int64_t axis = c.axis(c.attr_int("axis", -1), r);
    Tensor i = idx.cast(dtypes::int64);
    i = i.lt(i.scalar_like(0)).where(i.add(i.scalar_like(depth)), i).unsqueeze(axis);
    Shape s(u(r), 1);
    s[u(axis)] = depth;
    Tensor hot = Tensor::arange(0, static_cast<double>(depth), 1, dtypes::int64, c.device).reshape(s).eq(i);
    values = values.reshape({2});
    return one(hot.where(values.getitem({1}), values.getitem({0})));
  };
  t["NonZero"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() == 0) return one(x.reshape({1}).nonzero().T().cast(dtypes::int64).shrink({{0, 0}, {0, x.item<double>() != 0}}));
    return one(x.nonzero().T().cast(dtypes::int64));
  };
  t["Compress"] = [](OpContext& c) {
    Tensor x = c.in(0);
    std::vector<int64_t> cond = c.ints(1);
    std::optional<int64_t> axis;
    if (c.has_attr("axis")) axis = c.attr_int("axis");
    if (!axis) { x = x.flatten(); axis = 0; }
    int64_t a = c.axis(*axis, x.ndim());
    std::vector<int64_t> keep;
    for (size_t k = 0; k < cond.size() && static_cast<int64_t>(k) < x.shape()[u(a)]; k++) if (cond[k]) keep.push_back(static_cast<int64_t>(k));
    std::vector<Index> ix = full_slices(a);
    ix.push_back(Index(host_tensor(keep, dtypes::int64, {static_cast<int64_t>(keep.size())}, c.device)));
    return one(x.getitem(ix));
  };
  t["ReverseSequence"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> lens = c.ints(1);
    int64_t batch = c.attr_int("batch_axis", 1), time = c.attr_int("time_axis", 0);
    batch = c.axis(batch, x.ndim());
    time = c.axis(time, x.ndim());
    int64_t tn = x.shape()[u(time)], bn = x.shape()[u(batch)];
    if (static_cast<int64_t>(lens.size()) != bn) c.fail_shape("sequence_lens must have one entry per batch element");
    // the source time index of each (time, batch): reversed inside each sequence's length
    std::vector<int64_t> src(u(tn * bn));
    for (int64_t ti = 0; ti < tn; ti++)
      for (int64_t bi = 0; bi < bn; bi++) {
        int64_t l = std::clamp<int64_t>(lens[u(bi)], 0, tn);
        src[u(ti * bn + bi)] = ti < l ? l - 1 - ti : ti;
      }
    Shape s(u(x.ndim()), 1);
    s[u(time)] = tn;
    s[u(batch)] = bn;
    Tensor idx = host_tensor(src, dtypes::int64, {tn, bn}, c.device);
    if (time > batch) idx = idx.T();
    return one(x.gather(time, idx.reshape(s).expand(x.shape()).contiguous()));
  };
}

}  // namespace tg::onnx
