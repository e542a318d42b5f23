#include "schedule/grouping.h"

#include "schedule/schedule.h"
#include "uop/reduce_arg.h"

namespace tg::schedule {

using uop::GroupOp::ALU;
using uop::GroupOp::Movement;
using uop::Ops;
using uop::UOp;

const UOp& movement_base(const UOp& u) {
  const UOp* n = &u;
  while (Movement().contains(n->op())) n = &n->src(0);
  return *n;
}

bool is_realized_form(const UOp& u) {
  Ops b = movement_base(u).op();
  return b == Ops::BUFFER || b == Ops::CONST;
}

namespace {

// the source of a COPY can be copied as it is: the whole of a buffer, in order
bool is_plain_buffer(const UOp& u) {
  if (u.op() == Ops::BUFFER) return true;
  return u.op() == Ops::RESHAPE && u.src(0).op() == Ops::BUFFER;
}

}  // namespace

Grouping group(const std::vector<UOp>& outputs) {
  Grouping g;
  g.nodes = UOp::sink(outputs).toposort();
  g.nodes.pop_back();  // the SINK itself
  std::unordered_map<const uop::UOpNode*, std::vector<const UOp*>> users;  // distinct users
  for (const UOp& u : g.nodes)
    for (size_t i = 0; i < u.src().size(); i++) {
      bool seen = false;
      for (size_t j = 0; j < i; j++) seen = seen || u.src(j) == u.src(i);
      if (!seen) users[u.src(i).get()].push_back(&u);
    }

  for (const UOp& out : outputs)
    if (!is_realized_form(out)) g.realize.insert(out.get());
  for (const UOp& u : g.nodes) {
    if (u.op() == Ops::CONTIGUOUS) g.realize.insert(u.get());
    if (u.op() == Ops::COPY) {
      g.realize.insert(u.get());
      if (!is_plain_buffer(u.src(0))) g.realize.insert(u.src(0).get());
    }
  }

  // A reduce fuses into the kernel at the end of its chain of single users that are elementwise ops or reshapes;
  // anything else (an expand, a permute, a second user, another reduce) reads it from a buffer.
  for (const UOp& r : g.nodes) {
    if (r.op() != Ops::REDUCE_AXIS) continue;
    if (g.realized(r)) {
      g.reduces[r.get()].push_back(r);
      continue;
    }
    const UOp* cur = &r;
    const UOp* root = nullptr;
    while (true) {
      auto it = users.find(cur->get());
      if (it == users.end() || it->second.size() != 1) break;
      const UOp* next = it->second[0];
      if (g.realized(*next)) {
        if (ALU().contains(next->op()) || next->op() == Ops::RESHAPE || next->op() == Ops::CONTIGUOUS) root = next;
        break;
      }
      if (!ALU().contains(next->op()) && next->op() != Ops::RESHAPE) break;
      cur = next;
    }
    // every reduce in one kernel shares the loop space: the same input shape and axes
    std::vector<UOp>* fused = root ? &g.reduces[root->get()] : nullptr;
    if (fused && !fused->empty()) {
      const UOp& first = fused->front();
      if (first.src(0).shape() != r.src(0).shape() || uop::get_reduce_arg(first).axes != uop::get_reduce_arg(r).axes)
        fused = nullptr;
    }
    if (fused) {
      fused->push_back(r);
    } else {
      g.realize.insert(r.get());
      g.reduces[r.get()].push_back(r);
    }
  }
  return g;
}

}  // namespace tg::schedule
