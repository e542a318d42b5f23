// The scheduler: a tensor-level graph in, an ordered list of kernels (ScheduleItems) out.
//
// Grouping rules (GUIDE section 2):
//  - realized: the requested outputs, CONTIGUOUS, both sides of a COPY or an ALLREDUCE, and every reduce that
//    cannot fuse;
//  - elementwise ops and movement ops fuse into whatever kernel reads them (movement ops become VIEWs);
//  - a reduce fuses into its consumer when the path to the consumer's output is a single chain of elementwise
//    ops and reshapes (nothing expands it or reads it twice), and every reduce fused into one kernel has the same
//    input shape and axes.
// Outputs that are views of a buffer or of a constant need no kernel.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "uop/sint.h"
#include "uop/uop.h"

namespace tg::schedule {

struct ScheduleItem {
  // Allreduce: [0] <- [1] combined over the ranks of an MPI job (tg::mpi), on the host
  enum class Kind { Kernel, Copy, Allreduce };
  Kind kind = Kind::Kernel;
  uop::UOp ast;                // Kernel: SINK(STORE(...)), the AST codegen lowers; Copy: null; Allreduce: an
                               // ALLREDUCE without sources, its arg the op
  std::vector<uop::UOp> bufs;  // BUFFER nodes: [0] is written, the rest are read (DEFINE_GLOBAL order)
};

struct Schedule {
  std::vector<ScheduleItem> items;  // in an order that runs producers first
  // every realized node and the view of its new buffer that replaces it in the graphs of live tensors
  std::vector<std::pair<uop::UOp, uop::UOp>> becomes;
  // the bound values of the variables its kernels take (the ASTs hold the variables, never their values)
  uop::VarVals var_vals;
};

// The schedule that realizes `outputs` (tensor-level nodes).
Schedule create_schedule(const std::vector<uop::UOp>& outputs);

// Whether `u` needs no kernel to be read: a chain of movement ops over a BUFFER or a CONST.
bool is_realized_form(const uop::UOp& u);

// "kernel", "copy", "allreduce sum" ...
std::string item_kind(const ScheduleItem& it);
// a BUFFER node as the schedule's printouts name it: "buffer <id> (<elements>):<dtype>"
std::string buffer_str(const uop::UOp& b);
// DEBUG=3: the schedule, one block per item.
std::string print_schedule(const Schedule& s);

}  // namespace tg::schedule
