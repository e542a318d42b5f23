// Folding x//c and x%c (truncating, as C) for a constant c, using the ranges of x's terms; and x//d, x%d for a
// divisor d linear in one symbolic size (attention over a KV cache of `start_pos + 1` positions).
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

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

// An integer expression as a polynomial: sum(coeff * product of atoms), atoms being anything that is not an ADD, a
// MUL or a constant (variables, loop indices, divisions, casts), each product a sorted list of them.
using Monomial = std::vector<UOp>;
struct MonomialLess {
  bool operator()(const Monomial& a, const Monomial& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), term_less);
  }
};
using Polynomial = std::map<Monomial, int64_t, MonomialLess>;

constexpr size_t kMaxMonomials = 64;
constexpr int64_t kMaxCoefficient = int64_t{1} << 40;

// v when it stays within kMaxCoefficient (a product or difference computed in 128 bits)
std::optional<int64_t> bounded(__int128 v) {
  if (v > kMaxCoefficient || v < -kMaxCoefficient) return std::nullopt;
  return static_cast<int64_t>(v);
}

// u expanded (products distributed over sums), or nullopt when it has too many terms or too large coefficients.
// Each node once (`seen`): an index shares subexpressions, and walking it as a tree could take exponential time.
std::optional<Polynomial> expand(const UOp& u, std::unordered_map<const UOpNode*, std::optional<Polynomial>>& seen) {
  if (auto it = seen.find(u.get()); it != seen.end()) return it->second;
  std::optional<Polynomial> out;
  if (u.is_const()) {
    int64_t c = const_to_int(u.const_value());
    if (iabs(c) <= kMaxCoefficient) out = c ? Polynomial{{Monomial{}, c}} : Polynomial{};
  } else if ((u.op() == Ops::ADD || u.op() == Ops::MUL) && u.src().size() == 2 && u.dtype() == u.src(0).dtype()) {
    auto a = expand(u.src(0), seen), b = expand(u.src(1), seen);
    if (a && b) {
      out = u.op() == Ops::ADD ? *a : Polynomial{};
      for (const auto& [mb, cb] : *b) {
        if (u.op() == Ops::ADD) {
          (*out)[mb] += cb;  // both within 2^40: no overflow
          continue;
        }
        for (const auto& [ma, ca] : *a) {
          Monomial m = ma;
          m.insert(m.end(), mb.begin(), mb.end());
          std::sort(m.begin(), m.end(), term_less);
          std::optional<int64_t> c = bounded(static_cast<__int128>(ca) * cb + (*out)[m]);
          if (!c) return seen[u.get()] = std::nullopt;
          (*out)[m] = *c;
        }
      }
      std::erase_if(*out, [](const auto& p) { return p.second == 0; });
      if (out->size() > kMaxMonomials || std::any_of(out->begin(), out->end(), [](const auto& p) { return iabs(p.second) > kMaxCoefficient; }))
        out.reset();
    }
  } else {
    out = Polynomial{{Monomial{u}, 1}};
  }
  return seen[u.get()] = out;
}

std::optional<Polynomial> expand(const UOp& u) {
  std::unordered_map<const UOpNode*, std::optional<Polynomial>> seen;
  return expand(u, seen);
}

UOp build(const Polynomial& p, const UOp& like) {
  UOp acc;
  for (const auto& [m, c] : p) {
    UOp t;
    for (const UOp& a : m) t = t ? t * a : a;
    t = !t ? like.const_like(c) : c == 1 ? t : t * like.const_like(c);
    acc = acc ? acc + t : t;
  }
  return acc ? acc : like.const_like(int64_t{0});
}

