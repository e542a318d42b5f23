// Tensors with a symbolic size (issue 28, step 3 of docs/plans/symbolic_shapes.md): a dimension shrunk to a bound
// Variable computes the same values as the concrete size, with one kernel for every value of the variable (the
// ASTs hold the variable, the launch its value), and every misuse raises a tg::Error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <utility>

#include <tg/tg.h>

#include "engine/kernel_cache.h"
#include "support/expect_error.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "schedule/schedule_cache.h"

using namespace tg;

namespace {

std::vector<float> read(const Tensor& t) { return t.to_vector<float>(); }

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;  // a variance of one row
    else EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

// The kernels that would realize t, by AST (an AST is a kernel: get_kernel compiles each once).
// the schedule's kernels by structure (hash): an equal AST is one kernel, wherever the node lives now
std::vector<uint64_t> kernels_of(const Tensor& t) {
  std::vector<uint64_t> out;
  for (const auto& item : schedule::create_schedule({t.uop()}).items) out.push_back(item.ast.hash());
  return out;
}

// f over x's first `n` rows, as a symbolic size bound to n and as the concrete size: equal values, and one set of
// kernels for every n (the symbolic graph's schedule is the same ASTs whatever n is bound to)
void check_rows(const Tensor& x, const std::function<Tensor(const Tensor&)>& f, const std::string& what) {
  Variable v("n", 1, x.shape()[0]);
  std::vector<uint64_t> first;
  for (int64_t n = 1; n <= x.shape()[0]; n++) {
    std::vector<std::pair<int64_t, int64_t>> concrete{{0, n}};
    for (int64_t d = 1; d < x.ndim(); d++) concrete.push_back({0, x.shape()[d]});
    std::vector<std::pair<Dim, Dim>> symbolic(concrete.begin(), concrete.end());
    symbolic[0].second = v.bind(n);
    Tensor y = f(x.shrink(symbolic));
    std::vector<uint64_t> k = kernels_of(y);
    if (n == 1) first = k;
    EXPECT_EQ(k, first) << what << ": other kernels at n=" << n;
    Tensor want = f(x.shrink(concrete)).realize();
    // read back through a shrink to the concrete sizes of the result (its symbolic sizes at n: n, n + 3, 2n)
    std::vector<std::pair<Dim, Dim>> back;
    for (const Dim& d : y.sym_shape()) back.push_back({0, Dim(d.value())});
    y.realize();
    expect_near(read(y.shrink(back)), read(want), what + " at n=" + std::to_string(n));
  }
}

}  // namespace

TEST(SymbolicShapes, ElementwiseAndBroadcastingMatchTheConcreteSize) {
  Tensor x = Tensor::randn({9, 4}).realize(), b = Tensor::randn({4}).realize();
  check_rows(x, [](const Tensor& t) { return t * 2.0f + 1.0f; }, "x*2+1");
  check_rows(x, [&](const Tensor& t) { return (t + b).relu() * t.exp2(); }, "relu(x+b)*exp2(x)");
  check_rows(x, [&](const Tensor& t) { return (t - b).cast(dtypes::float16).cast(dtypes::float32); }, "casts");
  check_rows(x, [](const Tensor& t) { return t * t.reshape({t.sym_shape()[0], 2, 2}).reshape(t.sym_shape()); }, "reshape");
}

TEST(SymbolicShapes, ReducesOverAndAcrossTheSymbolicAxis) {
  Tensor x = Tensor::randn({8, 5}).realize();
  check_rows(x, [](const Tensor& t) { return t.sum(0); }, "sum over the symbolic axis");
  check_rows(x, [](const Tensor& t) { return t.max(0); }, "max over the symbolic axis");
  check_rows(x, [](const Tensor& t) { return t.sum(1); }, "sum across it");
  check_rows(x, [](const Tensor& t) { return t.sum(); }, "sum of everything");
  // a reduce read back through its broadcast: a kernel over n rows reads a buffer of the reduce
  check_rows(x, [](const Tensor& t) { return t - t.max(0, true); }, "x - max(x, 0)");
  check_rows(x, [](const Tensor& t) { return (t - t.max(1, true)).exp2().sum(1); }, "row softmax denominators");
}

