// SPEC=1: each stage's graph checked against the rules of that stage (tinygrad's SPEC): which ops may appear, and
// the dtypes and sources of the ALU ops. A broken rule is a bug of tinygrad.cpp, reported as a tg::InternalError
// naming the stage, the node and the rule, before the graph goes further.
#pragma once
#include <string>
#include <vector>

#include "uop/uop.h"

namespace tg::uop {

enum class SpecStage {
  Tensor,  // the tensor-level graph handed to the scheduler
  Kernel,  // a kernel's AST (SINK of STOREs over VIEWs), as the scheduler made it
  Linear,  // a kernel's linearized uops, as the renderer gets them
};

// "" when every node follows the stage's rules; else the first broken rule, with the node
std::string spec_violation(const std::vector<UOp>& nodes, SpecStage stage);

// With SPEC>=1, raises InternalError when spec_violation finds something; otherwise does nothing.
void check_spec(const std::vector<UOp>& nodes, SpecStage stage);
inline void check_spec(const UOp& root, SpecStage stage) {
  if (root) check_spec(root.toposort(), stage);
}

}  // namespace tg::uop
