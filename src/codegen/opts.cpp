#include "codegen/opts.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "codegen/lower.h"
#include "tg/context.h"
#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

// What the heuristic needs to know about a kernel lowered without opts.
// No opt applies to an axis of symbolic size (each needs size % n == 0): such an axis is neither of `globals` nor of
// `reduced`, so legal() refuses every opt on it and the heuristic, RANDOM_OPTS and BEAM never pick one.
struct KernelFacts {
  std::vector<int64_t> globals;             // global axes of size > 1, in order
  std::vector<int64_t> reduced;             // axes a REDUCE still loops over (gathers folded away are not)
  std::vector<uint64_t> load_axes;          // per LOAD: bit a set when its address or gate depends on axis a
  std::vector<UOp> loads, stores;           // their INDEX nodes
  std::unordered_map<int64_t, UOp> ranges;  // each axis' loop
  bool libm = false;                        // an EXP2 or LOG2: libm calls the C compiler keeps scalar
  size_t n_reduces = 0;                     // REDUCEs left in the kernel
  // per reduce axis: bit b set when a REDUCE over it reduces a value that varies along axis b (its other reduced
  // axes, the global axes it runs inside). Two vector axes can be vectors of one kernel only where neither's REDUCE
  // varies along the other (a row reduce's loop beside the loop over the row's outputs; legal())
  std::unordered_map<int64_t, uint64_t> reduce_varies;
  // whether load i runs inside the reduce loops (in a kernel without any: every load); the others run once per
  // output, in the epilogue (a bias, a residual term)
  bool in_loop(size_t i) const {
    uint64_t mask = 0;
    for (int64_t a : reduced) mask |= uint64_t{1} << a;
    return reduced.empty() || (load_axes[i] & mask) != 0;
  }
};

// Whether the access' gate (a padded read) depends on axis a.
bool gated_along(const KernelFacts& f, const UOp& index, int64_t a) {
  auto it = f.ranges.find(a);
  if (it == f.ranges.end() || index.src().size() < 3) return false;
  return index.src(2).contains(it->second);
}

// How far an access' address moves per step of axis a, in elements: 0 (invariant), 1 (contiguous), another
// constant, or -1 when not a constant.
int64_t stride(const KernelFacts& f, const UOp& index, int64_t a) {
  auto it = f.ranges.find(a);
  if (it == f.ranges.end()) return 0;
  const UOp& r = it->second;
  const UOp& addr = index.src(1);
  UOp d = uop::simplify(addr.substitute({{r, r + UOp::const_(r.dtype(), 1)}}) - addr);
  return d.is_const() ? const_to_int(d.const_value()) : -1;
}

// Whether every store's address moves by one element per step of axis a.
bool stores_contiguous(const KernelFacts& f, int64_t a) {
  return std::all_of(f.stores.begin(), f.stores.end(), [&](const UOp& st) { return stride(f, st, a) == 1; });
}

KernelFacts facts(const LoweredKernel& k) {
  KernelFacts f;
  auto symbolic = [&](int64_t a) { return static_cast<size_t>(a) < k.loop_sizes.size() && k.loop_sizes[a].is_symbolic(); };
  for (size_t a = 0; a < k.full_shape.size(); a++)
    if (k.full_shape[a] > 1 && !symbolic(static_cast<int64_t>(a)) &&
        std::find(k.reduce_axes.begin(), k.reduce_axes.end(), static_cast<int64_t>(a)) == k.reduce_axes.end())
      f.globals.push_back(static_cast<int64_t>(a));
  std::unordered_map<const uop::UOpNode*, uint64_t> axes;  // the RANGEs each node depends on
  std::unordered_map<const uop::UOpNode*, uint64_t> varies;  // the axes its value varies along (a REDUCE's: not its own)
  for (const UOp& u : k.sink.toposort()) {
    uint64_t m = 0, v = 0;
    if (u.op() == Ops::RANGE && u.arg().get<int64_t>() < 64) m = uint64_t{1} << u.arg().get<int64_t>();
    for (const UOp& s : u.src()) m |= axes[s.get()], v |= varies[s.get()];
    axes[u.get()] = m;
    varies[u.get()] = u.op() == Ops::RANGE ? m : v;
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i + 1 < u.src().size(); i++) {
        int64_t a = u.src(i).arg().get<int64_t>();
        uint64_t own = a < 64 ? uint64_t{1} << a : 0;
        f.reduce_varies[a] |= varies[u.src(0).get()] & ~own;
        varies[u.get()] &= ~own;
      }
    if (u.op() == Ops::LOAD) f.load_axes.push_back(m), f.loads.push_back(u.src(0));
    if (u.op() == Ops::STORE) f.stores.push_back(u.src(0));
    if (u.op() == Ops::RANGE) f.ranges[u.arg().get<int64_t>()] = u;
    f.libm = f.libm || u.op() == Ops::EXP2 || u.op() == Ops::LOG2;
    f.n_reduces += u.op() == Ops::REDUCE;
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i + 1 < u.src().size(); i++) {
        int64_t a = u.src(i).arg().get<int64_t>();
        if (!symbolic(a) && std::find(f.reduced.begin(), f.reduced.end(), a) == f.reduced.end()) f.reduced.push_back(a);
      }
  }
  std::sort(f.reduced.begin(), f.reduced.end());
  return f;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// How far the access' address moves per step of axis a within aligned runs of n steps, when that is the same
// constant everywhere in every run (it may jump between runs): 1 for a row of 768 read as 12 heads of 64
// (attention's output through a transpose) in runs of 16; 0 for a quantized block's scale over its 32 values.
std::optional<int64_t> step_in_runs(const KernelFacts& f, const UOp& index, int64_t a, int64_t size, int64_t n) {
  auto it = f.ranges.find(a);
  if (it == f.ranges.end()) return std::nullopt;
  const UOp& r = it->second;
  UOp run = UOp::variable("run", 0, size / n - 1, r.dtype()), lane = UOp::variable("lane", 0, n - 1, r.dtype());
  UOp addr = uop::simplify(index.src(1).substitute({{r, run * UOp::const_(r.dtype(), n) + lane}}));
  UOp first = uop::simplify(addr.substitute({{lane, UOp::const_(r.dtype(), int64_t{0})}}));
  std::optional<int64_t> step;
  for (int64_t l = 1; l < n; l++) {
    UOp d = uop::simplify(addr.substitute({{lane, UOp::const_(r.dtype(), l)}}) - first);
    if (!d.is_const()) return std::nullopt;
    if (!step) step = const_to_int(d.const_value());
    if (const_to_int(d.const_value()) != l * *step) return std::nullopt;
  }
  return step;
}

