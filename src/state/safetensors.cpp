// safetensors files: an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"key": "value"}, "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// (padded with spaces), then the data section: each tensor's bytes, row-major and little-endian, at [begin, end).
// Reading follows the format's own implementation (huggingface/safetensors): the header is UTF-8 strict JSON that
// starts with '{', and the tensors, sorted by offsets, tile the data section exactly (no hole, no overlap, no
// trailing bytes).

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdio>
#include <cstring>

#include "runtime/buffer_uop.h"
#include "state/file_io.h"
#include "base/json.h"
#include "tensor/helpers.h"
#include "tg/state.h"

namespace tg {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so is this code");

namespace {

constexpr uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

const std::pair<const char*, DType> kDTypes[] = {
    {"BOOL", dtypes::bool_},   {"I8", dtypes::int8},     {"U8", dtypes::uint8},       {"I16", dtypes::int16},
    {"U16", dtypes::uint16},   {"I32", dtypes::int32},   {"U32", dtypes::uint32},     {"I64", dtypes::int64},
    {"U64", dtypes::uint64},   {"F16", dtypes::float16}, {"BF16", dtypes::bfloat16},  {"F32", dtypes::float32},
    {"F64", dtypes::float64},  {"F8_E4M3", dtypes::fp8e4m3}, {"F8_E5M2", dtypes::fp8e5m2},
};

const char* dtype_code(DType dt, const std::string& name, SourceLocation where) {
  for (const auto& [code, d] : kDTypes)
    if (d == dt) return code;
  throw DTypeError("safe_save", "tensor '" + name + "' has dtype " + dt.name() + ", which safetensors cannot hold", where);
}

struct TensorEntry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // in the data section
};

struct SafetensorsFile {
  std::shared_ptr<const unsigned char> map;
  const unsigned char* data = nullptr;  // the data section
  std::vector<TensorEntry> entries;
  std::map<std::string, std::string> metadata;
};

SafetensorsFile read_file(const std::string& path, SourceLocation where) {
  SafetensorsFile f;
  size_t size = 0;
  f.map = state::map_file(path, size, "safe_load", where);
  auto bad = [&](const std::string& msg) { return ArgumentError("safe_load", path + ": " + msg, where); };
  if (size < 8) throw bad(std::to_string(size) + " bytes, too short for a safetensors header");
  uint64_t n = 0;
  std::memcpy(&n, f.map.get(), 8);
  if (n > size - 8)
    throw bad("the header claims " + std::to_string(n) + " bytes, the file has " + std::to_string(size - 8) +
              " after the length (truncated, or not a safetensors file)");
  if (n > kMaxHeader) throw bad("a header of " + std::to_string(n) + " bytes is over the 100 MB limit");
  std::string_view text(reinterpret_cast<const char*>(f.map.get()) + 8, n);
  if (text.empty() || text[0] != '{') throw bad("the header does not start with '{' (not a safetensors file)");
  base::Json header = base::parse_json(text, "safe_load", path, where);
  if (header.kind != base::Json::Kind::Object) throw bad("the header is not a JSON object");
  f.data = f.map.get() + 8 + n;
  uint64_t data_size = size - 8 - n;
  using K = base::Json::Kind;
  for (const auto& member : header.members) {
    const std::string& name = member.first;  // not a structured binding: clang 14 cannot capture those
    const base::Json& v = member.second;
    if (name == "__metadata__") {
      if (v.kind != K::Object) throw bad("__metadata__ is not an object");
      for (const auto& [k, s] : v.members) {
        if (s.kind != K::String) throw bad("__metadata__ value '" + k + "' is not a string");
        f.metadata[k] = s.str;
      }
      continue;
    }
    auto field = [&](const char* key, K kind) -> const base::Json& {
      if (v.kind == K::Object)
        for (const auto& [k, x] : v.members)
          if (k == key && x.kind == kind) return x;
      throw bad("tensor '" + name + "' has no valid \"" + key + "\"");
    };
    TensorEntry e{name, dtypes::void_, {}, 0, 0};
    const std::string& code = field("dtype", K::String).str;
    for (const auto& [c, d] : kDTypes)
      if (code == c) e.dtype = d;
    if (e.dtype == dtypes::void_) throw bad("tensor '" + name + "' has dtype " + code + ", which tinygrad.cpp does not support");
    // numel as the format's reader counts it (so an empty tensor may have other huge sizes: (2^32, 2^30, 0) is
    // legal), then in bytes; our own limit: the nonzero sizes multiply to under 2^63 (an empty tensor's strides)
    uint64_t nonzero = 1;
    bool empty = false;
    for (const base::Json& d : field("shape", K::Array).items) {
      if (d.kind != K::Int || d.integer < 0) throw bad("tensor '" + name + "' has a shape entry that is not a size");
      e.shape.push_back(d.integer);
      empty = empty || d.integer == 0;
      if (d.integer && (__builtin_mul_overflow(nonzero, static_cast<uint64_t>(d.integer), &nonzero) ||
                        nonzero > static_cast<uint64_t>(INT64_MAX)))
        throw bad("tensor '" + name + "' is too large: the sizes in its shape multiply past 2^63");
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(empty ? 0 : nonzero, static_cast<uint64_t>(e.dtype.itemsize()), &bytes))
      throw bad("tensor '" + name + "' is too large: " + std::to_string(nonzero) + " elements of " + e.dtype.name());
    const auto& off = field("data_offsets", K::Array).items;
    if (off.size() != 2 || off[0].kind != K::Int || off[1].kind != K::Int || off[0].integer < 0 || off[1].integer < off[0].integer)
      throw bad("tensor '" + name + "' has data_offsets that are not [begin, end] with begin <= end");
    uint64_t begin = static_cast<uint64_t>(off[0].integer), end = static_cast<uint64_t>(off[1].integer);
    if (end > data_size)
      throw bad("tensor '" + name + "' ends at byte " + std::to_string(end) + " of a data section of " +
                std::to_string(data_size) + " bytes (truncated file?)");
    if (end - begin != bytes)
      throw bad("tensor '" + name + "' of shape " + tensor::shape_str(e.shape) + " " + e.dtype.name() + " needs " +
                std::to_string(bytes) + " bytes, its offsets span " + std::to_string(end - begin));
    e.begin = begin, e.end = end;
    f.entries.push_back(std::move(e));
  }
  // the tensors, ordered by offsets, must tile the data section: no hole, no overlap, no byte left over
  std::vector<const TensorEntry*> order;
  for (const TensorEntry& e : f.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(),
            [](const TensorEntry* a, const TensorEntry* b) { return std::pair(a->begin, a->end) < std::pair(b->begin, b->end); });
  uint64_t covered = 0;
  for (size_t i = 0; i < order.size(); i++) {
    const TensorEntry& e = *order[i];
    std::string span = "tensor '" + e.name + "' at bytes [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
    if (e.begin > covered)
      throw bad(span + " leaves a hole: " + (i ? "the tensor before it ends at byte " + std::to_string(covered)
                                                : std::string("no tensor starts at byte 0")));
    if (e.begin < covered)
      throw bad(span + " overlaps tensor '" + order[i - 1]->name + "', which ends at byte " + std::to_string(covered));
    covered = e.end;
  }
  if (covered != data_size)
    throw bad("the tensors cover " + std::to_string(covered) + " bytes of a data section of " + std::to_string(data_size) +
              " bytes (bytes no tensor covers)");
  return f;
}

}  // namespace

