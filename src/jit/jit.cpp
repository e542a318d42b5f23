// TinyJit: call 1 runs the function (compiling its kernels), call 2 runs it again while run_schedule records every
// item it runs, later calls replay the record.
//
// Our assign() is not in place: a tensor the function updates moves from buffer A (before the call) to a new
// buffer B that a captured kernel wrote. A replay must read the tensor's current value and leave the new value
// where the tensor points (B), so it first exchanges the memory of A and B: the kernels then read the current
// value from A and write B. That pair is one `Tracked` entry; a tensor the function only reads (A == B) is one too,
// so that a tensor the user changed between calls (a new learning rate) is read from its new buffer.
#include "tg/jit.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "engine/realize.h"
#include "jit/export_c.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "schedule/kernel_ast.h"
#include "tensor/realize_observer.h"
#include "tensor/tensor_impl.h"
#include "tg/context.h"
#include "tg/profile.h"
#include "uop/buffer_arg.h"
#include "uop/sint.h"

namespace tg {

using uop::UOp;

namespace detail {

namespace {

struct Signature {
  std::string shape;  // with symbolic sizes as their variables: "(n, 4)"
  DType dtype;
  std::string device;
  std::optional<shape::ShapeTracker> view;  // a view input's: how it reads its buffer, variables unbound
  bool operator==(const Signature& o) const { return shape == o.shape && dtype == o.dtype && device == o.device && view == o.view; }
};

// A kernel launch (or, with no kernel, a copy [0] <- [1], or an allreduce of [1] into [0] over MPI's ranks) over
// buffer slots.
struct Step {
  std::shared_ptr<const engine::CompiledKernel> kernel;
  std::string allreduce;  // the op ("sum", "max", "min") of an allreduce step
  std::vector<size_t> slots;
  std::vector<size_t> var_index;  // per variable the kernel takes (kernel->vars): its place among the call's vars
};

// A tensor that existed before the capture and whose buffer the captured steps use.
struct Tracked {
  std::vector<std::weak_ptr<TensorImpl>> tensors;  // every handle with this graph
  UOp before, after;                               // its graph before and after the call (views of A and B)
  // the slots of A and B: one pair, or one per device for a tensor held by several (a MULTI of buffers)
  std::vector<std::pair<size_t, size_t>> slots;
  bool updated() const { return before != after; }
};

UOp base_buffer(const UOp& u) {
  const UOp& b = schedule::movement_base(u);
  return b.op() == uop::Ops::BUFFER ? b : UOp();
}

// The buffers a realized graph reads: its base buffer, or each device's for a MULTI of buffers; empty when it is not
// realized
std::vector<UOp> base_buffers(const UOp& u) {
  const UOp& m = schedule::movement_base(u);
  if (m.op() != uop::Ops::MULTI) return base_buffer(u) ? std::vector<UOp>{base_buffer(u)} : std::vector<UOp>{};
  std::vector<UOp> out;
  for (size_t i = 1; i < m.src().size(); i++) {
    UOp b = base_buffer(m.src(i));
    if (!b) return {};
    out.push_back(b);
  }
  return out;
}

std::string sig_str(const Signature& s) {
  return s.shape + " " + s.dtype.name() + " on " + s.device + (s.view ? " viewing a buffer as " + s.view->repr() : "");
}

// A view input: movement ops over a realized buffer with variables in them (x.shrink({{0, n.bind(5)}, ...})). The
// steps read its buffer through the view, so a replay takes the new input's buffer and the variables' values.
bool is_view_input(const Tensor& t) {
  if (!base_buffer(t.uop()) || schedule::plain_buffer(t.uop())) return false;
  uop::VarVals vals;
  schedule::target_view(t.uop(), &vals);
  return !vals.vals.empty();
}
// the buffer a replay puts in the input's place: the input's own, or a view input's base
UOp input_buffer(const Tensor& t) { return is_view_input(t) ? base_buffer(t.uop()) : schedule::plain_buffer(t.uop()); }

}  // namespace

// Set while a call runs. reset() moves a fresh state in during a call: the flag stays as it is.
struct BusyFlag {
  std::atomic<bool> on{false};
  BusyFlag() = default;
  BusyFlag(BusyFlag&&) noexcept {}
  BusyFlag& operator=(BusyFlag&&) noexcept { return *this; }
};

struct JitState {
  JitFunction::VarFn fn;
  BusyFlag busy;
  std::vector<uop::VarArg> var_args;  // the variables every call passes, in order (names and ranges of the first)
  std::vector<Dim> call_vars;         // this call's, bound
  uop::VarVals call_vals;             // their values by name
  int calls = 0;
  std::vector<Signature> signature;
  bool captured = false;
  std::vector<UOp> slots;  // every buffer the steps use, held alive (null where `planned` holds it)
  std::vector<std::shared_ptr<runtime::Buffer>> planned;  // buffers only the replay uses, in shared memory
  std::vector<Step> steps;
  std::vector<bool> invariant;  // per step: reads only what no call changes, so its output stays from the capture
  std::vector<std::pair<size_t, uint64_t>> invariant_versions;  // the invariant steps' buffers as they last ran
  std::vector<std::optional<size_t>> input_slots;  // per input: its slot, when the steps read it
  // per input: the capture's buffer of it, when the steps or the outputs use it (an output may be an input or a
  // view of one: a replay puts this call's input in its place); null otherwise
  std::vector<UOp> input_bufs;
  std::unordered_set<const runtime::Buffer*> step_writes;  // the buffers the steps write (memory(slot), as planned)
  std::vector<Tracked> tracked;
  // Tensors not realized before the capture whose graphs the function computed (weights never realized: their
  // random initialization, a lazy constant): the steps compute them from these graphs, so a replay would ignore a
  // new value (load_state_dict, assign, replace). A call that finds one changed captures again (stale()).
  std::vector<std::pair<std::weak_ptr<TensorImpl>, UOp>> lazy_reads;
  std::vector<UOp> outputs;

