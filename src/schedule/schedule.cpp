#include "schedule/schedule.h"

#include <algorithm>
#include <climits>
#include <set>
#include <sstream>

#include "base/util.h"
#include "multi/multi.h"
#include "runtime/buffer_uop.h"
#include "schedule/kernel_ast.h"
#include "schedule/schedule_cache.h"
#include "shape/view.h"
#include "tg/context.h"
#include "uop/spec.h"

namespace tg::schedule {

using runtime::buffer_as_node;
using runtime::buffer_of;
using runtime::new_buffer;

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
  // a buffer's writers: one kernel, or the pieces of a cat each writing its slice (ASSIGNs into slices too)
  std::unordered_map<const uop::UOpNode*, std::vector<size_t>> producers;
  for (size_t i = 0; i < n; i++) producers[items[i].bufs[0].get()].push_back(i);
  std::vector<std::vector<size_t>> deps(n), readers(n);
  std::vector<int64_t> bytes(n);
  for (size_t i = 0; i < n; i++) {
    const std::vector<size_t>& writers = producers.at(items[i].bufs[0].get());
    bytes[i] = writers[0] == i ? static_cast<int64_t>(buffer_of(items[i].bufs[0]).nbytes()) : 0;  // counted once
    for (size_t b = 1; b < items[i].bufs.size(); b++)
      if (auto it = producers.find(items[i].bufs[b].get()); it != producers.end())
        for (size_t w : it->second)
          if (w < i) deps[i].push_back(w);  // (the items come producers first)
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
  auto fresh_buffer = [&](const UOp& u) {
    UOp out = new_buffer(*g.device.at(u.get()), u.dtype(), shape::prod(u.max_shape()));
    buffers[u.get()] = out;
    s.becomes.push_back({u, buffer_as_node(out, u)});
    return out;
  };
  auto add_kernel = [&](const UOp& u, const UOp& out) {
    KernelAST k = build_kernel(u, out, g, buffers);
    for (const auto& [var, value] : k.var_vals.vals) s.var_vals.add(var, value);
    s.items.push_back({ScheduleItem::Kind::Kernel, k.ast, k.bufs});
  };
  for (const UOp& u : g.nodes) {
    if (!g.realized(u)) continue;
    int64_t size = shape::prod(u.max_shape());  // a symbolic node's buffer fits every value (buffer_as_node)
    // a cat filled by its pieces has no kernel; a piece is stored into its slice of the cat's buffer. (The piece
    // itself becomes nothing: as a view of the cat's buffer, an assign into the cat would change it.)
    if (g.filled.count(u.get())) {
      if (!buffers.count(u.get())) fresh_buffer(u);
      continue;
    }
    if (auto slice = g.slices.find(u.get()); slice != g.slices.end()) {
      const UOp& cat = slice->second.cat;
      UOp out = buffers.count(cat.get()) ? buffers.at(cat.get()) : fresh_buffer(cat);
      if (size > 0) add_kernel(u, out);
      continue;
    }
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
    UOp out = in_place ? movement_base(u.src(1)) : fresh_buffer(u);
    if (in_place) buffers[u.get()] = out;
    if (size == 0) continue;  // nothing to compute
    if (is_transfer(u.op())) {
      UOp src = plain_buffer(u.src(0));
      if (!src) src = buffers.at(u.src(0).get());
      if (u.op() == Ops::COPY) s.items.push_back({ScheduleItem::Kind::Copy, UOp(), {out, src}});
      else s.items.push_back({ScheduleItem::Kind::Allreduce, UOp::make(Ops::ALLREDUCE, u.dtype(), {}, u.arg()), {out, src}});
      continue;
    }
    add_kernel(u, out);
  }
  s.items = order_for_memory(std::move(s.items));
  return s;
}

// A graph over several devices is scheduled as its per-device graphs (multi/multi.h); each multi node that this
// schedule computes becomes a MULTI of its parts' new buffers.
Schedule multi_schedule(const std::vector<UOp>& outputs) {
  multi::Lowered low = multi::lower(outputs);
  Schedule s = cached_schedule(low.outputs, build_schedule);
  std::unordered_map<const uop::UOpNode*, UOp> made;
  for (const auto& [node, buffer] : s.becomes) made.emplace(node.get(), buffer);
  for (const auto& [node, lowered] : low.singles)
    if (auto it = made.find(lowered.get()); it != made.end()) s.becomes.push_back({node, it->second});
  for (const auto& [node, sharded] : low.multis) {
    std::vector<UOp> src{UOp::make(Ops::DEVICE, dtypes::void_, {}, uop::Arg(multi::join_devices(sharded.devices)))};
    bool computed = false;
    for (const UOp& part : sharded.shards) {
      auto it = made.find(part.get());
      computed = computed || it != made.end();
      src.push_back(it != made.end() ? it->second : part);
    }
    if (!computed || !std::all_of(src.begin() + 1, src.end(), is_realized_form)) continue;
    UOp m = UOp::make(Ops::MULTI, node.dtype(), std::move(src), uop::Arg(sharded.axis));
    made.emplace(node.get(), m);
    s.becomes.push_back({node, m});
  }
  return s;
}

}  // namespace

Schedule create_schedule(const std::vector<UOp>& outputs) {
  static const base::IntSetting spec_level("SPEC");
  bool spec = spec_level.get() >= 1;  // read once per realize: the checks below build and walk graphs
  if (spec) uop::check_spec(UOp::sink(outputs), uop::SpecStage::Tensor);
  Schedule s = multi::involves_multi(outputs) ? multi_schedule(outputs) : cached_schedule(outputs, build_schedule);
  if (spec)
    for (const ScheduleItem& item : s.items)
      if (item.kind == ScheduleItem::Kind::Kernel) uop::check_spec(item.ast, uop::SpecStage::Kernel);
  return s;
}

std::string item_kind(const ScheduleItem& it) {
  return it.kind == ScheduleItem::Kind::Kernel ? "kernel" : it.kind == ScheduleItem::Kind::Copy ? "copy" : "allreduce " + it.ast.arg().get<std::string>();
}
std::string buffer_str(const UOp& b) { return uop::get_buffer_arg(b).repr() + ":" + b.dtype().name(); }

std::string print_schedule(const Schedule& s) {
  std::ostringstream os;
  for (size_t i = 0; i < s.items.size(); i++) {
    const ScheduleItem& it = s.items[i];
    os << "schedule item " << i << ": " << item_kind(it) << ", buffers";
    for (const UOp& b : it.bufs) os << " " << buffer_str(b);
    os << "\n";
    if (it.kind == ScheduleItem::Kind::Kernel) os << it.ast;
  }
  return os.str();
}

}  // namespace tg::schedule
