#include "schedule/grouping.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "runtime/device.h"
#include "schedule/schedule.h"
#include "shape/shapetracker.h"
#include "shape/view.h"
#include "uop/reduce_arg.h"

namespace tg::schedule {

using uop::GroupOp::ALU;
using uop::GroupOp::Movement;
using uop::Ops;
using uop::UOp;

bool passes_through(Ops op) {
  return op == Ops::DETACH || op == Ops::CONTIGUOUS || op == Ops::CONTIGUOUS_BACKWARD || op == Ops::CUSTOM_GRAD ||
         op == Ops::ASSIGN;
}

bool is_transfer(Ops op) { return op == Ops::COPY || op == Ops::ALLREDUCE; }

const UOp& movement_base(const UOp& u) {
  const UOp* n = &u;
  while (Movement().contains(n->op()) || n->op() == Ops::DETACH) n = &n->src(0);
  return *n;
}

bool is_realized_form(const UOp& u) {
  const UOp& b = movement_base(u);
  if (b.op() == Ops::MULTI)  // every device's part in memory (src 0 names the devices)
    return std::all_of(b.src().begin() + 1, b.src().end(), [](const UOp& s) { return is_realized_form(s); });
  return b.op() == Ops::BUFFER || b.op() == Ops::CONST;
}

const UOp& reshape_base(const UOp& u) {
  const UOp* n = &u;  // reshapes keep the order, DETACH the value (every value made under NoGradGuard is one)
  while (n->op() == Ops::RESHAPE || n->op() == Ops::DETACH) n = &n->src(0);
  return *n;
}

UOp plain_buffer(const UOp& u) {
  const UOp& n = reshape_base(u);
  return n.op() == Ops::BUFFER ? n : UOp();
}

namespace {

using Users = std::unordered_map<const uop::UOpNode*, std::vector<const UOp*>>;  // each node's distinct users

// Ops a reduce's kernel can compute after the reduce, in the same loops: elementwise, reshapes, pass-throughs.
bool fuses_after_reduce(const UOp& u) { return ALU().contains(u.op()) || u.op() == Ops::RESHAPE || passes_through(u.op()); }

// How many of u's sources a kernel computes: CUSTOM_GRAD computes src 0 only (the others feed its gradient rule),
// ASSIGN too (src 1 only says where the value goes).
size_t computed_sources(const UOp& u) { return u.op() == Ops::CUSTOM_GRAD || u.op() == Ops::ASSIGN ? 1 : u.src().size(); }

constexpr int64_t kMaxRecomputedOps = 32, kPadCost = kMaxRecomputedOps / 2;

// Whether a value of `cost` ALU ops broadcast by EXPAND `e` costs more to recompute for every copy than to store:
// more than kMaxRecomputedOps; more than kMaxBroadcastOps when the expand makes many copies; or any cost when the
// work its copies add, counted once per block of kBlockCopies (a matmul's register block shares one computed value
// between its columns), passes kMaxAddedOps. A matmul operand is expanded along the other operand's columns: a
// LayerNorm's normalization fused into it, 5 ops once its statistics are stored, runs in the inner loop once per
// block of columns, while a relu on a small operand is cheaper fused than a kernel of its own. A value computed from
// positions (an IOTA: the one-hot of an embedding lookup) is left to fuse: codegen folds it into a gated read. The
// constants: bench/onnx_models.sh vit_b_16 (LayerNorm into the MLP's matmuls) beside the other models.
constexpr int64_t kMaxBroadcastOps = 8, kManyCopies = 64, kBlockCopies = 32, kMaxAddedOps = int64_t{1} << 20;
bool expensive_to_broadcast(const UOp& e, int64_t cost, bool from_positions, bool widened) {
  // never a value wider than what it reads: a quantized weight's dequantization stays fused into the matmul, which
  // then reads the packed bytes instead of a float32 copy four to eight times their size. Stored, it would become
  // the weight tensor's value for good, and every later decode step would read float32 weights (a prompt chunk's
  // broadcast along its rows would store it: TYPES=Q8_0 PROMPT=128 bench/gguf.sh)
  if (widened) return false;
  if (cost > kMaxRecomputedOps) return true;
  if (cost == 0 || from_positions) return false;
  int64_t from = shape::prod(e.src(0).max_shape());
  if (from <= 0) return false;
  int64_t copies = shape::prod(e.max_shape()) / from;
  if (cost > kMaxBroadcastOps && copies >= kManyCopies) return true;
  return static_cast<double>(cost) * from * (copies / kBlockCopies) >= static_cast<double>(kMaxAddedOps);
}

// Whether the kernels of u's device run as loops on a CPU core (not over a launch grid). Nodes without a device
// (constants) say yes.
class OnCpu {
 public:
  explicit OnCpu(const Grouping& g) : g_(g) {}
  bool operator()(const UOp& u) const {
    auto it = g_.device.find(u.get());
    if (it == g_.device.end()) return true;
    try {
      return !runtime::get_device(*it->second).caps().grid;
    } catch (const Error&) {
      return false;
    }
  }

