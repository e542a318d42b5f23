// CUDA C++ from the renderer, compiled by NVRTC (no GPU needed): hand-written sources, NVRTC's errors, and kernels
// of every kind through RENDER_CHECK=CUDA. Skipped where NVRTC is missing. (The ctest entries cuda_compile.* run
// the value suites with the check on.)
#include <gtest/gtest.h>

#include <cmath>

#include "engine/kernel_cache.h"
#include "engine/render_check.h"
#include "runtime/device.h"
#include "runtime/nvrtc.h"
#include "schedule/schedule.h"
#include "tg/tg.h"

using namespace tg;

#define NEED_NVRTC() \
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here"

TEST(CudaRender, NvrtcCompilesForAGpuAndForPtx) {
  NEED_NVRTC();
  const char* src = "extern \"C\" __global__ void add(float* out, const float* a) { out[threadIdx.x] = a[threadIdx.x] + 1.0f; }";
  std::string cubin = runtime::nvrtc_compile(src, "sm_90");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");  // a cubin is an ELF file
  std::string ptx = runtime::nvrtc_compile(src, "compute_80");
  EXPECT_NE(ptx.find(".entry add"), std::string::npos) << ptx;
  EXPECT_FALSE(runtime::nvrtc_version().empty());
}

// DEBUG=6 on CUDA: PTX is shown as it is; a cubin as nvdisasm's SASS (skipped where the toolkit has no nvdisasm,
// after checking that the line printed instead says so)
TEST(CudaRender, Debug6ShowsPtxAndTheSassOfACubin) {
  NEED_NVRTC();
  const char* src = "extern \"C\" __global__ void add(float* out, const float* a) { out[threadIdx.x] = a[threadIdx.x] + 1.0f; }";
  runtime::NvrtcCompiler gpu("sm_90");
  std::string ptx = runtime::nvrtc_compile(src, "compute_80");
  EXPECT_EQ(gpu.disassemble(ptx), ptx);
  std::string sass = gpu.disassemble(runtime::nvrtc_compile(src, "sm_90"));
  if (sass.find("not installed") != std::string::npos) {
    EXPECT_NE(sass.find("nvdisasm"), std::string::npos) << sass;
    GTEST_SKIP() << "no nvdisasm here: " << sass;
  }
  EXPECT_NE(sass.find("add"), std::string::npos) << sass;
  EXPECT_NE(sass.find("EXIT"), std::string::npos) << sass;  // every kernel's last instruction
  EXPECT_NE(sass.find("FADD"), std::string::npos) << sass;
}

TEST(CudaRender, ARejectedKernelNamesTheLogAndTheSource) {
  NEED_NVRTC();
  std::string src = "extern \"C\" __global__ void broken(float* out) { out[0] = undefined_name; }";
  try {
    runtime::nvrtc_compile(src, "sm_80");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;  // the log names it, and the source is there
    EXPECT_NE(what.find("sm_80"), std::string::npos) << what;
  }
}

namespace {

// The CUDA source of t's last kernel, lowered for a CUDA GPU with `opts`
std::string cuda_source(const Tensor& t, const std::vector<codegen::Opt>& opts = {}) {
  runtime::DeviceCaps caps = engine::cuda_gpu_caps();
  schedule::Schedule s = schedule::create_schedule({t.uop()});
  codegen::LoweredKernel k = codegen::lower(s.items.back().ast, opts, caps);
  return engine::render_kernel(k, "k", caps, "CUDA")->rendered.source;
}

}  // namespace

