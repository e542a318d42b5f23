#include "codegen/lower.h"

#include <algorithm>
#include <unordered_map>

#include "shape/view_arg.h"
#include "uop/reduce_arg.h"
#include "uop/sint.h"
#include "uop/symbolic.h"

namespace tg::codegen {

using shape::ShapeTracker;
using uop::Ops;
using uop::UOp;

namespace {

// identity of a reduction: what the accumulator starts from
UOp reduce_identity(Ops op, DType dt) {
  if (op == Ops::ADD) return UOp::const_(dt, int64_t{0});
  if (op == Ops::MUL) return UOp::const_(dt, int64_t{1});
  return UOp::const_(dt, dt.min());
}

// x combined over every value of the lane variable: the copies of an unrolled reduce axis
UOp combine_lanes(const UOp& x, const UOp& lane, int64_t n, Ops op) {
  UOp out;
  for (int64_t l = 0; l < n; l++) {
    UOp c = x.substitute({{lane, UOp::const_(lane.dtype(), l)}});
    out = out ? out.alu(op, {c}) : c;
  }
  return out;
}

// GROUP's second stage: each work-item's partial result `partial` (over its share of the axis) goes to local memory
// at (item, slot), the group waits at a barrier, and every work-item reduces the n partials of its slot; one of
// them stores the result (lower's STORE gate). `id` numbers the kernel's local buffers.
UOp combine_group(const UOp& partial, const UOp& item, Ops op, const std::pair<UOp, int64_t>& slot, int64_t id) {
  DType dt = partial.dtype(), idx_dt = item.dtype();
  int64_t n = const_to_int(item.src(0).const_value());
  UOp temp = UOp::make(Ops::DEFINE_LOCAL, dt.ptr(AddrSpace::Local), {}, uop::Arg(std::vector<int64_t>{id, n * slot.second}));
  UOp base = slot.first * UOp::const_(idx_dt, n);
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, temp.dtype(), {temp, uop::simplify(base + item)}), partial});
  UOp barrier = UOp::make(Ops::BARRIER, dtypes::void_, {store});
  UOp j = UOp::make(Ops::RANGE, idx_dt, {UOp::const_(idx_dt, n)}, uop::Arg(kGroupReduceAxis + id));
  UOp v = UOp::make(Ops::LOAD, dt, {UOp::make(Ops::INDEX, temp.dtype(), {temp, uop::simplify(base + j)}), barrier});
  return UOp::make(Ops::REDUCE, dt, {v, j, reduce_identity(op, dt)}, uop::Arg(op));
}

// Whether a division or modulo in st's index math (address or validity) depends on dim d. A stack of Views
// unravels the top View's flat index into the lower one's shape: with the dims apart, the symbolic algebra splits
// that back cleanly ((y*20 + x) / 40 is y / 2), while a merged r / 40 stays division math in the inner loop. A
// channel shuffle's two Views split only the channel dim, so its pixels still merge (shufflenet's 1x1 convs).
bool index_splits(const ShapeTracker& st, size_t d) {
  auto [idx, valid] = st.to_indexed();
  for (const UOp& root : {idx, valid})
    for (const UOp& u : root.toposort()) {
      if (u.op() != Ops::IDIV && u.op() != Ops::MOD) continue;
      for (const UOp& v : u.toposort())
        if (v.op() == Ops::DEFINE_VAR && v.arg().get<uop::VarArg>().name == "idx" + std::to_string(d)) return true;
    }
  return false;
}

