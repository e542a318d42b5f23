// Lowering a graph over several devices into one graph per device (multi.h).
//
// Each node's lowered form is either a single-device node or a Sharded value. Ops run per shard where the shards
// line up: elementwise ops between values split alike, movement ops that keep the split axis whole (a reshape
// moves the axis where the split survives, a shrink keeps each device's overlap), reductions over other axes. What
// does not line up is made to: a value split along another axis, or one a movement op would mix between devices,
// is first gathered whole onto every device (copies), then each device takes its part (a free shrink). A reduction
// over the split axis reduces each part, then combines the parts on every device in the same order, so that every
// device holds bit-identical results (data-parallel replicas never drift apart).
#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_map>

#include "multi/multi.h"
#include "uop/reduce_arg.h"

namespace tg::multi {

using uop::Ops;
using uop::UOp;

std::vector<std::string> split_devices(const std::string& device) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = device.find(',', start)) != std::string::npos; start = comma + 1)
    out.push_back(device.substr(start, comma - start));
  out.push_back(device.substr(start));
  return out;
}

std::string join_devices(const std::vector<std::string>& devices) {
  std::string out;
  for (const std::string& d : devices) out += (out.empty() ? "" : ",") + d;
  return out;
}

std::vector<std::pair<int64_t, int64_t>> even_bounds(int64_t n, size_t k) {
  int64_t per = (n + static_cast<int64_t>(k) - 1) / static_cast<int64_t>(k);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < k; i++) {
    int64_t b = std::min(n, per * static_cast<int64_t>(i));
    out.push_back({b, std::min(n, b + per)});
  }
  return out;
}

namespace {

using Bounds = std::vector<std::pair<int64_t, int64_t>>;

// the least elements per device for which an allreduce goes around a ring (below, copying whole parts is cheaper
// than the ring's extra kernels)
constexpr int64_t kRingMinPerDevice = 4096;

std::atomic<bool> used{false};  // whether a node naming several devices was ever made (note_multi_used)

UOp device_node(const std::string& d) { return UOp::make(Ops::DEVICE, dtypes::void_, {}, uop::Arg(d)); }

// x (on `from`) on device `to`: itself, or a copy
UOp moved_to(const UOp& x, const std::string& from, const std::string& to) {
  return from == to ? x : UOp::make(Ops::COPY, x.dtype(), {x, device_node(to)});
}

UOp movement(Ops op, const UOp& x, std::vector<int64_t> arg) { return UOp::make(op, x.dtype(), {x}, uop::Arg(std::move(arg))); }

// x restricted to [begin, end) along axis
UOp shrink_axis(const UOp& x, int64_t axis, int64_t begin, int64_t end) {
  const std::vector<int64_t>& s = x.shape();
  if (begin == 0 && end == s[static_cast<size_t>(axis)]) return x;
  std::vector<int64_t> r;
  for (size_t i = 0; i < s.size(); i++)
    r.push_back(static_cast<int64_t>(i) == axis ? begin : 0), r.push_back(static_cast<int64_t>(i) == axis ? end : s[i]);
  return movement(Ops::SHRINK, x, std::move(r));
}

// pieces (one device, equal outside axis) end to end along axis: each padded with zeros to the whole and summed,
// as Tensor::cat does (the scheduler fuses it into one kernel)
UOp cat(const std::vector<UOp>& pieces, int64_t axis) {
  size_t a = static_cast<size_t>(axis);
  int64_t total = 0;
  for (const UOp& p : pieces) total += p.shape()[a];
  UOp out;
  int64_t offset = 0;
  for (const UOp& p : pieces) {
    int64_t n = p.shape()[a];
    if (n == 0) continue;
    std::vector<int64_t> pad(2 * p.shape().size(), 0);
    pad[2 * a] = offset, pad[2 * a + 1] = total - offset - n;
    offset += n;
    UOp q = n == total ? p : movement(Ops::PAD, p, pad);
    out = !out ? q : out.alu(p.dtype().is_bool() ? Ops::OR : Ops::ADD, {q});
  }
  return out ? out : pieces[0];  // every piece empty: so is the whole
}

int64_t size_along(const UOp& x, int64_t axis) { return x.shape()[static_cast<size_t>(axis)]; }

// each shard's [begin, end) along the split axis
Bounds bounds_of(const Sharded& s) {
  Bounds out;
  int64_t at = 0;
  for (const UOp& x : s.shards) out.push_back({at, at + size_along(x, s.axis)}), at = out.back().second;
  return out;
}

const std::vector<int64_t>& ints(const UOp& u) {
  if (!u.arg().get_if<std::vector<int64_t>>())
    throw ArgumentError("multi", std::string(uop::op_name(u.op())) + " with a symbolic size on a tensor held by several "
                                 "devices: sharded tensors have concrete shapes");
  return u.arg().get<std::vector<int64_t>>();
}

class Lowering {
 public:
  Lowered run(const std::vector<UOp>& roots) {
    Lowered out;
    for (const UOp& u : UOp::sink(roots).toposort()) {
      if (u.op() == Ops::SINK || u.op() == Ops::DEVICE) continue;
      if (std::optional<Sharded> s = lower_node(u)) {
        out.multis.push_back({u, *s});
        multi_.emplace(u.get(), std::move(*s));
      }
    }
    for (const auto& [node, lowered] : single_) out.singles.push_back({UOp::share(node), lowered});
    for (const UOp& r : roots) {
      if (auto it = multi_.find(r.get()); it != multi_.end())
        out.outputs.insert(out.outputs.end(), it->second.shards.begin(), it->second.shards.end());
      else
        out.outputs.push_back(single(r));
    }
    return out;
  }

