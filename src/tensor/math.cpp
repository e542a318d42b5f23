// Elementwise math composed from the primitives (exp2, log2, sin, sqrt, reciprocal, and the ALU ops).
#include <bit>
#include <cmath>
#include <numbers>

#include "tensor/custom_grad.h"

namespace tg {

namespace {

constexpr double kPi = std::numbers::pi;


// c[0]*x^(n-1) + ... + c[n-1], by Horner's rule
Tensor poly(const Tensor& x, std::initializer_list<double> c) {
  Tensor r = x.zeros_like();
  for (double k : c) r = r * x + k;
  return r;
}

// An odd function with f(0) = 0 from f on [0, inf): sign(x) * f(|x|), exactly x at +-0 with slope0 = f'(0) as its
// gradient there (sign's gradient is 0, so the product alone had none at 0)
template <class F> Tensor odd(const Tensor& x, double slope0, F f) {
  return (x == 0.0).where(x * slope0, x.sign() * f(x.abs()));
}

// asin on [-1, 1]: Abramowitz & Stegun 4.4.46 (absolute error 2e-8)
Tensor asin_of(const Tensor& x) {
  return odd(x, 1.0, [](const Tensor& a) {
    return kPi / 2 - (1.0 - a).sqrt() * poly(a, {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046,
                                                 0.0889789874, -0.2145988016, 1.5707963050});
  });
}

// Integer powers in the integers' own dtype by squaring, over the exponent's bits (only as many as a constant one
// has): exact, and wrapping as PyTorch's (through float64 they were wrong past 2^53: 3^39). A negative exponent
// gives 1/b^e truncated toward zero: 1 for b = 1, +-1 for b = -1, 0 otherwise.
Tensor int_pow(const Tensor& base, const Tensor& exponent, SourceLocation where) {
  auto [b, e] = tensor::broadcasted(base, exponent, "pow", where);
  int bits = static_cast<int>(b.dtype().itemsize()) * 8;
  if (exponent.uop().op() == uop::Ops::CONST)
    bits = std::bit_width(static_cast<uint64_t>(std::max<int64_t>(0, const_to_int(exponent.uop().const_value()))));
  Tensor r = b.ones_like(), square = b, rest = e;
  for (int i = 0; i < bits; i++) {
    r = (rest & 1).cast(dtypes::bool_).where(r * square, r);
    if (i + 1 < bits) rest = rest >> 1, square = square * square;
  }
  if (b.dtype().is_unsigned()) return r;
  Tensor odd_e = (e & 1).cast(dtypes::bool_);
  Tensor reciprocal = (b == 1).where(b.ones_like(), (b == -1).where(odd_e.where(b, b.ones_like()), b.zeros_like()));
  return (e < 0).where(reciprocal, r);
}

// the largest magnitude from which every float of this dtype is an integer
double integral_from(DType dt) { return dt == dtypes::float64 ? 4503599627370496.0 : 8388608.0; }

}  // namespace

Tensor Tensor::exp(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return (x * (1 / std::numbers::ln2)).exp2(); });
}
Tensor Tensor::log(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return x.log2() * std::numbers::ln2; });
}
Tensor Tensor::rsqrt(Loc where) const { return sqrt(where).reciprocal(where); }
namespace {
// cos(|x|): below 3 as sin(pi/2 - |x|), pi/2 in two parts (hi, the dtype's nearest, and lo, the rest), where
// hi - |x| is exact from pi/4 up (Sterbenz): full relative precision near pi/2, where tan needs it. Beyond, as
// 1 - 2 sin^2(|x| / 2) (halving is exact): sin's error, an absolute 1e-7 in float32. (sin(pi/2 - x) alone rounded
// pi/2 - x to half an ulp of x: cos(1e4) off by 1e-4, cos(3e7) wholly wrong, as rotary embeddings feed it.)
Tensor cos_of(const Tensor& x) {
  bool f64 = x.dtype() == dtypes::float64;
  double hi = f64 ? kPi / 2 : static_cast<double>(static_cast<float>(kPi / 2));
  double lo = f64 ? 6.123233995736766e-17 : kPi / 2 - hi;  // pi/2 - hi (float64's from the 128-bit value of pi/2)
  Tensor a = x.abs(), s = (a * 0.5).sin();
  return (a < 3.0).where(((hi - a) + lo).sin(), 1.0 - 2.0 * s * s);
}
}  // namespace

