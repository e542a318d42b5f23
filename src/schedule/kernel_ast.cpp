#include "schedule/kernel_ast.h"

#include <algorithm>

#include "shape/view_arg.h"
#include "uop/buffer_arg.h"
#include "uop/reduce_arg.h"

namespace tg::schedule {

using shape::ShapeTracker;
using uop::GroupOp::Movement;
using uop::Ops;
using uop::UOp;

namespace {

// Sizes with every bound variable replaced by the variable, its value recorded in *vals: an AST holds no value,
// so one kernel serves every value.
shape::Shape unbound(const std::vector<Dim>& dims, uop::VarVals* vals) {
  shape::Shape out;
  for (const Dim& d : dims) out.push_back(d.is_symbolic() ? uop::unbind(d, vals) : d);
  return out;
}

// Where a symbolic node's buffer holds position i: laid out at its largest sizes (buffer_as_node), so its strides
// are those of max_shape(), not of its (symbolic) shape.
ShapeTracker max_layout(const UOp& u, uop::VarVals* vals) {
  shape::Ranges cut;
  for (const Dim& d : unbound(u.sym_shape(), vals)) cut.push_back({0, d});
  return ShapeTracker::from_shape(shape::dims(u.max_shape())).shrink(cut);
}

// The movement op `m` applied to st (a view of m's source).
ShapeTracker apply_movement(const ShapeTracker& st, const UOp& m, uop::VarVals* vals) {
  shape::Shape a;
  if (const auto* d = m.arg().get_if<std::vector<Dim>>()) a = unbound(*d, vals);
  else a = shape::dims(m.arg().get<std::vector<int64_t>>());
  auto pairs = [&] {
    shape::Ranges r;
    for (size_t i = 0; i + 1 < a.size(); i += 2) r.push_back({a[i], a[i + 1]});
    return r;
  };
  auto ints = [&] { return shape::ints(a, uop::op_name(m.op()).data()); };
  switch (m.op()) {
    case Ops::RESHAPE: return st.reshape(a);
    case Ops::PERMUTE: return st.permute(ints());
    case Ops::EXPAND: return st.expand(a);
    case Ops::PAD: return st.pad(pairs());
    case Ops::SHRINK: return st.shrink(pairs());
    case Ops::STRIDE: return st.stride(ints());
    case Ops::FLIP: {
      std::vector<int64_t> f = ints();
      return st.flip(std::vector<bool>(f.begin(), f.end()));
    }
    default: throw InternalError("schedule", "not a movement op: " + std::string(uop::op_name(m.op())));
  }
}

// The movement op `m` applied to a contiguous tensor of its source's shape.
ShapeTracker movement_st(const UOp& m, uop::VarVals* vals) {
  return apply_movement(ShapeTracker::from_shape(unbound(m.src(0).sym_shape(), vals)), m, vals);
}

}  // namespace

ShapeTracker target_view(const UOp& target, uop::VarVals* vals) {
  std::vector<const UOp*> chain;
  const UOp* x = &target;
  while (Movement().contains(x->op()) || x->op() == Ops::DETACH) chain.push_back(x), x = &x->src(0);
  if (x->op() != Ops::BUFFER) throw InternalError("schedule", "an ASSIGN's target is not a view of a buffer");
  ShapeTracker t = ShapeTracker::from_shape({Dim(uop::get_buffer_arg(*x).size)});
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    if ((*it)->op() != Ops::DETACH) t = apply_movement(t, **it, vals);
  return t.simplify();
}

namespace {

struct PairHash {
  size_t operator()(const std::pair<const void*, const void*>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
  }
};

class Builder {
 public:
  Builder(const UOp& root, const Grouping& g, const std::unordered_map<const uop::UOpNode*, UOp>& buffers)
      : root_(root), g_(g), buffers_(buffers) {
    for (const UOp& r : g.reduces.count(root.get()) ? g.reduces.at(root.get()) : std::vector<UOp>{}) fused_.push_back(r.get());
    if (auto it = g.loop_order.find(root.get()); it != g.loop_order.end()) order_ = it->second;
    // each row reduce loops over axes of its own, after root's: one per dim it reduces
    rank_ = root.sym_shape().size();
    if (auto it = g.row_reduces.find(root.get()); it != g.row_reduces.end())
      for (const UOp& r : it->second) {
        std::vector<int64_t>& mine = row_axes_[r.get()];
        for (size_t a = 0; a < uop::get_reduce_arg(r).axes.size(); a++) mine.push_back(static_cast<int64_t>(rank_ + extra_++));
      }
  }