 private:
  const Grouping& g_;
};

constexpr int64_t kMinRows = 64;

// Whether reduce r can be a row reduce (fuse_row_reduces) as far as r alone says: on a CPU, over the innermost dims of
// a concrete, nonempty input, keeping at least kMinRows rows.
bool row_reduce_shape(const UOp& r, const OnCpu& on_cpu) {
  if (r.src(0).symbolic_shape() || !on_cpu(r)) return false;
  const std::vector<int64_t> in = r.src(0).shape();
  const std::vector<int64_t>& axes = uop::get_reduce_arg(r).axes;
  int64_t rows = 1;
  for (size_t d = 0; d < in.size(); d++) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (reduced) continue;
    rows *= in[d];
    // every dim after the first reduced one is reduced too (or of size 1)
    if (in[d] != 1 && std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return a < static_cast<int64_t>(d); })) return false;
  }
  return !axes.empty() && rows >= kMinRows && shape::prod(in) > 0;
}

// Whether EXPAND e broadcasts a few elementwise ops on a stored reduce's result back over the dims it reduced, where
// that reduce will run in its reader's kernel (fuse_row_reduces): a row statistic (log_softmax's log of the sum),
// computed once per row there (linearize), not once per element.
bool broadcasts_row_statistic(const UOp& e, const Grouping& g, const OnCpu& on_cpu) {
  const UOp* end = nullptr;
  std::vector<const UOp*> todo{&e.src(0)};
  while (!todo.empty()) {
    const UOp* n = todo.back();
    todo.pop_back();
    if (g.realized(*n)) {
      auto r = g.reduces.find(n->get());
      if ((end && end->get() != n->get()) || r == g.reduces.end() || r->second.size() != 1) return false;
      end = n;
      continue;
    }
    if (is_realized_form(*n)) continue;
    if (!(ALU().contains(n->op()) || passes_through(n->op())) || n->sym_shape() != e.src(0).sym_shape()) return false;
    for (size_t i = 0; i < computed_sources(*n); i++) todo.push_back(&n->src(i));
  }
  if (!end) return false;
  const UOp& r = g.reduces.at(end->get())[0];
  return end->sym_shape() == e.src(0).sym_shape() && r.src(0).sym_shape() == e.sym_shape() && row_reduce_shape(r, on_cpu);
}