TEST(SymbolicShapes, PadAndCatAlongAndAcrossTheSymbolicAxis) {
  Tensor x = Tensor::randn({7, 3}).realize(), c = Tensor::randn({2, 3}).realize();
  check_rows(x, [](const Tensor& t) { return t.pad({{1, 2}, {0, 1}}); }, "pad both axes");
  check_rows(x, [](const Tensor& t) { return t.pad({{2, 0}, {1, 1}}, 3.5); }, "pad with a value");
  check_rows(x, [](const Tensor& t) { return t.pad({{0, 1}, {-1, 1}}); }, "a negative pad cuts");
  check_rows(x, [](const Tensor& t) { return Tensor::cat({t, t * 2.0f}, 1); }, "cat across the symbolic axis");
  check_rows(x, [](const Tensor& t) { return Tensor::cat({t, t + 1.0f}, 0); }, "cat along it: 2n rows");
  check_rows(x, [&](const Tensor& t) { return Tensor::cat({c, t, c}, 0).sum(0); }, "cat with concrete pieces, then a sum");
  check_rows(x, [](const Tensor& t) { return Tensor::stack({t, -t}, 1); }, "stack");
  // shapes that differ outside the cat axis raise, naming both
  Variable v("n", 1, 7);
  Tensor t = x.shrink({{0, v.bind(4)}, {0, 3}});
  EXPECT_THROW(Tensor::cat({t, x}, 1), ShapeError);
  EXPECT_THROW(t.pad({{-5, 0}, {0, 0}}), ShapeError);  // cuts more rows than n = 4 has
}

TEST(SymbolicShapes, MeanAndVarianceOverAndAcrossTheSymbolicAxis) {
  // over n rows the count is a sum of ones over the same axes, in the same kernel as the sum it divides
  Tensor x = Tensor::randn({7, 5}).realize();
  check_rows(x, [](const Tensor& t) { return t.mean(0); }, "mean over n");
  check_rows(x, [](const Tensor& t) { return t.mean({0, 1}, true); }, "mean over everything");
  check_rows(x, [](const Tensor& t) { return t.mean(1); }, "mean across n");
  check_rows(x, [](const Tensor& t) { return t.var(0); }, "var over n");
  check_rows(x, [](const Tensor& t) { return t.std(0, false, 0.0); }, "std over n, no correction");
  check_rows(x, [](const Tensor& t) { return t.layernorm(-1); }, "layernorm of n rows");
  check_rows(x, [](const Tensor& t) { return (t - t.mean(0, true)) * 2.0f; }, "centred over n");
  // the sum and its count are one kernel
  Variable v("n", 1, 7);
  EXPECT_EQ(kernels_of(x.shrink({{0, v.bind(3)}, {0, 5}}).mean(0)).size(), 1u);
  // var with one row and the default correction: 0/0, NaN, as PyTorch
  std::vector<float> one = read(x.shrink({{0, v.bind(1)}, {0, 5}}).var(0));
  for (float f : one) EXPECT_TRUE(std::isnan(f));
}