 private:
  std::unordered_map<const uop::UOpNode*, Sharded> multi_;
  std::unordered_map<const uop::UOpNode*, UOp> single_;  // single-device nodes whose sources changed

  UOp single(const UOp& u) const {
    auto it = single_.find(u.get());
    return it == single_.end() ? u : it->second;
  }

  // s with every device holding the whole value: each gathers the others' parts (fixed order: identical results)
  Sharded whole(const Sharded& s) const {
    if (s.axis < 0) return s;
    Sharded out{s.devices, {}, -1};
    for (const std::string& to : s.devices) {
      std::vector<UOp> pieces;
      for (size_t i = 0; i < s.shards.size(); i++)
        if (size_along(s.shards[i], s.axis) > 0 || pieces.empty()) pieces.push_back(moved_to(s.shards[i], s.devices[i], to));
      out.shards.push_back(cat(pieces, s.axis));
    }
    return out;
  }

  // s split along axis with the given bounds (-1: whole on every device)
  Sharded split_as(const Sharded& s, int64_t axis, const Bounds& bounds) const {
    if (s.axis == axis && (axis < 0 || bounds_of(s) == bounds)) return s;
    Sharded w = whole(s);
    if (axis < 0) return w;
    for (size_t i = 0; i < w.shards.size(); i++) w.shards[i] = shrink_axis(w.shards[i], axis, bounds[i].first, bounds[i].second);
    w.axis = axis;
    return w;
  }

  // the lowered form of source i of u as a Sharded value on `devices` (a single-device source is copied to each)
  Sharded sharded_src(const UOp& src, const std::vector<std::string>& devices) const {
    if (auto it = multi_.find(src.get()); it != multi_.end()) {
      if (it->second.devices != devices)
        throw ArgumentError("multi", "an op between tensors on " + join_devices(it->second.devices) + " and on " + join_devices(devices));
      return it->second;
    }
    UOp x = single(src);
    Sharded out{devices, {}, -1};
    for (const std::string& d : devices) out.shards.push_back(moved_to(x, uop::device_of(x), d));
    return out;
  }

  // the same op over each shard's sources
  static Sharded per_shard(const UOp& u, const std::vector<Sharded>& srcs, int64_t axis) {
    Sharded out{srcs[0].devices, {}, axis};
    for (size_t i = 0; i < out.devices.size(); i++) {
      std::vector<UOp> src;
      for (const Sharded& s : srcs) src.push_back(s.shards[i]);
      out.shards.push_back(u.with_src(std::move(src)));
    }
    return out;
  }