// Adjacent loop dimensions that every VIEW reads as one become one dimension (tinygrad's merge of adjacent dims):
// fewer loops, and a longer innermost axis to vectorize (a (512, 64, 6, 6) elementwise kernel is one loop of
// 1179648). A pair merges when each VIEW has both at their full sizes (or both 1: a store's reduced dims) and its
// reshape to the merged shape stays one View on top. Reduce dims merge only with reduce dims, and not in kernels
// with an IOTA: fold_gathers matches one index comparison per reduce axis. Through a stack of Views, a pair merges
// only when no division or modulo of the index math depends on the merged dim (see index_splits).
UOp merge_adjacent_dims(const UOp& ast) {
  std::vector<UOp> nodes = ast.toposort();
  std::vector<UOp> views;
  std::vector<ShapeTracker> sts;
  std::vector<int64_t> reduce_axes;
  bool iota = false;
  for (const UOp& u : nodes) {
    // a symbolic size merges with nothing (its loop ends at the variable's value)
    if (u.op() == Ops::VIEW && shape::is_symbolic(shape::get_view(u).shape())) return ast;
    if (u.op() == Ops::VIEW) views.push_back(u), sts.push_back(shape::get_view(u));
    if (u.op() == Ops::REDUCE_AXIS)
      for (int64_t a : uop::get_reduce_arg(u).axes) reduce_axes.push_back(a);
    iota = iota || u.op() == Ops::IOTA;
  }
  if (sts.empty() || sts[0].ndim() < 2) return ast;
  size_t ndim = sts[0].ndim();
  std::vector<int64_t> full(ndim, 1);
  for (const ShapeTracker& st : sts) {
    if (st.ndim() != ndim) return ast;  // lower() reports it
    for (size_t i = 0; i < ndim; i++) full[i] = std::max(full[i], st.shape()[i].concrete("lower"));
  }
  std::vector<bool> reduced(ndim, false);
  for (int64_t a : reduce_axes) reduced[static_cast<size_t>(a)] = true;
  std::vector<int64_t> dim_of(ndim);  // each original dim's merged dim
  for (size_t i = 0; i < ndim; i++) dim_of[i] = static_cast<int64_t>(i);
  bool merged_any = false;
  for (size_t i = full.size() - 1; i-- > 0;) {
    if (reduced[i] != reduced[i + 1] || (reduced[i] && iota)) continue;
    std::vector<ShapeTracker> next;
    for (const ShapeTracker& st : sts) {
      int64_t a = st.shape()[i].concrete("lower"), b = st.shape()[i + 1].concrete("lower");
      if (!((a == full[i] && b == full[i + 1]) || (a == 1 && b == 1))) break;
      shape::Shape to = st.shape();
      to[i] = a * b;
      to.erase(to.begin() + static_cast<int64_t>(i) + 1);
      ShapeTracker r = st.reshape(to);
      if (r.views().size() != st.views().size() || (r.views().size() > 1 && index_splits(r, i))) break;
      next.push_back(std::move(r));
    }
    if (next.size() != sts.size()) continue;
    sts = std::move(next);
    full[i] *= full[i + 1];
    full.erase(full.begin() + static_cast<int64_t>(i) + 1);
    reduced.erase(reduced.begin() + static_cast<int64_t>(i) + 1);
    for (int64_t& d : dim_of)
      if (d > static_cast<int64_t>(i)) d--;
    merged_any = true;
  }
  if (!merged_any) return ast;
  std::unordered_map<const uop::UOpNode*, UOp> out;
  for (size_t v = 0; v < views.size(); v++) out[views[v].get()] = shape::view_uop(sts[v]);
  for (const UOp& u : nodes) {
    if (out.count(u.get())) continue;
    std::vector<UOp> src;
    for (const UOp& x : u.src()) src.push_back(out.at(x.get()));
    if (u.op() == Ops::REDUCE_AXIS) {
      std::vector<int64_t> axes;
      for (int64_t a : uop::get_reduce_arg(u).axes)
        if (std::find(axes.begin(), axes.end(), dim_of[static_cast<size_t>(a)]) == axes.end()) axes.push_back(dim_of[static_cast<size_t>(a)]);
      out[u.get()] = UOp::make(Ops::REDUCE_AXIS, u.dtype(), src, uop::reduce_arg(uop::get_reduce_arg(u).op, axes));
    } else {
      out[u.get()] = src == u.src() ? u : u.with_src(src);
    }
  }
  return out.at(ast.get());
}

}  // namespace

