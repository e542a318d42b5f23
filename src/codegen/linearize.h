// Linearizing: the lowered kernel graph as an ordered list of uops, with loops opened (RANGE) and closed (END).
//
// Order: the global loops (dimensions that are not reduced) outermost first; per REDUCE, inside the global loops it
// depends on (a row's max before the loop over the row's outputs), its loop-invariant inputs, a DEFINE_REG for its
// accumulator, its loops, the values inside them, the REDUCE itself (the accumulator update), and the ENDs; then
// what uses the reduced values and the STOREs; then the ENDs of the global loops.
#pragma once
#include <vector>

#include "codegen/lower.h"

namespace tg::codegen {

std::vector<uop::UOp> linearize(const LoweredKernel& k);

// One line per uop: "  3 ALU     float32  [1, 2]  ADD", as tinygrad prints them.
std::string print_uops(const std::vector<uop::UOp>& uops);

}  // namespace tg::codegen