  bool stale() {
    std::erase_if(lazy_reads, [](const auto& lr) { return lr.first.expired(); });  // gone: its graph is not needed
    for (const auto& [weak, graph] : lazy_reads)
      if (auto t = weak.lock(); t && t->uop() != graph) return true;
    return false;
  }

  std::vector<Tensor> run(const std::vector<Tensor>& in, SourceLocation where) {
    std::vector<Tensor> out = fn(in, call_vars);
    for (size_t i = 0; i < out.size(); i++)
      if (!out[i].defined()) throw ArgumentError("TinyJit", "the function returned an empty Tensor handle as output " + std::to_string(i), where);
    Tensor::realize(out);
    return out;
  }

  void check_signature(const std::vector<Tensor>& inputs, SourceLocation where) {
    std::vector<Signature> sig;
    for (const Tensor& t : inputs) {
      if (!t.defined()) throw ArgumentError("TinyJit", "input " + std::to_string(sig.size()) + " is an empty Tensor handle", where);
      uop::VarVals vals;
      std::vector<Dim> dims;
      for (const Dim& d : t.sym_shape()) dims.push_back(uop::unbind(d, &vals, where));
      std::optional<shape::ShapeTracker> view;
      if (is_view_input(t)) view = schedule::target_view(t.uop(), &vals);
      sig.push_back({uop::dims_str(dims), t.dtype(), t.device(), view});
    }
    if (calls == 0) {
      signature = sig;
      return;
    }
    if (sig.size() != signature.size())
      throw ArgumentError("TinyJit", "called with " + std::to_string(sig.size()) + " inputs, the first call had " +
                                         std::to_string(signature.size()), where);
    for (size_t i = 0; i < sig.size(); i++)
      if (!(sig[i] == signature[i]))
        throw ArgumentError("TinyJit", "input " + std::to_string(i) + " is " + sig_str(sig[i]) + ", the first call had " +
                                           sig_str(signature[i]) +
                                           ": inputs must keep their shapes (a symbolic size may take other values of "
                                           "its variable), dtypes, devices and views (use another TinyJit)", where);
  }

