// The VECTOR opt's lanes as one vector value (tinygrad's float4 loads on the CPU): every value that depends on the
// lane variable becomes a vector of n elements (float32 math, masks from float32 comparisons, loads of numeric
// types cast to float32, integer arithmetic and bit ops on loaded values). A load whose address moves by one
// element per lane is one vector load (a padded one lane by lane where some lane is outside); one that moves by two
// under no gate of its own (a stride-2 pool's window column) is two vector loads of its span and their even
// elements; any other lane-dependent load is gathered from n scalar loads; an invariant value is used as a scalar
// (the C vector extension splats it). Stores are one vector store when contiguous, else n scalar stores, of which
// those of the same lane of several copies to consecutive addresses are joined into vector stores again. Integer
// math on the lane itself only ever feeds addresses and gates, which are rewritten per lane.
#include <map>
#include <unordered_map>

#include "codegen/lower.h"
#include "uop/symbolic.h"

namespace tg::codegen {

using uop::Ops;
using uop::UOp;

namespace {

// bools and 16- and 8-bit floats are stored in other forms than they compute in: no vector loads or casts of them
// (16-bit floats have vector loads of their own, below)
bool stored_differently(DType dt) { return dt.is_bool() || dt.is_half() || dt.is_fp8(); }

// a float32 value rounded to a 16-bit float
bool narrowed_to_half(const UOp& u) {
  return u.op() == Ops::CAST && u.dtype().is_half() && u.src(0).dtype() == dtypes::float32;
}

// the value of `x` at lane l, simplified
UOp at_lane(const UOp& x, const UOp& lane, int64_t l) { return uop::simplify(x.substitute({{lane, UOp::const_(lane.dtype(), l)}})); }

// whether the address moves by exactly `step` elements per lane
bool moves_by(const UOp& addr, const UOp& lane, int64_t n, int64_t step) {
  UOp first = at_lane(addr, lane, 0);
  for (int64_t l = 1; l < n; l++) {
    UOp d = uop::simplify(at_lane(addr, lane, l) - first);
    if (!d.is_const() || const_to_int(d.const_value()) != l * step) return false;
  }
  return true;
}
bool contiguous(const UOp& addr, const UOp& lane, int64_t n) { return moves_by(addr, lane, n, 1); }

// A scalar store of a scatter: buffer, address, value.
struct Scattered {
  UOp buffer, addr, value;
  DType index;  // the INDEX's dtype
};

// an address as (the rest, constant term)
std::pair<UOp, int64_t> split_constant(const UOp& addr) {
  if (addr.op() == Ops::ADD)
    for (int i : {1, 0})
      if (addr.src(i).is_const()) return {addr.src(1 - i), const_to_int(addr.src(i).const_value())};
  if (addr.is_const()) return {UOp(), const_to_int(addr.const_value())};
  return {addr, 0};
}

// Scalar stores of the same lane of several vectors to consecutive addresses (a vector of output channels over
// upcast columns, stored channel-major: each channel's columns are consecutive) joined into one vector store each,
// of 16, 8 or 4 elements: a transpose of the register block instead of a lane extract and a scalar store per
// element. The rest stay scalar stores.
void join_scattered(const std::vector<Scattered>& scattered, std::vector<UOp>& stores) {
  std::map<std::pair<const uop::UOpNode*, const uop::UOpNode*>, std::map<int64_t, size_t>> runs;
  for (size_t i = 0; i < scattered.size(); i++) {
    auto [base, c] = split_constant(scattered[i].addr);
    runs[{scattered[i].buffer.get(), base.get()}].emplace(c, i);
  }
  std::vector<bool> done(scattered.size());
  for (auto& run : runs) {
    std::map<int64_t, size_t>& at = run.second;  // (not a structured binding: clang 14 cannot capture one)
    for (auto it = at.begin(); it != at.end();) {
      int64_t start = it->first, w = 0;
      const UOp& lane0 = scattered[it->second].value;
      // the same lane of n vectors (a column of the register block): a transpose that needs no other shuffles
      auto joins = [&](int64_t k) {
        auto next = at.find(start + k);
        if (next == at.end()) return false;
        const UOp& v = scattered[next->second].value;
        return v.op() == Ops::GEP && lane0.op() == Ops::GEP && v.arg() == lane0.arg();
      };
      for (int64_t n : {16, 8, 4}) {
        bool whole = true;
        for (int64_t k = 1; k < n && whole; k++) whole = joins(k);
        if (whole) {
          w = n;
          break;
        }
      }
      if (w == 0) {
        ++it;
        continue;
      }
      std::vector<UOp> values;
      for (int64_t k = 0; k < w; k++) values.push_back(scattered[at.at(start + k)].value), done[at.at(start + k)] = true;
      const Scattered& first = scattered[it->second];
      UOp vec = UOp::make(Ops::VECTORIZE, lane0.dtype().vec(static_cast<int>(w)), values);
      stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, first.index, {first.buffer, first.addr}), vec}));
      it = at.lower_bound(start + w);
    }
  }
  for (size_t i = 0; i < scattered.size(); i++)
    if (!done[i]) {
      const Scattered& s = scattered[i];
      stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, s.index, {s.buffer, s.addr}), s.value}));
    }
}

}  // namespace

