// Elementwise ops: numpy broadcasting, tinygrad's dtype promotion, and one ALU node per primitive.
#include <algorithm>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::broadcast_shape;
using tensor::broadcast_to;
using tensor::broadcasted;
using tensor::shape_str;
using uop::Ops;
using uop::UOp;

namespace {

Tensor alu(Ops op, DType dtype, const std::vector<Tensor>& srcs, SourceLocation where) {
  std::vector<UOp> s;
  for (const Tensor& t : srcs) s.push_back(t.uop());
  return tensor::wrap(UOp::make(op, dtype, s), srcs[0].device(), where);
}

void check_same_device(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where) {
  for (const Tensor* t : ts)
    if (t->device() != ts[0]->device())
      throw ArgumentError(op, "tensors on different devices: " + ts[0]->device() + " and " + t->device(), where);
}

void require(bool ok, const char* op, const std::string& what, DType dt, SourceLocation where) {
  if (!ok) throw DTypeError(op, what + ", not " + dt.name(), where);
}

Tensor binary(Ops op, const Tensor& a, const Tensor& b, const char* name, SourceLocation where) {
  auto [x, y] = broadcasted(a, b, name, where);
  return alu(op, op == Ops::CMPLT || op == Ops::CMPNE ? dtypes::bool_ : x.dtype(), {x, y}, where);
}

Tensor float_unary(Ops op, const Tensor& t, const char* name, SourceLocation where) {
  Tensor x = t.cast(least_upper_float(t.dtype()), where);
  return alu(op, x.dtype(), {x}, where);
}

}  // namespace

