// ggml's tensor types dequantized by lazy tensor code (src/state/gguf_quants.cpp) against the goldens in
// tests/golden/gguf, written by tools/gguf_reference.py's numpy dequantizer (which was checked bit for bit against
// ggml's own dequantize_row_* functions): every value must be the same float32 bit for bit, for blocks quantized
// from normal values with zeros and outliers and for blocks of random bytes. Then the table of layouts, the errors,
// and that the dequantization fuses into the kernel that reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tg/counters.h>
#include <tg/state.h>
#include <tg/tg.h>

#include "codegen/lower.h"
#include "schedule/schedule.h"
#include "state/gguf_quants.h"
#include "support/expect_error.h"

using namespace tg;
using state::GgmlType;

namespace {

const std::string kGoldens = std::string(TG_GOLDEN_DIR) + "/gguf/";

struct Case {
  const char* name;
  GgmlType type;
};
const Case kCases[] = {
    {"F32", GgmlType::F32},   {"F16", GgmlType::F16},   {"BF16", GgmlType::BF16}, {"F64", GgmlType::F64},
    {"I8", GgmlType::I8},     {"I16", GgmlType::I16},   {"I32", GgmlType::I32},   {"I64", GgmlType::I64},
    {"Q4_0", GgmlType::Q4_0}, {"Q4_1", GgmlType::Q4_1}, {"Q5_0", GgmlType::Q5_0}, {"Q5_1", GgmlType::Q5_1},
    {"Q8_0", GgmlType::Q8_0}, {"Q2_K", GgmlType::Q2_K}, {"Q3_K", GgmlType::Q3_K}, {"Q4_K", GgmlType::Q4_K},
    {"Q5_K", GgmlType::Q5_K}, {"Q6_K", GgmlType::Q6_K},
};

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// every value the same bits, NaN where the reference has NaN (any NaN)
void expect_same_bits(const std::vector<float>& have, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(have.size(), want.size()) << what;
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); i++) {
    bool same = std::isnan(want[i]) ? std::isnan(have[i]) : bits_of(have[i]) == bits_of(want[i]);
    if (!same && wrong++ < 8)
      ADD_FAILURE() << what << " value " << i << ": " << have[i] << " (0x" << std::hex << bits_of(have[i]) << "), want "
                    << want[i] << " (0x" << bits_of(want[i]) << std::dec << ")";
  }
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " of " << want.size() << " values differ";
}

void check_golden(const Case& c, const std::string& suffix) {
  std::string stem = kGoldens + c.name + suffix;
  Tensor raw = load_npy(stem + ".raw.npy"), want = load_npy(stem + ".want.npy");
  ASSERT_EQ(raw.dtype(), dtypes::uint8);
  ASSERT_EQ(want.dtype(), dtypes::float32);
  Tensor have = state::dequantize(raw, c.type, want.numel());
  EXPECT_EQ(have.shape(), Shape{want.numel()});
  EXPECT_EQ(have.dtype(), dtypes::float32);
  expect_same_bits(have.to_vector<float>(), want.to_vector<float>(), std::string(c.name) + suffix);
}

}  // namespace

TEST(GgufQuants, EveryTypeMatchesTheReferenceBitForBit) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    check_golden(c, "");
  }
}

TEST(GgufQuants, RandomBlocksMatchTheReferenceBitForBit) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    check_golden(c, ".random");
  }
}

// The same blocks repeated to 64 times the size: the kernels of a larger tensor are optimized differently (split
// across threads, unrolled, vectorized), and must give the same bits.
TEST(GgufQuants, LargeTensorsMatchTheReferenceBitForBit) {
  constexpr int64_t kCopies = 64;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::string stem = kGoldens + c.name + ".random";
    Tensor raw = load_npy(stem + ".raw.npy");
    std::vector<float> want1 = load_npy(stem + ".want.npy").to_vector<float>(), want;
    for (int64_t i = 0; i < kCopies; i++) want.insert(want.end(), want1.begin(), want1.end());
    Tensor big = raw.reshape({1, raw.numel()}).expand({kCopies, raw.numel()}).contiguous().reshape({-1});
    big.realize();
    Tensor have = state::dequantize(big, c.type, static_cast<int64_t>(want.size()));
    expect_same_bits(have.to_vector<float>(), want, std::string(c.name) + " x" + std::to_string(kCopies));
  }
}

