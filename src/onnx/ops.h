// What an ONNX op implementation sees: its node's inputs and attributes, with the checks every op shares. The ops
// live one family per file (ops_*.cpp), each registering its ops by name; model.cpp runs the graph.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/proto.h"
#include "tg/onnx.h"

namespace tg::onnx {

struct Scope;

class OpContext {
 public:
  OpContext(const proto::Node& node, int64_t opset, std::vector<Value> inputs, const std::string& device,
            const std::string& file, Scope* scope);

  const proto::Node& node;
  const int64_t opset;          // the version of the node's domain the model imports
  const std::string& device;
  Scope* scope;                 // for ops with subgraphs (If, Loop, Scan, SequenceMap)

  // Inputs; "optional" ones may be absent (omitted or named "").
  size_t num_inputs() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && !inputs_[i].is_none(); }
  const Tensor& in(size_t i) const;                 // a required tensor input
  std::optional<Tensor> opt(size_t i) const;        // an optional tensor input
  const Value& value(size_t i) const;               // any kind (sequences)
  std::vector<Tensor> variadic(size_t from = 0) const;  // every input from `from` on (Concat, Sum, ...)
  // A small input's values on the host (shapes, axes, pads, ...): realizes it. Integers or floats.
  std::vector<int64_t> ints(size_t i) const;
  std::vector<double> floats(size_t i) const;
  int64_t int_scalar(size_t i) const;
  double float_scalar(size_t i) const;

  // Attributes. Each one read is marked; finish() rejects any the op did not read (an attribute it does not know).
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, std::optional<int64_t> def = std::nullopt);
  double attr_float(const std::string& name, std::optional<double> def = std::nullopt);
  std::string attr_string(const std::string& name, std::optional<std::string> def = std::nullopt);
  std::vector<int64_t> attr_ints(const std::string& name, std::optional<std::vector<int64_t>> def = std::nullopt);
  std::vector<double> attr_floats(const std::string& name, std::optional<std::vector<double>> def = std::nullopt);
  std::vector<std::string> attr_strings(const std::string& name, std::optional<std::vector<std::string>> def = std::nullopt);
  const proto::TensorData& attr_tensor(const std::string& name);
  const proto::Graph& attr_graph(const std::string& name);
  void ignore(const std::string& name);  // an attribute with no effect here (seeds, training flags, hints)
  void finish() const;

  // A tg::Error naming the file, node and op.
  [[noreturn]] void fail(const std::string& msg) const;
  [[noreturn]] void fail_shape(const std::string& msg) const;
  [[noreturn]] void fail_dtype(const std::string& msg) const;
  std::string label() const;  // "node 'conv1' (Conv)"

  // Checks shared by many ops.
  int64_t axis(int64_t a, int64_t ndim) const;  // a negative axis counts from the end; out of range fails
  void need_float(const Tensor& t, const char* what) const;

 private:
  const proto::Attribute* find(const std::string& name, int32_t type);
  std::vector<Value> inputs_;
  std::string file_;
  std::set<std::string> used_;
};

// What most ops return: one tensor.
inline std::vector<Value> one(Tensor t) { return {Value(std::move(t))}; }
// A size or axis as an index into std::vector (the ops check ranges first).
inline size_t u(int64_t v) { return static_cast<size_t>(v); }
// x[:, :, ... (n of them)]: the start of an index that picks along axis n.
inline std::vector<Index> full_slices(int64_t n) { return std::vector<Index>(u(n), Index(Slice())); }

using OpFn = std::function<std::vector<Value>(OpContext&)>;
using OpTable = std::map<std::string, OpFn>;  // "Relu", "ai.onnx.preview.training:Adam"

void register_elementwise_ops(OpTable& t);
void register_reduce_ops(OpTable& t);
void register_nn_ops(OpTable& t);
void register_movement_ops(OpTable& t);
void register_misc_ops(OpTable& t);
void register_rnn_ops(OpTable& t);
void register_host_ops(OpTable& t);
void register_sampling_ops(OpTable& t);
void register_signal_ops(OpTable& t);

// The graph runner, for subgraphs: runs `g` with `inputs` bound to its inputs in order, the enclosing scopes'
// values visible by name, and returns its outputs in order.
std::vector<Value> run_subgraph(OpContext& ctx, const proto::Graph& g, const std::vector<Value>& inputs);

// The value a name has where the op runs (its graph and the enclosing ones); null when nothing defines it.
const Value* lookup(const OpContext& ctx, const std::string& name);

// Conv's computation with its attributes read from `c` (kernel_shape, strides, dilations, pads, auto_pad, group):
// Conv, ConvInteger and QLinearConv share it.
Tensor conv(OpContext& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b);

// Tensors from host values on the op's device. While a model runs, it keeps the first tensor made from the same
// values and gives that one again, realized: a run under TinyJit then reads the same buffer on every replay rather
// than copying host data (a Constant, a Shape's output, a Resize's index table). Values computed from an input's
// data (NonMaxSuppression's boxes) differ from run to run and get a tensor of their own each time.
Tensor host_tensor(const std::vector<int64_t>& v, DType dt, const Shape& shape, const std::string& device);
Tensor host_tensor(const std::vector<double>& v, DType dt, const Shape& shape, const std::string& device);
// A tensor made from a part of the model file (a Constant's or ConstantOfShape's attribute, a subgraph's
// initializer): made once per model, realized, and given again on every run.
Tensor model_tensor(const proto::TensorData& t, const std::string& device, const std::string& dir, const std::string& file);

}  // namespace tg::onnx
