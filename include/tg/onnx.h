// ONNX models as lazy tg tensors (tinygrad's nn/onnx.py): load a .onnx file, run it with named inputs, get named
// outputs. Running builds the model's graph of tensor ops like any other code, so it fuses into few kernels, runs
// on any device and under TinyJit.
//
//   tg::onnx::Model m = tg::onnx::load("resnet18.onnx");
//   auto out = m.run({{"input", tg::Tensor::rand({1, 3, 224, 224})}});
//   tg::Tensor logits = out.at("output");
//
// Opsets 1 to 17 of the default domain, and ai.onnx.preview.training's optimizers. The file is read by our own
// protobuf wire-format reader (no protobuf dependency). A malformed file, an unknown op, a missing or misshapen
// input or a bad attribute raise a tg::Error naming the file, the node and what is wrong.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tg/tensor.h"

namespace tg::onnx {

namespace detail {
struct ModelImpl;
}

// What an ONNX value is: a tensor, a sequence of tensors, or an empty optional.
class Value {
 public:
  Value() : kind_(Kind::None) {}
  Value(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}
  static Value sequence(std::vector<Tensor> items) { Value v; v.kind_ = Kind::Sequence; v.seq_ = std::move(items); return v; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_none() const { return kind_ == Kind::None; }
  const Tensor& tensor() const;                  // throws tg::ArgumentError unless is_tensor()
  const std::vector<Tensor>& sequence() const;   // throws tg::ArgumentError unless is_sequence()

 private:
  enum class Kind { None, Tensor, Sequence } kind_;
  Tensor tensor_;
  std::vector<Tensor> seq_;
};

// A graph input or output as the file declares it: dims are -1 where unknown or symbolic (dim_params holds the
// name, "" otherwise); dtype is unset for a type tinygrad.cpp lacks.
struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;
  bool is_sequence = false;  // a sequence of tensors of dtype
  bool is_optional = false;  // an optional tensor or sequence
  std::optional<std::vector<int64_t>> shape;
  std::vector<std::string> dim_params;
};

class Model {
 public:
  // Runs the graph on the inputs by name (every graph input without an initializer is required; one with an
  // initializer may be overridden). Returns every graph output by name, lazy: realize them, or read them.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs, SourceLocation where = SourceLocation::current()) const;
  // The same, for models whose inputs or outputs are sequences or optionals.
  std::map<std::string, Value> run_values(const std::map<std::string, Value>& inputs,
                                          SourceLocation where = SourceLocation::current()) const;

  const std::vector<ValueInfo>& inputs() const;   // the inputs a caller gives (initializers left out)
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset(const std::string& domain = "") const;  // 0 when the model does not import the domain
  const std::string& path() const;
  const std::string& device() const;

 private:
  friend Model load(const std::string&, const std::string&, SourceLocation);
  std::shared_ptr<const detail::ModelImpl> impl_;
};

// Reads the model and its initializers (external data files from the model's folder) onto `device`.
Model load(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());

// A serialized TensorProto (the backend tests' input_0.pb ...) as a tensor.
Tensor load_tensor_proto(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());
// A serialized value of the kind `info` declares: a TensorProto, a SequenceProto or an OptionalProto.
Value load_value_proto(const std::string& path, const ValueInfo& info, const std::string& device = "",
                       SourceLocation where = SourceLocation::current());

}  // namespace tg::onnx
