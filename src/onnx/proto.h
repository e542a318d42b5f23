// ONNX's messages (onnx.proto, IR version 3 to 8), decoded from the wire format into plain structs. Only what the
// frontend uses is kept; unknown fields are skipped, as protobuf itself does. Tensor data stays a view into the
// file's bytes until a tensor is made from it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tg/tensor.h"

namespace tg::onnx::proto {

// TensorProto.DataType
enum ElemType : int32_t {
  UNDEFINED = 0, FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7, STRING = 8, BOOL = 9,
  FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13, COMPLEX64 = 14, COMPLEX128 = 15, BFLOAT16 = 16,
};
const char* elem_type_name(int32_t t);
std::optional<DType> to_dtype(int32_t t);  // nullopt: a type tinygrad.cpp has no dtype for (strings, complex)
int32_t from_dtype(DType dt);

struct TensorData {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = UNDEFINED;
  std::string_view raw;              // raw_data, little-endian
  std::vector<float> floats;         // float_data
  std::vector<int64_t> int32s;       // int32_data (also int8/16, uint8/16, bool, float16 and bfloat16 as bits)
  std::vector<int64_t> int64s;       // int64_data
  std::vector<double> doubles;       // double_data
  std::vector<uint64_t> uint64s;     // uint64_data (uint32, uint64)
  std::vector<std::string> strings;  // string_data
  std::map<std::string, std::string> external;  // external_data: location, offset, length
  bool is_external = false;
};

struct Graph;

enum AttrType : int32_t {
  A_UNDEFINED = 0, A_FLOAT = 1, A_INT = 2, A_STRING = 3, A_TENSOR = 4, A_GRAPH = 5, A_FLOATS = 6, A_INTS = 7,
  A_STRINGS = 8, A_TENSORS = 9, A_GRAPHS = 10, A_SPARSE_TENSOR = 11, A_SPARSE_TENSORS = 12, A_TYPE_PROTO = 13,
  A_TYPE_PROTOS = 14,
};
const char* attr_type_name(int32_t t);

struct Attribute {
  std::string name;
  int32_t type = A_UNDEFINED;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<TensorData> t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorData> tensors;
  std::string ref_attr_name;  // inside functions only
};

struct Node {
  std::vector<std::string> inputs, outputs;  // "" marks an omitted optional input or output
  std::string name, op_type, domain;
  std::vector<Attribute> attributes;
};

// A dimension is a number, a symbolic name (dim_param) or unknown.
struct Dim {
  std::optional<int64_t> value;
  std::string param;
};

struct ValueInfo {
  std::string name;
  enum class Kind { Tensor, Sequence, Optional, Other } kind = Kind::Other;
  int32_t elem_type = UNDEFINED;   // of the tensor (or of the sequence's / optional's tensors)
  std::optional<std::vector<Dim>> shape;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<TensorData> initializers;
  std::vector<ValueInfo> inputs, outputs, value_infos;
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::map<std::string, int64_t> opsets;  // domain ("" for ai.onnx) -> version
  Graph graph;
};

// Decoders; `what` names the file for errors (tg::ArgumentError of onnx.load).
Model parse_model(std::string_view bytes, const std::string& what);
TensorData parse_tensor(std::string_view bytes, const std::string& what);

// A value of the test data's .pb files: a TensorProto, a SequenceProto of tensors, or an OptionalProto.
struct DataValue {
  enum class Kind { Tensor, Sequence, NoneOptional } kind = Kind::Tensor;
  TensorData tensor;
  std::vector<TensorData> sequence;
};
DataValue parse_sequence(std::string_view bytes, const std::string& what);
DataValue parse_optional(std::string_view bytes, const std::string& what);

// The tensor's values on `device`. `dir` is the model's folder for external data. Raw bytes are copied (the file
// may be unmapped after); their count must match dims and type, or tg::ArgumentError names the tensor.
Tensor to_tensor(const TensorData& t, const std::string& device, const std::string& dir, const std::string& what);

}  // namespace tg::onnx::proto
