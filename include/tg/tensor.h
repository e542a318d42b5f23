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
#include <type_traits>
#include <utility>
#include <vector>

#include "tg/dtype.h"
#include "tg/error.h"

namespace tg {

namespace uop {
class UOp;
}
class Tensor;
namespace detail {
struct TensorImpl;
Tensor make_tensor(const uop::UOp& u, const std::string& device, SourceLocation created);
}

using Shape = std::vector<int64_t>;

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

  static Tensor empty(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "",
                      Loc where = Loc::current());
  static Tensor full(const Shape& shape, double value, DType dtype = dtypes::float32, const std::string& device = "",
                     Loc where = Loc::current());
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "",
                      Loc where = Loc::current());
  static Tensor ones(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "",
                     Loc where = Loc::current());
  // [0, stop) and [start, stop) by step; int32 unless a value is fractional (then float32) or a dtype is given.
  static Tensor arange(double stop, Loc where = Loc::current());
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt,
                       const std::string& device = "", Loc where = Loc::current());
  // Uniform in [0, 1), generated on the device by a counter-based generator (Threefry-2x32): random tensors are
  // lazy and fuse like any other op, and the same seed gives the same numbers.
  static Tensor rand(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "",
                     Loc where = Loc::current());
  static void manual_seed(uint64_t seed);

  // ---- properties ----
  const Shape& shape() const;
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const;
  DType dtype() const;
  const std::string& device() const;
  int64_t element_size() const { return dtype().itemsize(); }
  int64_t nbytes() const { return numel() * element_size(); }
  bool defined() const { return impl_ != nullptr; }

  // ---- elementwise ----
  Tensor neg(Loc where = Loc::current()) const;
  Tensor exp2(Loc where = Loc::current()) const;
  Tensor log2(Loc where = Loc::current()) const;
  Tensor sin(Loc where = Loc::current()) const;
  Tensor sqrt(Loc where = Loc::current()) const;
  Tensor reciprocal(Loc where = Loc::current()) const;
  Tensor logical_not(Loc where = Loc::current()) const;
  Tensor cast(DType dtype, Loc where = Loc::current()) const;
  Tensor bitcast(DType dtype, Loc where = Loc::current()) const;  // same itemsize only

  Tensor add(const Tensor& o, Loc where = Loc::current()) const;
  Tensor sub(const Tensor& o, Loc where = Loc::current()) const;
  Tensor mul(const Tensor& o, Loc where = Loc::current()) const;
  Tensor div(const Tensor& o, Loc where = Loc::current()) const;   // true division: ints give float32
  Tensor idiv(const Tensor& o, Loc where = Loc::current()) const;  // integer division, truncating (C's /)
  Tensor mod(const Tensor& o, Loc where = Loc::current()) const;   // remainder with the dividend's sign (C's %)
  Tensor maximum(const Tensor& o, Loc where = Loc::current()) const;  // NaN if either is NaN
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
  template <TensorScalar T, TensorScalar U> Tensor where(T x, U y, Loc w = Loc::current()) const {
    return where(Tensor(x, std::nullopt, device(), w), Tensor(y, std::nullopt, device(), w), w);
  }
  template <TensorScalar U> Tensor where(const Tensor& x, U y, Loc w = Loc::current()) const {
    return where(x, x.scalar_like(y, w), w);
  }
  template <TensorScalar T> Tensor where(T x, const Tensor& y, Loc w = Loc::current()) const {
    return where(y.scalar_like(x, w), y, w);
  }

  // ---- reductions: over all axes, one axis, or a list; negative axes count from the end ----
  Tensor sum(Loc where = Loc::current()) const;
  Tensor sum(int64_t axis, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor sum(const std::vector<int64_t>& axes, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor max(Loc where = Loc::current()) const;
  Tensor max(int64_t axis, bool keepdim = false, Loc where = Loc::current()) const;
  Tensor max(const std::vector<int64_t>& axes, bool keepdim = false, Loc where = Loc::current()) const;

  // ---- movement: zero copy, through the ShapeTracker ----
  Tensor reshape(const Shape& shape, Loc where = Loc::current()) const;  // one dimension may be -1
  Tensor permute(const std::vector<int64_t>& order, Loc where = Loc::current()) const;
  Tensor expand(const Shape& shape, Loc where = Loc::current()) const;  // -1 keeps a dimension; may add leading ones
  // (before, after) per dimension; negative amounts remove elements; the new elements are `value`
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& padding, double value = 0, Loc where = Loc::current()) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& ranges, Loc where = Loc::current()) const;  // [begin, end)
  Tensor flip(const std::vector<int64_t>& axes, Loc where = Loc::current()) const;
  Tensor contiguous(Loc where = Loc::current()) const;
  Tensor to(const std::string& device, Loc where = Loc::current()) const;

  // ---- realizing and reading ----
  Tensor& realize();
  static void realize(const std::vector<Tensor>& tensors);  // one schedule for all of them
  template <TensorScalar T> std::vector<T> to_vector() const {
    std::vector<T> out(static_cast<size_t>(numel()));
    copy_to_host(out.data(), dtype_of<T>());
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

  // The lazy graph (the UOp this tensor is). For looking inside; not part of the stable API.
  const uop::UOp& uop() const;
  explicit Tensor(const uop::UOp& u);

 private:
  friend Tensor detail::make_tensor(const uop::UOp& u, const std::string& device, SourceLocation created);
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  static Tensor scalar_tensor(ConstValue v, DType dtype, const std::string& device, Loc where);
  static Tensor from_host(const void* data, size_t count, DType dtype, const Shape& shape, const std::string& device,
                          Loc where);
  template <TensorScalar T> static constexpr DType scalar_default() {
    if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
    else if constexpr (std::is_floating_point_v<T>) return dtypes::default_float;
    else if constexpr (sizeof(T) > 4) return std::is_signed_v<T> ? dtypes::int64 : dtypes::uint64;
    else return dtypes::default_int;
  }
  void copy_to_host(void* out, DType as) const;
  void check_single(Loc where) const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

template <> inline std::vector<bool> Tensor::to_vector<bool>() const {
  std::vector<uint8_t> raw = cast(dtypes::uint8).to_vector<uint8_t>();
  return std::vector<bool>(raw.begin(), raw.end());
}

// Operators. Comparisons return bool tensors; == and != compare elementwise.
Tensor operator-(TensorAt a);
Tensor operator!(TensorAt a);
#define TG_TENSOR_BINARY_OP(sym, method)                                                                     \
  inline Tensor operator sym(TensorAt a, const Tensor& b) { return a.t.method(b, a.where); }                 \
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

// Prints the values as numpy does: [[1. 2.]\n [3. 4.]]. Realizes the tensor.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tg
