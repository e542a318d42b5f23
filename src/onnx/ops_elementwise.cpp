// Elementwise ONNX ops: unary math and activations, binary arithmetic and comparisons (with opset 1-6's explicit
// broadcast/axis attributes), variadic Max/Min/Sum/Mean, Where, Cast.
#include <cmath>

#include "onnx/ops.h"
#include "tensor/helpers.h"

namespace tg::onnx {

namespace {

// Inputs A and B of a binary op. Before opset 7, B broadcasts only with broadcast=1, aligned at `axis` (default:
// its trailing dims); from 7 on, numpy's rules apply.
std::pair<Tensor, Tensor> binary_inputs(OpContext& c) {
  Tensor a = c.in(0), b = c.in(1);
  if (c.opset < 7) {
    bool broadcast = c.attr_int("broadcast", 0) != 0;
    int64_t axis = c.attr_int("axis", a.ndim() - b.ndim());
    if (!broadcast) {
      if (a.shape() != b.shape())
        c.fail_shape("shapes " + tensor::shape_str(a.shape()) + " and " + tensor::shape_str(b.shape()) + " differ and broadcast is 0");
    } else {
      if (axis < 0) axis += a.ndim();
      if (axis < 0 || axis + b.ndim() > a.ndim())
        c.fail_shape("B of shape " + tensor::shape_str(b.shape()) + " does not fit A of shape " + tensor::shape_str(a.shape()) + " at axis " + std::to_string(axis));
      Shape s = b.shape();
      s.resize(static_cast<size_t>(a.ndim() - axis), 1);
      b = b.reshape(s);
    }
  }
  return {a, b};
}

void same_type(const OpContext& c, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) c.fail_dtype("inputs must have one type, they are " + a.dtype().name() + " and " + b.dtype().name());
}

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

void unary(OpTable& t, const char* name, Unary f, bool float_only = true) {
  t[name] = [f, float_only](OpContext& c) {
    if (float_only) c.need_float(c.in(0), "the input");
    return one(f(c.in(0)));
  };
}

void binary(OpTable& t, const char* name, Binary f) {
  t[name] = [f](OpContext& c) {
    auto [a, b] = binary_inputs(c);
    same_type(c, a, b);
    return one(f(a, b));
  };
}

void logical(OpTable& t, const char* name, Binary f) {
  t[name] = [f](OpContext& c) {
    auto [a, b] = binary_inputs(c);
    if (!a.dtype().is_bool() || !b.dtype().is_bool()) c.fail_dtype("inputs must be bool, they are " + a.dtype().name() + " and " + b.dtype().name());
    return one(f(a, b));
  };
}

// Variadic ops fold pairwise with broadcasting.
void variadic(OpTable& t, const char* name, Binary f, bool mean) {
  t[name] = [f, mean](OpContext& c) {
    std::vector<Tensor> xs = c.variadic();
    if (xs.empty()) c.fail("needs at least one input");
    Tensor r = xs[0];
    for (size_t k = 1; k < xs.size(); k++) { same_type(c, r, xs[k]); r = f(r, xs[k]); }
    if (mean) r = r.div(r.scalar_like(static_cast<double>(xs.size())));
    return one(r);
  };
}

Tensor cast_to(const OpContext& c, const Tensor& x, DType to) {
  if (x.dtype() == to) return x;
  // float -> int rounds toward zero, as C and numpy; NaN -> int is undefined in ONNX, we give what C gives
  return x.cast(to);
}

}  // namespace