Tensor Tensor::cos(Loc where) const { return tensor::float_math(*this, where, cos_of); }
Tensor Tensor::tan(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return x.sin() / cos_of(x); });
}
Tensor Tensor::asin(Loc where) const { return tensor::float_math(*this, where, asin_of); }
Tensor Tensor::acos(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return kPi / 2 - asin_of(x); });
}
Tensor Tensor::atan(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) {
    // asin(x / sqrt(1 + x^2)), through 1/x above 1 so x^2 never overflows
    // (1/x only where big: at 0 its infinite gradient would make the masked 0 a NaN)
    Tensor big = x.abs() > 1.0, y = big.where(big.where(x, 1.0).reciprocal(), x), r = asin_of(y / (y * y + 1.0).sqrt());
    return big.where(x.sign() * (kPi / 2) - r, r);
  });
}
Tensor Tensor::sinh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return (x.exp() - x.neg().exp()) * 0.5; });
}
Tensor Tensor::cosh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return (x.exp() + x.neg().exp()) * 0.5; });
}
Tensor Tensor::tanh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return (x * 2.0).sigmoid() * 2.0 - 1.0; });
}
Tensor Tensor::asinh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) {
    return odd(x, 1.0, [](const Tensor& a) { return (a + (a * a + 1.0).sqrt()).log(); });  // no cancellation for x < 0
  });
}
Tensor Tensor::acosh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return (x + (x * x - 1.0).sqrt()).log(); });
}
Tensor Tensor::atanh(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return ((1.0 + x) / (1.0 - x)).log() * 0.5; });
}
Tensor Tensor::erf(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) {  // Abramowitz & Stegun 7.1.26
    return odd(x, 2 / std::sqrt(kPi), [](const Tensor& a) {
      Tensor t = (a * 0.3275911 + 1.0).reciprocal();
      Tensor p = poly(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}) * t;
      return 1.0 - p * (a * a).neg().exp();
    });
  });
}

Tensor Tensor::abs(Loc where) const {
  if (dtype().is_bool() || dtype().is_unsigned()) return *this;
  // the sign bit clears for -0.0 too (x - x is +0 there, NaN for NaN), and the gradient at 0 is 0, as PyTorch's
  return (*this < 0).where(neg(where), (*this > 0).where(*this, sub(*this, where)));
}
Tensor Tensor::sign(Loc where) const {
  if (dtype().is_bool()) return *this;
  Tensor one = ones_like(std::nullopt, where), zero = zeros_like();
  // NaN compares false both ways: its sign is 0, as PyTorch
  return (*this > 0).where(one, dtype().is_unsigned() ? zero : (*this < 0).where(one.neg(), zero));
}
Tensor Tensor::trunc(Loc where) const {
  if (!dtype().is_float()) return *this;
  // through int64 below the magnitude where every float is already an integer; inf and NaN pass through
  Tensor t = cast(dtypes::int64, where).cast(dtype(), where);
  return (abs() < integral_from(dtype())).where(t, *this);
}
Tensor Tensor::floor(Loc where) const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc(where);
  return (t > *this).where(t - 1.0, t);
}
Tensor Tensor::ceil(Loc where) const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc(where);
  return (t < *this).where(t + 1.0, t);
}
Tensor Tensor::round(Loc where) const {
  if (!dtype().is_float()) return *this;
  Tensor f = floor(where), d = *this - f;
  // exactly half: to the even neighbour
  Tensor f_odd = (f - (f * 0.5).floor() * 2.0) != 0;
  return (d > 0.5).where(f + 1.0, (d < 0.5).where(f, f_odd.where(f + 1.0, f)));
}
Tensor Tensor::square(Loc where) const { return mul(*this, where); }

Tensor Tensor::isnan(Loc where) const {
  if (!dtype().is_float()) return full_like(0, dtypes::bool_, where);
  return ne(*this, where);
}
Tensor Tensor::isinf(bool detect_positive, bool detect_negative, Loc where) const {
  Tensor none = full_like(0, dtypes::bool_, where);
  if (!dtype().is_float()) return none;
  Tensor pos = detect_positive ? eq(scalar_like(INFINITY), where) : none;
  return detect_negative ? pos | eq(scalar_like(-INFINITY), where) : pos;
}
Tensor Tensor::isfinite(Loc where) const { return isinf(true, true, where).bitwise_or(isnan(where), where).logical_not(); }
Tensor Tensor::bitwise_not(Loc where) const {
  if (dtype().is_bool()) return logical_not(where);
  if (!dtype().is_int()) throw DTypeError("bitwise_not", "needs integer or bool tensors, not " + dtype().name(), where);
  return bitwise_xor(Tensor(-1, dtype(), device(), where), where);  // all ones in two's complement
}