  // Each var must be exactly a bound Variable, with the first call's names and ranges in the same order. The view
  // inputs' variables join them (a value the vars give too must agree).
  void check_vars(const std::vector<Dim>& vars, const std::vector<Tensor>& inputs, SourceLocation where) {
    uop::VarVals vals;
    std::vector<uop::VarArg> args;
    for (size_t j = 0; j < vars.size(); j++) {
      auto bound = uop::as_bound_variable(vars[j]);
      if (!bound)
        throw ArgumentError("TinyJit", "var " + std::to_string(j) + " is " + vars[j].str() +
                                           ": pass each Variable bound to this call's value (v.bind(n)), not an expression", where);
      if (vals.find(bound->first.name)) throw ArgumentError("TinyJit", "the variable " + bound->first.name + " is passed twice", where);
      vals.add(bound->first, bound->second, where);
      args.push_back(bound->first);
    }
    for (const Tensor& t : inputs) {
      if (!is_view_input(t)) continue;
      uop::VarVals of_input;
      schedule::target_view(t.uop(), &of_input);
      for (const auto& [var, value] : of_input.vals) {
        if (!vals.find(var.name)) args.push_back(var);
        vals.add(var, value, where);  // raises where the vars or another input bound it to another value
      }
    }
    if (calls > 0 && args != var_args) {
      auto names = [](const std::vector<uop::VarArg>& a) {
        std::string s;
        for (const uop::VarArg& v : a) s += (s.empty() ? "" : ", ") + v.name + " in [" + std::to_string(v.min) + ", " + std::to_string(v.max) + "]";
        return "(" + s + ")";
      };
      throw ArgumentError("TinyJit", "called with the variables " + names(args) + ", the first call had " + names(var_args), where);
    }
    var_args = std::move(args), call_vars = vars, call_vals = std::move(vals);
  }

  // Each input realized as a whole buffer of its own, so a replay can put its buffer where the capture's was.
  std::vector<Tensor> prepare_inputs(const std::vector<Tensor>& inputs, SourceLocation where) {
    std::vector<Tensor> in;
    std::unordered_set<const uop::UOpNode*> seen;
    for (const Tensor& t : inputs) {
      Tensor x = t;
      x.realize();
      if (!is_view_input(x) && x.numel() > 0 && !schedule::plain_buffer(x.uop())) x = x.contiguous(where).realize();
      if (UOp b = input_buffer(x); b && !seen.insert(b.get()).second)
        throw ArgumentError("TinyJit", "input " + std::to_string(in.size()) + " is the same buffer as an earlier input", where);
      in.push_back(x);
    }
    return in;
  }

