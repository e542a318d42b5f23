#include "renderer/cstyle.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include "uop/symbolic.h"

namespace tg::renderer {

using uop::Ops;
using uop::UOp;

namespace {

// A float out of an unsigned type's range converted to it is undefined in C (x86 vector code gave -1 for -1.5 as
// uint16); through int64 it wraps as numpy's and PyTorch's do: -1.5 -> 65535, 300.5 -> 44 as uint8.
bool wraps_through_int64(DType from, DType to) {
  return from.is_float() && to.is_unsigned() && to.scalar().itemsize() < 8;
}

// An inlined expression nests no deeper than this in brackets: a deeper one is bound to a local and its users see
// the name. A chain of 260 multiplies inlined is 260 parentheses deep (clang stops at 256, -fbracket-depth, and
// deep nesting costs both compilers stack); ordinary kernels stay far below the bound and render as before. A
// bound expression nests at most this plus the few brackets of its own op, so a statement with its loops stays
// well under 256.
constexpr int kMaxInlineNesting = 64;

// the deepest nesting of (), [] and {} in an expression (literals hold none: "__builtin_nanf(\"\")" is balanced)
int bracket_nesting(const std::string& e) {
  int depth = 0, deepest = 0;
  for (char c : e) {
    if (c == '(' || c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if (c == ')' || c == ']' || c == '}') depth--;
  }
  return deepest;
}

// 16- and 8-bit floats: stored as their bits, computed as float32
bool computed_as_float(DType dt) { return dt.is_half() || dt.is_fp8(); }
// the unsigned integer type of such a value's stored bits; any other dtype is its own
DType bits_dtype(DType dt) { return dt.is_half() ? dtypes::uint16 : dt.is_fp8() ? dtypes::uint8 : dt; }

}  // namespace

std::string half_helpers(const std::string& f16_hw) {
  return std::string(R"C(
static inline float tg_f16_to_f32(uint16_t h) {
)C") + f16_hw + R"C(  union { uint32_t u; float f; } r;
  r.u = (uint32_t)(h & 0x7fffu) << 13;
  r.f *= 0x1p112f;
  if ((h & 0x7c00u) == 0x7c00u) r.u |= 0x7f800000u;
  r.u |= (uint32_t)(h & 0x8000u) << 16;
  return r.f;
)C" + (f16_hw.empty() ? "" : "#endif\n") + R"C(}
static inline uint16_t tg_f32_to_f16(float f) {
  union { float f; uint32_t u; } v; v.f = f;
  uint32_t x = v.u, s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xffu) return (uint16_t)(s | 0x7c00u | (m ? 0x200u : 0u));
  int32_t ne = (int32_t)e - 112;
  if (ne >= 31) return (uint16_t)(s | 0x7c00u);
  if (ne <= 0) {
    if (ne < -10) return (uint16_t)s;
    m |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - ne), hm = m >> shift, rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (hm & 1u))) hm++;
    return (uint16_t)(s | hm);
  }
  uint32_t hm = m >> 13, rem = m & 0x1fffu, r = s | ((uint32_t)ne << 10) | hm;
  if (rem > 0x1000u || (rem == 0x1000u && (hm & 1u))) r++;
  return (uint16_t)r;
}
static inline float tg_bf16_to_f32(uint16_t b) { union { uint32_t u; float f; } r; r.u = (uint32_t)b << 16; return r.f; }
static inline uint16_t tg_f32_to_bf16(float f) {
  union { float f; uint32_t u; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40u);
  return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}
)C";
}

namespace {

// 8-bit floats in any dialect: their byte <-> float32, with the format's layout as arguments (constants the compiler
// folds). kind 0: E4M3 (NaN at 0x7f and 0xff), 1: E5M2 (infinities and NaNs at the top exponent), 2: FNUZ (0x80 the
// one NaN, no -0). float32 -> fp8 rounds to nearest even and saturates at the largest finite code, as
// tg::double_to_fp8_bits does. The rounding is not inlined: a kernel of many 8-bit float ops (each result is rounded)
// took PoCL minutes to compile with it inlined at every use.
std::string fp8_helpers() {
  return R"C(
static inline float tg_fp8_to_f32(unsigned int b, int m, int bias, int kind) {
  unsigned int mag = b & 0x7fu, e = mag >> m, f = mag & ((1u << m) - 1u), top = 0x7fu >> m;
  union { unsigned int u; float f; } r;
  if ((kind == 2 && b == 0x80u) || (kind == 0 && mag == 0x7fu) || (kind == 1 && e == top && f != 0u)) { r.u = 0x7fc00000u; return r.f; }
  if (kind == 1 && e == top) r.u = 0x7f800000u;
  else if (e == 0u) { r.u = (unsigned int)(128 - bias - m) << 23; r.f *= (float)f; }
  else r.u = ((unsigned int)((int)e - bias + 127) << 23) | (f << (23 - m));
  r.u |= (b & 0x80u) << 24;
  return r.f;
}
static inline __attribute__((noinline)) unsigned char tg_f32_to_fp8(float x, int m, int bias, int kind, unsigned int max_code) {
  union { float f; unsigned int u; } v; v.f = x;
  unsigned int sign = (v.u >> 24) & 0x80u, a = v.u & 0x7fffffffu, code = 0u;
  if (a >= 0x7f800000u) {
    if (kind == 2) return (unsigned char)0x80u;
    return (unsigned char)(sign | (kind == 1 && a == 0x7f800000u ? 0x7cu : 0x7fu));
  }
  int e = (int)(a >> 23) - 127, min_e = 1 - bias;
  if (a >= 0x00800000u) {
    if (e > 17) code = max_code;
    else {
      int shift = 23 - m + (e < min_e ? min_e - e : 0);
      if (shift <= 24) {
        unsigned int sig = (a & 0x7fffffu) | 0x800000u, q = sig >> shift, rem = sig & ((1u << shift) - 1u), tie = 1u << (shift - 1);
        if (rem > tie || (rem == tie && (q & 1u))) q++;
        code = q + (e >= min_e ? (unsigned int)(e + bias - 1) << m : 0u);
      }
      if (code > max_code) code = max_code;
    }
  }
  if (code == 0u && kind == 2) return (unsigned char)0u;
  return (unsigned char)(sign | code);
}
)C";
}

}  // namespace

