// TinyJit::export_c: the captured function as one C file and a weights file, built by the system's C compiler
// alone, computes the library's outputs bit for bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/process.h"
#include "support/expect_error.h"
#include "tg/tg.h"

namespace tg {
namespace {

std::string scratch(const std::string& name) { return ::testing::TempDir() + "/tg_export_" + std::to_string(::getpid()) + "_" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// reads the weights and one input from files, runs the model, writes its two outputs
const char* kMain = R"(#include <stdio.h>
int model_init(const char* weights_path);
void model(const void* const* inputs, void* const* outputs);
int main(int argc, char** argv) {
  static float x[4 * 8], probs[4 * 3];
  static int pick[4];
  if (argc != 4 || model_init(argv[1]) != 0) return 2;
  FILE* in = fopen(argv[2], "rb");
  if (!in || fread(x, 1, sizeof x, in) != sizeof x) return 3;
  fclose(in);
  const void* inputs[] = {x};
  void* outputs[] = {probs, pick};
  model(inputs, outputs);
  FILE* out = fopen(argv[3], "wb");
  fwrite(probs, 1, sizeof probs, out);
  fwrite(pick, 1, sizeof pick, out);
  return fclose(out) == 0 ? 0 : 4;
}
)";

// the compiler the library's CPU kernels use (CC, else clang, else gcc): the same machine code keeps the same bits
std::string c_compiler() {
  std::string path = getenv_str("PATH", "/usr/bin:/bin"), cc;
  for (const std::string& c : {getenv_str("CC"), std::string("clang"), std::string("gcc")})
    if (cc.empty() && !c.empty()) cc = runtime::find_executable(c, path);
  return cc;
}

// the exported file and a main program (its text written to main_path) built into exe, with the flags the file names
void build(const std::string& cc, const std::string& c_path, const char* main_text, const std::string& main_path,
           const std::string& exe, const runtime::TempDir& dir) {
  std::ofstream(main_path) << main_text;
  runtime::RunResult built = runtime::run({cc, "-O2", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-o", exe,
                                           c_path, main_path, "-lm"}, dir.path + "/cc.log", 300);
  ASSERT_EQ(built.exit_code, 0) << built.output;
}

TEST(ExportC, TheExportedModelComputesTheLibrarysOutputsBitForBit) {
  std::string cc = c_compiler();
  if (cc.empty()) GTEST_SKIP() << "no C compiler on PATH";
  Tensor w1 = Tensor::randn({8, 16}).realize(), b1 = Tensor::randn({16}).realize(), w2 = Tensor::randn({16, 3}).realize();
  auto classify = [&](const Tensor& x) {
    Tensor probs = ((x.matmul(w1) + b1).gelu().matmul(w2) * 0.5f).softmax(-1);
    return std::vector<Tensor>{probs, probs.argmax(1).cast(dtypes::int32)};
  };
  TinyJit<std::vector<Tensor>> jit([&](const std::vector<Tensor>& in) {
    std::vector<Tensor> out = classify(in[0]);
    Tensor::realize(out);
    return out;
  });
  std::string c_path = scratch("model.c"), weights = scratch("model.bin");
  testing::expect_error<ArgumentError>([&] { jit.export_c(c_path, weights); }, "TinyJit::export_c", {"call the TinyJit at least twice"},
                                       "test_export_c.cpp");
  for (int i = 0; i < 3; i++) jit({Tensor::randn({4, 8})});
  jit.export_c(c_path, weights);

  std::string main_path = scratch("main.c"), exe = scratch("model_exe"), input = scratch("x.bin"), output = scratch("out.bin");
  runtime::TempDir dir("test");
  ASSERT_NO_FATAL_FAILURE(build(cc, c_path, kMain, main_path, exe, dir));
  for (int trial = 0; trial < 2; trial++) {
    Tensor x = Tensor::randn({4, 8}).realize();
    std::vector<float> xs = x.to_vector<float>();
    std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(xs.data()), static_cast<std::streamsize>(xs.size() * 4));
    runtime::RunResult ran = runtime::run({exe, weights, input, output}, dir.path + "/run.log", 60);
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    std::vector<Tensor> want = jit({x});
    std::vector<float> probs = want[0].to_vector<float>();
    std::vector<int32_t> pick = want[1].to_vector<int32_t>();
    std::string expected(reinterpret_cast<const char*>(probs.data()), probs.size() * 4);
    expected.append(reinterpret_cast<const char*>(pick.data()), pick.size() * 4);
    EXPECT_EQ(read_bytes(output), expected) << "trial " << trial;
  }
  for (const std::string& p : {c_path, weights, main_path, exe, input, output}) std::remove(p.c_str());
}

// reads the weights, x (16 x 8 floats) and n, runs the model at n, writes its three outputs
const char* kMainWithVars = R"(#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int model_init(const char* weights_path);
void model(const void* const* inputs, void* const* outputs, const int64_t* vars);
int main(int argc, char** argv) {
  static float x[16 * 8], rows[16 * 8], total[8], peak[8];
  if (argc != 5 || model_init(argv[1]) != 0) return 2;
  FILE* in = fopen(argv[2], "rb");
  if (!in || fread(x, 1, sizeof x, in) != sizeof x) return 3;
  fclose(in);
  const int64_t vars[] = {atoll(argv[3])};
  const void* inputs[] = {x};
  void* outputs[] = {rows, total, peak};
  model(inputs, outputs, vars);
  FILE* out = fopen(argv[4], "wb");
  fwrite(rows, 1, sizeof rows, out);
  fwrite(total, 1, sizeof total, out);
  fwrite(peak, 1, sizeof peak, out);
  return fclose(out) == 0 ? 0 : 4;
}
)";