void safe_save(const StateDict& dict, const std::string& path, const std::map<std::string, std::string>& metadata,
               SourceLocation where) {
  // the header must be UTF-8 (safe_load and every other reader refuse it otherwise): a name or a metadata string that
  // is not is refused here, before anything is written
  auto check_utf8 = [&](const std::string& s, const char* what) {
    if (size_t bad = base::utf8_error_at(s); bad != std::string::npos)
      throw ArgumentError("safe_save", std::string(what) + " '" + s + "' is not UTF-8 (byte " + std::to_string(bad) + ")", where);
  };
  for (const auto& [k, v] : metadata) check_utf8(k, "metadata key"), check_utf8(v, "metadata value");
  for (const auto& [name, t] : dict) check_utf8(name, "tensor name");
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it)
      header += (it == metadata.begin() ? "" : ",") + base::json_quote(it->first) + ":" + base::json_quote(it->second);
    header += "}";
  }
  std::vector<std::vector<uint8_t>> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : dict) {
    if (name == "__metadata__") throw ArgumentError("safe_save", "\"__metadata__\" is reserved, not a tensor name", where);
    if (!t.defined()) throw ArgumentError("safe_save", "tensor '" + name + "' is an empty handle", where);
    const char* code = dtype_code(t.dtype(), name, where);
    data.push_back(t.to_bytes());
    std::string shape;
    for (int64_t d : t.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + base::json_quote(name) + ":{\"dtype\":\"" + code + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + data.back().size()) + "]}";
    offset += data.back().size();
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  uint64_t n = header.size();
  std::vector<std::string_view> pieces{{reinterpret_cast<const char*>(&n), 8}, header};
  for (const auto& d : data) pieces.emplace_back(reinterpret_cast<const char*>(d.data()), d.size());
  state::write_file_atomically(path, pieces, "safe_save", where);
}

StateDict safe_load(const std::string& path, const std::string& device, SourceLocation where) {
  SafetensorsFile f = read_file(path, where);
  std::string dev = tensor::resolve_device(device);
  StateDict out;
  for (const TensorEntry& e : f.entries) {
    int64_t n = 1;
    for (int64_t d : e.shape) n *= d;
    uop::UOp buf = runtime::new_buffer(dev, e.dtype, n);
    if (n) runtime::buffer_of(buf).fill_lazily(f.data + e.begin, f.map);  // in place, or copied on first use
    out[e.name] = Tensor(buf).reshape(e.shape, where);
  }
  return out;
}

std::map<std::string, std::string> safe_load_metadata(const std::string& path, SourceLocation where) {
  return read_file(path, where).metadata;
}

}  // namespace tg
