// Neural-network ops: Conv/ConvTranspose, pooling, normalizations, Gemm/MatMul/Einsum, Resize/Upsample, Dropout
// and the losses.
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// The spatial arguments every windowed op shares, with auto_pad resolved to explicit (begin..., end...) pads.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: ONNX order, begins then ends
};

Window window(OpContext& c, const Shape& in, std::vector<int64_t> kernel, bool has_dilations = true) {
  size_t n = kernel.size();
  Window w;
  w.kernel = kernel;
  w.strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = has_dilations ? c.attr_ints("dilations", std::vector<int64_t>(n, 1)) : std::vector<int64_t>(n, 1);
  w.pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n)
    c.fail_shape("strides, dilations and pads must match the " + std::to_string(n) + " spatial dims");
  for (size_t k = 0; k < n; k++)
    if (w.strides[k] < 1 || w.dilations[k] < 1 || w.kernel[k] < 1 || w.pads[k] < 0 || w.pads[k + n] < 0)
      c.fail("kernel, strides and dilations must be positive and pads not negative");
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t k = 0; k < n; k++) {
      int64_t size = in[in.size() - n + k], out = (size + w.strides[k] - 1) / w.strides[k];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[k] + (w.kernel[k] - 1) * w.dilations[k] + 1 - size);
      int64_t small = total / 2, big = total - small;
      w.pads[k] = auto_pad == "SAME_UPPER" ? small : big;
      w.pads[k + n] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    c.fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, it is '" + auto_pad + "'");
  }
  return w;
}

// ONNX pads (begins, ends) as our ops take them: (before, after) per dim, last dim first.
std::vector<int64_t> torch_pads(const std::vector<int64_t>& pads) {
  size_t n = pads.size() / 2;
  std::vector<int64_t> p;
  for (size_t k = n; k-- > 0;) { p.push_back(pads[k]); p.push_back(pads[k + n]); }
  return p;
}

enum class PoolKind { Max, AvgIncludePad, AvgExcludePad };

// Our pools take PyTorch's arguments: a 1-d pool is run as 2-d over a unit dim, and pads beyond half the window
// (which ONNX allows and PyTorch refuses) are applied explicitly.
Tensor pool(const Tensor& input, PoolKind kind, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d,
            std::vector<int64_t> pads, bool ceil) {
  Tensor x = input;
  size_t n = k.size();
  bool one_d = n == 1;
  if (one_d) {
    x = x.unsqueeze(-2);
    k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
    n = 2;
  }
  bool fits = true;
  for (size_t j = 0; j < n; j++)
    fits = fits && 2 * std::max(pads[j], pads[j + n]) <= d[j] * (k[j] - 1) + 1;
  Tensor y;
  if (fits) {
    if (kind == PoolKind::Max) y = x.max_pool2d(k, s, d, torch_pads(pads), ceil);
    else y = x.avg_pool2d(k, s, d, torch_pads(pads), ceil, kind == PoolKind::AvgIncludePad);
  } else {
    std::vector<std::pair<int64_t, int64_t>> p(u(x.ndim()), {0, 0});
    for (size_t j = 0; j < n; j++) p[u(x.ndim()) - n + j] = {pads[j], pads[j + n]};
    if (kind == PoolKind::Max) {
      double lo = x.dtype().is_float() ? -INFINITY : std::visit([](auto v) { return static_cast<double>(v); }, x.dtype().min());
      y = x.pad(p, lo).max_pool2d(k, s, d, 0, ceil);
    } else if (kind == PoolKind::AvgIncludePad) {
      y = x.pad(p).avg_pool2d(k, s, d, 0, ceil, true);
    } else {
      Shape spatial(x.shape().end() - static_cast<std::ptrdiff_t>(n), x.shape().end());
      Tensor ones = Tensor::ones(spatial, x.dtype(), x.device());
      std::vector<std::pair<int64_t, int64_t>> ps(p.end() - static_cast<std::ptrdiff_t>(n), p.end());
      y = x.pad(p).avg_pool2d(k, s, d, 0, ceil, true).div(ones.pad(ps).avg_pool2d(k, s, d, 0, ceil, true));
    }
  }
  return one_d ? y.squeeze(-2) : y;
}

