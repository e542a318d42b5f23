// ONNX's backend test suite, run as ONNX's own runner does: for each test folder (model.onnx and
// test_data_set_*/input_*.pb, output_*.pb), load the model, feed the inputs, and compare every output with the
// expected one (same dtype and shape; values within rtol 1e-3, atol 1e-7, NaN where NaN is expected).
//
//   onnx_backend_tests --data /usr/share/libonnx-testdata/data/node [--range a-c] [--skip tests/onnx/skip.txt]
//                      [--only NAME] [--run-skipped] [-v]
//
// Tests named in the skip file ("<suite>/<test>: reason") are not run (--run-skipped runs them and reports any that
// now pass, so the list stays honest). Prints a line per failure and the counts; exits 1 if any test failed, 77 if
// the data folder is missing (ctest reports a skip).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "tg/onnx.h"

namespace fs = std::filesystem;
using tg::Tensor;

namespace {

std::string compare(Tensor got, const Tensor& want, const std::string& name) {
  // numpy has no bfloat16: ONNX's test data holds bfloat16 values as their uint16 bits
  if (got.dtype() == tg::dtypes::bfloat16 && want.dtype() == tg::dtypes::uint16) got = got.bitcast(tg::dtypes::uint16);
  if (got.dtype() != want.dtype()) return name + ": dtype " + got.dtype().name() + ", expected " + want.dtype().name();
  if (got.shape() != want.shape()) {
    auto str = [](const tg::Shape& s) { std::string r = "("; for (size_t k = 0; k < s.size(); k++) r += (k ? ", " : "") + std::to_string(s[k]); return r + ")"; };
    return name + ": shape " + str(got.shape()) + ", expected " + str(want.shape());
  }
  if (want.numel() == 0) return "";
  if (want.dtype().is_float()) {
    std::vector<double> g = got.cast(tg::dtypes::float64).to_vector<double>(), w = want.cast(tg::dtypes::float64).to_vector<double>();
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < g.size(); k++) {
      bool ok = std::isnan(w[k]) ? std::isnan(g[k]) : (g[k] == w[k] || std::abs(g[k] - w[k]) <= 1e-7 + 1e-3 * std::abs(w[k]));
      if (!ok && bad++ == 0) first = k;
    }
    if (bad) return name + ": " + std::to_string(bad) + " of " + std::to_string(g.size()) + " values differ, first at " + std::to_string(first) +
                    ": " + std::to_string(g[first]) + " vs " + std::to_string(w[first]);
    return "";
  }
  std::vector<uint8_t> g = got.to_bytes(), w = want.to_bytes();
  if (g != w) {
    std::vector<int64_t> gi = got.cast(tg::dtypes::int64).to_vector<int64_t>(), wi = want.cast(tg::dtypes::int64).to_vector<int64_t>();
    for (size_t k = 0; k < gi.size(); k++)
      if (gi[k] != wi[k]) return name + ": value " + std::to_string(k) + " is " + std::to_string(gi[k]) + ", expected " + std::to_string(wi[k]);
    return name + ": bytes differ";
  }
  return "";
}

std::string compare_values(const tg::onnx::Value& got, const tg::onnx::Value& want, const std::string& name) {
  if (want.is_none()) return got.is_none() ? "" : name + ": expected an empty optional";
  if (want.is_sequence()) {
    if (!got.is_sequence()) return name + ": expected a sequence";
    if (got.sequence().size() != want.sequence().size()) return name + ": sequence of " + std::to_string(got.sequence().size()) + ", expected " + std::to_string(want.sequence().size());
    for (size_t k = 0; k < want.sequence().size(); k++)
      if (std::string e = compare(got.sequence()[k], want.sequence()[k], name + "[" + std::to_string(k) + "]"); !e.empty()) return e;
    return "";
  }
  if (!got.is_tensor()) return name + ": expected a tensor";
  return compare(got.tensor(), want.tensor(), name);
}

