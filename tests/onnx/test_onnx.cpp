// The ONNX frontend beyond ONNX's own suite: models written here (a few lines of protobuf wire format) for the errors
// a user meets (unknown op, missing or misshapen input, bad attribute, initializer bytes that disagree with the
// shape), statistics of the random ops (whose expected values no runtime can reproduce), and a fuzz of the loader
// with truncated and mutated files: every one loads or raises a tg::Error, never a crash or an out-of-bounds read
// (the sanitized CI run checks the latter).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include <unistd.h>

#include "tg/jit.h"
#include "tg/onnx.h"

namespace fs = std::filesystem;
using tg::Tensor;

namespace {

// ---- a minimal protobuf writer: enough of ModelProto to build one-node models ----
std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  return s + static_cast<char>(v);
}
std::string field_varint(int field, uint64_t v) { return varint(uint64_t(field) << 3) + varint(v); }
std::string field_bytes(int field, const std::string& b) { return varint((uint64_t(field) << 3) | 2) + varint(b.size()) + b; }

std::string value_info(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += field_bytes(1, field_varint(1, static_cast<uint64_t>(d)));
  std::string tensor_type = field_varint(1, static_cast<uint64_t>(elem_type)) + field_bytes(2, shape);
  return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type));
}
std::string attr_int(const std::string& name, int64_t v) { return field_bytes(1, name) + field_varint(3, static_cast<uint64_t>(v)) + field_varint(20, 2); }
std::string attr_ints(const std::string& name, const std::vector<int64_t>& v) {
  std::string s = field_bytes(1, name);
  for (int64_t x : v) s += field_varint(8, static_cast<uint64_t>(x));
  return s + field_varint(20, 7);
}
std::string attr_string(const std::string& name, const std::string& v) { return field_bytes(1, name) + field_bytes(4, v) + field_varint(20, 3); }
std::string attr_float(const std::string& name, float v) {
  std::string f(4, '\0');
  std::memcpy(f.data(), &v, 4);
  return field_bytes(1, name) + varint((2 << 3) | 5) + f + field_varint(20, 1);
}
std::string node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                 const std::vector<std::string>& attrs = {}, const std::string& name = "n0") {
  std::string s;
  for (const auto& i : in) s += field_bytes(1, i);
  for (const auto& o : out) s += field_bytes(2, o);
  s += field_bytes(3, name) + field_bytes(4, op);
  for (const auto& a : attrs) s += field_bytes(5, a);
  return s;
}
// A float32 initializer whose raw bytes hold `bytes` bytes (not necessarily what the dims need).
std::string initializer(const std::string& name, const std::vector<int64_t>& dims, size_t bytes) {
  std::string s;
  for (int64_t d : dims) s += field_varint(1, static_cast<uint64_t>(d));
  return s + field_varint(2, 1) + field_bytes(8, name) + field_bytes(9, std::string(bytes, '\0'));
}
std::string model(const std::vector<std::string>& nodes, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  const std::vector<std::string>& inits = {}, int64_t opset = 17) {
  std::string g;
  for (const auto& n : nodes) g += field_bytes(1, n);
  g += field_bytes(2, "g");
  for (const auto& i : inits) g += field_bytes(5, i);
  for (const auto& i : inputs) g += field_bytes(11, i);
  for (const auto& o : outputs) g += field_bytes(12, o);
  return field_varint(1, 8) + field_bytes(7, g) + field_bytes(8, field_varint(2, static_cast<uint64_t>(opset)));
}

fs::path write_temp(const std::string& bytes, const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("tg_onnx_test_" + std::to_string(::getpid()) + "_" + name + ".onnx");
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

// The model `bytes` hold, loaded from a temporary file (removed again, also when loading throws).
tg::onnx::Model load_bytes(const std::string& bytes, const std::string& name) {
  fs::path p = write_temp(bytes, name);
  struct Remove { fs::path p; ~Remove() { fs::remove(p); } } remove{p};
  return tg::onnx::load(p.string());
}

// The message of the tg::Error that running `bytes` with `inputs` raises ("" if none).
std::string error_of(const std::string& bytes, const std::map<std::string, Tensor>& inputs, const std::string& name) {
  std::string msg;
  try {
    tg::onnx::Model m = load_bytes(bytes, name);
    for (auto& [k, v] : m.run(inputs)) v.realize();
  } catch (const tg::Error& e) {
    msg = e.what();
  }
  if (std::getenv("VERBOSE")) std::printf("%s\n", msg.c_str());
  return msg;
}

const int FLOAT = 1;

}  // namespace