void need_spatial(OpContext& c, const Tensor& x) {
  if (x.ndim() < 3) c.fail_shape("the input must be (N, C, spatial...), it has shape " + tensor::shape_str(x.shape()));
}

}  // namespace

Tensor conv(OpContext& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  need_spatial(c, x);
  if (w.ndim() != x.ndim()) c.fail_shape("weight " + tensor::shape_str(w.shape()) + " does not match input " + tensor::shape_str(x.shape()));
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel) c.fail_shape("kernel_shape disagrees with the weight's shape");
  Window win = window(c, x.shape(), kernel);
  int64_t group = c.attr_int("group", 1);
  if (group < 1 || x.shape()[1] != w.shape()[1] * group)
    c.fail_shape("input channels " + std::to_string(x.shape()[1]) + " != weight's " + std::to_string(w.shape()[1]) + " x group " + std::to_string(group));
  return x.conv2d(w, b, group, win.strides, win.dilations, torch_pads(win.pads));
}

namespace {

Tensor conv_transpose(OpContext& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  need_spatial(c, x);
  size_t n = u(x.ndim() - 2);
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel) c.fail_shape("kernel_shape disagrees with the weight's shape");
  int64_t group = c.attr_int("group", 1);
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> outpad = c.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (strides.size() != n || dil.size() != n || outpad.size() != n || pads.size() != 2 * n) c.fail_shape("strides, dilations, pads and output_padding must match the spatial dims");
  if (c.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> want = c.has_attr("output_shape") ? c.attr_ints("output_shape") : std::vector<int64_t>{};
    if (want.size() > n) want.erase(want.begin(), want.end() - static_cast<std::ptrdiff_t>(n));
    for (size_t k = 0; k < n; k++) {
      int64_t in = x.shape()[k + 2];
      int64_t target = want.empty() ? in * strides[k] : want[k];
      int64_t total = strides[k] * (in - 1) + outpad[k] + (kernel[k] - 1) * dil[k] + 1 - target;
      if (total < 0) { outpad[k] -= total; total = 0; }  // a larger output than the kernel reaches: extend at the end
      bool lower = auto_pad == "SAME_LOWER";
      pads[k] = lower ? total - total / 2 : total / 2;
      pads[k + n] = total - pads[k];
    }
  } else if (auto_pad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  }
  // asymmetric pads: the symmetric part as padding, the rest cut from the end
  std::vector<int64_t> sym(n), cut(n);
  for (size_t k = 0; k < n; k++) { sym[k] = std::min(pads[k], pads[k + n]); cut[k] = pads[k] - sym[k]; }
  std::vector<int64_t> extra_end(n);
  for (size_t k = 0; k < n; k++) extra_end[k] = pads[k + n] - sym[k];
  Tensor y = x.conv_transpose2d(w, b, group, strides, dil, sym, outpad);
  std::vector<std::pair<int64_t, int64_t>> r(u(y.ndim()), {0, 0});
  bool any = false;
  for (size_t k = 0; k < n; k++) {
    r[k + 2] = {cut[k], y.shape()[k + 2] - extra_end[k]};
    any = any || cut[k] || extra_end[k];
  }
  if (!any) return y;
  for (size_t k = 0; k < 2; k++) r[k] = {0, y.shape()[k]};
  return y.shrink(r);
}

std::vector<int64_t> kernel_attr(OpContext& c, const Tensor& x) {
  need_spatial(c, x);
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (static_cast<int64_t>(k.size()) != x.ndim() - 2) c.fail_shape("kernel_shape must have one entry per spatial dim");
  return k;
}