// A value computed inside several kernels is recomputed by each (cheap elementwise work usually is), unless it
// costs more than kMaxRecomputedOps ALU ops: then the node where the kernels part ways gets its own buffer. Without
// this a chain of N ops read by a reduce every k ops would recompute the chain in every kernel: O(N^2/k) work.
void realize_shared_work(Grouping& g, const Users& users, const OnCpu& on_cpu) {
  constexpr int64_t kNone = -1, kMany = -2;
  // which kernel computes each node: the realized node it flows into, or kMany when several
  std::unordered_map<const uop::UOpNode*, int64_t> kernel;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const UOp& u = g.nodes[i];
    if (g.realized(u)) {
      kernel[u.get()] = static_cast<int64_t>(i);
      continue;
    }
    int64_t k = kNone;
    auto it = users.find(u.get());
    if (it != users.end())
      for (const UOp* v : it->second) {
        int64_t kv = kernel.at(v->get());
        k = k == kNone || k == kv ? kv : kMany;
      }
    kernel[u.get()] = k;
  }
  // ALU ops each node adds to a kernel (capped: only the threshold matters), bottom-up
  std::unordered_map<const uop::UOpNode*, int64_t> cost;
  std::unordered_set<const uop::UOpNode*> positions;  // computed from an IOTA in the same kernel
  std::unordered_set<const uop::UOpNode*> widened;    // computed from a buffer of a narrower dtype in the same kernel
  for (const UOp& u : g.nodes) {
    int64_t c = ALU().contains(u.op()) || u.op() == Ops::REDUCE_AXIS ? 1 : 0;
    // a PAD gates every read: in a reduce's inner loop that costs more than its ops say, so a cat that several
    // kernels read, or that a reduce reads many times over, is stored (shufflenet's channel shuffles). Counted at
    // the PAD of a value computed here, and at the sum of a cat for the PADs of buffers (a pad of a buffer alone, a
    // conv's or a pool's, reads as cheaply as the buffer would once stored)
    auto padded_buffer = [&](const UOp& p) {
      return p.op() == Ops::PAD && (g.realized(movement_base(p.src(0))) || is_realized_form(p.src(0)));
    };
    if (u.op() == Ops::PAD && !padded_buffer(u)) c += kPadCost;
    if (u.op() == Ops::ADD)
      for (const UOp& s : u.src()) c += padded_buffer(s) ? kPadCost : 0;
    if (u.op() == Ops::IOTA) positions.insert(u.get());
    for (const UOp& s : u.src()) {
      // (a view of a value this schedule stores is read as one: a matmul's float16 weight packed in panels)
      bool read = g.realized(s) || movement_base(s).op() == Ops::BUFFER || g.realized(movement_base(s));
      if (read ? s.dtype().itemsize() < u.dtype().itemsize() : widened.count(s.get()) > 0) widened.insert(u.get());
      if (!g.realized(s)) {
        c += cost[s.get()];
        if (positions.count(s.get())) positions.insert(u.get());
      }
    }
    c = std::min(c, kMaxRecomputedOps + 1);
    // an expensive value broadcast by an EXPAND would be recomputed for every copy: store it before the expand
    // (the random indices of X[randint(...)] are made once, not once per row of X)
    if (u.op() == Ops::EXPAND && expensive_to_broadcast(u, c, positions.count(u.get()) > 0, widened.count(u.get()) > 0) &&
        !g.realized(u.src(0)) && !(c <= kMaxBroadcastOps && broadcasts_row_statistic(u, g, on_cpu))) {
      g.realize.insert(movement_base(u.src(0)).get());
      c = 0;
    }
    // where kernels part ways: shared here, and some user belongs to one kernel only
    bool branch = false;
    if (kernel[u.get()] == kMany && !g.realized(u) && c > kMaxRecomputedOps) {
      for (const UOp* v : users.at(u.get())) branch = branch || g.realized(*v) || kernel[v->get()] != kMany;
    }
    if (branch) {
      // movement ops cost nothing to redo: the buffer goes below them (an expanded weight is stored unexpanded)
      g.realize.insert(movement_base(u).get());
      c = 0;
    }
    cost[u.get()] = c;
  }
}

