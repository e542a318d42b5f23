// Signal processing: DFT and STFT as matmuls with cos/sin matrices built on the host (the transform length is a
// shape, so the matrices are constants of the graph), and MelWeightMatrix (a constant from its scalar inputs).
// Complex values are ONNX's: a last dimension of 2 (real, imaginary); a real input has a last dimension of 1.
#include <cmath>
#include <numbers>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// The DFT of x (..., c) along `axis` (not the last), with the signal zero-padded or cut to n and m output bins.
// Gives (..., m along axis, ..., 2).
Tensor dft(OpContext& c, const Tensor& x, int64_t axis, int64_t n, bool inverse, bool onesided) {
  int64_t r = x.ndim(), ch = x.shape().back();
  if (ch != 1 && ch != 2) c.fail_shape("the last dimension must be 1 (real) or 2 (complex), the input is " + tensor::shape_str(x.shape()));
  if (axis < 0 || axis >= r - 1) c.fail("axis " + std::to_string(axis) + " is not a signal axis of " + tensor::shape_str(x.shape()));
  if (n < 1) c.fail("the transform length must be positive, it is " + std::to_string(n));
  c.need_float(x, "the signal");
  // the signal axis last: (..., len), real and imaginary parts apart
  auto part = [&](int64_t k) { return x[{ellipsis, k}].transpose(axis, r - 2); };
  Tensor re = part(0);
  std::optional<Tensor> im;
  if (ch == 2) im = part(1);
  int64_t len = re.shape().back();
  auto fit = [&](const Tensor& t) {
    if (len == n) return t;
    std::vector<std::pair<int64_t, int64_t>> p(u(t.ndim()), {0, 0});
    if (len < n) { p.back().second = n - len; return t.pad(p); }
    std::vector<std::pair<int64_t, int64_t>> s;
    for (int64_t d : t.shape()) s.push_back({0, d});
    s.back().second = n;
    return t.shrink(s);
  };
  re = fit(re);
  if (im) im = fit(*im);
  int64_t m = onesided ? n / 2 + 1 : n;
  std::vector<double> cs(u(n * m)), sn(u(n * m));
  for (int64_t t = 0; t < n; t++)
    for (int64_t k = 0; k < m; k++) {
      double a = 2 * std::numbers::pi * double((t * k) % n) / double(n);  // the angle reduced mod 2 pi first: exact
      cs[u(t * m + k)] = std::cos(a), sn[u(t * m + k)] = std::sin(a);
    }
  Tensor C = host_tensor(cs, re.dtype(), {n, m}, x.device()), S = host_tensor(sn, re.dtype(), {n, m}, x.device());
  // forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin) / n
  double sgn = inverse ? 1.0 : -1.0;
  Tensor yr = re.matmul(C), yi = re.matmul(S).mul(sgn);
  if (im) yr = yr.sub(im->matmul(S).mul(sgn)), yi = yi.add(im->matmul(C));
  if (inverse) yr = yr.div(double(n)), yi = yi.div(double(n));
  return Tensor::stack({yr.transpose(axis, r - 2), yi.transpose(axis, r - 2)}, -1);
}

}  // namespace

void register_signal_ops(OpTable& t) {
  t["DFT"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t axis = c.attr_int("axis", 1);
    if (axis < 0) axis += x.ndim();
    bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
    if (axis < 0 || axis >= x.ndim() - 1) c.fail("axis must name a signal axis (not the last) of " + tensor::shape_str(x.shape()));
    int64_t n = c.has(1) ? c.int_scalar(1) : x.shape()[u(axis)];
    return std::vector<Value>{dft(c, x, axis, n, inverse, onesided)};
  };
  t["STFT"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 3) c.fail_shape("signal must be (batch, length, 1 or 2), it is " + tensor::shape_str(x.shape()));
    int64_t step = c.int_scalar(1);
    std::optional<Tensor> window = c.opt(2);
    if (window && window->ndim() != 1) c.fail_shape("window must be 1-d, it is " + tensor::shape_str(window->shape()));
    int64_t frame = c.has(3) ? c.int_scalar(3) : window ? window->shape()[0] : (c.fail("needs a window or a frame_length"), 0);
    if (window && window->shape()[0] != frame) c.fail_shape("window has " + std::to_string(window->shape()[0]) + " values for frames of " + std::to_string(frame));
    int64_t len = x.shape()[1];
    if (step < 1 || frame < 1 || frame > len) c.fail("needs frame_step >= 1 and 1 <= frame_length <= the signal's " + std::to_string(len));
    bool onesided = c.attr_int("onesided", 1) != 0;
    Tensor frames = x.unfold(1, frame, step).permute({0, 1, 3, 2});  // (batch, frames, frame, c)
    if (window) frames = frames.mul(window->cast(frames.dtype()).reshape({1, 1, frame, 1}));
    return std::vector<Value>{dft(c, frames, 2, frame, false, onesided)};
  };
  t["MelWeightMatrix"] = [](OpContext& c) {
    int64_t bins = c.int_scalar(0), n = c.int_scalar(1), rate = c.int_scalar(2);
    double lo = c.float_scalar(3), hi = c.float_scalar(4);
    int64_t out_type = c.attr_int("output_datatype", proto::FLOAT);
    auto dt = proto::to_dtype(static_cast<int32_t>(out_type));
    if (!dt) c.fail_dtype(std::string("output_datatype ") + proto::elem_type_name(static_cast<int32_t>(out_type)) + " has no tinygrad.cpp dtype");
    if (bins < 1 || n < 1 || rate < 1 || lo < 0 || hi < lo) c.fail("needs num_mel_bins, dft_length, sample_rate >= 1 and 0 <= lower_edge_hertz <= upper_edge_hertz");
    int64_t spectrum = n / 2 + 1;
    // bins + 2 points evenly spaced on the mel scale, as spectrogram bin numbers (ONNX's reference: floored)
    auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
    double mlo = mel(lo), step = (mel(hi) - mlo) / double(bins + 2);
    std::vector<int64_t> edge;
    for (int64_t k = 0; k < bins + 2; k++) {
      double hz = 700 * (std::pow(10.0, (double(k) * step + mlo) / 2595) - 1);
      edge.push_back(static_cast<int64_t>(std::floor(double(n + 1) * hz / double(rate))));
    }
    std::vector<double> w(u(spectrum * bins), 0.0);
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j < 0 || j >= spectrum) c.fail("the mel edges fall outside the spectrum: upper_edge_hertz above sample_rate / 2?");
      w[u(j * bins + i)] = v;
    };
    for (int64_t i = 0; i < bins; i++) {
      int64_t left = edge[u(i)], mid = edge[u(i + 1)], right = edge[u(i + 2)];
      if (mid == left) set(mid, i, 1.0);
      else for (int64_t j = left; j <= mid; j++) set(j, i, double(j - left) / double(mid - left));
      for (int64_t j = mid; j < right; j++) set(j, i, double(right - j) / double(right - mid));
    }
    return std::vector<Value>{host_tensor(w, *dt, {spectrum, bins}, c.device)};
  };

}

}  // namespace tg::onnx