// Separable resampling for Resize: along each axis, the output is a weighted sum of a few input positions (taps).
struct Taps {
  int64_t out = 0, taps = 0;
  std::vector<int64_t> index;   // out * taps, clamped into the input
  std::vector<double> weight;   // out * taps
  std::vector<double> inside;   // out: 0 where tf_crop_and_resize samples outside the input
};

double cubic_weight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

Taps resample_axis(OpContext& c, int64_t in, int64_t out, double scale, double roi_lo, double roi_hi, const std::string& mode,
                   const std::string& coord, const std::string& nearest, double cubic_a, bool exclude_outside) {
  Taps t;
  t.out = out;
  t.taps = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  for (int64_t o = 0; o < out; o++) {
    double x;
    if (coord == "half_pixel") x = (o + 0.5) / scale - 0.5;
    else if (coord == "pytorch_half_pixel") x = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
    // ONNX's length_resized is in * scale, unrounded (it differs from `out` when downsampling by scales)
    else if (coord == "align_corners") x = out == 1 ? 0 : o * double(in - 1) / (scale * double(in) - 1);
    else if (coord == "asymmetric") x = o / scale;
    else if (coord == "tf_half_pixel_for_nn") x = (o + 0.5) / scale;
    else if (coord == "half_pixel_symmetric") {
      double adj = out / (scale * in), center = in / 2.0, off = center * (1 - adj);
      x = off + (o + 0.5) / scale - 0.5;
    } else if (coord == "tf_crop_and_resize") {
      x = out > 1 ? roi_lo * (in - 1) + o * (roi_hi - roi_lo) * (in - 1) / double(out - 1) : 0.5 * (roi_lo + roi_hi) * (in - 1);
    } else c.fail("coordinate_transformation_mode '" + coord + "' is not one ONNX defines");
    t.inside.push_back(coord == "tf_crop_and_resize" && (x < 0 || x > in - 1) ? 0.0 : 1.0);
    if (mode == "nearest") {
      double r;
      if (nearest == "round_prefer_floor") r = (x - std::floor(x) == 0.5) ? std::floor(x) : std::round(x);
      else if (nearest == "round_prefer_ceil") r = std::round(x);
      else if (nearest == "floor") r = std::floor(x);
      else if (nearest == "ceil") r = std::ceil(x);
      else c.fail("nearest_mode '" + nearest + "' is not one ONNX defines");
      t.index.push_back(std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1));
      t.weight.push_back(1);
      continue;
    }
    double f = std::floor(x), frac = x - f;
    int64_t base = static_cast<int64_t>(f);
    if (mode == "linear") {
      if (coord != "tf_crop_and_resize") x = std::clamp(x, 0.0, double(in - 1)), f = std::floor(x), frac = x - f, base = static_cast<int64_t>(f);
      t.index.push_back(std::clamp<int64_t>(base, 0, in - 1));
      t.index.push_back(std::clamp<int64_t>(base + 1, 0, in - 1));
      t.weight.push_back(1 - frac);
      t.weight.push_back(frac);
      continue;
    }
    double ws[4], sum = 0;
    for (int j = 0; j < 4; j++) {
      int64_t at = base - 1 + j;
      ws[j] = cubic_weight(frac - (j - 1), cubic_a);
      if (exclude_outside && (at < 0 || at >= in)) ws[j] = 0;
      sum += ws[j];
    }
    for (int j = 0; j < 4; j++) {
      t.index.push_back(std::clamp<int64_t>(base - 1 + j, 0, in - 1));
      t.weight.push_back(exclude_outside && sum != 0 ? ws[j] / sum : ws[j]);
    }
  }
  return t;
}

