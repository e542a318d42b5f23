#include "engine/render_check.h"

#include <random>

#include "codegen/opts.h"
#include "engine/kernel_cache.h"
#include "runtime/nvrtc.h"
#include "tg/context.h"

namespace tg::engine {

// a grid of 2^31-1 x 65535 x 65535 blocks of up to 1024 threads (64 in z), 48 KiB of shared memory per block without
// opting in to more, no vector arithmetic
runtime::DeviceCaps cuda_gpu_caps() {
  runtime::DeviceCaps c;
  c.dialect = "CUDA";
  c.grid = c.gpu = true;
  c.max_groups = {INT32_MAX, 65535, 65535};
  c.max_global = {INT32_MAX, 65535 * 1024, 65535 * 64};
  c.max_local = {1024, 1024, 64};
  c.max_local_size = 1024;
  c.local_memory = 48 * 1024;
  c.max_vector = 1;
  c.tensor_cores = "mma";  // sm_80 and sm_90 both have mma.sync m16n8k16
  return c;
}

void check_render(const uop::UOp& ast) {
  std::string target = getenv_str("RENDER_CHECK");
  if (target.empty()) return;
  if (target != "CUDA") throw ArgumentError("RENDER_CHECK", "unknown target " + target + " (CUDA is the one there is)");
  static const runtime::DeviceCaps caps = cuda_gpu_caps();
  static runtime::NvrtcCompiler sm80("sm_80"), sm90("sm_90");
  codegen::LoweredKernel lowered = codegen::lower(ast, {}, caps);
  std::vector<codegen::Opt> opts;
  if (int64_t seed = getenv_int("RANDOM_OPTS"); seed > 0) {
    std::mt19937 rng(static_cast<uint32_t>(seed) ^ static_cast<uint32_t>(ast.hash()));
    opts = codegen::random_opts(lowered, rng);
  } else {
    opts = codegen::choose_opts(lowered);  // none under NOOPT
  }
  if (!opts.empty()) lowered = codegen::lower(ast, opts, caps);
  std::string src = render_kernel(lowered, "render_check", caps, "CUDA")->rendered.source;
  for (runtime::NvrtcCompiler* c : {&sm80, &sm90}) c->compile_cached(src);
}

}  // namespace tg::engine