// A stored cat written in place. Tensor::cat sums its pieces zero-padded to the full length of one dim; stored, that
// sum is a kernel that copies every piece into the cat's buffer, after the kernels that stored the pieces (the two
// expand convs of a squeezenet fire module: bench/onnx_models.sh squeezenet1_1). When some piece is stored anyway
// and each piece is read by the cat alone, each piece's kernel stores it into its slice of the cat's buffer instead
// (a piece not stored before gets a kernel that copies it there), and the cat has no kernel. Its values are then the
// pieces' exactly (the sum made -0.0 into 0.0).
void fill_cats_in_place(Grouping& g, const Users& users) {
  auto only_user = [&](const UOp& u, const UOp& user) {
    auto it = users.find(u.get());
    return it != users.end() && it->second.size() == 1 && it->second[0]->get() == user.get();
  };
  for (const UOp& owner : g.nodes) {
    if (!g.realized(owner) || owner.symbolic_shape() || g.reduces.count(owner.get()) || shape::prod(owner.max_shape()) == 0) continue;
    // the cat, below the reshapes and pass-throughs of the node stored (contiguous(cat), which to_vector asks for)
    const UOp* top = &owner;
    while ((top->op() == Ops::RESHAPE || (passes_through(top->op()) && top->op() != Ops::ASSIGN)) &&
           !g.realized(top->src(0)) && only_user(top->src(0), *top))
      top = &top->src(0);
    const UOp& cat = *top;
    bool sum = cat.op() == Ops::ADD || (cat.op() == Ops::OR && cat.dtype().is_bool());
    if (!sum) continue;
    // the pieces: the PADs at the leaves of a tree of the cat's op, every node of it read by its parent alone
    std::vector<const UOp*> pads, todo{&cat};
    bool ok = true;
    while (!todo.empty() && ok) {
      const UOp* n = todo.back();
      todo.pop_back();
      for (const UOp& s : n->src()) {
        ok = ok && !g.realized(s) && only_user(s, *n) && (s.op() == cat.op() || s.op() == Ops::PAD);
        if (ok) (s.op() == Ops::PAD ? pads : todo).push_back(&s);
      }
    }
    if (!ok) continue;
    // each piece fills [begin, end) of one dim d, the same for all, and the pieces tile the cat
    std::vector<int64_t> shape = cat.shape();
    int64_t d = -1;
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const UOp* p : pads) {
      const auto* a = p->arg().get_if<std::vector<int64_t>>();  // (a symbolic pad's amounts are Dims)
      ok = ok && a;
      for (size_t i = 0; i < shape.size() && ok; i++)
        if ((*a)[2 * i] != 0 || (*a)[2 * i + 1] != 0) ok = d < 0 || d == static_cast<int64_t>(i), d = static_cast<int64_t>(i);
    }
    if (!ok || d < 0) continue;
    for (const UOp* p : pads) {
      const std::vector<int64_t>& a = p->arg().get<std::vector<int64_t>>();
      spans.push_back({a[2 * d], shape[d] - a[2 * d + 1]});
    }
    std::vector<std::pair<int64_t, int64_t>> in_order = spans;
    std::sort(in_order.begin(), in_order.end());
    int64_t covered = 0;
    for (const auto& [begin, end] : in_order) ok = ok && begin == covered, covered = end;
    // a piece is stored below its reshapes (a reduce's output, before the reshape that gives it the cat's rank)
    std::vector<const UOp*> stored_as;
    for (const UOp* p : pads) {
      const UOp* n = &p->src(0);
      ok = ok && only_user(*n, *p) && n->dtype() == cat.dtype();
      while (ok && (n->op() == Ops::RESHAPE || n->op() == Ops::DETACH) && !g.realized(*n))
        ok = only_user(n->src(0), *n), n = &n->src(0);
      ok = ok && !g.filled.count(n->get());  // (a cat inside the cat, itself filled in place, keeps its own buffer)
      ok = ok && !is_transfer(n->op());      // (a copy or an allreduce writes a whole buffer of its own)
      stored_as.push_back(n);
    }
    if (!ok || covered != shape[d] ||
        std::none_of(stored_as.begin(), stored_as.end(), [&](const UOp* n) { return g.realized(*n); }))
      continue;  // (no piece is stored anyway: the cat's own kernel computes them all, with no copy)
    for (size_t i = 0; i < pads.size(); i++) {
      shape::Ranges r;
      for (size_t j = 0; j < shape.size(); j++) r.push_back({0, shape[j]});
      r[d] = {spans[i].first, spans[i].second};
      shape::ShapeTracker view = shape::ShapeTracker::from_shape(shape::dims(shape)).shrink(r).reshape(stored_as[i]->sym_shape());
      g.realize.insert(stored_as[i]->get());
      g.slices.insert_or_assign(stored_as[i]->get(), Grouping::Slice{owner, view});
    }
    g.filled.insert(owner.get());
  }
}