  KernelAST build(const UOp& out) {
    KernelAST k;
    global(out);
    // a kernel with reduces loops over the reduce's input; its output is the reduce's shape, in the same order or,
    // when a permute comes after the reduces, in the order of the dims that stores the root's values in order
    const UOp& out_node = fused_.empty() ? root_ : g_.reduces.at(root_.get())[0];
    ShapeTracker out_st = ShapeTracker::from_shape(with_row_axes(unbound(out_node.sym_shape(), &vals_)));
    if (!order_.empty()) out_st = ShapeTracker::from_shape(out_st.permute(order_).shape());
    // a symbolic output is stored laid out at its largest sizes (buffer_as_node); an ASSIGN's through its target, a
    // cat's piece through its slice of the cat
    ShapeTracker store_st = out_node.symbolic_shape() ? max_layout(out_node, &vals_) : out_st;
    if (root_.op() == Ops::ASSIGN) store_st = target_view(root_.src(1), &vals_).reshape(unbound(out_node.sym_shape(), &vals_));
    if (auto it = g_.slices.find(root_.get()); it != g_.slices.end()) store_st = it->second.view.reshape(out_st.shape()).simplify();
    UOp value = value_of(root_, out_st);
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {globals_[0], shape::view_uop(store_st), value});
    k.ast = UOp::sink({store});
    k.bufs = bufs_;
    k.var_vals = vals_;
    return k;
  }

 private:
  struct Task {
    UOp node;
    ShapeTracker st;
    UOp view;
    std::vector<std::pair<UOp, UOp>> kids;  // (source, its VIEW)
    bool expanded;
  };
  using Key = std::pair<const void*, const void*>;

  UOp global(const UOp& buffer) {
    auto [it, fresh] = index_.try_emplace(buffer.get(), static_cast<int64_t>(bufs_.size()));
    if (fresh) {
      bufs_.push_back(buffer);
      globals_.push_back(UOp::make(Ops::DEFINE_GLOBAL, buffer.dtype().ptr(), {}, uop::Arg(it->second)));
    }
    return globals_[it->second];
  }

  // the buffer this node is read from, if it is not computed in this kernel
  UOp loaded_buffer(const UOp& u) const {
    if (u.op() == Ops::BUFFER) return u;
    if (u == root_ || !g_.realized(u)) return {};
    auto it = buffers_.find(u.get());
    if (it == buffers_.end()) throw InternalError("schedule", "a realized node is read before it is computed");
    return it->second;
  }

  // what is read through a VIEW is zero where the VIEW is padding: a buffer (one computed by an earlier kernel of
  // this schedule too), a constant, positions; anything computed here is not (exp(0) is 1)
  bool reads_zero_in_padding(const UOp& u) const {
    const UOp& b = movement_base(u);
    return b.op() == Ops::CONST || b.op() == Ops::IOTA || loaded_buffer(b);
  }

  bool is_fused_reduce(const UOp& u) const {
    for (const void* r : fused_) if (r == u.get()) return true;
    return false;
  }