Tensor Tensor::pow(const Tensor& exponent, Loc where) const try {
  DType dt = least_upper_dtype({dtype(), exponent.dtype()});
  if (dt.is_bool()) throw DTypeError("pow", "needs number tensors, not bool", where);
  if (exponent.uop().op() == uop::Ops::CONST) {
    double e = const_to_double(exponent.uop().const_value());
    if (dt.is_int() && e < 0)
      throw DTypeError("pow", "integers to negative integer powers are not allowed (" + dt.name() + " ** " + tensor::num_str(e) +
                                  "; use a float base)", where);
    // square roots as PyTorch computes them (sqrt(-inf) is NaN, 1/sqrt(-0.0) is -inf, unlike C's pow), with pow's
    // gradient (PyTorch's too)
    if (dt.is_float() && (e == 0.5 || e == -0.5))
      return tensor::with_gradient_rule(e > 0 ? sqrt(where) : rsqrt(where), tensor::GradRule::pow, {*this, exponent.cast(dt, where)});
    // a small integer constant exponent is repeated multiplication: exact, and cheap once fused
    if (e == std::floor(e) && e >= 0 && e <= 8) {
      Tensor b = cast(dt, where), r = b.ones_like();
      if (e == 0) return b.isnan().where(r, r);  // 1 even for NaN, with x kept in the graph: a zero gradient, as PyTorch
      for (int i = 0; i < e; i++) r = r * b;
      return r;
    }
  }
  if (dt.is_int()) return int_pow(cast(dt, where), exponent.cast(dt, where), where);
  // float32 for 16-bit floats; C's pow at the special points (as PyTorch): the magnitude from exp2(e * log2|b|), then
  // the sign and the exact cases
  DType fdt = tensor::compute_float(dt);
  auto [b, e] = tensor::broadcasted(cast(fdt, where), exponent.cast(fdt, where), "pow", where);
  Tensor r = (e * b.abs().log2(where)).exp2(where);
  Tensor neg = (b < 0) | ((b == 0) & (b.reciprocal() < 0));  // -0.0 too: (-0)^-1 is -inf
  Tensor e_int = e.trunc() == e;                              // inf counts as an even integer
  Tensor e_odd = e_int & (e.abs() < INFINITY) & ((e - (e * 0.5).trunc() * 2.0) != 0);
  r = (neg & e_odd).where(-r, r);
  r = ((b < 0) & (b > -INFINITY) & e_int.logical_not()).where(r.full_like(NAN), r);  // (-8)^(1/3): NaN; (-inf)^0.5 = inf
  r = ((e == 0) | (b == 1) | ((b.abs() == 1) & e.isinf())).where(r.ones_like(), r);  // 1 even for NaN
  return tensor::with_gradient_rule(r, tensor::GradRule::pow, {b, e}).cast(dt, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "pow", where);
}

namespace tensor {

// PyTorch's: d/db = e * b^(e-1) (0 where e = 0), d/de = b^e * ln(b) (0 where b = 0 and e >= 0)
std::vector<Tensor> pow_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>&) {
  Tensor r = source_of(u, 0), b = source_of(u, 1), e = source_of(u, 2);
  // b^(e-1) with a constant exponent as pow computes it for one (x^-0.5 as 1/sqrt(x): -inf at -0.0, as PyTorch)
  Tensor shifted = u.src(2).op() == uop::Ops::CONST ? b.pow(const_to_double(u.src(2).const_value()) - 1) : b.pow(e - 1.0);
  Tensor db = (e == 0).where(g.zeros_like(), g * (e * shifted));
  Tensor de = ((b == 0) & (e >= 0)).where(g.zeros_like(), g * (r * b.log()));
  return {Tensor(), db, de};
}

}  // namespace tensor

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight, Loc where) const try {
  return add(end.sub(*this, where).mul(weight, where), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "lerp", where);
}
Tensor Tensor::lerp(const Tensor& end, double weight, Loc where) const {
  return lerp(end, Tensor(weight, least_upper_float(dtype()), device(), where), where);
}

namespace {

// a bound of clip or hardtanh as a weak scalar: integral bounds keep an integer tensor's dtype (as PyTorch),
// fractional ones promote it to float
Tensor bound_of(const Tensor& x, double v, SourceLocation where) {
  return v == std::floor(v) && !x.dtype().is_float() ? x.scalar_like(static_cast<int64_t>(v), where) : x.scalar_like(v, where);
}

}  // namespace

namespace {

// x limited to [lo, hi] by comparison (NaN stays NaN), with clamp's gradient rule: the gradient passes where
// lo <= x <= hi (PyTorch's clamp: at a bound too; NaN gets none), or only strictly inside (hardtanh)
Tensor limited(const Tensor& x, std::optional<double> min, std::optional<double> max, bool exclusive, SourceLocation where) {
  Tensor r = x;
  if (min) r = (r < bound_of(r, *min, where)).where(bound_of(r, *min, where), r, where);
  if (max) r = (r > bound_of(r, *max, where)).where(bound_of(r, *max, where), r, where);
  if (!r.dtype().is_float()) return r;
  Tensor lo = r.scalar_like(min.value_or(-INFINITY), where), hi = r.scalar_like(max.value_or(INFINITY), where);
  return tensor::with_gradient_rule(r, tensor::GradRule::clamp, {x.cast(r.dtype(), where), lo, hi}, {exclusive});
}

}  // namespace