// The vector width for axis a: the widest of 16, 8 and 4 that divides it, when every load along a is contiguous
// (a padded one too: a vector load where every lane is inside, else lane by lane; or contiguous in aligned runs of
// the width, ungated) or invariant (in such runs too) and ungated, and one at least is contiguous; else 0. A load
// of the epilogue may be gathered lane by lane: it runs once per output (a residual term read NCHW by a 1x1 conv
// whose vector runs over output channels). With `strided`, a load two elements apart per lane counts as
// contiguous, also under a gate (two vector loads and their even elements, lane by lane where a gate
// fails: a stride-2 pool's windows, padded or not), and *strided says whether one was.
int64_t vector_width(const LoweredKernel& k, const KernelFacts& f, int64_t a, bool* strided = nullptr) {
  std::vector<int64_t> strides;
  for (const UOp& l : f.loads) strides.push_back(stride(f, l, a));
  for (int64_t n : {16, 8, 4}) {
    if (k.full_shape[a] % n != 0 || n > k.caps.max_vector) continue;
    bool unit = false, ok = true, two = false;
    for (size_t i = 0; i < f.loads.size() && ok; i++) {
      int64_t s = strides[i];
      bool gated = gated_along(f, f.loads[i], a);
      if (s == -1 && !gated) s = step_in_runs(f, f.loads[i], a, k.full_shape[a], n).value_or(-1);
      if (s == 0 && !gated) continue;
      if (s != 1 && !f.in_loop(i)) continue;
      if (s == 2 && strided) s = 1, two = true;
      ok = s == 1;
      unit = true;
    }
    if (ok && unit) {
      if (strided) *strided = two;
      return n;
    }
  }
  return 0;
}

}  // namespace

namespace {
// every OptOp's name, in the enum's order: opts_str writes them, parse_opts reads them
constexpr const char* kOptNames[] = {"UPCAST", "UNROLL", "VECTOR", "LOCAL", "GROUP", "GROUPTOP", "SWAP", "PADTO", "TC"};
}  // namespace

std::string opts_str(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts)
    s += (s.empty() ? "" : " ") + std::string(kOptNames[static_cast<size_t>(o.op)]) + "(" + std::to_string(o.axis) + "," +
         std::to_string(o.amount) + ")";
  return s;
}

std::vector<int64_t> padded_shape(std::vector<int64_t> shape, const std::vector<Opt>& opts) {
  for (const Opt& o : opts)
    if (o.op == OptOp::PADTO && o.axis >= 0 && o.axis < static_cast<int64_t>(shape.size()) && o.amount > 0)
      shape[static_cast<size_t>(o.axis)] = round_up(shape[static_cast<size_t>(o.axis)], o.amount);
  return shape;
}

std::vector<Opt> parse_opts(const std::string& s) {
  std::vector<Opt> out;
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    size_t open = tok.find('(');
    const char* const* name = std::find(std::begin(kOptNames), std::end(kOptNames), tok.substr(0, open));
    long long axis = 0, amount = 0;
    char close = 0;
    if (open == std::string::npos || name == std::end(kOptNames) ||
        std::sscanf(tok.c_str() + open, "(%lld,%lld%c", &axis, &amount, &close) != 3 || close != ')')
      return {};
    out.push_back({static_cast<OptOp>(name - std::begin(kOptNames)), axis, amount});
  }
  return out;
}

TensorCoreConfig tc_config(int64_t amount) {
  if (amount < 1111 || amount > 9999) return {};
  TensorCoreConfig c{amount / 1000, amount / 100 % 10, amount / 10 % 10, amount % 10};
  if (!c.tiles_n || !c.warps_m || !c.warps_n) return {};
  return c;
}

namespace {

// a TC opt on the kernel: the device has tensor cores, they fit, and the block fits the device (its threads, its
// registers, and where emulated its local memory); sizes the block does not divide are padded (tensor_core.cpp)
bool tc_legal(const LoweredKernel& k, const Opt& o) {
  TensorCoreConfig c = tc_config(o.amount);
  const TensorCoreFit& f = k.tc;
  if (k.caps.tensor_cores.empty() || !f || o.axis != 0 || !c.tiles_m) return false;
  int64_t warps = c.warps_m * c.warps_n, lane_warps = f.m > f.n ? c.warps_m : c.warps_n;
  int64_t other_warps = warps / lane_warps;
  if (32 * warps > k.caps.max_local_size || 32 * lane_warps > k.caps.max_local[0] ||
      other_warps > std::min(k.caps.max_local[1], k.caps.max_local[2]))
    return false;
  // registers: 4 accumulators per tile pair, and the fragments, per thread
  if (c.tiles_m * c.tiles_n > 32) return false;
  return k.caps.tensor_cores != "emulated" || warps * (16 * 16 + 16 * 8) * 4 <= k.caps.local_memory;
}

// the work a TC configuration does over the kernel's, its blocks rounding m, n and k up (1: they divide)
double tc_padding(const LoweredKernel& k, const Opt& o) {
  TensorCoreConfig c = tc_config(o.amount);
  auto up = [&](int64_t a, int64_t b) {
    return static_cast<double>(round_up(k.full_shape[static_cast<size_t>(a)], b)) / static_cast<double>(k.full_shape[static_cast<size_t>(a)]);
  };
  return up(k.tc.m, c.block_m()) * up(k.tc.n, c.block_n()) * up(k.tc.k, 16);
}
}  // namespace

std::vector<Opt> tc_opts(const LoweredKernel& k) {
  std::vector<Opt> out;
  // the heuristic's order: warps of 64 x 64 (4 x 8 tiles: each A fragment feeds 8 mmas, each B 4) in blocks of 2,
  // BEAM's pick for a large float16 matmul (DEV=CUDA ./build/bin/tg_bench matmul 4096 --half, with and without
  // BEAM=2), then smaller where the sizes do not divide
  for (int64_t amount : {4812, 2822, 2422, 2421, 2412, 2411, 2222, 1411, 1211, 1111, 4422, 4222, 4211, 2442, 2224,
                         4441, 2842, 2824, 4822, 2882, 4442, 2444})
    if (tc_legal(k, {OptOp::TC, 0, amount})) out.push_back({OptOp::TC, 0, amount});
  // blocks that divide the sizes first, in that order; then the least padded (17 rows: one tile of 16 and a gated one)
  std::stable_sort(out.begin(), out.end(), [&](const Opt& a, const Opt& b) { return tc_padding(k, a) < tc_padding(k, b); });
  return out;
}

