// tg::Tensor: a lazy tensor. Every op adds a node to a UOp graph; nothing runs until a result is needed
// (realize(), to_vector(), item(), printing). Realizing schedules the graph into a few fused kernels, compiles
// them (cached in memory and on disk) and runs them; the tensor then holds its buffer.
//
//   tg::Tensor a({{1, 2}, {3, 4}});                 // int32, shape (2, 2)
//   tg::Tensor b = (a.cast(tg::dtypes::float32) * 2 + 1).sum(1);
//   std::cout << b << "\n";                         // [ 8. 16.]
//
// A Tensor is a handle: copies share the same tensor, as in Python. Errors are tg::Error exceptions that name the
// op, the shapes and the file:line of the call that made the bad op.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tg/dim.h"
#include "tg/dtype.h"
#include "tg/error.h"
#include "tg/tensor_args.h"

namespace tg {

namespace uop {
class UOp;
}
class Tensor;
namespace detail {
struct TensorImpl;
Tensor make_tensor(const uop::UOp& u, const std::string& device, SourceLocation created);
Tensor handle(std::shared_ptr<TensorImpl> impl);  // a Tensor sharing impl
}

using Shape = std::vector<int64_t>;
// In a reshape: this dimension as it is (tinygrad's None): x.reshape({tg::keep_dim, -1})
inline constexpr int64_t keep_dim = INT64_MIN;

template <class T>
concept TensorScalar = std::is_arithmetic_v<T>;

// The DType of a C++ element type: float -> float32, double -> float64, int -> int32, bool -> bool ...
template <TensorScalar T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? dtypes::float32 : dtypes::float64;
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) == 1 ? dtypes::int8 : sizeof(T) == 2 ? dtypes::int16 : sizeof(T) == 4 ? dtypes::int32 : dtypes::int64;
  else return sizeof(T) == 1 ? dtypes::uint8 : sizeof(T) == 2 ? dtypes::uint16 : sizeof(T) == 4 ? dtypes::uint32 : dtypes::uint64;
}

// Nested initializer lists of numbers: {{1, 2}, {3, 4}}. Without a dtype, a list holding any floating value is
// float32, else any integer makes it int32, else it is bool (tinygrad's defaults for Python lists).
class NestedList {
 public:
  template <TensorScalar T> NestedList(T v) : leaf_(true), value_(to_value(v)) {}
  NestedList(std::initializer_list<NestedList> items) : items_(items) {}
  // lists of one element type, up to 4 levels deep (Tensor's typed constructors build these)
  template <class L> static NestedList of(const L& l) {
    if constexpr (std::is_arithmetic_v<L>) {
      return NestedList(l);
    } else {
      NestedList n{};  // an empty list
      for (const auto& x : l) n.items_.push_back(of(x));
      return n;
    }
  }

 private:
  friend class Tensor;
  friend struct NestedListAccess;
  template <TensorScalar T> static ConstValue to_value(T v) {
    if constexpr (std::is_same_v<T, bool>) return v;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
    else if constexpr (std::is_unsigned_v<T>) return static_cast<uint64_t>(v);
    else return static_cast<int64_t>(v);
  }
  bool leaf_ = false;
  ConstValue value_{};
  std::vector<NestedList> items_;
};

class Tensor;

// The left operand of an operator, with the caller's file:line (operators cannot take a defaulted argument).
struct TensorAt {
  const Tensor& t;
  SourceLocation where;
  TensorAt(const Tensor& tensor, SourceLocation w = SourceLocation::current()) : t(tensor), where(w) {}
};

class Tensor {
 public:
  using Loc = SourceLocation;

