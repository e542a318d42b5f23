// Sampling an image at computed points: GridSample (the points come from a tensor: computed lazily on the device,
// PyTorch's grid_sample semantics) and RoiAlign (the points come from a few boxes: computed on the host, then one
// gather of the feature map on the device). Both gather taps of the flattened (H*W) plane and weight them.
#include <algorithm>
#include <cmath>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// A normalized grid coordinate in [-1, 1] as a pixel coordinate.
Tensor unnormalize(const Tensor& g, int64_t size, bool align_corners) {
  return align_corners ? g.add(1.0).mul((size - 1) / 2.0) : g.add(1.0).mul(size / 2.0).sub(0.5);
}

// Reflects x into [lo, hi] = [twice_lo / 2, twice_hi / 2] as often as needed (PyTorch's reflect_coordinates).
Tensor reflect(const Tensor& x, double twice_lo, double twice_hi) {
  if (twice_lo == twice_hi) return x.zeros_like();
  double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  Tensor a = x.sub(lo).abs();
  Tensor extra = a.fmod(span), flips = a.div(span).floor();
  Tensor even = flips.sub(flips.mul(0.5).floor().mul(2.0)).eq(flips.zeros_like());
  return even.where(extra.add(lo), extra.neg().add(span + lo));
}

// The padding mode applied to a pixel coordinate: border clamps it, reflection mirrors it; zeros leaves it (taps
// outside the image then read zeros).
Tensor pad_coordinate(const Tensor& x, int64_t size, const std::string& padding, bool align_corners) {
  if (padding == "border") return x.clip(0.0, static_cast<double>(size - 1));
  if (padding != "reflection") return x;
  Tensor r = align_corners ? reflect(x, 0, 2.0 * double(size - 1)) : reflect(x, -1, 2.0 * double(size) - 1);
  return r.clip(0.0, static_cast<double>(size - 1));
}

// x (N, C, H, W) read at integer pixel coordinates (ix, iy), each (N, Ho, Wo) holding whole numbers, times weight;
// taps outside the image read zero. Gives (N, C, Ho, Wo).
Tensor tap(const Tensor& x, const Tensor& ix, const Tensor& iy, const Tensor& weight) {
  int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  int64_t ho = ix.shape()[1], wo = ix.shape()[2];
  Tensor inside = ix.ge(ix.zeros_like()) & ix.le(ix.full_like(double(w - 1))) & iy.ge(iy.zeros_like()) & iy.le(iy.full_like(double(h - 1)));
  Tensor flat = iy.clip(0.0, double(h - 1)).mul(double(w)).add(ix.clip(0.0, double(w - 1))).cast(dtypes::int64);
  Tensor v = x.reshape({n, ch, h * w}).gather(2, flat.reshape({n, 1, ho * wo}).expand({n, ch, ho * wo})).reshape({n, ch, ho, wo});
  return v.mul(inside.where(weight, weight.zeros_like()).unsqueeze(1));
}

// The cubic convolution weights (A = -0.75, as PyTorch) of the 4 taps around a point at fraction t past the second.
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double A = -0.75;
  auto near = [&](const Tensor& d) { return d.mul(A + 2).sub(A + 3).mul(d).mul(d).add(1.0); };                  // |d| <= 1
  auto far = [&](const Tensor& d) { return d.mul(A).sub(5 * A).mul(d).add(8 * A).mul(d).sub(4 * A); };         // 1 < |d| < 2
  Tensor one = t.ones_like();
  return {far(t.add(1.0)), near(t), near(one.sub(t)), far(one.sub(t).add(1.0))};
}

}  // namespace