bool legal(const LoweredKernel& k, const std::vector<Opt>& opts) {
  if (std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::TC; }))
    return opts.size() == 1 && tc_legal(k, opts[0]);
  KernelFacts f = facts(k);
  std::vector<int64_t> copied, locals;  // axes with an UPCAST or UNROLL, with a LOCAL
  std::unordered_map<int64_t, int64_t> lanes;  // per axis, the lanes all its opts take
  std::vector<int64_t> vector_axes;
  int64_t group = 1;  // work-items per work-group
  int groups = 0;
  bool vector = false;  // a VECTOR: lanes of a reduction that GROUP's scalar partial results cannot hold
  int64_t upcast = 1;   // copies of each reduction (UPCAST of global axes): a GROUP keeps partial results for each
  // which grid dimension an axis lands in is to_grid's choice: every LOCAL must fit the smallest
  int64_t max_local = std::min({k.caps.max_local[0], k.caps.max_local[1], k.caps.max_local[2]});
  std::vector<int64_t> taken;  // axes some opt other than SWAP has cut: a PADTO must come before the axis' others
  for (const Opt& o : opts) {
    if (o.op == OptOp::PADTO && (!contains(f.globals, o.axis) || o.amount < 2 || contains(taken, o.axis))) return false;
    if (o.op != OptOp::SWAP) taken.push_back(o.axis);
  }
  std::vector<int64_t> size = padded_shape(k.full_shape, opts);
  for (const Opt& o : opts) {
    if (o.op == OptOp::PADTO) continue;
    if (o.op == OptOp::SWAP) {  // two global loops trade places: nothing else about the axes changes
      if (k.caps.grid || o.axis == o.amount || !contains(f.globals, o.axis) || !contains(f.globals, o.amount)) return false;
      // not where a reduction runs outside some global loop (linearize): moved inside it, it would run per trip
      for (const auto& [r, varies] : f.reduce_varies)
        for (int64_t a : f.globals)
          if (a < 64 && !(varies >> a & 1)) return false;
      continue;
    }
    if (o.axis < 0 || o.axis >= static_cast<int64_t>(k.full_shape.size()) || o.amount < 2) return false;
    bool grouped = o.op == OptOp::GROUP || o.op == OptOp::GROUPTOP;
    if ((o.op == OptOp::LOCAL || grouped) && (!k.caps.grid || contains(locals, o.axis) || o.amount > max_local ||
                                              (group *= o.amount) > k.caps.max_local_size))
      return false;
    if (grouped && (groups++ || !contains(f.reduced, o.axis))) return false;
    if ((o.op == OptOp::UPCAST || o.op == OptOp::UNROLL) && contains(copied, o.axis)) return false;
    if (!grouped && !contains(o.op == OptOp::UNROLL ? f.reduced : f.globals, o.axis) && !(o.op == OptOp::VECTOR && contains(f.reduced, o.axis)))
      return false;
    if (o.op == OptOp::VECTOR && ((o.amount != 2 && o.amount != 4 && o.amount != 8 && o.amount != 16) || o.amount > k.caps.max_vector))
      return false;
    if (o.op == OptOp::VECTOR) {  // beside another vector axis only where neither's REDUCE varies along the other
      auto apart = [&](int64_t a, int64_t b) {
        bool ga = contains(f.globals, a), gb = contains(f.globals, b);
        auto varies = [&](int64_t r, int64_t x) { return x < 64 && (f.reduce_varies[r] >> x & 1); };
        return a != b && !(ga && gb) && (ga || !varies(a, b)) && (gb || !varies(b, a));
      };
      for (int64_t v : vector_axes)
        if (!apart(v, o.axis)) return false;
      vector_axes.push_back(o.axis);
    }
    if (o.op == OptOp::UPCAST || o.op == OptOp::UNROLL) copied.push_back(o.axis);
    if (o.op == OptOp::LOCAL || grouped) locals.push_back(o.axis);
    if (o.op == OptOp::VECTOR) vector = true;
    if (o.op == OptOp::UPCAST) upcast *= o.amount;
    int64_t& n = lanes.emplace(o.axis, 1).first->second;
    n *= o.amount;
    if (size[static_cast<size_t>(o.axis)] % n != 0) return false;
  }
  if (groups && vector) return false;
  // a GROUP's local memory: a partial result per work-item of the group, for every copy of every reduction
  if (groups && group * upcast * 8 * static_cast<int64_t>(f.n_reduces) > k.caps.local_memory) return false;
  return true;
}