// The dialect's pieces, each in a kernel NVRTC accepts for both architectures: grid indices, a GROUP's shared
// array and barrier with UPCAST copies, 16-bit floats as bits, int64 and unsigned math, bit casts, NaN and inf
// literals, bools, a symbolic size as a parameter
TEST(CudaRender, EveryKindOfKernelCompiles) {
  NEED_NVRTC();
  using codegen::OptOp;
  Tensor x = Tensor::randn({24, 96}).realize();
  std::vector<std::pair<std::string, std::string>> kernels = {
      {"grid", cuda_source(x * 2 + 1)},
      {"group", cuda_source(x.sum(1), {{OptOp::GROUP, 1, 16}, {OptOp::UPCAST, 0, 4}, {OptOp::LOCAL, 0, 2}})},
      {"half", cuda_source((x.cast(dtypes::float16) * 3).cast(dtypes::bfloat16))},
      {"int64", cuda_source((x.cast(dtypes::int64) * 7 + (int64_t{1} << 40)) % 5 + x.cast(dtypes::uint32).cast(dtypes::int64))},
      {"bitcast", cuda_source(x.bitcast(dtypes::int32) >> 3)},
      {"special", cuda_source((x > 0).where((x.log() + x.exp2().sqrt() + x.sin()).maximum(Tensor(-INFINITY)), Tensor(NAN)))},
      {"bool", cuda_source((x > 0) & (x < 1))},
  };
  Variable n("n", 1, 24);
  kernels.push_back({"symbolic", cuda_source(x.shrink({{0, n.bind(5)}, {0, 96}}) + 1)});
  for (const auto& [what, src] : kernels) {
    EXPECT_NE(src.find("__global__"), std::string::npos) << what;
    for (const char* arch : {"sm_80", "sm_90"}) EXPECT_NO_THROW(runtime::nvrtc_compile(src, arch)) << what << " for " << arch << "\n" << src;
  }
  EXPECT_NE(kernels[1].second.find("__syncthreads()"), std::string::npos) << kernels[1].second;
  EXPECT_NE(kernels[1].second.find("__shared__"), std::string::npos) << kernels[1].second;
  EXPECT_NE(kernels[0].second.find("blockIdx.x"), std::string::npos) << kernels[0].second;
  EXPECT_NE(kernels.back().second.find("v_n"), std::string::npos) << kernels.back().second;
}

