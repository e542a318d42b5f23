// Kernels over symbolic sizes (symbolic shapes, step 2): ASTs built by hand whose VIEWs have a dimension n (an
// unbound Variable), lowered once, compiled once and launched for every n in a range with n's value passed at the
// launch. Results against plain loops; buffers are allocated at n's largest value and what lies past n must stay
// untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include <unistd.h>

#include "codegen/opts.h"
#include "engine/kernel_cache.h"
#include "engine/realize.h"
#include "runtime/buffer.h"
#include "runtime/thread_pool.h"
#include "shape/view_arg.h"
#include "tg/context.h"
#include "uop/reduce_arg.h"

using namespace tg;
using shape::ShapeTracker;
using uop::Ops;
using uop::UOp;

namespace {

constexpr int64_t kMax = 24;
const Variable kN("n", 1, kMax);

UOp global(int64_t i) { return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, uop::Arg(i)); }
UOp load(int64_t i, const ShapeTracker& st) { return UOp::make(Ops::LOAD, dtypes::float32, {global(i), shape::view_uop(st)}); }
UOp store(const ShapeTracker& st, const UOp& v) {
  return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {global(0), shape::view_uop(st), v})});
}

// Runs the kernel of `ast` for n: out has out_size floats (set to -1 first), inputs as given.
std::vector<float> run(const std::shared_ptr<const engine::CompiledKernel>& k, int64_t n, size_t out_size,
                       const std::vector<std::vector<float>>& inputs, const std::string& device = "CPU") {
  runtime::Device& cpu = runtime::get_device(device);
  std::vector<std::unique_ptr<runtime::Buffer>> bufs;
  std::vector<float> out(out_size, -1.0f);
  bufs.push_back(std::make_unique<runtime::Buffer>(cpu, out_size, dtypes::float32));
  bufs.back()->copyin(out.data(), out_size * 4);
  for (const auto& in : inputs) {
    bufs.push_back(std::make_unique<runtime::Buffer>(cpu, in.size(), dtypes::float32));
    bufs.back()->copyin(in.data(), in.size() * 4);
  }
  std::vector<runtime::Buffer*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.get());
  engine::run_program(*k, ptrs, nullptr, {n});
  bufs[0]->copyout(out.data(), out_size * 4);
  return out;
}

std::vector<float> iota(size_t count, float start = 1) {
  std::vector<float> v(count);
  std::iota(v.begin(), v.end(), start);
  return v;
}

void elementwise_over_n(const std::string& dev) {
  Dim n = kN.unbound();
  ShapeTracker st = ShapeTracker::from_shape({n});
  UOp ast = store(st, load(1, st) * UOp::const_(dtypes::float32, 2.0));
  auto k = engine::get_kernel(ast, runtime::get_device(dev));
  EXPECT_EQ(k->vars, std::vector<std::string>{"n"});
  EXPECT_NE(k->rendered.source.find("v_n"), std::string::npos) << k->rendered.source;
  std::vector<float> a = iota(kMax);
  for (int64_t v = 1; v <= kMax; v += 3) {
    std::vector<float> got = run(k, v, kMax, {a}, dev);
    for (int64_t i = 0; i < kMax; i++) EXPECT_EQ(got[i], i < v ? 2 * a[i] : -1.0f) << dev << " n=" << v << " i=" << i;
  }
  EXPECT_EQ(engine::get_kernel(ast, runtime::get_device(dev)), k);  // one kernel for every n
}

void sum_over_n(const std::string& dev) {
  // out(4, 1) = sum_j a[i, j] for j < n, a stored (4, kMax): the view is the max layout shrunk to n columns
  Dim n = kN.unbound();
  ShapeTracker in = ShapeTracker::from_shape({4, kMax}).shrink({{0, 4}, {0, n}});
  UOp sum = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {load(1, in)}, uop::reduce_arg(Ops::ADD, {1}));
  UOp ast = store(ShapeTracker::from_shape({4, 1}), sum);
  auto k = engine::get_kernel(ast, runtime::get_device(dev));
  std::vector<float> a = iota(4 * kMax);
  for (int64_t v = 1; v <= kMax; v++) {
    std::vector<float> got = run(k, v, 4, {a}, dev);
    for (int i = 0; i < 4; i++) {
      float want = 0;
      for (int64_t j = 0; j < v; j++) want += a[i * kMax + j];
      EXPECT_EQ(got[i], want) << dev << " n=" << v << " row " << i;
    }
  }
}

