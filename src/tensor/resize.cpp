// Resizing: adaptive average pooling and interpolate. Both are a small weight matrix applied along each resized
// dim (out[o] = sum_t W[o, t] x[t]); the weights are computed on the host in float64, the rest is lazy.
#include <algorithm>
#include <cmath>
#include <new>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

namespace {

// x with W (out, in) applied along axis
Tensor apply_along(const Tensor& x, int64_t axis, const std::vector<double>& w, int64_t out, SourceLocation where) {
  int64_t in = x.shape()[axis];
  std::vector<float> wf(w.begin(), w.end());
  Tensor W = Tensor(wf, {out, in}, x.device(), where).cast(x.dtype(), where);
  Tensor xs = x.transpose(axis, -1, where).unsqueeze(-2, where);  // (..., 1, in)
  return xs.mul(W, where).sum(-1, false, where).cast(x.dtype(), where).transpose(axis, -1, where);
}

std::vector<int64_t> target_sizes(const Tensor& x, const std::vector<int64_t>& size, const char* op, SourceLocation where) {
  if (size.empty() || static_cast<int64_t>(size.size()) > x.ndim())
    throw ShapeError(op, "size " + tensor::list_str(size) + " does not fit input " + shape_str(x.shape()), where);
  for (int64_t s : size)
    if (s <= 0) throw ArgumentError(op, "sizes must be positive, got " + tensor::list_str(size), where);
  Shape out = x.shape();
  std::copy(size.begin(), size.end(), out.end() - static_cast<int64_t>(size.size()));
  tensor::checked_numel(out, op, where);
  return size;
}

// The (out, in) weights of one resized dim, zeroed; a matrix that does not fit in host memory is a DeviceError.
std::vector<double> weight_matrix(int64_t out, int64_t in, const char* op, SourceLocation where) {
  int64_t n = tensor::checked_numel({out, in}, op, where);
  try {
    return std::vector<double>(static_cast<size_t>(n), 0.0);
  } catch (const std::bad_alloc&) {
    throw DeviceError(op, "out of memory: " + std::to_string(n * 8) + " bytes on the host for the (" + std::to_string(out) +
                              ", " + std::to_string(in) + ") resize weights", where);
  }
}

}  // namespace

Tensor Tensor::adaptive_avg_pool2d(Ints output_size, Loc where) const try {
  std::vector<int64_t> size = output_size.values();
  if (size.size() == 1) size.push_back(size[0]);
  size = target_sizes(*this, size, "adaptive_avg_pool2d", where);
  Tensor x = cast(least_upper_float(dtype()), where);
  for (size_t j = 0; j < size.size(); j++) {
    int64_t axis = x.ndim() - static_cast<int64_t>(size.size() - j), in = x.shape()[axis], out = size[j];
    if (in == 0) throw ShapeError("adaptive_avg_pool2d", "cannot pool an empty input " + shape_str(shape()), where);
    // PyTorch's bins: [floor(o*in/out), ceil((o+1)*in/out))
    std::vector<double> w = weight_matrix(out, in, "adaptive_avg_pool2d", where);
    for (int64_t o = 0; o < out; o++) {
      int64_t b = o * in / out, e = ((o + 1) * in + out - 1) / out;
      for (int64_t t = b; t < e; t++) w[o * in + t] = 1.0 / static_cast<double>(e - b);
    }
    x = apply_along(x, axis, w, out, where);
  }
  return x;
} catch (const Error& e) {
  tensor::rethrow_in(e, "adaptive_avg_pool2d", where);
}

Tensor Tensor::interpolate(const Shape& size, const std::string& mode, bool align_corners, Loc where) const try {
  bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  if (!linear && mode != "nearest" && mode != "nearest-exact")
    throw ArgumentError("interpolate", "mode is nearest, nearest-exact, linear, bilinear or trilinear; not \"" + mode + "\"", where);
  std::vector<int64_t> sz = target_sizes(*this, size, "interpolate", where);
  // nearest modes select elements (weights of exactly 1): integers keep their dtype, as PyTorch's, through float64
  // (exact up to 2^53)
  bool keep_int = !linear && !dtype().is_float();
  Tensor x = cast(keep_int ? dtypes::float64 : least_upper_float(dtype()), where);
  for (size_t j = 0; j < sz.size(); j++) {
    int64_t axis = x.ndim() - static_cast<int64_t>(sz.size() - j), in = x.shape()[axis], out = sz[j];
    if (in == 0) throw ShapeError("interpolate", "cannot resize an empty input " + shape_str(shape()), where);
    double scale = static_cast<double>(in) / static_cast<double>(out);
    std::vector<double> w = weight_matrix(out, in, "interpolate", where);
    for (int64_t o = 0; o < out; o++) {
      if (!linear) {  // PyTorch: nearest takes floor(o * scale), nearest-exact floor((o + 0.5) * scale)
        double src = mode == "nearest" ? std::floor(o * scale) : std::floor((o + 0.5) * scale);
        w[o * in + std::min<int64_t>(static_cast<int64_t>(src), in - 1)] = 1.0;
        continue;
      }
      double src = align_corners ? (out > 1 ? o * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                                 : std::max(0.0, (o + 0.5) * scale - 0.5);
      int64_t t0 = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1), t1 = std::min<int64_t>(t0 + 1, in - 1);
      double f = src - static_cast<double>(t0);
      w[o * in + t0] += 1.0 - f;
      w[o * in + t1] += f;
    }
    x = apply_along(x, axis, w, out, where);
  }
  return keep_int ? x.cast(dtype(), where) : x;
} catch (const Error& e) {
  tensor::rethrow_in(e, "interpolate", where);
}

}  // namespace tg