// The realized node that every use of r flows into through unrealized elementwise ops, reshapes, permutes and
// pass-through ops (DETACH too: every value computed under NoGradGuard is one), or null. `region` gets the nodes
// on the way (not r, not the root).
const UOp* fusion_root(const UOp& r, const Grouping& g, const Users& users, std::vector<const UOp*>* region) {
  const UOp* root = nullptr;
  std::vector<const UOp*> todo{&r};
  std::unordered_set<const uop::UOpNode*> seen{r.get()};
  while (!todo.empty()) {
    const UOp* cur = todo.back();
    todo.pop_back();
    auto it = users.find(cur->get());
    if (it == users.end()) return nullptr;
    for (const UOp* next : it->second) {
      bool fuses = fuses_after_reduce(*next) || next->op() == Ops::PERMUTE;
      if (!fuses || (g.realized(*next) && root && root != next)) return nullptr;
      if (g.realized(*next)) root = next;
      else if (seen.insert(next->get()).second) todo.push_back(next), region->push_back(next);
    }
  }
  return root;
}

// The order of r's dims in which root, computed from r through `region` (elementwise ops, reshapes, permutes), holds
// its values: root = reshape(permute(r, order)). Empty when that is r's own order; nullopt when no order of r's dims
// gives root (two paths that move r differently, a symbolic size, an ASSIGN, which stores through its target).
std::optional<std::vector<int64_t>> stored_order(const UOp& r, const UOp& root, std::vector<const UOp*> region,
                                                 const std::unordered_map<const uop::UOpNode*, size_t>& order) {
  bool moved = root.op() == Ops::PERMUTE;
  for (const UOp* u : region) moved = moved || u->op() == Ops::PERMUTE;
  if (!moved) return std::vector<int64_t>{};
  if (r.symbolic_shape() || root.symbolic_shape() || root.op() == Ops::ASSIGN) return std::nullopt;
  // each node's view of r: its positions -> r's flat index
  region.push_back(&root);
  std::sort(region.begin(), region.end(), [&](const UOp* a, const UOp* b) { return order.at(a->get()) < order.at(b->get()); });
  std::unordered_map<const uop::UOpNode*, shape::ShapeTracker> view{{r.get(), shape::ShapeTracker::from_shape(r.sym_shape())}};
  for (const UOp* u : region) {
    if (u->symbolic_shape()) return std::nullopt;
    std::optional<shape::ShapeTracker> v;
    for (size_t i = 0; i < computed_sources(*u); i++) {
      auto it = view.find(u->src(i).get());
      if (it == view.end()) continue;
      shape::ShapeTracker s = it->second;
      if (u->op() == Ops::RESHAPE) s = s.reshape(u->sym_shape()).simplify();
      if (u->op() == Ops::PERMUTE) s = s.permute(u->arg().get<std::vector<int64_t>>()).simplify();
      if (v && !(*v == s)) return std::nullopt;
      v = s;
    }
    if (!v) return std::nullopt;
    view.emplace(u->get(), *v);
  }
  const shape::ShapeTracker& m = view.at(root.get());
  if (m.views().size() != 1 || m.views()[0].mask || !(m.views()[0].offset == 0)) return std::nullopt;
  // each dim of root is a run of r's dims (merged by reshapes): the one whose stride it has, and those before it
  std::vector<int64_t> rs = shape::ints(r.sym_shape(), "schedule"), q;
  std::vector<int64_t> rstride = shape::ints(shape::strides_for_shape(r.sym_shape()), "schedule");
  std::vector<bool> used(rs.size(), false);
  const shape::View& v = m.views()[0];
  for (size_t i = 0; i < v.shape.size(); i++) {
    int64_t size = v.shape[i].concrete("schedule"), stride = v.strides[i].concrete("schedule");
    if (size == 1) continue;
    int64_t last = -1;
    for (size_t j = 0; j < rs.size() && last < 0; j++)
      if (rs[j] > 1 && !used[j] && rstride[j] == stride) last = static_cast<int64_t>(j);
    if (last < 0) return std::nullopt;
    std::vector<int64_t> run;
    int64_t covered = 1;
    for (int64_t j = last; j >= 0 && covered < size; j--) {
      if (rs[j] == 1) continue;
      if (used[j]) return std::nullopt;
      run.insert(run.begin(), j), covered *= rs[j], used[j] = true;
    }
    if (covered != size) return std::nullopt;
    q.insert(q.end(), run.begin(), run.end());
  }
  for (size_t j = 0; j < rs.size(); j++)
    if (!used[j]) q.push_back(static_cast<int64_t>(j));  // size 1 (the reduced dims): innermost
  shape::ShapeTracker check = shape::ShapeTracker::from_shape(r.sym_shape()).permute(q).reshape(root.sym_shape()).simplify();
  if (!(check == m)) return std::nullopt;
  for (size_t j = 0; j < q.size(); j++)
    if (q[j] != static_cast<int64_t>(j)) return q;
  return std::vector<int64_t>{};
}

