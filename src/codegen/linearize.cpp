#include "codegen/linearize.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

bool is_free(const UOp& u) {
  return u.op() == Ops::CONST || u.op() == Ops::RANGE || u.op() == Ops::DEFINE_GLOBAL || u.op() == Ops::DEFINE_VAR || u.op() == Ops::SINK;
}

// What a reduction's value is computed from, sources first, stopping at other REDUCEs: a reduction over the
// results of another (GROUP's second stage) reads them once they are done, outside their loops.
std::vector<UOp> body(const UOp& root) {
  std::vector<UOp> order;  // UOp::toposort's order, which the kernels' statements follow
  std::unordered_set<const uop::UOpNode*> done;
  std::vector<std::pair<UOp, bool>> stack{{root, false}};  // (node, its sources are pushed)
  while (!stack.empty()) {
    auto [u, expanded] = stack.back();
    stack.pop_back();
    if (done.count(u.get())) continue;
    if (expanded) {
      done.insert(u.get());
      order.push_back(u);
      continue;
    }
    stack.push_back({u, true});
    if (u.op() != Ops::REDUCE)
      for (auto it = u.src().rbegin(); it != u.src().rend(); ++it)
        if (!done.count(it->get())) stack.push_back({*it, false});
  }
  return order;
}

}  // namespace

