#include "onnx/proto.h"

#include <bit>
#include <cstring>
#include <fstream>

#include "onnx/protobuf.h"
#include "runtime/buffer_uop.h"
#include "runtime/buffer.h"
#include "tensor/helpers.h"

namespace tg::onnx::proto {

using pb::Field;
using pb::Reader;

const char* elem_type_name(int32_t t) {
  static const char* names[] = {"UNDEFINED", "FLOAT",  "UINT8",  "INT8",   "UINT16",    "INT16",      "INT32",
                                "INT64",     "STRING", "BOOL",   "FLOAT16", "DOUBLE",   "UINT32",     "UINT64",
                                "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                "FLOAT8E5M2", "FLOAT8E5M2FNUZ"};
  return t >= 0 && t < static_cast<int32_t>(std::size(names)) ? names[t] : "an unknown type";
}

std::optional<DType> to_dtype(int32_t t) {
  switch (t) {
    case FLOAT: return dtypes::float32;
    case UINT8: return dtypes::uint8;
    case INT8: return dtypes::int8;
    case UINT16: return dtypes::uint16;
    case INT16: return dtypes::int16;
    case INT32: return dtypes::int32;
    case INT64: return dtypes::int64;
    case BOOL: return dtypes::bool_;
    case FLOAT16: return dtypes::float16;
    case DOUBLE: return dtypes::float64;
    case UINT32: return dtypes::uint32;
    case UINT64: return dtypes::uint64;
    case BFLOAT16: return dtypes::bfloat16;
    default: return std::nullopt;
  }
}

int32_t from_dtype(DType dt) {
  for (int32_t t = 1; t <= BFLOAT16; t++)
    if (auto d = to_dtype(t); d && *d == dt) return t;
  return UNDEFINED;
}

const char* attr_type_name(int32_t t) {
  static const char* names[] = {"UNDEFINED", "FLOAT",  "INT",     "STRING",        "TENSOR",         "GRAPH",
                                "FLOATS",    "INTS",   "STRINGS", "TENSORS",       "GRAPHS",         "SPARSE_TENSOR",
                                "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t >= 0 && t < static_cast<int32_t>(std::size(names)) ? names[t] : "an unknown type";
}

namespace {

std::string str(const Reader& r, const Field& f) { return std::string(r.as_bytes(f)); }

// Nesting is bounded so a malicious file cannot overflow the stack (a graph attribute holding a graph ...).
constexpr int kMaxDepth = 64;

TensorData tensor(std::string_view bytes, const std::string& what, int depth) {
  Reader r(bytes, what);
  TensorData t;
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: r.append_ints(f, t.dims); break;
      case 2: t.data_type = static_cast<int32_t>(r.as_int(f)); break;
      case 4: r.append_floats(f, t.floats); break;
      case 5: r.append_ints(f, t.int32s); break;
      case 6: t.strings.push_back(str(r, f)); break;
      case 7: r.append_ints(f, t.int64s); break;
      case 8: t.name = str(r, f); break;
      case 9: t.raw = r.as_bytes(f); break;
      case 10: r.append_doubles(f, t.doubles); break;
      case 11: r.append_uints(f, t.uint64s); break;
      case 13: {
        Reader e(r.as_bytes(f), what + " (external_data of a tensor)");
        Field g;
        std::string key, value;
        while (e.next(g)) {
          if (g.number == 1) key = str(e, g);
          else if (g.number == 2) value = str(e, g);
        }
        t.external[key] = value;
        break;
      }
      case 14: t.is_external = r.as_int(f) == 1; break;
      default: break;
    }
  }
  for (int64_t d : t.dims)
    if (d < 0) r.fail("tensor '" + t.name + "' has a negative dimension " + std::to_string(d));
  return t;
}

std::vector<Dim> shape(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  std::vector<Dim> dims;
  Field f;
  while (r.next(f)) {
    if (f.number != 1) continue;
    Reader d(r.as_bytes(f), what);
    Dim dim;
    Field g;
    while (d.next(g)) {
      if (g.number == 1) dim.value = d.as_int(g);
      else if (g.number == 2) dim.param = str(d, g);
    }
    dims.push_back(dim);
  }
  return dims;
}

// TypeProto: a tensor (1), a sequence (4) or optional (9) of one, others (maps, sparse tensors) as Kind::Other.
void type(std::string_view bytes, const std::string& what, ValueInfo& v, bool outer, int depth) {
  if (depth > kMaxDepth) Reader(bytes, what).fail("types nested too deeply");
  Reader r(bytes, what);
  Field f;
  while (r.next(f)) {
    if (f.number == 1) {
      if (outer) v.kind = ValueInfo::Kind::Tensor;
      Reader t(r.as_bytes(f), what);
      Field g;
      while (t.next(g)) {
        if (g.number == 1) v.elem_type = static_cast<int32_t>(t.as_int(g));
        else if (g.number == 2) v.shape = shape(t.as_bytes(g), what);
      }
    } else if (f.number == 4 || f.number == 9) {
      if (outer) v.kind = f.number == 4 ? ValueInfo::Kind::Sequence : ValueInfo::Kind::Optional;
      Reader s(r.as_bytes(f), what);
      Field g;
      while (s.next(g))
        if (g.number == 1) type(s.as_bytes(g), what, v, false, depth + 1);
    }
  }
}

ValueInfo value_info(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  ValueInfo v;
  Field f;
  while (r.next(f)) {
    if (f.number == 1) v.name = str(r, f);
    else if (f.number == 2) type(r.as_bytes(f), what, v, true, 0);
  }
  return v;
}

Graph graph(std::string_view bytes, const std::string& what, int depth);

Attribute attribute(std::string_view bytes, const std::string& what, int depth) {
  Reader r(bytes, what);
  Attribute a;
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: a.name = str(r, f); break;
      case 2: a.f = r.as_float(f); break;
      case 3: a.i = r.as_int(f); break;
      case 4: a.s = str(r, f); break;
      case 5: a.t = std::make_shared<TensorData>(tensor(r.as_bytes(f), what, depth + 1)); break;
      case 6: a.g = std::make_shared<Graph>(graph(r.as_bytes(f), what, depth + 1)); break;
      case 7: r.append_floats(f, a.floats); break;
      case 8: r.append_ints(f, a.ints); break;
      case 9: a.strings.push_back(str(r, f)); break;
      case 10: a.tensors.push_back(tensor(r.as_bytes(f), what, depth + 1)); break;
      case 20: a.type = static_cast<int32_t>(r.as_int(f)); break;
      case 21: a.ref_attr_name = str(r, f); break;
      default: break;
    }
  }
  if (a.type == A_UNDEFINED) {  // IR version 1 files leave the type out: infer it from the field that is set
    if (a.t) a.type = A_TENSOR;
    else if (a.g) a.type = A_GRAPH;
    else if (!a.floats.empty()) a.type = A_FLOATS;
    else if (!a.ints.empty()) a.type = A_INTS;
    else if (!a.strings.empty()) a.type = A_STRINGS;
    else if (!a.s.empty()) a.type = A_STRING;
    else if (a.f != 0) a.type = A_FLOAT;
    else a.type = A_INT;
  }
  return a;
}