// Where the elementwise epilogue of a reduce stored on its own ends: the last node of the unrealized elementwise
// ops, reshapes and pass-through ops that follow r through which every use of r passes (a conv's bias and
// clip(x, 0, 6); a residual sum's first term), or null when that is r. Storing it instead of r runs the epilogue
// once, in r's kernel; left to the consumer, the bias and clip of a depthwise conv read by a 1x1 conv ran in the
// 1x1 conv's inner loop once per block of output channels. Not when a PAD reads the end (a cat): the cat is then
// cheap enough to fuse into its readers as gated loads, which costs them more than the epilogue did (shufflenet).
// `order`: each node's position in g.nodes.
const UOp* epilogue_end(const UOp& r, const Grouping& g, const Users& users,
                        const std::unordered_map<const uop::UOpNode*, size_t>& order) {
  // (not exp2, log2 or sin: a reduce's kernel computes its epilogue lane by lane, where the libm calls cost more
  // than the elementwise kernel that runs them as vectors; efficientnet's SiLU after each depthwise conv)
  auto fuses = [&](const UOp& u) {
    bool libm = u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SIN;
    return !g.realized(u) && !libm && fuses_after_reduce(u);
  };
  // whether s, computed in the epilogue's kernel, would need a reduce other than r that no buffer holds
  std::unordered_set<const uop::UOpNode*> region{r.get()}, checked;
  auto needs_other_reduce = [&](const UOp& s) {
    std::vector<const UOp*> todo{&s};
    while (!todo.empty()) {
      const UOp* n = todo.back();
      todo.pop_back();
      if (region.count(n->get()) || g.realized(*n) || !checked.insert(n->get()).second) continue;
      if (n->op() == Ops::REDUCE_AXIS) return true;
      for (size_t i = 0; i < computed_sources(*n); i++) todo.push_back(&n->src(i));
    }
    return false;
  };
  // visit the nodes reached from r in graph order; one that every pending use flows into ends the epilogue so far
  std::map<size_t, const UOp*> pending;
  const UOp* end = nullptr;
  for (const UOp* cur = &r;;) {
    auto it = users.find(cur->get());
    if (it == users.end()) break;
    bool read_outside = false;
    for (const UOp* next : it->second) {
      if (fuses(*next)) pending.emplace(order.at(next->get()), next);
      else read_outside = true;
    }
    if (read_outside || pending.empty()) break;
    cur = pending.begin()->second;
    pending.erase(pending.begin());
    region.insert(cur->get());
    bool other = false;
    for (size_t i = 0; i < computed_sources(*cur) && !other; i++)
      other = needs_other_reduce(cur->src(i));
    if (other) break;
    if (pending.empty()) end = cur;
  }
  while (end && end->op() == Ops::RESHAPE) end = &end->src(0);  // a reshape's source is stored in the same order
  if (!end || end->get() == r.get()) return nullptr;
  return end;
}

