#include "schedule/schedule_cache.h"

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "schedule/buffer_uop.h"
#include "tg/context.h"

namespace tg::schedule {

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
  bool operator==(const FormNode&) const = default;
};

// A graph read for the cache: its nodes (sources first, as toposort orders them), its BUFFERs in order of first
// appearance, and its form with a hash of it.
struct Graph {
  std::vector<UOp> nodes, buffers;
  std::unordered_map<const uop::UOpNode*, uint32_t> index;
  std::vector<FormNode> form;
  uint64_t hash = 0x736368656475ull;
};

Graph read_graph(const std::vector<UOp>& outputs) {
  Graph g;
  g.nodes = UOp::sink(outputs).toposort();
  g.index.reserve(g.nodes.size());
  g.form.reserve(g.nodes.size());
  for (const UOp& u : g.nodes) {
    FormNode f{u.op(), u.dtype(), Arg(), -1, 0, {}};
    if (u.op() == Ops::BUFFER) {
      f.buffer = static_cast<int64_t>(g.buffers.size()), f.size = uop::get_buffer_arg(u).size;
      g.buffers.push_back(u);
    } else {
      f.arg = u.arg();
    }
    uint64_t h = uop::hash_mix(uop::hash_mix(static_cast<uint64_t>(f.op), static_cast<uint64_t>(f.dtype.count())),
                               static_cast<uint64_t>(f.dtype.scalar_type()));
    h = uop::hash_mix(h, f.buffer < 0 ? f.arg.hash() : uop::hash_mix(static_cast<uint64_t>(f.buffer), static_cast<uint64_t>(f.size)));
    for (const UOp& s : u.src()) {
      f.src.push_back(g.index.at(s.get()));
      h = uop::hash_mix(h, f.src.back());
    }
    g.hash = uop::hash_mix(g.hash, h);
    g.index.emplace(u.get(), static_cast<uint32_t>(g.form.size()));
    g.form.push_back(std::move(f));
  }
  return g;
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
};

// The template of schedule `s` made for graph `g`; none when some buffer is neither the graph's nor new.
std::optional<Template> make_template(const Graph& g, const Schedule& s) {
  Template t;
  std::unordered_map<const uop::UOpNode*, uint32_t> fresh, inputs;
  for (size_t i = 0; i < g.buffers.size(); i++) inputs.emplace(g.buffers[i].get(), static_cast<uint32_t>(i));
  for (const auto& [node, view] : s.becomes) {
    const UOp& buffer = view.op() == Ops::BUFFER ? view : view.src(0);
    auto at = g.index.find(node.get());
    if (buffer.op() != Ops::BUFFER || at == g.index.end()) return std::nullopt;
    fresh.emplace(buffer.get(), static_cast<uint32_t>(t.fresh.size()));
    t.becomes.push_back({at->second, static_cast<uint32_t>(t.fresh.size())});
    t.fresh.push_back({buffer.src(0).arg().get<std::string>(), buffer.dtype(), uop::get_buffer_arg(buffer).size});
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
  t.form = g.form;
  return t;
}

// The template's schedule over graph g's nodes and buffers, with new buffers for the ones it creates.
Schedule instantiate(const Template& t, const Graph& g) {
  Schedule s;
  std::vector<UOp> fresh;
  for (const Template::Fresh& f : t.fresh) fresh.push_back(new_buffer(f.device, f.dtype, f.size));
  for (const auto& [node, buffer] : t.becomes) s.becomes.push_back({g.nodes[node], buffer_as_shape(fresh[buffer], g.nodes[node].shape())});
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
  if (!getenv_int("SCHEDULE_CACHE", 1)) return make(outputs);
  Graph g = read_graph(outputs);
  std::shared_ptr<const Template> hit;
  {
    std::lock_guard lock(cache_mu);
    if (auto it = cache().find(g.hash); it != cache().end())
      for (const auto& t : it->second)
        if (t->form == g.form) hit = t;
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
