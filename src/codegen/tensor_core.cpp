// Tensor cores (the TC opt, opts.h): a sum of products of 16-bit floats lowered onto warp-wide matrix
// instructions, tinygrad's TC. The instruction is NVIDIA's mma.sync m16n8k16 (sm_80 and later): a warp of 32
// threads multiplies a 16 x 16 tile of A (rows m, columns k) by a 16 x 8 tile of B (rows k, columns n) and adds the
// 16 x 8 product in float32. Each thread holds fixed elements of the tiles (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"), with g = lane / 4 and t = lane % 4:
//   A: 8 values, element j at row g + 8 * ((j / 2) % 2), column 2t + j % 2 + 8 * (j / 4)
//   B: 4 values, element j at row 2t + j % 2 + 8 * (j / 2), column g
//   D: 4 values, element j at row g + 8 * (j / 2), column 2t + j % 2
// So no thread needs another's data: each loads its own elements of x and y straight from the kernel's views
// (any index math, masks and fused ops included), one WMMA op per tile pair takes them, and each of its 4 results
// is summed over the k loop by an ordinary REDUCE. The epilogue (casts, a bias, an activation) runs on each
// thread's own outputs, at D's positions.
#include <algorithm>
#include <unordered_map>

#include "codegen/lower.h"
#include "shape/view_arg.h"
#include "uop/reduce_arg.h"
#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

// the 16-bit float value under an optional cast to float32
UOp strip_cast(const UOp& x) {
  return x.op() == Ops::CAST && x.dtype() == dtypes::float32 && x.src(0).dtype().is_half() ? x.src(0) : x;
}

// per axis: whether the value reads anything that moves along it (an address or a padding gate)
std::vector<bool> axes_read(const UOp& value, size_t ndim) {
  std::vector<bool> out(ndim, false);
  for (const UOp& u : value.toposort()) {
    if (u.op() != Ops::VIEW) continue;
    const shape::ShapeTracker& st = shape::get_view(u);
    auto [idx, valid] = st.to_indexed();
    for (const UOp& root : {idx, valid})
      for (const UOp& v : root.toposort())
        if (v.op() == Ops::DEFINE_VAR) {
          const std::string& name = v.arg().get<uop::VarArg>().name;
          if (name.rfind("idx", 0) == 0) {
            size_t d = std::stoul(name.substr(3));
            if (d < ndim) out[d] = true;
          }
        }
  }
  return out;
}

// The kernel AST's node `u` lowered with loop axis a at idx[a]; `reduced` stands for the kernel's one REDUCE_AXIS.
// `inside` (null: always) gates every read and write: the tile positions past an axis' end (padding) read nothing.
UOp lower_at(const UOp& u, const std::vector<UOp>& idx, const UOp& reduced, const UOp& inside,
             std::unordered_map<const uop::UOpNode*, UOp>& memo) {
  if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
  auto indexed = [&](const UOp& view) {
    const shape::ShapeTracker& st = shape::get_view(view);
    std::vector<UOp> at;
    for (size_t i = 0; i < st.ndim(); i++) at.push_back(st.shape()[i] == 1 ? UOp::const_(idx[0].dtype(), int64_t{0}) : idx[i]);
    auto [i, valid] = st.to_indexed(at);
    return std::pair<UOp, UOp>{i, inside ? uop::simplify(valid & inside) : valid};
  };
  UOp r;
  switch (u.op()) {
    case Ops::DEFINE_GLOBAL: r = u; break;
    case Ops::REDUCE_AXIS: r = reduced; break;
    case Ops::LOAD: {
      auto [i, valid] = indexed(u.src(1));
      r = lower_leaf(u, i, valid);
      break;
    }
    case Ops::CONST:
    case Ops::IOTA: {
      auto [i, valid] = u.src().empty() ? std::pair<UOp, UOp>{} : indexed(u.src(0));
      r = lower_leaf(u, i, valid);
      break;
    }
    case Ops::STORE: {
      auto [i, valid] = indexed(u.src(1));
      std::vector<UOp> isrc{u.src(0), i};
      if (!(valid.is_const() && const_to_int(valid.const_value()))) isrc.push_back(valid);
      r = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, u.src(0).dtype(), isrc), lower_at(u.src(2), idx, reduced, inside, memo)});
      break;
    }
    default: {
      std::vector<UOp> src;
      for (const UOp& s : u.src()) src.push_back(lower_at(s, idx, reduced, inside, memo));
      r = u.with_src(src);
    }
  }
  memo[u.get()] = r;
  return r;
}

