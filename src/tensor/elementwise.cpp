// Elementwise ops: numpy broadcasting, tinygrad's dtype promotion, and one ALU node per primitive.
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;
using uop::Ops;
using uop::UOp;

namespace {

Tensor alu(Ops op, DType dtype, const std::vector<Tensor>& srcs, SourceLocation where) {
  std::vector<UOp> s;
  for (const Tensor& t : srcs) s.push_back(t.uop());
  return tensor::wrap(UOp::make(op, dtype, s), srcs[0].device(), where);
}

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

void check_same_device(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where) {
  for (const Tensor* t : ts)
    if (t->device() != ts[0]->device())
      throw ArgumentError(op, "tensors on different devices: " + ts[0]->device() + " and " + t->device(), where);
}

// x and y broadcast to one shape and promoted to one dtype (at least `floor` when given)
std::pair<Tensor, Tensor> broadcasted(const Tensor& x, const Tensor& y, const char* op, SourceLocation where) {
  check_same_device({&x, &y}, op, where);
  Shape shape = broadcast_shape({&x, &y}, op, where);
  DType dt = least_upper_dtype({x.dtype(), y.dtype()});
  return {broadcast_to(x.cast(dt, where), shape), broadcast_to(y.cast(dt, where), shape)};
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
  return alu(Ops::CMPNE, dtypes::bool_, {b, tensor::const_tensor(true, dtypes::bool_, b.shape(), device())}, where);
}

Tensor Tensor::cast(DType dt, Loc where) const {
  tensor::check_value_dtype(dt, "cast", where);
  if (dt == dtype()) return *this;
  return alu(Ops::CAST, dt, {*this}, where);
}

Tensor Tensor::bitcast(DType dt, Loc where) const {
  tensor::check_value_dtype(dt, "bitcast", where);
  if (dt.itemsize() != dtype().itemsize())
    throw DTypeError("bitcast", "cannot bitcast " + dtype().name() + " (" + std::to_string(dtype().itemsize()) +
                                    " bytes) to " + dt.name() + " (" + std::to_string(dt.itemsize()) + " bytes)", where);
  if (dt == dtype()) return *this;
  return alu(Ops::BITCAST, dt, {*this}, where);
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
Tensor Tensor::idiv(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "idiv", where);
  require(x.dtype().is_int(), "idiv", "integer division needs integer tensors", x.dtype(), where);
  return alu(Ops::IDIV, x.dtype(), {x, y}, where);
}
Tensor Tensor::mod(const Tensor& o, Loc where) const {
  auto [x, y] = broadcasted(*this, o, "mod", where);
  require(x.dtype().is_int(), "mod", "mod needs integer tensors", x.dtype(), where);
  return alu(Ops::MOD, x.dtype(), {x, y}, where);
}
Tensor Tensor::maximum(const Tensor& o, Loc where) const { return binary(Ops::MAX, *this, o, "maximum", where); }

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
TG_BITWISE(lshift, SHL, false)
TG_BITWISE(rshift, SHR, false)
#undef TG_BITWISE

Tensor Tensor::lt(const Tensor& o, Loc where) const { return binary(Ops::CMPLT, *this, o, "lt", where); }
Tensor Tensor::gt(const Tensor& o, Loc where) const { return binary(Ops::CMPLT, o, *this, "gt", where); }
Tensor Tensor::ne(const Tensor& o, Loc where) const { return binary(Ops::CMPNE, *this, o, "ne", where); }
Tensor Tensor::eq(const Tensor& o, Loc where) const { return ne(o, where).logical_not(where); }
// with NaN every comparison but != is false, so <= is (< or ==) for floats; for the rest not(>) is the same
Tensor Tensor::le(const Tensor& o, Loc where) const {
  if (least_upper_dtype({dtype(), o.dtype()}).is_float()) return lt(o, where).bitwise_or(eq(o, where), where);
  return gt(o, where).logical_not(where);
}
Tensor Tensor::ge(const Tensor& o, Loc where) const { return o.le(*this, where); }

Tensor Tensor::where(const Tensor& x, const Tensor& y, Loc where) const {
  check_same_device({this, &x, &y}, "where", where);
  Shape shape = broadcast_shape({this, &x, &y}, "where", where);
  DType dt = least_upper_dtype({x.dtype(), y.dtype()});
  return alu(Ops::WHERE, dt,
             {broadcast_to(cast(dtypes::bool_, where), shape), broadcast_to(x.cast(dt, where), shape),
              broadcast_to(y.cast(dt, where), shape)}, where);
}

Tensor operator-(TensorAt a) { return a.t.neg(a.where); }
Tensor operator!(TensorAt a) { return a.t.logical_not(a.where); }

}  // namespace tg
