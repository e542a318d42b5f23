// Creation: empty, full, zeros, ones, arange, eye, linspace and the *_like forms.
#include <cmath>
#include <cstdint>

#include "runtime/buffer.h"
#include "multi/multi.h"
#include "runtime/device.h"
#include "runtime/buffer_uop.h"
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
  if (multi::is_multi(dev)) return empty(shape, dtype, multi::split_devices(dev)[0], where).to(dev, where);
  int64_t n = tensor::prod(shape);
  UOp buf = runtime::new_buffer(dev, dtype, n);
  return tensor::wrap(shape == Shape{n} ? buf : tensor::movement(Ops::RESHAPE, buf, shape), dev, where);
}

Tensor Tensor::from_blob(void* data, const Shape& shape, DType dtype, const std::string& device, Loc where) {
  check_shape(shape, "from_blob", where);
  check_value_dtype(dtype, "from_blob", where);
  std::string dev = tensor::resolve_device(device);
  int64_t n = tensor::prod(shape);
  if (multi::is_multi(dev))
    throw ArgumentError("from_blob", "the memory is on one device, not on '" + dev + "': use .to(\"" + dev + "\") after", where);
  if (!runtime::get_device(dev).allocator().host_addressable())
    throw DeviceError("from_blob", dev + "'s memory is not host memory: make the tensor on CPU and move it with .to(\"" +
                                       dev + "\")", where);
  if (n > 0 && data == nullptr) throw ArgumentError("from_blob", "null pointer for shape " + tensor::shape_str(shape), where);
  if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dtype.itemsize()) != 0)
    throw ArgumentError("from_blob", "pointer not aligned to " + dtype.name() + "'s " + std::to_string(dtype.itemsize()) +
                                         " bytes", where);
  UOp buf = runtime::new_buffer(dev, dtype, n);
  if (n > 0) runtime::buffer_of(buf).use_external(data);
  return tensor::wrap(shape == Shape{n} ? buf : tensor::movement(Ops::RESHAPE, buf, shape), dev, where);
}

namespace {

// [lo, hi): the values an integer dtype holds
std::pair<double, double> int_range(DType dtype) {
  int bits = 8 * static_cast<int>(dtype.itemsize());
  return {dtype.is_unsigned() ? 0 : -std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - (dtype.is_unsigned() ? 0 : 1))};
}

// full under the name of the method the user called (zeros, ones_like ...)
Tensor filled(const Shape& shape, double value, DType dtype, const std::string& device, const char* op, SourceLocation where) {
  check_shape(shape, op, where);
  check_value_dtype(dtype, op, where);
  // as PyTorch: an integer dtype takes a value it can hold (truncated toward 0), not NaN, inf or one that wraps
  if (dtype.is_int()) {
    auto [lo, hi] = int_range(dtype);
    if (!(std::trunc(value) >= lo && std::trunc(value) < hi))
      throw ArgumentError(op, "value " + tensor::num_str(value) + " cannot be converted to " + dtype.name() +
                                  " without overflow", where);
  }
  return tensor::const_tensor(value, dtype, shape, tensor::resolve_device(device, op, where));
}

}  // namespace

Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device, Loc where) {
  return filled(shape, value, dtype, device, "full", where);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  return filled(shape, 0, dtype, device, "zeros", where);
}

Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  return filled(shape, 1, dtype, device, "ones", where);
}

