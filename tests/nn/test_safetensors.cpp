// safetensors: a file written by an independent numpy implementation (tools/safetensors_numpy.py) read byte for
// byte, round trips of every dtype, lazy loading, and malformed files.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <unistd.h>

#include "support/expect_error.h"
#include "support/scratch.h"
#include "tg/tg.h"

namespace tg {
namespace {

const std::string kNumpyFile = std::string(TG_GOLDEN_DIR) + "/numpy.safetensors";
const std::map<std::string, std::string> kNumpyMetadata = {{"format", "pt"}, {"written by", "numpy \"reference\"\n"}};

struct GoldenEntry {
  std::string name;
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;
};

DType dtype_of_code(const std::string& code) {
  const std::map<std::string, DType> codes = {
      {"BOOL", dtypes::bool_}, {"I8", dtypes::int8},     {"U8", dtypes::uint8},       {"I16", dtypes::int16},
      {"U16", dtypes::uint16}, {"I32", dtypes::int32},   {"U32", dtypes::uint32},     {"I64", dtypes::int64},
      {"U64", dtypes::uint64}, {"F16", dtypes::float16}, {"BF16", dtypes::bfloat16},  {"F32", dtypes::float32},
      {"F64", dtypes::float64}};
  return codes.at(code);
}

// tests/golden/safetensors.txt: "name CODE d0,d1 hexbytes" ("-" for no dims / no bytes)
std::vector<GoldenEntry> golden_entries() {
  std::ifstream in(std::string(TG_GOLDEN_DIR) + "/safetensors.txt");
  std::vector<GoldenEntry> out;
  std::string name, code, shape, hex;
  while (in >> name >> code >> shape >> hex) {
    GoldenEntry e{name, dtype_of_code(code), {}, {}};
    std::stringstream ss(shape == "-" ? "" : shape);
    for (std::string d; std::getline(ss, d, ',');) e.shape.push_back(std::stoll(d));
    for (size_t i = 0; hex != "-" && i < hex.size(); i += 2) e.bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    out.push_back(std::move(e));
  }
  return out;
}

std::string temp_path(const std::string& name) { return tg::testing::scratch_path(name); }

// Removed first, not truncated: ext4 flushes a file truncated and rewritten on close (auto_da_alloc), which made
// the thousand rewrites below take seconds.
void write_file(const std::string& path, const std::string& bytes) {
  std::remove(path.c_str());
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void expect_same(const StateDict& got, const std::vector<GoldenEntry>& want) {
  EXPECT_EQ(got.size(), want.size());
  for (const GoldenEntry& e : want) {
    auto it = got.find(e.name);
    ASSERT_NE(it, got.end()) << e.name;
    EXPECT_EQ(it->second.dtype(), e.dtype) << e.name;
    EXPECT_EQ(it->second.shape(), e.shape) << e.name;
    EXPECT_EQ(it->second.to_bytes(), e.bytes) << e.name;
  }
}

TEST(Safetensors, ReadsAFileWrittenByNumpy) {
  expect_same(safe_load(kNumpyFile), golden_entries());
  EXPECT_EQ(safe_load_metadata(kNumpyFile), kNumpyMetadata);
}

// Also writes the file that the ctest safetensors.numpy_reads_ours hands to the numpy reader.
TEST(Safetensors, RoundTripsEveryDtype) {
  const char* out = std::getenv("TG_NUMPY_OUT");
  std::string path = out && *out ? out : temp_path("roundtrip.safetensors");
  safe_save(safe_load(kNumpyFile), path, kNumpyMetadata);
  expect_same(safe_load(path), golden_entries());
  EXPECT_EQ(safe_load_metadata(path), kNumpyMetadata);
  // a computed tensor is realized and saved by value; loading onto another device works the same
  std::string p2 = temp_path("computed.safetensors");
  safe_save({{"x", Tensor::arange(6).reshape({2, 3}) * 2}}, p2);
  Tensor x = safe_load(p2, "CPU:1")["x"];
  EXPECT_EQ(x.device(), "CPU:1");
  EXPECT_EQ(x.to_vector<int32_t>(), (std::vector<int32_t>{0, 2, 4, 6, 8, 10}));
}

// 8-bit floats under the format's codes F8_E4M3 and F8_E5M2, as their bytes; the FNUZ variants have no code.
TEST(Safetensors, EightBitFloatsUseTheFormatsCodes) {
  std::string path = temp_path("fp8.safetensors");
  Tensor a = Tensor({0.5f, -3.0f, 448.0f}).cast(dtypes::fp8e4m3), b = Tensor({1.0f, 57344.0f}).cast(dtypes::fp8e5m2);
  safe_save({{"a", a}, {"b", b}}, path);
  std::string bytes = read_file(path);
  EXPECT_NE(bytes.find("\"dtype\":\"F8_E4M3\""), std::string::npos) << bytes.substr(0, 200);
  EXPECT_NE(bytes.find("\"dtype\":\"F8_E5M2\""), std::string::npos) << bytes.substr(0, 200);
  StateDict back = safe_load(path);
  EXPECT_EQ(back.at("a").dtype(), dtypes::fp8e4m3);
  EXPECT_EQ(back.at("a").to_bytes(), (std::vector<uint8_t>{double_to_fp8_bits(0.5, dtypes::fp8e4m3), double_to_fp8_bits(-3.0, dtypes::fp8e4m3), 0x7e}));
  EXPECT_EQ(back.at("b").cast(dtypes::float32).to_vector<float>(), (std::vector<float>{1.0f, 57344.0f}));
  EXPECT_THROW(safe_save({{"c", a.cast(dtypes::fp8e4m3fnuz)}}, path), DTypeError);
}

// The numpy file's data section starts at byte 1927, so its float32 tensors are not aligned in the mapping: their
// bytes are copied into memory of their own, at their first use
TEST(Safetensors, LoadingCopiesOnFirstUse) {
  int64_t before = GlobalCounters::mem_used;
  StateDict d = safe_load(kNumpyFile);
  EXPECT_EQ(GlobalCounters::mem_used, before);  // mapped, nothing copied yet
  Tensor big = d.at("f32.big");
  big.to_vector<float>();
  EXPECT_GE(GlobalCounters::mem_used - before, 3 * 5 * 7 * 4);
}

// Aligned tensors (safe_save aligns the data section to 8 bytes) are used in place on the CPU: their memory is the
// mapped file's pages, nothing is allocated or copied. The mapping is private: a write to a loaded tensor (an
// optimizer's step, under TinyJit too, whose replay swaps memories) stays in the process, and the file keeps its
// bytes. The values follow the same steps on a tensor made from host data.
TEST(Safetensors, AlignedTensorsUseTheFilesPagesAndWritesStayInTheProcess) {
  std::vector<float> w0(4096);
  for (size_t i = 0; i < w0.size(); i++) w0[i] = static_cast<float>(i % 97) / 16.0f - 3.0f;
  std::string path = tg::testing::scratch_path("inplace.safetensors");
  safe_save({{"w", Tensor(w0, {64, 64})}}, path);
  std::ifstream in(path, std::ios::binary);
  std::string file_before((std::istreambuf_iterator<char>(in)), {});

  int64_t before = GlobalCounters::mem_used;
  Tensor w = safe_load(path).at("w");
  EXPECT_EQ(w.to_vector<float>(), w0);
  EXPECT_EQ(GlobalCounters::mem_used, before) << "aligned bytes are used where the file is mapped";

  Tensor host(w0, {64, 64});  // the same steps on memory of our own
  Tensor x = Tensor::randn({8, 64}).realize();
  auto step = [&](Tensor& p) {
    Tensor loss = x.matmul(p).square().mean();
    Tensor g = (x.T().matmul(x.matmul(p)) * (2.0f / (8 * 64))).realize();  // d loss / d p
    p.assign(p - g * 0.01f).realize();
    return loss;
  };
  step(w), step(host);
  TinyJit<Tensor> jit_w([&](const std::vector<Tensor>&) { return step(w).realize(); });
  TinyJit<Tensor> jit_h([&](const std::vector<Tensor>&) { return step(host).realize(); });
  for (int i = 0; i < 4; i++) jit_w(), jit_h();
  EXPECT_EQ(w.to_vector<float>(), host.to_vector<float>());
  EXPECT_NE(w.to_vector<float>(), w0);

  std::ifstream again(path, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), file_before) << "a write reached the file";
  EXPECT_EQ(safe_load(path).at("w").to_vector<float>(), w0);
  std::remove(path.c_str());
}

// load_now copies what is still waiting (through a view too), and leaves lazy computations and empty handles alone
TEST(Safetensors, LoadNowCopiesWhatIsWaiting) {
  StateDict d = safe_load(kNumpyFile);
  Tensor big = d.at("f32.big"), lazy = big + 1;
  std::vector<float> want = safe_load(kNumpyFile).at("f32.big").to_vector<float>();
  int64_t before = GlobalCounters::mem_used;
  load_now({big.reshape({-1}).shrink({{2, 9}}), lazy, Tensor()});
  EXPECT_EQ(GlobalCounters::mem_used - before, 3 * 5 * 7 * 4);  // the view's buffer, whole; the lazy sum not run
  load_now({big});  // already there: nothing more
  EXPECT_EQ(GlobalCounters::mem_used - before, 3 * 5 * 7 * 4);
  EXPECT_EQ(big.to_vector<float>(), want);
}

TEST(Safetensors, ModelStateSurvivesSaveAndLoad) {
  struct Net : nn::Module {
    nn::Linear l1{3, 4};
    nn::BatchNorm bn{4};
    void state(const nn::StateVisitor& v) override { v("l1", l1), v("bn", bn); }
    Tensor operator()(const Tensor& x) { return bn(l1(x)); }
  };
  Net a, b;
  {
    TrainGuard train;
    a(Tensor::randn({5, 3})).realize();  // moves a's running statistics off their initial values
    a.bn.running_mean.realize(), a.bn.running_var.realize();
  }
  std::string path = temp_path("net.safetensors");
  safe_save(get_state_dict(a), path);
  load_state_dict(b, safe_load(path));
  Tensor x = Tensor::randn({2, 3}).realize();
  EXPECT_EQ(a(x).to_vector<float>(), b(x).to_vector<float>());
  EXPECT_EQ(b.bn.num_batches_tracked.item<int64_t>(), a.bn.num_batches_tracked.item<int64_t>());
}

// Two models loaded from one StateDict hold copies (PyTorch's load_state_dict copies too): writing one model's weight
// in place changes neither the other model nor the StateDict. Before: a lazily initialized model took the loaded
// tensor's buffer itself (the file's mapping), so an assign into model a's weight reached b and the StateDict.
TEST(Safetensors, ModelsLoadedFromOneStateHoldTheirOwnCopies) {
  struct Net : nn::Module {
    nn::Linear l1{3, 2};
    void state(const nn::StateVisitor& v) override { v("l1", l1); }
  };
  Net src;
  std::string path = temp_path("shared.safetensors");
  safe_save(get_state_dict(src), path);
  std::vector<float> want = src.l1.weight.to_vector<float>();
  StateDict s = safe_load(path);
  Net a, b;
  load_state_dict(a, s), load_state_dict(b, s);
  a.l1.weight.assign(Tensor::zeros({2, 3})).realize();
  a.l1.bias.shrink({{0, 1}}).assign(Tensor::ones({1})).realize();  // a partial write too (a KV cache's way)
  EXPECT_EQ(a.l1.weight.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(b.l1.weight.to_vector<float>(), want);
  EXPECT_EQ(s.at("l1.weight").to_vector<float>(), want);
  EXPECT_EQ(b.l1.bias.to_vector<float>(), src.l1.bias.to_vector<float>());
  EXPECT_EQ(s.at("l1.bias").to_vector<float>(), src.l1.bias.to_vector<float>());
}

// A file of one float32 tensor "t" with the given header (the length prefix is computed) and data bytes.
std::string file_with(const std::string& header, size_t data_bytes) {
  uint64_t n = header.size();
  return std::string(reinterpret_cast<const char*>(&n), 8) + header + std::string(data_bytes, '\1');
}

void expect_load_error(const std::string& bytes, const std::string& part, unsigned line) {
  SCOPED_TRACE("expect_load_error at line " + std::to_string(line));
  std::string path = temp_path("bad.safetensors");
  write_file(path, bytes);
  tg::testing::expect_error<ArgumentError>([&] {
    for (auto& [name, t] : safe_load(path)) t.to_bytes();
  }, "safe_load", {part, "bad.safetensors"}, "test_safetensors.cpp", 0);
}

TEST(Safetensors, MalformedFilesRaiseAClearError) {
  const std::string ok = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_EQ(safe_load([&] { write_file(temp_path("good.safetensors"), file_with(ok, 8)); return temp_path("good.safetensors"); }())
                .at("t").shape(), (Shape{2}));
  expect_load_error("abc", "too short", __LINE__);
  expect_load_error(file_with(ok, 8).substr(0, 20), "the header claims", __LINE__);
  expect_load_error(file_with(ok, 7), "ends at byte 8 of a data section of 7 bytes", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],)", 8), "bad JSON header at byte", __LINE__);
  expect_load_error(file_with("[1, 2]", 0), "does not start with '{'", __LINE__);
  expect_load_error(file_with(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", 8), "no valid \"dtype\"", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[0,2]}})", 8), "F8_E8M0, which tinygrad.cpp does not support", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "not a size", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "begin <= end", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "needs 12 bytes", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}})", 8), "too large", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"t":{}})", 8), "duplicate key \"t\"", __LINE__);
  expect_load_error(file_with(R"({"__metadata__":{"a":1}})", 0), "__metadata__ value 'a' is not a string", __LINE__);
  expect_load_error(file_with("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", 0), "nested deeper than 64", __LINE__);
  expect_load_error(file_with(R"({"t":"\ud800"})", 0), "lone surrogate", __LINE__);
  tg::testing::expect_error<ArgumentError>([] { safe_load(temp_path("no such file")); }, "safe_load", {"cannot open"},
                                           "test_safetensors.cpp", __LINE__ - 1);
}