UOp vectorize(const UOp& sink, const UOp& lane, int64_t n, bool reduce_lane) {
  std::unordered_map<const uop::UOpNode*, bool> dep;  // depends on the lane
  std::unordered_map<const uop::UOpNode*, UOp> out;   // the rewritten value of every lane-dependent float value
  // a source as the rewritten graph uses it; null for lane-dependent integer math (addresses only)
  auto get = [&](const UOp& u) {
    auto it = out.find(u.get());
    return !dep[u.get()] ? u : it != out.end() ? it->second : UOp();
  };
  std::vector<UOp> stores;
  std::vector<Scattered> scattered;  // the scalar stores of scatters, joined into vectors at the end
  for (const UOp& u : sink.toposort()) {
    bool d = u == lane;
    for (const UOp& s : u.src()) d = d || dep[s.get()];
    dep[u.get()] = d;
    if (!d && u.op() != Ops::STORE) continue;
    switch (u.op()) {
      case Ops::SINK: break;
      case Ops::DEFINE_VAR:  // the lane itself: only addresses and gates may use it, and those are rewritten per lane
      case Ops::INDEX:
        break;
      case Ops::LOAD: {
        const UOp& idx = u.src(0);
        DType et = u.dtype();
        const DType vec = et.vec(static_cast<int>(n));
        bool gated = idx.src().size() > 2;
        // 16-bit floats: one vector load of their bits, widened to float32 (a half weight's row), where the
        // address is contiguous and no lane has a gate of its own; else no vector form
        if (et.is_half()) {
          if (!contiguous(idx.src(1), lane, n) || (gated && dep[idx.src(2).get()])) return {};
          std::vector<UOp> isrc{idx.src(0), at_lane(idx.src(1), lane, 0)};
          if (gated) isrc.push_back(idx.src(2));
          out[u.get()] = UOp::make(Ops::LOAD, vec, {UOp::make(Ops::INDEX, idx.dtype(), isrc)});
          break;
        }
        if (stored_differently(et)) return {};
        if (contiguous(idx.src(1), lane, n)) {
          std::vector<UOp> isrc{idx.src(0), at_lane(idx.src(1), lane, 0)};
          // a padded read along the lanes keeps a gate per lane (INDEX(buf, addr, gate_0 ... gate_n-1)): the
          // renderer loads the vector when every lane is inside, else lane by lane
          if (gated && dep[idx.src(2).get()])
            for (int64_t l = 0; l < n; l++) isrc.push_back(at_lane(idx.src(2), lane, l));
          else if (gated) isrc.push_back(idx.src(2));
          out[u.get()] = UOp::make(Ops::LOAD, vec, {UOp::make(Ops::INDEX, idx.dtype(), isrc)});
        } else if (moves_by(idx.src(1), lane, n, 2)) {
          // two elements per lane (a stride-2 pool's or conv's window column): the span base .. base + 2n - 2 as
          // two vector loads that end at the last lane's element (none past it), and their even elements. Under a
          // gate per lane (a padded vector axis: 27 pooled columns as 7 vectors of 4), span element j is read under
          // its lane's gate, an odd one (between two lanes, unused) under both neighbours'
          UOp first = at_lane(idx.src(1), lane, 0);
          bool lane_gates = gated && dep[idx.src(2).get()];
          auto part = [&](int64_t offset) {
            std::vector<UOp> isrc{idx.src(0), uop::simplify(first + UOp::const_(first.dtype(), offset))};
            bool open = true;  // every element's gate holds: no gate at all
            for (int64_t e = 0; lane_gates && e < n; e++) {
              int64_t j = offset + e;
              UOp g = at_lane(idx.src(2), lane, j / 2);
              isrc.push_back(j % 2 ? uop::simplify(g & at_lane(idx.src(2), lane, j / 2 + 1)) : g);
              open = open && isrc.back().is_const() && const_to_int(isrc.back().const_value());
            }
            if (lane_gates && open) isrc.resize(2);
            else if (gated && !lane_gates) isrc.push_back(idx.src(2));
            return UOp::make(Ops::LOAD, vec, {UOp::make(Ops::INDEX, idx.dtype(), isrc)});
          };
          UOp lo = part(0), hi = part(n - 1);
          std::vector<UOp> lanes;
          for (int64_t l = 0; l < n; l++) {
            bool low = 2 * l <= n - 1;
            lanes.push_back(UOp::make(Ops::GEP, et, {low ? lo : hi}, uop::Arg(std::vector<int64_t>{low ? 2 * l : 2 * l - (n - 1)})));
          }
          out[u.get()] = UOp::make(Ops::VECTORIZE, vec, lanes);
        } else {  // a gather
          std::vector<UOp> loads;
          for (int64_t l = 0; l < n; l++) loads.push_back(UOp::make(Ops::LOAD, et, {at_lane(idx, lane, l)}));
          out[u.get()] = UOp::make(Ops::VECTORIZE, vec, loads);
        }
        break;
      }
      case Ops::STORE: {
        const UOp& idx = u.src(0);
        UOp value = get(u.src(1));
        // a float32 vector stored as 16-bit floats (a half matmul's result): one vector store of the rounded bits
        // where the address is contiguous (the renderer converts the vector, or lane by lane where its language
        // cannot: CStyleLanguage::half_vector_store), else rounded and stored lane by lane. That vector CAST is
        // made here, for this STORE only: nothing else reads a 16-bit float vector
        if (!value && narrowed_to_half(u.src(1)) && !reduce_lane) {
          UOp wide = get(u.src(1).src(0));
          if (!wide) return {};
          bool lane_gate = idx.src().size() > 2 && dep[idx.src(2).get()];
          if (wide.dtype().count() > 1 && dep[idx.get()] && !lane_gate && contiguous(idx.src(1), lane, n)) {
            std::vector<UOp> isrc{idx.src(0), at_lane(idx.src(1), lane, 0)};
            if (idx.src().size() > 2) isrc.push_back(idx.src(2));
            UOp bits = UOp::make(Ops::CAST, u.src(1).dtype().vec(static_cast<int>(n)), {wide});
            stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, idx.dtype(), isrc), bits}));
            break;
          }
          for (int64_t l = 0; l < n; l++) {
            UOp v = wide.dtype().count() > 1 ? UOp::make(Ops::GEP, dtypes::float32, {wide}, uop::Arg(std::vector<int64_t>{l})) : wide;
            stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {at_lane(idx, lane, l), u.src(1).with_src({v})}));
          }
          break;
        }
        if (!value || (reduce_lane && dep[idx.get()])) return {};
        bool vector_value = value.dtype().count() > 1;
        if (reduce_lane && vector_value) return {};  // a reduce lane must end in its REDUCE
        // one vector store when contiguous, also under a gate that is the same for every lane (PADTO's)
        bool lane_gate = idx.src().size() > 2 && dep[idx.src(2).get()];
        if (vector_value && dep[idx.get()] && !lane_gate && contiguous(idx.src(1), lane, n)) {
          std::vector<UOp> isrc{idx.src(0), at_lane(idx.src(1), lane, 0)};
          if (idx.src().size() > 2) isrc.push_back(idx.src(2));
          stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, idx.dtype(), isrc), value}));
        } else if (vector_value || dep[idx.get()]) {  // a scatter: one scalar store per lane
          for (int64_t l = 0; l < n; l++) {
            UOp v = vector_value ? UOp::make(Ops::GEP, value.dtype().scalar(), {value}, uop::Arg(std::vector<int64_t>{l})) : value;
            UOp at = at_lane(idx, lane, l);
            // joined into vector stores at the end when the value is what the buffer holds (no conversion; not a
            // 16-bit float, which a vector holds as float32: a bfloat16 transposing copy's lanes stay scalar stores)
            if (at.src().size() == 2 && v.dtype() == at.src(0).dtype().base() && !v.dtype().is_half())
              scattered.push_back({at.src(0), at.src(1), v, at.dtype()});
            else stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {at, v}));
          }
        } else {
          stores.push_back(u.with_src({idx, value}));
        }
        break;
      }
      case Ops::REDUCE: {
        Ops op = u.arg().get<Ops>();
        if (u.dtype() != dtypes::float32) return {};
        std::vector<UOp> src;
        bool over_lane = false;  // the lowering lists the lane among the ranges of a reduction over the vector axis
        for (const UOp& s : u.src())
          if (s == lane) over_lane = true;
          else src.push_back(s);
        src[0] = get(src[0]);
        if (!src[0]) return {};
        if (src[0].dtype().count() == 1) {
          if (!over_lane) {  // over a lane-dependent scalar (after a reduce lane's sum)
            out[u.get()] = u.with_src(src);
            break;
          }
          // the same value in every lane (it does not vary along them): each lane still counts
          src[0] = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(static_cast<int>(n)), std::vector<UOp>(static_cast<size_t>(n), src[0]));
        }
        UOp acc = UOp::make(Ops::REDUCE, dtypes::float32.vec(static_cast<int>(n)), src, u.arg());
        out[u.get()] = acc;
        // the vector accumulator combined across its lanes: halves combined until one element is left
        for (int64_t w = n / 2; over_lane && w >= 1; w /= 2) {
          std::vector<int64_t> lo, hi;
          for (int64_t l = 0; l < w; l++) lo.push_back(l), hi.push_back(w + l);
          DType half = w > 1 ? dtypes::float32.vec(static_cast<int>(w)) : dtypes::float32;
          acc = UOp::make(Ops::GEP, half, {acc}, uop::Arg(lo)).alu(op, {UOp::make(Ops::GEP, half, {acc}, uop::Arg(hi))});
          out[u.get()] = acc;
        }
        break;
      }
      case Ops::BITCAST:
      case Ops::AND:
      case Ops::OR:
      case Ops::XOR:
      case Ops::SHL:
      case Ops::SHR:
      case Ops::ADD:
      case Ops::MUL:
      case Ops::NEG:
      case Ops::RECIPROCAL:
      case Ops::EXP2:
      case Ops::LOG2:
      case Ops::SQRT:
      case Ops::SIN:
      case Ops::MAX:
      case Ops::WHERE:
      case Ops::CMPLT:
      case Ops::CMPNE:
      case Ops::CAST: {
        // float32 math (exp2 and log2 by the renderer's polynomials, sqrt and sin by libm per lane), comparisons
        // of float32 (a mask vector) and casts to float32 have vector forms
        bool compare = u.op() == Ops::CMPLT || u.op() == Ops::CMPNE;
        DType operand = u.src().back().dtype();
        // integer math on loaded values (a quantized weight's nibbles: a shift, a mask, an offset, then a cast to
        // float32) has vector forms too; integer math on the lane itself is index math, left to the per-lane
        // addresses (a source without a vector form says which it is)
        bool int_math = u.op() == Ops::ADD || u.op() == Ops::MUL || u.op() == Ops::NEG || u.op() == Ops::AND ||
                        u.op() == Ops::OR || u.op() == Ops::XOR || u.op() == Ops::SHL || u.op() == Ops::SHR ||
                        u.op() == Ops::CAST || u.op() == Ops::BITCAST;
        if (u.op() == Ops::BITCAST && !(u.dtype().is_int() && operand.is_int() && u.dtype().itemsize() == operand.itemsize())) {
          if (u.dtype().is_float()) return {};  // to a float (a block's f16 scale): lane by lane
          break;
        }
        // logic on masks (relu's x < 0 | !(x != 0)): and/or/xor, and != between bools (xor); a scalar bool operand
        // is rendered as a mask of its own
        bool logic = u.op() == Ops::AND || u.op() == Ops::OR || u.op() == Ops::XOR || (compare && operand.is_bool());
        if (logic && u.dtype().is_bool()) {
          std::vector<UOp> src;
          bool vector = false;
          for (const UOp& s : u.src()) {
            if (!src.emplace_back(get(s))) break;  // a gate on the lane itself: rewritten per lane
            vector = vector || src.back().dtype().count() > 1;
          }
          // over scalars (the masks of a reduce lane's sum: silu's x > 0 after the lanes are combined) it stays one
          if (src.back() && src.size() == u.src().size())
            out[u.get()] = vector ? UOp::make(u.op(), u.dtype().vec(static_cast<int>(n)), src, u.arg()) : u.with_src(src);
          break;
        }
        if (int_math && u.dtype().is_int()) {
          if (u.op() == Ops::CAST && (stored_differently(operand) || !(operand.is_int() || operand.is_float()))) break;
          std::vector<UOp> src;
          bool vector = false;
          for (const UOp& s : u.src()) {
            UOp g = get(s);
            if (!g) break;
            vector = vector || g.dtype().count() > 1;
            src.push_back(g);
          }
          if (src.size() == u.src().size() && vector) out[u.get()] = UOp::make(u.op(), u.dtype().vec(static_cast<int>(n)), src, u.arg());
          break;
        }
        // anything else is index math, rewritten per lane where an address or gate uses it (a float value or a
        // store that uses it finds no vector form of it and gives up)
        if (compare ? operand != dtypes::float32 : !u.dtype().is_float()) break;
        if (narrowed_to_half(u)) break;  // no vector form; a STORE of it writes lane by lane, anything else gives up
        if (!compare && u.dtype() != dtypes::float32) return {};
        // a cast of a 16-bit float vector (a float32 vector in registers) is exact; a mask is not a number
        if (u.op() == Ops::CAST && operand.is_bool()) return {};
        std::vector<UOp> src;
        bool vector = false;
        for (const UOp& s : u.src()) {
          // a where's condition from index math on the lane (a padded pool's window inside the image) is the mask
          // of its value at every lane
          if (u.op() == Ops::WHERE && s == u.src(0) && !get(s) && s.dtype() == dtypes::bool_) {
            std::vector<UOp> lanes;
            for (int64_t l = 0; l < n; l++) lanes.push_back(at_lane(s, lane, l));
            src.push_back(UOp::make(Ops::VECTORIZE, dtypes::bool_.vec(static_cast<int>(n)), lanes));
          } else if (!src.emplace_back(get(s))) {
            return {};
          }
          vector = vector || src.back().dtype().count() > 1;
        }
        out[u.get()] = vector ? UOp::make(u.op(), u.dtype().vec(static_cast<int>(n)), src, u.arg()) : u.with_src(src);
        break;
      }
      default:  // no vector form: the caller copies the lanes instead (index math is rewritten per lane)
        if (u.dtype().is_float()) return {};
    }
  }
  join_scattered(scattered, stores);
  return UOp::sink(stores);
}

}  // namespace tg::codegen
