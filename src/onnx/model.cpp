// Loading an ONNX model and running its graph: nodes in the file's (topological) order, each mapped by its op
// table entry onto tg tensors, with values looked up by name through the scopes of enclosing graphs.
#include <cmath>
#include <cstdio>
#include <mutex>

#include "onnx/ops.h"
#include "onnx/protobuf.h"
#include "state/file_io.h"
#include "tensor/helpers.h"

namespace tg::onnx {

const Tensor& Value::tensor() const {
  if (kind_ != Kind::Tensor) throw ArgumentError("onnx.Value", std::string("this value is ") + (kind_ == Kind::None ? "an empty optional" : "a sequence") + ", not a tensor");
  return tensor_;
}
const std::vector<Tensor>& Value::sequence() const {
  if (kind_ != Kind::Sequence) throw ArgumentError("onnx.Value", std::string("this value is ") + (kind_ == Kind::None ? "an empty optional" : "a tensor") + ", not a sequence");
  return seq_;
}

namespace detail {
struct ModelImpl {
  std::string path, dir, device;
  proto::Model model;
  std::shared_ptr<const unsigned char> file;  // the file, mapped: the decoded structs view into it
  std::map<std::string, Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs;
  // host_tensor's and model_tensor's tensors, by what they are made from (see ops.h), with the run that last used
  // each: those a run did not use (values of an earlier run's data) are dropped when it ends
  mutable std::mutex made_mu;
  mutable std::map<std::string, std::pair<Tensor, uint64_t>> made;
  mutable uint64_t runs = 0;
};
}  // namespace detail

struct Scope {
  const detail::ModelImpl* model;
  Scope* parent;
  std::map<std::string, Value> values;
  const Value* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (auto it = s->values.find(name); it != s->values.end()) return &it->second;
    return nullptr;
  }
};

namespace {

thread_local const detail::ModelImpl* running = nullptr;  // the model whose graph this thread runs
class Running {
 public:
  explicit Running(const detail::ModelImpl* m) : prev_(running) {
    running = m;
    std::lock_guard<std::mutex> lock(m->made_mu);
    m->runs++;
  }
  ~Running() {
    const detail::ModelImpl* m = running;
    running = prev_;
    std::lock_guard<std::mutex> lock(m->made_mu);
    std::erase_if(m->made, [&](const auto& kv) { return kv.second.second != m->runs; });
  }
 private:
  const detail::ModelImpl* prev_;
};

// the running model's tensor made from `key`, made (and realized) the first time
Tensor remembered(const std::string& key, const std::function<Tensor()>& make) {
  if (!running) return make();
  std::lock_guard<std::mutex> lock(running->made_mu);
  auto it = running->made.find(key);
  if (it == running->made.end()) it = running->made.emplace(key, std::make_pair(make().realize(), uint64_t{0})).first;
  it->second.second = running->runs;
  return it->second.first;
}

template <typename T>
Tensor remembered_host(const std::vector<T>& v, DType dt, const Shape& shape, const std::string& device) {
  std::string key = "host " + device + " " + dt.name() + " " + tensor::shape_str(shape) + (std::is_same_v<T, double> ? " f " : " i ");
  key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return remembered(key, [&] { return Tensor(v, shape, device).cast(dt); });
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    register_elementwise_ops(t);
    register_reduce_ops(t);
    register_nn_ops(t);
    register_movement_ops(t);
    register_misc_ops(t);
    register_rnn_ops(t);
    register_host_ops(t);
    register_sampling_ops(t);
    register_signal_ops(t);
    return t;
  }();
  return table;
}

ValueInfo public_info(const proto::ValueInfo& v) {
  ValueInfo out;
  out.name = v.name;
  out.dtype = proto::to_dtype(v.elem_type);
  out.is_sequence = v.kind == proto::ValueInfo::Kind::Sequence;
  out.is_optional = v.kind == proto::ValueInfo::Kind::Optional;
  if (v.shape) {
    out.shape.emplace();
    for (const proto::Dim& d : *v.shape) {
      out.shape->push_back(d.value && *d.value >= 0 ? *d.value : -1);
      out.dim_params.push_back(d.param);
    }
  }
  return out;
}