namespace tensor {

// numpy's rule: align from the right; each pair of dimensions is equal or one of them is 1
Shape broadcast_shape(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where) {
  size_t nd = 0;
  for (const Tensor* t : ts) nd = std::max(nd, t->shape().size());
  Shape out(nd, 1);
  for (const Tensor* t : ts) {
    const Shape& s = t->shape();
    for (size_t i = 0; i < s.size(); i++) {
      int64_t& o = out[nd - s.size() + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) {
        std::string shapes;
        for (const Tensor* u : ts) shapes += (shapes.empty() ? "" : " and ") + shape_str(u->shape());
        throw ShapeError(op, "cannot broadcast " + shapes, where);
      }
      o = s[i];
    }
  }
  tensor::checked_numel(out, op, where);
  return out;
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  Shape padded(shape.size() - t.shape().size(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  UOp u = t.uop();
  if (padded != t.shape()) u = tensor::movement(Ops::RESHAPE, u, padded);
  if (padded != shape) u = tensor::movement(Ops::EXPAND, u, shape);
  return tensor::wrap(u, t.device());
}

std::pair<Tensor, Tensor> broadcasted(const Tensor& x, const Tensor& y, const char* op, SourceLocation where) {
  check_same_device({&x, &y}, op, where);
  DType dt = least_upper_dtype({x.dtype(), y.dtype()});
  if (x.is_symbolic() || y.is_symbolic()) {
    std::vector<Dim> shape = symbolic_broadcast_shape({&x, &y}, op, where);
    return {symbolic_broadcast_to(x.cast(dt, where), shape), symbolic_broadcast_to(y.cast(dt, where), shape)};
  }
  Shape shape = broadcast_shape({&x, &y}, op, where);
  return {broadcast_to(x.cast(dt, where), shape), broadcast_to(y.cast(dt, where), shape)};
}

}  // namespace tensor

Tensor Tensor::neg(Loc where) const {
  require(!dtype().is_bool(), "neg", "negation needs a number dtype (use logical_not for bool)", dtype(), where);
  return alu(Ops::NEG, dtype(), {*this}, where);
}
Tensor Tensor::exp2(Loc where) const { return float_unary(Ops::EXP2, *this, "exp2", where); }
Tensor Tensor::log2(Loc where) const { return float_unary(Ops::LOG2, *this, "log2", where); }
Tensor Tensor::sin(Loc where) const { return float_unary(Ops::SIN, *this, "sin", where); }
Tensor Tensor::sqrt(Loc where) const { return float_unary(Ops::SQRT, *this, "sqrt", where); }
Tensor Tensor::reciprocal(Loc where) const { return float_unary(Ops::RECIPROCAL, *this, "reciprocal", where); }
Tensor Tensor::logical_not(Loc where) const {
  Tensor b = cast(dtypes::bool_, where);
  return alu(Ops::CMPNE, dtypes::bool_, {b, tensor::const_tensor(true, dtypes::bool_, b.sym_shape(), device())}, where);
}

Tensor Tensor::cast(DType dt, Loc where) const {
  tensor::check_value_dtype(dt, "cast", where);
  if (dt == dtype()) return *this;
  return alu(Ops::CAST, dt, {*this}, where);
}

namespace {
DType uint_of_size(int64_t bytes) {
  return bytes == 1 ? dtypes::uint8 : bytes == 2 ? dtypes::uint16 : bytes == 4 ? dtypes::uint32 : dtypes::uint64;
}
}  // namespace

Tensor Tensor::bitcast(DType dt, Loc where) const try {
  tensor::check_value_dtype(dt, "bitcast", where);
  int64_t a = dtype().itemsize(), b = dt.itemsize();
  if (a == b) return dt == dtype() ? *this : alu(Ops::BITCAST, dt, {*this}, where);
  // another size: the last dim's bytes regrouped, little-endian (as numpy's view and tinygrad's bitcast)
  if (dtype().is_bool() || dt.is_bool())
    throw DTypeError("bitcast", "cannot bitcast " + dtype().name() + " to " + dt.name() + " (bool is not bits)", where);
  if (ndim() == 0 || shape().back() * a % b != 0)
    throw DTypeError("bitcast", "cannot bitcast " + dtype().name() + " (" + std::to_string(a) + " bytes) to " + dt.name() +
                                    " (" + std::to_string(b) + " bytes): the last dimension of " + tensor::shape_str(shape()) +
                                    " must hold a whole number of them", where);
  DType ua = uint_of_size(a), ub = uint_of_size(b);
  Tensor u = bitcast(ua, where);
  Shape out = shape();
  out.back() = shape().back() * a / b;
  int64_t k = a > b ? a / b : b / a;
  std::vector<uint64_t> shifts;
  for (int64_t i = 0; i < k; i++) shifts.push_back(static_cast<uint64_t>(8 * std::min(a, b) * i));
  Tensor by = Tensor(shifts, {k}, device(), where);
  Tensor r;
  if (a > b) {  // each element split into k pieces, lowest bytes first
    Tensor mask(static_cast<uint64_t>((uint64_t{1} << (8 * b)) - 1), dtypes::uint64, device(), where);
    r = ((u.cast(dtypes::uint64).unsqueeze(-1) >> by) & mask).cast(ub).reshape(out, where);
  } else {  // k elements joined: their bits do not overlap, so the sum is their or
    Shape grouped = out;
    grouped.push_back(k);
    r = (u.reshape(grouped, where).cast(dtypes::uint64) << by).sum(-1, false, dtypes::uint64, where).cast(ub);
  }
  return r.bitcast(dt, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "bitcast", where);
}

Tensor Tensor::add(const Tensor& o, Loc where) const { return binary(Ops::ADD, *this, o, "add", where); }
Tensor Tensor::mul(const Tensor& o, Loc where) const { return binary(Ops::MUL, *this, o, "mul", where); }
Tensor Tensor::sub(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "sub", where);
  require(!x.dtype().is_bool(), "sub", "subtraction needs a number dtype", x.dtype(), where);
  return alu(Ops::ADD, x.dtype(), {x, alu(Ops::NEG, y.dtype(), {y}, where)}, where);
}
Tensor Tensor::div(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "div", where);
  DType dt = least_upper_float(x.dtype());
  // x * (1/y); the C renderer writes it back as x/y, so the result is IEEE division
  return alu(Ops::MUL, dt, {x.cast(dt, where), alu(Ops::RECIPROCAL, dt, {y.cast(dt, where)}, where)}, where);
}
namespace {

// C's / and % with the two inputs that trap on x86 made safe: x/0 is 0 (numpy's answer) and MIN/-1 wraps
Tensor safe_int_div(Ops op, const Tensor& x, const Tensor& y, SourceLocation where) {
  Tensor zero = y == 0, unsafe = x.dtype().is_unsigned() ? zero : zero | (y == -1);
  Tensor q = alu(op, x.dtype(), {x, unsafe.where(y.scalar_like(1), y)}, where);
  if (!x.dtype().is_unsigned())  // y == -1: x / -1 = -x, x % -1 = 0
    q = (y == -1).where(op == Ops::IDIV ? -x : x.scalar_like(0), q);
  return zero.where(x.scalar_like(0), q);
}

}  // namespace