Tensor Tensor::clip(std::optional<double> min, std::optional<double> max, Loc where) const {
  if (!min && !max) throw ArgumentError("clip", "needs a min or a max", where);
  if (dtype().is_bool()) throw DTypeError("clip", "needs a number tensor, not bool", where);
  return limited(*this, min, max, false, where);
}
Tensor Tensor::hardtanh(double min_val, double max_val, Loc where) const {
  if (dtype().is_bool()) throw DTypeError("hardtanh", "needs a number tensor, not bool", where);
  return limited(*this, min_val, max_val, true, where);  // at a bound the gradient is 0 (relu6, hardsigmoid too)
}

namespace tensor {

std::vector<Tensor> clamp_gradient(const uop::UOp& u, const Tensor& g, const std::vector<int64_t>& exclusive) {
  Tensor x = source_of(u, 1), lo = source_of(u, 2), hi = source_of(u, 3);
  Tensor inside = exclusive[0] ? (x > lo) & (x < hi) : (x >= lo) & (x <= hi);
  return {Tensor(), inside.where(g, g.zeros_like()), Tensor(), Tensor()};
}

}  // namespace tensor

Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max, Loc where) const { return clip(min, max, where); }

Tensor Tensor::log10(Loc where) const {
  return tensor::float_math(*this, where, [](const Tensor& x) { return x.log2() * (std::numbers::ln2 / std::numbers::ln10); });
}

Tensor Tensor::copysign(const Tensor& other, Loc where) const try {
  auto [a, b] = tensor::broadcasted(*this, other, "copysign", where);
  DType dt = least_upper_float(a.dtype());
  Tensor mag = a.cast(dt, where).abs(where);
  // negative, or -0.0 (whose reciprocal is -inf); the gradient is sign(a) sign(b), 0 at a = 0 (PyTorch's)
  Tensor neg = b < 0;
  if (b.dtype().is_float()) neg = neg | (b.reciprocal() < 0);
  return neg.where(-mag, mag);
} catch (const Error& e) {
  tensor::rethrow_in(e, "copysign", where);
}

Tensor Tensor::fmod(const Tensor& other, Loc where) const try {
  auto [x, y] = tensor::broadcasted(*this, other, "fmod", where);
  if (x.dtype().is_bool()) throw DTypeError("fmod", "needs number tensors, not bool", where);
  if (!x.dtype().is_float()) {  // C's %, with mod()'s guards (x % 0 is 0, MIN % -1 is 0)
    Tensor m = x.mod(y, where);
    if (x.dtype().is_unsigned()) return m;
    return ((m != 0) & ((m < 0) != (x < 0))).where(m - y, m, where);
  }
  Tensor r = x - x.div(y, "trunc", where) * y;
  return (y.isinf() & x.isfinite()).where(x, r);  // fmod(x, inf) = x (the formula would give 0 * inf)
} catch (const Error& e) {
  tensor::rethrow_in(e, "fmod", where);
}

Tensor Tensor::logaddexp(const Tensor& other, Loc where) const try {
  auto [a, b] = tensor::broadcasted(cast(least_upper_float(dtype()), where), other.cast(least_upper_float(other.dtype()), where),
                                    "logaddexp", where);
  // shifted by the larger (no gradient: the sum's derivative in it is 0); by 0 where that is infinite
  Tensor m = a.maximum(b).detach();
  m = m.isinf().where(m.zeros_like(), m);
  return ((a - m).exp() + (b - m).exp()).log() + m;
} catch (const Error& e) {
  tensor::rethrow_in(e, "logaddexp", where);
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan, Loc where) const try {
  if (!(rtol >= 0) || !(atol >= 0))
    throw ArgumentError("isclose", "rtol and atol must be non-negative, got " + tensor::num_str(rtol) + " and " + tensor::num_str(atol), where);
  auto [a, b] = tensor::broadcasted(*this, other, "isclose", where);
  if (a.dtype().is_bool()) return a == b;
  if (!a.dtype().is_float()) return (a == b) | ((a - b).abs().cast(dtypes::float64) <= b.abs().cast(dtypes::float64) * rtol + atol);
  Tensor close = a.isfinite() & b.isfinite() & ((a - b).abs() <= b.abs() * rtol + atol);
  close = close | ((a.isinf() | b.isinf()) & (a == b));
  return equal_nan ? close | (a.isnan() & b.isnan()) : close;
} catch (const Error& e) {
  tensor::rethrow_in(e, "isclose", where);
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan, Loc where) const try {
  return isclose(other, rtol, atol, equal_nan, where).all().item<bool>(where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "allclose", where);
}

}  // namespace tg