  // the sources to build first, each with the view it is read through
  std::vector<std::pair<UOp, ShapeTracker>> children(const UOp& u, const ShapeTracker& st) const {
    if (loaded_buffer(u)) return {};
    if (Movement().contains(u.op())) {
      if (!u.symbolic_shape() && !u.src(0).symbolic_shape()) return {{u.src(0), movement_st(u, &vals_).compose(st).simplify()}};
      // Over symbolic sizes, a chain of movement ops is applied bottom-up to one view of the node below it: the
      // contiguous view of a symbolic shape has symbolic strides, and composing two of those leaves div/mod by the
      // symbolic size in the index (attention's keys through a shrink, a transpose and a reshape)
      std::vector<const UOp*> chain{&u};
      const UOp* x = &u.src(0);
      while (Movement().contains(x->op()) && !loaded_buffer(*x)) chain.push_back(x), x = &x->src(0);
      ShapeTracker t = ShapeTracker::from_shape(unbound(x->sym_shape(), &vals_));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) t = apply_movement(t, **it, &vals_);
      return {{*x, t.compose(st).simplify()}};
    }
    if (passes_through(u.op())) return {{u.src(0), st}};
    switch (u.op()) {
      case Ops::CONST:
      case Ops::IOTA: return {};
      case Ops::REDUCE_AXIS: {
        if (auto row = row_axes_.find(u.get()); row != row_axes_.end()) {
          // read through a broadcast along the dims it reduces, at positions that root's dims give
          shape::Shape mine = with_row_axes(u.sym_shape());
          bool broadcast = mine.size() == st.ndim();
          for (size_t i = 0; i < mine.size() && broadcast; i++) broadcast = mine[i] == Dim(1) || mine[i] == st.shape()[i];
          if (!broadcast || !(st.simplify() == ShapeTracker::from_shape(mine).expand(st.shape()).simplify()))
            throw InternalError("schedule", "a row reduce read through " + st.repr());
          // its input: the reduced dims moved to the reduce's own axes
          std::vector<int64_t> perm(rank_ + extra_);
          for (size_t i = 0; i < perm.size(); i++) perm[i] = static_cast<int64_t>(i);
          const std::vector<int64_t>& axes = uop::get_reduce_arg(u).axes;
          for (size_t j = 0; j < axes.size(); j++) std::swap(perm[static_cast<size_t>(axes[j])], perm[static_cast<size_t>(row->second[j])]);
          return {{u.src(0), ShapeTracker::from_shape(with_row_axes(u.src(0).sym_shape())).permute(perm)}};
        }
        if (!is_fused_reduce(u)) throw InternalError("schedule", "a reduce that is neither fused nor realized");
        ShapeTracker mine = ShapeTracker::from_shape(unbound(u.sym_shape(), &vals_));
        ShapeTracker input = ShapeTracker::from_shape(unbound(u.src(0).sym_shape(), &vals_));
        if (!order_.empty()) mine = mine.permute(order_).simplify(), input = input.permute(order_);
        if (!(st.simplify() == mine)) throw InternalError("schedule", "a fused reduce read through " + st.repr());
        return {{u.src(0), input}};
      }

      default: {
        if (!uop::GroupOp::ALU().contains(u.op()))
          throw InternalError("schedule", "cannot put " + std::string(uop::op_name(u.op())) + " in a kernel");
        std::vector<std::pair<UOp, ShapeTracker>> out;
        for (const UOp& s : u.src()) out.push_back({s, st});
        return out;
      }
    }
  }

