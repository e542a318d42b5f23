// Operators (with reflected forms and NotImplemented for foreign types, so Python's protocol works), elementwise
// math, activations and reductions, under tinygrad's names and keyword arguments.
#include "bindings.h"

namespace tgpy {

namespace {

using BinFn = Tensor (*)(const Tensor&, const Tensor&);

// x op y where y is a Tensor or a Python scalar (weak: float32 * 2.0 stays float32); NotImplemented otherwise
template <BinFn F> py::object op_fwd(const Tensor& a, py::handle b) {
  std::optional<Tensor> o = to_operand(a, b);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(F(a, *o));
}
template <BinFn F> py::object op_rev(const Tensor& a, py::handle b) {
  std::optional<Tensor> o = to_operand(a, b);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(F(*o, a));
}
// the method form: tinygrad's add(x, reverse=False); a foreign type is a TypeError
template <BinFn F> Tensor op_method(const Tensor& a, py::handle b, bool reverse) {
  Tensor o = operand_or_throw(a, b, "binary op");
  return reverse ? F(o, a) : F(a, o);
}

#define TG_BIN(name, expr) \
  Tensor name(const Tensor& a, const Tensor& b) { return expr; }
TG_BIN(f_add, a.add(b))
TG_BIN(f_sub, a.sub(b))
TG_BIN(f_mul, a.mul(b))
TG_BIN(f_div, a.div(b))
TG_BIN(f_floordiv, a.div(b, "floor"))
TG_BIN(f_mod, a.mod(b))
TG_BIN(f_pow, a.pow(b))
TG_BIN(f_and, a.bitwise_and(b))
TG_BIN(f_or, a.bitwise_or(b))
TG_BIN(f_xor, a.bitwise_xor(b))
TG_BIN(f_lshift, a.lshift(b))
TG_BIN(f_rshift, a.rshift(b))
TG_BIN(f_lt, a.lt(b))
TG_BIN(f_gt, a.gt(b))
TG_BIN(f_le, a.le(b))
TG_BIN(f_ge, a.ge(b))
TG_BIN(f_eq, a.eq(b))
TG_BIN(f_ne, a.ne(b))
TG_BIN(f_matmul, a.matmul(b))
TG_BIN(f_maximum, a.maximum(b))
TG_BIN(f_minimum, a.minimum(b))
TG_BIN(f_copysign, a.copysign(b))
TG_BIN(f_fmod, a.fmod(b))
TG_BIN(f_logaddexp, a.logaddexp(b))
#undef TG_BIN

std::optional<double> opt_double(py::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  if (!PyNumber_Check(h.ptr()) || py::isinstance<Tensor>(h)) throw py::type_error(std::string(what) + " must be a number or None");
  return h.cast<double>();
}

}  // namespace

tg::Reduction to_reduction(const std::string& r) {
  if (r == "mean") return tg::Reduction::mean;
  if (r == "sum") return tg::Reduction::sum;
  if (r == "none") return tg::Reduction::none;
  throw py::value_error("reduction must be 'none', 'mean' or 'sum', not '" + r + "'");
}

void init_tensor_ops(py::class_<Tensor>& cls) {
  // ---- operators ----
  cls.def("__add__", &op_fwd<f_add>).def("__radd__", &op_rev<f_add>)
      .def("__sub__", &op_fwd<f_sub>).def("__rsub__", &op_rev<f_sub>)
      .def("__mul__", &op_fwd<f_mul>).def("__rmul__", &op_rev<f_mul>)
      .def("__truediv__", &op_fwd<f_div>).def("__rtruediv__", &op_rev<f_div>)
      .def("__floordiv__", &op_fwd<f_floordiv>).def("__rfloordiv__", &op_rev<f_floordiv>)
      .def("__mod__", &op_fwd<f_mod>).def("__rmod__", &op_rev<f_mod>)
      .def("__pow__", &op_fwd<f_pow>).def("__rpow__", &op_rev<f_pow>)
      .def("__and__", &op_fwd<f_and>).def("__rand__", &op_rev<f_and>)
      .def("__or__", &op_fwd<f_or>).def("__ror__", &op_rev<f_or>)
      .def("__xor__", &op_fwd<f_xor>).def("__rxor__", &op_rev<f_xor>)
      .def("__lshift__", &op_fwd<f_lshift>).def("__rlshift__", &op_rev<f_lshift>)
      .def("__rshift__", &op_fwd<f_rshift>).def("__rrshift__", &op_rev<f_rshift>)
      .def("__matmul__", &op_fwd<f_matmul>).def("__rmatmul__", &op_rev<f_matmul>)
      .def("__lt__", &op_fwd<f_lt>).def("__gt__", &op_fwd<f_gt>)
      .def("__le__", &op_fwd<f_le>).def("__ge__", &op_fwd<f_ge>)
      .def("__eq__", &op_fwd<f_eq>).def("__ne__", &op_fwd<f_ne>)
      .def("__neg__", [](const Tensor& t) { return t.neg(); })
      .def("__pos__", [](const Tensor& t) { return t; })
      .def("__abs__", [](const Tensor& t) { return t.abs(); })
      .def("__invert__", [](const Tensor& t) { return t.bitwise_not(); });
  // pybind drops __hash__ when __eq__ is defined: put identity back (tensors stay usable as dict keys)
  cls.attr("__hash__") = py::cpp_function([](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); },
                                          py::is_method(cls));