void register_elementwise_ops(OpTable& t) {
  unary(t, "Abs", [](const Tensor& x) { return x.abs(); }, false);
  unary(t, "Neg", [](const Tensor& x) { return x.neg(); }, false);
  unary(t, "Sign", [](const Tensor& x) { return x.sign(); }, false);
  unary(t, "Acos", [](const Tensor& x) { return x.acos(); });
  unary(t, "Acosh", [](const Tensor& x) { return x.acosh(); });
  unary(t, "Asin", [](const Tensor& x) { return x.asin(); });
  unary(t, "Asinh", [](const Tensor& x) { return x.asinh(); });
  unary(t, "Atan", [](const Tensor& x) { return x.atan(); });
  unary(t, "Atanh", [](const Tensor& x) { return x.atanh(); });
  unary(t, "Ceil", [](const Tensor& x) { return x.ceil(); });
  unary(t, "Floor", [](const Tensor& x) { return x.floor(); });
  unary(t, "Round", [](const Tensor& x) { return x.round(); });
  unary(t, "Cos", [](const Tensor& x) { return x.cos(); });
  unary(t, "Cosh", [](const Tensor& x) { return x.cosh(); });
  unary(t, "Sin", [](const Tensor& x) { return x.sin(); });
  unary(t, "Sinh", [](const Tensor& x) { return x.sinh(); });
  unary(t, "Tan", [](const Tensor& x) { return x.tan(); });
  unary(t, "Tanh", [](const Tensor& x) { return x.tanh(); });
  unary(t, "Erf", [](const Tensor& x) { return x.erf(); });
  unary(t, "Exp", [](const Tensor& x) { return x.exp(); });
  unary(t, "Log", [](const Tensor& x) { return x.log(); });
  unary(t, "Sqrt", [](const Tensor& x) { return x.sqrt(); });
  unary(t, "Reciprocal", [](const Tensor& x) { return x.reciprocal(); });
  unary(t, "Sigmoid", [](const Tensor& x) { return x.sigmoid(); });
  unary(t, "Softsign", [](const Tensor& x) { return x.softsign(); });
  unary(t, "Softplus", [](const Tensor& x) { return x.softplus(); });
  unary(t, "HardSwish", [](const Tensor& x) { return x.hardswish(); });
  unary(t, "Relu", [](const Tensor& x) { return x.relu(); }, false);
  unary(t, "IsNaN", [](const Tensor& x) { return x.isnan(); });
  t["Identity"] = [](OpContext& c) { return std::vector<Value>{c.value(0)}; };
  t["Not"] = [](OpContext& c) {
    if (!c.in(0).dtype().is_bool()) c.fail_dtype("the input must be bool, it is " + c.in(0).dtype().name());
    return one(c.in(0).logical_not());
  };
  t["IsInf"] = [](OpContext& c) {
    c.need_float(c.in(0), "the input");
    return one(c.in(0).isinf(c.attr_int("detect_positive", 1) != 0, c.attr_int("detect_negative", 1) != 0));
  };
  t["Elu"] = [](OpContext& c) { c.need_float(c.in(0), "the input"); return one(c.in(0).elu(c.attr_float("alpha", 1.0))); };
  t["Celu"] = [](OpContext& c) { c.need_float(c.in(0), "the input"); return one(c.in(0).celu(c.attr_float("alpha", 1.0))); };
  t["LeakyRelu"] = [](OpContext& c) { c.need_float(c.in(0), "the input"); return one(c.in(0).leaky_relu(c.attr_float("alpha", 0.01))); };
  t["Selu"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    c.need_float(x, "the input");
    double alpha = c.attr_float("alpha", 1.67326319217681884765625), gamma = c.attr_float("gamma", 1.05070102214813232421875);
    return one(x.gt(x.scalar_like(0)).where(x, x.exp().sub(x.scalar_like(1)).mul(x.scalar_like(alpha))).mul(x.scalar_like(gamma)));
  };
  t["HardSigmoid"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    c.need_float(x, "the input");
    double alpha = c.attr_float("alpha", 0.2), beta = c.attr_float("beta", 0.5);
    return one(x.mul(x.scalar_like(alpha)).add(x.scalar_like(beta)).clip(0.0, 1.0));
  };
  t["ThresholdedRelu"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    c.need_float(x, "the input");
    return one(x.gt(x.scalar_like(c.attr_float("alpha", 1.0))).where(x, x.scalar_like(0)));
  };
  t["Shrink"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    double bias = c.attr_float("bias", 0.0), lambd = c.attr_float("lambd", 0.5);
    Tensor lo = x.lt(x.scalar_like(-lambd)), hi = x.gt(x.scalar_like(lambd));
    return one(lo.where(x.add(x.scalar_like(bias)), hi.where(x.sub(x.scalar_like(bias)), x.scalar_like(0))));
  };
  t["PRelu"] = [](OpContext& c) {
    const Tensor& x = c.in(0);
    Tensor slope = c.in(1);
    same_type(c, x, slope);
    // opset < 7: a 1-d slope of the channel count applies per channel (dim 1)
    if (c.opset < 7 && slope.ndim() == 1 && x.ndim() >= 2 && slope.shape()[0] == x.shape()[1] && x.shape()[1] != 1) {
      Shape s(static_cast<size_t>(x.ndim() - 1), 1);
      s[0] = slope.shape()[0];
      slope = slope.reshape(s);
    }
    return one(x.lt(x.scalar_like(0)).where(x.mul(slope), x));
  };
  t["Clip"] = [](OpContext& c) {
    Tensor x = c.in(0);
    if (c.opset < 11) {
      double lo = c.attr_float("min", -INFINITY), hi = c.attr_float("max", INFINITY);
      return one(x.clip(std::isinf(lo) ? std::nullopt : std::optional<double>(lo), std::isinf(hi) ? std::nullopt : std::optional<double>(hi)));
    }
    if (auto lo = c.opt(1)) { same_type(c, x, *lo); x = x.maximum(lo->reshape({})); }
    if (auto hi = c.opt(2)) { same_type(c, x, *hi); x = x.minimum(hi->reshape({})); }
    return one(x);
  };

  binary(t, "Add", [](const Tensor& a, const Tensor& b) { return a.add(b); });
  binary(t, "Sub", [](const Tensor& a, const Tensor& b) { return a.sub(b); });
  binary(t, "Mul", [](const Tensor& a, const Tensor& b) { return a.mul(b); });
  binary(t, "Div", [](const Tensor& a, const Tensor& b) { return a.dtype().is_float() ? a.div(b) : a.idiv(b); });
  binary(t, "Equal", [](const Tensor& a, const Tensor& b) { return a.eq(b); });
  binary(t, "Greater", [](const Tensor& a, const Tensor& b) { return a.gt(b); });
  binary(t, "Less", [](const Tensor& a, const Tensor& b) { return a.lt(b); });
  binary(t, "GreaterOrEqual", [](const Tensor& a, const Tensor& b) { return a.ge(b); });
  binary(t, "LessOrEqual", [](const Tensor& a, const Tensor& b) { return a.le(b); });
  logical(t, "And", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  logical(t, "Or", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  logical(t, "Xor", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  t["Pow"] = [](OpContext& c) {
    auto [a, b] = binary_inputs(c);
    // the result has the base's type (opset 12 allows a different exponent type)
    if (a.dtype().is_float()) return one(a.pow(b.cast(a.dtype())));
    if (!b.dtype().is_float()) return one(a.pow(b.cast(a.dtype())));  // exact integer powers
    // an integer base with a float exponent: numpy's float64 power, then the base's type; pow as exp2(y*log2(x))
    // can land an ulp below an exact integer result (3^6 = 728.99...), so such results are rounded first
    Tensor r = a.cast(dtypes::float64).pow(b.cast(dtypes::float64));
    Tensor near = r.sub(r.round()).abs().le(r.abs().mul(1e-12));
    return one(near.where(r.round(), r).cast(a.dtype()));
  };
  t["Mod"] = [](OpContext& c) {
    auto [a, b] = binary_inputs(c);
    same_type(c, a, b);
    bool fmod = c.attr_int("fmod", 0) != 0;
    if (a.dtype().is_float() && !fmod) c.fail("fmod must be 1 for float inputs");
    return one(fmod ? a.fmod(b) : a.mod(b));
  };
  t["BitShift"] = [](OpContext& c) {
    auto [a, b] = binary_inputs(c);
    same_type(c, a, b);
    if (!a.dtype().is_unsigned()) c.fail_dtype("inputs must be unsigned integers, they are " + a.dtype().name());
    std::string dir = c.attr_string("direction");
    if (dir != "LEFT" && dir != "RIGHT") c.fail("direction must be LEFT or RIGHT, it is '" + dir + "'");
    return one(dir == "LEFT" ? a.lshift(b) : a.rshift(b));
  };
  variadic(t, "Max", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }, false);
  variadic(t, "Min", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }, false);
  variadic(t, "Sum", [](const Tensor& a, const Tensor& b) { return a.add(b); }, false);
  variadic(t, "Mean", [](const Tensor& a, const Tensor& b) { return a.add(b); }, true);
  t["Where"] = [](OpContext& c) {
    if (!c.in(0).dtype().is_bool()) c.fail_dtype("the condition must be bool, it is " + c.in(0).dtype().name());
    same_type(c, c.in(1), c.in(2));
    return one(c.in(0).where(c.in(1), c.in(2)));
  };
  t["Cast"] = [](OpContext& c) {
    int64_t to = c.attr_int("to");
    c.ignore("saturate");
    std::optional<DType> dt = proto::to_dtype(static_cast<int32_t>(to));
    if (!dt) c.fail_dtype(std::string("cannot cast to ") + proto::elem_type_name(static_cast<int32_t>(to)) + ": tinygrad.cpp has no such dtype");
    return one(cast_to(c, c.in(0), *dt));
  };
  t["CastLike"] = [](OpContext& c) {
    c.ignore("saturate");
    return one(cast_to(c, c.in(0), c.in(1).dtype()));
  };
}

}  // namespace tg::onnx