void outer_n_with_broadcast_and_padding(const std::string& dev) {
  // out(n, 8) = a(n, 8) + b(8) + c(n, 6) padded by a column on each side: rows up to n, a broadcast row, a mask
  Dim n = kN.unbound();
  ShapeTracker out = ShapeTracker::from_shape({n, 8});
  ShapeTracker row = ShapeTracker::from_shape({1, 8}).expand({n, 8});
  ShapeTracker padded = ShapeTracker::from_shape({kMax, 6}).shrink({{0, n}, {0, 6}}).pad({{0, 0}, {1, 1}});
  UOp ast = store(out, load(1, out) + load(2, row) + load(3, padded));
  auto k = engine::get_kernel(ast, runtime::get_device(dev));
  std::vector<float> a = iota(kMax * 8), b = iota(8, 100), c = iota(kMax * 6, 1000);
  for (int64_t v = 1; v <= kMax; v += 2) {
    std::vector<float> got = run(k, v, kMax * 8, {a, b, c}, dev);
    for (int64_t i = 0; i < kMax; i++)
      for (int j = 0; j < 8; j++) {
        float want = i < v ? a[i * 8 + j] + b[j] + (j >= 1 && j < 7 ? c[i * 6 + j - 1] : 0.0f) : -1.0f;
        EXPECT_EQ(got[i * 8 + j], want) << dev << " n=" << v << " at " << i << "," << j;
      }
  }
}

}  // namespace

TEST(SymbolicKernels, ElementwiseOverN) { elementwise_over_n("CPU"); }
TEST(SymbolicKernels, SumOverASymbolicReduceAxis) { sum_over_n("CPU"); }
TEST(SymbolicKernels, SymbolicOuterAxisWithABroadcastAndPadding) { outer_n_with_broadcast_and_padding("CPU"); }

// On a grid device a symbolic axis stays a loop inside each work-item; the variables are kernel arguments
TEST(SymbolicKernels, OnOpenCL) {
  try {
    runtime::get_device("OPENCL");
  } catch (const DeviceError& e) {
    GTEST_SKIP() << e.what();
  }
  elementwise_over_n("OPENCL");
  sum_over_n("OPENCL");
  outer_n_with_broadcast_and_padding("OPENCL");
}

TEST(SymbolicKernels, ASymbolicOuterLoopIsSplitBetweenThreads) {
  // out(n, 4096) = a + 1 for n up to 64: the outer loop's trip count comes from n at each launch
  Variable big("rows", 0, 64);
  ShapeTracker st = ShapeTracker::from_shape({big.unbound(), 4096});
  UOp ast = store(st, load(1, st) + UOp::const_(dtypes::float32, 1.0));
  auto k = engine::get_kernel(ast, runtime::get_device("CPU"));
  ASSERT_TRUE(k->parallel_end);
  runtime::Device& cpu = runtime::get_device("CPU");
  runtime::Buffer out(cpu, 64 * 4096, dtypes::float32), in(cpu, 64 * 4096, dtypes::float32);
  std::vector<float> a = iota(64 * 4096), got(64 * 4096);
  in.copyin(a.data(), a.size() * 4);
  for (int64_t v : {0, 1, 4, 7, 33, 64}) {
    std::vector<float> init(64 * 4096, -1.0f);
    out.copyin(init.data(), init.size() * 4);
    size_t threads = engine::run_program(*k, {&out, &in}, nullptr, {v});
    if (v == 64 && runtime::cpu_threads() > 1) {
      EXPECT_GT(threads, 1u);
    }
    // 4 rows are 32768 elements moved and about as many ops, under the threshold, though the buffers hold 2 MB:
    // the work decides, not the buffers' sizes (a KV cache's write of one position)
    if (v == 4) {
      EXPECT_EQ(threads, 1u);
    }
    out.copyout(got.data(), got.size() * 4);
    for (size_t i = 0; i < got.size(); i++)
      if (got[i] != (static_cast<int64_t>(i) < v * 4096 ? a[i] + 1 : -1.0f)) {
        ADD_FAILURE() << "rows=" << v << " at " << i << ": " << got[i];
        break;
      }
  }
}