namespace {

// CPU, an elementwise kernel that transposes: its loads are contiguous along `vector_axis` (width `width`) and its
// stores along another axis, along which some load jumps. Loop by loop, one side of the copy touches a new cache
// line (and, a row or more apart, a new page) per element. A block of 8 vectors (VECTOR on the loads' axis,
// UPCAST(8) on the stores') reads 8 runs of 16 and writes 16 runs of 8; vectors along the stores instead would need
// 16 copies, which spill. Measured by ./build/bin/tg_bench elementwise (its transpose line).
std::vector<Opt> transpose_opts(const LoweredKernel& k, const KernelFacts& f, int64_t vector_axis, int64_t width) {
  if (k.caps.grid || vector_axis < 0 || f.stores.empty()) return {};
  for (int64_t s : f.globals) {
    if (s == vector_axis) continue;
    bool stores_unit = stores_contiguous(f, s);
    bool jumps = std::any_of(f.loads.begin(), f.loads.end(), [&](const UOp& l) { int64_t d = stride(f, l, s); return d != 0 && d != 1; });
    if (!stores_unit || !jumps) continue;
    for (int64_t n : {8, 4, 2})
      if (k.full_shape[s] % n == 0) {
        std::vector<Opt> opts{{OptOp::VECTOR, vector_axis, width}, {OptOp::UPCAST, s, n}};
        if (legal(k, opts)) return opts;
      }
  }
  return {};
}

// The heuristic's vector, upcast and unroll opts (every device).
std::vector<Opt> blocking_opts(const LoweredKernel& k) {
  KernelFacts f = facts(k);
  // the vector axis: one along which every load is contiguous or invariant (one vector load, or a broadcast), the
  // widest vector first, then one without stride-2 loads, then one whose stores are contiguous too, then one
  // without padded loads along it
  int64_t vector_axis = -1, width = 0, best = 0;
  bool pad_vector = false;  // the vector axis is padded to a multiple of the width (PADTO; its padded lanes read nothing)
  // the loop's largest read, when it is larger than a core's L2 (2^18 elements and more) and used by few outputs
  // (fewer than 64 copies along the global axes it does not depend on): a weight streamed from memory, as in a 1x1
  // conv over few pixels. A vector along its contiguous axis reads it in whole cache lines, once; along the pixels
  // it would be read a scalar at a time. A read that many outputs share gets no such preference. Both limits:
  // bench/onnx_models.sh resnet50 mobilenet_v2 (batches 1 and 8)
  int64_t big = -1, most = 0;
  for (size_t i = 0; i < f.loads.size(); i++) {
    if (!f.in_loop(i)) continue;
    int64_t elems = 1;
    for (size_t a = 0; a < k.full_shape.size() && a < 64; a++)
      if (f.load_axes[i] >> a & 1) elems *= k.full_shape[a];
    if (elems > most) most = elems, big = static_cast<int64_t>(i);
  }
  int64_t copies = 1;
  for (int64_t a : f.globals)
    if (big >= 0 && !(f.load_axes[big] >> a & 1)) copies *= k.full_shape[a];
  if (most < (int64_t{1} << 18) || copies >= 64) big = -1;
  // `waste`: the padding a vector may add is at most 1/waste of the axis
  auto choose_vector_axis = [&](int64_t waste) {
    for (int64_t a : f.globals) {
      bool strided = false, padded = false;
      int64_t n = vector_width(k, f, a, &strided);
      // a wider vector over the axis padded to a multiple of it, where that adds at most 1/waste of the axis (an
      // eighth in the first pass: 1000 output channels as 63 vectors of 16, not 125 of 8; a stride-2 max pool's 27
      // output columns as 7 of 4, not 27 scalars; a half in the second, which only a kernel with no vector at all
      // gets) and no stack of Views reads the axis (LoweredKernel::stacked). Reduce kernels only: the C compiler
      // vectorizes elementwise loops itself
      bool stacked = static_cast<size_t>(a) < k.stacked.size() && k.stacked[a];
      for (int64_t m = k.caps.max_vector; m > std::max<int64_t>(n, 1) && !f.reduced.empty() && !stacked; m /= 2) {
        int64_t size = k.full_shape[a], rounded = round_up(size, m);
        if (size < m || waste * (rounded - size) > size) continue;
        LoweredKernel padded_k = k;
        padded_k.full_shape[a] = rounded;
        padded_k.caps.max_vector = m;  // 13 columns padded to 16 for vectors of 8 would allow 16 too
        bool two = false;
        if (vector_width(padded_k, f, a, &two) == m) {
          n = m, padded = true, strided = two;
          break;
        }
      }
      bool stores_unit = stores_contiguous(f, a);
      bool ungated = std::none_of(f.loads.begin(), f.loads.end(), [&](const UOp& l) { return gated_along(f, l, a); });
      bool streams = big >= 0 && stride(f, f.loads[big], a) == 1;
      // a padded vector ranks below every unpadded one as wide (its padded lanes are wasted work: a 1x1 conv at
      // 14x14 takes 512 channels in vectors of 16, not 196 pixels padded to 208) and above every narrower one; among
      // as wide ones, the axis along which the largest read streams wins over contiguous stores
      int64_t score = 8 * n - 8 * padded + 4 * !strided + 2 * stores_unit + ungated + 3 * streams;
      if (n > 0 && score >= best) vector_axis = a, width = n, best = score, pad_vector = padded;
    }
  };
  choose_vector_axis(8);
  if (f.n_reduces == 0) {
    // elementwise: the C compiler's loop vectorizer does well on these, except on exp2 and log2 and on loads under
    // a gate (a cat's halves, a pad), which it turns into slow masked loads
    bool gated = vector_axis >= 0 && std::any_of(f.loads.begin(), f.loads.end(), [&](const UOp& l) { return gated_along(f, l, vector_axis); });
    if ((f.libm || gated) && vector_axis >= 0) return {{OptOp::VECTOR, vector_axis, width}};
    return transpose_opts(k, f, vector_axis, width);
  }
  std::vector<Opt> opts;
  int64_t upcast = 1;
  // else the innermost reduce axis: a vector accumulator, summed across after the loop. None where every reduce
  // loop has a symbolic size (attention over a KV cache of start_pos + 1 positions): the global axes are blocked
  int64_t r = f.reduced.empty() ? -1 : f.reduced.back();
  if (vector_axis < 0 && r >= 0 && vector_width(k, f, r) > 0) vector_axis = r, width = vector_width(k, f, r);
  // else a vector padded by up to half of its axis: a stride-2 max pool's 13 or 6 output columns would otherwise
  // run as scalars, a NaN-propagating max per window element (bench/onnx_models.sh squeezenet1_1)
  if (vector_axis < 0) choose_vector_axis(2);
  if (pad_vector) opts.push_back({OptOp::PADTO, vector_axis, width});
  if (vector_axis >= 0) opts.push_back({OptOp::VECTOR, vector_axis, width});
  // a matrix-vector product on a CPU over a narrow weight (quantized or half: its loads are narrower than float32):
  // no block over the weight's rows. Row after row, the weight is read as one sequential stream; a block of 8 rows
  // reads 8 streams a row apart, each too short for the prefetcher to catch up with, and 8 rows of a K-quant's
  // scale and minimum bytes spill. The row's one accumulator is no wait: the renderer gives the unrolled sum partial
  // accumulators. Measured by bench/gguf.sh (decode)
  bool narrow = false;
  for (size_t i = 0; i < f.loads.size(); i++) narrow |= f.in_loop(i) && f.loads[i].dtype().base().itemsize() < 4;
  bool matvec = r >= 0 && r == vector_axis && f.globals.size() == 1 && f.reduced.size() == 1;
  bool row_by_row = matvec && narrow && !k.caps.grid;
  // whether some load of the loop that `which` accepts does not depend on axis a
  auto loop_load_invariant_along = [&](int64_t a, auto&& which) {
    for (size_t i = 0; i < f.loads.size(); i++)
      if (f.in_loop(i) && !(f.load_axes[i] >> a & 1) && which(f.loads[i])) return true;
    return false;
  };
  // register blocking: a global axis that some input does not depend on gives every copy the same loads
  // (loads of the loop only: an epilogue's bias or clip bound is read once per output whatever the blocking)
  auto reuse = [&](int64_t a) {
    return a != vector_axis && !row_by_row && loop_load_invariant_along(a, [](const UOp&) { return true; });
  };
  // with something to block for, two vectors along the vector axis first: each broadcast value then feeds two FMAs
  // per copy, and the block grows to 20 vectors (./build/bin/tg_bench conv, ./build/bin/tg_bench matmul 1024)
  bool pair = vector_axis >= 0 && contains(f.globals, vector_axis) && k.full_shape[vector_axis] % (2 * width) == 0 &&
              std::any_of(f.globals.begin(), f.globals.end(), reuse);
  if (pair) opts.push_back({OptOp::UPCAST, vector_axis, 2}), upcast = 2;
  // innermost first, except that an axis along which the loop's bytes are invariant comes first: the rows of x
  // reusing a quantized weight's blocks, whose dequantization then runs once per 8 rows, not once per 2 (a prompt
  // chunk's products: PROMPT=128 bench/gguf.sh). Not for a float16 weight, whose conversion is one per value and
  // gains nothing from it
  std::vector<int64_t> order(f.globals.rbegin(), f.globals.rend());
  auto reuses_bytes = [&](int64_t a) {
    return loop_load_invariant_along(a, [](const UOp& l) {
      return l.dtype().base().itemsize() == 1 && !l.dtype().base().is_float();
    });
  };
  bool narrow_first = false;
  for (size_t i = 1; i < order.size() && !narrow_first; i++)
    if (reuse(order[i]) && reuses_bytes(order[i]) && !reuses_bytes(order[0])) {
      auto at = order.begin() + static_cast<std::ptrdiff_t>(i);
      std::rotate(order.begin(), at, at + 1);  // order[i] to the front, the others in their order after it
      narrow_first = true;
    }
  int blocked = 0;
  for (auto it = order.begin(); it != order.end() && blocked < 2; ++it) {
    int64_t a = *it;
    if (!reuse(a)) continue;
    // without a vector, up to 16 x 4 scalar accumulators; with one, up to 8 x 2 vectors (10 x 2 after a pair).
    // With a vector, a short axis (a 5x5 kernel's) may be copied whole
    // Several reductions over the loop (silu(x @ W1) * (x @ W2) in one kernel) keep an accumulator each per copy:
    // the budget is shared (two quantized matmuls with 16 vector accumulators each spill)
    int64_t sums = std::max<int64_t>(static_cast<int64_t>(f.n_reduces), 1);
    int64_t vectors = (pair ? 20 : 16) / sums, first = std::max<int64_t>((pair ? 10 : 8) / sums, 2);
    int64_t most = vector_axis >= 0 ? (blocked == 0 ? first : vectors / upcast) : (blocked == 0 ? 16 / sums : 4), size = k.full_shape[a];
    // the largest divisor that fits (10 output columns: 5 copies of a vector, not 2); scalar copies by powers of 2
    // or up to 8 (a depthwise conv's 7 output columns at 7x7 or 14x14: 7 accumulators that share each weight and
    // the overlapping input columns; with powers of 2 only, those rows get no block at all: bench/onnx_models.sh
    // efficientnet_b0 mobilenet_v2). At most 8 x 4 accumulators then: 14 x 4 spill
    int64_t n = std::min(most, size);
    auto scalar_ok = [&](int64_t c) { return (c & (c - 1)) == 0 || c <= 8; };
    while (n >= 2 && (size % n != 0 || (vector_axis < 0 && !scalar_ok(n)))) n--;
    // none near `most` (197 tokens, a prime; 13 output columns): the axis padded up to a multiple of the largest
    // block that adds at most an eighth to it (200 = 20 x 10; 14 = 2 x 7: a 3x3 conv at 13x13)
    for (int64_t m = most; 2 * n <= most && m > 2 * n && size > m; m--)
      if ((vector_axis >= 0 || scalar_ok(m)) && 8 * (round_up(size, m) - size) <= size) {
        opts.push_back({OptOp::PADTO, a, m});
        n = m;
        break;
      }
    if (n >= 2) {
      opts.push_back({OptOp::UPCAST, a, n});
      upcast *= n, blocked++;
    }
  }
  // no reuse to block for, as in a column sum: more vectors along the vector axis (independent accumulators, and
  // each pass over the reduce loop reads longer runs of consecutive addresses)
  if (upcast == 1 && vector_axis >= 0 && contains(f.globals, vector_axis))
    for (int64_t n : {8, 4, 2})
      if (k.full_shape[vector_axis] % (n * width) == 0) {
        opts.push_back({OptOp::UPCAST, vector_axis, n});
        upcast *= n;
        break;
      }
  // a reduction over an outer axis (a column sum): copies along the inner global axis read consecutive addresses
  if (opts.empty() && !f.globals.empty() && f.globals.back() == static_cast<int64_t>(k.full_shape.size()) - 1)
    for (int64_t n : {16, 8, 4})
      if (k.full_shape[f.globals.back()] % n == 0) {
        opts.push_back({OptOp::UPCAST, f.globals.back(), n});
        upcast *= n;
        break;
      }
  // a vector along the reduce axis: unrolled by 2 where the loop reads elements narrower than float32, so that the
  // two halves of a 32-element block of a quantized weight share its byte loads and the conversion of its scale. A
  // matrix-vector product, or one blocked over x's rows first, by 4 (two blocks per step). Streamed row by row, by
  // 16: a step covers a K-quant's whole block of 256, so its scale bytes are read and unpacked once per block, with
  // no branches. Measured by bench/gguf.sh (decode; PROMPT=32 for the blocked products)
  if (r >= 0 && r == vector_axis) {
    std::vector<int64_t> unrolls = row_by_row ? std::vector<int64_t>{16, 8, 4, 2}
                                   : matvec || narrow_first ? std::vector<int64_t>{4, 2} : std::vector<int64_t>{2};
    for (int64_t n : unrolls)
      if (narrow && k.full_shape[r] % (n * width) == 0) {
        opts.push_back({OptOp::UNROLL, r, n});
        if (legal(k, opts)) break;
        opts.pop_back();
      }
    return opts;
  }
  // the innermost reduce loop: unrolled whole when short (a 5x5 window), by 4 otherwise
  if (r < 0) return opts;
  int64_t size = k.full_shape[r];
  if (size <= 8 && upcast * size <= 256) opts.push_back({OptOp::UNROLL, r, size});
  else if (size % 4 == 0 && upcast * 4 <= 256) opts.push_back({OptOp::UNROLL, r, 4});
  return opts;
}

// Grid devices: the innermost global axis (what is left of it after the other opts) cut into work-groups of up to
// 32 work-items, a warp or wavefront's worth of neighbouring outputs; the driver picks the groups when no divisor
// of 2 or more is left. An elementwise kernel on a GPU takes groups of up to 64: an NVIDIA GPU keeps at most 32
// groups in flight per multiprocessor, so groups of 32 fill only half of its 2048 threads (DEV=CUDA
// ./build/bin/tg_bench elementwise).
void add_local(const LoweredKernel& k, std::vector<Opt>& opts) {
  KernelFacts f = facts(k);
  if (!k.caps.grid || f.globals.empty()) return;
  int64_t a = f.globals.back(), left = k.full_shape[a];
  for (const Opt& o : opts)
    if (o.axis == a && o.op != OptOp::SWAP) left /= o.amount;
  int64_t most = k.caps.gpu && f.reduced.empty() ? 64 : 32;
  int64_t group = 1;
  for (int64_t n = std::min<int64_t>(most, left); n >= 2; n--)
    if (left % n == 0) {
      opts.push_back({OptOp::LOCAL, a, n});
      if (legal(k, opts)) {
        group = n;
        break;
      }
      opts.pop_back();
    }
  if (!k.caps.gpu || (group == 1 && left > 1)) return;  // the driver picks the groups: no outer axis in them
  // A GPU runs a group as warps of 32 work-items: a smaller group leaves lanes idle (a 5x5 convolution's weight
  // gradient, in groups of 5 along its innermost axis: DEV=CUDA ./build/bin/tg_bench conv). The next axes out
  // join the group while it has fewer than 32, up to 128 work-items. Only the three innermost axes: to_grid merges
  // the axes outside them into one grid dimension, whose work-groups could then outgrow it.
  for (size_t i = f.globals.size() - 1; i-- > 0 && i + 3 >= f.globals.size() && group < 32;) {
    int64_t b = f.globals[i], rest = k.full_shape[b];
    for (const Opt& o : opts)
      if (o.axis == b && o.op != OptOp::SWAP) rest /= o.amount;
    for (int64_t n = std::min<int64_t>(128 / group, rest); n >= 2; n--)
      if (rest % n == 0) {
        opts.push_back({OptOp::LOCAL, b, n});
        if (legal(k, opts)) {
          group *= n;
          break;
        }
        opts.pop_back();
      }
  }
}

// GPUs: a reduction whose loads jump between neighbouring work-items (no load in its loop moves by 0 or 1 along the
// innermost global axis) while one is contiguous along the innermost reduce axis r: that axis shared by the
// group's work-items instead (GROUP by its largest divisor up to 32), so a warp's loads read neighbouring memory,
// and the innermost global axis' work-items beside them up to 64 per group. Else a batchnorm's gradients
// (beautiful_mnist's: 1024 outputs, each a sum over 16 x 20 x 20 with the 32 channels 400 floats apart) read a
// cache line per work-item (DEV=CUDA ./build/bin/tg_bench mnist_step).
std::vector<Opt> coalescing_group(const LoweredKernel& k, const KernelFacts& f, int64_t r) {
  int64_t terms = 1;  // a short sum (log_softmax's 10 classes) is not worth a group's barrier
  for (int64_t a : f.reduced) terms *= k.full_shape[a];
  if (f.globals.empty() || k.full_shape[r] < 8 || terms < 256) return {};
  int64_t g = f.globals.back();
  bool along_r = false;
  for (size_t i = 0; i < f.loads.size(); i++) {
    if (!f.in_loop(i)) continue;
    int64_t sg = stride(f, f.loads[i], g);
    if (sg == 0 || sg == 1) return {};
    along_r = along_r || stride(f, f.loads[i], r) == 1;
  }
  if (!along_r) return {};
  std::vector<Opt> opts;
  for (int64_t n = std::min<int64_t>(32, k.full_shape[r]); n >= 4 && opts.empty(); n--)
    if (k.full_shape[r] % n == 0 && legal(k, {{OptOp::GROUP, r, n}})) opts.push_back({OptOp::GROUP, r, n});
  if (opts.empty()) return {};
  for (int64_t m = std::min<int64_t>(64 / opts[0].amount, k.full_shape[g]); m >= 2; m--)
    if (k.full_shape[g] % m == 0) {
      opts.push_back({OptOp::LOCAL, g, m});
      if (legal(k, opts)) break;
      opts.pop_back();
    }
  return opts;
}

// GPUs: a reduction with few outputs (fewer than 1024: not enough work-items to fill the device) and a long
// innermost reduce axis (>= 256) shares that axis between the work-items of a group instead, GROUP by the largest
// power of 2 up to 64 that divides it; empty when the kernel is not such a one. Not on CPUs behind OpenCL (PoCL),
// where it made a full sum many times slower (DEV=OPENCL ./build/bin/tg_bench reduce).
std::vector<Opt> group_opts(const LoweredKernel& k) {
  KernelFacts f = facts(k);
  if (!k.caps.gpu || f.reduced.empty()) return {};
  int64_t outputs = 1, r = f.reduced.back();
  for (int64_t a : f.globals) outputs *= k.full_shape[a];
  if (outputs < 1024 && k.full_shape[r] >= 256) {
    for (int64_t n = 64; n >= 2; n /= 2)
      if (k.full_shape[r] % n == 0 && legal(k, {{OptOp::GROUP, r, n}})) return {{OptOp::GROUP, r, n}};
    return {};
  }
  return coalescing_group(k, f, r);
}

// loop_traffic over the kernel's facts
double traffic(const KernelFacts& f, const std::vector<int64_t>& order, const std::vector<int64_t>& trips) {
  double total = 0;
  for (size_t l = 0; l < f.loads.size(); l++) {
    // the load's footprint: the span of elements its address reaches
    const UOp& addr = f.loads[l].src(1);
    double bytes = (static_cast<double>(addr.vmax()) - static_cast<double>(addr.vmin()) + 1) * f.loads[l].dtype().base().itemsize();
    size_t inner = 0;  // one past the innermost loop of `order` the load depends on
    for (size_t i = 0; i < order.size(); i++)
      if (f.load_axes[l] >> order[i] & 1) inner = i + 1;
    for (size_t i = 0; i < inner; i++)
      if (!(f.load_axes[l] >> order[i] & 1)) bytes *= static_cast<double>(trips[static_cast<size_t>(order[i])]);
    total += bytes;
  }
  return total;
}

// The trip count of each axis' loop once `opts` have taken their lanes.
std::vector<int64_t> loop_trips(const LoweredKernel& k, const std::vector<Opt>& opts) {
  std::vector<int64_t> trips = padded_shape(k.full_shape, opts);
  for (const Opt& o : opts)
    if (o.op != OptOp::SWAP && o.op != OptOp::PADTO) trips[static_cast<size_t>(o.axis)] /= o.amount;
  return trips;
}

// GPUs: every output block is a work-item, and a GPU hides its memory latency only with thousands of them in
// flight. The CPU's register blocks (up to 16 x 4 copies) become at most kInner copies along the innermost global
// axis (its neighbouring work-items read neighbouring memory: copies there spread a warp's reads apart) and
// kOuter along the others (their loads are shared by the warp, and each copy reuses the inner axis' loads), then
// fewer, last block first, while fewer than kGpuWorkItems work-items would be left (a 64 x 64 matmul keeps none:
// 1024 work-items of one float4 each). UNROLLs and VECTORs (float4 on a GPU) stay. kInner and kOuter: DEV=CUDA
// ./build/bin/tg_bench matmul 4096 and DEV=CUDA ./build/bin/tg_bench mnist_step.
void fit_blocks_to_gpu(const LoweredKernel& k, std::vector<Opt>& opts) {
  if (!k.caps.gpu) return;
  constexpr int64_t kGpuWorkItems = 16384;
  constexpr int64_t kInner = 4, kOuter = 8;
  KernelFacts f = facts(k);
  auto largest_divisor = [](int64_t n, int64_t most) {
    while (n % most) most--;
    return most;
  };
  auto work_items = [&]() {
    std::vector<int64_t> trips = loop_trips(k, opts);
    int64_t n = 1;
    for (int64_t a : f.globals) n *= trips[static_cast<size_t>(a)];
    return n;
  };
  std::vector<size_t> blocks;  // UPCASTs of global axes, in order
  int64_t inner = f.globals.empty() ? -1 : f.globals.back();
  std::vector<int64_t> size = padded_shape(k.full_shape, opts);
  for (size_t i = 0; i < opts.size(); i++)
    if (opts[i].op == OptOp::UPCAST && contains(f.globals, opts[i].axis)) {
      if (opts[i].axis == inner) {
        opts[i].amount = largest_divisor(opts[i].amount, kInner);
      } else {
        int64_t left = size[static_cast<size_t>(opts[i].axis)];
        for (size_t j = 0; j < opts.size(); j++)
          if (j != i && opts[j].axis == opts[i].axis && opts[j].op != OptOp::SWAP && opts[j].op != OptOp::PADTO) left /= opts[j].amount;
        opts[i].amount = largest_divisor(left, kOuter);
      }
      blocks.push_back(i);
    }
  while (!blocks.empty() && work_items() < kGpuWorkItems) {
    Opt& o = opts[blocks.back()];
    o.amount = o.amount > 1 ? largest_divisor(o.amount, o.amount - 1) : 1;
    if (o.amount == 1) blocks.pop_back();
  }
  // blocks of 1 go, and with them the PADTO that made an axis divisible by a block it no longer has
  std::erase_if(opts, [](const Opt& o) { return o.op == OptOp::UPCAST && o.amount == 1; });
  std::erase_if(opts, [&](const Opt& p) {
    return p.op == OptOp::PADTO && std::none_of(opts.begin(), opts.end(), [&](const Opt& o) {
             return (o.op == OptOp::UPCAST || o.op == OptOp::VECTOR) && o.axis == p.axis;
           });
  });
}

// CPU: the one SWAP of two global loops that cuts loop_traffic the most, when it at least halves it, the inputs are
// larger than a core's L2 (below that a re-read comes from cache anyway) and the new outermost loop still has
// enough trips to share between threads.
void add_swap(const LoweredKernel& k, std::vector<Opt>& opts) {
  KernelFacts f = facts(k);
  if (k.caps.grid || f.reduced.empty()) return;
  std::vector<int64_t> trips = loop_trips(k, opts), order;
  for (int64_t a : f.globals)
    if (trips[static_cast<size_t>(a)] > 1) order.push_back(a);
  if (order.size() < 2) return;
  double best = traffic(f, order, trips) / 2;
  constexpr double kCacheBytes = 1 << 20;
  constexpr int64_t kMinOuterTrips = 8;  // the CPU cuts the outermost loop into 4 ranges per thread
  if (traffic(f, {}, trips) <= kCacheBytes) return;  // every input once: what the kernel reads at the least
  std::optional<Opt> swap;
  for (size_t i = 0; i < order.size(); i++)
    for (size_t j = i + 1; j < order.size(); j++) {
      std::vector<int64_t> o = order;
      std::swap(o[i], o[j]);
      if (trips[static_cast<size_t>(o[0])] < std::min(kMinOuterTrips, trips[static_cast<size_t>(order[0])])) continue;
      double t = traffic(f, o, trips);
      if (t < best) best = t, swap = Opt{OptOp::SWAP, order[i], order[j]};
    }
  if (swap) opts.push_back(*swap);
}

}  // namespace

