// ggml's tensor types as GGUF stores them, and their dequantization as lazy tensor code (gguf_quants.cpp): the
// quantized bytes stay as they are in device memory and the bit ops, casts and reshapes that turn them into
// float32 fuse into whatever kernel reads the weights (a decode step's matmul reads the quantized bytes once).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tg/tensor.h"

namespace tg::state {

// ggml's type ids (ggml.h's enum ggml_type), the ones GGUF files hold
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, BF16 = 30,
};

struct GgmlTypeInfo {
  const char* name;    // "Q4_K"
  int64_t block_size;  // elements per block (1 for the plain types)
  int64_t type_size;   // bytes per block
};
// The layout of a type this reader supports (F32, F16, BF16, the integer and F64 types, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K); nullopt for any other id.
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type);

// `raw`: a 1-d uint8 tensor of numel / block_size * type_size bytes, blocks in file order. Returns the float32
// values, shape (numel,), lazily (nothing is realized here). numel must be a multiple of the block size.
Tensor dequantize(const Tensor& raw, GgmlType type, int64_t numel, SourceLocation where = SourceLocation::current());

}  // namespace tg::state