  UOp make(const UOp& u, const ShapeTracker& st, const UOp& view, const std::vector<UOp>& kids,
           const std::vector<std::pair<UOp, UOp>>& kid_views) {
    if (UOp b = loaded_buffer(u)) {
      // a symbolic node stored earlier in this schedule: its buffer is laid out at the largest sizes
      if (u.op() != Ops::BUFFER && u.symbolic_shape())
        return UOp::make(Ops::LOAD, b.dtype(), {global(b), shape::view_uop(max_layout(u, &vals_).compose(st).simplify())});
      return UOp::make(Ops::LOAD, b.dtype(), {global(b), view});
    }
    if (Movement().contains(u.op())) {
      if (u.op() != Ops::PAD || reads_zero_in_padding(u.src(0))) return kids[0];
      // padding of a computed value: zero outside the valid area, whatever the computation gives there
      UOp valid = UOp::make(Ops::CONST, dtypes::bool_, {kid_views[0].second}, uop::Arg(ConstValue(true)));
      return valid.where(kids[0], kids[0].const_like(int64_t{0}));
    }
    if (passes_through(u.op())) return kids[0];
    switch (u.op()) {
      // a constant keeps its VIEW: it carries the padding mask, and the loop sizes when a reduce sums the constant
      case Ops::CONST: return UOp::make(Ops::CONST, u.dtype(), {view}, u.arg());
      case Ops::IOTA: return UOp::make(Ops::IOTA, u.dtype(), {view});
      case Ops::REDUCE_AXIS: {
        if (auto row = row_axes_.find(u.get()); row != row_axes_.end())
          return UOp::make(Ops::REDUCE_AXIS, u.dtype(), {kids[0]}, uop::reduce_arg(uop::get_reduce_arg(u).op, row->second));
        if (order_.empty()) return UOp::make(Ops::REDUCE_AXIS, u.dtype(), {kids[0]}, u.arg());
        const uop::ReduceArg& ra = uop::get_reduce_arg(u);  // the reduced axes where the loop order puts them
        std::vector<int64_t> axes;
        for (size_t j = 0; j < order_.size(); j++)
          if (std::find(ra.axes.begin(), ra.axes.end(), order_[j]) != ra.axes.end()) axes.push_back(static_cast<int64_t>(j));
        return UOp::make(Ops::REDUCE_AXIS, u.dtype(), {kids[0]}, uop::reduce_arg(ra.op, axes));
      }

      default: return UOp::make(u.op(), u.dtype(), kids, u.arg());
    }
  }

  UOp view_of(const ShapeTracker& st) { return shape::view_uop(st); }

  // a shape of root's rank widened to the kernel's: the row reduces' axes, 1 outside their loops
  shape::Shape with_row_axes(shape::Shape s) const {
    s.resize(s.size() + extra_, Dim(1));
    return s;
  }

  // iterative post-order over (node, view) pairs: graphs can be deeper than the stack
  UOp value_of(const UOp& node, const ShapeTracker& st) {
    std::vector<Task> stack{{node, st, view_of(st), {}, false}};
    Key top{node.get(), stack[0].view.get()};
    keep_.push_back(stack[0].view);
    while (!stack.empty()) {
      Task& t = stack.back();
      Key key{t.node.get(), t.view.get()};
      if (memo_.count(key)) {
        stack.pop_back();
        continue;
      }
      if (!t.expanded) {
        t.expanded = true;
        for (auto& [c, cst] : children(t.node, t.st)) {
          UOp v = view_of(cst);
          keep_.push_back(v);  // memo keys hold raw pointers: keep the VIEWs alive
          t.kids.push_back({c, v});
        }
        std::vector<Task> todo;
        for (auto& [c, v] : t.kids)
          if (!memo_.count(Key{c.get(), v.get()})) todo.push_back({c, shape::get_view(v), v, {}, false});
        for (Task& k : todo) stack.push_back(std::move(k));
        continue;
      }
      std::vector<UOp> built;
      for (auto& [c, v] : t.kids) built.push_back(memo_.at(Key{c.get(), v.get()}));
      UOp r = make(t.node, t.st, t.view, built, t.kids);
      stack.pop_back();
      memo_[key] = r;
    }
    return memo_.at(top);
  }

  const UOp& root_;
  const Grouping& g_;
  const std::unordered_map<const uop::UOpNode*, UOp>& buffers_;
  std::vector<const void*> fused_;
  std::vector<int64_t> order_;  // the loop order of the reduces' dims, when not their own (Grouping::loop_order)
  size_t rank_ = 0, extra_ = 0;  // root's dims, and the row reduces' axes after them
  std::unordered_map<const void*, std::vector<int64_t>> row_axes_;  // per row reduce, its axes (by reduced dim)
  std::vector<UOp> bufs_, globals_;
  std::unordered_map<const void*, int64_t> index_;
  std::unordered_map<Key, UOp, PairHash> memo_;
  std::vector<UOp> keep_;
  mutable uop::VarVals vals_;  // filled while children() unbinds the sizes it reads
};

}  // namespace

KernelAST build_kernel(const UOp& root, const UOp& out, const Grouping& g,
                       const std::unordered_map<const uop::UOpNode*, UOp>& buffers) {
  return Builder(root, g, buffers).build(out);
}

}  // namespace tg::schedule
