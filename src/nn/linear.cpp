// Linear and convolution layers.
#include <cmath>

#include "nn/nn_impl.h"
#include "tensor/helpers.h"
#include "tg/nn.h"

namespace tg::nn {

namespace {

// tinygrad's default: kaiming_uniform(a = sqrt(5)) weights, bias uniform(+-1 / sqrt(fan_in)); zeros for no inputs
// (Linear(0, n), as PyTorch's bound of 0)
Tensor default_weight(const Shape& shape) { return Tensor::kaiming_uniform(shape, std::sqrt(5.0)).requires_grad_(); }
Tensor default_bias(int64_t n, int64_t fan_in) {
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return Tensor::uniform({n}, -bound, bound).requires_grad_();
}

// one size per spatial dim: a single value repeated
Shape per_dim(const Ints& v, size_t dims, const char* layer, const char* what) {
  const std::vector<int64_t>& x = v.values();
  if (x.size() == dims) return x;
  if (x.size() == 1) return Shape(dims, x[0]);
  throw ArgumentError(layer, std::string(what) + " needs 1 or " + std::to_string(dims) + " values, got " + std::to_string(x.size()));
}

// stride and dilation (positive) and padding have one value per spatial dim, or one for all (padding also PyTorch's
// flat (before, after) pairs): checked when the layer is made, not at its first call
void check_conv_args(size_t dims, const Ints& stride, const Ints& padding, const Ints& dilation, const char* layer) {
  for (const auto& [v, what] : {std::pair{&stride, "stride"}, std::pair{&dilation, "dilation"}})
    for (int64_t x : per_dim(*v, dims, layer, what))
      if (x <= 0) throw ArgumentError(layer, std::string(what) + " must be positive, got " + tensor::list_str(v->values()));
  if (padding.values().size() != 2 * dims) per_dim(padding, dims, layer, "padding");
}

void check_channels(int64_t in, int64_t out, int64_t groups, const char* layer) {
  if (in <= 0 || out <= 0 || groups <= 0 || in % groups || out % groups)
    throw ArgumentError(layer, "channels " + std::to_string(in) + " -> " + std::to_string(out) + " must be positive and divisible by groups " +
                                   std::to_string(groups));
}

// a convolution's weight, (out, in / groups, *kernel) or transposed (in, out / groups, *kernel), and its bias
// as tinygrad initializes them: the bias bound uses the weight's fan-in, prod(shape[1:])
void init_conv(Tensor& weight, Tensor& bias, int64_t in, int64_t out, int64_t groups, const Ints& kernel_size, size_t dims,
               bool with_bias, bool transposed, const char* layer) {
  check_channels(in, out, groups, layer);
  Shape shape = transposed ? Shape{in, out / groups} : Shape{out, in / groups};
  for (int64_t k : per_dim(kernel_size, dims, layer, "kernel_size")) shape.push_back(k);
  weight = default_weight(shape);
  if (with_bias) bias = default_bias(out, tensor::prod(shape) / shape[0]);
}

}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias) {
  if (in_features < 0 || out_features < 0)
    throw ArgumentError("Linear", "sizes must be >= 0, got " + std::to_string(in_features) + " -> " + std::to_string(out_features));
  weight = default_weight({out_features, in_features});
  if (bias) this->bias = default_bias(out_features, in_features);
}

Tensor Linear::operator()(const Tensor& x, Loc where) const try {
  return x.linear(weight.T(where), detail::if_defined(bias), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "Linear", where);
}

ConvNd::ConvNd(int64_t in, int64_t out, Ints kernel_size, size_t dims, Ints stride, Ints padding, Ints dilation,
               int64_t groups, bool bias)
    : stride(std::move(stride)), padding(std::move(padding)), dilation(std::move(dilation)), groups(groups) {
  check_conv_args(dims, this->stride, this->padding, this->dilation, "Conv");
  init_conv(weight, this->bias, in, out, groups, kernel_size, dims, bias, false, "Conv");
}

Tensor ConvNd::operator()(const Tensor& x, Loc where) const try {
  return x.conv2d(weight, detail::if_defined(bias), groups, stride, dilation, padding, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "Conv", where);
}

ConvTransposeNd::ConvTransposeNd(int64_t in, int64_t out, Ints kernel_size, size_t dims, Ints stride, Ints padding,
                                 Ints output_padding, Ints dilation, int64_t groups, bool bias)
    : stride(std::move(stride)), padding(std::move(padding)), output_padding(std::move(output_padding)),
      dilation(std::move(dilation)), groups(groups) {
  check_conv_args(dims, this->stride, this->padding, this->dilation, "ConvTranspose");
  per_dim(this->output_padding, dims, "ConvTranspose", "output_padding");
  init_conv(weight, this->bias, in, out, groups, kernel_size, dims, bias, true, "ConvTranspose");
}

Tensor ConvTransposeNd::operator()(const Tensor& x, Loc where) const try {
  return x.conv_transpose2d(weight, detail::if_defined(bias), groups, stride, dilation, padding, output_padding, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "ConvTranspose", where);
}

}  // namespace tg::nn
