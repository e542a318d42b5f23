// ggml's quantized types turned into float32 by tensor ops only (see gguf_quants.h). Every value is computed from
// views of the raw bytes: each block's bytes are shrunk, reshaped and expanded into the order of its values, bits
// are picked with shifts by index tensors (arange), and the float arithmetic is ggml's dequantize_row_* product by
// product in the same order, so the values are bit for bit ggml's (the C renderer does not contract to fma). Nothing
// here realizes or reduces: the whole dequantization is elementwise over the bytes and fuses into its consumer.
//
// Layouts (ggml's src/ggml-common.h; QK_K = 256 values per super-block; f16 fields little-endian):
//   Q4_0  18 B / 32: d f16 | qs[16]                        (q - 8) * d; value j: low nibble of qs[j], j+16: high
//   Q4_1  20 B / 32: d f16 | m f16 | qs[16]                q * d + m
//   Q5_0  22 B / 32: d f16 | qh[4] | qs[16]                (q - 16) * d; bit 4 of value j: bit j of uint32 qh
//   Q5_1  24 B / 32: d f16 | m f16 | qh[4] | qs[16]        q * d + m
//   Q8_0  34 B / 32: d f16 | qs[32] int8                   q * d
//   Q2_K  84 B / 256: scales[16] | qs[64] | d | dmin      16 sub-blocks of 16: 2-bit q, 4-bit scale and min
//   Q3_K 110 B / 256: hmask[32] | qs[64] | scales[12] | d 16 sub-blocks of 16: 3-bit q, 6-bit scale
//   Q4_K 144 B / 256: d | dmin | scales[12] | qs[128]      8 sub-blocks of 32: 4-bit q, 6-bit scale and min
//   Q5_K 176 B / 256: d | dmin | scales[12] | qh[32] | qs[128]   as Q4_K with a fifth bit
//   Q6_K 210 B / 256: ql[128] | qh[64] | scales[16] int8 | d     16 sub-blocks of 16: 6-bit q, int8 scale
#include "state/gguf_quants.h"
#include "tensor/helpers.h"

#include <string>
#include <utility>
#include <vector>