TEST(GgufQuants, TypeTableIsGgmls) {
  // ids from ggml.h's enum ggml_type, sizes from ggml-common.h's block structs
  struct Row {
    uint32_t id;
    const char* name;
    int64_t block, bytes;
  };
  const Row rows[] = {{0, "F32", 1, 4},      {1, "F16", 1, 2},      {2, "Q4_0", 32, 18},   {3, "Q4_1", 32, 20},
                      {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},    {10, "Q2_K", 256, 84},
                      {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210},
                      {24, "I8", 1, 1},       {25, "I16", 1, 2},      {26, "I32", 1, 4},      {27, "I64", 1, 8},
                      {28, "F64", 1, 8},      {30, "BF16", 1, 2}};
  for (const Row& r : rows) {
    auto info = state::ggml_type_info(r.id);
    ASSERT_TRUE(info.has_value()) << r.name;
    EXPECT_STREQ(info->name, r.name);
    EXPECT_EQ(info->block_size, r.block) << r.name;
    EXPECT_EQ(info->type_size, r.bytes) << r.name;
  }
  // removed (4, 5), not supported here (Q8_1 and Q8_K are never stored, the IQ types, TQ, MXFP4), and past the end
  for (uint32_t id : {4u, 5u, 9u, 15u, 16u, 20u, 23u, 29u, 31u, 34u, 39u, 1000u})
    EXPECT_FALSE(state::ggml_type_info(id).has_value()) << id;
}

TEST(GgufQuants, ZeroValuesGiveAnEmptyTensor) {
  Tensor raw = Tensor::zeros({0}, dtypes::uint8);
  EXPECT_EQ(state::dequantize(raw, GgmlType::Q4_K, 0).shape(), Shape{0});
  EXPECT_EQ(state::dequantize(raw, GgmlType::F16, 0).shape(), Shape{0});
}

TEST(GgufQuants, Errors) {
  using tg::testing::expect_error;
  Tensor q4 = Tensor::zeros({36}, dtypes::uint8);  // two Q4_0 blocks
  expect_error<ArgumentError>([&] { state::dequantize(q4, GgmlType::Q4_0, 48); }, "gguf dequantize",
                              {"Q4_0", "48 values", "32-value blocks"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4, GgmlType::Q4_K, 256); }, "gguf dequantize",
                              {"Q4_K", "256 values", "1 blocks of 144 bytes = 144 bytes", "(36,)"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4, GgmlType::Q4_0, 96); }, "gguf dequantize",
                              {"Q4_0", "96 values", "54 bytes", "(36,)"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4.reshape({2, 18}), GgmlType::Q4_0, 64); }, "gguf dequantize",
                              {"Q4_0", "(2, 18)", "1-d uint8"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4.cast(dtypes::int8), GgmlType::Q4_0, 64); },
                              "gguf dequantize", {"Q4_0", "int8", "1-d uint8"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4, static_cast<GgmlType>(16), 256); }, "gguf dequantize",
                              {"type id 16", "not a ggml type this reader supports"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4, GgmlType::Q8_1, 64); }, "gguf dequantize",
                              {"type id 9"}, __FILE__);
  expect_error<ArgumentError>([&] { state::dequantize(q4, GgmlType::F32, -4); }, "gguf dequantize",
                              {"F32", "-4 values"}, __FILE__);
}

namespace {

// A weight of `type` from the golden blocks (4 blocks), as a realized uint8 tensor, and its values.
struct Weight {
  Tensor raw;
  std::vector<float> values;
};
Weight golden_weight(const char* name) {
  std::string stem = kGoldens + name + ".random";
  Weight w{load_npy(stem + ".raw.npy"), load_npy(stem + ".want.npy").to_vector<float>()};
  w.raw.realize();
  return w;
}

}  // namespace