TEST(Onnx, RunsAModelWrittenHere) {
  std::string m = model({node("Add", {"x", "y"}, {"z"})}, {value_info("x", FLOAT, {2, 3}), value_info("y", FLOAT, {2, 3})}, {value_info("z", FLOAT, {2, 3})});
  tg::onnx::Model mod = load_bytes(m, "add");
  Tensor x = Tensor::arange(6).reshape({2, 3}).cast(tg::dtypes::float32);
  auto out = mod.run({{"x", x}, {"y", x}});
  EXPECT_EQ(out.at("z").to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
}

TEST(Onnx, ConstantsAreMadeOnceSoTinyJitReplaysReadTheSameBuffers) {
  // a Constant and a Shape (host values) beside an input: under TinyJit, the capture copies no host data (the
  // model gives the tensors of the first run again), and every replay computes with its own input
  std::string m = model({node("Constant", {}, {"c"}, {attr_float("value_float", 2.5f)}, "n0"), node("Add", {"x", "c"}, {"y"}, {}, "n1"),
                         node("Shape", {"x"}, {"s"}, {}, "n2"), node("Cast", {"s"}, {"sf"}, {attr_int("to", FLOAT)}, "n3"),
                         node("Mul", {"y", "sf"}, {"z"}, {}, "n4")},
                        {value_info("x", FLOAT, {3})}, {value_info("z", FLOAT, {3})});
  tg::onnx::Model mod = load_bytes(m, "constants");
  tg::JitFunction jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{mod.run({{"x", in[0]}}).at("z").realize()}; });
  testing::internal::CaptureStderr();
  for (int call = 0; call < 4; call++) {
    Tensor x = Tensor(std::vector<float>{1.0f * call, 2, -3}, {3}).realize();
    EXPECT_EQ(jit.call({x})[0].to_vector<float>(), (std::vector<float>{(call + 2.5f) * 3, 4.5f * 3, -0.5f * 3})) << "call " << call;
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(jit.captured());
  EXPECT_EQ(warnings.find("host data"), std::string::npos) << warnings;
}

