// Whether a float32 product is exact: bounds on the significand and exponent of float values that are known from
// how they were made (casts from integers of bounded range and from narrower floats, constants, products and
// negations of those). Where the product a*b is exact, a*b + c may be one FMA and every result stays as it was.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "uop/uop.h"

namespace tg::uop {

namespace {

// every value is 0, or has at most `bits` significant bits and a magnitude in [2^emin, 2^emax)
struct Bound {
  int bits = 0;
  int emin = 1 << 20, emax = -(1 << 20);  // empty: the value is 0
  bool zero() const { return bits == 0; }
};

Bound either(const Bound& a, const Bound& b) {
  if (a.zero()) return b;
  if (b.zero()) return a;
  return {std::max(a.bits, b.bits), std::min(a.emin, b.emin), std::max(a.emax, b.emax)};
}

int bit_length(uint64_t m) {
  int n = 0;
  while (m) n++, m >>= 1;
  return n;
}

std::optional<Bound> of_double(double v) {
  if (v == 0) return Bound{};
  if (!std::isfinite(v) || static_cast<double>(static_cast<float>(v)) != v) return std::nullopt;
  int e = 0;
  double m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  uint64_t mant = static_cast<uint64_t>(std::ldexp(m, 53));
  int bits = 53;
  while (bits > 1 && !(mant & 1)) mant >>= 1, bits--;
  return Bound{bits, e - 1, e};
}

using Memo = std::unordered_map<const UOpNode*, std::optional<Bound>>;

std::optional<Bound> compute(const UOp& u, int depth, Memo& memo);

// depth-limited (the expressions that feed an FMA are a few nodes deep: a dequantization's scale times its codes)
// and memoized (a vector built of the same lanes many times over stays linear)
std::optional<Bound> bound(const UOp& u, int depth, Memo& memo) {
  if (depth > 12 || u.dtype().scalar() != dtypes::float32) return std::nullopt;
  auto it = memo.find(u.get());
  if (it != memo.end()) return it->second;
  std::optional<Bound> b = compute(u, depth, memo);
  memo[u.get()] = b;
  return b;
}

std::optional<Bound> compute(const UOp& u, int depth, Memo& memo) {
  const auto& s = u.src();
  switch (u.op()) {
    case Ops::CONST: return of_double(const_to_double(u.const_value()));
    case Ops::CAST: {
      DType from = s[0].dtype().scalar();
      if (from == dtypes::float16) return Bound{11, -24, 16};
      if (from == dtypes::bfloat16) return Bound{8, -133, 128};
      if (!from.is_int() && !from.is_bool()) return std::nullopt;
      if (from == dtypes::uint64) return std::nullopt;  // no exact int64 bounds
      int64_t lo = s[0].vmin(), hi = s[0].vmax();
      if (lo == std::numeric_limits<int64_t>::min()) return std::nullopt;
      uint64_t m = static_cast<uint64_t>(std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi));
      if (m == 0) return Bound{};
      int n = bit_length(m);
      if (n > 24) return std::nullopt;  // the cast itself rounds
      return Bound{n, 0, n};
    }
    case Ops::NEG: return bound(s[0], depth + 1, memo);
    case Ops::MUL: {
      std::optional<Bound> a = bound(s[0], depth + 1, memo), b = bound(s[1], depth + 1, memo);
      if (!a || !b) return std::nullopt;
      if (a->zero() || b->zero()) return Bound{};
      return Bound{a->bits + b->bits, a->emin + b->emin, a->emax + b->emax};
    }
    case Ops::WHERE: {
      std::optional<Bound> a = bound(s[1], depth + 1, memo), b = bound(s[2], depth + 1, memo);
      if (!a || !b) return std::nullopt;
      return either(*a, *b);
    }
    case Ops::VECTORIZE: {
      Bound all;
      for (const UOp& x : s) {
        std::optional<Bound> b = bound(x, depth + 1, memo);
        if (!b) return std::nullopt;
        all = either(all, *b);
      }
      return all;
    }
    case Ops::GEP: return bound(s[0], depth + 1, memo);
    default: return std::nullopt;
  }
}

}  // namespace

bool exact_float32_product(const UOp& mul) {
  if (mul.op() != Ops::MUL || mul.dtype().scalar() != dtypes::float32) return false;
  Memo memo;
  std::optional<Bound> p = bound(mul, 0, memo);
  // representable as it is: a significand that fits, and neither subnormal (rounded) nor past the largest float
  return p && (p->zero() || (p->bits <= 24 && p->emin >= -126 && p->emax <= 128));
}

}  // namespace tg::uop
