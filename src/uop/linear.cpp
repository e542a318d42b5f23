#include "uop/linear.h"

#include <algorithm>

namespace tg::uop {

int64_t wrap_to(DType dt, int64_t v) { return const_to_int(cast_const(ConstValue{v}, dt)); }

bool term_less(const UOp& a, const UOp& b) {
  if (a == b) return false;
  if (a.op() != b.op()) return a.op() < b.op();
  if (a.op() == Ops::DEFINE_VAR) return a.arg().get<VarArg>().name < b.arg().get<VarArg>().name;
  if (a.op() == Ops::BIND && a.src(0) != b.src(0)) return a.src(0).arg().get<VarArg>().name < b.src(0).arg().get<VarArg>().name;
  if (a.hash() != b.hash()) return a.hash() < b.hash();
  return a.get() < b.get();  // only for a 64-bit hash collision
}

std::optional<LinearForm> decompose(const UOp& u, size_t max_terms) {
  DType dt = u.dtype();
  if (!dt.is_int()) return std::nullopt;
  LinearForm f{dt, {}, 0};
  std::vector<std::pair<UOp, int64_t>> stack{{u, 1}};
  auto mul = [&](int64_t a, int64_t b) { return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b))); };
  auto add = [&](int64_t a, int64_t b) { return wrap_to(dt, static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b))); };
  while (!stack.empty()) {
    auto [t, scale] = std::move(stack.back());
    stack.pop_back();
    if (t.dtype() != dt) {
      f.terms.emplace_back(t, scale);
    } else if (t.op() == Ops::ADD) {
      stack.emplace_back(t.src(1), scale);
      stack.emplace_back(t.src(0), scale);
    } else if (t.op() == Ops::MUL && (t.src(1).is_const() || t.src(0).is_const())) {
      bool right = t.src(1).is_const();
      stack.emplace_back(t.src(right ? 0 : 1), mul(scale, const_to_int(t.src(right ? 1 : 0).const_value())));
    } else if (t.op() == Ops::NEG) {
      stack.emplace_back(t.src(0), mul(scale, -1));
    } else if (t.is_const()) {
      f.constant = add(f.constant, mul(scale, const_to_int(t.const_value())));
    } else {
      f.terms.emplace_back(t, scale);
    }
    if (f.terms.size() > max_terms) return std::nullopt;
  }
  // combine like terms: sorting puts them side by side
  std::sort(f.terms.begin(), f.terms.end(), [](const auto& a, const auto& b) { return term_less(a.first, b.first); });
  std::vector<std::pair<UOp, int64_t>> merged;
  for (auto& [t, c] : f.terms) {
    if (!merged.empty() && merged.back().first == t) merged.back().second = add(merged.back().second, c);
    else merged.emplace_back(t, c);
  }
  // (x//c)*(k*c) + (x%c)*k -> x*k: truncating IDIV and MOD always satisfy x == (x//c)*c + x%c
  for (size_t i = 0; i < merged.size(); i++) {
    const UOp& d = merged[i].first;
    if (d.op() != Ops::IDIV || !d.src(1).is_const() || merged[i].second == 0) continue;
    for (size_t j = 0; j < merged.size(); j++) {
      const UOp& m = merged[j].first;
      if (m.op() != Ops::MOD || m.src(0) != d.src(0) || m.src(1) != d.src(1) || merged[j].second == 0) continue;
      int64_t c = const_to_int(d.src(1).const_value()), k = merged[j].second;
      if (mul(k, c) != merged[i].second) continue;
      merged[i].second = 0, merged[j].second = 0;
      std::optional<LinearForm> inner = decompose(d.src(0), max_terms);
      if (!inner) {
        merged.emplace_back(d.src(0), k);
      } else {
        for (auto& [t, tc] : inner->terms) merged.emplace_back(t, mul(tc, k));
        f.constant = add(f.constant, mul(inner->constant, k));
      }
      break;
    }
  }
  std::erase_if(merged, [](const auto& p) { return p.second == 0; });
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) { return term_less(a.first, b.first); });
  f.terms.clear();
  for (auto& [t, c] : merged) {
    if (!f.terms.empty() && f.terms.back().first == t) f.terms.back().second = add(f.terms.back().second, c);
    else f.terms.emplace_back(t, c);
  }
  std::erase_if(f.terms, [](const auto& p) { return p.second == 0; });
  return f;
}

UOp LinearForm::build() const {
  UOp acc;
  for (const auto& [t, c] : terms) {
    UOp term = c == 1 ? t : t * t.const_like(c);
    acc = acc ? acc + term : term;
  }
  if (!acc) return UOp::const_(dtype, constant);
  return constant == 0 ? acc : acc + acc.const_like(constant);
}

std::optional<std::pair<int64_t, int64_t>> LinearForm::exact_range() const {
  using i128 = __int128;
  i128 lo = constant, hi = constant;
  for (const auto& [t, c] : terms) {
    i128 a = static_cast<i128>(t.vmin()) * c, b = static_cast<i128>(t.vmax()) * c;
    lo += std::min(a, b), hi += std::max(a, b);
    if (hi - lo > (i128(1) << 100)) return std::nullopt;  // far outside any dtype; also keeps the sum in range
  }
  if (dtype.is_unsigned() || dtype.scalar_type() == ScalarType::UInt64) return std::nullopt;
  i128 dmin = const_to_int(dtype.min()), dmax = const_to_int(dtype.max());
  if (lo < dmin || hi > dmax) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

}  // namespace tg::uop
