// The C renderer: linear uops -> a C function, plus the entry point every kernel has (see runtime::Program).
#pragma once
#include <string>
#include <vector>

#include "uop/uop.h"

namespace tg::renderer {

struct RenderedKernel {
  std::string name;    // the kernel function: void name(float* restrict data0, const float* restrict data1, ...)
  std::string entry;   // name + "_call": void entry(void* const* bufs, const int64_t* vars)
  std::string source;  // both functions, self-contained C11
};

// `parallel`, when not null, is the outermost loop (a RANGE in uops): it runs over [core_start, core_end), which the
// entry reads from vars[0] and vars[1] (the whole loop when vars is null), so that threads can each run a part of it.
RenderedKernel render_c(const std::string& name, const std::vector<uop::UOp>& uops, const uop::UOp* parallel = nullptr);

// A constant as a C literal of its dtype ("5.0f", "-3", "7ULL", "__builtin_inff()").
std::string c_literal(const uop::UOp& c);

}  // namespace tg::renderer