const CStyleLanguage& language(const std::string& dialect) {
  if (dialect == "C") return c_language();
  if (dialect == "OpenCL") return opencl_language();
  if (dialect == "CUDA") return cuda_language();
  throw InternalError("render", "no renderer for the dialect '" + dialect + "'");
}

std::string CStyleLanguage::value_type(DType dt) const {
  if (dt.count() > 1) return vector_type(computed_as_float(dt) ? dtypes::float32.vec(dt.count()) : dt);
  if (dt.is_bool()) return bool_type();
  if (computed_as_float(dt)) return "float";
  return scalar_type(dt);
}

std::string CStyleLanguage::storage_type(DType dt) const {
  if (dt.scalar() == dtypes::bool_) return scalar_type(dtypes::uint8);
  if (computed_as_float(dt.scalar())) return scalar_type(bits_dtype(dt.scalar()));
  return scalar_type(dt.scalar());
}

std::string CStyleLanguage::local_array(const std::string&, const std::string& array, int64_t) const {
  throw InternalError("render", name() + " kernels have no local memory (" + array + ")");
}
std::string CStyleLanguage::barrier() const { throw InternalError("render", name() + " kernels have no barriers"); }
std::string CStyleLanguage::wmma(const UOp&, const std::vector<std::string>&, Prelude&) const {
  throw InternalError("render", name() + " kernels have no tensor cores");
}

std::string CStyleLanguage::special(const UOp& u) const {
  throw InternalError("render", name() + " kernels have no grid index (" + u.arg().repr() + ")");
}

std::string CStyleLanguage::literal(const UOp& c) const {
  DType dt = c.dtype();
  const ConstValue& v = c.const_value();
  if (dt.is_bool()) return const_to_int(v) ? "1" : "0";
  if (dt.is_float()) {
    double d = const_to_double(v);
    if (std::isnan(d)) return nan_literal(dt);
    if (std::isinf(d)) return std::string(d < 0 ? "-" : "") + inf_literal(dt);
    char buf[64];
    std::snprintf(buf, sizeof buf, dt == dtypes::float64 ? "%.17g" : "%.9g", d);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s + (dt == dtypes::float64 ? "" : "f");
  }
  if (dt.is_unsigned()) return std::to_string(static_cast<uint64_t>(const_to_int(v))) + (dt.itemsize() == 8 ? int64_suffix(true) : "U");
  int64_t i = const_to_int(v);
  if (dt.itemsize() == 8 || i < INT32_MIN + 1 || i > INT32_MAX) {
    // INT64_MIN has no literal: write it as an expression
    if (i == INT64_MIN) return "(-9223372036854775807" + int64_suffix(false) + "-1)";
    return std::to_string(i) + int64_suffix(false);
  }
  return std::to_string(i);
}

namespace {
// the unsigned int type of a signed one's size: its math wraps where the signed type's is undefined
DType unsigned_of(DType dt) {
  static const DType of_size[] = {dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64};
  return of_size[std::countr_zero(static_cast<unsigned>(dt.itemsize()))];
}
}  // namespace