// A random chain of the ported ops over a (rows, cols) tensor whose rows may be symbolic: the same chain for the
// same seed whatever the sizes, with the same realized operands (made once per shape and kept)
Tensor random_chain(Tensor t, uint32_t seed) {
  static std::map<std::pair<int64_t, int64_t>, Tensor> operands;
  auto operand = [](int64_t r, int64_t c) {
    auto it = operands.find({r, c});
    if (it == operands.end()) it = operands.emplace(std::make_pair(r, c), Tensor::randn({r, c}).realize()).first;
    return it->second;
  };
  std::mt19937 rng(seed);
  for (int step = 0; step < 6; step++) {
    int64_t cols = t.sym_shape()[1].concrete("random_chain");
    switch (rng() % 12) {
      case 0: t = t.relu() * 2.0f + 1.0f; break;
      case 1: t = (t.abs() + 1.0f).sqrt() - t.tanh(); break;
      case 2: t = t + operand(1, cols); break;                       // broadcast along the rows
      case 3: t = t - t.max(1, true); break;                         // across each row
      case 4: t = t - t.mean(0, true); break;                        // over the rows
      case 5: t = t.softmax(1); break;
      case 6: t = t.pad({{0, 0}, {1, cols > 8 ? -2 : 1}}, 0.5); break;  // columns change
      case 7: t = Tensor::cat({t, t * 0.5f}, 1).shrink({{0, t.sym_shape()[0]}, {0, std::min<int64_t>(2 * cols, 9)}}); break;
      case 8: t = t.matmul(operand(cols, 1 + static_cast<int64_t>(rng() % 6))); break;
      case 9: t = t.transpose(0, 1).softmax(1).transpose(0, 1); break;  // over the rows, through a permute
      case 10: t = Tensor::cat({t, t.exp() * 0.1f}, 0); break;           // twice the rows
      default: t = t * t.sum(0, true).tanh() + t.var(0, true, 0.0); break;
    }
  }
  return t;
}

TEST(SymbolicShapes, RandomChainsMatchTheConcreteSize) {
  Tensor x = Tensor::randn({5, 4}).realize();
  for (uint32_t seed = 0; seed < 16; seed++)
    check_rows(x, [seed](const Tensor& t) { return random_chain(t, seed); }, "chain " + std::to_string(seed));
}

TEST(SymbolicShapes, MatmulSoftmaxAndAttention) {
  Tensor x = Tensor::randn({7, 4}).realize(), w = Tensor::randn({4, 3}).realize(), q = Tensor::randn({2, 4}).realize();
  check_rows(x, [&](const Tensor& t) { return t.matmul(w); }, "(n, 4) @ (4, 3)");
  check_rows(x, [](const Tensor& t) { return t.T().matmul(t); }, "(4, n) @ (n, 4): the inner size symbolic");
  check_rows(x, [](const Tensor& t) { return t.softmax(0); }, "softmax over n");
  check_rows(x, [](const Tensor& t) { return t.softmax(1).unsqueeze(0).squeeze(0); }, "softmax across n");
  // one query row attending over n cached keys and values (a decode step over the positions so far)
  check_rows(x, [&](const Tensor& kv) { return q.matmul(kv.T()).mul(0.5f).softmax(1).matmul(kv); }, "attention");
}

TEST(SymbolicShapes, ASymbolicSizeAfterTheFirstAxis) {
  // strides over n are symbolic in the loop space; the result is stored laid out at the largest n
  Tensor x = Tensor::randn({6, 3, 4}).realize();
  std::function<Tensor(const Tensor&)> f = [](const Tensor& t) { return (t.permute({1, 0, 2}) * 3.0f).sum(2); };
  check_rows(x, f, "permuted");
}

TEST(SymbolicShapes, ARealizedSymbolicTensorIsUsedAgain) {
  Tensor x = Tensor::randn({7, 3}).realize();
  Variable v("n", 1, 7);
  for (int64_t n : {2, 7}) {
    Tensor y = (x.shrink({{0, v.bind(n)}, {0, 3}}) * 2.0f).realize();
    EXPECT_TRUE(y.is_symbolic());
    Tensor z = (y + 1.0f).sum(0);
    Tensor want = (x.shrink({{0, n}, {0, 3}}) * 2.0f + 1.0f).sum(0);
    expect_near(read(z), read(want), "n=" + std::to_string(n));
  }
}