  runtime::Buffer& memory(size_t slot) { return slots[slot] ? runtime::buffer_of(slots[slot]) : *planned[slot]; }
  std::vector<runtime::Buffer*> memories() {  // memory(slot) of every slot
    std::vector<runtime::Buffer*> cur(slots.size());
    for (size_t i = 0; i < slots.size(); i++) cur[i] = &memory(i);
    return cur;
  }
  void plan_memory(int64_t first_new_id, const std::unordered_set<const uop::UOpNode*>& seen_outside);
  void find_invariant_steps();
  // (slot, version) of every buffer the invariant steps use, as `cur` holds them now; a buffer without memory (the
  // capture gave an intermediate's back: Buffer::release) gets a version no buffer has, so the next replay runs
  // the invariant steps again
  void record_invariant_versions(const std::vector<runtime::Buffer*>& cur) {
    invariant_versions.clear();
    for (size_t i = 0; i < steps.size(); i++)
      if (invariant[i])
        for (size_t s : steps[i].slots)
          invariant_versions.emplace_back(s, cur[s]->allocated() ? cur[s]->version() : UINT64_MAX);
  }
  std::vector<Tensor> capture(const std::vector<Tensor>& in, SourceLocation where);
  std::vector<Tensor> replay(const std::vector<Tensor>& in, SourceLocation where);
  jit::ExportedProgram exported(SourceLocation where);
  size_t kernels_per_replay() const { return steps.size() - static_cast<size_t>(std::count(invariant.begin(), invariant.end(), true)); }
};

// Buffers made during the capture that nothing outside the replay can see (no live tensor, output or tracked
// tensor refers to them) share memory when their lifetimes, from the first to the last step that uses them, do not
// overlap (tinygrad's memory planner): a 10000-image evaluation would otherwise hold every layer's activations.
void JitState::plan_memory(int64_t first_new_id, const std::unordered_set<const uop::UOpNode*>& seen_outside) {
  std::vector<size_t> first(slots.size(), SIZE_MAX), last(slots.size(), 0);
  for (size_t i = 0; i < steps.size(); i++)
    for (size_t sl : steps[i].slots) first[sl] = std::min(first[sl], i), last[sl] = i;
  std::unordered_set<size_t> keep;
  for (const Tracked& tr : tracked)
    for (auto [before, after] : tr.slots) keep.insert(before), keep.insert(after);
  for (size_t i = 0; i < steps.size(); i++)
    if (invariant[i]) keep.insert(steps[i].slots[0]);  // its value must survive until the next replay
  for (const auto& is : input_slots)
    if (is) keep.insert(*is);
  std::vector<size_t> order;
  for (size_t i = 0; i < slots.size(); i++)
    if (first[i] != SIZE_MAX && steps[first[i]].slots[0] == i && !keep.count(i) &&
        uop::get_buffer_arg(slots[i]).id > first_new_id && !seen_outside.count(slots[i].get()))
      order.push_back(i);  // written by the replay before it is read, and seen by nothing else
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  struct Block {
    std::shared_ptr<runtime::Buffer> memory;
    size_t free_after;  // the last step that uses it
  };
  std::vector<Block> blocks;
  planned.assign(slots.size(), nullptr);
  for (size_t sl : order) {
    runtime::Buffer& b = runtime::buffer_of(slots[sl]);
    Block* best = nullptr;  // the smallest free block of this device that is large enough
    for (Block& bl : blocks)
      if (bl.free_after < first[sl] && &bl.memory->device() == &b.device() && bl.memory->nbytes() >= b.nbytes() &&
          (!best || bl.memory->nbytes() < best->memory->nbytes()))
        best = &bl;
    if (!best) {
      blocks.push_back({std::make_shared<runtime::Buffer>(b.device(), b.nbytes(), dtypes::uint8), 0});
      best = &blocks.back();
    }
    best->free_after = last[sl];
    planned[sl] = std::make_shared<runtime::Buffer>(best->memory, b.size(), b.dtype());
    slots[sl] = UOp();  // the capture's own buffer goes back to the allocator
  }
}

// Steps whose inputs are the same at every call: buffers no step writes that are neither inputs nor tensors the
// function updates (weights in eval, constants copied in from the host), and the outputs of such steps. A replay
// skips them, since their outputs still hold the capture's values: an ONNX model's convolution weights are laid
// out for the kernels once, not at every run. When a tensor the function reads was changed between calls, or a
// buffer they use was written since they last ran (another TinyJit's training step updating the weights this one
// evaluates), the replay runs them again (replay()).
void JitState::find_invariant_steps() {
  std::vector<bool> varies(slots.size(), false);
  for (const auto& is : input_slots)
    if (is) varies[*is] = true;
  for (size_t s = 0; s < slots.size(); s++)
    if (slots[s] && runtime::buffer_of(slots[s]).external()) varies[s] = true;  // from_blob: the caller's memory
  for (const Tracked& tr : tracked)
    if (tr.updated())
      for (auto [before, after] : tr.slots) varies[before] = varies[after] = true;
  // a step that makes much more than it reads (a whole dataset's activations from the images and the weights) is
  // run again at every replay: holding its output between calls would cost more memory than it saves time
  std::vector<bool> expands(steps.size());
  for (size_t i = 0; i < steps.size(); i++) {
    const std::vector<size_t>& sl = steps[i].slots;
    size_t in = 0;
    for (size_t k = 1; k < sl.size(); k++) in += memory(sl[k]).nbytes();
    expands[i] = memory(sl[0]).nbytes() > std::max<size_t>(2 * in, size_t{16} << 20);
  }
  invariant.assign(steps.size(), false);
  // until nothing changes: a buffer written in place by a later step (an assign into a view) also varies for the
  // steps before it, which read what the previous call wrote
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < steps.size(); i++) {
      const std::vector<size_t>& sl = steps[i].slots;
      // (an allreduce runs every call: the other ranks' values change, and every rank must take part)
      invariant[i] = !varies[sl[0]] && steps[i].var_index.empty() && steps[i].allreduce.empty() &&
                     std::none_of(sl.begin() + 1, sl.end(), [&](size_t s) { return varies[s]; }) && !expands[i];
      if (!invariant[i] && !varies[sl[0]]) varies[sl[0]] = changed = true;
    }
  }
}