RenderedKernel render(const CStyleLanguage& lang, const std::string& name, const std::vector<UOp>& uops, const UOp* parallel) {
  std::unordered_map<const uop::UOpNode*, std::string> r;  // how each value is written
  std::unordered_map<const uop::UOpNode*, int> uses;
  for (const UOp& u : uops)
    for (const UOp& s : u.src()) uses[s.get()]++;
  // the int math of addresses and loop bounds (everything an INDEX's offset, a RANGE or a grid index reads): it
  // never overflows, and stays signed where values' wrapping math goes through unsigned (signed_overflow_wraps)
  std::unordered_set<const uop::UOpNode*> addressing;
  if (!lang.signed_overflow_wraps())
    for (auto it = uops.rbegin(); it != uops.rend(); ++it) {  // users before their sources
      bool root = it->op() == Ops::INDEX || it->op() == Ops::RANGE || it->op() == Ops::SPECIAL;
      if (!root && !addressing.count(it->get())) continue;
      for (size_t i = it->op() == Ops::INDEX ? 1 : 0; i < it->src().size(); i++) addressing.insert(it->src(i).get());
    }
  auto val = [&](const UOp& u) -> std::string {
    if (u.op() == Ops::CONST) return lang.literal(u);
    return r.at(u.get());
  };
  auto ctype = [&](DType dt) { return lang.value_type(dt); };
  std::string body;
  std::vector<Param> params;
  int depth = 1, n_alu = 0, n_val = 0, n_acc = 0, n_wmma = 0;
  Prelude prelude;
  // the lanes where a is the max of a and b: NaN wins, as in torch.maximum
  auto max_mask = [](const std::string& a, const std::string& b) { return "((" + a + " > " + b + ") | (" + a + " != " + a + "))"; };
  auto line = [&](const std::string& s) { body += std::string(2 * depth, ' ') + s + "\n"; };
  // x as a value of vector type dt: a scalar is splat
  auto splat = [&](const UOp& x, DType dt) { return x.dtype().count() > 1 ? val(x) : lang.splat(dt, val(x)); };
  // the value as stored bits, and back; a float rounded to the 16-bit format's precision (every 16-bit op rounds
  // its result, as it would in memory)
  auto fp8_args = [&](DType dt) {
    prelude.helpers.emplace("tg_fp8", fp8_helpers());
    Fp8Format f = fp8_format(dt);
    return ", " + std::to_string(f.mant_bits) + ", " + std::to_string(f.bias) + ", " + (f.fnuz ? "2" : f.has_inf ? "1" : "0");
  };
  auto to_bits = [&](DType dt, const std::string& v) {
    if (dt.is_fp8()) return "tg_f32_to_fp8(" + v + fp8_args(dt) + ", " + std::to_string(fp8_format(dt).max_code) + "u)";
    prelude.half = true;
    return std::string(dt == dtypes::float16 ? "tg_f32_to_f16(" : "tg_f32_to_bf16(") + v + ")";
  };
  auto from_bits = [&](DType dt, const std::string& v) {
    if (dt.is_fp8()) return "tg_fp8_to_f32(" + v + fp8_args(dt) + ")";
    prelude.half = true;
    return std::string(dt == dtypes::float16 ? "tg_f16_to_f32(" : "tg_bf16_to_f32(") + v + ")";
  };
  // x * (1/y) with the reciprocal used only here is rendered as a division (IEEE exact)
  auto reciprocal_operand = [&](const UOp& mul) -> int {
    if (!mul.dtype().is_float()) return -1;
    for (int i : {1, 0})
      if (mul.src(i).op() == Ops::RECIPROCAL && uses[mul.src(i).get()] == 1) return i;
    return -1;
  };
  // a sum's terms, left to right (an unrolled reduce's copies)
  auto sum_terms = [&](const UOp& red) {
    std::vector<const UOp*> terms, todo{&red.src(0)};
    while (!todo.empty()) {
      const UOp* t = todo.back();
      todo.pop_back();
      if (t->op() == Ops::ADD && uses[t->get()] == 1 && t->dtype().is_float()) todo.push_back(&t->src(1)), todo.push_back(&t->src(0));
      else terms.push_back(t);
    }
    return terms;
  };
  auto fusable = [](DType dt) { return dt.scalar() == dtypes::float32 || dt.scalar() == dtypes::float64; };
  // a float sum's accumulators: one, or partial ones (the language's accumulator_chains) that the END of its
  // outermost loop adds into the first
  int n_regs = 0;
  for (const UOp& u : uops) n_regs += u.op() == Ops::DEFINE_REG;
  std::unordered_map<const uop::UOpNode*, std::vector<std::string>> partials;  // REDUCE -> its accumulators
  // RANGE -> lines after its END: partial accumulators added into the first, a keyed max turned back into a float
  std::unordered_map<const uop::UOpNode*, std::vector<std::string>> after_loop;
  auto partial_count = [&](const UOp& red) -> size_t {
    if (red.arg().get<Ops>() != Ops::ADD || !fusable(red.dtype()) || red.src().size() < 3) return 1;
    return std::max<size_t>(1, std::min<size_t>(sum_terms(red).size(), static_cast<size_t>(lang.accumulator_chains() / n_regs)));
  };
  // A term a * b of bfloat16 values read from memory (a scalar a broadcast, a row b of 16), by their INDEXes.
  struct Bf16Term {
    const UOp *a = nullptr, *b = nullptr;
  };
  auto bf16_term = [&](const UOp& t) -> Bf16Term {
    if (t.op() != Ops::MUL || uses[t.get()] != 1) return {};
    auto read = [](const UOp& x, int lanes) -> const UOp* {  // an unconditional read of global memory, widened
      if (x.op() != Ops::CAST || x.dtype() != dtypes::float32.vec(lanes) || x.src(0).op() != Ops::LOAD) return nullptr;
      const UOp& load = x.src(0);
      if (load.dtype() != dtypes::bfloat16.vec(lanes) || load.src(0).src().size() != 2 || load.src(0).dtype().addr_space() == AddrSpace::Local)
        return nullptr;
      return &load.src(0);
    };
    for (int i : {0, 1})
      if (const UOp *a = read(t.src(i), 1), *b = read(t.src(1 - i), 16); a && b) return {a, b};
    return {};
  };
  // terms i and i + 1 as one bfloat16 pair product (CStyleLanguage::bf16_pair_dot): a matmul's consecutive steps of k,
  // whose scalars are neighbours in memory; "" where they are not, or the dialect has no such form
  auto bf16_pair = [&](const std::vector<const UOp*>& terms, size_t i, const std::string& acc) -> std::string {
    if (i + 1 >= terms.size()) return "";
    Bf16Term x = bf16_term(*terms[i]), y = bf16_term(*terms[i + 1]);
    if (!x.a || !y.a || x.a->src(0) != y.a->src(0)) return "";
    UOp step = uop::simplify(y.a->src(1) - x.a->src(1));
    if (!step.is_const() || const_to_int(step.const_value()) != 1) return "";
    return lang.bf16_pair_dot(acc, val(*x.a), val(*x.b), val(*y.b), prelude);
  };
  // a scalar float reduction over a loop whose end is a variable (no VECTOR applies to it)
  auto over_symbolic_loop = [&](const UOp& red) {
    return red.dtype().count() == 1 && fusable(red.dtype()) &&
           std::any_of(red.src().begin() + 1, red.src().end(), [](const UOp& r) { return r.op() == Ops::RANGE && !r.src(0).is_const(); });
  };
  auto symbolic_sum = [&](const UOp& red) { return red.arg().get<Ops>() == Ops::ADD && over_symbolic_loop(red); };
  std::unordered_set<const uop::UOpNode*> keyed_maxes;  // float32 maxes the language keeps as integer keys
  // acc + a*b with one rounding (an FMA) for float32/64 sums; contraction stays off elsewhere: x*y - x*y must be 0.
  // Term i goes to accumulator i % n; with one accumulator, bfloat16 terms go in pairs where they can.
  auto accumulate = [&](const UOp& red, const std::vector<std::string>& accs) {
    std::vector<const UOp*> terms = sum_terms(red);
    DType dt = red.dtype();
    for (size_t i = 0; i < terms.size(); i++) {
      const UOp* t = terms[i];
      const std::string& acc = accs[i % accs.size()];
      if (accs.size() == 1 && dt == dtypes::float32.vec(16)) {
        std::string pair = bf16_pair(terms, i, acc);
        if (!pair.empty()) {
          line(acc + " = " + pair + ";");
          i++;
          continue;
        }
      }
      if (fusable(dt) && t->op() == Ops::MUL && uses[t->get()] == 1 && reciprocal_operand(*t) < 0) {
        auto operand = [&](size_t j) { return dt.count() > 1 ? splat(t->src(j), dt) : val(t->src(j)); };
        line(acc + " = " + lang.fma(dt, operand(0), operand(1), acc, prelude) + ";");
      } else if (std::string reordered = symbolic_sum(red) ? lang.reordered_sum(ctype(dt), acc, val(*t), prelude) : ""; !reordered.empty()) {
        line(reordered);
      } else {
        line(acc + " += " + val(*t) + ";");
      }
    }
  };

  // a tensor-core multiply whose 4 parts are each summed by a REDUCE of their own adds into those accumulators
  // itself (d = a*b + c): the REDUCEs then only take its result
  std::unordered_map<const uop::UOpNode*, std::array<const uop::UOpNode*, 4>> mma_accs;  // WMMA -> REDUCE per part
  std::unordered_set<const uop::UOpNode*> mma_reduces;
  for (const UOp& u : uops)
    if (u.op() == Ops::REDUCE && u.arg().get<Ops>() == Ops::ADD && u.src(0).op() == Ops::GEP && u.src(0).src(0).op() == Ops::WMMA &&
        uses[u.src(0).get()] == 1)
      mma_accs[u.src(0).src(0).get()][static_cast<size_t>(u.src(0).arg().get<std::vector<int64_t>>()[0])] = u.get();
  std::erase_if(mma_accs, [](const auto& m) { return std::find(m.second.begin(), m.second.end(), nullptr) != m.second.end(); });
  for (const auto& [mma, reds] : mma_accs) mma_reduces.insert(reds.begin(), reds.end());

  // A float32 x 16 value that varies along its lanes only through one integer vector n of 0..15 (a quantized weight's
  // 4-bit codes), by lane-wise ops with lane-invariant operands (its block's scale and minimum), is its table of 16
  // values, the same ops over n = 0, 1, ..., 15, permuted by n (CStyleLanguage::lut16): exact, since each lane takes
  // what it would have computed. A Q4_0 weight's mask, offset, convert and scale per 16 values become one permute
  // (the table, one multiply, serves both halves of a block).
  std::unordered_map<const uop::UOpNode*, const UOp*> through;  // a lane-wise value -> the 4-bit vector it varies by
  std::unordered_set<const uop::UOpNode*> tabled;               // the largest such float32 values: their users differ
  {
    auto lanewise = [](Ops op) {
      return op == Ops::ADD || op == Ops::MUL || op == Ops::NEG || op == Ops::CAST || op == Ops::AND || op == Ops::OR ||
             op == Ops::XOR || op == Ops::SHL || op == Ops::SHR;
    };
    DType f16 = dtypes::float32.vec(16);
    for (const UOp& u : uops) {
      if (u.dtype().count() != 16 || !lanewise(u.op())) continue;
      const UOp* n = nullptr;
      bool ok = true;
      for (const UOp& s : u.src()) {
        if (s.dtype().count() == 1) continue;
        auto it = through.find(s.get());
        if (it == through.end() || (n && *n != *it->second)) ok = false;
        else n = it->second;
      }
      // (the codes are the last 4-bit value on the way: (x >> 4) & 15 permutes by x >> 4, the mask left out)
      if (u.dtype().is_int() && u.vmin() >= 0 && u.vmax() <= 15) through[u.get()] = &u;
      else if (ok && n) through[u.get()] = n;
    }
    // the vector instructions a value takes from its codes on (an exact product and the sum it feeds are one FMA)
    std::function<int(const UOp&, const UOp&)> work = [&](const UOp& x, const UOp& n) {
      if (x == n || x.dtype().count() == 1) return 0;
      int w = x.op() == Ops::ADD && std::any_of(x.src().begin(), x.src().end(), [&](const UOp& m) {
                return m.op() == Ops::MUL && uses[m.get()] == 1 && uop::exact_float32_product(m);
              }) ? 0 : 1;
      for (const UOp& y : x.src()) w += work(y, n);
      return w;
    };
    // a table where it saves three instructions or more per 16 values: the permute costs about two (Q4_0's
    // (code - 8) * scale gains; Q4_K's scale * code - min, a convert and an FMA, does not: TYPES="Q4_0 Q4_K"
    // bench/gguf.sh)
    for (const UOp& u : uops)
      for (const UOp& s : u.src()) {
        auto it = through.find(s.get()), mine = through.find(u.get());
        if (it != through.end() && s.dtype() == f16 && (mine == through.end() || *mine->second != *it->second) &&
            work(s, *it->second) >= 3)
          tabled.insert(s.get());
      }
  }
  // the table of a tabled value: its ops rendered again over n = 0..15 (the scalars as rendered)
  std::function<std::string(const UOp&, const UOp&)> table_of = [&](const UOp& x, const UOp& n) -> std::string {
    if (x == n) {
      std::vector<std::string> iota;
      for (int l = 0; l < 16; l++) iota.push_back(std::to_string(l));
      return lang.make_vector(n.dtype(), iota);
    }
    auto operand = [&](size_t i) { return x.src(i).dtype().count() == 1 ? lang.splat(x.dtype(), val(x.src(i))) : table_of(x.src(i), n); };
    if (x.op() == Ops::CAST) return lang.convert(x.dtype(), table_of(x.src(0), n));
    if (x.op() == Ops::NEG) return "(-" + operand(0) + ")";
    static const std::map<Ops, const char*> infix{{Ops::ADD, "+"}, {Ops::MUL, "*"}, {Ops::AND, "&"}, {Ops::OR, "|"},
                                                  {Ops::XOR, "^"}, {Ops::SHL, "<<"}, {Ops::SHR, ">>"}};
    return "(" + operand(0) + " " + infix.at(x.op()) + " " + operand(1) + ")";
  };

  for (const UOp& u : uops) {
    if (u.dtype().count() > 1) prelude.vectors.emplace(ctype(u.dtype()), computed_as_float(u.dtype()) ? dtypes::float32.vec(u.dtype().count()) : u.dtype().base());
    prelude.fp64 = prelude.fp64 || u.dtype().scalar() == dtypes::float64;
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL: {
        std::string p = "data" + std::to_string(u.arg().get<int64_t>());
        params.push_back({lang.storage_type(u.dtype()), p, true});
        r[u.get()] = p;
        break;
      }
      case Ops::DEFINE_VAR: {  // a variable of a symbolic size: an int64 parameter (v_ keeps it off our names)
        std::string p = "v_" + u.arg().get<uop::VarArg>().name;
        if (std::none_of(params.begin(), params.end(), [&](const Param& q) { return q.name == p; }))
          params.push_back({lang.scalar_type(dtypes::int64), p, false});
        r[u.get()] = u.dtype() == dtypes::int64 ? p : "((" + ctype(u.dtype()) + ")" + p + ")";
        break;
      }
      case Ops::DEFINE_LOCAL: {
        const std::vector<int64_t>& a = u.arg().get<std::vector<int64_t>>();  // (id, elements)
        std::string v = "temp" + std::to_string(a[0]);
        line(lang.local_array(ctype(u.dtype().scalar()), v, a[1]) + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::BARRIER: line(lang.barrier() + ";"); break;
      case Ops::WMMA: {
        std::vector<std::string> args;
        for (const UOp& s : u.src()) args.push_back(val(s));
        auto fused = mma_accs.find(u.get());  // the accumulators it adds to, or zeros
        for (size_t j = 0; j < 4; j++) args.push_back(fused != mma_accs.end() ? r.at(fused->second[j]) : "0.0f");
        std::string v = "wmma" + std::to_string(n_wmma++);
        line(ctype(u.dtype()) + " " + v + " = " + lang.wmma(u, args, prelude) + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::SPECIAL: {
        std::string v = u.arg().get<std::string>();
        line("const " + ctype(u.dtype()) + " " + v + " = " + lang.special(u) + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::RANGE: {
        std::string v = "ridx" + std::to_string(u.arg().get<int64_t>());
        bool split = parallel && *parallel == u;
        // the thread split's bounds in the counter's own type: an int counter compared with an int64 end may wrap
        // under -fwrapv, so the compiler cannot count the trips and vectorizes no such loop (./build/bin/tg_bench
        // elementwise: its add)
        std::string t = ctype(u.dtype()), cast = u.dtype().itemsize() < 8 ? "(" + t + ")" : "";
        line("for (" + t + " " + v + " = " + (split ? cast + "core_start" : "0") + "; " + v + " < " +
             (split ? cast + "core_end" : val(u.src(0))) + "; " + v + "++) {");
        depth++;
        r[u.get()] = v;
        break;
      }
      case Ops::END: {
        depth--, line("}");
        for (const std::string& l : after_loop[u.src(0).get()]) line(l);
        break;
      }
      case Ops::INDEX: {
        // base + constant as (buffer + base)[constant]: pointer arithmetic, so the compiler sign-extends the base
        // once and folds each constant into the addressing mode (int math under -fwrapv would be redone per read).
        // Only for a base and constant >= 0: buffer + base then never points outside the buffer when the read is
        // in it (C makes such a pointer undefined)
        const UOp& addr = u.src(1);
        if (addr.op() == Ops::ADD && addr.src(1).is_const() && !addr.src(0).is_const() && addr.src(0).vmin() >= 0 &&
            const_to_int(addr.src(1).const_value()) >= 0)
          r[u.get()] = "(" + val(u.src(0)) + "+" + val(addr.src(0)) + ")[" + val(addr.src(1)) + "]";
        else r[u.get()] = val(u.src(0)) + "[" + val(addr) + "]";
        break;
      }
      case Ops::LOAD: {
        const UOp& idx = u.src(0);
        std::string v = "val" + std::to_string(n_val++), e = val(idx);
        if (idx.src().size() > 3) {  // a vector with a gate per lane (vectorize): one load when all are set
          std::string all, t = ctype(u.dtype());
          std::vector<std::string> seen;
          for (size_t l = 2; l < idx.src().size(); l++) {
            std::string g = val(idx.src(l));
            if (g == "1" || std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
            seen.push_back(g);
            all += (all.empty() ? "" : " & ") + g;
          }
          if (all.empty()) all = "1";
          line(t + " " + v + " = " + lang.splat(u.dtype(), "0") + ";");
          line("if (" + all + ") " + v + " = " + lang.vector_load(u.dtype(), e) + ";");
          line("else {");
          for (size_t l = 2; l < idx.src().size(); l++)
            line("  if (" + val(idx.src(l)) + ") " + lang.element(v, static_cast<int64_t>(l - 2)) + " = " + val(idx.src(0)) +
                 "[" + val(idx.src(1)) + " + " + std::to_string(l - 2) + "];");
          line("}");
          r[u.get()] = v;
          break;
        }
        if (u.dtype().count() > 1 && u.dtype().is_half()) e = lang.half_vector_load(u.dtype(), e, prelude);
        else if (u.dtype().count() > 1) e = lang.vector_load(u.dtype(), e);  // elements from the index on
        else if (computed_as_float(u.dtype()) && idx.dtype().addr_space() != AddrSpace::Local) e = from_bits(u.dtype(), e);
        else if (u.dtype().is_bool()) e = "(" + e + " != 0)";
        DType in_registers = u.dtype().is_half() && u.dtype().count() > 1 ? dtypes::float32.vec(u.dtype().count()) : u.dtype();
        std::string zero = u.dtype().count() > 1 ? lang.splat(in_registers, "0") : "(" + ctype(u.dtype()) + ")0";
        // both branches of the register type (gcc takes the unaligned variant a vector load reads as another type)
        if (idx.src().size() > 2)
          e = "(" + val(idx.src(2)) + " ? " + (u.dtype().count() > 1 ? "(" + ctype(in_registers) + ")" : "") + e + " : " + zero + ")";
        line(ctype(u.dtype()) + " " + v + " = " + e + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::STORE: {
        DType dt = u.src(1).dtype();
        // a gated store (GROUP: the first work-item of the group) writes only where its gate holds
        std::string gate = u.src(0).src().size() > 2 ? "if (" + val(u.src(0).src(2)) + ") " : "";
        // local memory holds values as they are in registers (16-bit floats as float)
        bool bits = computed_as_float(dt) && u.src(0).dtype().addr_space() != AddrSpace::Local;
        if (dt.count() > 1 && dt.is_half()) {  // CAST(16-bit float vector, float32 vector), made for this store (vectorize)
          std::string wide = val(u.src(1).src(0)), at = val(u.src(0)), vec = lang.half_vector_store(dt, at, wide, prelude);
          if (!vec.empty()) line(gate + vec + ";");
          for (int64_t l = 0; vec.empty() && l < dt.count(); l++)
            line(gate + "(&" + at + ")[" + std::to_string(l) + "] = " + to_bits(dt.scalar(), lang.element(wide, l)) + ";");
        } else if (dt.count() > 1) line(gate + lang.vector_store(dt, val(u.src(0)), val(u.src(1))) + ";");
        else line(gate + val(u.src(0)) + " = " + (bits ? to_bits(dt, val(u.src(1))) : val(u.src(1))) + ";");
        break;
      }
      case Ops::DEFINE_REG: {
        const UOp& red = u.src(0);
        std::string acc = "acc" + std::to_string(n_acc++);
        std::string init = val(red.src().back());
        if (red.dtype().count() > 1) init = lang.splat(red.dtype(), init);  // every element
        std::vector<std::string>& accs = partials[red.get()];
        for (size_t i = 0, n = partial_count(red); i < n; i++) {
          accs.push_back(i ? acc + "_" + std::to_string(i) : acc);
          line(ctype(red.dtype()) + " " + accs.back() + " = " + init + ";");
        }
        if (accs.size() > 1) {
          std::string sum = accs[0];
          for (size_t i = 1; i < accs.size(); i++) sum += " + " + accs[i];
          after_loop[red.src(1).get()].push_back(accs[0] + " = " + sum + ";");
        }
        if (red.arg().get<Ops>() == Ops::MAX && red.dtype() == dtypes::float32 && over_symbolic_loop(red)) {
          if (CStyleLanguage::KeyedMax keyed = lang.keyed_max(acc, "", prelude); !keyed.declare.empty()) {
            line(keyed.declare);
            after_loop[red.src(1).get()].push_back(keyed.finish);
            keyed_maxes.insert(red.get());
          }
        }
        r[red.get()] = acc;
        break;
      }
      case Ops::REDUCE: {
        std::string acc = r.at(u.get()), x = val(u.src(0));
        Ops op = u.arg().get<Ops>();
        if (mma_reduces.count(u.get())) line(acc + " = " + x + ";");  // the multiply added itself to acc
        else if (op == Ops::ADD) accumulate(u, partials.at(u.get()));
        else if (op == Ops::MUL) line(acc + " *= " + x + ";");
        else if (u.dtype().count() > 1) line(acc + " = " + lang.select(u.dtype(), max_mask(x, acc), x, acc, prelude) + ";");
        else if (keyed_maxes.count(u.get())) line(lang.keyed_max(acc, x, prelude).update);
        else line(acc + " = (" + x + " > " + acc + " || " + x + " != " + x + ") ? " + x + " : " + acc + ";");  // max, nan wins
        break;
      }
      default: {
        // a 16-bit float vector is only ever stored (vectorize): its STORE converts the float32 vector itself
        if (u.op() == Ops::CAST && u.dtype().count() > 1 && u.dtype().is_half()) break;
        // ALU: an expression, inlined into its one user or named (used more than once, or nested too deep)
        std::string e;
        if (tabled.count(u.get())) {
          const UOp& n = *through.at(u.get());
          // (the permute reads the low 4 bits: n = x & 15 permutes by x)
          bool masked = n.op() == Ops::AND && n.src(1).op() == Ops::CONST && const_to_int(n.src(1).const_value()) == 15 && n.src(0).dtype() == n.dtype();
          DType idx = dtypes::int32.vec(16);
          std::string codes = val(masked ? n.src(0) : n);
          e = lang.lut16(table_of(u, n), n.dtype() == idx ? codes : lang.convert(idx, codes), prelude);
        }
        if (!e.empty()) {
          if (uses[u.get()] > 1 || bracket_nesting(e) > kMaxInlineNesting) {
            std::string v = "alu" + std::to_string(n_alu++);
            line("const " + ctype(u.dtype()) + " " + v + " = " + e + ";");
            e = v;
          }
          r[u.get()] = e;
          break;
        }
        // an integer vector op names its scalar operands as vectors of its type (OpenCL refuses `char2 + int`)
        bool int_vector = u.dtype().count() > 1 && u.dtype().is_int() && uop::GroupOp::ALU().contains(u.op()) && u.op() != Ops::CAST;
        // a scalar bool beside a mask (a vector of -1/0) is -1 or 0 itself
        bool mask_logic = u.dtype().count() > 1 && u.dtype().is_bool() && !u.src().empty() && u.src(0).dtype().is_bool();
        auto s = [&](size_t i) {
          if (mask_logic && u.src(i).dtype().count() == 1) return "(-(int)" + val(u.src(i)) + ")";
          return int_vector && u.src(i).dtype().count() == 1 ? splat(u.src(i), u.dtype()) : val(u.src(i));
        };
        // ops that write a source more than once get it as a name: inlined, a chain of them would grow exponentially
        bool repeats = u.op() == Ops::MAX || u.op() == Ops::IDIV || u.op() == Ops::MOD || (u.op() == Ops::WHERE && u.dtype().count() > 1);
        for (size_t i = 0; repeats && i < u.src().size(); i++) {
          const UOp& x = u.src(i);
          if (x.op() == Ops::CONST || x.op() == Ops::LOAD || x.op() == Ops::RANGE || x.op() == Ops::SPECIAL || uses[x.get()] > 1) continue;
          std::string v = "alu" + std::to_string(n_alu++);
          line("const " + ctype(x.dtype()) + " " + v + " = " + r.at(x.get()) + ";");
          r[x.get()] = v;
        }
        DType in = u.src().empty() ? u.dtype() : u.src(0).dtype();
        // a vector op: a scalar operand is splat; selects go through the lanes' bits
        bool vector = u.dtype().count() > 1;
        auto select = [&](const std::string& mask, size_t a, size_t b) {
          return lang.select(u.dtype(), mask, splat(u.src(a), u.dtype()), splat(u.src(b), u.dtype()), prelude);
        };
        // a*b + c as one FMA where the product a*b is exact (a dequantization's scale times its codes, minus its
        // offset): the one rounding is the same, and it saves an instruction per element
        int exact_mul = -1;
        for (int i = 0; u.op() == Ops::ADD && exact_mul < 0 && i < 2; i++)
          if (u.src(i).op() == Ops::MUL && uses[u.src(i).get()] == 1 && uop::exact_float32_product(u.src(i))) exact_mul = i;
        if (exact_mul >= 0) {
          const UOp& mul = u.src(exact_mul);
          auto operand = [&](const UOp& x) { return vector ? splat(x, u.dtype()) : val(x); };
          e = lang.fma(u.dtype(), operand(mul.src(0)), operand(mul.src(1)), operand(u.src(1 - exact_mul)), prelude);
        } else if (vector && u.op() == Ops::MAX) e = select(max_mask(s(0), s(1)), 0, 1);
        else if (vector && u.op() == Ops::WHERE)
          e = u.src(0).dtype().count() > 1 ? select(s(0), 1, 2)
                                           : "(" + s(0) + " ? " + splat(u.src(1), u.dtype()) + " : " + splat(u.src(2), u.dtype()) + ")";
        else if (vector && u.op() == Ops::CAST)
          e = wraps_through_int64(in, u.dtype()) ? lang.convert(u.dtype(), lang.convert(dtypes::int64.vec(u.dtype().count()), s(0)))
                                                  : lang.convert(u.dtype(), s(0));
        else switch (u.op()) {
          case Ops::VECTORIZE: {
            std::vector<std::string> elems;
            for (size_t i = 0; i < u.src().size(); i++) elems.push_back(s(i));
            e = lang.make_vector(u.dtype(), elems);
            break;
          }
          case Ops::GEP: {  // one element, or a vector of the listed elements
            const std::vector<int64_t>& idx = u.arg().get<std::vector<int64_t>>();
            e = idx.size() == 1 ? lang.element(s(0), idx[0]) : lang.shuffle(u.dtype(), s(0), idx);
            break;
          }
          case Ops::NEG: e = "(-" + s(0) + ")"; break;
          case Ops::RECIPROCAL: e = "(1" + std::string(in == dtypes::float64 ? ".0" : ".0f") + "/" + s(0) + ")"; break;
          case Ops::SQRT:
          case Ops::EXP2:
          case Ops::LOG2:
          case Ops::SIN: e = lang.math(u.op(), u.dtype(), s(0), prelude); break;
          case Ops::CAST:
            e = u.dtype().is_bool()                   ? "(" + s(0) + " != 0)"
                : wraps_through_int64(in, u.dtype()) ? "((" + ctype(u.dtype()) + ")(" + ctype(dtypes::int64) + ")" + s(0) + ")"
                                                      : "((" + ctype(u.dtype()) + ")" + s(0) + ")";
            break;
          case Ops::BITCAST: {
            // 16- and 8-bit floats live as float in registers: go through their bits
            std::string x = computed_as_float(in) ? to_bits(in, s(0)) : s(0);
            e = lang.bitcast(bits_dtype(in), bits_dtype(u.dtype()), x);
            if (computed_as_float(u.dtype())) e = from_bits(u.dtype(), e);
            break;
          }
          case Ops::MAX:
            // NaN wins, as in torch.maximum and the constant folder
            e = in.is_float() ? "((" + s(0) + " > " + s(1) + " || " + s(0) + " != " + s(0) + ") ? " + s(0) + " : " + s(1) + ")"
                              : "((" + s(0) + " > " + s(1) + ") ? " + s(0) + " : " + s(1) + ")";
            break;
          case Ops::MUL: {
            int r = reciprocal_operand(u);
            e = r < 0 ? "(" + s(0) + "*" + s(1) + ")" : "(" + s(1 - r) + "/" + val(u.src(r).src(0)) + ")";
            break;
          }
          case Ops::WHERE: e = "(" + s(0) + " ? " + s(1) + " : " + s(2) + ")"; break;
          case Ops::MULACC: e = "((" + s(0) + "*" + s(1) + ")+" + s(2) + ")"; break;
          case Ops::IDIV:
          case Ops::MOD: {
            const char* sym = uop::infix_symbol(u.op());
            // a divisor that may be 0 would trap (and -1 under INT_MIN for signed types): those give 0 and -x
            bool safe = u.src(1).is_const() && const_to_int(u.src(1).const_value()) > 0;
            std::string zero = "(" + s(1) + " == 0) ? (" + ctype(u.dtype()) + ")0";
            std::string neg1 = in.is_unsigned() ? ""
                               : " : (" + s(1) + " == -1) ? (" + ctype(u.dtype()) + ")" +
                                     (u.op() == Ops::IDIV ? "(0 - " + s(0) + ")" : std::string("0"));
            e = safe ? "(" + s(0) + sym + s(1) + ")" : "(" + zero + neg1 + " : (" + s(0) + sym + s(1) + "))";
            break;
          }
          case Ops::SHL:  // of a negative signed value is undefined in C: shifted as its unsigned bits
            if (u.dtype().is_int() && !u.dtype().is_unsigned() && u.dtype().count() == 1) {
              e = "((" + ctype(u.dtype()) + ")((" + ctype(unsigned_of(u.dtype())) + ")" + s(0) + "<<" + s(1) + "))";
              break;
            }
            [[fallthrough]];
          default: {
            const char* sym = uop::infix_symbol(u.op());
            if (!sym) throw InternalError("render", "no " + lang.name() + " rendering for " + std::string(uop::op_name(u.op())));
            e = "(" + s(0) + sym + s(1) + ")";
          }
        }
        // a value's signed add, multiply or negation wraps as in PyTorch (and C under -fwrapv) where the language
        // leaves overflow undefined: computed in the unsigned type of its size
        if (!lang.signed_overflow_wraps() && u.dtype().count() == 1 && u.dtype().is_int() && !u.dtype().is_unsigned() &&
            u.dtype().itemsize() >= 4 && !addressing.count(u.get()) &&
            (u.op() == Ops::ADD || u.op() == Ops::MUL || u.op() == Ops::NEG)) {
          std::string ut = ctype(unsigned_of(u.dtype()));
          e = u.op() == Ops::NEG ? "(0 - (" + ut + ")" + s(0) + ")"
                                 : "((" + ut + ")" + s(0) + (u.op() == Ops::ADD ? "+" : "*") + "(" + ut + ")" + s(1) + ")";
          e = "((" + ctype(u.dtype()) + ")" + e + ")";
        }
        // every 16- or 8-bit float result is rounded to its format, except where the op cannot change the value
        if (computed_as_float(u.dtype()) && u.op() != Ops::BITCAST && u.op() != Ops::NEG && u.op() != Ops::MAX && u.op() != Ops::WHERE)
          e = from_bits(u.dtype(), to_bits(u.dtype(), e));
        // C computes narrow ints as int and bools as int: bring the result back to the op's type
        if (u.dtype().count() == 1 && ((u.dtype().is_int() && u.dtype().itemsize() < 4) || (u.dtype().is_bool() && !uop::GroupOp::Comparison().contains(u.op()) &&
                                                                u.op() != Ops::CAST && u.op() != Ops::WHERE)))
          e = "((" + ctype(u.dtype()) + ")" + e + ")";
        // named when used more than once, or when inlining it would nest its users past kMaxInlineNesting
        if (uses[u.get()] > 1 || bracket_nesting(e) > kMaxInlineNesting) {
          std::string v = "alu" + std::to_string(n_alu++);
          line("const " + ctype(u.dtype()) + " " + v + " = " + e + ";");
          e = v;
        }
        r[u.get()] = e;
      }
    }
  }
  // a symbolic parallel loop's end is known only from vars, which such a kernel always gets
  return lang.finish(name, params, body, prelude, parallel ? (parallel->src(0).is_const() ? val(parallel->src(0)) : "0") : "");
}

}  // namespace tg::renderer
