// Lowering a kernel AST to kernel-level UOps: loops (RANGE), index math from the ShapeTrackers, loads, reduces
// and stores.
//
// The kernel AST, as the scheduler builds it (every VIEW in one kernel has the same number of dimensions):
//   SINK(STORE(DEFINE_GLOBAL i, VIEW st, value), ...)
//   value := LOAD(DEFINE_GLOBAL j, VIEW st)                    a buffer read through a ShapeTracker
//          | CONST c  [with src VIEW st: c where st is valid, else 0]
//          | IOTA (VIEW st)                                     the position st reads: arange without a buffer
//          | ALU op (values...)                                 ADD, MUL, CAST, WHERE, ...
//          | REDUCE_AXIS(value), arg ReduceArg(op, axes)        sum or max over axes
// DEFINE_GLOBAL's dtype is a pointer to the element type; its arg is its position in the argument list.
#pragma once
#include <vector>

#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg::codegen {

struct LoweredKernel {
  uop::UOp sink;                    // SINK of STOREs over RANGEs, INDEX, LOAD, REDUCE and ALU ops
  shape::Shape full_shape;          // the loop space: per dimension, the largest size of any VIEW
  std::vector<int64_t> reduce_axes;  // dimensions that are reduced (loops inside the reduction)
  std::vector<uop::UOp> globals;     // DEFINE_GLOBALs by position
};

LoweredKernel lower(const uop::UOp& ast);

// sum_r where(idx == r, x[r], 0) (indexing by a tensor of indices) folded into the gated read x[idx]
// (fold_gather.cpp); lower() applies it.
uop::UOp fold_gathers(const uop::UOp& sink);

}  // namespace tg::codegen