// The format's own reader (huggingface/safetensors) refuses each of these; so do we.
TEST(Safetensors, DataSectionMustBeTiledExactly) {
  const std::string two = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[4],"data_offsets":)";
  expect_load_error(file_with(two + "[12,16]}}", 16), "tensor 'b' at bytes [12, 16) leaves a hole: the tensor before it ends at byte 8", __LINE__);
  expect_load_error(file_with(two + "[4,8]}}", 8), "tensor 'b' at bytes [4, 8) overlaps tensor 'a', which ends at byte 8", __LINE__);
  expect_load_error(file_with(two + "[0,4]}}", 8), "overlaps tensor", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12), "no tensor starts at byte 0", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 9),
                    "the tensors cover 8 bytes of a data section of 9 bytes (bytes no tensor covers)", __LINE__);
  expect_load_error(file_with("{}", 1), "cover 0 bytes of a data section of 1 bytes", __LINE__);
  // an empty tensor sits between two others, or at the end; the offsets' order need not be the header's
  std::string path = temp_path("tiled.safetensors");
  write_file(path, file_with(R"({"z":{"dtype":"U8","shape":[0,3],"data_offsets":[8,8]},"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]},)"
                             R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"I8","shape":[0],"data_offsets":[12,12]}})", 12));
  StateDict d = safe_load(path);
  EXPECT_EQ(d.at("b").to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 1, 1}));
  EXPECT_EQ(d.at("z").shape(), (Shape{0, 3}));
  // an empty tensor inside another's bytes overlaps it
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})", 8),
                    "tensor 'e' at bytes [4, 4) overlaps tensor 't', which ends at byte 8", __LINE__);
}