  // ---- binary methods: tinygrad's (x, reverse=False) ----
#define TG_BIN_METHOD(name, fn) cls.def(name, [](const Tensor& a, py::handle x, bool reverse) { return op_method<fn>(a, x, reverse); }, \
                                        py::arg("x"), py::arg("reverse") = false)
  TG_BIN_METHOD("add", f_add);
  TG_BIN_METHOD("sub", f_sub);
  TG_BIN_METHOD("mul", f_mul);
  TG_BIN_METHOD("mod", f_mod);
  TG_BIN_METHOD("pow", f_pow);
  TG_BIN_METHOD("bitwise_and", f_and);
  TG_BIN_METHOD("bitwise_or", f_or);
  TG_BIN_METHOD("bitwise_xor", f_xor);
  TG_BIN_METHOD("lshift", f_lshift);
  TG_BIN_METHOD("rshift", f_rshift);
#undef TG_BIN_METHOD
#define TG_BIN_METHOD1(name, fn) cls.def(name, [](const Tensor& a, py::handle x) { return op_method<fn>(a, x, false); }, py::arg("x"))
  TG_BIN_METHOD1("maximum", f_maximum);
  TG_BIN_METHOD1("minimum", f_minimum);
  TG_BIN_METHOD1("eq", f_eq);
  TG_BIN_METHOD1("ne", f_ne);
  TG_BIN_METHOD1("lt", f_lt);
  TG_BIN_METHOD1("gt", f_gt);
  TG_BIN_METHOD1("le", f_le);
  TG_BIN_METHOD1("ge", f_ge);
  TG_BIN_METHOD1("copysign", f_copysign);
  TG_BIN_METHOD1("fmod", f_fmod);
  TG_BIN_METHOD1("logaddexp", f_logaddexp);