// The file mapped read-only (the state formats' map_file) and its bytes, which live as long as `file` does.
std::string_view map_bytes(const std::string& path, std::shared_ptr<const unsigned char>& file, const char* op, SourceLocation where) {
  size_t size = 0;
  file = state::map_file(path, size, op, where);
  return {reinterpret_cast<const char*>(file.get()), size};
}

std::string where_str(const proto::Graph& g) { return g.name.empty() ? std::string() : " of graph '" + g.name + "'"; }

std::vector<Value> run_graph(const detail::ModelImpl& m, const proto::Graph& g, Scope& scope) {
  for (const proto::TensorData& init : g.initializers)
    if (!scope.values.count(init.name)) scope.values[init.name] = model_tensor(init, m.device, m.dir, m.path);
  for (const proto::Node& node : g.nodes) {
    std::string domain = node.domain == "ai.onnx" ? "" : node.domain;
    std::string label = "node '" + node.name + "' (" + (domain.empty() ? "" : domain + ":") + node.op_type + ")" + where_str(g);
    auto opset_it = m.model.opsets.find(domain);
    if (opset_it == m.model.opsets.end())
      throw ArgumentError("onnx.run", m.path + ": " + label + " is in domain '" + domain + "', which the model does not import");
    auto op_it = op_table().find(domain.empty() ? node.op_type : domain + ":" + node.op_type);
    if (op_it == op_table().end())
      throw ArgumentError("onnx.run", m.path + ": " + label + ": tinygrad.cpp has no op " + node.op_type +
                                          (domain.empty() ? "" : " in domain '" + domain + "'"));
    std::vector<Value> ins;
    for (const std::string& name : node.inputs) {
      if (name.empty()) { ins.emplace_back(); continue; }
      const Value* v = scope.find(name);
      if (!v) throw ArgumentError("onnx.run", m.path + ": " + label + " reads '" + name + "', which no input, initializer or earlier node defines");
      ins.push_back(*v);
    }
    while (!ins.empty() && ins.back().is_none()) ins.pop_back();
    OpContext ctx(node, opset_it->second, std::move(ins), m.device, m.path, &scope);
    std::vector<Value> outs;
    try {
      outs = op_it->second(ctx);
      ctx.finish();
    } catch (const Error& e) {
      if (e.message().find(m.path + ": node '") != std::string::npos) throw;  // an op's own error names the node
      rethrow_with_note(e, " (in " + m.path + ", " + label + ")", e.where());
    }
    for (size_t k = 0; k < node.outputs.size(); k++) {
      if (node.outputs[k].empty()) continue;
      if (k >= outs.size()) ctx.fail("output " + std::to_string(k) + " ('" + node.outputs[k] + "') is not one this op makes");
      scope.values[node.outputs[k]] = outs[k];
    }
  }
  std::vector<Value> result;
  for (const proto::ValueInfo& o : g.outputs) {
    const Value* v = scope.find(o.name);
    if (!v) throw ArgumentError("onnx.run", m.path + ": graph output '" + o.name + "'" + where_str(g) + " is never computed");
    result.push_back(*v);
  }
  return result;
}

}  // namespace

const Value* lookup(const OpContext& ctx, const std::string& name) { return ctx.scope ? ctx.scope->find(name) : nullptr; }