Tensor Tensor::idiv(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "idiv", where);
  require(x.dtype().is_int(), "idiv", "integer division needs integer tensors", x.dtype(), where);
  return safe_int_div(Ops::IDIV, x, y, where);
}
Tensor Tensor::mod(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "mod", where);
  require(!x.dtype().is_bool(), "mod", "mod needs number tensors", x.dtype(), where);
  // C's remainder (dividend's sign), then moved to the divisor's sign as Python and PyTorch do
  Tensor r = x.dtype().is_int() ? safe_int_div(Ops::MOD, x, y, where) : x - x.div(y, "trunc", where) * y;
  if (x.dtype().is_unsigned()) return r;
  return ((r != 0) & ((r < 0) != (y < 0))).where(r + y, r, where);
}
Tensor Tensor::div(const Tensor& o, const std::string& rounding_mode, Loc where) const {
  if (rounding_mode != "trunc" && rounding_mode != "floor")
    throw ArgumentError("div", "rounding_mode is \"trunc\" or \"floor\", not \"" + rounding_mode + "\"", where);
  auto [x, y] = broadcasted(*this, o, "div", where);
  require(!x.dtype().is_bool(), "div", "rounded division needs number tensors", x.dtype(), where);
  if (x.dtype().is_float()) return rounding_mode == "trunc" ? x.div(y, where).trunc(where) : x.div(y, where).floor(where);
  Tensor q = x.idiv(y, where);
  if (rounding_mode == "trunc" || x.dtype().is_unsigned()) return q;
  // floor: one less where the division was inexact and the signs differ
  return ((q * y != x) & ((x < 0) != (y < 0))).where(q - 1, q, where);
}
Tensor Tensor::maximum(const Tensor& o, Loc where) const { return binary(Ops::MAX, *this, o, "maximum", where); }
Tensor Tensor::minimum(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "minimum", where);
  if (x.dtype().is_bool()) return x.bitwise_and(y, where);
  // max of the order-reversed values: -x for floats, ~x for ints
  if (x.dtype().is_float()) return x.neg(where).maximum(y.neg(where), where).neg(where);
  return x.bitwise_not(where).maximum(y.bitwise_not(where), where).bitwise_not(where);
}