// A function of a Variable (symbolic shapes) exports too: model() takes the values (vars[j] the j-th Variable of the
// calls), and each kernel runs at them: loops of n rows (the output rows of symbolic size among them, a loop split
// between threads in the library), a sum and a max over them. Bit for bit the library's outputs at n = 1, 7, 16.
TEST(ExportC, AFunctionOfVariablesTakesTheirValues) {
  std::string cc = c_compiler();
  if (cc.empty()) GTEST_SKIP() << "no C compiler on PATH";
  Tensor w = Tensor::randn({8}).realize();
  Variable n("n", 1, 16);
  TinyJit<std::vector<Tensor>> jit([&](const std::vector<Tensor>& in, const std::vector<Dim>& vars) {
    Tensor xs = in[0].shrink({{0, vars[0]}, {0, 8}});
    std::vector<Tensor> out{(xs * w + 1.0f).contiguous(), (xs - 0.5f).exp().sum(0), xs.max(0)};
    Tensor::realize(out);
    return out;
  });
  Tensor x = Tensor::randn({16, 8}).realize();
  for (int64_t v : {3, 5, 16}) jit({x}, {n.bind(v)});
  std::string c_path = scratch("vars.c"), weights = scratch("vars.bin");
  jit.export_c(c_path, weights);
  std::string c = read_bytes(c_path);
  EXPECT_NE(c.find("vars[0]: n in [1, 16]"), std::string::npos) << c;

  std::string main_path = scratch("vars_main.c"), exe = scratch("vars_exe"), input = scratch("vars_x.bin"), output = scratch("vars_out.bin");
  runtime::TempDir dir("test");
  ASSERT_NO_FATAL_FAILURE(build(cc, c_path, kMainWithVars, main_path, exe, dir));
  std::vector<float> xs = x.to_vector<float>();
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(xs.data()), static_cast<std::streamsize>(xs.size() * 4));
  for (int64_t v : {1, 7, 16}) {
    runtime::RunResult ran = runtime::run({exe, weights, input, std::to_string(v), output}, dir.path + "/run.log", 60);
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    std::vector<Tensor> want = jit({x}, {n.bind(v)});
    std::string got = read_bytes(output);
    ASSERT_EQ(got.size(), (16 * 8 + 8 + 8) * 4u);
    std::vector<float> rows = want[0].shrink({{0, v}, {0, 8}}).to_vector<float>(), total = want[1].to_vector<float>(),
                       peak = want[2].to_vector<float>();
    auto bytes = [](const std::vector<float>& f) { return std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4); };
    EXPECT_EQ(got.substr(0, static_cast<size_t>(v) * 8 * 4), bytes(rows)) << "the first " << v << " rows";
    EXPECT_EQ(got.substr(16 * 8 * 4, 8 * 4), bytes(total)) << "the sum at n = " << v;
    EXPECT_EQ(got.substr(16 * 8 * 4 + 8 * 4), bytes(peak)) << "the max at n = " << v;
  }
  for (const std::string& p : {c_path, weights, main_path, exe, input, output}) std::remove(p.c_str());
}

TEST(ExportC, WhatCannotBeExportedIsNamed) {
  Tensor w = Tensor::randn({3}).realize();
  TinyJit<Tensor> step([&](const std::vector<Tensor>&) {
    w.assign(w * 0.5f).realize();
    return (w * 2).contiguous().realize();
  });
  for (int i = 0; i < 3; i++) step();
  testing::expect_error<ArgumentError>([&] { step.export_c(scratch("a.c"), scratch("a.bin")); }, "TinyJit::export_c",
                                       {"updates tensors"}, "test_export_c.cpp");
  TinyJit<Tensor> f([&](const std::vector<Tensor>& in) { return (in[0] + 1).realize(); });
  for (int i = 0; i < 3; i++) f({Tensor::randn({3})});
  testing::expect_error<ArgumentError>([&] { f.export_c("/nonexistent-dir/m.c", scratch("b.bin")); }, "TinyJit::export_c",
                                       {"/nonexistent-dir/m.c", "cannot be written"}, "test_export_c.cpp");
}

}  // namespace
}  // namespace tg