  Tensor();  // an empty handle; any op on it throws
  // ---- creation ----
  Tensor(NestedList data, std::optional<DType> dtype = std::nullopt, const std::string& device = "",
         Loc where = Loc::current());
  // Homogeneous lists: Tensor({2}) is shape (1,), not a scalar (these win over the scalar constructor for braces).
  template <TensorScalar T>
  Tensor(std::initializer_list<T> d, std::optional<DType> dt = std::nullopt, const std::string& dev = "", Loc w = Loc::current())
      : Tensor(NestedList::of(d), dt, dev, w) {}
  template <TensorScalar T>
  Tensor(std::initializer_list<std::initializer_list<T>> d, std::optional<DType> dt = std::nullopt, const std::string& dev = "",
         Loc w = Loc::current())
      : Tensor(NestedList::of(d), dt, dev, w) {}
  template <TensorScalar T>
  Tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> d, std::optional<DType> dt = std::nullopt,
         const std::string& dev = "", Loc w = Loc::current())
      : Tensor(NestedList::of(d), dt, dev, w) {}
  // A 0-d tensor. Without a dtype: float32 for floating values, int32 for int and smaller, int64 for wider
  // integers, bool for bool. The value stays a constant in the graph (no buffer) until it is realized.
  template <TensorScalar T>
  explicit Tensor(T value, std::optional<DType> dtype = std::nullopt, const std::string& device = "",
                  Loc where = Loc::current())
      : Tensor(scalar_tensor(NestedList::to_value(value), dtype.value_or(scalar_default<T>()), device, where)) {}
  // Host data in row-major order; its element type gives the dtype (std::vector<float> is float32).
  template <TensorScalar T>
  Tensor(std::span<const T> data, const Shape& shape, const std::string& device = "", Loc where = Loc::current())
      : Tensor(from_host(data.data(), data.size(), dtype_of<T>(), shape, device, where)) {}
  template <TensorScalar T>
  Tensor(const std::vector<T>& data, const Shape& shape, const std::string& device = "", Loc where = Loc::current()) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits: one byte per element here
      std::vector<uint8_t> bytes(data.begin(), data.end());
      *this = from_host(bytes.data(), bytes.size(), dtypes::bool_, shape, device, where);
    } else {
      *this = from_host(data.data(), data.size(), dtype_of<T>(), shape, device, where);
    }
  }

  static Tensor empty(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                      Loc where = Loc::current());
  static Tensor full(const Shape& shape, double value, DType dtype = dtypes::default_float(), const std::string& device = "",
                     Loc where = Loc::current());
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                      Loc where = Loc::current());
  static Tensor ones(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                     Loc where = Loc::current());
  // [0, stop) and [start, stop) by step; int32 unless a value is fractional (then float32) or a dtype is given.
  static Tensor arange(double stop, Loc where = Loc::current());
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt,
                       const std::string& device = "", Loc where = Loc::current());
  // Uniform in [0, 1), generated on the device by a counter-based generator (Threefry-2x32): random tensors are
  // lazy and fuse like any other op, and the same seed gives the same numbers.
  static Tensor rand(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                     Loc where = Loc::current());
  // The caller's memory as a tensor, without a copy and without taking ownership (tinygrad's from_blob): `data`
  // holds shape's elements of dtype, row-major, aligned to the dtype's size, on a device whose memory is host
  // memory (the CPU). It must stay valid while the tensor or anything computed lazily from it may still be
  // realized; it is read when kernels run, and never written or freed by tinygrad.cpp.
  static Tensor from_blob(void* data, const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "",
                          Loc where = Loc::current());
  static void manual_seed(uint64_t seed);

  static Tensor eye(int64_t n, int64_t m = -1, DType dtype = dtypes::default_float(), const std::string& device = "",
                    Loc where = Loc::current());
  // `steps` values from start to stop, both included
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = dtypes::default_float(),
                         const std::string& device = "", Loc where = Loc::current());
  // Standard normal (Box-Muller over two rand draws).
  static Tensor randn(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                      Loc where = Loc::current());
  // Integers uniform in [low, high).
  static Tensor randint(const Shape& shape, int64_t low = 0, int64_t high = 10, DType dtype = dtypes::int32,
                        const std::string& device = "", Loc where = Loc::current());
  static Tensor normal(const Shape& shape, double mean = 0, double std = 1, DType dtype = dtypes::default_float(),
                       const std::string& device = "", Loc where = Loc::current());
  static Tensor uniform(const Shape& shape, double low = 0, double high = 1, DType dtype = dtypes::default_float(),
                        const std::string& device = "", Loc where = Loc::current());
  // Weight initializations as tinygrad's: uniform(-1, 1) / sqrt(numel); Glorot/Xavier; He/Kaiming with
  // negative slope a, fan_in = prod(shape[1:]).
  static Tensor scaled_uniform(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                               Loc where = Loc::current());
  static Tensor glorot_uniform(const Shape& shape, DType dtype = dtypes::default_float(), const std::string& device = "",
                               Loc where = Loc::current());
  static Tensor kaiming_uniform(const Shape& shape, double a = 0.01, DType dtype = dtypes::default_float(),
                                const std::string& device = "", Loc where = Loc::current());
  static Tensor kaiming_normal(const Shape& shape, double a = 0.01, DType dtype = dtypes::default_float(),
                               const std::string& device = "", Loc where = Loc::current());
  // A random permutation of 0..n-1.
  static Tensor randperm(int64_t n, DType dtype = dtypes::int32, const std::string& device = "", Loc where = Loc::current());
  // int32 indices drawn from each row of this (1-d or 2-d) tensor of non-negative weights: with replacement by the
  // inverse CDF, without by the Efraimidis-Spirakis keys (PyTorch's and tinygrad's multinomial)
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false, Loc where = Loc::current()) const;
  // Same shape and device (and dtype unless given).
  Tensor empty_like(std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;
  Tensor zeros_like(std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;
  Tensor ones_like(std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;
  Tensor full_like(double value, std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;
  Tensor rand_like(std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;
  Tensor randn_like(std::optional<DType> dtype = std::nullopt, Loc where = Loc::current()) const;

  // ---- properties ----
  // The sizes; a tensor with a symbolic size (a shrink to a bound Variable) raises ShapeError: sym_shape() has them.
  const Shape& shape() const;
  std::vector<Dim> sym_shape() const;
  bool is_symbolic() const;
  int64_t ndim() const;
  int64_t numel() const;
  DType dtype() const;
  const std::string& device() const;
  int64_t element_size() const { return dtype().itemsize(); }
  int64_t nbytes() const { return numel() * element_size(); }
  bool defined() const { return impl_ != nullptr; }
  bool is_floating_point() const { return dtype().is_float(); }
  int64_t size(int64_t dim, Loc where = Loc::current()) const;  // shape()[dim]; negative dims count from the end

  // ---- elementwise primitives ----
  Tensor neg(Loc where = Loc::current()) const;
  Tensor exp2(Loc where = Loc::current()) const;
  Tensor log2(Loc where = Loc::current()) const;
  Tensor sin(Loc where = Loc::current()) const;
  Tensor sqrt(Loc where = Loc::current()) const;
  Tensor reciprocal(Loc where = Loc::current()) const;
  Tensor logical_not(Loc where = Loc::current()) const;
  Tensor cast(DType dtype, Loc where = Loc::current()) const;
  // The same bytes as another dtype. Between sizes the last dim is regrouped, little-endian: (.., 8) uint8 ->
  // (.., 1) uint64 and back, as numpy's view(dtype).
  Tensor bitcast(DType dtype, Loc where = Loc::current()) const;
  // tinygrad's cast shorthands that are C++ names (float(), int() ... are keywords: use cast)
  Tensor half(Loc where = Loc::current()) const { return cast(dtypes::float16, where); }
  Tensor bfloat16(Loc where = Loc::current()) const { return cast(dtypes::bfloat16, where); }

  Tensor add(const Tensor& o, Loc where = Loc::current()) const;
  Tensor sub(const Tensor& o, Loc where = Loc::current()) const;
  Tensor mul(const Tensor& o, Loc where = Loc::current()) const;
  Tensor div(const Tensor& o, Loc where = Loc::current()) const;   // true division: ints give float32
  // rounding_mode "trunc" or "floor" (PyTorch's div); the dtype is the promoted one, so ints stay ints
  Tensor div(const Tensor& o, const std::string& rounding_mode, Loc where = Loc::current()) const;
  Tensor idiv(const Tensor& o, Loc where = Loc::current()) const;  // integer division, truncating (C's /)
  Tensor mod(const Tensor& o, Loc where = Loc::current()) const;   // remainder with the divisor's sign (Python's %)
  Tensor maximum(const Tensor& o, Loc where = Loc::current()) const;  // NaN if either is NaN
  Tensor minimum(const Tensor& o, Loc where = Loc::current()) const;
  Tensor bitwise_and(const Tensor& o, Loc where = Loc::current()) const;
  Tensor bitwise_or(const Tensor& o, Loc where = Loc::current()) const;
  Tensor bitwise_xor(const Tensor& o, Loc where = Loc::current()) const;
  Tensor lshift(const Tensor& o, Loc where = Loc::current()) const;
  Tensor rshift(const Tensor& o, Loc where = Loc::current()) const;
  Tensor lt(const Tensor& o, Loc where = Loc::current()) const;
  Tensor gt(const Tensor& o, Loc where = Loc::current()) const;
  Tensor le(const Tensor& o, Loc where = Loc::current()) const;
  Tensor ge(const Tensor& o, Loc where = Loc::current()) const;
  Tensor eq(const Tensor& o, Loc where = Loc::current()) const;
  Tensor ne(const Tensor& o, Loc where = Loc::current()) const;
  // this (cast to bool) ? x : y, broadcast together
  Tensor where(const Tensor& x, const Tensor& y, Loc where = Loc::current()) const;
  // A C++ number on the other side is "weak", as a Python scalar is in tinygrad: float32 * 2.0 stays float32,
  // int8 + 1 stays int8, int32 * 0.5 is float32.
  template <TensorScalar T> Tensor add(T v, Loc w = Loc::current()) const { return add(scalar_like(v, w), w); }
  template <TensorScalar T> Tensor sub(T v, Loc w = Loc::current()) const { return sub(scalar_like(v, w), w); }
  template <TensorScalar T> Tensor mul(T v, Loc w = Loc::current()) const { return mul(scalar_like(v, w), w); }
  template <TensorScalar T> Tensor div(T v, Loc w = Loc::current()) const { return div(scalar_like(v, w), w); }
  template <TensorScalar T> Tensor maximum(T v, Loc w = Loc::current()) const { return maximum(scalar_like(v, w), w); }
  template <TensorScalar T> Tensor minimum(T v, Loc w = Loc::current()) const { return minimum(scalar_like(v, w), w); }
  template <TensorScalar T, TensorScalar U> Tensor where(T x, U y, Loc w = Loc::current()) const {
    return where(Tensor(x, std::nullopt, device(), w), Tensor(y, std::nullopt, device(), w), w);
  }
  template <TensorScalar U> Tensor where(const Tensor& x, U y, Loc w = Loc::current()) const {
    return where(x, x.scalar_like(y, w), w);
  }
  template <TensorScalar T> Tensor where(T x, const Tensor& y, Loc w = Loc::current()) const {
    return where(y.scalar_like(x, w), y, w);
  }

  // ---- elementwise math, composed from the primitives ----
  Tensor exp(Loc where = Loc::current()) const;
  Tensor log(Loc where = Loc::current()) const;
  Tensor rsqrt(Loc where = Loc::current()) const;
  Tensor cos(Loc where = Loc::current()) const;
  Tensor tan(Loc where = Loc::current()) const;
  Tensor asin(Loc where = Loc::current()) const;
  Tensor acos(Loc where = Loc::current()) const;
  Tensor atan(Loc where = Loc::current()) const;
  Tensor sinh(Loc where = Loc::current()) const;
  Tensor cosh(Loc where = Loc::current()) const;
  Tensor tanh(Loc where = Loc::current()) const;
  Tensor asinh(Loc where = Loc::current()) const;
  Tensor acosh(Loc where = Loc::current()) const;
  Tensor atanh(Loc where = Loc::current()) const;
  Tensor erf(Loc where = Loc::current()) const;  // max abs error 1.5e-7 (Abramowitz & Stegun 7.1.26)
  Tensor abs(Loc where = Loc::current()) const;
  Tensor sign(Loc where = Loc::current()) const;
  Tensor trunc(Loc where = Loc::current()) const;
  Tensor floor(Loc where = Loc::current()) const;
  Tensor ceil(Loc where = Loc::current()) const;
  Tensor round(Loc where = Loc::current()) const;  // half to even, as numpy and PyTorch
  Tensor square(Loc where = Loc::current()) const;
  Tensor isnan(Loc where = Loc::current()) const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true, Loc where = Loc::current()) const;
  Tensor isfinite(Loc where = Loc::current()) const;
  Tensor bitwise_not(Loc where = Loc::current()) const;
  Tensor log10(Loc where = Loc::current()) const;
  // |this| with the sign of other (-0.0 counts as negative); a float result, as PyTorch
  Tensor copysign(const Tensor& other, Loc where = Loc::current()) const;
  template <TensorScalar T> Tensor copysign(T v, Loc w = Loc::current()) const { return copysign(scalar_like(v, w), w); }
  // C's fmod: the remainder with the dividend's sign (mod() takes the divisor's, as Python's %)
  Tensor fmod(const Tensor& other, Loc where = Loc::current()) const;
  template <TensorScalar T> Tensor fmod(T v, Loc w = Loc::current()) const { return fmod(scalar_like(v, w), w); }
  Tensor logaddexp(const Tensor& other, Loc where = Loc::current()) const;  // log(exp(this) + exp(other)), stable
  template <TensorScalar T> Tensor logaddexp(T v, Loc w = Loc::current()) const { return logaddexp(scalar_like(v, w), w); }
  // |this - other| <= atol + rtol * |other| elementwise (infinities equal to themselves; NaN equal to NaN only with
  // equal_nan); allclose: all of them, read back as a bool (this realizes)
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false, Loc where = Loc::current()) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false, Loc where = Loc::current()) const;
  // x ** e. Negative bases work with integer exponents; integer tensors give integers.
  Tensor pow(const Tensor& exponent, Loc where = Loc::current()) const;
  template <TensorScalar T> Tensor pow(T e, Loc w = Loc::current()) const { return pow(scalar_like(e, w), w); }
  // this + (end - this) * weight
  Tensor lerp(const Tensor& end, const Tensor& weight, Loc where = Loc::current()) const;
  Tensor lerp(const Tensor& end, double weight, Loc where = Loc::current()) const;
  // Limits each value to [min, max]; either bound may be absent.
  Tensor clip(std::optional<double> min, std::optional<double> max, Loc where = Loc::current()) const;
  Tensor clamp(std::optional<double> min, std::optional<double> max, Loc where = Loc::current()) const;

  // ---- activations ----
  Tensor relu(Loc where = Loc::current()) const;
  Tensor relu6(Loc where = Loc::current()) const;
  Tensor leaky_relu(double neg_slope = 0.01, Loc where = Loc::current()) const;
  Tensor elu(double alpha = 1.0, Loc where = Loc::current()) const;
  Tensor celu(double alpha = 1.0, Loc where = Loc::current()) const;
  Tensor selu(Loc where = Loc::current()) const;
  Tensor sigmoid(Loc where = Loc::current()) const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5, Loc where = Loc::current()) const;
  Tensor logsigmoid(Loc where = Loc::current()) const;
  Tensor hardtanh(double min_val = -1, double max_val = 1, Loc where = Loc::current()) const;
  // approximate "tanh" (tinygrad's default) or "none" (the erf form, PyTorch's default)
  Tensor gelu(const std::string& approximate = "tanh", Loc where = Loc::current()) const;
  Tensor quick_gelu(Loc where = Loc::current()) const;
  Tensor silu(Loc where = Loc::current()) const;
  Tensor swish(Loc where = Loc::current()) const;
  Tensor mish(Loc where = Loc::current()) const;
  Tensor softplus(double beta = 1, Loc where = Loc::current()) const;
  Tensor softsign(Loc where = Loc::current()) const;
  Tensor hardswish(Loc where = Loc::current()) const;

  // ---- reductions: over all axes (the default), one axis, or a list; negative axes count from the end ----
  Tensor sum(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor prod(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  // ... computed in dtype (the input cast to it first; PyTorch's and tinygrad's dtype argument)
  Tensor sum(Axes axis, bool keepdim, DType dtype, Loc where = Loc::current()) const;
  Tensor prod(Axes axis, bool keepdim, DType dtype, Loc where = Loc::current()) const;
  Tensor max(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor min(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor mean(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  // sum((x - mean)^2) / (N - correction)
  Tensor var(Axes axis = {}, bool keepdim = false, double correction = 1, Loc where = Loc::current()) const;
  Tensor std(Axes axis = {}, bool keepdim = false, double correction = 1, Loc where = Loc::current()) const;
  std::pair<Tensor, Tensor> var_mean(Axes axis = {}, bool keepdim = false, double correction = 1, Loc where = Loc::current()) const;
  std::pair<Tensor, Tensor> std_mean(Axes axis = {}, bool keepdim = false, double correction = 1, Loc where = Loc::current()) const;
  Tensor any(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor all(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor count_nonzero(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  // The index of the first maximum (minimum) as int32; without an axis, of the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor logsumexp(Axes axis = {}, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor softmax(int64_t axis = -1, Loc where = Loc::current()) const;
  Tensor log_softmax(int64_t axis = -1, Loc where = Loc::current()) const;
  // computed in `dtype` (a float dtype), as PyTorch's softmax(dim, dtype): the input is cast first
  Tensor softmax(int64_t axis, DType dtype, Loc where = Loc::current()) const;
  Tensor log_softmax(int64_t axis, DType dtype, Loc where = Loc::current()) const;
  Tensor softmin(int64_t axis = -1, Loc where = Loc::current()) const;  // softmax(-x)
  // Running reductions along one axis.
  Tensor cumsum(int64_t axis = 0, Loc where = Loc::current()) const;
  Tensor cumprod(int64_t axis = 0, Loc where = Loc::current()) const;
  // (values, int32 indices): the running maximum (minimum) and the last index where it was reached (PyTorch's);
  // NaN is the extreme once seen
  std::pair<Tensor, Tensor> cummax(int64_t axis = 0, Loc where = Loc::current()) const;
  std::pair<Tensor, Tensor> cummin(int64_t axis = 0, Loc where = Loc::current()) const;
  Tensor logcumsumexp(int64_t axis = 0, Loc where = Loc::current()) const;

  // ---- movement: zero copy, through the ShapeTracker ----
  // one dimension may be -1; tg::keep_dim keeps that dimension's size (tinygrad's None)
  Tensor reshape(const DimList& shape, Loc where = Loc::current()) const;
  Tensor view(const Shape& shape, Loc where = Loc::current()) const;     // = reshape
  Tensor permute(const std::vector<int64_t>& order, Loc where = Loc::current()) const;
  Tensor expand(const DimList& shape, Loc where = Loc::current()) const;  // -1 keeps a dimension; may add leading ones
  // (before, after) per dimension; negative amounts remove elements; the new elements are `value`
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value = 0, Loc where = Loc::current()) const;
  // Padding with a mode: constant (value), reflect (mirror without the edge), replicate (edge), circular (wrap).
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, PadMode mode, double value = 0,
             Loc where = Loc::current()) const;
  // PyTorch's flat padding of the last dimensions: (left, right, top, bottom, ...).
  Tensor pad2d(const std::vector<int64_t>& padding, double value = 0, Loc where = Loc::current()) const;
  // [begin, end) per dimension; a bound Variable's Dim as an end gives a symbolic size (x.shrink({{0, v.bind(5)}}))
  Tensor shrink(const DimRanges& ranges, Loc where = Loc::current()) const;
  // Padded at the end (zeros) or cut to `shape`, one entry per dimension (tg::keep_dim keeps one)
  Tensor pad_to(const Shape& shape, Loc where = Loc::current()) const;
  Tensor shrink_to(const Shape& shape, Loc where = Loc::current()) const;
  // einops' rearrange: "b (h w) c -> b h w c" with the sizes a split needs ({{"h", 2}}); "1" is a unit dimension and
  // "..." the dimensions not named
  Tensor rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes = {},
                   Loc where = Loc::current()) const;
  Tensor flip(Axes axis, Loc where = Loc::current()) const;
  Tensor transpose(int64_t dim0 = 1, int64_t dim1 = 0, Loc where = Loc::current()) const;
  Tensor T(Loc where = Loc::current()) const;  // transpose(1, 0)
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1, Loc where = Loc::current()) const;
  Tensor unflatten(int64_t dim, const Shape& sizes, Loc where = Loc::current()) const;
  Tensor squeeze(Loc where = Loc::current()) const;  // every dimension of size 1
  Tensor squeeze(int64_t dim, Loc where = Loc::current()) const;
  Tensor unsqueeze(int64_t dim, Loc where = Loc::current()) const;
  Tensor repeat(const Shape& repeats, Loc where = Loc::current()) const;  // tiles, as torch.Tensor.repeat
  // each element `repeats` times along dim (the flattened tensor without one)
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt, Loc where = Loc::current()) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0, Loc where = Loc::current());
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0, Loc where = Loc::current());
  // Pieces of `size` along dim (the last may be smaller), or of the given sizes.
  std::vector<Tensor> split(int64_t size, int64_t dim = 0, Loc where = Loc::current()) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t dim = 0, Loc where = Loc::current()) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0, Loc where = Loc::current()) const;
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims, Loc where = Loc::current()) const;
  // indexing "ij" (matrix) or "xy" (Cartesian)
  static std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij",
                                      Loc where = Loc::current());
  Tensor triu(int64_t diagonal = 0, Loc where = Loc::current()) const;
  // The diagonal of dims dim1 and dim2 (offset above it when positive, below when negative), as the last dimension
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1, Loc where = Loc::current()) const;
  // PyTorch's diag: a 1-d tensor becomes a square matrix with it on the offset diagonal; a 2-d one gives its diagonal
  Tensor diag(int64_t offset = 0, Loc where = Loc::current()) const;
  // Every window of `size` elements along dim, `step` apart, as a new last dimension (torch.Tensor.unfold)
  Tensor unfold(int64_t dim, int64_t size, int64_t step, Loc where = Loc::current()) const;
  Tensor tril(int64_t diagonal = 0, Loc where = Loc::current()) const;

  // ---- indexing ----
  // Python's x[...]: ints (negative count from the end), slices with any step, newaxis, ellipsis, and integer
  // tensors (advanced indexing, broadcast together as numpy does).
  Tensor getitem(const std::vector<Index>& indices, Loc where = Loc::current()) const;
  Tensor operator[](const IndexAt& at) const { return getitem(at.indices, at.where); }
  // x[...] = value: the tensor (and every handle to it) takes the new values. On a realized tensor (or a view of
  // one) they are written into its buffer at once, so views of it see them (PyTorch's aliasing); on a lazy tensor
  // the new value is lazy too, and gradients flow through it. Integer tensor indices write where they point (the
  // last write wins where they repeat, as numpy's); a bool mask x[mask] writes a value broadcast over the selected
  // elements, or one value row per true element.
  void setitem(const std::vector<Index>& indices, const Tensor& value, Loc where = Loc::current());
  void setitem(const std::vector<Index>& indices, double value, Loc where = Loc::current());
  // Replaces this tensor's values with x's (same shape, cast to this dtype); handles share it, and tensors computed
  // from the old values keep them. A realized tensor, or a view of one (cache.shrink(...).assign(row)), is written
  // in place at once: one kernel stores x through the view into the buffer, and every view of that buffer sees the
  // new values, as in PyTorch (an expanded or padded view cannot be written: ArgumentError); an x that reads the
  // buffer elsewhere (t[1:].assign(t[:-1])) is computed into a buffer of its own first. Otherwise, and for a
  // whole realized tensor whose x reads its old value (w.assign(w - lr * g)), it is lazy: computed when this tensor
  // is next realized, with whatever else is realized then; gradients flow through a lazy assign, not an in-place one.
  Tensor& assign(const Tensor& x, Loc where = Loc::current());
  // This tensor (and every handle to it) becomes x itself, with no copy and no cast (tinygrad's replace). The shape,
  // dtype and device must match: a tensor's dtype and device are fixed when it is made, so in C++ a tensor moved to
  // another device is a new handle, t = t.to("OPENCL"), where tinygrad has to_().
  Tensor& replace(const Tensor& x, Loc where = Loc::current());
  Tensor gather(int64_t dim, const Tensor& index, Loc where = Loc::current()) const;
  // out[index[i][j]][j] = src[i][j] (dim 0), and so on; the last write wins where indices repeat.
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, Loc where = Loc::current()) const;
  Tensor scatter(int64_t dim, const Tensor& index, double value, Loc where = Loc::current()) const;
  // reduce "add" or "multiply": accumulated into this tensor's values (scatter_reduce "sum"/"prod" with self)
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce, Loc where = Loc::current()) const;
  Tensor scatter(int64_t dim, const Tensor& index, double value, const std::string& reduce, Loc where = Loc::current()) const;
  // reduce: "sum", "prod", "mean", "amax", "amin"
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true, Loc where = Loc::current()) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value, Loc where = Loc::current()) const;
  Tensor masked_fill(const Tensor& mask, double value, Loc where = Loc::current()) const;
  // The elements where mask is true, flattened (realizes the mask to learn the count).
  Tensor masked_select(const Tensor& mask, Loc where = Loc::current()) const;
  // ... into exactly `size` elements, the rest fill_value (lazy: nothing is realized)
  Tensor masked_select(const Tensor& mask, int64_t size, double fill_value = 0, Loc where = Loc::current()) const;
  // The int32 indices (n, ndim) of the nonzero elements, row-major (realizes the tensor to learn n); with a size,
  // exactly that many rows, the rest fill_value (lazy)
  Tensor nonzero(Loc where = Loc::current()) const;
  Tensor nonzero(int64_t size, int64_t fill_value = 0, Loc where = Loc::current()) const;
  // int tensor -> one more dimension of num_classes (max + 1 when -1; that realizes the tensor)
  Tensor one_hot(int64_t num_classes = -1, Loc where = Loc::current()) const;
  // (values, int32 indices), stable; NaN sorts as the largest value
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false, Loc where = Loc::current()) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, Loc where = Loc::current()) const;
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true,
                                 Loc where = Loc::current()) const;

  // ---- linear algebra and nn functional ----
  Tensor dot(const Tensor& w, Loc where = Loc::current()) const;
  // numpy's matmul: 1-d operands are vectors, leading dimensions broadcast
  Tensor matmul(const Tensor& w, Loc where = Loc::current()) const;
  // x @ weight + bias with weight of shape (in, out), as tinygrad's (nn::Linear stores (out, in) and transposes)
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, Loc where = Loc::current()) const;
  // "ij,jk->ik" and the rest of numpy's notation, with an ellipsis for any leading dimensions ("...ij,...jk")
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands, Loc where = Loc::current());
  // The same with the products summed in `acc` and the result in `acc` (tinygrad's dtype argument): int8 operands
  // summed in int32, float16 ones in float32
  Tensor dot(const Tensor& w, DType acc, Loc where = Loc::current()) const;
  Tensor matmul(const Tensor& w, DType acc, Loc where = Loc::current()) const;
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias, DType acc, Loc where = Loc::current()) const;
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands, DType acc, Loc where = Loc::current());
  // Q R = this over the last two dims (batched over the rest): Q (..., m, m) orthogonal, R (..., m, n) upper
  // triangular, as tinygrad's qr (PyTorch's mode="complete", same signs: Householder reflections as LAPACK's)
  std::pair<Tensor, Tensor> qr(Loc where = Loc::current()) const;
  // U, S, Vh with this = U diag(S) Vh: S (..., k) descending, k = min(m, n); U (..., m, m) and Vh (..., n, n), or
  // (..., m, k) and (..., k, n) without full_matrices. One-sided Jacobi; columns of U and rows of Vh are unique up
  // to sign (and within repeated singular values), as with any SVD.
  std::tuple<Tensor, Tensor, Tensor> svd(bool full_matrices = true, Loc where = Loc::current()) const;
  // Keccak over the last dimension's bytes (any dtype, as its little-endian bytes): "sha3_224", "sha3_256",
  // "sha3_384", "sha3_512", "shake_128" and "shake_256" (16 and 32 bytes out, as tinygrad's), or a rate, domain byte
  // and output length. uint8 (..., digest bytes).
  Tensor keccak(const std::string& cfg = "sha3_256", Loc where = Loc::current()) const;
  Tensor keccak(int64_t rate, int64_t suffix, int64_t out_bytes, Loc where = Loc::current()) const;
  // tinygrad's 16-byte hash of the whole tensor's bytes (SHAKE-128 over 4 KiB pieces of 1 MiB chunks, then over
  // the digests), equal to tinygrad's for the same bytes
  Tensor hash(Loc where = Loc::current()) const;
  // Newton-Schulz iterations toward the orthogonal factor of the last two dims (the Muon optimizer's):
  // G = this / (|G|_F + eps), then `steps` times G = sum_i params[i] (G G^T)^i G
  Tensor newton_schulz(int64_t steps, const std::vector<double>& params, double eps = 1e-7, Loc where = Loc::current()) const;
  // The n-d convolution (spatial dims from the weight: (cout, cin/groups, k...)). padding: one value, one per
  // spatial dim, or (before, after) for each, last dimension first as PyTorch's F.pad.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                Ints stride = 1, Ints dilation = 1, Ints padding = 0, Loc where = Loc::current()) const;
  // weight (cin, cout/groups, k...), as PyTorch's
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                          Ints stride = 1, Ints dilation = 1, Ints padding = 0, Ints output_padding = 0,
                          Loc where = Loc::current()) const;
  // Pooling over the last len(kernel) dims (a number: the last 2; {3}: the last one, 1-d pooling); stride defaults
  // to the kernel size.
  Tensor avg_pool2d(Ints kernel_size = {2, 2}, std::optional<Ints> stride = std::nullopt, Ints dilation = 1,
                    Ints padding = 0, bool ceil_mode = false, bool count_include_pad = true, Loc where = Loc::current()) const;
  Tensor max_pool2d(Ints kernel_size = {2, 2}, std::optional<Ints> stride = std::nullopt, Ints dilation = 1,
                    Ints padding = 0, bool ceil_mode = false, Loc where = Loc::current()) const;
  // (values, int32 indices): each maximum's flat index within its input plane (the last len(kernel) dims), PyTorch's
  // return_indices=True
  std::pair<Tensor, Tensor> max_pool2d_with_indices(Ints kernel_size = {2, 2}, std::optional<Ints> stride = std::nullopt,
                                                    Ints dilation = 1, Ints padding = 0, bool ceil_mode = false,
                                                    Loc where = Loc::current()) const;
  // The inverse: each value written at its index of an output plane (zeros elsewhere); the output size is computed
  // from the pool's arguments unless given (its last len(kernel) dims)
  Tensor max_unpool2d(const Tensor& indices, Ints kernel_size = {2, 2}, std::optional<Ints> stride = std::nullopt,
                      Ints dilation = 1, Ints padding = 0, std::optional<Shape> output_size = std::nullopt,
                      Loc where = Loc::current()) const;
  Tensor adaptive_avg_pool2d(Ints output_size, Loc where = Loc::current()) const;
  // Resizes the last len(size) dims; mode "nearest", "linear" (any number of dims: bilinear, trilinear)
  Tensor interpolate(const Shape& size, const std::string& mode = "linear", bool align_corners = false,
                     Loc where = Loc::current()) const;
  // Zeroes elements with probability p and scales the rest by 1/(1-p) while Tensor::training is on.
  Tensor dropout(double p = 0.5, Loc where = Loc::current()) const;
  Tensor layernorm(Axes axis = -1, double eps = 1e-5, Loc where = Loc::current()) const;
  // x / max(||x||_p, eps) along dim (F.normalize); p = 0 counts the nonzero elements, p = inf takes the largest, a
  // negative p is (sum |x|^p)^(1/p) as PyTorch's
  Tensor normalize(double p = 2, int64_t dim = 1, double eps = 1e-12, Loc where = Loc::current()) const;
  // (x - mean) * invstd * weight + bias with the statistics along `axis`
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                   const Tensor& invstd, Axes axis = 1, Loc where = Loc::current()) const;
  // softmax(q k^T / sqrt(d) + mask) v over the last two dims; enable_gqa: key and value may have fewer heads (dim
  // -3) than the query, each serving a group of query heads
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0,
                                      bool is_causal = false, bool enable_gqa = false, Loc where = Loc::current()) const;
  // Losses. Y holds class indices (int) or, for cross_entropy, probabilities of this tensor's shape.
  Tensor cross_entropy(const Tensor& Y, Reduction reduction = Reduction::mean, double label_smoothing = 0,
                       Loc where = Loc::current()) const;
  Tensor sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index = -1, double label_smoothing = 0,
                                         Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;
  Tensor binary_crossentropy(const Tensor& Y, Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;
  Tensor binary_crossentropy_logits(const Tensor& Y, Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;
  // ... with the positive term of each class weighted by pos_weight (broadcast to the logits, PyTorch's pos_weight)
  Tensor binary_crossentropy_logits(const Tensor& Y, const Tensor& pos_weight, Reduction reduction = Reduction::mean,
                                    Loc where = Loc::current()) const;
  // this holds log-probabilities (N, C, ...)
  Tensor nll_loss(const Tensor& Y, const std::optional<Tensor>& weight = std::nullopt, int64_t ignore_index = -100,
                  Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;
  Tensor mse(const Tensor& Y, Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;
  Tensor l1(const Tensor& Y, Reduction reduction = Reduction::mean, Loc where = Loc::current()) const;

  // Training mode (tinygrad's Tensor.training), read by dropout and batchnorm; set it with tg::TrainGuard. Per
  // thread, as PyTorch's: a guard in one thread leaves the others alone, and a new thread starts with it off.
  static thread_local bool training;

  // ---- autograd ----
  // Gradients are computed on the lazy graph when asked for, one rule per primitive, so every method above is
  // differentiable; the gradients are lazy tensors too (they fuse, and can be differentiated again).
  Tensor& requires_grad_(bool on = true, Loc where = Loc::current());  // float tensors only
  bool requires_grad() const;
  Tensor grad() const;  // an undefined handle (defined() false) until backward() reaches this tensor
  Tensor& zero_grad();  // drops the accumulated gradient
  // d(this)/d(t) added to t.grad() for every tensor t in this graph that requires a gradient. Without an upstream
  // gradient this tensor must hold one element. Call it before realizing intermediates of the graph: realizing
  // a tensor replaces its graph by its buffer.
  Tensor& backward(std::optional<Tensor> gradient = std::nullopt, Loc where = Loc::current());
  // tinygrad's backward: as backward(), for every live floating-point tensor in this graph (parameters, inputs and
  // intermediates alike), whether it requires a gradient or not. Python's Tensor.backward is this one.
  Tensor& backward_all(std::optional<Tensor> gradient = std::nullopt, Loc where = Loc::current());
  // replaces the accumulated gradient (an undefined handle drops it), as assigning .grad in PyTorch and tinygrad;
  // cast to this tensor's dtype and moved to its device
  Tensor& set_grad(const Tensor& grad, Loc where = Loc::current());
  // tinygrad's functional form: the gradients of this tensor for each target, leaving .grad alone.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, std::optional<Tensor> gradient = std::nullopt,
                               Loc where = Loc::current()) const;
  Tensor detach(Loc where = Loc::current()) const;  // the same values, with no gradient flowing back
  // While set (tg::NoGradGuard), new tensors are detached from the graph. Per thread, as PyTorch's grad mode.
  static thread_local bool no_grad;

  Tensor contiguous(Loc where = Loc::current()) const;
  // A copy in a buffer of its own (lazy; gradients flow through it), as tinygrad's and PyTorch's clone
  Tensor clone(Loc where = Loc::current()) const;
  // the same value; backward() realizes its gradient as a contiguous buffer in this tensor's shape (tinygrad's)
  Tensor contiguous_backward(Loc where = Loc::current()) const;
  // x through each layer in order (tinygrad's Tensor.sequential): any callables taking a Tensor, or a vector of them
  //   x.sequential(l1, [](const Tensor& t) { return t.relu(); }, l2);   x.sequential(model.layers);
  template <class F, class... Rest> Tensor sequential(const F& first, const Rest&... rest) const {
    Tensor x = first(*this);
    ((x = rest(x)), ...);
    return x;
  }
  template <class T> Tensor sequential(const std::vector<T>& layers) const {
    Tensor x = *this;
    for (const T& f : layers) x = f(x);
    return x;
  }
  // A device name with commas ("CPU:0,CPU:1") names several devices: the tensor is copied whole to each of them.
  // From several devices to one, the parts are gathered there.
  Tensor to(const std::string& device, Loc where = Loc::current()) const;

  // ---- several devices (tinygrad's shard; src/multi/) ----
  // One tensor held by several devices: split along `axis` into parts of ceil(n / k) (the last ones smaller, possibly
  // empty), or without an axis copied whole to each. Its device() is the devices' names joined by commas, and every op
  // on it stays lazy and runs on each device's part: elementwise ops between tensors split alike need no copy, a
  // reduction over the split axis (a sum over a sharded batch, a matmul whose contraction is split) ends in an
  // allreduce that leaves every device the same result, bit for bit. Where parts do not line up (an op with a tensor
  // split along another axis, a pad of the split axis) they are gathered first. to(device) gathers onto one
  // device; reading values (to_vector, item, printing) gathers onto the first. Model parameters are replicated with
  // t = t.to(devices) for each (tinygrad's x.to_(GPUS)); a tensor never changes device in place, so in C++ shard_
  // and to_ are assignments. Autograd, optimizers and TinyJit work on such tensors as on any other.
  Tensor shard(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt,
               Loc where = Loc::current()) const;
  Tensor to(const std::vector<std::string>& devices, Loc where = Loc::current()) const { return shard(devices, std::nullopt, where); }
  // The devices holding this tensor: one, or each of several.
  std::vector<std::string> devices() const;
  // Each device's part, realized (a tensor on one device: itself).
  std::vector<Tensor> shards() const;

  // ---- realizing and reading ----
  Tensor& realize();
  static void realize(const std::vector<Tensor>& tensors);  // one schedule for all of them
  template <TensorScalar T> std::vector<T> to_vector() const {
    std::vector<T> out(static_cast<size_t>(numel()));
    copy_to_host(out.data(), dtype_of<T>());
    return out;
  }
  // The data as stored, row-major: nbytes() bytes in the tensor's dtype (bool: a byte each; float16 and bfloat16:
  // their bits), little-endian on this machine.
  std::vector<uint8_t> to_bytes() const {
    std::vector<uint8_t> out(static_cast<size_t>(nbytes()));
    copy_to_host(out.data(), dtype());
    return out;
  }
  template <TensorScalar T> T item(Loc where = Loc::current()) const {
    T out{};
    check_single(where);
    copy_to_host(&out, dtype_of<T>());
    return out;
  }
  // Whether the data lives in a buffer now (nothing left to compute).
  bool is_realized() const;

  // A C++ number as a 0-d tensor on this tensor's device, in the dtype the two promote to (a weak scalar).
  template <TensorScalar T> Tensor scalar_like(T v, Loc where = Loc::current()) const {
    ScalarKind k = std::is_same_v<T, bool> ? ScalarKind::Bool : std::is_floating_point_v<T> ? ScalarKind::Float : ScalarKind::Int;
    return Tensor(v, promote_with_scalar(dtype(), k), device(), where);
  }

  // The lazy graph (the UOp this tensor is now: a realize replaces it by its buffer). For looking inside; not part
  // of the stable API.
  uop::UOp uop() const;
  explicit Tensor(const uop::UOp& u);

 private:
  friend Tensor detail::make_tensor(const uop::UOp& u, const std::string& device, SourceLocation created);
  friend Tensor detail::handle(std::shared_ptr<detail::TensorImpl> impl);
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  static Tensor scalar_tensor(ConstValue v, DType dtype, const std::string& device, Loc where);
  static Tensor from_host(const void* data, size_t count, DType dtype, const Shape& shape, const std::string& device,
                          Loc where);
  template <TensorScalar T> static DType scalar_default() {
    if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
    else if constexpr (std::is_floating_point_v<T>) return dtypes::default_float();
    else if constexpr (sizeof(T) > 4) return std::is_signed_v<T> ? dtypes::int64 : dtypes::uint64;
    else return dtypes::default_int();
  }
  const detail::TensorImpl& impl() const;  // throws for an empty handle
  // assign's write into this realized buffer or view of one, at once, also where assign would be lazy (a whole
  // buffer whose value reads it): setitem's; value has this tensor's shape and dtype
  void write_in_place(const Tensor& value, Loc where);
  void set_values(const Tensor& value, Loc where);
  void copy_to_host(void* out, DType as) const;
  void check_single(Loc where) const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

template <> inline std::vector<bool> Tensor::to_vector<bool>() const {
  std::vector<uint8_t> raw = cast(dtypes::uint8).to_vector<uint8_t>();
  return std::vector<bool>(raw.begin(), raw.end());
}

// Operators. Comparisons return bool tensors; == and != compare elementwise. Two tensors are both taken as TensorAt:
// C++20 also tries == and != with the operands swapped, and with a TensorAt on one side only the two orders would
// tie (clang: -Wambiguous-reversed-operator at every `a == b` in a user's code).
Tensor operator-(TensorAt a);
Tensor operator!(TensorAt a);
#define TG_TENSOR_BINARY_OP(sym, method)                                                                     \
  inline Tensor operator sym(TensorAt a, TensorAt b) { return a.t.method(b.t, a.where); }                    \
  template <TensorScalar T> Tensor operator sym(TensorAt a, T b) { return a.t.method(a.t.scalar_like(b, a.where), a.where); } \
  template <TensorScalar T> Tensor operator sym(T a, TensorAt b) { return b.t.scalar_like(a, b.where).method(b.t, b.where); }
TG_TENSOR_BINARY_OP(+, add)
TG_TENSOR_BINARY_OP(-, sub)
TG_TENSOR_BINARY_OP(*, mul)
TG_TENSOR_BINARY_OP(/, div)
TG_TENSOR_BINARY_OP(%, mod)
TG_TENSOR_BINARY_OP(&, bitwise_and)
TG_TENSOR_BINARY_OP(|, bitwise_or)
TG_TENSOR_BINARY_OP(^, bitwise_xor)
TG_TENSOR_BINARY_OP(<<, lshift)
TG_TENSOR_BINARY_OP(>>, rshift)
TG_TENSOR_BINARY_OP(<, lt)
TG_TENSOR_BINARY_OP(>, gt)
TG_TENSOR_BINARY_OP(<=, le)
TG_TENSOR_BINARY_OP(>=, ge)
TG_TENSOR_BINARY_OP(==, eq)
TG_TENSOR_BINARY_OP(!=, ne)
#undef TG_TENSOR_BINARY_OP

// Training mode for a scope (tinygrad's Tensor.train()): dropout is active inside; restores the old mode after.
class TrainGuard {
 public:
  explicit TrainGuard(bool mode = true) : prev_(Tensor::training) { Tensor::training = mode; }
  ~TrainGuard() { Tensor::training = prev_; }
  TrainGuard(const TrainGuard&) = delete;
  TrainGuard& operator=(const TrainGuard&) = delete;

 private:
  bool prev_;
};

// No gradients for a scope (tinygrad's Tensor.no_grad, torch.no_grad()): tensors computed inside are detached.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(Tensor::no_grad) { Tensor::no_grad = true; }
  ~NoGradGuard() { Tensor::no_grad = prev_; }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Prints the values as numpy does: [[1. 2.]\n [3. 4.]]. Realizes the tensor.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tg
