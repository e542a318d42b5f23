#include <set>

#include "runtime/buffer.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "tensor/helpers.h"
#include "tg/state.h"

namespace tg {

namespace {
std::vector<std::pair<std::string, Tensor>> named(nn::Module& model) {
  std::vector<std::pair<std::string, Tensor>> out;
  model.state(nn::StateVisitor([&](const std::string& name, Tensor& t) { out.emplace_back(name, t); }));
  return out;
}
}  // namespace

StateDict get_state_dict(nn::Module& model) {
  StateDict d;
  for (auto& [name, t] : named(model)) d.emplace(name, t);
  return d;
}

std::vector<Tensor> get_parameters(nn::Module& model) {
  std::vector<Tensor> out;
  for (auto& [name, t] : named(model)) out.push_back(t);
  return out;
}

void load_state_dict(nn::Module& model, const StateDict& state, bool strict, SourceLocation where) {
  auto mine = named(model);
  std::vector<std::string> missing, unexpected;
  std::set<std::string> names;
  for (auto& [name, t] : mine) {
    names.insert(name);
    auto it = state.find(name);
    if (it == state.end()) {
      if (strict) missing.push_back(name);
      continue;
    }
    if (it->second.shape() != t.shape())
      throw ShapeError("load_state_dict", name + ": the model has shape " + tensor::shape_str(t.shape()) + ", the state " +
                                              tensor::shape_str(it->second.shape()), where);
    if (it->second.dtype() != t.dtype())
      throw DTypeError("load_state_dict", name + ": the model has " + t.dtype().name() + ", the state " + it->second.dtype().name(), where);
  }
  if (strict)
    for (auto& [name, t] : state)
      if (!names.count(name)) unexpected.push_back(name);
  if (!missing.empty() || !unexpected.empty()) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
      return s;
    };
    std::string msg;
    if (!missing.empty()) msg += "missing from the state: " + list(missing);
    if (!unexpected.empty()) msg += std::string(msg.empty() ? "" : "; ") + "not in the model: " + list(unexpected);
    throw ArgumentError("load_state_dict", msg, where);
  }
  // each value goes where the model's tensor is: its device, or its devices, split as it is split (a model
  // replicated or sharded for data- or model-parallel training loads a checkpoint read on one device)
  auto placed_like = [&](const Tensor& v, const Tensor& t) {
    if (v.device() == t.device()) return v;
    uop::UOp graph = t.uop();
    if (graph.op() == uop::Ops::MULTI && graph.arg().get<int64_t>() >= 0) return v.shard(t.devices(), graph.arg().get<int64_t>(), where);
    return v.to(t.device(), where);
  };
  std::vector<Tensor> loaded;
  for (auto& [name, t] : mine)
    if (auto it = state.find(name); it != state.end()) loaded.push_back(t.assign(placed_like(it->second, t), where));
  Tensor::realize(loaded);
}

void load_now(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    uop::UOp graph = t.uop(), base = schedule::movement_base(graph);  // movement_base refers into graph: keep it
    if (base.op() == uop::Ops::BUFFER) runtime::buffer_of(base).ptr();  // a lazily filled buffer copies its bytes here
  }
}

}  // namespace tg