// out(n, 1) = sum_k a[i, k] * b[k] over 64 k: a matrix-vector product over n rows
UOp matvec_over_n() {
  Dim n = kN.unbound();
  ShapeTracker a = ShapeTracker::from_shape({n, 64}), b = ShapeTracker::from_shape({1, 64}).expand({n, 64});
  UOp prod = load(1, a) * load(2, b);
  return store(ShapeTracker::from_shape({n, 1}), UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {prod}, uop::reduce_arg(Ops::ADD, {1})));
}

// k (matvec_over_n's kernel) against a plain loop at several n, and no opt of it on the rows
void check_matvec(const std::shared_ptr<const engine::CompiledKernel>& k) {
  EXPECT_EQ(k->opts.find("(0,"), std::string::npos) << k->opts;
  std::vector<float> av = iota(kMax * 64), bv = iota(64, -20);
  for (int64_t v = 1; v <= kMax; v += 5) {
    std::vector<float> got = run(k, v, kMax, {av, bv});
    for (int64_t i = 0; i < kMax; i++) {
      double want = 0;
      for (int c = 0; c < 64; c++) want += double(av[i * 64 + c]) * bv[c];
      if (i < v) EXPECT_NEAR(got[i], want, 1e-6 * std::fabs(want) + 1e-3) << k->opts << " n=" << v << " row " << i;
      else EXPECT_EQ(got[i], -1.0f);
    }
  }
}

TEST(SymbolicKernels, TheHeuristicsOptsOnConcreteAxesStay) {
  // the heuristic's vector along k stays, its opts on the rows do not apply; values against a plain loop
  auto k = engine::get_kernel(matvec_over_n(), runtime::get_device("CPU"));
  EXPECT_NE(k->opts.find("VECTOR(1,"), std::string::npos) << k->opts;
  check_matvec(k);
}

// legal() refuses every opt on a symbolic axis, so RANDOM_OPTS and BEAM search the concrete ones (BEAM times the
// candidates at the middle of n's range)
TEST(SymbolicKernels, RandomOptsAndBeamSearchTheConcreteAxes) {
  using codegen::OptOp;
  UOp ast = matvec_over_n();
  codegen::LoweredKernel plain = codegen::lower(ast);
  EXPECT_FALSE(codegen::legal(plain, {{OptOp::UPCAST, 0, 2}}));
  EXPECT_FALSE(codegen::legal(plain, {{OptOp::PADTO, 0, 32}}));
  EXPECT_TRUE(codegen::legal(plain, {{OptOp::UNROLL, 1, 4}}));
  bool any = false;
  for (int seed = 1; seed <= 8; seed++) {
    Context random{{"RANDOM_OPTS", seed}};
    auto k = engine::get_kernel(ast, runtime::get_device("CPU"));
    any = any || !k->opts.empty();
    check_matvec(k);
  }
  EXPECT_TRUE(any) << "RANDOM_OPTS picked no opt in 8 seeds";
  Context beam{{"BEAM", 1}, {"BEAM_MIN_US", 0}, {"BEAM_BUDGET", 5},
               {"XDG_CACHE_HOME", ::testing::TempDir() + "symbolic_beam_" + std::to_string(::getpid())}};
  runtime::Device& cpu = runtime::get_device("CPU");
  runtime::Buffer out(cpu, kMax, dtypes::float32), a(cpu, kMax * 64, dtypes::float32), b(cpu, 64, dtypes::float32);
  std::vector<runtime::Buffer*> bufs{&out, &a, &b};
  check_matvec(engine::get_kernel(ast, cpu, &bufs));
}

TEST(SymbolicKernels, NoOptTouchesASymbolicAxis) {
  Dim n = kN.unbound();
  ShapeTracker st = ShapeTracker::from_shape({n, 16});
  UOp ast = store(st, load(1, st) + UOp::const_(dtypes::float32, 1.0));
  codegen::LoweredKernel plain = codegen::lower(ast);
  EXPECT_TRUE(plain.symbolic());
  EXPECT_EQ(plain.full_shape, (std::vector<int64_t>{kMax, 16}));  // the largest sizes
  EXPECT_THROW(codegen::lower(ast, {{codegen::OptOp::UPCAST, 0, 2}}), InternalError);
  EXPECT_NO_THROW(codegen::lower(ast, {{codegen::OptOp::UPCAST, 1, 4}}));
}