std::vector<Tensor> JitState::capture(const std::vector<Tensor>& in, SourceLocation where) {
  auto before = live_tensors();
  int64_t first_new_id = uop::next_buffer_id();
  std::vector<UOp> in_bufs;  // before the call: an input handle may be assigned inside (an error, found below)
  for (const Tensor& t : in) in_bufs.push_back(input_buffer(t));
  std::vector<schedule::ScheduleItem> items;
  std::unordered_set<const uop::UOpNode*> computed;  // every node of the graphs the function realized
  std::vector<Tensor> out;
  {
    engine::CaptureScope scope(items, &call_vals);
    RealizeObserver observe(computed);
    out = run(in, where);
  }

  std::unordered_map<const uop::UOpNode*, size_t> slot_of;
  auto slot = [&](const UOp& b) {
    auto [it, fresh] = slot_of.emplace(b.get(), slots.size());
    if (fresh) slots.push_back(b);
    return it->second;
  };
  std::unordered_set<const uop::UOpNode*> written;
  for (const schedule::ScheduleItem& item : items) {
    Step st;
    for (const UOp& b : item.bufs) st.slots.push_back(slot(b));
    if (item.kind == schedule::ScheduleItem::Kind::Kernel) {
      st.kernel = engine::get_kernel(item.ast, runtime::buffer_of(item.bufs[0]).device());
      for (const std::string& name : st.kernel->vars)  // one of the call's vars: run_schedule checked it
        for (size_t j = 0; j < var_args.size(); j++)
          if (var_args[j].name == name) st.var_index.push_back(j);
    }
    if (item.kind == schedule::ScheduleItem::Kind::Allreduce) st.allreduce = item.ast.arg().get<std::string>();
    written.insert(item.bufs[0].get());
    steps.push_back(std::move(st));
  }
  size_t used_slots = slots.size();  // slots past this one are only swap partners

  std::unordered_map<const uop::UOpNode*, size_t> input_of;
  for (size_t i = 0; i < in.size(); i++) {
    const UOp& b = in_bufs[i];
    if (b) input_of[b.get()] = i;
    input_slots.push_back(b && slot_of.count(b.get()) ? std::optional<size_t>(slot_of[b.get()]) : std::nullopt);
  }

  std::map<std::pair<const uop::UOpNode*, const uop::UOpNode*>, size_t> tracked_of;
  for (auto& [weak, graph_before] : before) {
    std::shared_ptr<TensorImpl> t = weak.lock();
    if (!t) continue;  // gone
    UOp graph_after = t->uop();
    if (graph_after == graph_before && !base_buffer(graph_before)) {  // lazy and left alone
      // but computed by the function (graph_before, alive since before the call, is the node at its address)
      if (computed.count(graph_before.get())) lazy_reads.emplace_back(t, graph_before);
      continue;
    }
    std::vector<UOp> as = base_buffers(graph_before), bs = base_buffers(graph_after);
    if (bs.empty())
      throw ArgumentError("TinyJit", "the function left a tensor of shape " + tensor::shape_str(t->shape) +
                                         " (made at " + t->created.str() + ") with an update it did not realize; realize "
                                         "everything it assigns, or the replays will not update it", where);
    if (as.empty()) continue;  // a lazy tensor the function realized: the kernels compute it again on every replay
    if (as.size() != bs.size())
      throw ArgumentError("TinyJit", "the function moved a tensor (made at " + t->created.str() + ") between devices", where);
    bool touched = false;
    for (size_t i = 0; i < as.size(); i++) {
      const UOp &a = as[i], &b = bs[i];
      bool reads = slot_of.count(a.get()) && slot_of[a.get()] < used_slots;
      touched = touched || (a == b ? reads : written.count(b.get()) > 0);
      if (input_of.count(a.get()) && a != b)
        throw ArgumentError("TinyJit", "the function assigns to its input " + std::to_string(input_of[a.get()]) +
                                           "; inputs are read-only (return the new value instead)", where);
    }
    if (!touched || (as.size() == 1 && input_of.count(as[0].get()))) continue;  // an input: the replay substitutes it
    auto [it, fresh] = tracked_of.emplace(std::make_pair(as[0].get(), bs[0].get()), tracked.size());
    if (fresh) {
      tracked.push_back({{}, graph_before, graph_after, {}});
      for (size_t i = 0; i < as.size(); i++) tracked.back().slots.push_back({slot(as[i]), slot(bs[i])});
    }
    tracked[it->second].tensors.push_back(t);
  }

  size_t host_made = 0;
  for (size_t i = 0; i < used_slots; i++)
    if (uop::get_buffer_arg(slots[i]).id > first_new_id && !written.count(slots[i].get())) host_made++;
  if (host_made)
    std::fprintf(stderr, "TinyJit [at %s]: warning: the function copies host data into %zu buffer(s) that its kernels "
                 "read; replays reuse the values of the capture (pass data that changes as an input)\n",
                 where.str().c_str(), host_made);
  for (const Tensor& o : out) outputs.push_back(o.uop());
  std::unordered_set<const uop::UOpNode*> in_outputs;  // the nodes of the outputs' graphs
  for (const UOp& o : outputs)
    for (const UOp& u : o.toposort()) in_outputs.insert(u.get());
  for (size_t i = 0; i < in.size(); i++)
    input_bufs.push_back(input_slots[i] || (in_bufs[i] && in_outputs.count(in_bufs[i].get())) ? in_bufs[i] : UOp());

  std::unordered_set<const uop::UOpNode*> seen_outside;  // every node of a live tensor's graph or of an output
  std::vector<UOp> roots = outputs;
  for (auto& [weak, graph] : live_tensors()) roots.push_back(graph);
  for (const UOp& r : roots)
    if (!seen_outside.count(r.get()))
      for (const UOp& u : r.toposort()) seen_outside.insert(u.get());
  find_invariant_steps();
  plan_memory(first_new_id, seen_outside);
  for (const Step& st : steps) step_writes.insert(&memory(st.slots[0]));
  record_invariant_versions(memories());
  if (getenv_int("DEBUG") >= 1) {
    size_t planned_n = std::count_if(planned.begin(), planned.end(), [](const auto& p) { return p != nullptr; });
    std::fprintf(stderr, "TinyJit: captured %zu kernels over %zu buffers (%zu in planned memory), %zu tracked tensors, "
                 "%zu kernels invariant\n", steps.size(), slots.size(), planned_n, tracked.size(),
                 static_cast<size_t>(std::count(invariant.begin(), invariant.end(), true)));
  }
  captured = true;
  return out;
}

