// vmin/vmax: bounds on the value of every bool and integer UOp, from its sources' bounds.
#include <algorithm>
#include <limits>
#include <unordered_set>

#include "uop/uop.h"

namespace tg::uop {

namespace {

using i128 = __int128;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();

struct Range {
  i128 lo, hi;
};

// Does the dtype have exact int64 bounds? (uint64 values above INT64_MAX and floats do not.)
bool exact(DType dt) { return dt.is_bool() || (dt.is_int() && dt.scalar_type() != ScalarType::UInt64); }

Range dtype_range(DType dt) {
  if (!exact(dt)) return {kMin, kMax};
  return {const_to_int(dt.min()), const_to_int(dt.max())};
}

Range cached(const UOp& u) { return {u.get()->range_min.load(std::memory_order_relaxed), u.get()->range_max.load(std::memory_order_relaxed)}; }

Range corners(i128 a, i128 b, i128 c, i128 d) { return {std::min({a, b, c, d}), std::max({a, b, c, d})}; }

i128 trunc_div(i128 a, i128 b) { return a / b; }  // C++ division truncates, as IDIV does

i128 bit_ceil_minus1(i128 x) {  // smallest 2^k-1 >= x, for x >= 0
  i128 r = 0;
  while (r < x) r = r * 2 + 1;
  return r;
}

Range compute(const UOp& u) {
  DType dt = u.dtype();
  Range full = dtype_range(dt);
  if (!exact(dt)) return full;
  const auto& s = u.src();
  auto r = [&](size_t i) { return exact(s[i].dtype()) ? cached(s[i]) : dtype_range(s[i].dtype()); };
  switch (u.op()) {
    case Ops::CONST: {
      int64_t v = const_to_int(u.const_value());
      return {v, v};
    }
    case Ops::DEFINE_VAR: return {u.arg().get<VarArg>().min, u.arg().get<VarArg>().max};
    case Ops::BIND: return r(0);  // the variable's range: a bound size must never fold to its value
    case Ops::RANGE:
    case Ops::SPECIAL: return {0, std::max<i128>(0, r(0).hi - 1)};
    case Ops::ADD: {
      if (dt.is_bool()) return {r(0).lo | r(1).lo, r(0).hi | r(1).hi};
      return {r(0).lo + r(1).lo, r(0).hi + r(1).hi};
    }
    case Ops::MUL: {
      Range a = r(0), b = r(1);
      return corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
    }
    case Ops::NEG: return {-r(0).hi, -r(0).lo};
    case Ops::MULACC: {
      Range a = r(0), b = r(1), c = r(2);
      Range p = corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
      return {p.lo + c.lo, p.hi + c.hi};
    }
    case Ops::MAX: return {std::max(r(0).lo, r(1).lo), std::max(r(0).hi, r(1).hi)};
    case Ops::IDIV: {
      Range a = r(0), b = r(1);
      if (b.lo > 0 || b.hi < 0)  // truncating division is monotonic in each argument on one side of zero
        return corners(trunc_div(a.lo, b.lo), trunc_div(a.lo, b.hi), trunc_div(a.hi, b.lo), trunc_div(a.hi, b.hi));
      i128 m = std::max(-a.lo, a.hi);  // the divisor may be zero or change sign: |a/b| <= |a|
      return {-m, m};
    }
    case Ops::MOD: {
      Range a = r(0), b = r(1);
      i128 bmax = std::max(-b.lo, b.hi);
      if (bmax <= 0) return full;
      if (b.lo == b.hi && a.lo >= 0 && a.lo / bmax == a.hi / bmax) return {a.lo % bmax, a.hi % bmax};
      // the result has the dividend's sign and is smaller than the divisor in magnitude
      i128 lo = a.lo >= 0 ? 0 : std::max(a.lo, -(bmax - 1)), hi = a.hi <= 0 ? 0 : std::min(a.hi, bmax - 1);
      return {lo, hi};
    }
    case Ops::CMPLT: {
      Range a = r(0), b = r(1);
      if (a.hi < b.lo) return {1, 1};
      if (a.lo >= b.hi) return {0, 0};
      return {0, 1};
    }
    case Ops::CMPNE: {
      Range a = r(0), b = r(1);
      if (a.hi < b.lo || b.hi < a.lo) return {1, 1};
      if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return {0, 0};
      return {0, 1};
    }
    case Ops::WHERE: {
      Range c = r(0), t = r(1), f = r(2);
      if (c.lo == 1) return t;
      if (c.hi == 0) return f;
      return {std::min(t.lo, f.lo), std::max(t.hi, f.hi)};
    }
    case Ops::AND: {
      Range a = r(0), b = r(1);
      if (dt.is_bool()) return {a.lo & b.lo, a.hi & b.hi};
      if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
      if (a.lo >= 0) return {0, a.hi};
      if (b.lo >= 0) return {0, b.hi};
      return full;
    }
    case Ops::OR:
    case Ops::XOR: {
      Range a = r(0), b = r(1);
      if (dt.is_bool()) {
        if (u.op() == Ops::OR) return {a.lo | b.lo, a.hi | b.hi};
        if (a.lo == a.hi && b.lo == b.hi) return {a.lo ^ b.lo, a.lo ^ b.lo};
        return {0, 1};
      }
      if (a.lo >= 0 && b.lo >= 0) {
        i128 hi = bit_ceil_minus1(std::max(a.hi, b.hi));
        return {u.op() == Ops::OR ? std::max(a.lo, b.lo) : 0, hi};
      }
      return full;
    }
    case Ops::SHL: {
      Range a = r(0), b = r(1);
      if (b.lo == b.hi && b.lo >= 0 && b.lo < 62) return {a.lo * (i128(1) << b.lo), a.hi * (i128(1) << b.lo)};
      return full;
    }
    case Ops::SHR: {
      Range a = r(0), b = r(1);
      if (a.lo >= 0 && b.lo >= 0 && b.hi < 64) return {a.lo >> b.hi, a.hi >> b.lo};
      return full;
    }
    case Ops::CAST: {
      DType from = s[0].dtype();
      if (from.is_float()) return full;
      return r(0);  // clamped below: a value that does not fit wraps, and then anything is possible
    }
    default: return full;
  }
}

void ensure_range(const UOp& root) {
  if (root.get()->range_state.load(std::memory_order_acquire)) return;
  // post-order over the nodes that are not cached yet, without recursion
  std::vector<std::pair<const UOp*, bool>> stack{{&root, false}};
  std::unordered_set<const UOpNode*> seen;
  while (!stack.empty()) {
    auto [u, expanded] = stack.back();
    stack.pop_back();
    const UOpNode* n = u->get();
    if (n->range_state.load(std::memory_order_acquire)) continue;
    if (!expanded) {
      if (!seen.insert(n).second) continue;
      stack.push_back({u, true});
      for (const UOp& s : u->src())
        if (!s.get()->range_state.load(std::memory_order_acquire)) stack.push_back({&s, false});
      continue;
    }
    Range r = compute(*u), full = dtype_range(u->dtype());
    // a result outside the dtype's range may wrap around: then nothing narrower than the dtype's range is known
    if (r.lo < full.lo || r.hi > full.hi || r.lo > r.hi) r = full;
    n->range_min.store(static_cast<int64_t>(r.lo), std::memory_order_relaxed);
    n->range_max.store(static_cast<int64_t>(r.hi), std::memory_order_relaxed);
    n->range_state.store(1, std::memory_order_release);
  }
}

}  // namespace

int64_t UOp::vmin() const {
  ensure_range(*this);
  return n_->range_min.load(std::memory_order_relaxed);
}

int64_t UOp::vmax() const {
  ensure_range(*this);
  return n_->range_max.load(std::memory_order_relaxed);
}

}  // namespace tg::uop