// The kernel's one reduction when it is a sum of products x * y of 16-bit floats (x and y under their casts to
// float32 stripped); a null red where it is not.
struct SumOfProducts {
  UOp red, x, y;
};
SumOfProducts sum_of_products(const UOp& ast) {
  UOp red;
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::REDUCE_AXIS) {
      if (red) return {};  // one reduction only
      red = u;
    }
  if (!red || uop::get_reduce_arg(red).op != Ops::ADD || (red.dtype() != dtypes::float32 && !red.dtype().is_half())) return {};
  UOp v = red.src(0);
  if (v.op() == Ops::CAST && v.dtype() == dtypes::float32) v = v.src(0);
  if (v.op() != Ops::MUL) return {};
  UOp x = strip_cast(v.src(0)), y = strip_cast(v.src(1));
  if (!x.dtype().is_half() || x.dtype() != y.dtype()) return {};
  return {red, x, y};
}

}  // namespace

TensorCoreFit tensor_core_fit(const UOp& ast, const std::vector<int64_t>& shape, const std::vector<int64_t>& reduce_axes) {
  TensorCoreFit none;
  auto [red, x, y] = sum_of_products(ast);
  if (!red || reduce_axes.size() != 1) return none;
  size_t ndim = shape.size();
  std::vector<bool> rx = axes_read(x, ndim), ry = axes_read(y, ndim);
  TensorCoreFit f;
  f.k = reduce_axes[0];
  f.dtype = x.dtype();
  int64_t innermost = -1;
  for (size_t a = 0; a < ndim; a++) {
    if (static_cast<int64_t>(a) == f.k || shape[a] <= 1) continue;
    innermost = static_cast<int64_t>(a);
    if (rx[a] && !ry[a]) f.m = static_cast<int64_t>(a);
    if (ry[a] && !rx[a]) f.n = static_cast<int64_t>(a);
  }
  if (f.m < 0 || f.n < 0 || (innermost != f.m && innermost != f.n)) return none;
  return f;
}