double loop_traffic(const LoweredKernel& k, const std::vector<int64_t>& order, const std::vector<int64_t>& trips) {
  return traffic(facts(k), order, trips);
}

// CPU: each reduce axis that runs beside the global vector axis (a row reduce's loop, Grouping::row_reduces) a
// vector of its own where its loads allow one: a softmax's max, its sum of exponentials and its stores are three
// vector loops over a row. Each unrolled by 4 where the row allows: four accumulators, not one chain of dependent
// compares (./build/bin/tg_bench softmax --rows 1024 --cols 1024).
void add_row_vectors(const LoweredKernel& k, std::vector<Opt>& opts) {
  if (k.caps.grid) return;
  KernelFacts f = facts(k);
  for (int64_t a : f.reduced) {
    if (std::any_of(opts.begin(), opts.end(), [&](const Opt& o) { return o.axis == a && o.op == OptOp::VECTOR; })) continue;
    int64_t w = vector_width(k, f, a);
    if (w == 0) continue;
    opts.push_back({OptOp::VECTOR, a, w});
    if (!legal(k, opts)) {
      opts.pop_back();
      continue;
    }
    bool unrolled = std::any_of(opts.begin(), opts.end(), [&](const Opt& o) { return o.axis == a && o.op == OptOp::UNROLL; });
    if (!unrolled && k.full_shape[a] % (4 * w) == 0) {
      opts.push_back({OptOp::UNROLL, a, 4});
      if (!legal(k, opts)) opts.pop_back();
    }
  }
}