  Sharded per_shard(const UOp& u, const Sharded& x, int64_t axis, const std::vector<std::vector<int64_t>>& args) const {
    Sharded out{x.devices, {}, axis};
    for (size_t i = 0; i < x.shards.size(); i++) out.shards.push_back(movement(u.op(), x.shards[i], args[i]));
    return out;
  }

  // the devices of u's multi sources (or of its multi DEVICE); empty when u is on one device
  std::vector<std::string> multi_devices(const UOp& u) const {
    for (const UOp& s : u.src()) {
      if (s.op() == Ops::DEVICE && is_multi(s.arg().get<std::string>())) return split_devices(s.arg().get<std::string>());
      if (auto it = multi_.find(s.get()); it != multi_.end()) return it->second.devices;
    }
    return {};
  }

  std::optional<Sharded> lower_node(const UOp& u) {
    if (u.op() == Ops::MSELECT) {
      single_[u.get()] = select(u);
      return std::nullopt;
    }
    if (u.op() == Ops::COPY) return copy(u);
    std::vector<std::string> devices = multi_devices(u);
    if (devices.empty()) {
      std::vector<UOp> src;
      bool changed = false;
      for (const UOp& s : u.src()) src.push_back(single(s)), changed = changed || src.back() != s;
      if (changed) single_[u.get()] = u.with_src(std::move(src));
      return std::nullopt;
    }
    switch (u.op()) {
      case Ops::MULTI: {
        Sharded out{devices, {}, u.arg().get<int64_t>()};
        for (size_t i = 1; i < u.src().size(); i++) out.shards.push_back(single(u.src(i)));
        return out;
      }
      case Ops::CONST:
      case Ops::IOTA: {  // the same on every device
        Sharded out{devices, {}, -1};
        for (const std::string& d : devices) out.shards.push_back(u.with_src({device_node(d)}));
        return out;
      }
      case Ops::CUSTOM_GRAD: return sharded_src(u.src(0), devices);  // the value; its rule was used by autograd
      case Ops::ASSIGN: {  // each device writes its part of the target
        Sharded target = sharded_src(u.src(1), devices);
        Sharded value = split_as(sharded_src(u.src(0), devices), target.axis, target.axis < 0 ? Bounds{} : bounds_of(target));
        return per_shard(u, {value, target}, target.axis);
      }
      case Ops::REDUCE_AXIS: return reduce(u, sharded_src(u.src(0), devices));
      case Ops::RESHAPE:
      case Ops::PERMUTE:
      case Ops::EXPAND:
      case Ops::PAD:
      case Ops::SHRINK:
      case Ops::FLIP:
      case Ops::STRIDE: return move(u, sharded_src(u.src(0), devices));
      default: return elementwise(u, devices);
    }
  }

  // a value every device holds whole, on device d: d's own copy, or the first device's copied there
  static UOp whole_on(const Sharded& x, const std::string& d) {
    auto here = std::find(x.devices.begin(), x.devices.end(), d);
    size_t i = here == x.devices.end() ? 0 : static_cast<size_t>(here - x.devices.begin());
    return moved_to(x.shards[i], x.devices[i], d);
  }

  // COPY onto one device gathers a multi value; onto several, every device gets all of it
  std::optional<Sharded> copy(const UOp& u) {
    const std::string& to = u.src(1).arg().get<std::string>();
    auto it = multi_.find(u.src(0).get());
    if (!is_multi(to)) {
      if (it != multi_.end()) single_[u.get()] = gather(it->second, to);
      else if (UOp x = single(u.src(0)); x != u.src(0)) single_[u.get()] = u.with_src({x, u.src(1)});
      return std::nullopt;
    }
    UOp src = single(u.src(0));
    Sharded x = it != multi_.end() ? whole(it->second) : Sharded{{uop::device_of(src)}, {src}, -1};
    Sharded out{split_devices(to), {}, -1};
    for (const std::string& d : out.devices) out.shards.push_back(whole_on(x, d));
    return out;
  }