#define TG_BITWISE(method, OP, allow_bool)                                                                      \
  Tensor Tensor::method(const Tensor& o, Loc where) const {                                                     \
    auto [x, y] = broadcasted(*this, o, #method, where);                                                        \
    require(x.dtype().is_int() || (allow_bool && x.dtype().is_bool()), #method,                                 \
            allow_bool ? "needs integer or bool tensors" : "needs integer tensors", x.dtype(), where);          \
    return alu(Ops::OP, x.dtype(), {x, y}, where);                                                                     \
  }
TG_BITWISE(bitwise_and, AND, true)
TG_BITWISE(bitwise_or, OR, true)
TG_BITWISE(bitwise_xor, XOR, true)
#undef TG_BITWISE

// Shifts as PyTorch's: a count outside [0, bits) gives 0 for << and for >> of unsigned x, and x >> (bits - 1) (the
// sign fill) for >> of signed x. C leaves them undefined (clang's results vary with what the register held before),
// so the kernel only ever sees a count in range; constant counts fold the guards away.
Tensor shift(Ops op, const Tensor& a, const Tensor& b, const char* name, SourceLocation where) {
  auto [x, y] = broadcasted(a, b, name, where);
  require(x.dtype().is_int(), name, "needs integer tensors", x.dtype(), where);
  int64_t bits = 8 * x.dtype().itemsize();
  Tensor in_range = y.lt(Tensor(bits, y.dtype(), y.device(), where), where);
  if (!y.dtype().is_unsigned()) in_range = in_range.bitwise_and(y.ge(Tensor(0, y.dtype(), y.device(), where), where), where);
  bool zero_fill = op == Ops::SHL || x.dtype().is_unsigned();
  Tensor count = in_range.where(y, Tensor(zero_fill ? 0 : bits - 1, y.dtype(), y.device(), where), where);
  Tensor r = alu(op, x.dtype(), {x, count}, where);
  return zero_fill ? in_range.where(r, Tensor(0, x.dtype(), x.device(), where), where) : r;
}
Tensor Tensor::lshift(const Tensor& o, Loc where) const { return shift(Ops::SHL, *this, o, "lshift", where); }
Tensor Tensor::rshift(const Tensor& o, Loc where) const { return shift(Ops::SHR, *this, o, "rshift", where); }

Tensor Tensor::lt(const Tensor& o, Loc where) const { return binary(Ops::CMPLT, *this, o, "lt", where); }
Tensor Tensor::gt(const Tensor& o, Loc where) const { return binary(Ops::CMPLT, o, *this, "gt", where); }
Tensor Tensor::ne(const Tensor& o, Loc where) const { return binary(Ops::CMPNE, *this, o, "ne", where); }
Tensor Tensor::eq(const Tensor& o, Loc where) const try {
  return ne(o, where).logical_not(where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "eq", where);
}

namespace {

// with NaN every comparison but != is false, so a <= b is (a < b or a == b) for floats; for the rest not(b < a)
Tensor less_or_equal(const Tensor& a, const Tensor& b, const char* op, SourceLocation where) try {
  if (least_upper_dtype({a.dtype(), b.dtype()}).is_float()) return a.lt(b, where).bitwise_or(a.eq(b, where), where);
  return b.lt(a, where).logical_not(where);
} catch (const Error& e) {
  tensor::rethrow_in(e, op, where);
}

}  // namespace

Tensor Tensor::le(const Tensor& o, Loc where) const { return less_or_equal(*this, o, "le", where); }
Tensor Tensor::ge(const Tensor& o, Loc where) const { return less_or_equal(o, *this, "ge", where); }

Tensor Tensor::where(const Tensor& x, const Tensor& y, Loc where) const {
  check_same_device({this, &x, &y}, "where", where);
  DType dt = least_upper_dtype({x.dtype(), y.dtype()});
  if (is_symbolic() || x.is_symbolic() || y.is_symbolic()) {
    std::vector<Dim> shape = tensor::symbolic_broadcast_shape({this, &x, &y}, "where", where);
    return alu(Ops::WHERE, dt,
               {tensor::symbolic_broadcast_to(cast(dtypes::bool_, where), shape),
                tensor::symbolic_broadcast_to(x.cast(dt, where), shape), tensor::symbolic_broadcast_to(y.cast(dt, where), shape)},
               where);
  }
  Shape shape = broadcast_shape({this, &x, &y}, "where", where);
  return alu(Ops::WHERE, dt,
             {broadcast_to(cast(dtypes::bool_, where), shape), broadcast_to(x.cast(dt, where), shape),
              broadcast_to(y.cast(dt, where), shape)}, where);
}

Tensor operator-(TensorAt a) { return a.t.neg(a.where); }
Tensor operator!(TensorAt a) { return a.t.logical_not(a.where); }

}  // namespace tg
