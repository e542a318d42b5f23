// Folding x//c and x%c (truncating, as C) for a constant c, using the ranges of x's terms.
#include <algorithm>
#include <numeric>

#include "tg/error.h"
#include "uop/linear.h"
#include "uop/symbolic_rules.h"

namespace tg::uop {

namespace {

bool signed_exact(DType dt) { return dt.is_int() && !dt.is_unsigned(); }
int64_t iabs(int64_t v) { return v < 0 ? -v : v; }

// x = B + S with 0 <= S < g, where g divides c and every coefficient of B: then x//c = B//c and x%c = B%c + S.
UOp remove_small_terms(const LinearForm& f, int64_t c, bool is_div) {
  std::vector<size_t> order(f.terms.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return iabs(f.terms[a].second) < iabs(f.terms[b].second); });
  for (size_t k = 0; k < order.size(); k++) {  // S = the k terms with the smallest coefficients, plus the constant
    if (k == 0 && f.constant == 0) continue;
    LinearForm small{f.dtype, {}, f.constant}, big{f.dtype, {}, 0};
    int64_t g = c;
    for (size_t i = 0; i < order.size(); i++) {
      const auto& term = f.terms[order[i]];
      if (i < k) small.terms.push_back(term);
      else big.terms.push_back(term), g = std::gcd(g, iabs(term.second));
    }
    if (g <= 1 || big.terms.empty()) continue;
    auto r = small.exact_range();
    if (!r || r->first < 0 || r->second >= g) continue;
    auto by_order = [](const auto& a, const auto& b) { return term_less(a.first, b.first); };
    std::sort(small.terms.begin(), small.terms.end(), by_order);
    std::sort(big.terms.begin(), big.terms.end(), by_order);
    UOp b = big.build(), cu = b.const_like(c);
    return is_div ? b / cu : (b % cu) + small.build();
  }
  return UOp();
}

}  // namespace

UOp fold_divmod(const Match& m) {
  const UOp& u = m.root();
  const UOp& x = m["x"];
  bool is_div = u.op() == Ops::IDIV;
  DType dt = u.dtype();
  if (!signed_exact(dt)) return UOp();
  int64_t c = const_to_int(m["c"].const_value());
  if (c == 0) throw ArgumentError(is_div ? "idiv" : "mod", "division by zero in " + u.render());
  if (c == const_to_int(dt.min())) return UOp();
  // x//-c -> -(x//c), x%-c -> x%c: truncation is symmetric
  if (c < 0) return is_div ? -(x / -c) : x % -c;
  if (x.is_const()) return UOp();  // constant folding's job
  int64_t lo = x.vmin(), hi = x.vmax();
  std::optional<LinearForm> f = decompose(x);
  if (f && !f->exact_range()) f.reset();
  // g divides c and every coefficient: (g*y)//(g*d) -> y//d, (g*y)%(g*d) -> (y%d)*g, whatever the signs
  if (f) {
    int64_t g = std::gcd(c, iabs(f->constant));
    for (const auto& [t, k] : f->terms) g = std::gcd(g, iabs(k));
    if (g > 1) {
      LinearForm y = *f;
      y.constant /= g;
      for (auto& [t, k] : y.terms) k /= g;
      UOp yu = y.build(), d = yu.const_like(c / g);
      return is_div ? yu / d : (yu % d) * g;
    }
  }
  // a non-positive dividend: x//c -> -((-x)//c), x%c -> -((-x)%c)
  if (hi <= 0 && lo < 0 && lo != const_to_int(dt.min())) return is_div ? -((-x) / c) : -((-x) % c);
  if (lo < 0) return UOp();  // a dividend of both signs: nothing more is exact
  // x in one period [q*c, q*c+c): x//c -> q, x%c -> x - q*c
  if (lo / c == hi / c) return is_div ? x.const_like(lo / c) : (lo / c == 0 ? x : x - (lo / c) * c);
  if (!f) return UOp();
  // x = c*Q + R with R >= 0: x//c -> Q + R//c, x%c -> R%c
  LinearForm q{dt, {}, f->constant / c}, r{dt, {}, f->constant % c};
  bool moved = q.constant != 0;
  for (const auto& [t, k] : f->terms) {
    if (k / c != 0) q.terms.emplace_back(t, k / c), moved = true;
    if (k % c != 0) r.terms.emplace_back(t, k % c);
  }
  if (moved) {
    auto rr = r.exact_range();
    if (rr && rr->first >= 0) {
      UOp ru = r.build(), cu = ru.const_like(c);
      return is_div ? q.build() + ru / cu : ru % cu;
    }
  }
  return remove_small_terms(*f, c, is_div);
}

UOp fold_nested_div(const Match& m) {
  int64_t c1 = const_to_int(m["c1"].const_value()), c2 = const_to_int(m["c2"].const_value());
  const UOp& x = m["x"];
  if (!signed_exact(x.dtype()) || c1 <= 0 || c2 <= 0) return UOp();
  __int128 c = static_cast<__int128>(c1) * c2;
  if (c > const_to_int(x.dtype().max())) return UOp();
  return x / x.const_like(static_cast<int64_t>(c));
}

UOp fold_nested_mod(const Match& m) {
  int64_t c1 = const_to_int(m["c1"].const_value()), c2 = const_to_int(m["c2"].const_value());
  const UOp& x = m["x"];
  if (!signed_exact(x.dtype()) || c1 <= 0 || c2 <= 0 || c1 % c2 != 0) return UOp();
  return x % m["c2"];
}

UOp fold_div_add_div(const Match& m) {
  const UOp& x = m["x"];
  int64_t c = const_to_int(m["c"].const_value()), a = const_to_int(m["a"].const_value()),
          d = const_to_int(m["d"].const_value());
  if (!signed_exact(x.dtype()) || c <= 0 || d <= 0 || a < 0 || x.vmin() < 0) return UOp();
  __int128 ac = static_cast<__int128>(a) * c, cd = static_cast<__int128>(c) * d, max = const_to_int(x.dtype().max());
  if (cd > max || ac + x.vmax() > max) return UOp();
  return (x + static_cast<int64_t>(ac)) / static_cast<int64_t>(cd);
}

}  // namespace tg::uop