// "" when the test passes, else what went wrong.
std::string run_test(const fs::path& dir) {
  tg::onnx::Model m = tg::onnx::load((dir / "model.onnx").string());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    std::map<std::string, tg::onnx::Value> inputs;
    for (size_t k = 0; k < m.inputs().size(); k++) {
      fs::path p = set / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      tg::onnx::Value v = tg::onnx::load_value_proto(p.string(), m.inputs()[k]);
      if (m.inputs()[k].dtype == tg::dtypes::bfloat16 && v.is_tensor() && v.tensor().dtype() == tg::dtypes::uint16)
        v = v.tensor().bitcast(tg::dtypes::bfloat16);  // bfloat16 stored as its bits (numpy has no bfloat16)
      inputs[m.inputs()[k].name] = v;
    }
    auto outs = m.run_values(inputs);
    for (size_t k = 0; k < m.outputs().size(); k++) {
      fs::path p = set / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) continue;
      const std::string& name = m.outputs()[k].name;
      tg::onnx::Value want = tg::onnx::load_value_proto(p.string(), m.outputs()[k]);
      if (std::string e = compare_values(outs.at(name), want, set.filename().string() + "/" + name); !e.empty()) return e;
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string data, skip_file, only, range = "a-z";
  bool run_skipped = false, verbose = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--data") data = next();
    else if (a == "--skip") skip_file = next();
    else if (a == "--range") range = next();
    else if (a == "--only") only = next();
    else if (a == "--run-skipped") run_skipped = true;
    else if (a == "-v") verbose = true;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (data.empty() || !fs::is_directory(data)) {
    std::printf("no ONNX test data at '%s' (Debian: apt-get install libonnx-testdata): skipped\n", data.c_str());
    return 77;
  }
  std::string suite = fs::path(data).filename().string();
  std::map<std::string, std::string> skips;
  if (!skip_file.empty()) {
    std::ifstream in(skip_file);
    if (!in) { std::fprintf(stderr, "cannot read %s\n", skip_file.c_str()); return 2; }
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      size_t colon = line.find(':');
      if (colon == std::string::npos) { std::fprintf(stderr, "%s: a line without 'suite/test: reason': %s\n", skip_file.c_str(), line.c_str()); return 2; }
      skips[line.substr(0, colon)] = line.substr(colon + 1);
    }
  }
  char lo = range.size() == 3 ? range[0] : 'a', hi = range.size() == 3 ? range[2] : 'z';
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(data)) {
    std::string name = e.path().filename().string();
    std::string key = name.rfind("test_", 0) == 0 ? name.substr(5) : name;
    char first = key.empty() ? 'a' : static_cast<char>(std::tolower(static_cast<unsigned char>(key[0])));
    if (!e.is_directory() || first < lo || first > hi) continue;
    if (!only.empty() && name != only) continue;
    tests.push_back(e.path());
  }
  std::sort(tests.begin(), tests.end());
  int passed = 0, failed = 0, skipped = 0, now_pass = 0;
  for (const fs::path& t : tests) {
    std::string id = suite + "/" + t.filename().string();
    bool is_skipped = skips.count(id) > 0;
    if (is_skipped && !run_skipped && only.empty()) { skipped++; continue; }
    auto t0 = std::chrono::steady_clock::now();
    std::string err;
    try {
      err = run_test(t);
    } catch (const std::exception& e) {
      err = e.what();
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (is_skipped) {
      if (err.empty()) { now_pass++; std::printf("NOW PASSES %s (listed as skipped:%s)\n", id.c_str(), skips[id].c_str()); }
      else if (verbose) std::printf("still fails %s: %s\n", id.c_str(), err.c_str());
      skipped++;
      continue;
    }
    if (err.empty()) {
      passed++;
      if (verbose) std::printf("ok %s (%.0f ms)\n", id.c_str(), ms);
    } else {
      failed++;
      std::printf("FAIL %s: %s\n", id.c_str(), err.c_str());
    }
  }
  std::printf("%s [%s]: %d passed, %d failed, %d skipped (listed in the skip file)%s\n", suite.c_str(), range.c_str(), passed, failed, skipped,
              now_pass ? (", " + std::to_string(now_pass) + " listed as skipped now pass").c_str() : "");
  return failed ? 1 : 0;
}