namespace tg::state {

namespace {

constexpr int64_t QK_K = 256;

struct TypeRow {
  GgmlType type;
  GgmlTypeInfo info;
};
constexpr TypeRow kTypes[] = {
    {GgmlType::F32, {"F32", 1, 4}},       {GgmlType::F16, {"F16", 1, 2}},       {GgmlType::BF16, {"BF16", 1, 2}},
    {GgmlType::F64, {"F64", 1, 8}},       {GgmlType::I8, {"I8", 1, 1}},         {GgmlType::I16, {"I16", 1, 2}},
    {GgmlType::I32, {"I32", 1, 4}},       {GgmlType::I64, {"I64", 1, 8}},       {GgmlType::Q4_0, {"Q4_0", 32, 18}},
    {GgmlType::Q4_1, {"Q4_1", 32, 20}},   {GgmlType::Q5_0, {"Q5_0", 32, 22}},   {GgmlType::Q5_1, {"Q5_1", 32, 24}},
    {GgmlType::Q8_0, {"Q8_0", 32, 34}},   {GgmlType::Q2_K, {"Q2_K", QK_K, 84}}, {GgmlType::Q3_K, {"Q3_K", QK_K, 110}},
    {GgmlType::Q4_K, {"Q4_K", QK_K, 144}}, {GgmlType::Q5_K, {"Q5_K", QK_K, 176}}, {GgmlType::Q6_K, {"Q6_K", QK_K, 210}},
};

// ---- views of the blocks: `blocks` is (n_blocks, type_size) uint8 ----
//
// Every per-value quantity is computed at the shape of the values: the bytes a value needs are reshaped and
// expanded to that shape first (a view), and the arithmetic follows. Expanding a computed per-block value instead
// would make the scheduler store it in a buffer of its own (it keeps any broadcast value that costs more than a few
// ops), which is a second kernel.

// (nb, len) int32: bytes off .. off+len of every block (int32 so that shifts, masks and subtractions cannot wrap)
Tensor bytes(const Tensor& blocks, int64_t off, int64_t len) {
  return blocks.shrink({{0, blocks.shape()[0]}, {off, off + len}}).cast(dtypes::int32);
}

// (nb, 1) unsigned `dt` (uint16/32/64): the little-endian integer in bytes off .. off+itemsize of every block, the
// bytes times powers of 256 added up (Tensor::bitcast between sizes sums over a new axis, a reduction that would
// not fuse into a matmul; a multiplication needs none of the range guards a shift carries)
Tensor le_uint(const Tensor& blocks, int64_t off, DType dt) {
  Tensor out;
  for (int64_t i = 0; i < dt.itemsize(); i++) {
    Tensor b = blocks.shrink({{0, blocks.shape()[0]}, {off + i, off + i + 1}}).cast(dt);
    if (i > 0) b = b * Tensor(uint64_t{1} << (8 * i), dt, blocks.device());
    out = out.defined() ? out + b : b;
  }
  return out;
}

// (nb, 1) float32: the f16 at byte off of every block
Tensor f16_at(const Tensor& blocks, int64_t off) {
  return le_uint(blocks, off, dtypes::uint16).bitcast(dtypes::float16).cast(dtypes::float32);
}

// int32, of `shape` (1 in the dimensions it does not vary along): 0, 1, 2 ... counting row-major over the others.
// counting({1, 2, 4, 1}) is 4h + j at [0, h, j, 0]: which bit field a value takes from a byte it shares with others.
Tensor counting(const Shape& shape, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32, device).reshape(shape);
}

// The `width`-bit field number `index` of the int32 bytes x expanded to `shape`: (x >> width * index) & (2^width-1)
Tensor field(const Tensor& x, const Shape& shape, const Tensor& index, int64_t width) {
  return (x.expand(shape) >> (index * static_cast<int32_t>(width))) & static_cast<int32_t>((1 << width) - 1);
}

// The plain types: the bytes of each value joined into its dtype, then cast (the integer types and F64 round to
// the nearest float32, as a C cast does)
Tensor plain(const Tensor& raw, GgmlType type, int64_t numel) {
  DType dt = type == GgmlType::F32    ? dtypes::float32
             : type == GgmlType::F16  ? dtypes::float16
             : type == GgmlType::BF16 ? dtypes::bfloat16
             : type == GgmlType::F64  ? dtypes::float64
             : type == GgmlType::I8   ? dtypes::int8
             : type == GgmlType::I16  ? dtypes::int16
             : type == GgmlType::I32  ? dtypes::int32
                                      : dtypes::int64;
  Tensor values = raw.reshape({numel, dt.itemsize()});
  DType udt = dt.itemsize() == 1 ? dtypes::uint8 : dt.itemsize() == 2 ? dtypes::uint16
              : dt.itemsize() == 4 ? dtypes::uint32 : dtypes::uint64;
  Tensor bits = dt.itemsize() == 1 ? values : le_uint(values, 0, udt);
  return bits.bitcast(dt).cast(dtypes::float32).reshape({numel});
}

// ---- the 32-value blocks: (nb, 32), computed as (nb, 2, 16) ----

// (nb, 2, 16) 0..15: the low nibbles of the 16 bytes at off (values 0-15), then their high nibbles (16-31)
Tensor nibbles32(const Tensor& blocks, int64_t off) {
  int64_t nb = blocks.shape()[0];
  return field(bytes(blocks, off, 16).reshape({nb, 1, 16}), {nb, 2, 16}, counting({1, 2, 1}, blocks.device()), 4);
}

// (nb, 2, 16) 0 or 16: bit j of the little-endian uint32 at off, for value j, moved to bit 4. Value 16h + 8i + k
// reads bit k of byte 2h + i.
Tensor fifth_bits(const Tensor& blocks, int64_t off) {
  int64_t nb = blocks.shape()[0];
  Tensor qh = bytes(blocks, off, 4).reshape({nb, 2, 2, 1});
  return field(qh, {nb, 2, 2, 8}, counting({1, 1, 1, 8}, blocks.device()), 1).reshape({nb, 2, 16}) * 16;
}

// the f16 at off of every block, as (nb, 1, 1 ...) with `ndim` dimensions
Tensor scale_at(const Tensor& blocks, int64_t off, int64_t ndim) {
  Shape shape(ndim, 1);
  shape[0] = blocks.shape()[0];
  return f16_at(blocks, off).reshape(shape);
}

Tensor q4_0(const Tensor& b) { return (nibbles32(b, 2) - 8).cast(dtypes::float32) * scale_at(b, 0, 3); }
Tensor q4_1(const Tensor& b) {
  return nibbles32(b, 4).cast(dtypes::float32) * scale_at(b, 0, 3) + scale_at(b, 2, 3);
}
Tensor q5_0(const Tensor& b) {
  return ((nibbles32(b, 6) + fifth_bits(b, 2)) - 16).cast(dtypes::float32) * scale_at(b, 0, 3);
}
Tensor q5_1(const Tensor& b) {
  return (nibbles32(b, 8) + fifth_bits(b, 4)).cast(dtypes::float32) * scale_at(b, 0, 3) + scale_at(b, 2, 3);
}
Tensor q8_0(const Tensor& b) {
  Tensor qs = b.shrink({{0, b.shape()[0]}, {2, 34}}).bitcast(dtypes::int8);
  return qs.cast(dtypes::float32) * scale_at(b, 0, 2);
}

// ---- the K-quants: (nb, 256) ----

// Q2_K: value 128h + 32j + 16g + l (h < 2, j < 4, g < 2, l < 16) is bits 2j, 2j+1 of qs[32h + 16g + l]; its
// sub-block 8h + 2j + g has the byte scales[8h + 2j + g]: scale in the low nibble, min in the high one;
// (d * scale) * q - (dmin * min). Computed in the shape (nb, h, j, g, l).
Tensor q2_k(const Tensor& b) {
  int64_t nb = b.shape()[0];
  Shape shape{nb, 2, 4, 2, 16};
  Tensor q = field(bytes(b, 16, 64).reshape({nb, 2, 1, 2, 16}), shape, counting({1, 1, 4, 1, 1}, b.device()), 2);
  Tensor sc = bytes(b, 0, 16).reshape({nb, 2, 4, 2, 1}).expand(shape);
  Tensor dl = scale_at(b, 80, 5) * (sc & 0xF).cast(dtypes::float32);
  Tensor ml = scale_at(b, 82, 5) * (sc >> 4).cast(dtypes::float32);
  return dl * q.cast(dtypes::float32) - ml;
}

// Q3_K's scale of sub-block s = 8h + 2j + g, -32..31, at the shape (nb, h, j, g, l): 6 bits unpacked from 12 bytes
// (ggml does it with masks over three uint32s). Its low 4 bits are nibble h of byte s % 8 = 2j + g; its high 2 bits
// are bits 2(s / 4), 2(s / 4)+1 of byte 8 + s % 4: with j = 2ja + jb that is field 2h + ja of byte 8 + 2jb + g.
Tensor q3_k_scales(const Tensor& b) {
  int64_t nb = b.shape()[0];
  Tensor low = field(bytes(b, 96, 8).reshape({nb, 1, 4, 2, 1}), {nb, 2, 4, 2, 16},
                     counting({1, 2, 1, 1, 1}, b.device()), 4);
  Tensor high = field(bytes(b, 104, 4).reshape({nb, 1, 1, 2, 2, 1}), {nb, 2, 2, 2, 2, 16},
                      counting({1, 2, 2, 1, 1, 1}, b.device()), 2);
  return (low + high.reshape({nb, 2, 4, 2, 16}) * 16) - 32;
}

// Q3_K: value 128h + 32j + 16g + l is bits 2j, 2j+1 of qs[32h + 16g + l], minus 4 unless bit 4h + j of
// hmask[16g + l] is set (so: low + 4 * bit - 4), times d * scale[8h + 2j + g]. Shape (nb, h, j, g, l).
Tensor q3_k(const Tensor& b) {
  int64_t nb = b.shape()[0];
  Shape shape{nb, 2, 4, 2, 16};
  Tensor low = field(bytes(b, 32, 64).reshape({nb, 2, 1, 2, 16}), shape, counting({1, 1, 4, 1, 1}, b.device()), 2);
  Tensor high = field(bytes(b, 0, 32).reshape({nb, 1, 1, 2, 16}), shape, counting({1, 2, 4, 1, 1}, b.device()), 1);
  Tensor q = (low + high * 4) - 4;
  Tensor dl = scale_at(b, 108, 5) * q3_k_scales(b).cast(dtypes::float32);
  return dl * q.cast(dtypes::float32);
}

// Q4_K / Q5_K: value 64c + 32g + l (c < 4, g < 2, l < 32) is nibble g of qs[32c + l] (Q5_K: plus 16 if bit 2c + g
// of qh[l] is set), in sub-block s = 2c + g: (d * scale) * q - (dmin * min). The 6-bit scales and mins come from
// the 12 bytes at 4 as ggml's get_scale_min_k4 reads them: for s < 4, the low 6 bits of byte s (scale) and of byte
// s + 4 (min); for s >= 4, the low (scale) and high (min) nibble of byte s + 4, with 2 more bits on top from the
// top bits of byte s - 4 (scale) and byte s (min). With c = 2t + u, s = 4t + r where r = 2u + g, and the shape is
// (nb, t, u, g, l); a, m, h are bytes r, 4 + r, 8 + r.
Tensor q45_k(const Tensor& b, bool fifth_bit) {
  int64_t nb = b.shape()[0];
  Shape shape{nb, 2, 2, 2, 32};
  Tensor q = field(bytes(b, fifth_bit ? 48 : 16, 128).reshape({nb, 2, 2, 1, 32}), shape,
                   counting({1, 1, 1, 2, 1}, b.device()), 4);
  if (fifth_bit)
    q = q + field(bytes(b, 16, 32).reshape({nb, 1, 1, 1, 32}), shape, counting({1, 2, 2, 2, 1}, b.device()), 1) * 16;
  Shape sub{nb, 1, 2, 2, 1};
  Tensor a = bytes(b, 4, 4).reshape(sub).expand(shape), m = bytes(b, 8, 4).reshape(sub).expand(shape);
  Tensor h = bytes(b, 12, 4).reshape(sub).expand(shape);
  Tensor first = counting({1, 2, 1, 1, 1}, b.device()) == 0;  // t == 0: sub-blocks 0-3
  Tensor scale = first.where(a & 63, (h & 0xF) + (a >> 6) * 16);
  Tensor min = first.where(m & 63, (h >> 4) + (m >> 6) * 16);
  Tensor d1 = scale_at(b, 0, 5) * scale.cast(dtypes::float32);
  Tensor m1 = scale_at(b, 2, 5) * min.cast(dtypes::float32);
  return d1 * q.cast(dtypes::float32) - m1;
}

// Q6_K: value 128h + 32k + l (h < 2, k < 4, l < 32) has its low 4 bits in nibble k / 2 of ql[64h + 32(k % 2) + l],
// its high 2 bits in bits 2k, 2k+1 of qh[32h + l]; (d * scales[8h + 2k + l / 16]) * (q - 32). With k = 2kh + kl
// and l = 16i + m the shape is (nb, h, kh, kl, l) for ql and (nb, h, k, i, m) for the rest.
Tensor q6_k(const Tensor& b) {
  int64_t nb = b.shape()[0];
  Shape shape{nb, 2, 4, 2, 16};
  Tensor ql = field(bytes(b, 0, 128).reshape({nb, 2, 1, 2, 32}), {nb, 2, 2, 2, 32},
                    counting({1, 1, 2, 1, 1}, b.device()), 4);
  Tensor qh = field(bytes(b, 128, 64).reshape({nb, 2, 1, 2, 16}), shape, counting({1, 1, 4, 1, 1}, b.device()), 2);
  Tensor q = (ql.reshape(shape) + qh * 16) - 32;
  Tensor sc = b.shrink({{0, nb}, {192, 208}}).reshape({nb, 2, 4, 2, 1}).expand(shape).bitcast(dtypes::int8);
  return (scale_at(b, 208, 5) * sc.cast(dtypes::float32)) * q.cast(dtypes::float32);
}

std::string type_str(GgmlType type) {
  std::optional<GgmlTypeInfo> info = ggml_type_info(static_cast<uint32_t>(type));
  return info ? std::string(info->name) : "type id " + std::to_string(static_cast<uint32_t>(type));
}

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) {
  for (const TypeRow& row : kTypes)
    if (static_cast<uint32_t>(row.type) == type) return row.info;
  return std::nullopt;
}