// The capture as the C export needs it: every step (invariant ones too: the exported function keeps no state between
// calls), every buffer with its role, the Variables. Only what plain C on the host can run: CPU kernels, nothing
// the function updates.
jit::ExportedProgram JitState::exported(SourceLocation where) {
  auto refuse = [&](const std::string& why) { return ArgumentError("TinyJit::export_c", why, where); };
  if (!captured) throw refuse("nothing captured yet: call the TinyJit at least twice first (it captures at the second call)");
  for (const Tracked& tr : tracked)
    if (tr.updated()) throw refuse("the function updates tensors (a training step): only a function of its inputs can be exported");
  jit::ExportedProgram p;
  for (const uop::VarArg& v : var_args) p.vars.push_back({v.name, v.min, v.max});
  p.buffers.resize(slots.size());
  std::vector<bool> written(slots.size(), false);
  for (const Step& st : steps) {
    if (st.kernel && (st.kernel->grid || memory(st.slots[0]).device().name().rfind("CPU", 0) != 0))
      throw refuse("kernel " + st.kernel->name + " runs on " + memory(st.slots[0]).device().name() + ": only the CPU's C kernels can be exported");
    if (!st.allreduce.empty()) throw refuse("the function has an allreduce over MPI's ranks: an exported model runs in one process");
    if (!st.kernel && memory(st.slots[0]).device().name() != memory(st.slots[1]).device().name())
      throw refuse("the function copies between devices: only the CPU's C kernels can be exported");
    p.steps.push_back({st.kernel, st.slots});
    written[st.slots[0]] = true;
  }
  for (size_t i = 0; i < input_slots.size(); i++)
    if (input_slots[i]) p.buffers[*input_slots[i]].input = static_cast<int>(i);
  p.n_inputs = input_slots.size();
  std::unordered_map<const uop::UOpNode*, size_t> slot_of;
  for (size_t i = 0; i < slots.size(); i++)
    if (slots[i]) slot_of[slots[i].get()] = i;
  for (size_t o = 0; o < outputs.size(); o++) {
    UOp b = schedule::plain_buffer(outputs[o]);
    // an output of symbolic size: its buffer at the largest sizes, of which it is the first rows
    if (UOp base = base_buffer(outputs[o]); !b && base && outputs[o] == runtime::buffer_as_node(base, outputs[o])) b = base;
    if (!b || !slot_of.count(b.get()))
      throw refuse("output " + std::to_string(o) + " is not a whole buffer the kernels write (a view, or a tensor from outside): "
                   "return it .contiguous()");
    if (p.buffers[slot_of[b.get()]].output >= 0) throw refuse("output " + std::to_string(o) + " is also an earlier output");
    p.buffers[slot_of[b.get()]].output = static_cast<int>(o);
  }
  p.n_outputs = outputs.size();
  for (size_t i = 0; i < slots.size(); i++) {
    runtime::Buffer& m = memory(i);
    jit::ExportedProgram::Buffer& b = p.buffers[i];
    b.nbytes = m.nbytes();
    b.dtype = m.dtype().name();
    b.weight = !written[i] && b.input < 0;
    if (b.weight) {
      b.bytes.resize(b.nbytes);
      m.copyout(b.bytes.data(), b.nbytes);
    }
  }
  return p;
}