std::vector<UOp> linearize(const LoweredKernel& k) {
  std::vector<UOp> nodes = k.sink.toposort();
  // per node: the reduce loops it sits in (ranges reached through sources, not through a REDUCE)
  std::unordered_map<const uop::UOpNode*, std::vector<UOp>> loops;
  std::unordered_set<const uop::UOpNode*> reduce_ranges;
  for (int64_t a : k.reduce_axes)
    for (const UOp& u : nodes)
      if (u.op() == Ops::RANGE && u.arg().get<int64_t>() == a) reduce_ranges.insert(u.get());
  for (const UOp& u : nodes)  // and the loops of reductions that are no axis of the kernel (GROUP's second stage)
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i + 1 < u.src().size(); i++) reduce_ranges.insert(u.src(i).get());
  for (const UOp& u : nodes) {
    std::vector<UOp>& l = loops[u.get()];
    if (u.op() == Ops::RANGE && reduce_ranges.count(u.get())) l.push_back(u);
    if (u.op() == Ops::REDUCE) continue;
    for (const UOp& s : u.src())
      for (const UOp& r : loops[s.get()])
        if (std::find(l.begin(), l.end(), r) == l.end()) l.push_back(r);
  }

  std::vector<UOp> out;
  std::unordered_set<const uop::UOpNode*> emitted;
  auto emit = [&](const UOp& u) {
    if (emitted.insert(u.get()).second) out.push_back(u);
  };
  for (const UOp& g : k.globals)
    if (g) emit(g);
  // the variables of symbolic loop sizes, by name: the kernel's parameters after the buffers
  std::vector<UOp> vars;
  for (const UOp& u : nodes)
    if (u.op() == Ops::DEFINE_VAR) vars.push_back(u);
  std::sort(vars.begin(), vars.end(), [](const UOp& a, const UOp& b) { return a.arg().get<uop::VarArg>().name < b.arg().get<uop::VarArg>().name; });
  for (size_t i = 1; i < vars.size(); i++)
    if (vars[i].arg().get<uop::VarArg>().name == vars[i - 1].arg().get<uop::VarArg>().name)
      throw InternalError("linearize", "two variables named " + vars[i].arg().get<uop::VarArg>().name + " in one kernel");
  for (const UOp& v : vars) emit(v);
  // a loop that ends at an expression (a symbolic size) has it computed before the loop
  auto emit_range = [&](const UOp& r) {
    for (const UOp& u : body(r.src(0)))
      if (!is_free(u)) emit(u);
    emit(r);
  };
  std::vector<UOp> global_loops;
  for (const UOp& u : nodes)
    if (u.op() == Ops::RANGE && !reduce_ranges.count(u.get())) global_loops.push_back(u);
  // in the kernel's loop order (SWAP), axis order without one; work-item loops (kLocalAxis + axis) after them
  auto rank = [&](const UOp& r) {
    int64_t a = r.arg().get<int64_t>();
    auto it = std::find(k.loop_order.begin(), k.loop_order.end(), a);
    return it == k.loop_order.end() ? a : it - k.loop_order.begin();
  };
  std::sort(global_loops.begin(), global_loops.end(), [&](const UOp& a, const UOp& b) { return rank(a) < rank(b); });
  // per node: the global loops it depends on, through REDUCEs too (a reduction's value varies with what its
  // input does, outside its own loops)
  std::unordered_map<const uop::UOpNode*, std::vector<const uop::UOpNode*>> deps;
  for (const UOp& u : nodes) {
    std::vector<const uop::UOpNode*>& d = deps[u.get()];
    if (u.op() == Ops::RANGE && !reduce_ranges.count(u.get())) d.push_back(u.get());
    for (const UOp& s : u.src())
      for (const uop::UOpNode* r : deps[s.get()])
        if (std::find(d.begin(), d.end(), r) == d.end()) d.push_back(r);
  }

  // reduces over the same loops share one loop nest: their accumulators, the loops, every value inside, the updates
  struct Nest {
    std::vector<UOp> ranges, reduces;
    bool done = false;
  };
  // A reduce that reads another's result never shares its nest: the two run one after the other. Their loops
  // differ except where both were copied whole (a layernorm's mean and variance over rows of 64, each a VECTOR and
  // an UNROLL: no loop left).
  std::vector<Nest> nests;
  auto reads_any = [](const UOp& red, const std::vector<UOp>& reduces) {
    for (const UOp& u : body(red.src(0)))
      if (std::find(reduces.begin(), reduces.end(), u) != reduces.end()) return true;
    return false;
  };
  for (const UOp& red : nodes) {
    if (red.op() != Ops::REDUCE) continue;
    std::vector<UOp> ranges(red.src().begin() + 1, red.src().end() - 1);
    auto it = std::find_if(nests.begin(), nests.end(), [&](const Nest& n) { return n.ranges == ranges && !reads_any(red, n.reduces); });
    if (it == nests.end()) nests.push_back({ranges, {red}});
    else it->reduces.push_back(red);
  }
  auto inside = [&](const UOp& u) { return !loops[u.get()].empty(); };
  auto emit_nest = [&](const Nest& nest) {
    std::vector<UOp> below;
    for (const UOp& red : nest.reduces)
      for (const UOp& u : body(red.src(0))) below.push_back(u);
    for (const UOp& u : below)
      if (!is_free(u) && !inside(u)) emit(u);
    for (const UOp& red : nest.reduces) out.push_back(UOp::make(Ops::DEFINE_REG, red.dtype(), {red}));
    for (const UOp& r : nest.ranges) emit_range(r);
    for (const UOp& u : below)
      if (!is_free(u) && inside(u)) {
        for (const UOp& r : loops[u.get()])
          if (std::find(nest.ranges.begin(), nest.ranges.end(), r) == nest.ranges.end())
            throw InternalError("linearize", "a value inside a reduction depends on another reduction's loop");
        emit(u);
      }
    for (const UOp& red : nest.reduces) emit(red);
    for (size_t i = nest.ranges.size(); i-- > 0;) out.push_back(UOp::make(Ops::END, dtypes::void_, {nest.ranges[i]}));
  };
  // A nest runs inside the global loops it depends on only, as soon as they are open: a row's reduction (a
  // softmax's max and sum, Grouping::row_reduces) before the loop over the row's outputs, not once per output. So
  // does the math on reduced values that depends on nothing more (the sum's reciprocal).
  std::vector<const uop::UOpNode*> open;
  auto ready = [&](const UOp& u) {
    for (const uop::UOpNode* r : deps[u.get()])
      if (std::find(open.begin(), open.end(), r) == open.end()) return false;
    return true;
  };
  std::unordered_set<const uop::UOpNode*> reduced;  // values computed from a REDUCE, outside its loops
  for (const UOp& u : nodes)
    for (const UOp& s : u.src())
      if (s.op() == Ops::REDUCE || reduced.count(s.get())) reduced.insert(u.get());
  auto emit_ready = [&] {
    for (Nest& nest : nests)
      if (!nest.done && std::all_of(nest.reduces.begin(), nest.reduces.end(), ready)) emit_nest(nest), nest.done = true;
    for (const UOp& u : nodes) {
      bool pure = uop::GroupOp::ALU().contains(u.op()) || u.op() == Ops::GEP || u.op() == Ops::VECTORIZE;
      if (!pure || !reduced.count(u.get()) || inside(u) || emitted.count(u.get()) || !ready(u)) continue;
      if (std::all_of(u.src().begin(), u.src().end(), [&](const UOp& s) { return is_free(s) || emitted.count(s.get()); })) emit(u);
    }
  };
  emit_ready();
  for (const UOp& r : global_loops) {
    emit_range(r);
    open.push_back(r.get());
    emit_ready();
  }
  for (const UOp& u : nodes)
    if (!is_free(u)) {
      if (!emitted.count(u.get()) && !loops[u.get()].empty())
        throw InternalError("linearize", "a value uses a reduce loop outside its REDUCE");
      emit(u);
    }
  for (size_t i = global_loops.size(); i-- > 0;) out.push_back(UOp::make(Ops::END, dtypes::void_, {global_loops[i]}));
  return out;
}

std::string print_uops(const std::vector<UOp>& uops) {
  std::unordered_map<const uop::UOpNode*, size_t> pos;
  std::string s;
  for (size_t i = 0; i < uops.size(); i++) pos[uops[i].get()] = i;
  for (size_t i = 0; i < uops.size(); i++) {
    const UOp& u = uops[i];
    std::string srcs = "[";
    for (size_t j = 0; j < u.src().size(); j++) {
      auto it = pos.find(u.src(j).get());
      srcs += (j ? ", " : "") + (it != pos.end() ? std::to_string(it->second) : u.src(j).render());
    }
    srcs += "]";
    char line[256];
    std::snprintf(line, sizeof line, "%4zu %-14s %-10s %-16s %s\n", i, std::string(uop::op_name(u.op())).c_str(),
                  u.dtype().name().c_str(), srcs.c_str(), u.arg().empty() ? "" : u.arg().repr().c_str());
    s += line;
  }
  return s;
}

}  // namespace tg::codegen
