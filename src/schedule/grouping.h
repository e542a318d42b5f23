// Which nodes of a tensor-level graph are realized into buffers, and which reduces fuse into which kernel.
#pragma once
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg::schedule {

struct Grouping {
  std::vector<uop::UOp> nodes;                             // the whole graph, producers first
  std::unordered_set<const uop::UOpNode*> realize;         // nodes that get their own buffer
  // per realized node: the reduces computed inside its kernel (a realized reduce lists itself)
  std::unordered_map<const uop::UOpNode*, std::vector<uop::UOp>> reduces;
  // per realized node whose reduces reach it through a permute: the order of the reduces' dims that its kernel loops
  // in, so that it stores the node's values in order (the node is a reshape of the reduce permuted by it)
  std::unordered_map<const uop::UOpNode*, std::vector<int64_t>> loop_order;
  // per realized node that is a piece of a cat written in place: the cat, and the view of the cat's buffer that the
  // piece's kernel stores through (its slice). Such a cat has no kernel: its pieces' kernels fill its buffer.
  struct Slice {
    uop::UOp cat;
    shape::ShapeTracker view;
  };
  std::unordered_map<const uop::UOpNode*, Slice> slices;
  std::unordered_set<const uop::UOpNode*> filled;  // the cats filled by their pieces
  // per realized elementwise node: reduces its kernel computes before its own loops reach them, each read through a
  // broadcast of its result along the axes it reduces (softmax's max and sum, layernorm's mean and variance); the
  // kernel gives each its own loops (kernel_ast.h), so a row is reduced, then reduced again, then stored while it is
  // still in the cache. Producers first.
  std::unordered_map<const uop::UOpNode*, std::vector<uop::UOp>> row_reduces;
  // every node's device name (a COPY's: where it copies to), in one pass: a walk down a chain per node would make
  // it quadratic
  std::unordered_map<const uop::UOpNode*, const std::string*> device;
  bool realized(const uop::UOp& u) const { return realize.count(u.get()) != 0; }
};

Grouping group(const std::vector<uop::UOp>& outputs);

// Ops whose value is their first source's (DETACH, CONTIGUOUS, CONTIGUOUS_BACKWARD, CUSTOM_GRAD, ASSIGN): a kernel
// computes that source; they differ only in where the value is stored or how it differentiates.
bool passes_through(uop::Ops op);
// Ops that write a whole buffer of their own from a whole source buffer, as a schedule item that is no kernel (COPY,
// ALLREDUCE): both sides are realized.
bool is_transfer(uop::Ops op);
// Movement ops (and DETACH, which changes no value) down to the node they move.
const uop::UOp& movement_base(const uop::UOp& u);
// u below its reshapes and DETACHes: the node whose buffer holds u's values in u's order.
const uop::UOp& reshape_base(const uop::UOp& u);
// The BUFFER that holds all of u in order (u is the buffer, or reshapes and DETACHes of it), else a null UOp.
uop::UOp plain_buffer(const uop::UOp& u);

}  // namespace tg::schedule