std::vector<Value> run_subgraph(OpContext& ctx, const proto::Graph& g, const std::vector<Value>& inputs) {
  Scope inner{ctx.scope->model, ctx.scope, {}};
  if (inputs.size() != g.inputs.size())
    ctx.fail("its subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) + " inputs, it is given " + std::to_string(inputs.size()));
  for (size_t k = 0; k < inputs.size(); k++) inner.values[g.inputs[k].name] = inputs[k];
  return run_graph(*ctx.scope->model, g, inner);
}

Model load(const std::string& path, const std::string& device, SourceLocation where) {
  auto impl = std::make_shared<detail::ModelImpl>();
  impl->path = path;
  impl->device = tensor::resolve_device(device);
  size_t slash = path.find_last_of('/');
  impl->dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string_view bytes = map_bytes(path, impl->file, "onnx.load", where);
  try {
    impl->model = proto::parse_model(bytes, path);
    const proto::Graph& g = impl->model.graph;
    for (const proto::TensorData& init : g.initializers)
      impl->initializers[init.name] = proto::to_tensor(init, impl->device, impl->dir, path);
    for (const proto::ValueInfo& v : g.inputs)
      if (!impl->initializers.count(v.name)) impl->inputs.push_back(public_info(v));
    for (const proto::ValueInfo& v : g.outputs) impl->outputs.push_back(public_info(v));
  } catch (const Error& e) {
    rethrow_as(e, "onnx.load", e.message(), where);
  }
  Model m;
  m.impl_ = impl;
  return m;
}

std::map<std::string, Value> Model::run_values(const std::map<std::string, Value>& inputs, SourceLocation where) const {
  const detail::ModelImpl& m = *impl_;
  Scope scope{&m, nullptr, {}};
  for (const auto& [name, t] : m.initializers) scope.values[name] = t;
  std::set<std::string> known;
  for (const proto::ValueInfo& v : m.model.graph.inputs) known.insert(v.name);
  for (const auto& [name, v] : inputs)
    if (!known.count(name)) throw ArgumentError("onnx.run", m.path + ": the model has no input '" + name + "'", where);
  for (const ValueInfo& info : m.inputs) {
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      if (!info.is_optional) throw ArgumentError("onnx.run", m.path + ": input '" + info.name + "' is missing", where);
      continue;
    }
    const Value& v = it->second;
    if (v.is_tensor() && !info.is_sequence) {
      const Tensor& t = v.tensor();
      if (info.dtype && t.dtype() != *info.dtype)
        throw DTypeError("onnx.run", m.path + ": input '" + info.name + "' must be " + info.dtype->name() + ", it is " + t.dtype().name(), where);
      if (info.shape) {
        bool ok = t.ndim() == static_cast<int64_t>(info.shape->size());
        for (size_t d = 0; ok && d < info.shape->size(); d++) ok = (*info.shape)[d] < 0 || (*info.shape)[d] == t.shape()[d];
        if (!ok) {
          std::string want = "(";
          for (size_t d = 0; d < info.shape->size(); d++)
            want += (d ? ", " : "") + ((*info.shape)[d] < 0 ? (info.dim_params[d].empty() ? std::string("?") : info.dim_params[d]) : std::to_string((*info.shape)[d]));
          throw ShapeError("onnx.run", m.path + ": input '" + info.name + "' must have shape " + want + (info.shape->size() == 1 ? ",)" : ")") +
                                           ", it has " + tensor::shape_str(t.shape()), where);
        }
      }
    }
  }
  for (const auto& [name, v] : inputs) scope.values[name] = v;
  std::vector<Value> outs;
  Running running_here(&m);
  try {
    outs = run_graph(m, m.model.graph, scope);
  } catch (const Error& e) {
    rethrow_as(e, e.op(), e.message(), where);
  }
  std::map<std::string, Value> result;
  for (size_t k = 0; k < outs.size(); k++) result[m.model.graph.outputs[k].name] = outs[k];
  return result;
}