UOp lower_leaf(const UOp& u, const UOp& idx, const UOp& valid) {
  bool always = !valid || (valid.is_const() && tg::const_to_int(valid.const_value()));
  switch (u.op()) {
    case Ops::LOAD: {
      std::vector<UOp> isrc{u.src(0), idx};
      if (!always) isrc.push_back(valid);
      return UOp::make(Ops::LOAD, u.dtype(), {UOp::make(Ops::INDEX, u.src(0).dtype(), isrc)});
    }
    case Ops::CONST: {  // a constant behind a VIEW: zero where the view is padding
      UOp c = UOp::const_(u.dtype(), u.const_value());
      return always ? c : valid.where(c, c.const_like(int64_t{0}));
    }
    case Ops::IOTA: {  // the element's own position, read through the VIEW like a buffer would be
      UOp r = idx.cast(u.dtype());
      return always ? r : valid.where(r, r.const_like(int64_t{0}));
    }
    default: throw InternalError("lower", "lower_leaf: " + std::string(uop::op_name(u.op())) + " reads no VIEW");
  }
}

bool LoweredKernel::symbolic() const { return shape::is_symbolic(loop_sizes); }

LoweredKernel lower(const UOp& input_ast, const std::vector<Opt>& opts, const runtime::DeviceCaps& caps) {
  if (input_ast.op() != Ops::SINK) throw InternalError("lower", "a kernel AST is a SINK of STOREs");
  UOp ast = merge_adjacent_dims(input_ast);
  LoweredKernel k;
  k.caps = caps;
  std::vector<UOp> nodes = ast.toposort();
  // the loop space
  bool wide = false;
  for (const UOp& u : nodes) {
    if (u.op() == Ops::VIEW) {
      const ShapeTracker& st = shape::get_view(u);
      if (k.loop_sizes.empty()) k.loop_sizes = shape::Shape(st.ndim(), 1), k.full_shape.assign(st.ndim(), 1);
      if (st.ndim() != k.full_shape.size())
        throw InternalError("lower", "VIEWs of one kernel differ in rank: " + st.repr());
      for (size_t i = 0; i < st.ndim(); i++) {
        // the loop runs over the largest size; a symbolic size meets only 1s and itself (loads of a broadcast)
        const Dim& s = st.shape()[i];
        Dim& have = k.loop_sizes[i];
        if (s.is_symbolic() || have.is_symbolic()) {
          if (have == Dim(1)) have = s;
          else if (!(s == Dim(1) || s == have))
            throw InternalError("lower", "loop " + std::to_string(i) + " is " + have.str() + " in one VIEW and " + s.str() + " in another");
        } else if (resolve_lt(have, s) == std::optional<bool>(true)) {
          have = s;
        }
        k.full_shape[i] = std::max(k.full_shape[i], s.max());
      }
      wide = wide || st.needs_int64();
      if (k.stacked.empty()) k.stacked.assign(st.ndim(), false);
      if (st.views().size() > 1)
        for (size_t i = 0; i < st.ndim(); i++) k.stacked[i] = k.stacked[i] || st.views().back().strides[i] != Dim(0);
    }
    if (u.op() == Ops::REDUCE_AXIS)
      for (int64_t a : uop::get_reduce_arg(u).axes)
        if (std::find(k.reduce_axes.begin(), k.reduce_axes.end(), a) == k.reduce_axes.end()) k.reduce_axes.push_back(a);
    if (u.op() == Ops::DEFINE_GLOBAL) {
      size_t i = static_cast<size_t>(u.arg().get<int64_t>());
      if (k.globals.size() <= i) k.globals.resize(i + 1);
      k.globals[i] = u;
    }
  }
  std::sort(k.reduce_axes.begin(), k.reduce_axes.end());
  DType idx_dt = wide ? dtypes::int64 : dtypes::int32;
  if (!caps.tensor_cores.empty() && !k.symbolic()) k.tc = tensor_core_fit(ast, k.full_shape, k.reduce_axes);
  for (const Opt& o : opts)
    if (o.op == OptOp::TC) {
      if (opts.size() != 1) throw InternalError("lower", "TC goes alone: " + opts_str(opts));
      lower_tensor_cores(ast, o, idx_dt, k);
      return k;
    }
  // per axis: its loop (a RANGE over size / lanes, or none), its copy lane variable (UPCAST/UNROLL: 0 .. lane-1,
  // or none) and its index. A vector axis has a vector lane variable too, innermost: index = loop * lane * width
  // + copy_lane * width + vector_lane (a VECTOR may share its axis with an UPCAST or UNROLL: more vectors of it).
  // A kernel has several vector axes only where no REDUCE over one of them varies along another (legal(): a row
  // reduce's loop beside the loop over the row's outputs); vector_axis is the global one, or else the one.
  size_t ndim = k.full_shape.size();
  std::vector<int64_t> lane(ndim, 1), local(ndim, 1);
  std::vector<bool> top(ndim, false);  // GROUPTOP: the work-items take the axis' outer part
  int64_t vector_axis = -1;
  std::vector<int64_t> widths(ndim, 1);  // per axis, its vector's width (1: no VECTOR)
  k.loop_order.resize(ndim);
  for (size_t i = 0; i < ndim; i++) k.loop_order[i] = static_cast<int64_t>(i);
  auto is_global = [&](int64_t a) {
    return a >= 0 && a < static_cast<int64_t>(ndim) && std::find(k.reduce_axes.begin(), k.reduce_axes.end(), a) == k.reduce_axes.end();
  };
  auto illegal = [&](const std::vector<Opt>& what) {
    return InternalError("lower", "illegal opt " + opts_str(what) + " for a kernel of shape " + shape::shape_str(k.full_shape));
  };
  // PADTO first (before the axis' other opts): the other opts cut the rounded-up size. real[a] is the size before
  std::vector<int64_t> real = k.full_shape;
  std::vector<bool> cut(ndim, false);  // an opt other than SWAP has taken the axis
  for (const Opt& o : opts) {
    if (o.op == OptOp::SWAP) continue;
    if (o.op == OptOp::PADTO && (!is_global(o.axis) || o.amount < 2 || cut[o.axis])) throw illegal({o});
    if (o.axis >= 0 && o.axis < static_cast<int64_t>(ndim)) cut[o.axis] = true;
  }
  k.full_shape = padded_shape(k.full_shape, opts);
  for (const Opt& o : opts) {
    if (o.op == OptOp::PADTO) continue;
    if (o.op == OptOp::SWAP) {
      auto at = [&](int64_t a) { return std::find(k.loop_order.begin(), k.loop_order.end(), a); };
      if (!is_global(o.axis) || !is_global(o.amount) || o.axis == o.amount || caps.grid) throw illegal({o});
      std::iter_swap(at(o.axis), at(o.amount));
      continue;
    }
    bool vector = o.op == OptOp::VECTOR;
    bool bad_vector = vector && (!(o.axis >= 0 && o.axis < static_cast<int64_t>(ndim)) || widths[o.axis] > 1 || o.amount > 16 ||
                                 (o.amount & (o.amount - 1)) || (is_global(o.axis) && vector_axis >= 0 && is_global(vector_axis)));
    bool in = o.axis >= 0 && o.axis < static_cast<int64_t>(ndim);
    bool is_local = o.op == OptOp::LOCAL || o.op == OptOp::GROUP || o.op == OptOp::GROUPTOP;
    if (in && o.op == OptOp::GROUPTOP) top[o.axis] = true;
    bool taken = in && !vector && (is_local ? local[o.axis] : lane[o.axis]) != 1;
    if (!in || o.amount < 2 || taken || bad_vector || (is_local && !caps.grid)) throw illegal({o});
    if (vector) {
      widths[o.axis] = o.amount;
      if (vector_axis < 0 || is_global(o.axis)) vector_axis = o.axis;
    } else {
      (is_local ? local : lane)[o.axis] = o.amount;
    }
    if (k.full_shape[o.axis] % (lane[o.axis] * local[o.axis] * widths[o.axis]))
      throw illegal(opts);
  }
  for (const Opt& o : opts)
    if (o.axis >= 0 && o.axis < static_cast<int64_t>(ndim) && k.loop_sizes[o.axis].is_symbolic()) throw illegal({o});
  k.opts = opts;
  std::vector<UOp> loops(ndim), lanes(ndim), ranges(ndim), items(ndim);
  std::vector<UOp> vector_lanes(ndim);
  for (size_t i = 0; i < ndim; i++)
    if (widths[i] > 1) vector_lanes[i] = UOp::variable("vlane" + std::to_string(i), 0, widths[i] - 1, idx_dt);
  UOp vector_lane = vector_axis >= 0 ? vector_lanes[vector_axis] : UOp();
  for (size_t i = 0; i < ndim; i++) {
    int64_t w = widths[i], outer = k.full_shape[i] / lane[i] / w / local[i];
    if (k.loop_sizes[i].is_symbolic())  // no opt here: the loop ends at the size's value
      loops[i] = UOp::make(Ops::RANGE, idx_dt, {uop::to_uop(k.loop_sizes[i], idx_dt)}, uop::Arg(static_cast<int64_t>(i)));
    else if (outer > 1) loops[i] = UOp::make(Ops::RANGE, idx_dt, {UOp::const_(idx_dt, outer)}, uop::Arg(static_cast<int64_t>(i)));
    if (lane[i] > 1) lanes[i] = UOp::variable("lane" + std::to_string(i), 0, lane[i] - 1, idx_dt);
    // the work-item within its group (LOCAL, GROUP): to_grid() makes it a local index
    if (local[i] > 1) items[i] = UOp::make(Ops::RANGE, idx_dt, {UOp::const_(idx_dt, local[i])}, uop::Arg(kLocalAxis + static_cast<int64_t>(i)));
    UOp idx = UOp::const_(idx_dt, int64_t{0});
    if (top[i]) {  // GROUPTOP: work-item j takes the j-th contiguous part of the axis
      idx = items[i] * UOp::const_(idx_dt, k.full_shape[i] / local[i]);
      if (loops[i]) idx = idx + loops[i] * UOp::const_(idx_dt, lane[i] * w);
    } else {
      if (loops[i]) idx = loops[i] * UOp::const_(idx_dt, local[i] * lane[i] * w);
      if (items[i]) idx = idx + items[i] * UOp::const_(idx_dt, lane[i] * w);
    }
    if (lanes[i]) idx = idx + lanes[i] * UOp::const_(idx_dt, w);
    if (w > 1) idx = idx + vector_lanes[i];
    ranges[i] = uop::simplify(idx);
  }
  // a PADTO axis' extra positions read its last real one (the index clamped: no gate inside the loops, and only
  // values the kernel computes anyway) and store nothing (gated). On the vector axis the reads are gated instead:
  // clamped, the lanes' addresses would not be contiguous, and the vector load is one load when every lane is
  // inside (a 1x1 conv's 1000 or 116 output channels as vectors of 16)
  std::vector<UOp> reads = ranges;
  UOp padded_gate, vector_inside;
  for (size_t i = 0; i < ndim; i++)
    if (real[i] < k.full_shape[i]) {
      UOp inside = ranges[i] < UOp::const_(idx_dt, real[i]);
      if (static_cast<int64_t>(i) == vector_axis) vector_inside = inside;
      else reads[i] = inside.where(ranges[i], UOp::const_(idx_dt, real[i] - 1));
      padded_gate = padded_gate ? padded_gate & inside : inside;
    }
  auto indexed = [&](const UOp& view, bool store = false) {
    const ShapeTracker& st = shape::get_view(view);
    std::vector<UOp> idxs;
    for (size_t i = 0; i < st.ndim(); i++) idxs.push_back(st.shape()[i] == 1 ? UOp::const_(idx_dt, int64_t{0}) : store ? ranges[i] : reads[i]);
    return st.to_indexed(idxs);
  };

  // GROUP: the slot of a partial result among those a group combines: the work-item's position among the LOCAL
  // work-items of the global axes (a group reduces one value per such position), and the copy's lane on each UPCAST
  // global axis (each copy of the reduction gets slots of its own once the lanes are substituted below)
  int64_t n_locals = 0;
  auto group_slot = [&]() {
    std::pair<UOp, int64_t> slot{UOp::const_(idx_dt, int64_t{0}), 1};
    for (size_t i = 0; i < ndim; i++) {
      if (std::find(k.reduce_axes.begin(), k.reduce_axes.end(), static_cast<int64_t>(i)) != k.reduce_axes.end()) continue;
      if (items[i]) slot = {slot.first + items[i] * UOp::const_(idx_dt, slot.second), slot.second * local[i]};
      if (lanes[i]) slot = {slot.first + lanes[i] * UOp::const_(idx_dt, slot.second), slot.second * lane[i]};
    }
    return slot;
  };
  std::unordered_map<const uop::UOpNode*, UOp> out;
  auto get = [&](const UOp& u) { return out.at(u.get()); };
  for (const UOp& u : nodes) {
    UOp r;
    switch (u.op()) {
      case Ops::VIEW: continue;
      case Ops::DEFINE_GLOBAL: r = u; break;
      case Ops::LOAD: {
        auto [idx, valid] = indexed(u.src(1));
        if (vector_inside && idx.contains(vector_lane)) valid = valid & vector_inside;
        r = lower_leaf(u, idx, valid);
        break;
      }
      case Ops::CONST:
      case Ops::IOTA: {
        auto [idx, valid] = u.src().empty() ? std::pair<UOp, UOp>{} : indexed(u.src(0));
        r = lower_leaf(u, idx, valid);
        break;
      }
      case Ops::STORE: {
        auto [idx, valid] = indexed(u.src(1), true);
        std::vector<UOp> isrc{u.src(0), idx};
        // with a GROUP every work-item of the group holds the whole reduction: the first one stores it
        for (int64_t a : k.reduce_axes)
          if (items[a]) isrc.push_back(items[a] < UOp::const_(idx_dt, int64_t{1}));
        if (padded_gate) isrc.push_back(padded_gate);
        for (size_t g = 3; g < isrc.size(); g++) isrc[2] = isrc[2] & isrc[g];  // one gate: all of them
        if (isrc.size() > 2) isrc = {isrc[0], isrc[1], uop::simplify(isrc[2])};
        r = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, u.src(0).dtype(), isrc), get(u.src(2))});
        break;
      }
      case Ops::REDUCE_AXIS: {
        const uop::ReduceArg& ra = uop::get_reduce_arg(u);
        // over an empty axis (a zero-element input kept in the graph for its gradient) the loop never runs. The
        // loop space says 1 there (the output's size), the views below the reduce say 0
        auto empty_axis = [&](int64_t a) {
          for (const UOp& v : u.src(0).toposort())
            if (v.op() == Ops::VIEW && shape::get_view(v).shape()[static_cast<size_t>(a)] == 0) return true;
          return false;
        };
        if (std::any_of(ra.axes.begin(), ra.axes.end(), empty_axis)) {
          r = reduce_identity(ra.op, u.dtype());
          break;
        }
        UOp value = get(u.src(0));
        // an unrolled axis: its copies are combined before the accumulator sees them; a vector axis' lanes are
        // one vector accumulator, summed across after the loop (vectorize)
        UOp over_vector;  // the lane of a vector axis among the reduced ones (legal(): one at most)
        for (int64_t a : ra.axes) {
          if (vector_lanes[a]) over_vector = vector_lanes[a];
          if (lanes[a]) value = combine_lanes(value, lanes[a], lane[a], ra.op);
        }
        std::vector<UOp> src{value};
        for (int64_t a : ra.axes)
          if (loops[a]) src.push_back(loops[a]);
        // a reduction over the vector axis names its lane among its ranges, so that vectorize() combines the lanes
        // even of a value that does not vary along them (a count of a comparison that folds to true)
        if (over_vector) src.push_back(over_vector);
        // the accumulator's start value rides along as the last source
        src.push_back(reduce_identity(ra.op, u.dtype()));
        r = src.size() == 2 && !over_vector ? src[0] : UOp::make(Ops::REDUCE, u.dtype(), src, uop::Arg(ra.op));
        for (int64_t a : ra.axes)
          if (items[a]) r = combine_group(r, items[a], ra.op, group_slot(), n_locals++);
        break;
      }
      case Ops::SINK: {
        std::vector<UOp> src;
        for (const UOp& s : u.src()) src.push_back(get(s));
        r = UOp::sink(src);
        break;
      }
      default: {
        std::vector<UOp> src;
        for (const UOp& s : u.src()) src.push_back(get(s));
        r = u.with_src(src);
      }
    }
    out[u.get()] = r;
  }
  // constant folding and index simplification over the whole kernel
  UOp sink = fold_gathers(uop::simplify(get(ast)));
  // upcast axes: every STORE once per combination of their lane values (the vector lanes stay one value)
  std::vector<UOp> stores = sink.src();
  for (size_t a = 0; a < ndim; a++) {
    bool reduced = std::find(k.reduce_axes.begin(), k.reduce_axes.end(), static_cast<int64_t>(a)) != k.reduce_axes.end();
    if (!lanes[a] || reduced) continue;  // unrolled: combined in its REDUCE
    std::vector<UOp> copies;
    for (const UOp& st : stores)
      for (int64_t l = 0; l < lane[a]; l++) copies.push_back(st.substitute({{lanes[a], UOp::const_(idx_dt, l)}}));
    stores = std::move(copies);
  }
  k.sink = lane == std::vector<int64_t>(ndim, 1) && vector_axis < 0 ? sink : uop::simplify(UOp::sink(stores));
  if (vector_axis < 0) return k;
  // the reduce axes' vectors first: their lanes meet in their REDUCEs, whose scalar results the global axis' vector
  // then reads as it reads any value that does not vary along it
  std::vector<int64_t> vector_axes;
  for (size_t i = 0; i < ndim; i++)
    if (widths[i] > 1 && !is_global(static_cast<int64_t>(i))) vector_axes.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < ndim; i++)
    if (widths[i] > 1 && is_global(static_cast<int64_t>(i))) vector_axes.push_back(static_cast<int64_t>(i));
  UOp vec = k.sink;
  int64_t failed = -1;
  for (int64_t a : vector_axes)
    if (!(vec = vectorize(vec, vector_lanes[a], widths[a], !is_global(a)))) {
      failed = a;
      break;
    }
  if (failed < 0) {
    k.sink = vec;
    k.vectorized = true;
    return k;
  }
  // some op on the lanes of axis `failed` has no vector form: the same lanes as copies (with the axis' copies when
  // it has them)
  bool reduced = !is_global(failed);
  std::vector<Opt> copies;
  for (const Opt& o : opts)
    if (o.op != OptOp::VECTOR || o.axis != failed) copies.push_back(o);
  auto shared = std::find_if(copies.begin(), copies.end(), [&](const Opt& o) { return o.axis == failed && (o.op == OptOp::UPCAST || o.op == OptOp::UNROLL); });
  if (shared != copies.end()) shared->amount *= widths[failed];
  else copies.push_back({reduced ? OptOp::UNROLL : OptOp::UPCAST, failed, widths[failed]});
  LoweredKernel fallback = lower(ast, copies, caps);
  fallback.opts = opts;
  return fallback;
}

}  // namespace tg::codegen
