// Creation: empty, full, zeros, ones, arange, rand.
#include <cmath>

#include "schedule/buffer_uop.h"
#include "tensor/tensor_impl.h"

namespace tg {

using uop::Ops;
using uop::UOp;
using tensor::shape_str;

using tensor::check_shape;
using tensor::check_value_dtype;

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  check_shape(shape, "empty", where);
  check_value_dtype(dtype, "empty", where);
  std::string dev = tensor::resolve_device(device);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  UOp buf = schedule::new_buffer(dev, dtype, n);
  return tensor::wrap(shape == Shape{n} ? buf : tensor::movement(Ops::RESHAPE, buf, shape), dev, where);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device, Loc where) {
  check_shape(shape, "full", where);
  check_value_dtype(dtype, "full", where);
  return tensor::const_tensor(value, dtype, shape, tensor::resolve_device(device));
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  return full(shape, 0, dtype, device, where);
}

Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  return full(shape, 1, dtype, device, where);
}

Tensor Tensor::arange(double stop, Loc where) { return arange(0, stop, 1, std::nullopt, "", where); }

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype, const std::string& device,
                      Loc where) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw ArgumentError("arange", "needs finite start, stop and a nonzero step (got " + std::to_string(start) + ", " +
                                      std::to_string(stop) + ", " + std::to_string(step) + ")", where);
  bool integral = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  DType dt = dtype.value_or(integral ? dtypes::default_int : dtypes::default_float);
  check_value_dtype(dt, "arange", where);
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  std::string dev = tensor::resolve_device(device);
  DType idt = n > INT32_MAX ? dtypes::int64 : dtypes::int32;
  Tensor x = tensor::wrap(UOp::make(Ops::IOTA, idt, {tensor::device_uop(dev)}, uop::Arg(n)), dev).cast(dt, where);
  if (step != 1) x = x.mul(Tensor(step, dt, dev, where), where);
  if (start != 0) x = x.add(Tensor(start, dt, dev, where), where);
  return x;
}

}  // namespace tg