TEST(Safetensors, HeaderMustBeUtf8StrictJsonStartingWithABrace) {
  auto with_name = [](const std::string& name) {
    return file_with(R"({")" + name + R"(":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  };
  expect_load_error(with_name("t\xff"), "bad JSON header at byte 3: not UTF-8", __LINE__);
  expect_load_error(with_name("\xc0\xaf"), "not UTF-8", __LINE__);          // an overlong '/'
  expect_load_error(with_name("\xed\xa0\x80"), "not UTF-8", __LINE__);     // an encoded surrogate
  expect_load_error(with_name("\xf4\x90\x80\x80"), "not UTF-8", __LINE__);  // past U+10FFFF
  expect_load_error(with_name("\xe2\x82"), "not UTF-8", __LINE__);          // a cut sequence
  expect_load_error(file_with("{\"__metadata__\":{\"k\":\"\x80\"}}", 0), "not UTF-8", __LINE__);
  std::string path = temp_path("utf8.safetensors");
  write_file(path, with_name("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // 2-, 3- and 4-byte sequences
  EXPECT_EQ(safe_load(path).count("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), 1u);

  const std::string ok = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  expect_load_error(file_with(" " + ok, 8), "the header does not start with '{'", __LINE__);
  expect_load_error(file_with("\n" + ok, 8), "does not start with '{'", __LINE__);
  expect_load_error(file_with("", 0), "does not start with '{'", __LINE__);
  write_file(path, file_with(ok + "  \n ", 8));  // trailing whitespace is padding
  EXPECT_EQ(safe_load(path).size(), 1u);

  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,08]}})", 8), "leading zero", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}})", 8), "leading zero", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[00,8]}})", 8), "leading zero", __LINE__);
  expect_load_error(file_with(R"({"__metadata__":{},"x":-01})", 0), "leading zero", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[-0,2],"data_offsets":[0,0]}})", 0), "not a size", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", 8), "not a size", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8],}})", 8), "bad JSON header", __LINE__);
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}/**/)", 8), "text after the value", __LINE__);
}

