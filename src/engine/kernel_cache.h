// From a kernel AST to a loaded program: lower, linearize, render, compile (through the caches), load.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "renderer/cstyle.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "uop/uop.h"

namespace tg::engine {

struct CompiledKernel {
  std::string name;                   // tinygrad's style: E_4_3 (elementwise), r_3_4 (with a reduction)
  std::vector<uop::UOp> uops;         // the linearized uops
  renderer::RenderedKernel rendered;  // the source
  std::shared_ptr<runtime::Program> program;
  size_t n_buffers = 0;
  std::string opts;                   // the optimizations applied, "UPCAST(1,16) UNROLL(2,4)" (codegen/opts.h)
  int64_t ops = 0;  // ALU ops per launch, counted over the loop sizes (at the variables' largest values)
  uop::UOp ops_expr;  // with symbolic loop sizes: the count over `vars` (evaluated at each launch), else null
  int64_t moves = 0;  // elements loaded from and stored to global memory per launch, counted the same way
  uop::UOp moves_expr;
  // per buffer argument: the bytes loaded from and stored to it per launch, counted the same way (null expressions
  // where constant). A launch counts at most the buffer's size for each (a matmul reads its operands many times
  // over), so a buffer read only where an index points (a gather folded into its load: an embedding's rows, a
  // mixture's chosen experts) counts what is read, not the whole buffer.
  std::vector<int64_t> buffer_bytes;
  std::vector<uop::UOp> buffer_bytes_expr;
  // trip count of the outermost loop when threads may split it (vars[0], vars[1] bound it), else 0; when that
  // count is symbolic, its expression over `vars` (evaluated at each launch)
  int64_t parallel_size = 0;
  uop::UOp parallel_end;
  // the variables of symbolic loop sizes, by name: their values follow vars[0], vars[1] at a launch
  std::vector<std::string> vars;
  bool grid = false;          // a grid device's kernel: launched once over `dims`
  runtime::LaunchDims dims;
  // a grid dimension of symbolic size: its work-items as an expression over `vars` (evaluated at each launch; the
  // largest in dims.global), else null
  std::array<uop::UOp, 3> global_expr;
};

// Compiled once per (AST, device, NOOPT and RANDOM_OPTS settings) in this process; the source is also cached in
// memory and on disk by the device. The opts are choose_opts()'s, none under NOOPT=1, and under RANDOM_OPTS=seed
// (seed > 0; for tests) a random legal list per kernel.
// BEAM=n (n > 0) searches the opts by timing candidates on `bufs` (the launch's buffers; beam.h) when they are given.
std::shared_ptr<const CompiledKernel> get_kernel(const uop::UOp& ast, runtime::Device& device,
                                                 const std::vector<runtime::Buffer*>* bufs = nullptr);

// Many kernels at once (a schedule's): those not compiled yet are compiled together, per device
// (Device::programs). The results in the order of the requests.
struct KernelRequest {
  uop::UOp ast;
  runtime::Device* device;
  const std::vector<runtime::Buffer*>* bufs = nullptr;
};
std::vector<std::shared_ptr<const CompiledKernel>> get_kernels(const std::vector<KernelRequest>& requests);

// A lowered kernel (opts applied) linearized and rendered under `name` for a device with `caps` (on a grid
// device its global loops become the launch grid; `device` names it in errors), not compiled (no program).
std::shared_ptr<CompiledKernel> render_kernel(const codegen::LoweredKernel& lowered, const std::string& name,
                                              const runtime::DeviceCaps& caps, const std::string& device);
// The same rendered for `device`, and printed under DEBUG (>= 4 the source, >= 5 the uops), not compiled.
std::shared_ptr<CompiledKernel> plan_kernel(runtime::Device& device, const codegen::LoweredKernel& lowered, const std::string& name);
// A lowered kernel (opts applied) compiled and loaded under `name`, uncached.
std::shared_ptr<CompiledKernel> build_kernel(runtime::Device& device, const codegen::LoweredKernel& lowered, const std::string& name);

}  // namespace tg::engine
