#include "codegen/opts.h"

#include <algorithm>
#include <unordered_map>

#include "codegen/lower.h"
#include "tg/context.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

// What the heuristic needs to know about a kernel lowered without opts.
struct KernelFacts {
  std::vector<int64_t> globals;             // global axes of size > 1, in order
  std::vector<int64_t> reduced;             // axes a REDUCE still loops over (gathers folded away are not)
  std::vector<uint64_t> load_axes;          // per LOAD: bit a set when its address or gate depends on axis a
};

KernelFacts facts(const LoweredKernel& k) {
  KernelFacts f;
  for (size_t a = 0; a < k.full_shape.size(); a++)
    if (k.full_shape[a] > 1 && std::find(k.reduce_axes.begin(), k.reduce_axes.end(), static_cast<int64_t>(a)) == k.reduce_axes.end())
      f.globals.push_back(static_cast<int64_t>(a));
  std::unordered_map<const uop::UOpNode*, uint64_t> axes;  // the RANGEs each node depends on
  for (const UOp& u : k.sink.toposort()) {
    uint64_t m = 0;
    if (u.op() == Ops::RANGE && u.arg().get<int64_t>() < 64) m = uint64_t{1} << u.arg().get<int64_t>();
    for (const UOp& s : u.src()) m |= axes[s.get()];
    axes[u.get()] = m;
    if (u.op() == Ops::LOAD) f.load_axes.push_back(m);
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i + 1 < u.src().size(); i++) {
        int64_t a = u.src(i).arg().get<int64_t>();
        if (std::find(f.reduced.begin(), f.reduced.end(), a) == f.reduced.end()) f.reduced.push_back(a);
      }
  }
  std::sort(f.reduced.begin(), f.reduced.end());
  return f;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

std::string opts_str(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts)
    s += (s.empty() ? "" : " ") + std::string(o.op == OptOp::UPCAST ? "UPCAST(" : "UNROLL(") + std::to_string(o.axis) + "," +
         std::to_string(o.amount) + ")";
  return s;
}

bool legal(const LoweredKernel& k, const std::vector<Opt>& opts) {
  KernelFacts f = facts(k);
  std::vector<int64_t> used;
  for (const Opt& o : opts) {
    if (o.axis < 0 || o.axis >= static_cast<int64_t>(k.full_shape.size()) || contains(used, o.axis)) return false;
    if (o.amount < 2 || k.full_shape[o.axis] % o.amount != 0) return false;
    if (!contains(o.op == OptOp::UPCAST ? f.globals : f.reduced, o.axis)) return false;
    used.push_back(o.axis);
  }
  return true;
}

std::vector<Opt> choose_opts(const LoweredKernel& k) {
  if (getenv_int("NOOPT")) return {};
  KernelFacts f = facts(k);
  if (f.reduced.empty()) return {};  // elementwise: the C compiler's loop vectorizer does well on these
  std::vector<Opt> opts;
  int64_t upcast = 1;
  // register blocking: a global axis that some input does not depend on gives every copy the same loads
  for (auto it = f.globals.rbegin(); it != f.globals.rend() && opts.size() < 2; ++it) {
    int64_t a = *it;
    bool reuse = std::any_of(f.load_axes.begin(), f.load_axes.end(), [&](uint64_t m) { return !(m >> a & 1); });
    if (!reuse) continue;
    for (int64_t n : {16, 8, 4, 2})
      if (n <= (opts.empty() ? 16 : 4) && k.full_shape[a] % n == 0) {
        opts.push_back({OptOp::UPCAST, a, n});
        upcast *= n;
        break;
      }
  }
  // a reduction over an outer axis (a column sum): copies along the inner global axis read consecutive addresses
  if (opts.empty() && !f.globals.empty() && f.globals.back() == static_cast<int64_t>(k.full_shape.size()) - 1)
    for (int64_t n : {16, 8, 4})
      if (k.full_shape[f.globals.back()] % n == 0) {
        opts.push_back({OptOp::UPCAST, f.globals.back(), n});
        upcast *= n;
        break;
      }
  // the innermost reduce loop: unrolled whole when short (a 5x5 window), by 4 otherwise
  int64_t r = f.reduced.back(), size = k.full_shape[r];
  if (size <= 8 && upcast * size <= 256) opts.push_back({OptOp::UNROLL, r, size});
  else if (size % 4 == 0 && upcast * 4 <= 256) opts.push_back({OptOp::UNROLL, r, 4});
  return opts;
}

std::vector<Opt> random_opts(const LoweredKernel& k, std::mt19937& rng) {
  KernelFacts f = facts(k);
  std::vector<Opt> opts;
  auto maybe = [&](int64_t a, OptOp op) {
    std::vector<int64_t> divisors;
    for (int64_t n = 2; n <= std::min<int64_t>(k.full_shape[a], 8); n++)
      if (k.full_shape[a] % n == 0) divisors.push_back(n);
    if (divisors.empty() || rng() % 2) return;
    opts.push_back({op, a, divisors[rng() % divisors.size()]});
  };
  for (int64_t a : f.globals) maybe(a, OptOp::UPCAST);
  for (int64_t a : f.reduced) maybe(a, OptOp::UNROLL);
  return opts;
}

}  // namespace tg::codegen
