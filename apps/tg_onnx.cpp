// tg_onnx: run an ONNX model from the command line.
//
//   tg_onnx MODEL.onnx [--input NAME=FILE.npy]... [--output-dir DIR] [--device DEV] [--bench N] [--seed S]
//
// Inputs not given are random with the model's declared shapes (a symbolic or unknown dim is 1; floats uniform in
// [0, 1), integers in [0, 10), bools random). Each output is written as DIR/NAME.npy (default: the current folder)
// and summarized on stdout. --bench N runs the model N more times under TinyJit and prints the median latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "cli.h"
#include "tg/jit.h"
#include "tg/onnx.h"
#include "tg/state.h"

namespace {

const tg::cli::Usage kUsage{"tg_onnx",
                            "usage: tg_onnx MODEL.onnx [--input NAME=FILE.npy]... [--output-dir DIR] [--device DEV] [--bench N] [--seed S]\n"};

[[noreturn]] void usage(const std::string& msg) { kUsage.fail(msg); }

tg::Tensor random_input(const tg::onnx::ValueInfo& info, const std::string& device) {
  if (!info.dtype) throw tg::ArgumentError("tg_onnx", "input '" + info.name + "' has a type tinygrad.cpp lacks: give it with --input");
  if (info.is_sequence) throw tg::ArgumentError("tg_onnx", "input '" + info.name + "' is a sequence: tg_onnx takes tensors only");
  tg::Shape shape;
  if (info.shape)
    for (int64_t d : *info.shape) shape.push_back(d < 0 ? 1 : d);
  tg::DType dt = *info.dtype;
  if (dt.is_float()) return tg::Tensor::rand(shape, tg::dtypes::float32, device).cast(dt);
  if (dt.is_bool()) return tg::Tensor::rand(shape, tg::dtypes::float32, device) < 0.5;
  return tg::Tensor::randint(shape, 0, 10, tg::dtypes::int32, device).cast(dt);
}

std::string shape_str(const tg::Shape& s) {
  std::string r = "(";
  for (size_t k = 0; k < s.size(); k++) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

int main(int argc, char** argv) try {
  std::string model_path, out_dir = ".", device;
  std::map<std::string, std::string> input_files;
  int bench = 0;
  uint64_t seed = 0;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) usage("--input takes NAME=FILE.npy");
      input_files[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "--output-dir") out_dir = value();
    else if (a == "--device") device = value();
    else if (a == "--bench") { bench = std::atoi(value().c_str()); if (bench < 1) usage("--bench takes a positive count"); }
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "-h" || a == "--help") kUsage.help();
    else if (!a.empty() && a[0] == '-') usage("unknown option " + a);
    else if (model_path.empty()) model_path = a;
    else usage("more than one model given");
  }
  if (model_path.empty()) usage("no model given");
  tg::Tensor::manual_seed(seed);
  tg::onnx::Model model = tg::onnx::load(model_path, device);
  std::map<std::string, tg::Tensor> inputs;
  for (const auto& [name, file] : input_files) inputs[name] = tg::load_npy(file, model.device());
  for (const tg::onnx::ValueInfo& info : model.inputs())
    if (!inputs.count(info.name)) inputs[info.name] = random_input(info, model.device()).realize();
  std::vector<std::string> in_names;
  std::vector<tg::Tensor> in_list;
  for (auto& [name, t] : inputs) { in_names.push_back(name); in_list.push_back(t.contiguous().realize()); }

  // the model as a function of its inputs (in name order) to its outputs (in name order): what TinyJit captures
  std::vector<std::string> out_names;
  auto run = [&](const std::vector<tg::Tensor>& in) {
    std::map<std::string, tg::Tensor> named;
    for (size_t k = 0; k < in.size(); k++) named[in_names[k]] = in[k];
    std::vector<tg::Tensor> outs;
    out_names.clear();
    for (const auto& [name, t] : model.run(named)) { out_names.push_back(name); outs.push_back(t); }
    tg::Tensor::realize(outs);
    return outs;
  };
  std::vector<tg::Tensor> outs = run(in_list);
  std::filesystem::create_directories(out_dir);
  for (size_t k = 0; k < outs.size(); k++) {
    std::string file = (std::filesystem::path(out_dir) / (out_names[k] + ".npy")).string();
    tg::save_npy(outs[k], file);
    std::printf("%s: %s %s -> %s\n", out_names[k].c_str(), outs[k].dtype().name().c_str(), shape_str(outs[k].shape()).c_str(), file.c_str());
  }
  if (bench > 0) {
    tg::JitFunction jit(run);
    std::vector<double> ms;
    for (int r = 0; r < bench + 2; r++) {  // the first two calls run and capture; the rest replay
      auto t0 = std::chrono::steady_clock::now();
      std::vector<tg::Tensor> o = jit.call(in_list);
      if (!o.empty()) (void)o[0].to_bytes();
      double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("bench: %d runs, median %.3f ms, min %.3f ms (%s, %zu kernels per run)\n", bench, ms[ms.size() / 2], ms[0],
                model.device().c_str(), jit.kernel_count());
  }
  return 0;
} catch (const tg::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