Tensor apply_taps(const Tensor& x, int64_t axis, const Taps& t) {
  Tensor idx = host_tensor(t.index, dtypes::int64, {t.out, t.taps}, x.device());
  std::vector<Index> ix = full_slices(axis);
  ix.push_back(Index(idx));
  Tensor g = x.getitem(ix);  // shape: x[:axis] + (out, taps) + x[axis+1:]
  if (t.taps == 1) return g.squeeze(axis + 1);
  Shape ws(u(g.ndim()), 1);
  ws[u(axis)] = t.out;
  ws[u(axis) + 1] = t.taps;
  Tensor w = host_tensor(t.weight, x.dtype(), ws, x.device());
  return g.mul(w).sum(axis + 1);
}

Tensor resize(OpContext& c, const Tensor& x, std::vector<double> scales, std::vector<int64_t> sizes, std::vector<double> roi,
              const std::string& mode) {
  int64_t r = x.ndim();
  std::string coord = c.attr_string("coordinate_transformation_mode", c.opset < 11 ? "asymmetric" : "half_pixel");
  std::string nearest = c.attr_string("nearest_mode", c.opset < 11 ? "floor" : "round_prefer_floor");
  if (c.opset < 11) nearest = "floor";
  double cubic_a = c.attr_float("cubic_coeff_a", -0.75);
  bool exclude = c.attr_int("exclude_outside", 0) != 0;
  double extrapolation = c.attr_float("extrapolation_value", 0.0);
  std::vector<int64_t> axes(u(r));
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has_attr("axes")) { axes = c.attr_ints("axes"); for (int64_t& a : axes) a = c.axis(a, r); }
  std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (c.attr_int("antialias", 0)) c.fail("antialias is not supported");
  size_t n = axes.size();
  if (!scales.empty() && scales.size() != n) c.fail_shape("scales has " + std::to_string(scales.size()) + " values for " + std::to_string(n) + " axes");
  if (!sizes.empty() && sizes.size() != n) c.fail_shape("sizes has " + std::to_string(sizes.size()) + " values for " + std::to_string(n) + " axes");
  if (scales.empty() && sizes.empty()) c.fail("needs scales or sizes");
  if (!sizes.empty()) {
    scales.assign(n, 0);
    if (policy != "stretch") {
      double s = policy == "not_larger" ? INFINITY : 0;
      for (size_t k = 0; k < n; k++) {
        double q = double(sizes[k]) / double(x.shape()[u(axes[k])]);
        s = policy == "not_larger" ? std::min(s, q) : std::max(s, q);
      }
      for (size_t k = 0; k < n; k++) sizes[k] = static_cast<int64_t>(std::round(s * double(x.shape()[u(axes[k])]))), scales[k] = s;
    } else {
      for (size_t k = 0; k < n; k++) scales[k] = double(sizes[k]) / double(x.shape()[u(axes[k])]);
    }
  } else {
    for (size_t k = 0; k < n; k++) {
      if (scales[k] <= 0) c.fail("scales must be positive");
      sizes.push_back(static_cast<int64_t>(std::floor(double(x.shape()[u(axes[k])]) * scales[k])));
    }
  }
  if (!roi.empty() && roi.size() != 2 * n && roi.size() != 2 * u(r)) c.fail_shape("roi must have 2 values per axis");
  Tensor y = x;
  if (!y.dtype().is_float() && mode != "nearest") y = y.cast(dtypes::float32);
  Tensor inside;
  bool crop = coord == "tf_crop_and_resize";
  for (size_t k = 0; k < n; k++) {
    int64_t a = axes[k], in = x.shape()[u(a)];
    if (sizes[k] == in && scales[k] == 1.0 && !crop) continue;
    double lo = 0, hi = 1;
    if (crop && !roi.empty()) {
      size_t m = roi.size() / 2, j = roi.size() == 2 * n ? k : u(a);
      lo = roi[j];
      hi = roi[j + m];
    }
    Taps t = resample_axis(c, in, sizes[k], scales[k], lo, hi, mode, coord, nearest, cubic_a, exclude);
    y = apply_taps(y, a, t);
    if (crop) {
      Shape s(u(r), 1);
      s[u(a)] = sizes[k];
      Tensor m = host_tensor(t.inside, y.dtype(), s, x.device());
      inside = inside.defined() ? inside.mul(m) : m;
    }
  }
  if (inside.defined()) y = y.mul(inside).add(inside.scalar_like(1).sub(inside).mul(y.scalar_like(extrapolation)));
  return y.dtype() == x.dtype() ? y : y.cast(x.dtype());
}