  // ALU ops, casts, CONTIGUOUS, DETACH ...: every source split like the first one that is split
  Sharded elementwise(const UOp& u, const std::vector<std::string>& devices) const {
    std::vector<Sharded> srcs;
    for (const UOp& s : u.src()) srcs.push_back(sharded_src(s, devices));
    const Sharded* lead = nullptr;
    for (const Sharded& s : srcs)
      if (s.axis >= 0 && !lead) lead = &s;
    if (!lead) return per_shard(u, srcs, -1);
    int64_t axis = lead->axis;
    Bounds bounds = bounds_of(*lead);
    for (Sharded& s : srcs) s = split_as(s, axis, bounds);
    return per_shard(u, srcs, axis);
  }

  Sharded reduce(const UOp& u, const Sharded& x) const {
    const uop::ReduceArg& ra = uop::get_reduce_arg(u);
    Sharded part = per_shard(u, {x}, x.axis);
    if (x.axis < 0 || std::find(ra.axes.begin(), ra.axes.end(), x.axis) == ra.axes.end()) return part;
    return allreduce(part, ra.op);
  }

  // Every device gets the parts combined by op, the same bits on each. Two devices, or small values: each device
  // combines all parts in device order (k(k-1) copies of the whole). More devices and larger values: a ring (each
  // device combines one chunk of the flattened value as it passes around the ring, then the finished chunks go
  // to every device: 2(k-1) chunk copies per device, whatever k).
  static Sharded allreduce(const Sharded& part, Ops op) {
    size_t k = part.devices.size();
    const std::vector<int64_t>& shape = part.shards[0].shape();
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    Sharded out{part.devices, {}, -1};
    if (k <= 2 || n < kRingMinPerDevice * static_cast<int64_t>(k)) {
      for (const std::string& to : part.devices) {
        UOp acc;
        for (size_t i = 0; i < k; i++) {
          UOp p = moved_to(part.shards[i], part.devices[i], to);
          acc = acc ? acc.alu(op, {p}) : p;
        }
        out.shards.push_back(acc);
      }
      return out;
    }
    Bounds chunks = even_bounds(n, k);
    std::vector<UOp> flat, done(k);
    for (const UOp& p : part.shards) flat.push_back(movement(Ops::RESHAPE, p, {n}));
    for (size_t c = 0; c < k; c++) {  // chunk c starts at device c+1 and ends, complete, on device c
      UOp acc;
      std::string at;
      for (size_t step = 1; step <= k; step++) {
        size_t d = (c + step) % k;
        UOp mine = shrink_axis(flat[d], 0, chunks[c].first, chunks[c].second);
        acc = acc ? moved_to(acc, at, part.devices[d]).alu(op, {mine}) : mine;
        at = part.devices[d];
      }
      done[c] = acc;
    }
    for (const std::string& to : part.devices) {
      std::vector<UOp> pieces;
      for (size_t c = 0; c < k; c++) pieces.push_back(moved_to(done[c], part.devices[c], to));
      out.shards.push_back(movement(Ops::RESHAPE, cat(pieces, 0), shape));
    }
    return out;
  }