// A sum or max over a symbolic axis has no VECTOR (no opt applies to it), and a float sum or a max where a NaN
// wins is a chain the C compiler keeps in order. The C renderer lets it reorder the sum's one add
// (CStyleLanguage::reordered_sum) and takes the max over integer keys that order as the floats do, with a flag for
// a NaN (CStyleLanguage::keyed_max), so clang vectorizes both loops: a softmax over a KV cache's positions (LLaMA 1B,
// 1000-token prompt: prefill 1.05-1.1x, decode 1.03-1.07x from the sum). The values at lengths around a vector's,
// against float64 sums and the host's max (NaN where one was read, infinities, zeros); the machine code's packed
// adds and integer maxes where the compiler is clang.
TEST(SymbolicShapes, SumsAndMaxesOverASymbolicAxisAreVectorCode) {
  const int64_t rows = 4, cols = 300;
  std::vector<float> xs = read(Tensor::randn({rows, cols}) * 0.5f);
  xs[0 * cols + 5] = NAN;                                    // row 0: a NaN early
  xs[1 * cols + 250] = NAN, xs[1 * cols + 17] = INFINITY;  // row 1: +inf, then a NaN past 250
  for (int64_t c = 0; c < cols; c++) xs[2 * cols + c] = c % 2 ? -0.0f : -INFINITY;  // row 2: -inf and -0
  Tensor x = Tensor(xs, {rows, cols}).realize();
  Variable v("n", 1, cols);
  std::shared_ptr<const engine::CompiledKernel> sum_kernel, max_kernel;
  for (int64_t n : {1, 2, 15, 16, 17, 64, 199, 251, 300}) {
    Tensor part = x.shrink({{0, rows}, {0, v.bind(n)}});
    Tensor sum = (part - 0.25f).exp().sum(1), max = part.max(1);
    for (auto [t, k] : {std::pair{sum, &sum_kernel}, std::pair{max, &max_kernel}}) {
      schedule::Schedule s = schedule::create_schedule({t.uop()});
      ASSERT_EQ(s.items.size(), 1u);
      *k = engine::get_kernel(s.items[0].ast, runtime::get_device("CPU"));
    }
    std::vector<float> sums = read(sum), maxes = read(max);
    for (int64_t r = 0; r < rows; r++) {
      double want_sum = 0;
      float want_max = -INFINITY;
      bool nan = false;
      for (int64_t c = 0; c < n; c++) {
        float e = xs[r * cols + c];
        want_sum += std::exp(double(e) - 0.25), nan = nan || std::isnan(e), want_max = std::max(want_max, e);
      }
      std::string at = "row " + std::to_string(r) + " of " + std::to_string(n);
      if (nan) {
        EXPECT_TRUE(std::isnan(sums[r])) << at;
        EXPECT_TRUE(std::isnan(maxes[r])) << at;
      } else {
        if (std::isinf(want_sum)) EXPECT_EQ(sums[r], INFINITY) << at;
        else EXPECT_NEAR(sums[r], want_sum, 1e-5 * want_sum) << at;
        EXPECT_EQ(maxes[r], want_max) << at;  // -0 and 0 compare equal
      }
    }
  }
  EXPECT_NE(sum_kernel->rendered.source.find("TG_REORDERED acc"), std::string::npos) << sum_kernel->rendered.source;
  EXPECT_NE(max_kernel->rendered.source.find("tg_max_key(term)"), std::string::npos) << max_kernel->rendered.source;
  runtime::Device& cpu = runtime::get_device("CPU");
  if (cpu.compiler().compiler_id().find("clang") == std::string::npos)
    GTEST_SKIP() << "the values are checked; the kernels' compiler is not clang (" << cpu.compiler().compiler_id()
                 << "), which has no statement-level reordering, so the sum stays scalar";
  std::string sum_code = cpu.compiler().disassemble(cpu.compiler().compile(sum_kernel->rendered.source));
  std::string max_code = cpu.compiler().disassemble(cpu.compiler().compile(max_kernel->rendered.source));
  if (sum_code.find("objdump") != std::string::npos && sum_code.find("add") == std::string::npos) GTEST_SKIP() << sum_code;
  auto packed = [](const std::string& code, const std::string& op) {
    return code.find(op + " %zmm") != std::string::npos || code.find(op + " %ymm") != std::string::npos ||
           code.find(op + " %xmm") != std::string::npos;
  };
  EXPECT_TRUE(packed(sum_code, "vaddps")) << sum_code;
  EXPECT_TRUE(packed(max_code, "vpmaxsd")) << max_code;
}