std::map<std::string, Tensor> Model::run(const std::map<std::string, Tensor>& inputs, SourceLocation where) const {
  std::map<std::string, Value> in(inputs.begin(), inputs.end());
  std::map<std::string, Tensor> out;
  for (const auto& [name, v] : run_values(in, where)) {
    if (!v.is_tensor()) throw ArgumentError("onnx.run", impl_->path + ": output '" + name + "' is not a tensor: use run_values", where);
    out[name] = v.tensor();
  }
  return out;
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
const std::string& Model::path() const { return impl_->path; }
const std::string& Model::device() const { return impl_->device; }
int64_t Model::opset(const std::string& domain) const {
  auto it = impl_->model.opsets.find(domain == "ai.onnx" ? "" : domain);
  return it == impl_->model.opsets.end() ? 0 : it->second;
}

Tensor load_tensor_proto(const std::string& path, const std::string& device, SourceLocation where) {
  std::shared_ptr<const unsigned char> file;
  std::string_view bytes = map_bytes(path, file, "onnx.load_tensor_proto", where);
  try {
    return proto::to_tensor(proto::parse_tensor(bytes, path), tensor::resolve_device(device), "", path);
  } catch (const Error& e) {
    rethrow_as(e, "onnx.load_tensor_proto", e.message(), where);
  }
}

Value load_value_proto(const std::string& path, const ValueInfo& info, const std::string& device, SourceLocation where) {
  if (!info.is_sequence && !info.is_optional) return load_tensor_proto(path, device, where);
  std::shared_ptr<const unsigned char> file;
  std::string_view bytes = map_bytes(path, file, "onnx.load_value_proto", where);
  std::string dev = tensor::resolve_device(device);
  try {
    proto::DataValue v = info.is_sequence ? proto::parse_sequence(bytes, path) : proto::parse_optional(bytes, path);
    if (v.kind == proto::DataValue::Kind::NoneOptional) return Value();
    if (v.kind == proto::DataValue::Kind::Tensor) return proto::to_tensor(v.tensor, dev, "", path);
    std::vector<Tensor> items;
    for (const proto::TensorData& t : v.sequence) items.push_back(proto::to_tensor(t, dev, "", path));
    return Value::sequence(std::move(items));
  } catch (const Error& e) {
    rethrow_as(e, "onnx.load_value_proto", e.message(), where);
  }
}

// ---- OpContext ----

OpContext::OpContext(const proto::Node& n, int64_t version, std::vector<Value> inputs, const std::string& dev,
                     const std::string& file, Scope* s)
    : node(n), opset(version), device(dev), scope(s), inputs_(std::move(inputs)), file_(file) {}

std::string OpContext::label() const {
  return "node '" + node.name + "' (" + (node.domain.empty() ? "" : node.domain + ":") + node.op_type + ")";
}
void OpContext::fail(const std::string& msg) const { throw ArgumentError("onnx.run", file_ + ": " + label() + ": " + msg); }
void OpContext::fail_shape(const std::string& msg) const { throw ShapeError("onnx.run", file_ + ": " + label() + ": " + msg); }
void OpContext::fail_dtype(const std::string& msg) const { throw DTypeError("onnx.run", file_ + ": " + label() + ": " + msg); }

const Value& OpContext::value(size_t i) const {
  if (i >= inputs_.size()) fail("input " + std::to_string(i) + " is required and missing");
  return inputs_[i];
}
const Tensor& OpContext::in(size_t i) const {
  const Value& v = value(i);
  if (!v.is_tensor()) fail("input " + std::to_string(i) + (v.is_none() ? " is required and missing" : " must be a tensor, it is a sequence"));
  return v.tensor();
}
std::optional<Tensor> OpContext::opt(size_t i) const {
  if (!has(i)) return std::nullopt;
  return in(i);
}
std::vector<Tensor> OpContext::variadic(size_t from) const {
  std::vector<Tensor> out;
  for (size_t k = from; k < inputs_.size(); k++) out.push_back(in(k));
  return out;
}
std::vector<int64_t> OpContext::ints(size_t i) const {
  const Tensor& t = in(i);
  if (!t.dtype().is_int() && !t.dtype().is_bool()) fail_dtype("input " + std::to_string(i) + " must hold integers, it is " + t.dtype().name());
  return t.numel() ? t.cast(dtypes::int64).to_vector<int64_t>() : std::vector<int64_t>{};
}
std::vector<double> OpContext::floats(size_t i) const {
  const Tensor& t = in(i);
  return t.numel() ? t.cast(dtypes::float64).to_vector<double>() : std::vector<double>{};
}
int64_t OpContext::int_scalar(size_t i) const {
  std::vector<int64_t> v = ints(i);
  if (v.size() != 1) fail_shape("input " + std::to_string(i) + " must hold one value, it has shape " + tensor::shape_str(in(i).shape()));
  return v[0];
}
double OpContext::float_scalar(size_t i) const {
  std::vector<double> v = floats(i);
  if (v.size() != 1) fail_shape("input " + std::to_string(i) + " must hold one value, it has shape " + tensor::shape_str(in(i).shape()));
  return v[0];
}

const proto::Attribute* OpContext::find(const std::string& name, int32_t type) {
  for (const proto::Attribute& a : node.attributes) {
    if (a.name != name) continue;
    used_.insert(name);
    if (a.type != type)
      fail("attribute '" + name + "' must be " + proto::attr_type_name(type) + ", it is " + proto::attr_type_name(a.type));
    return &a;
  }
  return nullptr;
}
bool OpContext::has_attr(const std::string& name) const {
  for (const proto::Attribute& a : node.attributes)
    if (a.name == name) return true;
  return false;
}
template <class T>
static T or_default(const OpContext& c, const std::string& name, std::optional<T> def) {
  if (!def) c.fail("attribute '" + name + "' is required");
  return *def;
}
int64_t OpContext::attr_int(const std::string& name, std::optional<int64_t> def) {
  const proto::Attribute* a = find(name, proto::A_INT);
  return a ? a->i : or_default(*this, name, def);
}
double OpContext::attr_float(const std::string& name, std::optional<double> def) {
  const proto::Attribute* a = find(name, proto::A_FLOAT);
  return a ? a->f : or_default(*this, name, def);
}
std::string OpContext::attr_string(const std::string& name, std::optional<std::string> def) {
  const proto::Attribute* a = find(name, proto::A_STRING);
  return a ? a->s : or_default(*this, name, def);
}
std::vector<int64_t> OpContext::attr_ints(const std::string& name, std::optional<std::vector<int64_t>> def) {
  const proto::Attribute* a = find(name, proto::A_INTS);
  return a ? a->ints : or_default(*this, name, def);
}
std::vector<double> OpContext::attr_floats(const std::string& name, std::optional<std::vector<double>> def) {
  const proto::Attribute* a = find(name, proto::A_FLOATS);
  return a ? std::vector<double>(a->floats.begin(), a->floats.end()) : or_default(*this, name, def);
}
std::vector<std::string> OpContext::attr_strings(const std::string& name, std::optional<std::vector<std::string>> def) {
  const proto::Attribute* a = find(name, proto::A_STRINGS);
  return a ? a->strings : or_default(*this, name, def);
}
const proto::TensorData& OpContext::attr_tensor(const std::string& name) {
  const proto::Attribute* a = find(name, proto::A_TENSOR);
  if (!a || !a->t) fail("attribute '" + name + "' is required");
  return *a->t;
}
const proto::Graph& OpContext::attr_graph(const std::string& name) {
  const proto::Attribute* a = find(name, proto::A_GRAPH);
  if (!a || !a->g) fail("attribute '" + name + "' is required");
  return *a->g;
}
void OpContext::ignore(const std::string& name) { used_.insert(name); }
void OpContext::finish() const {
  for (const proto::Attribute& a : node.attributes)
    if (!used_.count(a.name)) fail("attribute '" + a.name + "' is not one this op takes (opset " + std::to_string(opset) + ")");
}

int64_t OpContext::axis(int64_t a, int64_t ndim) const {
  int64_t r = std::max<int64_t>(ndim, 1);
  if (a < -r || a >= r) fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(ndim));
  return a < 0 ? a + r : a;
}
void OpContext::need_float(const Tensor& t, const char* what) const {
  if (!t.dtype().is_float()) fail_dtype(std::string(what) + " must be a float tensor, it is " + t.dtype().name());
}

Tensor host_tensor(const std::vector<int64_t>& v, DType dt, const Shape& shape, const std::string& device) {
  return remembered_host(v, dt, shape, device);
}
Tensor host_tensor(const std::vector<double>& v, DType dt, const Shape& shape, const std::string& device) {
  return remembered_host(v, dt, shape, device);
}
Tensor model_tensor(const proto::TensorData& t, const std::string& device, const std::string& dir, const std::string& file) {
  char at[32];
  std::snprintf(at, sizeof at, "%p", static_cast<const void*>(&t));
  return remembered("model " + device + " " + at, [&] { return proto::to_tensor(t, device, dir, file); });
}

}  // namespace tg::onnx