Node node(std::string_view bytes, const std::string& what, int depth) {
  Reader r(bytes, what);
  Node n;
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: n.inputs.push_back(str(r, f)); break;
      case 2: n.outputs.push_back(str(r, f)); break;
      case 3: n.name = str(r, f); break;
      case 4: n.op_type = str(r, f); break;
      case 5: n.attributes.push_back(attribute(r.as_bytes(f), what, depth)); break;
      case 7: n.domain = str(r, f); break;
      default: break;
    }
  }
  if (n.op_type.empty()) r.fail("a node without an op_type");
  return n;
}

Graph graph(std::string_view bytes, const std::string& what, int depth) {
  if (depth > kMaxDepth) Reader(bytes, what).fail("graphs nested more than " + std::to_string(kMaxDepth) + " deep");
  Reader r(bytes, what);
  Graph g;
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: g.nodes.push_back(node(r.as_bytes(f), what, depth)); break;
      case 2: g.name = str(r, f); break;
      case 5: g.initializers.push_back(tensor(r.as_bytes(f), what, depth)); break;
      case 11: g.inputs.push_back(value_info(r.as_bytes(f), what)); break;
      case 12: g.outputs.push_back(value_info(r.as_bytes(f), what)); break;
      case 13: g.value_infos.push_back(value_info(r.as_bytes(f), what)); break;
      default: break;
    }
  }
  return g;
}

}  // namespace