TEST(SymbolicShapes, MisuseRaises) {
  Tensor x = Tensor::randn({5, 3}).realize();
  // a variable whose range reaches past the tensor: some value would read past its memory
  EXPECT_THROW((void)x.shrink({{0, Variable("m", 1, 8).bind(4)}, {0, 3}}), ShapeError);
  Variable v("n", 1, 5);
  Tensor xs = x.shrink({{0, v.bind(4)}, {0, 3}});
  EXPECT_EQ(xs.ndim(), 2);
  EXPECT_EQ(xs.sym_shape()[1], Dim(3));
  // its sizes as integers would bake the bound value into whatever used them
  try {
    (void)xs.shape();
    ADD_FAILURE() << "shape() of a symbolic tensor";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("sym_shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)xs.to_vector<float>(), ShapeError);
  // the range holds for some n and not others: checked at the bound value
  EXPECT_THROW((void)xs.shrink({{0, 5}, {0, 3}}), ShapeError);
  EXPECT_NO_THROW((void)xs.shrink({{0, 4}, {0, 3}}));
  EXPECT_THROW((void)v.bind(6), ArgumentError);
  EXPECT_THROW((void)xs.reshape({-1}), ShapeError);
  EXPECT_THROW((void)xs.reshape({xs.sym_shape()[0], 2}), ShapeError);
  EXPECT_THROW((void)(xs + x.shrink({{0, 4}, {0, 3}})), ShapeError);  // n and 4 are different sizes
  // TinyJit would replay the kernels without the variable's value: it says so
  JitFunction jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0].shrink({{0, v.bind(2)}, {0, 3}}) + 1.0f).realize()}; });
  EXPECT_NO_THROW(jit.call({x}));  // the first call runs as it is
  EXPECT_THROW(jit.call({x}), ArgumentError);  // the second captures
  // one variable, two values in one computation
  Tensor other = x.shrink({{0, v.bind(3)}, {0, 3}}).sum(0);
  EXPECT_THROW(Tensor::realize({xs.sum(0), other}), ArgumentError);
}

// Outside TinyJit too, a graph that differs only in the bound values is scheduled once: the schedule cache's form
// is unbound, each graph brings its own values
TEST(SymbolicShapes, OneScheduleServesEveryValue) {
  Tensor x = Tensor::randn({9, 4}).realize(), w = Tensor::randn({4, 3}).realize();
  Variable v("rows", 1, 9);
  bool first = true;
  for (int64_t n : {3, 7, 1, 9, 3}) {
    auto before = schedule::schedule_cache_stats();
    Tensor y = (x.shrink({{0, v.bind(n)}, {0, 4}}) * 2.0f).matmul(w).softmax(1);
    y.realize();
    auto after = schedule::schedule_cache_stats();
    if (!std::exchange(first, false)) {  // every call after the first is a hit
      EXPECT_EQ(after.misses, before.misses) << "scheduled again at n=" << n;
      EXPECT_EQ(after.hits, before.hits + 1) << "n=" << n;
    }
    expect_near(read(y.shrink({{0, n}, {0, 3}})), read((x.shrink({{0, n}, {0, 4}}) * 2.0f).matmul(w).softmax(1)),
                "n=" + std::to_string(n));
  }
  // two values of one variable in one graph still raise
  Tensor a = x.shrink({{0, v.bind(2)}, {0, 4}}), b = x.shrink({{0, v.bind(3)}, {0, 4}});
  EXPECT_THROW(Tensor::realize({a.sum(0) + 1, b.sum(0) + 1}), ArgumentError);
}

