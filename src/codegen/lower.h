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

#include "codegen/opts.h"
#include "runtime/device.h"
#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg::codegen {

// A kernel that tensor cores can compute (tensor_core.cpp): one sum over axis k of x * y, x and y 16-bit floats
// of one dtype (float16 or bfloat16; each may sit under a cast to float32), x read along global axis m and not n,
// y along n and not m, one of m and n the innermost global axis. Axes are -1 where the kernel is no such sum.
struct TensorCoreFit {
  int64_t m = -1, n = -1, k = -1;
  DType dtype = dtypes::float16;
  explicit operator bool() const { return m >= 0; }
};

struct LoweredKernel {
  uop::UOp sink;                    // SINK of STOREs over RANGEs, INDEX, LOAD, REDUCE and ALU ops
  std::vector<int64_t> full_shape;  // the loop space: per dimension, the largest size of any VIEW (at the
                                    // variables' largest values for a symbolic one)
  std::vector<Dim> loop_sizes;       // the same sizes exactly: a symbolic one over its (unbound) variables
  std::vector<int64_t> reduce_axes;  // dimensions that are reduced (loops inside the reduction)
  std::vector<uop::UOp> globals;     // DEFINE_GLOBALs by position
  std::vector<Opt> opts;             // the optimizations applied (opts.h)
  std::vector<int64_t> loop_order;   // the axes' loops, outermost first (SWAP changes it); every axis once
  bool vectorized = false;           // whether a VECTOR opt made vector code (else its lanes are copies)
  TensorCoreFit tc;                  // where the device has tensor cores: whether (and how) they fit this kernel
  runtime::DeviceCaps caps;          // what the device offers (which opts are legal; grid devices: LOCAL)
  // per axis: whether some VIEW reads it through a stack of Views (a channel shuffle's pixels). Its index math
  // divides a flat index that simplifies only within the axis' size: padded past it, the addresses become per-lane
  // math
  std::vector<bool> stacked;
  // whether some loop size is symbolic: its RANGE ends at an expression over the variables, which the launch
  // passes; no opt applies to such an axis
  bool symbolic() const;
};

// A LOCAL or GROUP opt's work-item loop is a RANGE with arg kLocalAxis + axis (the axis' own RANGE loops over what
// is left); to_grid() makes it the local index of the launch grid.
constexpr int64_t kLocalAxis = int64_t{1} << 20;
// GROUP's reduction over the partial results of a group's work-items is a RANGE with arg kGroupReduceAxis + id.
constexpr int64_t kGroupReduceAxis = int64_t{2} << 20;

// Lowers with `opts` applied: an axis cut by UPCAST/UNROLL n loops over size / n, and the body is copied for the
// n values of the axis' lane (tinygrad's expander): UNROLL's copies are combined inside the REDUCE, UPCAST's
// give n STOREs (and n REDUCEs: n accumulators). VECTOR's lanes become one vector value (vectorize()) when every
// op on them has a vector form, else copies as UPCAST's (UNROLL's on a reduce axis). Throws InternalError for opts that are not legal().
LoweredKernel lower(const uop::UOp& ast, const std::vector<Opt>& opts = {}, const runtime::DeviceCaps& caps = {});

// A LOAD, CONST or IOTA of the kernel AST read at `idx` where `valid` holds (a null valid: always)
uop::UOp lower_leaf(const uop::UOp& u, const uop::UOp& idx, const uop::UOp& valid);

// tensor_core.cpp: whether tensor cores fit the (merged) kernel AST over the loop space `shape`, and the kernel
// lowered with a TC opt (opts.h) into `k`, whose loop space, reduce axes and globals lower() has filled in
TensorCoreFit tensor_core_fit(const uop::UOp& ast, const std::vector<int64_t>& shape, const std::vector<int64_t>& reduce_axes);
void lower_tensor_cores(const uop::UOp& ast, const Opt& tc, DType idx_dt, LoweredKernel& k);

// sum_r where(idx == r, x[r], 0) (indexing by a tensor of indices) folded into the gated read x[idx]
// (fold_gather.cpp); lower() applies it.
uop::UOp fold_gathers(const uop::UOp& sink);

// The values that depend on `lane` (0 .. n-1) as float32 vectors of n elements: contiguous loads and stores as
// vector ones, other lane-dependent loads gathered, stores scattered (vectorize.cpp). With `reduce_lane` the lane
// belongs to a reduce axis: each REDUCE over it keeps a vector accumulator, combined across its lanes after the loop.
// A null UOp when some lane-dependent op has no vector form (float32 ADD, MUL, NEG, RECIPROCAL, EXP2, LOG2, SQRT, SIN, MAX, WHERE
// and comparisons, casts to float32, loads of numeric types and float32 REDUCEs have one).
uop::UOp vectorize(const uop::UOp& sink, const uop::UOp& lane, int64_t n, bool reduce_lane);

}  // namespace tg::codegen