// Row reductions fused into the elementwise kernel that reads them broadcast (Grouping::row_reduces). A reduce r
// stored on its own (as x: r or its epilogue's end) joins the kernel of root when
// - every use of x flows into root alone through x's broadcast to r's input shape I (an EXPAND), elementwise ops of
//   shape I, and other row reduces of root (whose epilogues have x's shape);
// - root is elementwise of shape I, stored whole (not an output's slice, an ASSIGN or a reduce's kernel);
// - r reduces I's innermost dims (the rows are contiguous runs) and keeps at least kMinRows rows: each row is a
//   loop of the kernel's outermost one, which the CPU cuts between threads;
// - the device runs kernels as loops on a core: one work-item per row would leave a GPU idle, and its caches are
//   not what this is for.
// Unlike a reduce fused into its own kernel, r's loops are r's own: root's loops reach r's value after r's loop
// ends (the max, then the sum of exponentials, then the stores, one row at a time). `forced`: nodes whose buffers
// the caller asked for.
void fuse_row_reduces(Grouping& g, const Users& users, const std::unordered_set<const uop::UOpNode*>& forced, const OnCpu& on_cpu) {
  std::unordered_map<const uop::UOpNode*, const UOp*> host;  // a fused row reduce -> the root it joined
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const UOp& x = g.nodes[i];
    auto fused = g.reduces.find(x.get());
    if (!g.realized(x) || forced.count(x.get()) || g.slices.count(x.get()) || g.filled.count(x.get()) ||
        fused == g.reduces.end() || fused->second.size() != 1 || x.op() == Ops::ASSIGN || g.loop_order.count(x.get()))
      continue;
    const UOp r = fused->second[0];  // (a copy: the entry goes away below)
    if (x.sym_shape() != r.sym_shape() || !row_reduce_shape(r, on_cpu)) continue;
    const std::vector<Dim> in_dims = r.src(0).sym_shape(), out_dims = r.sym_shape();  // (users may be symbolic)
    const std::vector<int64_t>& axes = uop::get_reduce_arg(r).axes;
    // the epilogue between r and x has r's shape throughout
    bool ok = true;
    std::vector<const UOp*> todo{&x};
    while (!todo.empty() && ok) {
      const UOp* n = todo.back();
      todo.pop_back();
      if (n->get() == r.get()) continue;
      ok = n->sym_shape() == out_dims && (ALU().contains(n->op()) || passes_through(n->op()));
      for (size_t s = 0; s < computed_sources(*n) && ok; s++)
        if ((!g.realized(n->src(s)) && !is_realized_form(n->src(s))) || n->src(s).get() == r.get()) todo.push_back(&n->src(s));
    }
    // where x's uses flow: one realized root
    const UOp* root = nullptr;
    std::unordered_set<const uop::UOpNode*> seen{x.get()};
    todo = {&x};
    while (!todo.empty() && ok) {
      const UOp* cur = todo.back();
      todo.pop_back();
      auto it = users.find(cur->get());
      if (it == users.end()) {
        ok = false;
        break;
      }
      for (const UOp* v : it->second) {
        bool broadcast = v->op() == Ops::EXPAND && v->sym_shape() == in_dims && v->src(0).sym_shape() == out_dims;
        bool elementwise = (ALU().contains(v->op()) || passes_through(v->op())) && (v->sym_shape() == in_dims || v->sym_shape() == out_dims);
        auto joined = host.find(v->get());
        if (joined != host.end()) {  // another row reduce of the same kernel (its axes those of r)
          ok = ok && (!root || root == joined->second) && uop::get_reduce_arg(*v).axes == axes && v->src(0).sym_shape() == in_dims;
          root = joined->second;
        } else if (g.realized(*v)) {
          ok = ok && elementwise && v->sym_shape() == in_dims && (!root || root == v);
          root = v;
        } else {
          ok = ok && (broadcast || elementwise);
        }
        if (ok && !g.realized(*v) && seen.insert(v->get()).second) todo.push_back(v);
      }
    }
    if (!ok || !root || root->op() == Ops::ASSIGN || g.reduces.count(root->get()) || g.slices.count(root->get()) ||
        g.filled.count(root->get()) || root->symbolic_shape())
      continue;
    g.realize.erase(x.get());
    g.reduces.erase(x.get());
    std::vector<UOp>& list = g.row_reduces[root->get()];
    list.insert(list.begin(), r);  // (visited consumers first)
    host[r.get()] = root;
  }
}

}  // namespace

