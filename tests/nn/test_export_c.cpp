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

TEST(ExportC, TheExportedModelComputesTheLibrarysOutputsBitForBit) {
  std::string cc = runtime::find_executable("clang", getenv_str("PATH", "/usr/bin:/bin"));
  if (cc.empty()) cc = runtime::find_executable("gcc", getenv_str("PATH", "/usr/bin:/bin"));
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
  std::ofstream(main_path) << kMain;
  runtime::TempDir dir("test");
  runtime::RunResult built = runtime::run({cc, "-O2", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-o", exe,
                                           c_path, main_path, "-lm"}, dir.path + "/cc.log", 300);
  ASSERT_EQ(built.exit_code, 0) << built.output;
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