Tensor dequantize(const Tensor& raw, GgmlType type, int64_t numel, SourceLocation where) {
  std::optional<GgmlTypeInfo> info = ggml_type_info(static_cast<uint32_t>(type));
  if (!info)
    throw ArgumentError("gguf dequantize", type_str(type) + " is not a ggml type this reader supports (F32, F16, "
                        "BF16, F64, I8-I64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)", where);
  std::string name = info->name;
  if (numel < 0 || numel % info->block_size != 0)
    throw ArgumentError("gguf dequantize", name + ": " + std::to_string(numel) + " values is not a whole number of " +
                        std::to_string(info->block_size) + "-value blocks", where);
  int64_t n_blocks = numel / info->block_size, want = n_blocks * info->type_size;
  if (raw.ndim() != 1 || raw.dtype() != dtypes::uint8 || raw.numel() != want)
    throw ArgumentError("gguf dequantize", name + ": " + std::to_string(numel) + " values are " +
                        std::to_string(n_blocks) + " blocks of " + std::to_string(info->type_size) + " bytes = " +
                        std::to_string(want) + " bytes, but the raw tensor is " + raw.dtype().name() + " of shape " +
                        tensor::shape_str(raw.shape()) + " (want a 1-d uint8 tensor of " + std::to_string(want) + " bytes)",
                        where);
  if (info->block_size == 1) return plain(raw, type, numel);
  Tensor blocks = raw.reshape({n_blocks, info->type_size});
  Tensor values;
  switch (type) {
    case GgmlType::Q4_0: values = q4_0(blocks); break;
    case GgmlType::Q4_1: values = q4_1(blocks); break;
    case GgmlType::Q5_0: values = q5_0(blocks); break;
    case GgmlType::Q5_1: values = q5_1(blocks); break;
    case GgmlType::Q8_0: values = q8_0(blocks); break;
    case GgmlType::Q2_K: values = q2_k(blocks); break;
    case GgmlType::Q3_K: values = q3_k(blocks); break;
    case GgmlType::Q4_K: values = q45_k(blocks, false); break;
    case GgmlType::Q5_K: values = q45_k(blocks, true); break;
    case GgmlType::Q6_K: values = q6_k(blocks); break;
    default: throw InternalError("gguf dequantize", name + " has a layout but no dequantizer", where);
  }
  return values.reshape({numel});
}

}  // namespace tg::state