std::vector<Tensor> JitState::replay(const std::vector<Tensor>& in, SourceLocation where) {
  std::vector<runtime::Buffer*> cur = memories();
  std::vector<std::pair<UOp, UOp>> moved;  // captured buffer -> the one this replay uses instead
  // An input that is a buffer the steps write (an output of the previous call fed back: h = jit({h}), or outputs
  // fed back crosswise) is read from a copy made first: the steps would overwrite it while they still read it, and
  // an output that is the input itself must keep the value it was called with.
  for (size_t i = 0; i < in.size(); i++) {
    if (!input_bufs[i]) continue;  // neither the steps nor the outputs use it
    UOp b = input_buffer(in[i]);
    if (runtime::Buffer& m = runtime::buffer_of(b); step_writes.count(&m)) {
      b = runtime::new_buffer(m.device().name(), m.dtype(), static_cast<int64_t>(m.size()));
      engine::copy_buffer(runtime::buffer_of(b), m);
    }
    if (input_slots[i]) cur[*input_slots[i]] = &runtime::buffer_of(b);
    moved.emplace_back(input_bufs[i], b);  // an output that is (a view of) this input returns this call's
  }
  std::vector<Tracked*> swap, repoint;  // repoint: updated tensors the user moved to another buffer since the capture
  bool changed_outside = false;         // some tensor the function uses: then the invariant steps run too
  for (Tracked& tr : tracked) {
    std::shared_ptr<TensorImpl> t;
    for (auto& w : tr.tensors)
      if ((t = w.lock())) break;
    if (!t) continue;  // nobody can see it any more
    if (t->uop() == tr.after) {
      if (tr.updated()) swap.push_back(&tr);
      continue;
    }
    // changed outside the function (a new learning rate, load_state_dict): read it from where it is now
    if (tr.slots.size() > 1)
      throw ArgumentError("TinyJit", "a tensor held by several devices that the function uses (made at " + t->created.str() +
                                         ") changed since the capture; call reset() on the TinyJit", where);
    handle(t).realize();
    auto [slot_before, slot_after] = tr.slots[0];
    UOp now = t->uop(), now_buf = base_buffer(now), a = slots[slot_before], b = slots[slot_after];
    if (!now_buf || (tr.before.substitute({{a, now_buf}}) != now && tr.after.substitute({{b, now_buf}}) != now))
      throw ArgumentError("TinyJit", "a tensor the function uses (made at " + t->created.str() + ") changed from shape " +
                                         tensor::shape_str(tr.after.shape()) + " " + tr.after.dtype().name() + " to " +
                                         tensor::shape_str(t->shape) + " " + t->dtype.name() +
                                         " since the capture; call reset() on the TinyJit", where);
    cur[slot_before] = &runtime::buffer_of(now_buf);
    moved.emplace_back(a, now_buf);
    changed_outside = true;
    if (tr.updated()) repoint.push_back(&tr);
  }
  // every check is done: from here on nothing throws before the tensors hold their new values
  for (Tracked* tr : swap)
    for (auto [before, after] : tr->slots)
      if (before != after) cur[before]->swap_memory(*cur[after]);
  bool rerun = changed_outside || std::any_of(invariant_versions.begin(), invariant_versions.end(),
                                              [&](const auto& sv) { return cur[sv.first]->version() != sv.second; });
  if (getenv_int("DEBUG") >= 1) std::fprintf(stderr, "TinyJit: replaying %zu kernels\n", rerun ? steps.size() : kernels_per_replay());
  std::vector<runtime::Buffer*> bufs;
  std::vector<int64_t> vals;
  for (size_t i = 0; i < steps.size(); i++) {
    const Step& st = steps[i];
    if (invariant[i] && !rerun) continue;
    bufs.clear(), vals.clear();
    for (size_t s : st.slots) bufs.push_back(cur[s]);
    for (size_t j : st.var_index) vals.push_back(call_vals.vals[j].second);
    if (st.kernel) engine::launch(*st.kernel, bufs, vals);
    else if (!st.allreduce.empty()) engine::allreduce_buffer(*bufs[0], *bufs[1], st.allreduce);
    else engine::copy_buffer(*bufs[0], *bufs[1]);
  }
  if (rerun) record_invariant_versions(cur);
  for (Tracked* tr : repoint)
    for (auto& w : tr->tensors)
      if (auto t = w.lock()) t->set_uop(tr->after);  // the kernels wrote the new value into B
  std::vector<Tensor> out;
  for (const UOp& o : outputs) {
    UOp u = moved.empty() ? o : o.substitute(moved);
    out.push_back(Tensor(call_vals.vals.empty() ? u : uop::rebind(u, call_vals)));  // a symbolic output: this call's sizes
  }
  return out;
}

}  // namespace detail