// safe_save refuses what safe_load would: a name or metadata that is not UTF-8, named, and nothing is written.
// Before: the file was written and its own safe_load refused it ("bad JSON header at byte 3: not UTF-8").
TEST(Safetensors, SavingANameThatIsNotUtf8IsRefused) {
  std::string path = temp_path("not_utf8.safetensors");
  std::filesystem::remove(path);
  for (auto [dict, meta] : {std::pair<StateDict, std::map<std::string, std::string>>{{{"w\xff", Tensor({1.0f})}}, {}},
                            {{{"w", Tensor({1.0f})}}, {{"k", "\xc0\xaf"}}}}) {
    try {
      safe_save(dict, path, meta);
      ADD_FAILURE() << "no error";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("not UTF-8"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("safe_save"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

TEST(Safetensors, EmptyTensorsWithHugeDimensionsLoad) {
  std::string path = temp_path("empty_huge.safetensors");
  write_file(path, file_with(R"({"a":{"dtype":"F32","shape":[0,4294967296],"data_offsets":[0,0]},)"
                             R"("b":{"dtype":"I64","shape":[4294967296,0,3],"data_offsets":[0,0]},)"
                             R"("c":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                             R"("d":{"dtype":"F32","shape":[4294967296,1073741824,0],"data_offsets":[2,2]}})", 2));
  StateDict d = safe_load(path);
  EXPECT_EQ(d.at("a").shape(), (Shape{0, 4294967296}));
  EXPECT_EQ(d.at("a").numel(), 0);
  EXPECT_TRUE(d.at("a").to_bytes().empty());
  EXPECT_EQ(d.at("b").shape(), (Shape{4294967296, 0, 3}));
  EXPECT_TRUE(d.at("b").to_bytes().empty());
  EXPECT_EQ(d.at("c").to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(d.at("d").shape(), (Shape{4294967296, 1073741824, 0}));  // 2^62 elements of 4 bytes before the 0
  EXPECT_TRUE(d.at("d").to_bytes().empty());
  // our limit: the nonzero sizes of even an empty tensor must multiply to under 2^63 (its strides)
  expect_load_error(file_with(R"({"t":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})", 0),
                    "too large", __LINE__);
}

TEST(Safetensors, EveryTruncationOfARealFileRaises) {
  std::string bytes = read_file(kNumpyFile);
  ASSERT_GT(bytes.size(), 1000u);
  std::string path = temp_path("truncated.safetensors");
  for (size_t n = 0; n < bytes.size(); n++) {
    write_file(path, bytes.substr(0, n));
    EXPECT_THROW(safe_load(path), ArgumentError) << n << " bytes";
  }
}

TEST(Safetensors, SaveErrors) {
  tg::testing::expect_error<ArgumentError>([] { safe_save({{"__metadata__", Tensor::ones({1})}}, temp_path("x.safetensors")); },
                                           "safe_save", {"reserved"}, "test_safetensors.cpp", __LINE__ - 1);
  tg::testing::expect_error<ArgumentError>([] { safe_save({{"a", Tensor::ones({1})}}, "/nonexistent/dir/x.safetensors"); },
                                           "safe_save", {"cannot write /nonexistent/dir/x.safetensors"}, "test_safetensors.cpp", __LINE__ - 1);
}

}  // namespace
}  // namespace tg