// 0 <= r < d: from the bounds, or r = c*R + s for a loop R whose end e has d - c*e constant (the loop over the
// cache's `start_pos + 1` positions: r < d although r.vmax() passes d.vmin())
bool below(const Polynomial& r, const UOp& ru, const Polynomial& d, const UOp& du) {
  if (ru.vmin() < 0) return false;
  if (ru.vmax() < du.vmin()) return true;
  for (const auto& [m, c] : r) {
    if (m.size() != 1 || m[0].op() != Ops::RANGE || c <= 0 || m[0].src(0).is_const()) continue;
    auto e = expand(m[0].src(0));
    if (!e) continue;
    Polynomial gap = d, s = r;
    bool fits = true;
    for (const auto& [me, ce] : *e) {
      std::optional<int64_t> v = bounded(static_cast<__int128>(gap[me]) - static_cast<__int128>(c) * ce);
      fits = fits && v, gap[me] = v.value_or(0);
    }
    if (!fits) continue;
    std::erase_if(gap, [](const auto& p) { return p.second == 0; });
    s.erase(m);
    if (gap.size() > 1 || (gap.size() == 1 && !gap.begin()->first.empty())) continue;
    int64_t g = gap.empty() ? 0 : gap.begin()->second;
    UOp su = build(s, ru);
    if (su.vmin() >= 0 && su.vmax() < g + c) return true;  // r <= c*(e-1) + s.vmax < c*e + g = d
  }
  return false;
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
  // a product of a sum distributed, so that the rules below see its terms: i*(64*v + 2048) as 64*(i*v) + 2048*i
  auto product_of_sum = [](const auto& t) {
    return t.first.op() == Ops::MUL && (t.first.src(0).op() == Ops::ADD || t.first.src(1).op() == Ops::ADD);
  };
  if (f && std::any_of(f->terms.begin(), f->terms.end(), product_of_sum))
    if (auto p = expand(x)) f = decompose(build(*p, x));
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

// x//d and x%d for d = a*v + b (one symbolic atom v, a > 0): x = q*D + r with 0 <= r < D for D = d/k (k dividing
// gcd(a, b)) gives x//d = q//k and x%d = (q%k)*D + r. (h*(v+32) + i)//(v+32) -> h over a loop i to v+32; the
// grouped-query heads' (64*h*(v+32) + 64*i + j)//(512*(v+32)) -> h//8.
UOp fold_symbolic_divmod(const Match& m) {
  const UOp& u = m.root();
  const UOp &x = m["x"], &du = m["d"];
  if (!signed_exact(u.dtype()) || du.is_const() || du.vmin() <= 0) return UOp();
  auto px = expand(x), pd = expand(du);
  if (!px || !pd || pd->size() > 2) return UOp();
  // d = a*v + b
  UOp v;
  int64_t a = 0, b = 0;
  for (const auto& [mono, c] : *pd) {
    if (mono.empty()) b = c;
    else if (mono.size() == 1) v = mono[0], a = c;
    else return UOp();
  }
  if (!v || a <= 0 || b < 0) return UOp();
  // x = v*P + Q, v at most once in each product
  Polynomial p, q;
  for (const auto& [mono, c] : *px) {
    auto it = std::find(mono.begin(), mono.end(), v);
    if (it == mono.end()) {
      q[mono] = c;
      continue;
    }
    Monomial rest = mono;
    rest.erase(rest.begin() + (it - mono.begin()));
    if (std::find(rest.begin(), rest.end(), v) != rest.end()) return UOp();
    p[rest] = c;
  }
  // D = ad*v + bd with ad dividing every coefficient of P: ad among the divisors of gcd(a, P's coefficients), the
  // smallest first (the largest k), k = a/ad dividing b too
  int64_t gp = a;
  for (const auto& [mono, c] : p) gp = std::gcd(gp, iabs(c));
  std::vector<int64_t> ads;
  for (int64_t i = 1; i <= gp / i && i <= (int64_t{1} << 16); i++)
    if (gp % i == 0) ads.push_back(i), ads.push_back(gp / i);
  std::sort(ads.begin(), ads.end());
  ads.erase(std::unique(ads.begin(), ads.end()), ads.end());
  for (int64_t ad : ads) {
    int64_t k = a / ad, bd = b / k;
    if (b % k != 0) continue;
    Polynomial quot, rem = q;
    bool fits = true;
    for (const auto& [mono, c] : p) quot[mono] = c / ad;
    for (const auto& [mono, c] : quot) {
      std::optional<int64_t> v = bounded(static_cast<__int128>(rem[mono]) - static_cast<__int128>(bd) * c);
      fits = fits && v, rem[mono] = v.value_or(0);
    }
    if (!fits) continue;
    std::erase_if(rem, [](const auto& e) { return e.second == 0; });
    UOp qu = build(quot, x), ru = build(rem, x), dd = k == 1 ? du : v * ad + bd;
    Polynomial pdd{{Monomial{v}, ad}};
    if (bd) pdd[Monomial{}] = bd;
    if (qu.vmin() < 0 || !below(rem, ru, pdd, dd)) continue;
    if (u.op() == Ops::IDIV) return k == 1 ? qu : qu / x.const_like(k);
    return k == 1 ? ru : (qu % x.const_like(k)) * dd + ru;
  }
  return UOp();
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
