#include "schedule/schedule_cache.h"

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "base/util.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "tg/context.h"
#include "uop/sint.h"

namespace tg::schedule {

using runtime::buffer_as_node;
using runtime::new_buffer;

using uop::Arg;
using uop::Ops;
using uop::UOp;

namespace {

constexpr size_t kMaxForms = 512;  // beyond it the cache starts over

// One node of a graph's form: a BUFFER is its place among the graph's buffers and its size; any other node its
// arg. Sources are indices into the form.
struct FormNode {
  Ops op;
  DType dtype;
  Arg arg;
  int64_t buffer = -1, size = 0;
  std::vector<uint32_t> src;
};

// A graph read for the cache: its nodes (sources first, as toposort orders them), each node's place among the
// graph's BUFFERs (-1 for other nodes), the BUFFERs in order of first appearance, and a hash of its form. The form
// itself is written out only when a schedule is remembered; a lookup compares the nodes with it in place.
// The form is unbound: a symbolic size's bound values are not part of it (one schedule serves every value, as its
// kernels do), they are the graph's var_vals. `unbound` holds the args of the nodes with symbolic sizes, unbound,
// and an empty arg for each numbered DETACH.
struct Graph {
  std::vector<UOp> nodes, buffers;
  std::vector<int64_t> slot;
  uop::NodeIndex index;
  std::unordered_map<uint32_t, Arg> unbound;
  uop::VarVals var_vals;
  bool cacheable = true;  // false where two values of one variable meet (the schedule raises that)
  uint64_t hash = 0x736368656475ull;
  const Arg& arg(size_t i) const {
    auto it = unbound.find(static_cast<uint32_t>(i));
    return it == unbound.end() ? nodes[i].arg() : it->second;
  }
};

Graph read_graph(const std::vector<UOp>& outputs) {
  Graph g;
  g.nodes = UOp::sink(outputs).toposort();
  for (const UOp& u : g.nodes) {
    bool buffer = u.op() == Ops::BUFFER;
    g.slot.push_back(buffer ? static_cast<int64_t>(g.buffers.size()) : -1);
    if (buffer) g.buffers.push_back(u);
    if (const auto* dims = u.arg().get_if<std::vector<Dim>>()) {
      std::vector<Dim> free;
      try {
        for (const Dim& d : *dims) free.push_back(uop::unbind(d, &g.var_vals));
      } catch (const ArgumentError&) {
        g.cacheable = false;
        return g;
      }
      g.unbound.emplace(static_cast<uint32_t>(g.index.size()), Arg(std::move(free)));
    }
    // a leaf's DETACH number (Tensor::requires_grad_) tells leaves apart for autograd; it is not part of a form
    if (u.op() == Ops::DETACH && !u.arg().empty()) g.unbound.emplace(static_cast<uint32_t>(g.index.size()), Arg());
    uint64_t h = uop::hash_mix(uop::hash_mix(static_cast<uint64_t>(u.op()), static_cast<uint64_t>(u.dtype().count())),
                               static_cast<uint64_t>(u.dtype().scalar_type()));
    h = uop::hash_mix(h, buffer ? uop::hash_mix(static_cast<uint64_t>(g.slot.back()), static_cast<uint64_t>(uop::get_buffer_arg(u).size))
                                : g.arg(g.index.size()).hash());
    for (const UOp& s : u.src()) h = uop::hash_mix(h, g.index.at(s.get()));
    g.hash = uop::hash_mix(g.hash, h);
    g.index.insert(u.get(), static_cast<uint32_t>(g.index.size()));
  }
  return g;
}

// node i of g as a FormNode: a BUFFER as its slot and size, any other node with its arg
FormNode form_node(const Graph& g, size_t i) {
  const UOp& u = g.nodes[i];
  FormNode f{u.op(), u.dtype(), g.slot[i] < 0 ? g.arg(i) : Arg(), g.slot[i], g.slot[i] < 0 ? 0 : uop::get_buffer_arg(u).size, {}};
  for (const UOp& s : u.src()) f.src.push_back(g.index.at(s.get()));
  return f;
}

// whether g has the form `form`, node by node, without copying its args
bool has_form(const Graph& g, const std::vector<FormNode>& form) {
  if (form.size() != g.nodes.size()) return false;
  for (size_t i = 0; i < form.size(); i++) {
    const UOp& u = g.nodes[i];
    const FormNode& f = form[i];
    if (u.op() != f.op || u.dtype() != f.dtype || g.slot[i] != f.buffer || u.src().size() != f.src.size()) return false;
    if (f.buffer < 0 ? !(g.arg(i) == f.arg) : uop::get_buffer_arg(u).size != f.size) return false;
    for (size_t j = 0; j < f.src.size(); j++)
      if (g.index.at(u.src(j).get()) != f.src[j]) return false;
  }
  return true;
}

// A schedule with its buffers as slots: one of the graph's buffers (by place) or one the schedule creates. It holds
// no buffer, so caching it keeps no memory alive.
struct Template {
  struct Slot {
    bool input;
    uint32_t index;
  };
  struct Fresh {
    std::string device;
    DType dtype;
    int64_t size;
  };
  struct Item {
    ScheduleItem::Kind kind;
    UOp ast;
    std::vector<Slot> bufs;
  };
  std::vector<FormNode> form;
  std::vector<Fresh> fresh;
  std::vector<Item> items;
  std::vector<std::pair<uint32_t, uint32_t>> becomes;  // (node, fresh buffer)
  std::vector<std::string> vars;  // the variables the kernels take (their values are each graph's own)
};

// The template of schedule `s` made for graph `g`; none when some buffer is neither the graph's nor new.
std::optional<Template> make_template(const Graph& g, const Schedule& s) {
  Template t;
  std::unordered_map<const uop::UOpNode*, uint32_t> fresh, inputs;
  for (size_t i = 0; i < g.buffers.size(); i++) inputs.emplace(g.buffers[i].get(), static_cast<uint32_t>(i));
  for (const auto& [node, view] : s.becomes) {
    const UOp& buffer = movement_base(view);
    const uint32_t* at = g.index.find(node.get());
    if (buffer.op() != Ops::BUFFER || !at) return std::nullopt;
    auto [f, added] = fresh.emplace(buffer.get(), static_cast<uint32_t>(t.fresh.size()));  // two nodes may share one
    t.becomes.push_back({*at, f->second});
    if (added) t.fresh.push_back({buffer.src(0).arg().get<std::string>(), buffer.dtype(), uop::get_buffer_arg(buffer).size});
  }
  for (const ScheduleItem& it : s.items) {
    Template::Item item{it.kind, it.ast, {}};
    for (const UOp& b : it.bufs) {
      if (auto f = fresh.find(b.get()); f != fresh.end()) item.bufs.push_back({false, f->second});
      else if (auto in = inputs.find(b.get()); in != inputs.end()) item.bufs.push_back({true, in->second});
      else return std::nullopt;
    }
    t.items.push_back(std::move(item));
  }
  for (size_t i = 0; i < g.nodes.size(); i++) t.form.push_back(form_node(g, i));
  for (const auto& [var, value] : s.var_vals.vals) t.vars.push_back(var.name);
  return t;
}

// The template's schedule over graph g's nodes and buffers, with new buffers for the ones it creates.
Schedule instantiate(const Template& t, const Graph& g) {
  Schedule s;
  std::vector<UOp> fresh;
  for (const Template::Fresh& f : t.fresh) fresh.push_back(new_buffer(f.device, f.dtype, f.size));
  for (const auto& [node, buffer] : t.becomes) s.becomes.push_back({g.nodes[node], buffer_as_node(fresh[buffer], g.nodes[node])});
  for (const std::string& name : t.vars)  // this graph's values of the form's variables
    for (const auto& [var, value] : g.var_vals.vals)
      if (var.name == name) s.var_vals.add(var, value);
  for (const Template::Item& item : t.items) {
    ScheduleItem it{item.kind, item.ast, {}};
    for (const Template::Slot& slot : item.bufs) it.bufs.push_back(slot.input ? g.buffers[slot.index] : fresh[slot.index]);
    s.items.push_back(std::move(it));
  }
  return s;
}

std::mutex cache_mu;
std::unordered_map<uint64_t, std::vector<std::shared_ptr<const Template>>>& cache() {
  static auto* c = new std::unordered_map<uint64_t, std::vector<std::shared_ptr<const Template>>>();
  return *c;
}
size_t cached_forms = 0;
CacheStats stats;

}  // namespace

CacheStats schedule_cache_stats() {
  std::lock_guard lock(cache_mu);
  return stats;
}

Schedule cached_schedule(const std::vector<UOp>& outputs, const std::function<Schedule(const std::vector<UOp>&)>& make) {
  static const base::IntSetting enabled("SCHEDULE_CACHE", 1);
  if (!enabled.get()) return make(outputs);
  Graph g = read_graph(outputs);
  if (!g.cacheable) return make(outputs);
  std::shared_ptr<const Template> hit;
  {
    std::lock_guard lock(cache_mu);
    if (auto it = cache().find(g.hash); it != cache().end())
      for (const auto& t : it->second)
        if (has_form(g, t->form)) hit = t;
    stats.hits += hit != nullptr;
  }
  if (hit) return instantiate(*hit, g);
  Schedule s = make(outputs);
  if (std::optional<Template> t = make_template(g, s)) {
    std::lock_guard lock(cache_mu);
    stats.misses++;
    if (++cached_forms > kMaxForms) cache().clear(), cached_forms = 1;
    cache()[g.hash].push_back(std::make_shared<const Template>(std::move(*t)));
  }
  return s;
}

}  // namespace tg::schedule