// The losses' "reduction" attribute.
Reduction reduction_attr(OpContext& c) {
  std::string red = c.attr_string("reduction", "mean");
  if (red == "mean") return Reduction::mean;
  if (red == "sum") return Reduction::sum;
  if (red != "none") c.fail("reduction must be none, sum or mean, it is '" + red + "'");
  return Reduction::none;
}

std::string resize_mode(OpContext& c) {
  std::string mode = c.attr_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";  // Upsample's old names
  if (mode != "nearest" && mode != "linear" && mode != "cubic") c.fail("mode must be nearest, linear or cubic, it is '" + mode + "'");
  return mode;
}

Tensor batchnorm_inference(const Tensor& x, const Tensor& scale, const Tensor& b, const Tensor& mean, const Tensor& var, double eps) {
  Shape s(u(x.ndim()), 1);
  s[1] = x.shape()[1];
  Tensor invstd = var.reshape(s).add(var.scalar_like(eps)).rsqrt();
  return x.sub(mean.reshape(s)).mul(invstd.mul(scale.reshape(s))).add(b.reshape(s));
}

std::vector<int64_t> all_but_channel(int64_t ndim) {
  std::vector<int64_t> a{0};
  for (int64_t d = 2; d < ndim; d++) a.push_back(d);
  return a;
}

}  // namespace