TEST(Onnx, BadInputGivesErrorsNamingWhatIsWrong) {
  auto in23 = value_info("x", FLOAT, {2, 3});
  Tensor x = Tensor::ones({2, 3});
  std::string e = error_of(model({node("NoSuchOp", {"x"}, {"y"}, {}, "mystery")}, {in23}, {value_info("y", FLOAT, {2, 3})}), {{"x", x}}, "unknown");
  EXPECT_NE(e.find("NoSuchOp"), std::string::npos) << e;
  EXPECT_NE(e.find("mystery"), std::string::npos) << e;
  std::string relu = model({node("Relu", {"x"}, {"y"})}, {in23}, {value_info("y", FLOAT, {2, 3})});
  e = error_of(relu, {}, "missing");
  EXPECT_NE(e.find("'x'"), std::string::npos) << e;
  e = error_of(relu, {{"x", Tensor::ones({3, 2})}}, "misshapen");
  EXPECT_NE(e.find("(2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("(3, 2)"), std::string::npos) << e;
  // an attribute out of range, and one the op does not know
  e = error_of(model({node("Flatten", {"x"}, {"y"}, {attr_int("axis", 5)})}, {in23}, {value_info("y", FLOAT, {6})}), {{"x", x}}, "axis");
  EXPECT_NE(e.find("Flatten"), std::string::npos) << e;
  e = error_of(model({node("Relu", {"x"}, {"y"}, {attr_float("alpha", 0.5f)})}, {in23}, {value_info("y", FLOAT, {2, 3})}), {{"x", x}}, "unknown_attr");
  EXPECT_NE(e.find("alpha"), std::string::npos) << e;
  e = error_of(model({node("Transpose", {"x"}, {"y"}, {attr_ints("perm", {0, 5})})}, {in23}, {value_info("y", FLOAT, {2, 3})}), {{"x", x}}, "perm");
  EXPECT_NE(e.find("Transpose"), std::string::npos) << e;
  // an initializer whose bytes disagree with its shape
  e = error_of(model({node("Add", {"x", "w"}, {"y"})}, {in23}, {value_info("y", FLOAT, {2, 3})}, {initializer("w", {2, 3}, 20)}), {{"x", x}}, "init");
  EXPECT_NE(e.find("'w'"), std::string::npos) << e;
  // a node reading a name nothing defines
  e = error_of(model({node("Relu", {"nowhere"}, {"y"})}, {in23}, {value_info("y", FLOAT, {2, 3})}), {{"x", x}}, "undefined");
  EXPECT_NE(e.find("nowhere"), std::string::npos) << e;
  // RNN weights of the wrong shape
  e = error_of(model({node("RNN", {"x", "w", "r"}, {"y"}, {attr_int("hidden_size", 4)})},
                     {value_info("x", FLOAT, {5, 2, 3}), value_info("w", FLOAT, {1, 4, 2}), value_info("r", FLOAT, {1, 4, 4})}, {value_info("y", FLOAT, {5, 1, 2, 4})}),
               {{"x", Tensor::ones({5, 2, 3})}, {"w", Tensor::ones({1, 4, 2})}, {"r", Tensor::ones({1, 4, 4})}}, "rnn");
  EXPECT_NE(e.find("W must be"), std::string::npos) << e;
}

// QLinearConv pads by auto_pad as Conv does: SAME_UPPER on a 4x4 input with a 3x3 kernel and stride 2 is the
// explicit pads (0, 0, 1, 1), which gives a 2x2 output (without the padding it would be 1x1).
TEST(Onnx, QLinearConvHonoursAutoPad) {
  const int UINT8 = 2;
  std::vector<std::string> names = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"};
  std::vector<std::string> infos = {value_info("x", UINT8, {1, 1, 4, 4}), value_info("xs", FLOAT, {}), value_info("xz", UINT8, {}),
                                    value_info("w", UINT8, {1, 1, 3, 3}), value_info("ws", FLOAT, {}), value_info("wz", UINT8, {}),
                                    value_info("ys", FLOAT, {}), value_info("yz", UINT8, {})};
  auto run = [&](const std::string& pad_attr, const std::string& name) {
    std::string m = model({node("QLinearConv", names, {"y"}, {attr_ints("strides", {2, 2}), pad_attr})}, infos, {value_info("y", UINT8, {1, 1, 2, 2})}, {}, 13);
    std::map<std::string, Tensor> in = {{"x", Tensor::arange(16).reshape({1, 1, 4, 4}).cast(tg::dtypes::uint8)}, {"xs", Tensor(0.5f)},
                                        {"xz", Tensor(3).cast(tg::dtypes::uint8)}, {"w", Tensor::arange(9).reshape({1, 1, 3, 3}).cast(tg::dtypes::uint8)},
                                        {"ws", Tensor(0.25f)}, {"wz", Tensor(4).cast(tg::dtypes::uint8)}, {"ys", Tensor(1.5f)}, {"yz", Tensor(100).cast(tg::dtypes::uint8)}};
    return load_bytes(m, name).run(in).at("y");
  };
  Tensor same = run(attr_string("auto_pad", "SAME_UPPER"), "qconv_same"), explicit_pads = run(attr_ints("pads", {0, 0, 1, 1}), "qconv_pads");
  EXPECT_EQ(same.shape(), (tg::Shape{1, 1, 2, 2}));
  EXPECT_EQ(same.to_vector<uint8_t>(), explicit_pads.to_vector<uint8_t>());
}

// Bernoulli and training-mode Dropout are random: their values are checked by their statistics.
TEST(Onnx, RandomOpsHaveTheirDistributions) {
  const int64_t n = 20000;
  std::string m = model({node("Bernoulli", {"p"}, {"y"})}, {value_info("p", FLOAT, {n})}, {value_info("y", FLOAT, {n})}, {}, 15);
  tg::onnx::Model bern = load_bytes(m, "bernoulli");
  std::vector<float> y = bern.run({{"p", Tensor::full({n}, 0.3)}}).at("y").to_vector<float>();
  double ones = 0;
  for (float v : y) { ASSERT_TRUE(v == 0.0f || v == 1.0f); ones += v; }
  EXPECT_NEAR(ones / n, 0.3, 5 * std::sqrt(0.21 / n));  // 5 sigma
  // Dropout(ratio 0.25, training): a quarter zeros, the rest scaled by 1 / 0.75, the mask saying which
  std::string d = model({node("Dropout", {"x", "ratio", "training"}, {"y", "mask"})},
                        {value_info("x", FLOAT, {n}), value_info("ratio", FLOAT, {}), value_info("training", 9, {})},
                        {value_info("y", FLOAT, {n}), value_info("mask", 9, {n})}, {}, 13);
  tg::onnx::Model drop = load_bytes(d, "dropout");
  auto out = drop.run({{"x", Tensor::full({n}, 3.0)}, {"ratio", Tensor(0.25f)}, {"training", Tensor(true)}});
  std::vector<float> yv = out.at("y").to_vector<float>();
  std::vector<bool> keep = out.at("mask").to_vector<bool>();
  double dropped = 0;
  for (int64_t k = 0; k < n; k++) {
    ASSERT_FLOAT_EQ(yv[static_cast<size_t>(k)], keep[static_cast<size_t>(k)] ? 4.0f : 0.0f);
    dropped += !keep[static_cast<size_t>(k)];
  }
  EXPECT_NEAR(dropped / n, 0.25, 5 * std::sqrt(0.25 * 0.75 / n));
}

// Truncated and mutated copies of real models (ONNX's test data, where installed): each loads or raises a tg::Error,
// and one that loads runs on the test's own inputs or raises a tg::Error (a mutated attribute, shape or type)
TEST(Onnx, LoaderAndRunSurviveTruncatedAndMutatedFiles) {
  const fs::path data = "/usr/share/libonnx-testdata/data";
  std::vector<fs::path> models = {data / "node/test_conv_with_strides_padding/model.onnx", data / "node/test_lstm_with_peepholes/model.onnx",
                                  data / "node/test_if_seq/model.onnx", data / "pytorch-converted/test_Conv2d_groups/model.onnx"};
  if (!fs::exists(models[0])) GTEST_SKIP() << "no ONNX test data (Debian: apt-get install libonnx-testdata)";
  std::mt19937 rng(1234);
  int loaded = 0, refused = 0, ran = 0, run_refused = 0;
  for (const fs::path& src : models) {
    if (!fs::exists(src)) continue;
    std::ifstream in(src, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> variants;
    for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 97)) variants.push_back(bytes.substr(0, cut));
    for (int k = 0; k < 150; k++) {
      std::string m = bytes;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; f++) {
        size_t at = rng() % m.size();
        switch (rng() % 3) {
          case 0: m[at] = static_cast<char>(rng()); break;                // a random byte
          case 1: m[at] = static_cast<char>(0xff); break;                 // a varint that never ends, a huge length
          default: m[at] = static_cast<char>(m[at] ^ (1 << (rng() % 8)));  // one bit
        }
      }
      variants.push_back(m);
    }
    for (size_t k = 0; k < variants.size(); k++) {
      std::optional<tg::onnx::Model> model;
      try {
        model = load_bytes(variants[k], "fuzz");
        loaded++;
      } catch (const tg::Error&) {
        refused++;
      } catch (const std::exception& e) {
        ADD_FAILURE() << src << " variant " << k << ": not a tg::Error: " << e.what();
      }
      if (!model) continue;
      try {
        std::map<std::string, tg::onnx::Value> inputs;
        for (size_t i = 0; i < model->inputs().size(); i++) {
          fs::path pb = src.parent_path() / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
          if (fs::exists(pb)) inputs[model->inputs()[i].name] = tg::onnx::load_value_proto(pb.string(), model->inputs()[i]);
        }
        for (auto& [name, v] : model->run_values(inputs))
          for (Tensor t : v.is_tensor() ? std::vector<Tensor>{v.tensor()} : v.is_sequence() ? v.sequence() : std::vector<Tensor>{})
            t.realize();
        ran++;
      } catch (const tg::Error&) {
        run_refused++;
      } catch (const std::exception& e) {
        ADD_FAILURE() << src << " variant " << k << " run: not a tg::Error: " << e.what();
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(ran, 0);
  std::printf("loader fuzz: %d variants loaded, %d refused with a tg::Error; of those loaded %d ran, %d refused\n", loaded,
              refused, ran, run_refused);
}
