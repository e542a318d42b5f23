// Building one kernel's AST: the graph below a realized node, with movement ops pushed into VIEWs.
#pragma once
#include <unordered_map>
#include <vector>

#include "schedule/grouping.h"
#include "shape/shapetracker.h"
#include "uop/sint.h"

namespace tg::schedule {

struct KernelAST {
  uop::UOp ast;                // SINK(STORE(DEFINE_GLOBAL 0, VIEW, value))
  std::vector<uop::UOp> bufs;  // BUFFER nodes by DEFINE_GLOBAL index; bufs[0] is `out`
  uop::VarVals var_vals;       // the values of the variables its VIEWs hold (unbound in the AST)
};

// The view through which `target`, movement ops over a BUFFER, reads that buffer (variables unbound into *vals).
shape::ShapeTracker target_view(const uop::UOp& target, uop::VarVals* vals);

// The kernel that computes `root` into `out` (an ASSIGN: into its target's buffer, through the target's view; a cat's
// piece: into the cat's buffer, through its slice). Its VIEWs have root's rank, plus one axis per dim that a row
// reduce of root (Grouping::row_reduces) reduces: that reduce's input is read with those dims on its own axes, and
// is size 1 there everywhere else.
// `buffers` maps every realized node scheduled before this one (and only those) to its BUFFER.
KernelAST build_kernel(const uop::UOp& root, const uop::UOp& out, const Grouping& g,
                       const std::unordered_map<const uop::UOpNode*, uop::UOp>& buffers);

}  // namespace tg::schedule
