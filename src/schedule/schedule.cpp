#include "schedule/schedule.h"

#include <algorithm>
#include <climits>
#include <set>
#include <sstream>

#include "schedule/buffer_uop.h"
#include "schedule/kernel_ast.h"
#include "schedule/schedule_cache.h"
#include "shape/view.h"

namespace tg::schedule {

using uop::Ops;
using uop::UOp;

namespace {

// The items reordered to keep fewer buffers alive at once (run_schedule frees each after its last reader): list
// scheduling over the read-after-write edges that runs next the ready item growing the bytes held the least (its
// output, less the inputs it is the last reader of), ties in the original order. Without it a deep backward
// computes every layer's gradient before the first weight gradient that consumes them. Only the first few ready
// items are weighed, so a wide schedule costs linear time.
std::vector<ScheduleItem> order_for_memory(std::vector<ScheduleItem> items) {
  constexpr int kWeighed = 64;
  size_t n = items.size();
  std::unordered_map<const uop::UOpNode*, size_t> producer;
  for (size_t i = 0; i < n; i++) producer[items[i].bufs[0].get()] = i;
  std::vector<std::vector<size_t>> deps(n), readers(n);
  std::vector<int64_t> bytes(n);
  for (size_t i = 0; i < n; i++) {
    bytes[i] = static_cast<int64_t>(buffer_of(items[i].bufs[0]).nbytes());
    for (size_t b = 1; b < items[i].bufs.size(); b++)
      if (auto it = producer.find(items[i].bufs[b].get()); it != producer.end()) deps[i].push_back(it->second);
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
    for (size_t d : deps[i]) readers[d].push_back(i);
  }
  std::vector<size_t> waiting(n), unread(n);  // producers not yet run; readers not yet run
  std::set<size_t> ready;
  for (size_t i = 0; i < n; i++) {
    waiting[i] = deps[i].size(), unread[i] = readers[i].size();
    if (waiting[i] == 0) ready.insert(i);
  }
  std::vector<ScheduleItem> out;
  out.reserve(n);
  while (!ready.empty()) {
    size_t best = *ready.begin();
    int64_t best_growth = INT64_MAX;
    int weighed = 0;
    for (auto it = ready.begin(); it != ready.end() && weighed < kWeighed; ++it, ++weighed) {
      int64_t growth = bytes[*it];
      for (size_t d : deps[*it])
        if (unread[d] == 1) growth -= bytes[d];
      if (growth < best_growth) best = *it, best_growth = growth;
    }
    ready.erase(best);
    out.push_back(std::move(items[best]));
    for (size_t d : deps[best]) unread[d]--;
    for (size_t r : readers[best])
      if (--waiting[r] == 0) ready.insert(r);
  }
  return out;
}

// The schedule built from scratch: group, then one kernel AST per realized node.
Schedule build_schedule(const std::vector<UOp>& outputs) {
  Grouping g = group(outputs);
  Schedule s;
  std::unordered_map<const uop::UOpNode*, UOp> buffers;  // realized node -> its new BUFFER
  // the device of every node, in one pass (device_of walks down a chain, which would make this quadratic)
  std::unordered_map<const uop::UOpNode*, const std::string*> device;
  for (const UOp& u : g.nodes) {
    if (u.op() == Ops::DEVICE) device[u.get()] = &u.arg().get<std::string>();
    else if (u.op() == Ops::COPY) device[u.get()] = &u.src(1).arg().get<std::string>();
    else if (!u.src().empty()) device[u.get()] = device.at(u.src(0).get());
  }
  for (const UOp& u : g.nodes) {
    if (!g.realized(u)) continue;
    int64_t size = shape::prod(u.max_shape());  // a symbolic node's buffer fits every value (buffer_as_node)
    // contiguous() of a value this schedule stores anyway (a conv's input that ends another kernel's epilogue) is
    // that value's buffer, as for a buffer that already exists
    if (u.op() == Ops::CONTIGUOUS && u.arg().empty()) {  // (clone's CONTIGUOUS has an arg)
      if (auto it = buffers.find(reshape_base(u.src(0)).get()); it != buffers.end()) {
        buffers[u.get()] = it->second;
        s.becomes.push_back({u, buffer_as_node(it->second, u)});
        continue;
      }
    }
    // an ASSIGN writes into its target's buffer, which live tensors already read: nothing becomes anything
    bool in_place = u.op() == Ops::ASSIGN;
    UOp out = in_place ? movement_base(u.src(1)) : new_buffer(*device.at(u.get()), u.dtype(), size);
    buffers[u.get()] = out;
    if (!in_place) s.becomes.push_back({u, buffer_as_node(out, u)});
    if (size == 0) continue;  // nothing to compute
    if (u.op() == Ops::COPY) {
      UOp src = plain_buffer(u.src(0));
      if (!src) src = buffers.at(u.src(0).get());
      s.items.push_back({ScheduleItem::Kind::Copy, UOp(), {out, src}});
      continue;
    }
    KernelAST k = build_kernel(u, out, g, buffers);
    for (const auto& [var, value] : k.var_vals.vals) s.var_vals.add(var, value);
    s.items.push_back({ScheduleItem::Kind::Kernel, k.ast, k.bufs});
  }
  s.items = order_for_memory(std::move(s.items));
  return s;
}

}  // namespace

Schedule create_schedule(const std::vector<UOp>& outputs) { return cached_schedule(outputs, build_schedule); }

std::string print_schedule(const Schedule& s) {
  std::ostringstream os;
  for (size_t i = 0; i < s.items.size(); i++) {
    const ScheduleItem& it = s.items[i];
    os << "schedule item " << i << ": " << (it.kind == ScheduleItem::Kind::Copy ? "copy" : "kernel") << ", buffers";
    for (const UOp& b : it.bufs) os << " " << uop::get_buffer_arg(b).repr() << ":" << b.dtype().name();
    os << "\n";
    if (it.ast) os << it.ast;
  }
  return os.str();
}

}  // namespace tg::schedule