void register_nn_ops(OpTable& t) {
  t["Conv"] = [](OpContext& c) { return one(conv(c, c.in(0), c.in(1), c.opt(2))); };
  t["ConvTranspose"] = [](OpContext& c) { return one(conv_transpose(c, c.in(0), c.in(1), c.opt(2))); };
  t["ConvInteger"] = [](OpContext& c) {
    Tensor x = c.in(0).cast(dtypes::int32), w = c.in(1).cast(dtypes::int32);
    if (auto zp = c.opt(2)) x = x.sub(zp->cast(dtypes::int32).reshape({}));
    if (auto zp = c.opt(3)) {
      Tensor z = zp->cast(dtypes::int32);
      w = w.sub(z.numel() == 1 ? z.reshape({}) : z.reshape({-1, 1, 1, 1}));
    }
    return one(conv(c, x.cast(dtypes::float32), w.cast(dtypes::float32), std::nullopt).round().cast(dtypes::int32));
  };
  t["MaxPool"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> k = kernel_attr(c, x);
    Window w = window(c, x.shape(), k, c.opset >= 10);
    bool ceil = c.attr_int("ceil_mode", 0) != 0;
    int64_t order = c.attr_int("storage_order", 0);
    if (c.node.outputs.size() < 2 || c.node.outputs[1].empty())
      return one(pool(x, PoolKind::Max, k, w.strides, w.dilations, w.pads, ceil));
    auto [v, idx] = x.max_pool2d_with_indices(k, w.strides, w.dilations, torch_pads(w.pads), ceil);
    // ONNX's indices count over the whole tensor (row-major, or column-major within a plane with storage_order 1)
    int64_t plane = 1;
    for (int64_t d = 2; d < x.ndim(); d++) plane *= x.shape()[u(d)];
    Tensor i = idx.cast(dtypes::int64);
    if (order == 1) {
      if (x.ndim() != 4) c.fail("storage_order 1 needs a 2-d pool");
      int64_t h = x.shape()[2], wd = x.shape()[3];
      i = i.idiv(i.scalar_like(wd)).add(i.mod(i.scalar_like(wd)).mul(i.scalar_like(h)));
    }
    int64_t nc = x.shape()[0] * x.shape()[1];
    Shape s(u(x.ndim()), 1);
    s[0] = x.shape()[0];
    s[1] = x.shape()[1];
    Tensor base = Tensor::arange(0, static_cast<double>(nc), 1, dtypes::int64, x.device()).mul(plane).reshape(s);
    return std::vector<Value>{v, i.add(base)};
  };
  t["AveragePool"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> k = kernel_attr(c, x);
    Window w = window(c, x.shape(), k, c.opset >= 19);
    bool ceil = c.attr_int("ceil_mode", 0) != 0, include = c.attr_int("count_include_pad", 0) != 0;
    return one(pool(x, include ? PoolKind::AvgIncludePad : PoolKind::AvgExcludePad, k, w.strides, w.dilations, w.pads, ceil));
  };
  t["LpPool"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> k = kernel_attr(c, x);
    Window w = window(c, x.shape(), k, c.opset >= 18);
    double p = static_cast<double>(c.attr_int("p", 2));
    bool ceil = c.attr_int("ceil_mode", 0) != 0;
    int64_t count = std::accumulate(k.begin(), k.end(), int64_t{1}, std::multiplies<>());
    Tensor s = pool(x.abs().pow(p), PoolKind::AvgIncludePad, k, w.strides, w.dilations, w.pads, ceil).mul(static_cast<double>(count));
    return one(s.pow(1.0 / p));
  };
  t["GlobalAveragePool"] = [](OpContext& c) {
    need_spatial(c, c.in(0));
    std::vector<int64_t> a;
    for (int64_t d = 2; d < c.in(0).ndim(); d++) a.push_back(d);
    return one(c.in(0).mean(a, true));
  };
  t["GlobalMaxPool"] = [](OpContext& c) {
    need_spatial(c, c.in(0));
    std::vector<int64_t> a;
    for (int64_t d = 2; d < c.in(0).ndim(); d++) a.push_back(d);
    return one(c.in(0).max(a, true));
  };
  t["MaxUnpool"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> k = kernel_attr(c, x);
    Window w = window(c, x.shape(), k, false);
    size_t n = k.size();
    Shape out(x.shape().begin(), x.shape().begin() + 2);
    for (size_t d = 0; d < n; d++) out.push_back((x.shape()[d + 2] - 1) * w.strides[d] - w.pads[d] - w.pads[d + n] + k[d]);
    // ONNX's indices count over the whole tensor of the default shape: scatter into it, flat; a given
    // output_shape pads that result at the end of each spatial axis (ONNX's reference and its test data)
    Tensor idx = c.in(1).cast(dtypes::int64).flatten();
    int64_t total = tensor::prod(out);
    if (idx.numel()) {
      int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
      if (lo < 0 || hi >= total) c.fail("indices hold values in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], outside the output's " + std::to_string(total) + " elements");
    }
    Tensor y = Tensor::zeros({total}, x.dtype(), x.device()).scatter(0, idx, x.flatten()).reshape(out);
    if (c.has(2)) {
      std::vector<int64_t> s = c.ints(2);
      if (s.size() != out.size() || s[0] != out[0] || s[1] != out[1]) c.fail_shape("output_shape must be (N, C, spatial...) of the input's N and C, of " + std::to_string(out.size()) + " values");
      std::vector<std::pair<int64_t, int64_t>> pad(out.size(), {0, 0});
      for (size_t d = 2; d < out.size(); d++) {
        if (s[d] < out[d]) c.fail_shape("output_shape " + std::to_string(s[d]) + " is smaller than the unpooled size " + std::to_string(out[d]));
        pad[d].second = s[d] - out[d];
      }
      y = y.pad(pad);
    }
    return one(y);
  };
  t["BatchNormalization"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    need_spatial(c, x.ndim() == 2 ? x.unsqueeze(-1) : x);
    double eps = c.attr_float("epsilon", 1e-5);
    double momentum = c.attr_float("momentum", 0.9);
    c.ignore("consumed_inputs");
    c.ignore("spatial");
    bool training = c.opset >= 14 ? c.attr_int("training_mode", 0) != 0 : false;
    if (c.opset < 7) training = c.attr_int("is_test", 0) == 0 && c.node.outputs.size() > 1;
    const Tensor &scale = c.in(1), &b = c.in(2), &mean = c.in(3), &var = c.in(4);
    if (!training) return one(batchnorm_inference(x, scale, b, mean, var, eps));
    std::vector<int64_t> axes = all_but_channel(x.ndim());
    Tensor bm = x.mean(axes), bv = x.sub(x.mean(axes, true)).square().mean(axes);
    Tensor y = batchnorm_inference(x, scale, b, bm, bv, eps);
    Tensor rm = mean.mul(mean.scalar_like(momentum)).add(bm.mul(bm.scalar_like(1 - momentum)));
    Tensor rv = var.mul(var.scalar_like(momentum)).add(bv.mul(bv.scalar_like(1 - momentum)));
    return std::vector<Value>{y, rm, rv};
  };
  t["InstanceNormalization"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    need_spatial(c, x);
    double eps = c.attr_float("epsilon", 1e-5);
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < x.ndim(); d++) axes.push_back(d);
    Tensor mean = x.mean(axes, true), var = x.sub(mean).square().mean(axes, true);
    Shape s(u(x.ndim()), 1);
    s[1] = x.shape()[1];
    return one(x.sub(mean).mul(var.add(var.scalar_like(eps)).rsqrt()).mul(c.in(1).reshape(s)).add(c.in(2).reshape(s)));
  };
  t["LayerNormalization"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.axis(c.attr_int("axis", -1), x.ndim());
    double eps = c.attr_float("epsilon", 1e-5);
    int64_t stash = c.attr_int("stash_type", 1);
    if (stash != 1) c.fail("stash_type " + std::to_string(stash) + " is not supported (only 1, float32)");
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < x.ndim(); d++) axes.push_back(d);
    Tensor xf = x.cast(dtypes::float32);
    Tensor mean = xf.mean(axes, true), invstd = xf.sub(mean).square().mean(axes, true).add(eps).rsqrt();
    Tensor y = xf.sub(mean).mul(invstd).cast(x.dtype()).mul(c.in(1));
    if (auto b = c.opt(2)) y = y.add(*b);
    return std::vector<Value>{y, mean, invstd};
  };
  t["LRN"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    need_spatial(c, x);
    double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75), bias = c.attr_float("bias", 1.0);
    int64_t size = c.attr_int("size");
    if (size < 1) c.fail("size must be positive");
    std::vector<std::pair<int64_t, int64_t>> p(u(x.ndim()), {0, 0});
    p[1] = {(size - 1) / 2, size / 2};
    Tensor sq = x.square().pad(p).unfold(1, size, 1).sum(-1);
    return one(x.div(sq.mul(alpha / static_cast<double>(size)).add(bias).pow(beta)));
  };
  t["MeanVarianceNormalization"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> axes = c.attr_ints("axes", std::vector<int64_t>{0, 2, 3});
    for (int64_t& a : axes) a = c.axis(a, x.ndim());
    Tensor mean = x.mean(axes, true);
    Tensor var = x.square().mean(axes, true).sub(mean.square());
    return one(x.sub(mean).div(var.sqrt().add(1e-9)));
  };
  t["Gemm"] = [](OpContext& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (a.ndim() != 2 || b.ndim() != 2) c.fail_shape("A and B must be 2-d, they are " + tensor::shape_str(a.shape()) + " and " + tensor::shape_str(b.shape()));
    double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
    if (c.attr_int("transA", 0)) a = a.T();
    if (c.attr_int("transB", 0)) b = b.T();
    c.ignore("broadcast");
    if (a.shape()[1] != b.shape()[0]) c.fail_shape("A' " + tensor::shape_str(a.shape()) + " and B' " + tensor::shape_str(b.shape()) + " do not multiply");
    Tensor y = a.matmul(b);
    if (alpha != 1.0) y = y.mul(y.scalar_like(alpha));
    if (auto cc = c.opt(2)) y = y.add(beta != 1.0 ? cc->mul(cc->scalar_like(beta)) : *cc);
    return one(y);
  };
  t["MatMul"] = [](OpContext& c) {
    if (c.in(0).dtype() != c.in(1).dtype()) c.fail_dtype("A and B must have one type");
    return one(c.in(0).matmul(c.in(1)));
  };
  t["MatMulInteger"] = [](OpContext& c) {
    Tensor a = c.in(0).cast(dtypes::int32), b = c.in(1).cast(dtypes::int32);
    if (auto zp = c.opt(2)) a = a.sub(zp->cast(dtypes::int32).numel() == 1 ? zp->cast(dtypes::int32).reshape({}) : zp->cast(dtypes::int32).reshape({-1, 1}));
    if (auto zp = c.opt(3)) b = b.sub(zp->cast(dtypes::int32));
    return one(a.matmul(b));
  };
  t["Einsum"] = [](OpContext& c) {
    std::string eq = c.attr_string("equation");
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    return one(Tensor::einsum(eq, c.variadic()));
  };
  t["Dropout"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    c.ignore("seed");
    c.ignore("is_test");
    c.ignore("consumed_inputs");
    double ratio = c.opset < 12 ? c.attr_float("ratio", 0.5) : (c.has(1) ? c.float_scalar(1) : 0.5);
    bool training = c.opset >= 12 && c.has(2) && c.int_scalar(2) != 0;
    if (!training || ratio == 0) {
      std::vector<Value> r{x};
      r.emplace_back(Tensor::ones(x.shape(), dtypes::bool_, x.device()));
      return r;
    }
    Tensor keep = Tensor::rand(x.shape(), dtypes::float32, x.device()).ge(Tensor(ratio, dtypes::float32, x.device()));
    return std::vector<Value>{keep.where(x.div(x.scalar_like(1 - ratio)), x.zeros_like()), keep};
  };
  t["Resize"] = [](OpContext& c) {
    std::string mode = resize_mode(c);
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    if (c.opset < 11) {
      scales = c.floats(1);
    } else {
      if (c.has(1)) roi = c.floats(1);
      if (c.has(2)) scales = c.floats(2);
      if (c.has(3)) sizes = c.ints(3);
      if (!scales.empty() && !sizes.empty()) c.fail("give scales or sizes, not both");
    }
    return one(resize(c, c.in(0), scales, sizes, roi, mode));
  };
  t["Upsample"] = [](OpContext& c) {
    std::string mode = resize_mode(c);
    std::vector<double> scales = c.opset >= 9 ? c.floats(1) : c.attr_floats("scales");
    return one(resize(c, c.in(0), scales, {}, {}, mode));
  };
  t["NegativeLogLikelihoodLoss"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    Reduction r = reduction_attr(c);
    int64_t ignore = c.attr_int("ignore_index", LLONG_MIN);
    return one(x.nll_loss(c.in(1), c.opt(2), ignore, r));
  };
  t["SoftmaxCrossEntropyLoss"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    Reduction r = reduction_attr(c);
    int64_t ignore = c.attr_int("ignore_index", LLONG_MIN);
    if (x.ndim() < 2) c.fail_shape("scores must be (N, C, ...)");
    Tensor lp = x.log_softmax(1);
    return std::vector<Value>{lp.nll_loss(c.in(1), c.opt(2), ignore, r), lp};
  };
}

}  // namespace tg::onnx