void register_sampling_ops(OpTable& t) {
  t["GridSample"] = [](OpContext& c) {
    const Tensor &x = c.in(0), &grid = c.in(1);
    if (x.ndim() != 4) c.fail_shape("X must be (N, C, H, W) (only 2-d sampling is supported), it is " + tensor::shape_str(x.shape()));
    if (grid.ndim() != 4 || grid.shape()[0] != x.shape()[0] || grid.shape()[3] != 2)
      c.fail_shape("grid must be (" + std::to_string(x.shape()[0]) + ", H_out, W_out, 2), it is " + tensor::shape_str(grid.shape()));
    c.need_float(x, "X");
    std::string mode = c.attr_string("mode", "bilinear"), padding = c.attr_string("padding_mode", "zeros");
    bool align = c.attr_int("align_corners", 0) != 0;
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") c.fail("mode must be bilinear, nearest or bicubic, it is '" + mode + "'");
    if (padding != "zeros" && padding != "border" && padding != "reflection") c.fail("padding_mode must be zeros, border or reflection, it is '" + padding + "'");
    int64_t h = x.shape()[2], w = x.shape()[3];
    Tensor g = grid.cast(x.dtype());
    Tensor gx = unnormalize(g[{ellipsis, 0}], w, align), gy = unnormalize(g[{ellipsis, 1}], h, align);
    if (mode == "bicubic") {
      // the taps around the unpadded point; each tap's coordinate is padded on its own (PyTorch)
      Tensor fx = gx.floor(), fy = gy.floor();
      std::vector<Tensor> wx = cubic_weights(gx.sub(fx)), wy = cubic_weights(gy.sub(fy));
      Tensor y;
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
          Tensor tx = pad_coordinate(fx.add(double(i - 1)), w, padding, align), ty = pad_coordinate(fy.add(double(j - 1)), h, padding, align);
          Tensor v = tap(x, tx.round(), ty.round(), wx[u(i)].mul(wy[u(j)]));  // reflection can give fractions: the nearest pixel
          y = y.defined() ? y.add(v) : v;
        }
      return std::vector<Value>{y};
    }
    gx = pad_coordinate(gx, w, padding, align);
    gy = pad_coordinate(gy, h, padding, align);
    if (mode == "nearest") return std::vector<Value>{tap(x, gx.round(), gy.round(), gx.ones_like())};
    Tensor x0 = gx.floor(), y0 = gy.floor(), lx = gx.sub(x0), ly = gy.sub(y0), hx = lx.ones_like().sub(lx), hy = ly.ones_like().sub(ly);
    Tensor x1 = x0.add(1.0), y1 = y0.add(1.0);
    return std::vector<Value>{tap(x, x0, y0, hx.mul(hy)).add(tap(x, x1, y0, lx.mul(hy))).add(tap(x, x0, y1, hx.mul(ly))).add(tap(x, x1, y1, lx.mul(ly)))};
  };
  t["RoiAlign"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 4) c.fail_shape("X must be (N, C, H, W), it is " + tensor::shape_str(x.shape()));
    c.need_float(x, "X");
    const Tensor &rois_t = c.in(1), &batch_t = c.in(2);
    if (rois_t.ndim() != 2 || rois_t.shape()[1] != 4) c.fail_shape("rois must be (num_rois, 4), it is " + tensor::shape_str(rois_t.shape()));
    int64_t nr = rois_t.shape()[0];
    if (batch_t.shape() != Shape{nr}) c.fail_shape("batch_indices must be (" + std::to_string(nr) + ",), it is " + tensor::shape_str(batch_t.shape()));
    std::string coord = c.attr_string("coordinate_transformation_mode", c.opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel") c.fail("coordinate_transformation_mode must be half_pixel or output_half_pixel");
    std::string mode = c.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") c.fail("mode must be avg or max, it is '" + mode + "'");
    int64_t oh = c.attr_int("output_height", 1), ow = c.attr_int("output_width", 1), ratio = c.attr_int("sampling_ratio", 0);
    double scale = c.attr_float("spatial_scale", 1.0);
    if (oh < 1 || ow < 1 || ratio < 0) c.fail("output_height and output_width must be positive, sampling_ratio not negative");
    int64_t n = x.shape()[0], ch = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    std::vector<double> rois = c.floats(1);
    std::vector<int64_t> batch = c.ints(2);
    bool half = coord == "half_pixel";
    // per roi and output bin: grid samples of 4 bilinear taps each (ONNX's reference); rois with fewer samples than
    // the most are padded with repeats of their first sample and weights that keep avg and max unchanged
    struct Roi { double y0, x0, bh, bw; int64_t gh, gw; };
    std::vector<Roi> rs;
    int64_t most = 1;
    for (int64_t r = 0; r < nr; r++) {
      if (batch[u(r)] < 0 || batch[u(r)] >= n) c.fail("batch_indices holds " + std::to_string(batch[u(r)]) + ", outside [0, " + std::to_string(n) + ")");
      double off = half ? 0.5 : 0.0, x0 = rois[u(r * 4)] * scale - off, y0 = rois[u(r * 4 + 1)] * scale - off;
      double rw = rois[u(r * 4 + 2)] * scale - off - x0, rh = rois[u(r * 4 + 3)] * scale - off - y0;
      if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
      Roi ro{y0, x0, rh / double(oh), rw / double(ow), ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / double(oh))),
             ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / double(ow)))};
      rs.push_back(ro);
      most = std::max(most, ro.gh * ro.gw);
    }
    int64_t taps = most * 4, bins = oh * ow;
    std::vector<int64_t> index(u(nr * bins * taps), 0);
    std::vector<double> weight(u(nr * bins * taps), 0.0);
    for (int64_t r = 0; r < nr; r++) {
      const Roi& ro = rs[u(r)];
      int64_t count = std::max<int64_t>(ro.gh * ro.gw, 1), base_plane = batch[u(r)] * h * w;
      for (int64_t b = 0; b < bins; b++) {
        int64_t ph = b / ow, pw = b % ow, at = (r * bins + b) * taps;
        for (int64_t s = 0; s < most; s++) {
          int64_t src = s < ro.gh * ro.gw ? s : 0;  // padding repeats sample 0 (weight 0 for avg)
          double y = ro.y0 + double(ph) * ro.bh + (double(src / std::max<int64_t>(ro.gw, 1)) + 0.5) * ro.bh / double(ro.gh);
          double xx = ro.x0 + double(pw) * ro.bw + (double(src % std::max<int64_t>(ro.gw, 1)) + 0.5) * ro.bw / double(ro.gw);
          double scale_w = mode == "avg" ? (s < ro.gh * ro.gw ? 1.0 / double(count) : 0.0) : 1.0;
          if (ro.gh * ro.gw == 0 || y < -1.0 || y > double(h) || xx < -1.0 || xx > double(w)) continue;  // reads zero
          y = std::max(y, 0.0), xx = std::max(xx, 0.0);
          int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(xx), yh = yl + 1, xh = xl + 1;
          if (yl >= h - 1) yl = yh = h - 1, y = double(yl);
          if (xl >= w - 1) xl = xh = w - 1, xx = double(xl);
          double ly = y - double(yl), lx = xx - double(xl);
          int64_t pos[4] = {yl * w + xl, yl * w + xh, yh * w + xl, yh * w + xh};
          double wt[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
          for (int k = 0; k < 4; k++) index[u(at + s * 4 + k)] = base_plane + pos[k], weight[u(at + s * 4 + k)] = wt[k] * scale_w;
        }
      }
    }
    // (C, N*H*W) gathered at every tap: (C, rois, bins, samples, 4)
    Tensor planes = x.permute({1, 0, 2, 3}).reshape({ch, n * h * w});
    Tensor idx = host_tensor(index, dtypes::int64, {1, nr * bins * taps}, c.device);
    Tensor v = planes.gather(1, idx.expand({ch, nr * bins * taps})).reshape({ch, nr, bins, most, 4});
    Tensor wts = host_tensor(weight, x.dtype(), {1, nr, bins, most, 4}, c.device);
    Tensor y = mode == "avg" ? v.mul(wts).sum({3, 4}) : v.mul(wts).max(4).max(3);  // max: the largest weighted tap
    return std::vector<Value>{y.reshape({ch, nr, oh, ow}).permute({1, 0, 2, 3})};
  };
}

}  // namespace tg::onnx