#undef TG_BIN_METHOD1
  cls.def("div", [](const Tensor& a, py::handle x, bool reverse, py::handle rounding_mode) {
        Tensor o = operand_or_throw(a, x, "div");
        const Tensor &l = reverse ? o : a, &r = reverse ? a : o;
        if (rounding_mode.is_none()) return l.div(r);
        return l.div(r, rounding_mode.cast<std::string>());
      }, py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none())
      .def("idiv", [](const Tensor& a, py::handle x, bool reverse) {
        Tensor o = operand_or_throw(a, x, "idiv");
        return reverse ? o.idiv(a) : a.idiv(o);
      }, py::arg("x"), py::arg("reverse") = false)
      .def("where", [](const Tensor& c, py::handle x, py::handle y) {
        // the scalar side takes the tensor side's dtype (weak), as tinygrad's where(cond, x, 0.0)
        bool xt = py::isinstance<Tensor>(x), yt = py::isinstance<Tensor>(y);
        if (xt && yt) return c.where(x.cast<Tensor>(), y.cast<Tensor>());
        if (xt) return c.where(x.cast<Tensor>(), operand_or_throw(x.cast<Tensor>(), y, "where"));
        if (yt) return c.where(operand_or_throw(y.cast<Tensor>(), x, "where"), y.cast<Tensor>());
        Tensor tx = tensor_from_py(x, std::nullopt, c.device()), ty = tensor_from_py(y, std::nullopt, c.device());
        tg::DType d = tg::least_upper_dtype({tx.dtype(), ty.dtype()});
        return c.where(tx.cast(d), ty.cast(d));
      }, py::arg("x"), py::arg("y"))
      .def("lerp", [](const Tensor& a, const Tensor& end, py::handle w) {
        if (py::isinstance<Tensor>(w)) return a.lerp(end, w.cast<Tensor>());
        return a.lerp(end, w.cast<double>());
      }, py::arg("end"), py::arg("weight"))
      .def("masked_fill", [](const Tensor& a, const Tensor& mask, py::handle v) {
        if (py::isinstance<Tensor>(v)) return a.masked_fill(mask, v.cast<Tensor>());
        return a.masked_fill(mask, operand_or_throw(a, v, "masked_fill"));
      }, py::arg("mask"), py::arg("value"))
      .def("cast", [](const Tensor& t, py::handle dt) {
        std::optional<tg::DType> d = to_dtype(dt);
        if (!d) throw py::type_error("cast needs a dtype");
        return d == t.dtype() ? t : t.cast(*d);
      }, py::arg("dtype"))
      .def("bitcast", [](const Tensor& t, py::handle dt) {
        std::optional<tg::DType> d = to_dtype(dt);
        if (!d) throw py::type_error("bitcast needs a dtype");
        return t.bitcast(*d);
      }, py::arg("dtype"))
      .def("clip", [](const Tensor& t, py::handle lo, py::handle hi) {
        return t.clip(opt_double(lo, "min_"), opt_double(hi, "max_"));
      }, py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def("clamp", [](const Tensor& t, py::handle lo, py::handle hi) {
        return t.clip(opt_double(lo, "min_"), opt_double(hi, "max_"));
      }, py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def("isclose", [](const Tensor& t, py::handle o, double rtol, double atol, bool equal_nan) {
        return t.isclose(operand_or_throw(t, o, "isclose"), rtol, atol, equal_nan);
      }, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8, py::arg("equal_nan") = false)
      .def("allclose", [](const Tensor& t, py::handle o, double rtol, double atol, bool equal_nan) {
        Tensor other = operand_or_throw(t, o, "allclose");
        py::gil_scoped_release release;
        return t.allclose(other, rtol, atol, equal_nan);
      }, py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8, py::arg("equal_nan") = false);

  // ---- unary math and activations without arguments ----
#define TG_UNARY(name) cls.def(#name, [](const Tensor& t) { return t.name(); })
  TG_UNARY(neg); TG_UNARY(exp); TG_UNARY(exp2); TG_UNARY(log); TG_UNARY(log2); TG_UNARY(log10); TG_UNARY(sqrt);
  TG_UNARY(rsqrt); TG_UNARY(reciprocal); TG_UNARY(sin); TG_UNARY(cos); TG_UNARY(tan); TG_UNARY(asin); TG_UNARY(acos);
  TG_UNARY(atan); TG_UNARY(sinh); TG_UNARY(cosh); TG_UNARY(tanh); TG_UNARY(asinh); TG_UNARY(acosh); TG_UNARY(atanh);
  TG_UNARY(erf); TG_UNARY(abs); TG_UNARY(sign); TG_UNARY(trunc); TG_UNARY(floor); TG_UNARY(ceil); TG_UNARY(round);
  TG_UNARY(square); TG_UNARY(isnan); TG_UNARY(isfinite); TG_UNARY(logical_not); TG_UNARY(bitwise_not);
  TG_UNARY(relu); TG_UNARY(relu6); TG_UNARY(sigmoid); TG_UNARY(logsigmoid); TG_UNARY(quick_gelu); TG_UNARY(silu);
  TG_UNARY(swish); TG_UNARY(mish); TG_UNARY(softsign); TG_UNARY(hardswish); TG_UNARY(half); TG_UNARY(bfloat16);
#undef TG_UNARY
  cls.def("float", [](const Tensor& t) { return t.cast(tg::dtypes::float32); })
      .def("double", [](const Tensor& t) { return t.cast(tg::dtypes::float64); })
      .def("int", [](const Tensor& t) { return t.cast(tg::dtypes::int32); })
      .def("long", [](const Tensor& t) { return t.cast(tg::dtypes::int64); })
      .def("short", [](const Tensor& t) { return t.cast(tg::dtypes::int16); })
      .def("bool", [](const Tensor& t) { return t.cast(tg::dtypes::bool_); })
      .def("isinf", [](const Tensor& t, bool p, bool n) { return t.isinf(p, n); }, py::arg("detect_positive") = true,
           py::arg("detect_negative") = true)
      .def("leaky_relu", [](const Tensor& t, double s) { return t.leaky_relu(s); }, py::arg("neg_slope") = 0.01)
      .def("elu", [](const Tensor& t, double a) { return t.elu(a); }, py::arg("alpha") = 1.0)
      .def("celu", [](const Tensor& t, double a) { return t.celu(a); }, py::arg("alpha") = 1.0)
      .def("selu", [](const Tensor& t, double alpha, double gamma) {
        // selu's constants are fixed in the core (tinygrad's defaults); other values compose from elu
        if (alpha == 1.67326 && gamma == 1.0507) return t.selu();
        return t.elu(alpha) * gamma;
      }, py::arg("alpha") = 1.67326, py::arg("gamma") = 1.0507)
      .def("hardsigmoid", [](const Tensor& t, double a, double b) { return t.hardsigmoid(a, b); },
           py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5)
      .def("hardtanh", [](const Tensor& t, double lo, double hi) { return t.hardtanh(lo, hi); }, py::arg("min_val") = -1.0,
           py::arg("max_val") = 1.0)
      .def("gelu", [](const Tensor& t, const std::string& approximate) { return t.gelu(approximate); },
           py::arg("approximate") = "tanh")
      .def("softplus", [](const Tensor& t, double beta) { return t.softplus(beta); }, py::arg("beta") = 1.0);

  // ---- reductions ----
  cls.def("sum", [](const Tensor& t, py::handle axis, bool keepdim, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? t.sum(to_axes(axis), keepdim, *d) : t.sum(to_axes(axis), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none())
      .def("prod", [](const Tensor& t, py::handle axis, bool keepdim, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? t.prod(to_axes(axis), keepdim, *d) : t.prod(to_axes(axis), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
#define TG_REDUCE(name) cls.def(#name, [](const Tensor& t, py::handle axis, bool keepdim) { return t.name(to_axes(axis), keepdim); }, \
                                py::arg("axis") = py::none(), py::arg("keepdim") = false)
  TG_REDUCE(max); TG_REDUCE(min); TG_REDUCE(mean); TG_REDUCE(any); TG_REDUCE(all); TG_REDUCE(count_nonzero); TG_REDUCE(logsumexp);
#undef TG_REDUCE
  cls.def("var", [](const Tensor& t, py::handle axis, bool keepdim, double c) { return t.var(to_axes(axis), keepdim, c); },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("std", [](const Tensor& t, py::handle axis, bool keepdim, double c) { return t.std(to_axes(axis), keepdim, c); },
           py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("var_mean", [](const Tensor& t, py::handle axis, bool keepdim, double c) { return t.var_mean(to_axes(axis), keepdim, c); },
           py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("std_mean", [](const Tensor& t, py::handle axis, bool keepdim, double c) { return t.std_mean(to_axes(axis), keepdim, c); },
           py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1)
      .def("argmax", [](const Tensor& t, py::handle axis, bool keepdim) {
        return t.argmax(axis.is_none() ? std::nullopt : std::optional(to_int(axis, "axis")), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("argmin", [](const Tensor& t, py::handle axis, bool keepdim) {
        return t.argmin(axis.is_none() ? std::nullopt : std::optional(to_int(axis, "axis")), keepdim);
      }, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("softmax", [](const Tensor& t, int64_t axis, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? t.softmax(axis, *d) : t.softmax(axis);
      }, py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("log_softmax", [](const Tensor& t, int64_t axis, py::handle dtype) {
        std::optional<tg::DType> d = to_dtype(dtype);
        return d ? t.log_softmax(axis, *d) : t.log_softmax(axis);
      }, py::arg("axis") = -1, py::arg("dtype") = py::none())
      .def("softmin", [](const Tensor& t, int64_t axis) { return t.softmin(axis); }, py::arg("axis") = -1)
      .def("cumsum", [](const Tensor& t, int64_t axis) { return t.cumsum(axis); }, py::arg("axis") = 0)
      .def("cumprod", [](const Tensor& t, int64_t axis) { return t.cumprod(axis); }, py::arg("axis") = 0)
      .def("cummax", [](const Tensor& t, int64_t axis) { return t.cummax(axis); }, py::arg("axis") = 0)
      .def("cummin", [](const Tensor& t, int64_t axis) { return t.cummin(axis); }, py::arg("axis") = 0)
      .def("logcumsumexp", [](const Tensor& t, int64_t axis) { return t.logcumsumexp(axis); }, py::arg("axis") = 0);
  init_tensor_movement(cls);
  init_tensor_nn(cls);
}

}  // namespace tgpy