Tensor Tensor::arange(double stop, Loc where) { return arange(0, stop, 1, std::nullopt, "", where); }

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype, const std::string& device,
                      Loc where) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw ArgumentError("arange", "needs finite start, stop and a nonzero step (got " + tensor::num_str(start) + ", " +
                                      tensor::num_str(stop) + ", " + tensor::num_str(step) + ")", where);
  bool integral = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  std::string range = "(start " + tensor::num_str(start) + ", stop " + tensor::num_str(stop) + ", step " + tensor::num_str(step) + ")";
  double count = std::ceil((stop - start) / step);  // checked as a double: the cast of a larger one is undefined
  if (count > static_cast<double>(tensor::kMaxElements))
    throw ArgumentError("arange", "needs at most 2^60 elements, got " + tensor::num_str(count) + " " + range, where);
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  // the first and last values: an integer range beyond int32 is int64 (tinygrad's), and an integer dtype must hold
  // them all (tinygrad raises; PyTorch wraps silently)
  double first = start, last = start + static_cast<double>(n - 1) * step;
  auto [lo, hi] = int_range(dtypes::default_int());
  bool beyond_int = n > 0 && (std::min(first, last) < lo || std::max(first, last) >= hi);
  DType dt = dtype.value_or(!integral ? dtypes::default_float() : beyond_int ? dtypes::int64 : dtypes::default_int());
  check_value_dtype(dt, "arange", where);
  if (dt.is_int() && n > 0) {
    auto [dlo, dhi] = int_range(dt);
    if (std::min(first, last) < dlo || std::max(first, last) >= dhi)
      throw ArgumentError("arange", "values from " + tensor::num_str(first) + " to " + tensor::num_str(last) + " " + range +
                                        " do not fit in " + dt.name(), where);
  }
  std::string dev = tensor::resolve_device(device);
  DType idt = n > INT32_MAX ? dtypes::int64 : dtypes::int32;
  Tensor x = tensor::wrap(UOp::make(Ops::IOTA, idt, {tensor::device_uop(dev)}, uop::Arg(n)), dev).cast(dt, where);
  if (step != 1) x = x.mul(Tensor(step, dt, dev, where), where);
  if (start != 0) x = x.add(Tensor(start, dt, dev, where), where);
  return x;
}

Tensor Tensor::eye(int64_t n, int64_t m, DType dtype, const std::string& device, Loc where) try {
  if (m == -1) m = n;
  if (n < 0 || m < 0)
    throw ArgumentError("eye", "needs non-negative sizes, got (" + std::to_string(n) + ", " + std::to_string(m) + ")", where);
  check_value_dtype(dtype, "eye", where);
  Tensor row = arange(0, static_cast<double>(n), 1, dtypes::int32, device, where).reshape({n, 1});
  Tensor col = arange(0, static_cast<double>(m), 1, dtypes::int32, device, where).reshape({1, m});
  return row.eq(col, where).cast(dtype, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "eye", where);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype, const std::string& device, Loc where) {
  if (steps < 0) throw ArgumentError("linspace", "needs a non-negative number of steps, got " + std::to_string(steps), where);
  check_value_dtype(dtype, "linspace", where);
  if (dtype.is_bool()) throw DTypeError("linspace", "cannot make a bool range (as tinygrad)", where);
  if (steps == 1) return full({1}, start, dtype, device, where);
  // in float64, so float32 results round once
  double step = (stop - start) / static_cast<double>(std::max<int64_t>(steps - 1, 1));
  Tensor i = arange(0, static_cast<double>(steps), 1, dtypes::float64, device, where);
  return (i * step + start).cast(dtype, where);
}

Tensor Tensor::empty_like(std::optional<DType> dt, Loc where) const { return empty(shape(), dt.value_or(dtype()), device(), where); }
namespace {

Tensor filled_like(const Tensor& x, double value, std::optional<DType> dt, const char* op, SourceLocation where) {
  if (x.is_symbolic()) return tensor::symbolic_broadcast_to(filled({}, value, dt.value_or(x.dtype()), x.device(), op, where), x.sym_shape());
  return filled(x.shape(), value, dt.value_or(x.dtype()), x.device(), op, where);
}

}  // namespace

Tensor Tensor::zeros_like(std::optional<DType> dt, Loc where) const { return filled_like(*this, 0, dt, "zeros_like", where); }
Tensor Tensor::ones_like(std::optional<DType> dt, Loc where) const { return filled_like(*this, 1, dt, "ones_like", where); }
Tensor Tensor::full_like(double value, std::optional<DType> dt, Loc where) const {
  return filled_like(*this, value, dt, "full_like", where);
}

}  // namespace tg