std::vector<Opt> choose_opts(const LoweredKernel& k) {
  if (getenv_int("NOOPT")) return {};
  // tensor cores where they waste at most half their work on padding (a batch of 4 rows would pad to 16)
  if (std::vector<Opt> tc = tc_opts(k); !tc.empty() && getenv_int("TC", 1) && tc_padding(k, tc[0]) <= 2) return {tc[0]};
  std::vector<Opt> opts = group_opts(k);
  if (!opts.empty()) return opts;
  opts = blocking_opts(k);
  add_row_vectors(k, opts);
  fit_blocks_to_gpu(k, opts);
  add_local(k, opts);
  add_swap(k, opts);
  return opts;
}

std::vector<Opt> random_opts(const LoweredKernel& k, std::mt19937& rng) {
  // where tensor cores fit, half the time one of their configurations
  if (std::vector<Opt> tc = tc_opts(k); !tc.empty() && rng() % 2) return {tc[rng() % tc.size()]};
  KernelFacts f = facts(k);
  std::vector<Opt> opts;
  // UPCAST/UNROLL by a random divisor of what is left of the axis (size / `taken`)
  auto maybe = [&](int64_t a, OptOp op, int64_t taken) {
    std::vector<int64_t> divisors;
    int64_t left = k.full_shape[a] / taken;
    for (int64_t n = 2; n <= std::min<int64_t>(left, 8); n++)
      if (left % n == 0) divisors.push_back(n);
    if (divisors.empty() || rng() % 2) return;
    opts.push_back({op, a, divisors[rng() % divisors.size()]});
  };
  // one axis, global or reduced, may be the vector axis, when a vector width divides it (and be copied too); more
  // than one where legal() allows it (row reduces beside the loop over the row)
  bool vector_used = false;
  auto maybe_vector = [&](int64_t a, OptOp op) {
    std::vector<int64_t> widths;
    for (int64_t n : {2, 4, 8, 16})
      if (k.full_shape[a] % n == 0 && n <= k.caps.max_vector) widths.push_back(n);
    int64_t width = 1;
    auto another = [&] {
      std::vector<Opt> with = opts;
      with.push_back({OptOp::VECTOR, a, widths[0]});
      return legal(k, with);
    };
    if (!widths.empty() && (!vector_used || another()) && rng() % 3 == 0) {
      width = widths[rng() % widths.size()];
      opts.push_back({OptOp::VECTOR, a, width});
      vector_used = true;
    }
    maybe(a, op, width);
  };
  for (int64_t a : f.globals) maybe_vector(a, OptOp::UPCAST);
  for (int64_t a : f.reduced) maybe_vector(a, OptOp::UNROLL);
  // grid devices: global axes may be cut into work-groups by what is left of them, within the device's limits
  for (int64_t a : f.globals) {
    if (!k.caps.grid || rng() % 2) continue;
    int64_t taken = 1;
    for (const Opt& o : opts)
      if (o.axis == a && o.op != OptOp::SWAP) taken *= o.amount;
    std::vector<int64_t> divisors;
    for (int64_t n = 2; n <= std::min<int64_t>(k.full_shape[a] / taken, 64); n++)
      if ((k.full_shape[a] / taken) % n == 0) divisors.push_back(n);
    if (divisors.empty()) continue;
    opts.push_back({OptOp::LOCAL, a, divisors[rng() % divisors.size()]});
    if (!legal(k, opts)) opts.pop_back();
  }
  // a global axis padded up to a multiple of 2..8, when the opts so far still divide it
  if (!f.globals.empty() && rng() % 4 == 0) {
    opts.push_back({OptOp::PADTO, f.globals[rng() % f.globals.size()], static_cast<int64_t>(2 + rng() % 7)});
    std::rotate(opts.begin(), opts.end() - 1, opts.end());  // before the axis' other opts
    if (!legal(k, opts)) opts.erase(opts.begin());
  }
  // on the CPU, two global loops may trade places
  if (!k.caps.grid && f.globals.size() >= 2 && rng() % 3 == 0) {
    size_t i = rng() % f.globals.size(), j = rng() % (f.globals.size() - 1);
    opts.push_back({OptOp::SWAP, f.globals[i], f.globals[j + (j >= i)]});
  }
  // and a reduce axis shared by a group's work-items, beside the opts so far (or alone where they rule it out: a
  // VECTOR, or more local memory than the device has)
  if (k.caps.grid && !f.reduced.empty() && rng() % 3 == 0) {
    int64_t a = f.reduced[rng() % f.reduced.size()];
    std::vector<int64_t> divisors;
    for (int64_t n = 2; n <= std::min<int64_t>(k.full_shape[a], 64); n++)
      if (k.full_shape[a] % n == 0) divisors.push_back(n);
    Opt group{rng() % 2 ? OptOp::GROUP : OptOp::GROUPTOP, a, divisors.empty() ? 1 : divisors[rng() % divisors.size()]};
    opts.push_back(group);
    if (!divisors.empty() && legal(k, opts)) return opts;
    opts.pop_back();
    if (!divisors.empty() && legal(k, {group})) return {group};
  }
  return opts;
}

}  // namespace tg::codegen
