// Grid devices (OpenCL, CUDA): a lowered kernel's global loops become the hardware indices of a launch grid.
#pragma once
#include "codegen/lower.h"
#include "runtime/device.h"

namespace tg::codegen {

// Replaces the global loops (RANGEs of axes that are not reduced) of `k` by SPECIAL indices and returns the grid
// they span: the innermost loop is grid dimension 0 (neighbouring work-items read neighbouring memory), the next
// dimension 1; a kernel with more than three global loops gets its outer ones merged into dimension 2, each
// recovered with a division and a modulo. The work-groups are left to the driver (local sizes 0). Throws
// CompileError when a dimension exceeds the device's grid (at the variables' largest values).
// A global loop of symbolic size becomes a grid dimension when `symbolic_global` is given (and no modulo needs its
// size): that dimension's work-items are then an expression over the kernel's variables, put in (*symbolic_global)[d]
// to evaluate at each launch (its largest value in the returned dims); otherwise it stays a loop in each work-item.
runtime::LaunchDims to_grid(LoweredKernel& k, const runtime::DeviceCaps& caps, const std::string& device,
                            std::array<uop::UOp, 3>* symbolic_global = nullptr);

}  // namespace tg::codegen