Model parse_model(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  Model m;
  bool has_graph = false;
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: m.ir_version = r.as_int(f); break;
      case 2: m.producer_name = str(r, f); break;
      case 7: m.graph = graph(r.as_bytes(f), what, 0); has_graph = true; break;
      case 8: {
        Reader o(r.as_bytes(f), what);
        Field g;
        std::string domain;
        int64_t version = 0;
        while (o.next(g)) {
          if (g.number == 1) domain = str(o, g);
          else if (g.number == 2) version = o.as_int(g);
        }
        if (domain == "ai.onnx") domain = "";
        m.opsets[domain] = version;
        break;
      }
      default: break;
    }
  }
  if (!has_graph) r.fail("not an ONNX model: no graph (field 7 of ModelProto)");
  if (m.opsets.empty()) m.opsets[""] = 1;  // IR version 1-2 files without opset_import mean opset 1
  return m;
}

TensorData parse_tensor(std::string_view bytes, const std::string& what) { return tensor(bytes, what, 0); }

DataValue parse_sequence(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  DataValue v;
  v.kind = DataValue::Kind::Sequence;
  Field f;
  while (r.next(f))
    if (f.number == 3) v.sequence.push_back(tensor(r.as_bytes(f), what, 0));
  return v;
}

DataValue parse_optional(std::string_view bytes, const std::string& what) {
  Reader r(bytes, what);
  DataValue v;
  v.kind = DataValue::Kind::NoneOptional;
  Field f;
  while (r.next(f)) {
    if (f.number == 3) { v.kind = DataValue::Kind::Tensor; v.tensor = tensor(r.as_bytes(f), what, 0); }
    else if (f.number == 5) { DataValue s = parse_sequence(r.as_bytes(f), what); v.kind = s.kind; v.sequence = std::move(s.sequence); }
  }
  return v;
}

namespace {

// The values of a typed field, converted to `dt`'s bytes.
template <class Src>
std::vector<uint8_t> pack(const std::vector<Src>& v, DType dt, bool bits) {
  size_t item = static_cast<size_t>(dt.itemsize());
  std::vector<uint8_t> out(v.size() * item);
  for (size_t k = 0; k < v.size(); k++) {
    uint8_t* p = out.data() + k * item;
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    if (bits) {  // float16 / bfloat16 as their bit patterns in int32_data
      put(static_cast<uint16_t>(v[k]));
      continue;
    }
    switch (dt.scalar_type()) {
      case ScalarType::Bool: put(static_cast<uint8_t>(v[k] != 0)); break;
      case ScalarType::Int8: put(static_cast<int8_t>(v[k])); break;
      case ScalarType::Int16: put(static_cast<int16_t>(v[k])); break;
      case ScalarType::Int32: put(static_cast<int32_t>(v[k])); break;
      case ScalarType::Int64: put(static_cast<int64_t>(v[k])); break;
      case ScalarType::UInt8: put(static_cast<uint8_t>(v[k])); break;
      case ScalarType::UInt16: put(static_cast<uint16_t>(v[k])); break;
      case ScalarType::UInt32: put(static_cast<uint32_t>(v[k])); break;
      case ScalarType::UInt64: put(static_cast<uint64_t>(v[k])); break;
      case ScalarType::Float32: put(static_cast<float>(v[k])); break;
      case ScalarType::Float64: put(static_cast<double>(v[k])); break;
      default: break;
    }
  }
  return out;
}

}  // namespace