  // movement ops: per shard where the split axis survives, else on the whole value on every device
  Sharded move(const UOp& u, const Sharded& x) const {
    const std::vector<int64_t>& arg = ints(u);
    int64_t a = x.axis;
    size_t k = x.shards.size();
    auto fallback = [&]() { return per_shard(u, {whole(x)}, -1); };
    if (a < 0) return per_shard(u, {x}, -1);
    const std::vector<int64_t>& in = u.src(0).shape();
    size_t ua = static_cast<size_t>(a);
    std::vector<std::vector<int64_t>> args(k, arg);
    switch (u.op()) {
      case Ops::PERMUTE: {
        int64_t na = std::find(arg.begin(), arg.end(), a) - arg.begin();
        return per_shard(u, x, na, args);
      }
      case Ops::EXPAND:
        if (arg[ua] != in[ua]) return fallback();
        for (size_t i = 0; i < k; i++) args[i][ua] = size_along(x.shards[i], a);
        return per_shard(u, x, a, args);
      case Ops::PAD:
        if (arg[2 * ua] != 0 || arg[2 * ua + 1] != 0) return fallback();
        return per_shard(u, x, a, args);
      case Ops::FLIP:
      case Ops::STRIDE:
        if (arg[ua] != (u.op() == Ops::FLIP ? 0 : 1)) return fallback();
        return per_shard(u, x, a, args);
      case Ops::SHRINK: {  // each device keeps its overlap with [begin, end)
        Bounds b = bounds_of(x);
        for (size_t i = 0; i < k; i++) {
          int64_t lo = std::max(arg[2 * ua], b[i].first), hi = std::min(arg[2 * ua + 1], b[i].second);
          if (hi < lo) lo = hi = b[i].first;
          args[i][2 * ua] = lo - b[i].first, args[i][2 * ua + 1] = hi - b[i].first;
        }
        return per_shard(u, x, a, args);
      }
      case Ops::RESHAPE: {
        // the split axis survives when the new shape has an axis with the same elements before it, and each part
        // is a whole number of that axis' rows
        int64_t before = 1, inner = 1;
        for (size_t i = 0; i < ua; i++) before *= in[i];
        for (size_t i = ua + 1; i < in.size(); i++) inner *= in[i];
        for (int64_t na = static_cast<int64_t>(arg.size()) - 1; na >= 0; na--) {
          int64_t nb = 1, ninner = 1;
          for (int64_t i = 0; i < na; i++) nb *= arg[static_cast<size_t>(i)];
          for (size_t i = static_cast<size_t>(na) + 1; i < arg.size(); i++) ninner *= arg[i];
          if (nb != before || ninner == 0) continue;
          bool whole_rows = true;
          for (const UOp& s : x.shards) whole_rows = whole_rows && (size_along(s, a) * inner) % ninner == 0;
          if (!whole_rows) continue;
          for (size_t i = 0; i < k; i++) args[i][static_cast<size_t>(na)] = size_along(x.shards[i], a) * inner / ninner;
          return per_shard(u, x, na, args);
        }
        return fallback();
      }
      default: return fallback();
    }
  }

  // x onto one device: its parts end to end (a copy of the whole when every device holds all of it)
  UOp gather(const Sharded& x, const std::string& to) const {
    if (x.axis < 0) return whole_on(x, to);
    std::vector<UOp> pieces;
    for (size_t i = 0; i < x.shards.size(); i++) pieces.push_back(moved_to(x.shards[i], x.devices[i], to));
    return cat(pieces, x.axis);
  }

  // MSELECT: one device's part of a multi value, as the MULTI that made the part splits it
  UOp select(const UOp& u) const {
    const std::vector<int64_t>& a = u.arg().get<std::vector<int64_t>>();  // (index, axis, begin, end)
    const std::string& device = u.src(1).arg().get<std::string>();
    std::vector<std::string> devices = split_devices(uop::device_of(u.src(0)));
    Sharded x = sharded_src(u.src(0), devices);
    size_t i = static_cast<size_t>(a[0]);
    if (x.axis == a[1] && (a[1] < 0 || bounds_of(x)[i] == std::pair{a[2], a[3]})) return x.shards[i];
    UOp w = whole(x).shards[i];
    return moved_to(a[1] < 0 ? w : shrink_axis(w, a[1], a[2], a[3]), x.devices[i], device);
  }
};

}  // namespace

void note_multi_used() { used.store(true, std::memory_order_relaxed); }

bool involves_multi(const std::vector<UOp>& roots) {
  if (!used.load(std::memory_order_relaxed)) return false;  // no graph of this process has named several devices
  for (const UOp& u : UOp::sink(roots).toposort())
    if (u.op() == Ops::MULTI || (u.op() == Ops::DEVICE && is_multi(u.arg().get<std::string>()))) return true;
  return false;
}

Lowered lower(const std::vector<UOp>& roots) { return Lowering().run(roots); }

}  // namespace tg::multi