TEST(SymbolicShapes, TinyJitReplaysAtEveryValueOfItsVariables) {
  Tensor x = Tensor::randn({9, 4}).realize(), w = Tensor::randn({4, 3}).realize();
  Variable v("n", 1, 9);
  TinyJit<std::vector<Tensor>> jit([&](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
    Tensor xs = in[0].shrink({{0, vars[0]}, {0, 4}});
    Tensor rows = (xs * 2.0f).matmul(w), total = xs.sum(0);  // a symbolic output and a concrete one
    Tensor::realize({rows, total});
    return std::vector<Tensor>{rows, total};
  });
  // captured at n = 2 (the second call); replays at other values, the largest first (the buffers fit it)
  int call = 0;
  for (int64_t n : {1, 2, 9, 5, 3, 9, 1}) {
    int64_t kernels = GlobalCounters::kernel_count, compiled = runtime::compile_stats().compiled;
    auto schedules = schedule::schedule_cache_stats();
    std::vector<Tensor> out = jit({x}, {v.bind(n)});
    if (++call > 2) {
      EXPECT_EQ(GlobalCounters::kernel_count - kernels, static_cast<int64_t>(jit.kernel_count())) << "n=" << n;
      EXPECT_EQ(runtime::compile_stats().compiled, compiled) << "a replay compiled, n=" << n;
      EXPECT_EQ(schedule::schedule_cache_stats().hits + schedule::schedule_cache_stats().misses, schedules.hits + schedules.misses)
          << "a replay scheduled, n=" << n;
    }
    EXPECT_EQ(out[0].sym_shape()[0], v.bind(n));
    Tensor want_rows = (x.shrink({{0, n}, {0, 4}}) * 2.0f).matmul(w), want_total = x.shrink({{0, n}, {0, 4}}).sum(0);
    expect_near(read(out[0].shrink({{0, n}, {0, 3}})), read(want_rows), "rows at n=" + std::to_string(n));
    expect_near(read(out[1]), read(want_total), "total at n=" + std::to_string(n));
  }
  EXPECT_TRUE(jit.captured());
  // the variables of every call are the first call's, each exactly a bound Variable
  EXPECT_THROW(jit({x}, std::vector<Dim>{}), ArgumentError);
  EXPECT_THROW(jit({x}, {Variable("m", 1, 9).bind(2)}), ArgumentError);
  EXPECT_THROW(jit({x}, {Variable("n", 1, 8).bind(2)}), ArgumentError);
  EXPECT_THROW(jit({x}, {v.bind(2) + 1}), ArgumentError);
  EXPECT_THROW(jit({x}, {v.bind(2), v.bind(3)}), ArgumentError);
}