Tensor to_tensor(const TensorData& t, const std::string& device, const std::string& dir, const std::string& what) {
  auto bad = [&](const std::string& msg) {
    return ArgumentError("onnx.load", what + ": tensor '" + t.name + "' " + msg);
  };
  std::optional<DType> dt = to_dtype(t.data_type);
  if (!dt) throw DTypeError("onnx.load", what + ": tensor '" + t.name + "' has type " + elem_type_name(t.data_type) +
                                             ", which tinygrad.cpp has no dtype for");
  Shape shape(t.dims.begin(), t.dims.end());
  int64_t n = tensor::checked_numel(shape, "onnx.load", SourceLocation::current());
  size_t want = static_cast<size_t>(n) * static_cast<size_t>(dt->itemsize());
  std::vector<uint8_t> bytes;
  const void* src = nullptr;
  size_t have = 0;
  std::string external_bytes;
  if (t.is_external) {
    auto loc = t.external.find("location");
    if (loc == t.external.end()) throw bad("has external data without a location");
    if (loc->second.find("..") != std::string::npos || (!loc->second.empty() && loc->second[0] == '/'))
      throw bad("has external data at '" + loc->second + "', outside the model's folder");
    std::string file = (dir.empty() ? std::string() : dir + "/") + loc->second;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw bad("has external data in '" + file + "', which cannot be opened");
    uint64_t offset = 0, length = want;
    try {
      if (auto o = t.external.find("offset"); o != t.external.end()) offset = std::stoull(o->second);
      if (auto l = t.external.find("length"); l != t.external.end()) length = std::stoull(l->second);
    } catch (const std::exception&) {
      throw bad("has an external offset or length that is not a number");
    }
    if (length != want) throw bad("has " + std::to_string(length) + " external bytes, its shape needs " + std::to_string(want));
    in.seekg(0, std::ios::end);
    uint64_t size = static_cast<uint64_t>(in.tellg());
    if (offset > size || size - offset < length) throw bad("has external data past the end of '" + file + "'");
    external_bytes.resize(length);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(external_bytes.data(), static_cast<std::streamsize>(length));
    src = external_bytes.data();
    have = length;
  } else if (!t.raw.empty() || (n == 0 && t.floats.empty() && t.int32s.empty() && t.int64s.empty() && t.doubles.empty() && t.uint64s.empty())) {
    src = t.raw.data();
    have = t.raw.size();
  } else {
    bool bits = dt->is_half();
    if (!t.floats.empty()) bytes = pack(t.floats, *dt, false);
    else if (!t.int32s.empty()) bytes = pack(t.int32s, *dt, bits);
    else if (!t.int64s.empty()) bytes = pack(t.int64s, *dt, false);
    else if (!t.doubles.empty()) bytes = pack(t.doubles, *dt, false);
    else if (!t.uint64s.empty()) bytes = pack(t.uint64s, *dt, false);
    src = bytes.data();
    have = bytes.size();
  }
  if (have != want)
    throw bad("of shape " + tensor::shape_str(shape) + " and type " + elem_type_name(t.data_type) + " needs " +
              std::to_string(want) + " bytes, it has " + std::to_string(have));
  uop::UOp buf = runtime::new_buffer(tensor::resolve_device(device), *dt, n);
  if (n) runtime::buffer_of(buf).copyin(src, want);
  return Tensor(buf).reshape(shape);
}

}  // namespace tg::onnx::proto