// Tensor-core kernels (the TC opt): every configuration, float16 and bfloat16, with a fused epilogue, compile, and
// their mma instruction is there. Every configuration for sm_80, the first also for sm_90: the PTX is the same, and
// each NVRTC run of such a kernel takes seconds
TEST(CudaRender, TensorCoreKernelsCompile) {
  NEED_NVRTC();
#if defined(__SANITIZE_ADDRESS__)
  // NVRTC's compiles (uninstrumented) are nearly all of this test's minute there; the Release pass runs it
  GTEST_SKIP() << "the sanitized build leaves the tensor-core compiles to the Release build";
#endif
  runtime::DeviceCaps caps = engine::cuda_gpu_caps();
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    Tensor a = Tensor::randn({128, 64}).cast(dt).realize(), w = Tensor::randn({64, 256}).cast(dt).realize();
    Tensor out = (a.matmul(w) + 1).relu();
    schedule::Schedule s = schedule::create_schedule({out.uop()});
    codegen::LoweredKernel plain = codegen::lower(s.items.back().ast, {}, caps);
    ASSERT_TRUE(plain.tc) << dt.name();
    std::vector<codegen::Opt> configs = codegen::tc_opts(plain);
    ASSERT_GE(configs.size(), 8u);
    EXPECT_EQ(codegen::choose_opts(plain), std::vector<codegen::Opt>{configs[0]});
    for (const codegen::Opt& tc : configs) {
      std::string src = engine::render_kernel(codegen::lower(s.items.back().ast, {tc}, caps), "k", caps, "CUDA")->rendered.source;
      EXPECT_NE(src.find(dt == dtypes::float16 ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" : ".f32.bf16.bf16.f32"), std::string::npos) << src;
      for (const char* arch : {"sm_80", "sm_90"}) {
        if (arch == std::string("sm_90") && !(tc == configs[0])) continue;
        EXPECT_NO_THROW(runtime::nvrtc_compile(src, arch)) << codegen::opts_str({tc}) << " for " << arch << "\n" << src;
      }
    }
  }
  // sizes the tiles do not divide: gated reads and stores
  Tensor a = Tensor::randn({20, 30}).cast(dtypes::float16).realize(), w = Tensor::randn({30, 24}).cast(dtypes::float16).realize();
  codegen::LoweredKernel odd = codegen::lower(schedule::create_schedule({a.matmul(w).uop()}).items.back().ast, {}, caps);
  std::vector<codegen::Opt> padded = codegen::choose_opts(odd);
  ASSERT_EQ(padded.size(), 1u);
  ASSERT_EQ(padded[0].op, codegen::OptOp::TC);
  std::string src = engine::render_kernel(codegen::lower(schedule::create_schedule({a.matmul(w).uop()}).items.back().ast, padded, caps), "k", caps, "CUDA")->rendered.source;
  EXPECT_NE(src.find("if ("), std::string::npos) << src;  // the stores past the ends are gated
  for (const char* arch : {"sm_80", "sm_90"}) EXPECT_NO_THROW(runtime::nvrtc_compile(src, arch)) << arch << "\n" << src;
  // float32 matmuls stay exact: tensor cores do not fit them
  Tensor f = Tensor::randn({64, 64}).realize();
  EXPECT_FALSE(codegen::lower(schedule::create_schedule({f.matmul(f).uop()}).items.back().ast, {}, caps).tc);
}

// RENDER_CHECK=CUDA compiles each new kernel for CUDA beside the device's own, and a kernel NVRTC rejects would raise
TEST(CudaRender, TheRenderCheckCompilesEveryNewKernel) {
  NEED_NVRTC();
  Context check{{"RENDER_CHECK", "CUDA"}, {"DISABLE_COMPILER_CACHE", 1}};
  int64_t before = runtime::compile_stats().compiled;
  Tensor y = (Tensor::arange(0, 1000, 1, dtypes::float32) * 0.3712f).sin().sum().realize();
  double want = 0;
  for (int i = 0; i < 1000; i++) want += std::sin(static_cast<double>(static_cast<float>(i) * 0.3712f));
  EXPECT_NEAR(y.item<float>(), want, 1e-3);  // the CPU computed it; the check only compiled
  // the CPU's kernels and, per kernel, NVRTC for sm_80 and sm_90
  EXPECT_GE(runtime::compile_stats().compiled - before, 3);
  Context other{{"RENDER_CHECK", "METAL"}};
  EXPECT_THROW((Tensor::arange(0, 7, 1, dtypes::float32) * 3.5f).realize(), ArgumentError);
}

// A CUDA grid has at most 65535 blocks in y and z: an outer dimension with more (beautiful_mnist's evaluation
// convolution: 10000 images x 32 channels) moves out to x, with the kernel's work-groups or with the driver's
TEST(CudaRender, AGridPastTheBlockLimitsMovesItsOuterAxesIntoX) {
  using codegen::OptOp;
  runtime::DeviceCaps caps = engine::cuda_gpu_caps();
  Tensor x = Tensor::empty({100000, 24, 3, 8}).permute({0, 2, 1, 3});  // three axes that do not merge
  for (const std::vector<codegen::Opt>& opts : std::vector<std::vector<codegen::Opt>>{{}, {{OptOp::LOCAL, 2, 8}}}) {
    schedule::Schedule s = schedule::create_schedule({(x * 2).sum(3).uop()});
    codegen::LoweredKernel k = codegen::lower(s.items.back().ast, opts, caps);
    std::shared_ptr<engine::CompiledKernel> c = engine::render_kernel(k, "k", caps, "CUDA");
    int64_t items = 1;
    for (int d = 0; d < 3; d++) {
      int64_t per_group = opts.empty() ? 1 : c->dims.local[d];  // without work-groups: the worst case, blocks of one
      EXPECT_LE(c->dims.global[d] / per_group, caps.max_groups[d]) << "dimension " << d << " with " << opts.size() << " opts";
      items *= c->dims.global[d];
    }
    EXPECT_EQ(items, 100000 * 3 * 24) << "every output once";
    EXPECT_GE(c->dims.global[0], 100000) << "the outer axis went to x";
  }
}

// A GPU that NVRTC knows gets a cubin for itself; one newer than NVRTC gets PTX for the newest architecture NVRTC
// knows, which the driver compiles when it loads the module
TEST(CudaRender, AGpuNewerThanNvrtcGetsPtxForTheNewestArchitectureNvrtcKnows) {
  NEED_NVRTC();
  EXPECT_EQ(runtime::nvrtc_target("sm_90"), "sm_90");
  std::string target = runtime::nvrtc_target("sm_990");
  ASSERT_EQ(target.rfind("compute_", 0), 0u) << target;
  EXPECT_GE(std::stoi(target.substr(8)), 90) << target;
  runtime::NvrtcCompiler future("sm_990");
  std::string ptx = future.compile("extern \"C\" __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }");
  EXPECT_NE(ptx.find(".entry k"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(future.cache_key().find(target), std::string::npos) << future.cache_key();
}