// An input with a symbolic size (a view of a realized buffer, x.shrink({{0, n.bind(k)}, ...})): TinyJit reads its
// buffer through the view and takes the variable's value from it, so one capture serves every size in range; the
// view and its variables must stay what they were at the first call.
TEST(SymbolicShapes, TinyJitTakesInputsOfASymbolicSize) {
  Tensor x = Tensor::randn({9, 4}).realize(), y = Tensor::randn({9, 4}).realize(), w = Tensor::randn({4, 3}).realize();
  Variable v("n", 1, 9);
  TinyJit<std::vector<Tensor>> jit([&](const std::vector<Tensor>& in) {
    Tensor rows = (in[0] * 2.0f).matmul(w), total = in[0].sum(0);  // a symbolic output and a concrete one
    Tensor::realize({rows, total});
    return std::vector<Tensor>{rows, total};
  });
  int call = 0;
  for (int64_t n : {3, 2, 9, 5, 1, 7}) {
    const Tensor& src = call % 2 ? y : x;  // the replay reads whichever buffer the input views
    int64_t kernels = GlobalCounters::kernel_count, compiled = runtime::compile_stats().compiled;
    std::vector<Tensor> out = jit({src.shrink({{0, v.bind(n)}, {0, 4}})});
    if (++call > 2) {
      EXPECT_EQ(GlobalCounters::kernel_count - kernels, static_cast<int64_t>(jit.kernel_count())) << "n=" << n;
      EXPECT_EQ(runtime::compile_stats().compiled, compiled) << "a replay compiled, n=" << n;
    }
    EXPECT_EQ(out[0].sym_shape()[0], v.bind(n));
    Tensor rows = src.shrink({{0, n}, {0, 4}});
    expect_near(read(out[0].shrink({{0, n}, {0, 3}})), read((rows * 2.0f).matmul(w)), "rows at n=" + std::to_string(n));
    expect_near(read(out[1]), read(rows.sum(0)), "total at n=" + std::to_string(n));
  }
  EXPECT_TRUE(jit.captured());
  // another view of the buffer, a concrete size, another variable: not the first call's input
  const int line = __LINE__ + 1;
  tg::testing::expect_error<ArgumentError>([&] { jit({x.shrink({{0, v.bind(4)}, {0, 4}}).flip({1})}); }, "TinyJit",
                                           {"input 0", "viewing a buffer as", "the first call had (n, 4) float32"},
                                           "test_symbolic.cpp", line);
  EXPECT_THROW(jit({x.shrink({{0, 4}, {0, 4}})}), ArgumentError);
  EXPECT_THROW(jit({x.shrink({{0, Variable("m", 1, 9).bind(4)}, {0, 4}})}), ArgumentError);
  EXPECT_THROW((void)x.shrink({{0, v.bind(10)}, {0, 4}}), ArgumentError);  // outside the variable's range
  // the variable passed as a var too must agree with the input
  TinyJit<Tensor> both([&](const std::vector<Tensor>& in, const std::vector<Dim>&) { return in[0].sum(0).realize(); });
  EXPECT_NO_THROW(both({x.shrink({{0, v.bind(3)}, {0, 4}})}, {v.bind(3)}));
  EXPECT_THROW(both({x.shrink({{0, v.bind(3)}, {0, 4}})}, {v.bind(4)}), ArgumentError);
}

TEST(SymbolicShapes, OnOpenCLAsOnTheCPU) {
  try {
    runtime::get_device("OPENCL");
  } catch (const DeviceError& e) {
    GTEST_SKIP() << e.what();
  }
  // a symbolic global axis is a grid dimension of the launch's size (no loop in the work-items); the variable is a
  // kernel argument; a reduce over it is a loop
  Tensor x = Tensor::randn({6, 5}).to("OPENCL").realize(), b = Tensor::randn({5}).to("OPENCL").realize();
  auto f = [&](const Tensor& t) { return (t * 2.0f + b).relu(); };
  check_rows(x, f, "elementwise on OpenCL");
  Variable n("n", 0, 6);
  schedule::Schedule s = schedule::create_schedule({f(x.shrink({{0, n.bind(3)}, {0, 5}})).uop()});
  auto k = engine::get_kernel(s.items.back().ast, runtime::get_device("OPENCL"));
  EXPECT_TRUE(k->global_expr[1]) << k->rendered.source;
  EXPECT_EQ(k->rendered.source.find("for ("), std::string::npos) << k->rendered.source;
  // at n = 0 there is nothing to launch
  Tensor none = f(x.shrink({{0, n.bind(0)}, {0, 5}})).realize();
  EXPECT_EQ(none.shrink({{0, 0}, {0, 5}}).numel(), 0);
  check_rows(x, [](const Tensor& t) { return t.sum(0) + t.max(0); }, "reduces on OpenCL");
  check_rows(x, [](const Tensor& t) { return t - t.max(1, true); }, "a broadcast reduce on OpenCL");
  Tensor q = Tensor::randn({2, 5}).to("OPENCL").realize();
  check_rows(x, [&](const Tensor& kv) { return q.matmul(kv.T()).softmax(1).matmul(kv); }, "attention on OpenCL");
}