void lower_tensor_cores(const UOp& ast, const Opt& opt, DType idx_dt, LoweredKernel& k) {
  const TensorCoreFit& f = k.tc;
  TensorCoreConfig c = tc_config(opt.amount);
  auto size = [&](int64_t a) { return k.full_shape[static_cast<size_t>(a)]; };
  if (!f || !c.tiles_m || k.symbolic())
    throw InternalError("lower", "illegal opt " + opts_str({opt}) + " for a kernel of shape " + shape::shape_str(k.full_shape));
  auto cnst = [&](int64_t v) { return UOp::const_(idx_dt, v); };
  // the positions an axis' loop steps over: a block of m or n, 16 of k, 1 of any other axis
  auto block_of = [&](int64_t a) { return a == f.m ? c.block_m() : a == f.n ? c.block_n() : a == f.k ? 16 : 1; };
  size_t ndim = k.full_shape.size();
  // the loops: m and n over blocks, k over steps of 16, every other axis whole; a null UOp where a loop runs once
  std::vector<UOp> loop(ndim), plain(ndim);
  for (size_t a = 0; a < ndim; a++) {
    int64_t ai = static_cast<int64_t>(a);
    // (m, n and k rounded up to whole blocks: the positions past their ends are gated)
    int64_t trips = round_up(size(ai), block_of(ai)) / block_of(ai);
    if (trips > 1) loop[a] = UOp::make(Ops::RANGE, idx_dt, {cnst(trips)}, uop::Arg(ai));
    plain[a] = loop[a] ? loop[a] : cnst(0);
  }
  // the warp's lanes run along the innermost global axis (grid dimension 0: a warp is 32 consecutive threads there),
  // with that axis' warps outside them; the other axis' warps are its own work-items
  int64_t lane_axis = std::max(f.m, f.n), other = std::min(f.m, f.n);
  int64_t lane_warps = lane_axis == f.m ? c.warps_m : c.warps_n, other_warps = lane_axis == f.m ? c.warps_n : c.warps_m;
  UOp item = UOp::make(Ops::RANGE, idx_dt, {cnst(32 * lane_warps)}, uop::Arg(kLocalAxis + lane_axis));
  UOp lane = item % cnst(32), g = lane / cnst(4), t = lane % cnst(4);
  UOp lane_warp = lane_warps > 1 ? item / cnst(32) : cnst(0);
  UOp other_warp = other_warps > 1 ? UOp::make(Ops::RANGE, idx_dt, {cnst(other_warps)}, uop::Arg(kLocalAxis + other)) : cnst(0);
  UOp warp_m = lane_axis == f.m ? lane_warp : other_warp, warp_n = lane_axis == f.m ? other_warp : lane_warp;
  UOp base_m = plain[f.m] * cnst(c.block_m()) + warp_m * cnst(16 * c.tiles_m);
  UOp base_n = plain[f.n] * cnst(c.block_n()) + warp_n * cnst(8 * c.tiles_n);
  UOp base_k = plain[f.k] * cnst(16);

  // x is read along m and y along n (tensor_core_fit): x is A and y is B
  auto [red, x, y] = sum_of_products(ast);
  // where a tile runs past an axis' end: the positions inside it (null where every block is whole)
  auto within = [&](int64_t axis, const UOp& i, UOp gate) {
    if (size(axis) % block_of(axis) == 0) return gate;
    UOp in = i < cnst(size(axis));
    return gate ? gate & in : in;
  };
  // an operand's value at its tile positions; past k's end 0 (the product must add nothing), past m's or n's its
  // loads gated (those rows and columns are never stored)
  auto at = [&](const UOp& value, std::vector<std::pair<int64_t, UOp>> where) {
    std::vector<UOp> idx = plain;
    UOp inside;
    for (auto& [a, i] : where) idx[static_cast<size_t>(a)] = uop::simplify(i), inside = within(a, idx[static_cast<size_t>(a)], inside);
    std::unordered_map<const uop::UOpNode*, UOp> memo;
    UOp v = lower_at(value, idx, UOp(), inside ? uop::simplify(inside) : UOp(), memo);
    UOp in_k = within(f.k, idx[static_cast<size_t>(f.k)], UOp());
    return in_k ? uop::simplify(in_k).where(v, v.const_like(int64_t{0})) : v;
  };
  UOp scratch;  // emulated tensor cores (OpenCL, TC_EMULATE=1): each warp's two tiles in local memory
  if (k.caps.tensor_cores == "emulated")
    scratch = UOp::make(Ops::DEFINE_LOCAL, dtypes::float32.ptr(AddrSpace::Local), {},
                        uop::Arg(std::vector<int64_t>{0, c.warps_m * c.warps_n * (16 * 16 + 16 * 8)}));
  std::vector<std::vector<UOp>> a_frag(static_cast<size_t>(c.tiles_m)), b_frag(static_cast<size_t>(c.tiles_n));
  for (int64_t tm = 0; tm < c.tiles_m; tm++)
    for (int64_t j = 0; j < 8; j++)
      a_frag[tm].push_back(at(x, {{f.m, base_m + cnst(16 * tm + 8 * ((j / 2) % 2)) + g}, {f.k, base_k + t * cnst(2) + cnst(j % 2 + 8 * (j / 4))}}));
  for (int64_t tn = 0; tn < c.tiles_n; tn++)
    for (int64_t j = 0; j < 4; j++)
      b_frag[tn].push_back(at(y, {{f.n, base_n + cnst(8 * tn) + g}, {f.k, base_k + t * cnst(2) + cnst(j % 2 + 8 * (j / 2))}}));
  std::vector<UOp> stores;
  for (int64_t tm = 0; tm < c.tiles_m; tm++)
    for (int64_t tn = 0; tn < c.tiles_n; tn++) {
      std::vector<UOp> src = a_frag[tm];
      src.insert(src.end(), b_frag[tn].begin(), b_frag[tn].end());
      if (scratch) src.push_back(scratch);
      UOp mma = UOp::make(Ops::WMMA, dtypes::float32.vec(4), src, uop::Arg(f.dtype.name()));
      for (int64_t j = 0; j < 4; j++) {
        UOp part = UOp::make(Ops::GEP, dtypes::float32, {mma}, uop::Arg(std::vector<int64_t>{j}));
        UOp sum = loop[f.k] ? UOp::make(Ops::REDUCE, dtypes::float32, {part, loop[f.k], UOp::const_(dtypes::float32, 0.0)}, uop::Arg(Ops::ADD)) : part;
        if (sum.dtype() != red.dtype()) sum = sum.cast(red.dtype());
        std::vector<UOp> idx = plain;
        idx[static_cast<size_t>(f.m)] = uop::simplify(base_m + cnst(16 * tm + 8 * (j / 2)) + g);
        idx[static_cast<size_t>(f.n)] = uop::simplify(base_n + cnst(8 * tn + j % 2) + t * cnst(2));
        idx[static_cast<size_t>(f.k)] = cnst(0);
        UOp inside = within(f.n, idx[static_cast<size_t>(f.n)], within(f.m, idx[static_cast<size_t>(f.m)], UOp()));
        std::unordered_map<const uop::UOpNode*, UOp> memo;
        for (const UOp& st : ast.src()) stores.push_back(lower_at(st, idx, sum, inside ? uop::simplify(inside) : UOp(), memo));
      }
    }
  k.sink = uop::simplify(UOp::sink(stores));
  k.opts = {opt};
}

}  // namespace tg::codegen