// The decode step's matmul: one row of activations times the quantized weight, read in place. Dequantization adds
// no kernel of its own (one kernel in all), for both orientations (GGUF stores a linear layer's weight (out, in):
// x @ W.T) and every quantized type, and the values are the matmul of the reference's floats.
//
// With several rows the matmul broadcasts the weight over them, and the scheduler stores a broadcast value that
// costs more than a few ops (kMaxRecomputedOps) rather than recompute it per row: the weight is then dequantized
// once into a buffer and read by the matmul, two kernels (the cheap Q4_0, Q4_1 and Q8_0 still fuse).
TEST(GgufQuants, DequantizationFusesIntoTheMatmulThatReadsIt) {
  for (const Case& c : kCases) {
    auto info = state::ggml_type_info(static_cast<uint32_t>(c.type));
    if (info->block_size == 1) continue;
    SCOPED_TRACE(c.name);
    Weight w = golden_weight(c.name);
    int64_t n = static_cast<int64_t>(w.values.size()), k = 32, m = n / k;
    for (int64_t rows : {1, 4}) {
      std::vector<float> xs(rows * k);
      for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<float>((i * 7) % 11) / 8.0f - 0.5f;
      Tensor x(xs, {rows, k});
      x.realize();
      for (bool transposed : {false, true}) {
        std::string what = std::to_string(rows) + (transposed ? " rows @ W.T" : " rows @ W");
        Tensor weight = state::dequantize(w.raw, c.type, n);
        Tensor y = transposed ? x.matmul(weight.reshape({m, k}).T()) : x.matmul(weight.reshape({k, m}));
        int64_t before = GlobalCounters::kernel_count;
        y.realize();
        if (rows == 1) EXPECT_EQ(GlobalCounters::kernel_count - before, 1) << what;
        else EXPECT_LE(GlobalCounters::kernel_count - before, 2) << what;
        Tensor ref_w(w.values, transposed ? Shape{m, k} : Shape{k, m});
        Tensor ref = x.matmul(transposed ? ref_w.T() : ref_w);
        std::vector<float> have = y.to_vector<float>(), want = ref.to_vector<float>();
        ASSERT_EQ(have.size(), want.size());
        for (size_t i = 0; i < want.size(); i++)
          EXPECT_NEAR(have[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " " << i;
      }
    }
  }
}

// A decode step's matrix-vector product over 4- and 8-bit blocks runs as vector code along the blocks: the
// nibbles or bytes of 16 weights are one vector load, shifted, masked and offset as an integer vector, converted to
// float32 and multiplied by their block's scale (the same for the 16 lanes). Q4_0 decode went 5.2 -> 17 tok/s.
TEST(GgufQuants, AMatrixVectorProductOverBlocksIsVectorCode) {
  for (const char* name : {"Q4_0", "Q8_0"}) {
    SCOPED_TRACE(name);
    const Case& c = *std::find_if(std::begin(kCases), std::end(kCases), [&](const Case& k) { return std::string(k.name) == name; });
    Weight w = golden_weight(name);
    int64_t n = static_cast<int64_t>(w.values.size()), k = 64, m = n / k;
    std::vector<float> xs(k);
    for (int64_t i = 0; i < k; i++) xs[i] = static_cast<float>((i * 5) % 9) / 4.0f - 1.0f;
    Tensor x(xs, {1, k});
    x.realize();
    Tensor y = x.matmul(state::dequantize(w.raw, c.type, n).reshape({m, k}).T());
    schedule::Schedule s = schedule::create_schedule({y.uop()});
    ASSERT_EQ(s.items.size(), 1u);
    codegen::LoweredKernel base = codegen::lower(s.items[0].ast);
    std::vector<codegen::Opt> opts = codegen::choose_opts(base);
    ASSERT_FALSE(opts.empty());
    EXPECT_EQ(opts[0].op, codegen::OptOp::VECTOR) << codegen::opts_str(opts);
    EXPECT_TRUE(codegen::lower(s.items[0].ast, opts).vectorized) << codegen::opts_str(opts);
    std::vector<float> have = y.to_vector<float>(), want = x.matmul(Tensor(w.values, {m, k}).T()).to_vector<float>();
    for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(have[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
  }
}

// A gated MLP's two products over quantized weights, silu(x @ W1.T) * (x @ W2.T), fuse into one kernel with two
// sums over the blocks. It is vector code: silu's masks on the combined sums (x > 0, x != 0) stay scalars (they
// were widened back to vectors, and the kernel ran as 16 scalar copies: 128 x 5632 x 2048 took 430 ms, the two
// products apart 19). Each copy of the register block holds both sums, so the block is half as large: 32
// accumulators spilled (55 ms; now 23).
TEST(GgufQuants, TwoProductsOverQuantizedWeightsInOneKernelAreVectorCode) {
  const int64_t rows = 8, k = 256, m = 64;
  auto weight = [&](GgmlType type, uint32_t seed) {  // random codes, a scale of 2^-4 per block
    auto info = state::ggml_type_info(static_cast<uint32_t>(type));
    std::vector<uint8_t> bytes(static_cast<size_t>(m * k / info->block_size * info->type_size));
    for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 13);
    for (size_t b = 0; b < bytes.size(); b += static_cast<size_t>(info->type_size)) bytes[b] = 0x00, bytes[b + 1] = 0x2c;
    Tensor raw(bytes, {static_cast<int64_t>(bytes.size())});
    raw.realize();
    return state::dequantize(raw, type, m * k).reshape({m, k});
  };
  Tensor w1 = weight(GgmlType::Q4_0, 1), w2 = weight(GgmlType::Q8_0, 7);
  std::vector<float> xs(rows * k);
  for (size_t i = 0; i < xs.size(); i++) xs[i] = static_cast<float>((i * 7) % 13) / 8.0f - 0.75f;
  Tensor x(xs, {rows, k});
  x.realize();
  Tensor y = x.matmul(w1.T()).silu() * x.matmul(w2.T());
  schedule::Schedule s = schedule::create_schedule({y.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  codegen::LoweredKernel base = codegen::lower(s.items[0].ast);
  std::vector<codegen::Opt> opts = codegen::choose_opts(base);
  EXPECT_TRUE(codegen::lower(s.items[0].ast, opts).vectorized) << codegen::opts_str(opts);
  int64_t copies = 1;
  for (const codegen::Opt& o : opts)
    if (o.op == codegen::OptOp::UPCAST) copies *= o.amount;
  EXPECT_LE(2 * copies, 20) << "vector accumulators: " << codegen::opts_str(opts);
  // against the products of the dequantized values (checked bit for bit above), summed in double on the host
  std::vector<float> a = w1.contiguous().to_vector<float>(), b = w2.contiguous().to_vector<float>(), have = y.to_vector<float>();
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < m; j++) {
      double g = 0, u = 0;
      for (int64_t i = 0; i < k; i++) g += double(xs[r * k + i]) * a[j * k + i], u += double(xs[r * k + i]) * b[j * k + i];
      double want = g / (1 + std::exp(-g)) * u;
      EXPECT_NEAR(have[r * m + j], want, 1e-4 * (1 + std::fabs(want))) << r << ", " << j;
    }
}

// Nothing runs while the graph is built: dequantize only adds ops.
TEST(GgufQuants, DequantizeIsLazy) {
  Weight w = golden_weight("Q6_K");
  int64_t before = GlobalCounters::kernel_count;
  Tensor v = state::dequantize(w.raw, GgmlType::Q6_K, 1024);
  Tensor doubled = v * 2;
  EXPECT_EQ(GlobalCounters::kernel_count, before);
  EXPECT_FALSE(v.is_realized());
  EXPECT_EQ(doubled.to_vector<float>()[5], w.values[5] * 2);
}