JitFunction::JitFunction(Fn fn) : state_(std::make_unique<detail::JitState>()) {
  state_->fn = [fn = std::move(fn)](const std::vector<Tensor>& in, const std::vector<Dim>&) { return fn(in); };
}
JitFunction::JitFunction(VarFn fn) : state_(std::make_unique<detail::JitState>()) { state_->fn = std::move(fn); }
JitFunction::~JitFunction() = default;
JitFunction::JitFunction(JitFunction&&) noexcept = default;
JitFunction& JitFunction::operator=(JitFunction&&) noexcept = default;

std::vector<Tensor> JitFunction::call(const std::vector<Tensor>& inputs, SourceLocation where) { return call(inputs, {}, where); }

std::vector<Tensor> JitFunction::call(const std::vector<Tensor>& inputs, const std::vector<Dim>& vars, SourceLocation where) {
  detail::JitState& s = *state_;
  // one call at a time: a replay swaps buffers that a second call would read half swapped
  if (s.busy.on.exchange(true))
    throw ArgumentError("TinyJit", "called while a call of the same TinyJit is running (from another thread, or from "
                                   "inside its own function): a TinyJit runs one call at a time", where);
  struct Done {
    std::atomic<bool>& busy;
    ~Done() { busy = false; }
  } done{s.busy.on};
  auto lock = detail::realize_lock();  // a capture compares every live tensor before and after: no realize between
  if (engine::capturing())
    throw ArgumentError("TinyJit", "called while another TinyJit captures: nested TinyJits are not supported", where);
  if (s.captured && s.stale()) {
    // a tensor whose graph the steps compute has a new value (weights loaded into a model never realized): the
    // steps are out of date, so this call runs the function and the next one captures again
    if (getenv_int("DEBUG") >= 1)
      std::fprintf(stderr, "TinyJit: a lazy tensor the function reads changed since the capture: capturing again\n");
    reset();
  }
  s.check_signature(inputs, where);
  std::vector<Tensor> in = s.prepare_inputs(inputs, where);
  s.check_vars(vars, in, where);
  std::vector<Tensor> out;
  profile::Span span(s.captured ? "TinyJit replay" : s.calls == 0 ? "TinyJit call" : "TinyJit capture", "jit");
  if (s.captured) out = s.replay(in, where);
  else if (s.calls == 0) out = s.run(in, where);
  else {
    try {
      out = s.capture(in, where);
    } catch (...) {
      reset();  // what was recorded is incomplete; the next calls start over
      throw;
    }
  }
  s.calls++;
  return out;
}

void JitFunction::export_c(const std::string& c_path, const std::string& weights_path, SourceLocation where) const {
  jit::write_c(state_->exported(where), c_path, weights_path, where);
}

bool JitFunction::captured() const { return state_->captured; }
size_t JitFunction::kernel_count() const { return state_->kernels_per_replay(); }

void JitFunction::reset() {
  detail::JitState fresh;
  fresh.fn = std::move(state_->fn);
  *state_ = std::move(fresh);
}

}  // namespace tg
