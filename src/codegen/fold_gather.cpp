// Indexing by a tensor of indices is built, as in tinygrad, as a one-hot sum: sum_r where(idx == r, x[r], 0). On
// its own that reads all n rows for each index. Here such a sum is folded into the read it selects:
// where(0 <= idx < n, x[idx], 0), with the load gated so an index out of range reads nothing. X_train[samples]
// then reads 512 rows, not 60000.
#include <optional>

#include "codegen/lower.h"
#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

// `a == b` as the simplifier leaves it: (a != b) != true
std::optional<std::pair<UOp, UOp>> equality(const UOp& c) {
  if (c.op() != Ops::CMPNE || !c.src(1).is_const() || !c.src(1).dtype().is_bool() || !tg::const_to_int(c.src(1).const_value()) ||
      c.src(0).op() != Ops::CMPNE)
    return std::nullopt;
  return std::make_pair(c.src(0).src(0), c.src(0).src(1));
}

bool is_zero(const UOp& u) { return u.is_const() && tg::const_to_double(u.const_value()) == 0; }

// x with every load whose address uses r also gated by `valid`
UOp gate_loads(const UOp& x, const UOp& r, const UOp& valid) {
  std::vector<std::pair<UOp, UOp>> gated;
  for (const UOp& n : x.toposort()) {
    if (n.op() != Ops::INDEX || !n.src(1).contains(r)) continue;
    std::vector<UOp> src = n.src();
    if (src.size() > 2) src[2] = src[2] & valid;
    else src.push_back(valid);
    gated.emplace_back(n, n.with_src(src));
  }
  return gated.empty() ? x : x.substitute(gated);
}

// u as where(c, x, 0), or nullopt. Also through casts (a sum that accumulates in a wider type: cast(where(c, x, 0))
// is where(c, cast(x), 0)) and sums of such terms with one condition (an unrolled axis' copies, which lower() adds
// before the accumulator sees them: where(c, a, 0) + where(c, b, 0) is where(c, a + b, 0)).
std::optional<UOp> selected(const UOp& u) {
  if (u.op() == Ops::WHERE && is_zero(u.src(2))) return u;
  if (u.op() == Ops::CAST) {
    std::optional<UOp> w = selected(u.src(0));
    if (w) return w->src(0).where(w->src(1).cast(u.dtype()), UOp::const_(u.dtype(), int64_t{0}));
  }
  if (u.op() == Ops::ADD) {
    std::optional<UOp> a = selected(u.src(0)), b = selected(u.src(1));
    if (a && b && a->src(0) == b->src(0)) return a->src(0).where(a->src(1) + b->src(1), a->src(2));
  }
  return std::nullopt;
}

// REDUCE(ADD) of where(... & (e == r) & ..., x, 0) over a range r that e does not use: r replaced by e
std::optional<UOp> fold(const UOp& red) {
  if (red.arg().get<Ops>() != Ops::ADD) return std::nullopt;
  std::optional<UOp> w = selected(red.src(0));
  if (!w) return std::nullopt;
  UOp body = w->src(0).where(w->src(1), UOp::const_(red.dtype(), int64_t{0}));
  std::vector<UOp> ranges(red.src().begin() + 1, red.src().end() - 1);
  std::vector<UOp> clauses = uop::split_and(body.src(0));
  for (size_t c = 0; c < clauses.size(); c++) {
    auto eq = equality(clauses[c]);
    if (!eq) continue;
    for (size_t k = 0; k < ranges.size(); k++) {
      const UOp& r = ranges[k];
      if (r.op() != Ops::RANGE) continue;  // a vector lane (lower.cpp) is no loop to fold
      auto is_r = [&](const UOp& u) {  // r, or r cast to other int types
        const UOp* x = &u;
        while (x->op() == Ops::CAST && x->dtype().is_int()) x = &x->src(0);
        return *x == r;
      };
      std::optional<UOp> e;
      if (is_r(eq->second) && !eq->first.contains(r)) e = eq->first;
      else if (is_r(eq->first) && !eq->second.contains(r)) e = eq->second;
      if (!e) continue;
      // the bounds in int64: an unsigned index has no -1 (a uint64 past INT64_MAX turns negative: out of range)
      UOp wide = e->dtype() == dtypes::int64 ? *e : e->cast(dtypes::int64);
      UOp valid = (wide.const_like(int64_t{-1}) < wide) & (wide < r.src(0).cast(dtypes::int64));
      UOp at = e->dtype() == r.dtype() ? *e : e->cast(r.dtype());
      UOp x = gate_loads(body.src(1), r, valid).substitute({{r, at}});
      UOp cond = valid;
      for (size_t o = 0; o < clauses.size(); o++)
        if (o != c) cond = cond & clauses[o].substitute({{r, at}});
      UOp picked = cond.where(x, body.src(2));
      std::vector<UOp> rest;
      for (size_t o = 0; o < ranges.size(); o++)
        if (o != k) rest.push_back(ranges[o]);
      if (rest.empty()) return picked;
      std::vector<UOp> src{picked};
      src.insert(src.end(), rest.begin(), rest.end());
      src.push_back(red.src().back());
      return UOp::make(Ops::REDUCE, red.dtype(), src, red.arg());
    }
  }
  return std::nullopt;
}

}  // namespace

UOp fold_gathers(const UOp& sink) {
  UOp s = sink;
  for (bool changed = true; changed;) {  // one fold at a time: a REDUCE may hold another
    changed = false;
    for (const UOp& n : s.toposort()) {
      if (n.op() != Ops::REDUCE) continue;
      if (std::optional<UOp> f = fold(n)) {
        s = uop::simplify(s.substitute({{n, *f}}));
        changed = true;
        break;
      }
    }
  }
  return s;
}

}  // namespace tg::codegen
