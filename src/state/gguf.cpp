// GGUF, llama.cpp's checkpoint format (ggml's docs/gguf.md), versions 2 and 3, little-endian:
//   "GGUF", version u32, tensor count u64, metadata count u64,
//   metadata: key (u64 length + bytes), value type u32, value (arrays: element type u32, count u64, elements),
//   tensor infos: name, n_dims u32, dims u64 x n_dims (ggml order: the contiguous dimension first), type u32,
//                 offset u64 (from the data section, a multiple of the alignment),
//   padding to general.alignment (default 32), then the data section.
// Every read is bounds-checked against the mapping; counts are checked against the bytes left before anything is
// allocated for them. Tensors are the mapped bytes, copied to the device on first use; quantized types stay
// quantized there and are dequantized by lazy tensor code (gguf_quants.cpp) inside the kernels that read them.
#include <algorithm>
#include <bit>
#include <cstring>

#include "runtime/buffer_uop.h"
#include "state/file_io.h"
#include "state/gguf_quants.h"
#include "tensor/helpers.h"
#include "tg/state.h"

namespace tg {

static_assert(std::endian::native == std::endian::little, "GGUF data is little-endian; so is this code");

namespace {

constexpr int kMaxArrayDepth = 8;

// A cursor over the mapped file: every read checks that the bytes exist.
class Reader {
 public:
  Reader(const unsigned char* data, size_t size, std::string path, SourceLocation where)
      : data_(data), size_(size), path_(std::move(path)), where_(where) {}
  template <class T> T get(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string string(const char* field) {
    uint64_t n = get<uint64_t>(field);
    need(n, field);
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  void need(uint64_t n, const char* field) const {
    if (n > size_ - at_)
      throw error(std::string(field) + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(at_) +
                  ", past the end of the file (" + std::to_string(size_) + " bytes)");
  }
  size_t left() const { return size_ - at_; }
  size_t at() const { return at_; }
  ArgumentError error(const std::string& msg) const { return ArgumentError("gguf_load", path_ + ": " + msg, where_); }

 private:
  const unsigned char* data_;
  size_t size_, at_ = 0;
  std::string path_;
  SourceLocation where_;
};

enum ValueType : uint32_t { U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };

GGUFValue read_value(Reader& r, uint32_t type, const std::string& key, int depth) {
  GGUFValue v;
  const char* f = "a metadata value";
  switch (type) {
    case U8: v.kind = GGUFValue::Kind::UInt, v.u = r.get<uint8_t>(f); break;
    case U16: v.kind = GGUFValue::Kind::UInt, v.u = r.get<uint16_t>(f); break;
    case U32: v.kind = GGUFValue::Kind::UInt, v.u = r.get<uint32_t>(f); break;
    case U64: v.kind = GGUFValue::Kind::UInt, v.u = r.get<uint64_t>(f); break;
    case I8: v.kind = GGUFValue::Kind::Int, v.i = r.get<int8_t>(f); break;
    case I16: v.kind = GGUFValue::Kind::Int, v.i = r.get<int16_t>(f); break;
    case I32: v.kind = GGUFValue::Kind::Int, v.i = r.get<int32_t>(f); break;
    case I64: v.kind = GGUFValue::Kind::Int, v.i = r.get<int64_t>(f); break;
    case F32: v.kind = GGUFValue::Kind::Float, v.f = r.get<float>(f); break;
    case F64: v.kind = GGUFValue::Kind::Float, v.f = r.get<double>(f); break;
    case BOOL: {
      uint8_t b = r.get<uint8_t>(f);
      if (b > 1) throw r.error("metadata '" + key + "': a bool must be 0 or 1, not " + std::to_string(b));
      v.kind = GGUFValue::Kind::Bool, v.b = b == 1;
      break;
    }
    case STRING: v.kind = GGUFValue::Kind::String, v.s = r.string(f); break;
    case ARRAY: {
      if (depth >= kMaxArrayDepth) throw r.error("metadata '" + key + "': arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      uint32_t elem = r.get<uint32_t>("an array's element type");
      uint64_t n = r.get<uint64_t>("an array's length");
      if (n > r.left())  // every element takes at least one byte
        throw r.error("metadata '" + key + "': an array of " + std::to_string(n) + " elements in " + std::to_string(r.left()) + " bytes");
      v.kind = GGUFValue::Kind::Array;
      v.items.reserve(n);
      for (uint64_t k = 0; k < n; k++) v.items.push_back(read_value(r, elem, key, depth + 1));
      break;
    }
    default: throw r.error("metadata '" + key + "' has an unknown value type " + std::to_string(type));
  }
  return v;
}

// the types whose bytes are values of one of our dtypes
std::optional<DType> plain_dtype(state::GgmlType t) {
  using state::GgmlType;
  switch (t) {
    case GgmlType::F32: return dtypes::float32;
    case GgmlType::F16: return dtypes::float16;
    case GgmlType::BF16: return dtypes::bfloat16;
    case GgmlType::F64: return dtypes::float64;
    case GgmlType::I8: return dtypes::int8;
    case GgmlType::I16: return dtypes::int16;
    case GgmlType::I32: return dtypes::int32;
    case GgmlType::I64: return dtypes::int64;
    default: return std::nullopt;
  }
}

struct TensorInfo {
  std::string name;
  Shape shape;  // row-major: GGUF's dims reversed
  uint32_t type = 0;
  uint64_t offset = 0, bytes = 0;
};

}  // namespace

int64_t GGUFValue::as_int(const std::string& what, SourceLocation where) const {
  if (kind == Kind::Int) return i;
  if (kind == Kind::UInt && u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
  throw ArgumentError("gguf", what + " is not an integer", where);
}
double GGUFValue::as_float(const std::string& what, SourceLocation where) const {
  if (kind == Kind::Float) return f;
  if (kind == Kind::Int || kind == Kind::UInt) return kind == Kind::Int ? static_cast<double>(i) : static_cast<double>(u);
  throw ArgumentError("gguf", what + " is not a number", where);
}
const std::string& GGUFValue::as_string(const std::string& what, SourceLocation where) const {
  if (kind != Kind::String) throw ArgumentError("gguf", what + " is not a string", where);
  return s;
}

GGUFFile gguf_load(const std::string& path, const std::string& device, SourceLocation where) {
  size_t size = 0;
  std::shared_ptr<const unsigned char> map = state::map_file(path, size, "gguf_load", where);
  Reader r(map.get(), size, path, where);
  if (size < 4 || std::memcmp(map.get(), "GGUF", 4) != 0) throw r.error("not a GGUF file (no 'GGUF' magic)");
  r.get<uint32_t>("the magic");
  uint32_t version = r.get<uint32_t>("the version");
  if (version != 2 && version != 3)
    throw r.error("GGUF version " + std::to_string(version) + " (this reader takes 2 and 3; a big-endian file reads as a huge version)");
  uint64_t n_tensors = r.get<uint64_t>("the tensor count"), n_kv = r.get<uint64_t>("the metadata count");
  if (n_kv > r.left() / 12 || n_tensors > r.left() / 24)  // the smallest entries: 8 + 4 bytes, 8 + 4 + 4 + 8 bytes
    throw r.error(std::to_string(n_tensors) + " tensors and " + std::to_string(n_kv) + " metadata entries cannot fit " +
                  std::to_string(size) + " bytes");
  GGUFFile out;
  for (uint64_t k = 0; k < n_kv; k++) {
    std::string key = r.string("a metadata key");
    uint32_t type = r.get<uint32_t>("a metadata value type");
    if (out.metadata.count(key)) throw r.error("metadata key '" + key + "' appears twice");
    out.metadata[key] = read_value(r, type, key, 0);
  }
  uint64_t alignment = 32;
  if (auto it = out.metadata.find("general.alignment"); it != out.metadata.end()) {
    if (it->second.kind != GGUFValue::Kind::UInt || it->second.u == 0 || !std::has_single_bit(it->second.u))
      throw r.error("general.alignment must be a power of two");
    alignment = it->second.u;
  }
  std::vector<TensorInfo> infos;
  for (uint64_t k = 0; k < n_tensors; k++) {
    TensorInfo t;
    t.name = r.string("a tensor name");
    uint32_t n_dims = r.get<uint32_t>("a tensor's dimension count");
    if (n_dims > 8) throw r.error("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (at most 8)");
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
      uint64_t n = r.get<uint64_t>("a tensor dimension");
      if (n > (uint64_t{1} << 60) || (n && numel > (uint64_t{1} << 60) / n))
        throw r.error("tensor '" + t.name + "' has more than 2^60 elements");
      numel *= n;
      t.shape.insert(t.shape.begin(), static_cast<int64_t>(n));
    }
    t.type = r.get<uint32_t>("a tensor type");
    t.offset = r.get<uint64_t>("a tensor offset");
    std::optional<state::GgmlTypeInfo> info = state::ggml_type_info(t.type);
    if (!info) throw r.error("tensor '" + t.name + "' has ggml type " + std::to_string(t.type) + ", which this reader does not support");
    int64_t inner = t.shape.empty() ? 1 : t.shape.back();
    if (inner % info->block_size)
      throw r.error("tensor '" + t.name + "' (" + info->name + "): its first dimension " + std::to_string(inner) +
                    " is not a multiple of the block size " + std::to_string(info->block_size));
    t.bytes = numel / static_cast<uint64_t>(info->block_size) * static_cast<uint64_t>(info->type_size);
    if (t.offset % alignment) throw r.error("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not aligned to " + std::to_string(alignment));
    infos.push_back(std::move(t));
  }
  const uint64_t data_start = (r.at() + alignment - 1) / alignment * alignment;
  // the tensors' bytes: inside the file and not overlapping one another
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : infos) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t k = 0; k < by_offset.size(); k++) {
    const TensorInfo& t = *by_offset[k];
    if (data_start > size || t.offset > size - data_start || t.bytes > size - data_start - t.offset)
      throw r.error("tensor '" + t.name + "': " + std::to_string(t.bytes) + " bytes at data offset " + std::to_string(t.offset) + " lie past the end of the file");
    if (k + 1 < by_offset.size() && t.offset + t.bytes > by_offset[k + 1]->offset)
      throw r.error("tensors '" + t.name + "' and '" + by_offset[k + 1]->name + "' overlap");
  }
  std::string dev = tensor::resolve_device(device);
  for (const TensorInfo& t : infos) {
    if (out.tensors.count(t.name)) throw r.error("tensor '" + t.name + "' appears twice");
    auto type = static_cast<state::GgmlType>(t.type);
    std::optional<DType> plain = plain_dtype(type);
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    uop::UOp buf = runtime::new_buffer(dev, plain.value_or(dtypes::uint8), plain ? numel : static_cast<int64_t>(t.bytes));
    // its bytes in place, or copied on first use (Buffer::fill_lazily)
    if (t.bytes) runtime::buffer_of(buf).fill_lazily(map.get() + data_start + t.offset, map);
    Tensor values = plain ? Tensor(buf) : state::dequantize(Tensor(buf), type, numel, where);
    out.tensors[t.name] = values.reshape(t.shape, where);
    out.types[t.name] = state::ggml_type_info(t.type)->name;
  }
  return out;
}

}  // namespace tg