Grouping group(const std::vector<UOp>& outputs) {
  Grouping g;
  g.nodes = UOp::sink(outputs).toposort();
  g.nodes.pop_back();  // the SINK itself
  for (const UOp& u : g.nodes) {
    if (u.op() == Ops::DEVICE) g.device[u.get()] = &u.arg().get<std::string>();
    else if (u.op() == Ops::COPY) g.device[u.get()] = &u.src(1).arg().get<std::string>();
    else if (!u.src().empty()) g.device[u.get()] = g.device.at(u.src(0).get());
  }
  Users users;
  std::unordered_map<const uop::UOpNode*, size_t> order;  // position in g.nodes
  for (const UOp& u : g.nodes) {
    order[u.get()] = order.size();
    for (size_t i = 0; i < computed_sources(u); i++) {
      bool seen = false;
      for (size_t j = 0; j < i; j++) seen = seen || u.src(j) == u.src(i);
      if (!seen) users[u.src(i).get()].push_back(&u);
    }
  }

  for (const UOp& out : outputs) {
    if (is_realized_form(out)) continue;
    const UOp* o = &out;  // a detached output is its value's buffer: no copy
    while (o->op() == Ops::DETACH) o = &o->src(0);
    g.realize.insert(o->get());
  }
  for (const UOp& u : g.nodes) {
    if (u.op() == Ops::CONTIGUOUS) g.realize.insert(u.get());
    if (is_transfer(u.op())) {
      g.realize.insert(u.get());
      if (!plain_buffer(u.src(0))) g.realize.insert(u.src(0).get());  // from a whole buffer
    }
  }
  const std::unordered_set<const uop::UOpNode*> forced = g.realize;

  // A reduce fuses into the kernel that all its uses flow into through elementwise ops and reshapes: one realized
  // node (a bias and a clip(x, 0, 6) read it twice on the way); anything else (an expand, a permute, another reduce,
  // two realized nodes) reads it from a buffer: then its epilogue's end, when it has one, is stored instead.
  std::vector<const UOp*> alone;
  for (const UOp& r : g.nodes) {
    if (r.op() != Ops::REDUCE_AXIS) continue;
    if (g.realized(r)) {
      g.reduces[r.get()].push_back(r);
      continue;
    }
    std::vector<const UOp*> region;
    const UOp* root = fusion_root(r, g, users, &region);
    std::optional<std::vector<int64_t>> loops = root ? stored_order(r, *root, region, order) : std::nullopt;
    // every reduce in one kernel shares the loop space: the same input shape and axes, in the same order
    std::vector<UOp>* fused = loops ? &g.reduces[root->get()] : nullptr;
    if (fused && !fused->empty()) {
      const UOp& first = fused->front();
      auto it = g.loop_order.find(root->get());
      if (first.src(0).sym_shape() != r.src(0).sym_shape() || uop::get_reduce_arg(first).axes != uop::get_reduce_arg(r).axes ||
          *loops != (it == g.loop_order.end() ? std::vector<int64_t>{} : it->second))
        fused = nullptr;
    }
    if (fused) {
      fused->push_back(r);
      if (!loops->empty()) g.loop_order[root->get()] = *loops;
    } else {
      g.realize.insert(r.get());
      g.reduces[r.get()].push_back(r);
      alone.push_back(&r);
    }
  }
  for (const UOp* r : alone) {
    const UOp* end = epilogue_end(*r, g, users, order);
    if (!end || g.reduces.count(end->get())) continue;
    g.realize.erase(r->get());
    g.reduces.erase(r->get());
    g.realize.insert(end->get());
    g.reduces[end->get()].push_back(*r);
  }
  OnCpu on_cpu(g);
  realize_shared_work(g, users, on_cpu);
  fill_cats_in_place(g, users);
  fuse_row_reduces(g, users, forced, on_cpu);
  return g;
}

}  // namespace tg::schedule
