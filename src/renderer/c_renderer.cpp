#include "renderer/c_renderer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace tg::renderer {

using uop::Ops;
using uop::UOp;

namespace {

bool is_half(DType dt) { return dt == dtypes::float16 || dt == dtypes::bfloat16; }

// element type of a vector: a mask (bool vector, from comparing float32 vectors) holds int32 elements, -1 or 0
std::string vector_elem(DType dt) {
  std::string c = dt.is_bool() ? "int" : dt.scalar().c_type();
  for (char& ch : c)
    if (ch == ' ') ch = '_';
  return c;
}

// C type of a value in registers: bool as _Bool, 16-bit floats computed as float
std::string ctype(DType dt) {
  if (dt.count() > 1) return "tg_" + vector_elem(dt) + std::to_string(dt.count());  // a GNU C vector (vector_types)
  if (dt.is_bool()) return "_Bool";
  if (is_half(dt)) return "float";
  return dt.scalar().c_type();
}

// C type of an element in memory: bool as one byte, 16-bit floats as their bits
std::string storage_ctype(DType dt) {
  if (dt.scalar() == dtypes::bool_) return "unsigned char";
  if (is_half(dt.scalar())) return "uint16_t";
  return dt.scalar().c_type();
}

std::string float_suffix(DType dt) { return dt == dtypes::float64 ? "" : "f"; }

// Conversions between float and the 16-bit formats, round to nearest even; emitted when a kernel uses them.
const char* kHalfHelpers = R"C(
static inline float tg_f16_to_f32(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  union { uint32_t u; float f; } r;
  if (e == 0) { r.f = (float)m * 5.9604644775390625e-8f; r.u |= s; return r.f; }
  bits = e == 31 ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
  r.u = bits;
  return r.f;
}
static inline uint16_t tg_f32_to_f16(float f) {
  union { float f; uint32_t u; } v; v.f = f;
  uint32_t x = v.u, s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xffu) return (uint16_t)(s | 0x7c00u | (m ? 0x200u : 0u));
  int32_t ne = (int32_t)e - 112;
  if (ne >= 31) return (uint16_t)(s | 0x7c00u);
  if (ne <= 0) {
    if (ne < -10) return (uint16_t)s;
    m |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - ne), hm = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (hm & 1u))) hm++;
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

// acc + a*b rounded once (an FMA instruction): clang contracts this body only; gcc ignores the pragma
std::string fma_helper(const std::string& name, const std::string& t) {
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " a, " + t + " b, " + t +
         " c) {\n#pragma clang fp contract(fast)\n  return a * b + c;\n}\n";
}

// per lane a where mask (an int vector of -1/0) is set, else b, in a helper of float vector type t, int vector type i
std::string bits_select(const std::string& t, const std::string& i, const std::string& mask, const std::string& a,
                        const std::string& b) {
  return "(" + t + ")(((" + i + ")(" + a + ") & (" + mask + ")) | ((" + i + ")(" + b + ") & ~(" + mask + ")))";
}

// exp2 of a float32 vector in vector ops (libm has no vector exp2 the compilers call): x = r + f with r an integer
// (rounded by adding 1.5 * 2^23) and |f| <= 1/2; 2^f by its Taylor polynomial of degree 7 (error 5e-9 relative);
// 2^r as two exponent fields, so results in the subnormal range come out right. x is clamped to [-150, 128]
// first (0 and inf beyond; NaN passes through the compares unchanged and makes the polynomial NaN).
std::string exp2_helper(const std::string& name, const std::string& t, const std::string& i) {
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " x) {\n"
         "  const " + t + " lo = (" + t + "){} - 150.0f, hi = (" + t + "){} + 128.0f;\n"
         "  x = " + bits_select(t, i, "x < lo", "lo", "x") + ";\n"
         "  x = " + bits_select(t, i, "x > hi", "hi", "x") + ";\n"
         "  " + t + " r = (x + 12582912.0f) - 12582912.0f, f = x - r;\n"
         "  " + t + " p = f * 1.52527338e-05f + 1.54035304e-04f;\n"
         "  p = p * f + 1.33335581e-03f;\n  p = p * f + 9.61812911e-03f;\n  p = p * f + 5.55041087e-02f;\n"
         "  p = p * f + 2.40226507e-01f;\n  p = p * f + 6.93147181e-01f;\n  p = p * f + 1.0f;\n"
         "  " + i + " e = __builtin_convertvector(r, " + i + "), a = e >> 1, b = e - a;\n"
         "  return (p * (" + t + ")((a + 127) << 23)) * (" + t + ")((b + 127) << 23);\n}\n";
}

// log2 of a float32 vector in vector ops: x = m * 2^e with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23
// first), log2(m) = 2 atanh(t) / ln 2 with t = (m - 1) / (m + 1), |t| <= 0.172, by its odd series to t^11 (the
// coefficients times 2 / ln 2; truncation error 4e-10 relative); 0 gives -inf, negatives and NaN NaN, inf inf.
std::string log2_helper(const std::string& name, const std::string& t, const std::string& i) {
  auto select = [&](const std::string& mask, const std::string& a, const std::string& b) { return bits_select(t, i, mask, a, b); };
  std::string z = "(" + t + "){}";
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " x) {\n"
         "  " + i + " sub = x < " + z + " + 1.17549435e-38f;\n"
         "  " + i + " bits = (" + i + ")" + select("sub", "x * 8388608.0f", "x") + ";\n"
         "  " + i + " e = ((bits >> 23) & 255) - 127 - (sub & 23);\n"
         "  " + t + " m = (" + t + ")((bits & 8388607) | 1065353216);\n"
         "  " + i + " big = m > " + z + " + 1.41421356f;\n"
         "  m = " + select("big", "m * 0.5f", "m") + ";\n"
         "  e = e - big;\n"
         "  " + t + " u = (m - 1.0f) / (m + 1.0f), u2 = u * u;\n"
         "  " + t + " p = u2 * 0.262308189f + 0.320598898f;\n"
         "  p = p * u2 + 0.412198583f;\n  p = p * u2 + 0.577078016f;\n  p = p * u2 + 0.961796694f;\n"
         "  p = p * u2 + 2.88539008f;\n"
         "  " + t + " r = __builtin_convertvector(e, " + t + ") + u * p;\n"
         "  r = " + select("x == " + z, z + " - __builtin_inff()", "r") + ";\n"
         "  r = " + select("(x < " + z + ") | (x != x)", z + " + __builtin_nanf(\"\")", "r") + ";\n"
         "  return " + select("x == " + z + " + __builtin_inff()", "x", "r") + ";\n}\n";
}

// a libm function per lane (sqrt, sin: no vector form the compilers emit for GNU vectors everywhere); the values
// are libm's, as in scalar code, and the rest of the kernel stays vector code
std::string per_lane_helper(const std::string& name, const std::string& t, int lanes, const std::string& fn) {
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " x) {\n  " + t + " r;\n" +
         "  for (int l = 0; l < " + std::to_string(lanes) + "; l++) r[l] = " + fn + "(x[l]);\n  return r;\n}\n";
}

// GNU C vector types (gcc and clang), one per width a kernel uses; the _u variant reads and writes unaligned memory
// that aliases its elements
std::string vector_types(const std::map<std::string, DType>& used) {
  std::string s;
  for (const auto& [name, dt] : used) {
    std::string t = ctype(dt), elem = dt.is_bool() ? "int" : dt.scalar().c_type();
    std::string bytes = std::to_string(dt.count() * (dt.is_bool() ? 4 : dt.scalar().itemsize()));
    s += "typedef " + elem + " " + t + " __attribute__((vector_size(" + bytes + ")));\n";
    s += "typedef " + elem + " " + t + "_u __attribute__((vector_size(" + bytes + "), aligned(" +
         std::to_string(dt.is_bool() ? 4 : dt.scalar().itemsize()) + "), may_alias));\n";
  }
  return s;
}

// the value as stored bits, and back
std::string to_bits(DType dt, const std::string& v) { return std::string(dt == dtypes::float16 ? "tg_f32_to_f16(" : "tg_f32_to_bf16(") + v + ")"; }
std::string from_bits(DType dt, const std::string& v) { return std::string(dt == dtypes::float16 ? "tg_f16_to_f32(" : "tg_bf16_to_f32(") + v + ")"; }
// a float rounded to the 16-bit format's precision: every 16-bit op rounds its result, as it would in memory
std::string round_to(DType dt, const std::string& v) { return from_bits(dt, to_bits(dt, v)); }

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

}  // namespace

std::string c_literal(const UOp& c) {
  DType dt = c.dtype();
  const ConstValue& v = c.const_value();
  if (dt.is_bool()) return const_to_int(v) ? "1" : "0";
  if (dt.is_float()) {
    double d = const_to_double(v);
    std::string sfx = float_suffix(dt);
    if (std::isnan(d)) return "__builtin_nan" + sfx + "(\"\")";
    if (std::isinf(d)) return std::string(d < 0 ? "-" : "") + "__builtin_inf" + sfx + "()";
    char buf[64];
    std::snprintf(buf, sizeof buf, dt == dtypes::float64 ? "%.17g" : "%.9g", d);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s + sfx;
  }
  if (dt.is_unsigned()) return std::to_string(static_cast<uint64_t>(const_to_int(v))) + (dt.itemsize() == 8 ? "ULL" : "U");
  int64_t i = const_to_int(v);
  if (dt.itemsize() == 8 || i < INT32_MIN + 1 || i > INT32_MAX) {
    // INT64_MIN has no literal: write it as an expression
    if (i == INT64_MIN) return "(-9223372036854775807LL-1)";
    return std::to_string(i) + "LL";
  }
  return std::to_string(i);
}

RenderedKernel render_c(const std::string& name, const std::vector<UOp>& uops, const UOp* parallel) {
  std::unordered_map<const uop::UOpNode*, std::string> r;  // how each value is written
  std::unordered_map<const uop::UOpNode*, int> uses;
  for (const UOp& u : uops)
    for (const UOp& s : u.src()) uses[s.get()]++;
  auto val = [&](const UOp& u) -> std::string {
    if (u.op() == Ops::CONST) return c_literal(u);
    return r.at(u.get());
  };
  std::string body, params, unpack;
  int depth = 1, n_alu = 0, n_val = 0, n_acc = 0;
  bool uses_half = false;
  std::map<std::string, DType> vectors;  // vector types the kernel uses, by name
  // per lane a where mask is set, else b: through the lanes' bits (C has no vector ?: )
  auto vector_select = [&](DType dt, const std::string& mask, const std::string& a, const std::string& b) {
    std::string bits = "tg_int" + std::to_string(dt.count());
    vectors.emplace(bits, dtypes::int32.vec(dt.count()));
    return "((" + ctype(dt) + ")(((" + bits + ")" + a + " & " + mask + ") | ((" + bits + ")" + b + " & ~" + mask + ")))";
  };
  // the lanes where a is the max of a and b: NaN wins, as in torch.maximum
  auto max_mask = [](const std::string& a, const std::string& b) { return "((" + a + " > " + b + ") | (" + a + " != " + a + "))"; };
  auto line = [&](const std::string& s) { body += std::string(2 * depth, ' ') + s + "\n"; };
  // x as a value of vector type dt: a scalar is splat (x - 0 keeps -0 and NaN)
  auto splat = [&](const UOp& x, DType dt) {
    return x.dtype().count() > 1 ? val(x) : "(" + val(x) + " - (" + ctype(dt) + "){})";
  };
  // x * (1/y) with the reciprocal used only here is rendered as a division (IEEE exact)
  auto reciprocal_operand = [&](const UOp& mul) -> int {
    if (!mul.dtype().is_float()) return -1;
    for (int i : {1, 0})
      if (mul.src(i).op() == Ops::RECIPROCAL && uses[mul.src(i).get()] == 1) return i;
    return -1;
  };
  // acc + a*b with one rounding, an FMA instruction, for float32/64 sums: clang contracts the helper's body only
  // (contraction stays off elsewhere: x*y - x*y must be 0); gcc ignores the pragma and rounds twice
  std::map<std::string, std::string> helpers;  // functions the kernel calls, by name: their definitions
  auto accumulate = [&](const UOp& red, const std::string& acc) {
    std::vector<const UOp*> terms, todo{&red.src(0)};  // the sum's terms, left to right
    while (!todo.empty()) {
      const UOp* t = todo.back();
      todo.pop_back();
      if (t->op() == Ops::ADD && uses[t->get()] == 1 && t->dtype().is_float()) todo.push_back(&t->src(1)), todo.push_back(&t->src(0));
      else terms.push_back(t);
    }
    DType dt = red.dtype();
    bool fusable = dt.scalar() == dtypes::float32 || dt.scalar() == dtypes::float64;
    for (const UOp* t : terms) {
      if (fusable && t->op() == Ops::MUL && uses[t->get()] == 1 && reciprocal_operand(*t) < 0) {
        std::string f = "tg_fma_" + vector_elem(dt) + (dt.count() > 1 ? std::to_string(dt.count()) : "");
        helpers.emplace(f, fma_helper(f, ctype(dt)));
        auto operand = [&](size_t i) { return dt.count() > 1 ? splat(t->src(i), dt) : val(t->src(i)); };
        line(acc + " = " + f + "(" + operand(0) + ", " + operand(1) + ", " + acc + ");");
      } else {
        line(acc + " += " + val(*t) + ";");
      }
    }
  };

  for (const UOp& u : uops) {
    if (u.dtype().count() > 1) vectors.emplace(ctype(u.dtype()), u.dtype().base());
    switch (u.op()) {
      case Ops::DEFINE_GLOBAL: {
        int64_t i = u.arg().get<int64_t>();
        std::string t = storage_ctype(u.dtype());
        std::string p = "data" + std::to_string(i);
        params += std::string(params.empty() ? "" : ", ") + t + "* restrict " + p;
        unpack += std::string(unpack.empty() ? "" : ", ") + "(" + t + "*)bufs[" + std::to_string(i) + "]";
        r[u.get()] = p;
        break;
      }
      case Ops::RANGE: {
        std::string v = "ridx" + std::to_string(u.arg().get<int64_t>());
        bool split = parallel && *parallel == u;
        line("for (" + ctype(u.dtype()) + " " + v + " = " + (split ? "core_start" : "0") + "; " + v + " < " +
             (split ? "core_end" : val(u.src(0))) + "; " + v + "++) {");
        depth++;
        r[u.get()] = v;
        break;
      }
      case Ops::END: depth--, line("}"); break;
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
          line(t + " " + v + " = (" + t + "){};");
          line("if (" + all + ") " + v + " = *(" + t + "_u*)&" + e + ";");
          line("else {");
          for (size_t l = 2; l < idx.src().size(); l++)
            line("  if (" + val(idx.src(l)) + ") " + v + "[" + std::to_string(l - 2) + "] = " + val(idx.src(0)) + "[" +
                 val(idx.src(1)) + " + " + std::to_string(l - 2) + "];");
          line("}");
          r[u.get()] = v;
          break;
        }
        if (u.dtype().count() > 1) e = "*(" + ctype(u.dtype()) + "_u*)&" + e;  // elements from the index on
        else if (is_half(u.dtype())) e = from_bits(u.dtype(), e), uses_half = true;
        else if (u.dtype().is_bool()) e = "(" + e + " != 0)";
        std::string zero = "(" + ctype(u.dtype()) + (u.dtype().count() > 1 ? "){}" : ")0");
        if (idx.src().size() > 2) e = "(" + val(idx.src(2)) + " ? " + e + " : " + zero + ")";
        line(ctype(u.dtype()) + " " + v + " = " + e + ";");
        r[u.get()] = v;
        break;
      }
      case Ops::STORE: {
        DType dt = u.src(1).dtype();
        std::string at = dt.count() > 1 ? "*(" + ctype(dt) + "_u*)&" + val(u.src(0)) : val(u.src(0));
        line(at + " = " + (is_half(dt) ? to_bits(dt, val(u.src(1))) : val(u.src(1))) + ";");
        uses_half = uses_half || is_half(dt);
        break;
      }
      case Ops::DEFINE_REG: {
        const UOp& red = u.src(0);
        std::string acc = "acc" + std::to_string(n_acc++);
        std::string init = val(red.src().back());
        if (red.dtype().count() > 1) init = "(" + ctype(red.dtype()) + "){} + " + init;  // every element
        line(ctype(red.dtype()) + " " + acc + " = " + init + ";");
        r[red.get()] = acc;
        break;
      }
      case Ops::REDUCE: {
        std::string acc = r.at(u.get()), x = val(u.src(0));
        Ops op = u.arg().get<Ops>();
        if (op == Ops::ADD) accumulate(u, acc);
        else if (op == Ops::MUL) line(acc + " *= " + x + ";");
        else if (u.dtype().count() > 1) line(acc + " = " + vector_select(u.dtype(), max_mask(x, acc), x, acc) + ";");
        else line(acc + " = (" + x + " > " + acc + " || " + x + " != " + x + ") ? " + x + " : " + acc + ";");  // max, nan wins
        break;
      }
      default: {
        // ALU: an expression, inlined into its one user or named (used more than once, or nested too deep)
        std::string e;
        auto s = [&](size_t i) { return val(u.src(i)); };
        // ops that write a source more than once get it as a name: inlined, a chain of them would grow exponentially
        bool repeats = u.op() == Ops::MAX || u.op() == Ops::IDIV || u.op() == Ops::MOD || (u.op() == Ops::WHERE && u.dtype().count() > 1);
        for (size_t i = 0; repeats && i < u.src().size(); i++) {
          const UOp& x = u.src(i);
          if (x.op() == Ops::CONST || x.op() == Ops::LOAD || x.op() == Ops::RANGE || uses[x.get()] > 1) continue;
          std::string v = "alu" + std::to_string(n_alu++);
          line("const " + ctype(x.dtype()) + " " + v + " = " + r.at(x.get()) + ";");
          r[x.get()] = v;
        }
        DType in = u.src().empty() ? u.dtype() : u.src(0).dtype();
        std::string sfx = float_suffix(in);
        // a vector op: a scalar operand is splat (x - 0 keeps -0 and NaN); selects go through the lanes' bits
        bool vector = u.dtype().count() > 1;
        auto select = [&](const std::string& mask, size_t a, size_t b) {
          return vector_select(u.dtype(), mask, splat(u.src(a), u.dtype()), splat(u.src(b), u.dtype()));
        };
        if (vector && u.op() == Ops::MAX) e = select(max_mask(s(0), s(1)), 0, 1);
        else if (vector && u.op() == Ops::WHERE)
          e = u.src(0).dtype().count() > 1 ? select(s(0), 1, 2)
                                           : "(" + s(0) + " ? " + splat(u.src(1), u.dtype()) + " : " + splat(u.src(2), u.dtype()) + ")";
        else if (vector && u.op() == Ops::CAST) e = "__builtin_convertvector(" + s(0) + ", " + ctype(u.dtype()) + ")";
        else if (vector && (u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SQRT || u.op() == Ops::SIN)) {
          // exp2 and log2 as polynomials in vector ops, sqrt and sin as libm per lane
          std::string fn = u.op() == Ops::EXP2 ? "exp2" : u.op() == Ops::LOG2 ? "log2" : u.op() == Ops::SQRT ? "sqrt" : "sin";
          std::string f = "tg_" + fn + "_" + vector_elem(u.dtype()) + std::to_string(u.dtype().count()), t = ctype(u.dtype());
          DType mask = dtypes::int32.vec(u.dtype().count());
          if (u.op() == Ops::EXP2 || u.op() == Ops::LOG2) vectors.emplace(ctype(mask), mask);
          helpers.emplace(f, u.op() == Ops::EXP2   ? exp2_helper(f, t, ctype(mask))
                             : u.op() == Ops::LOG2 ? log2_helper(f, t, ctype(mask))
                                                   : per_lane_helper(f, t, u.dtype().count(), "__builtin_" + fn + "f"));
          e = f + "(" + s(0) + ")";
        }
        else switch (u.op()) {
          case Ops::VECTORIZE: {
            e = "(" + ctype(u.dtype()) + "){";
            for (size_t i = 0; i < u.src().size(); i++) e += (i ? ", " : "") + s(i);
            e += "}";
            break;
          }
          case Ops::GEP: {  // one element, or a vector of the listed elements
            const std::vector<int64_t>& idx = u.arg().get<std::vector<int64_t>>();
            if (idx.size() == 1) {
              e = s(0) + "[" + std::to_string(idx[0]) + "]";
              break;
            }
            e = "__builtin_shufflevector(" + s(0) + ", " + s(0);
            for (int64_t i : idx) e += ", " + std::to_string(i);
            e += ")";
            break;
          }
          case Ops::NEG: e = "(-" + s(0) + ")"; break;
          case Ops::RECIPROCAL: e = "(1" + std::string(in == dtypes::float64 ? ".0" : ".0f") + "/" + s(0) + ")"; break;
          case Ops::SQRT: e = "__builtin_sqrt" + sfx + "(" + s(0) + ")"; break;
          case Ops::EXP2: e = "__builtin_exp2" + sfx + "(" + s(0) + ")"; break;
          case Ops::LOG2: e = "__builtin_log2" + sfx + "(" + s(0) + ")"; break;
          case Ops::SIN: e = "__builtin_sin" + sfx + "(" + s(0) + ")"; break;
          case Ops::CAST: e = u.dtype().is_bool() ? "(" + s(0) + " != 0)" : "((" + ctype(u.dtype()) + ")" + s(0) + ")"; break;
          case Ops::BITCAST: {
            // 16-bit floats live as float in registers: go through their bits
            std::string x = is_half(in) ? to_bits(in, s(0)) : s(0);
            std::string from = is_half(in) ? "uint16_t" : ctype(in), to = is_half(u.dtype()) ? "uint16_t" : ctype(u.dtype());
            e = "({ union { " + from + " a; " + to + " b; } _u; _u.a = " + x + "; _u.b; })";
            if (is_half(u.dtype())) e = from_bits(u.dtype(), e);
            uses_half = uses_half || is_half(in) || is_half(u.dtype());
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
              static const DType unsigned_of[] = {dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64};
              DType ut = unsigned_of[std::countr_zero(static_cast<unsigned>(u.dtype().itemsize()))];
              e = "((" + ctype(u.dtype()) + ")((" + ctype(ut) + ")" + s(0) + "<<" + s(1) + "))";
              break;
            }
            [[fallthrough]];
          default: {
            const char* sym = uop::infix_symbol(u.op());
            if (!sym) throw InternalError("render_c", "no C rendering for " + std::string(uop::op_name(u.op())));
            e = "(" + s(0) + sym + s(1) + ")";
          }
        }
        // every 16-bit float result is rounded to its format, except where the op cannot change the value
        if (is_half(u.dtype()) && u.op() != Ops::BITCAST && u.op() != Ops::NEG && u.op() != Ops::MAX && u.op() != Ops::WHERE) {
          e = round_to(u.dtype(), e);
          uses_half = true;
        }
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
  RenderedKernel k;
  k.name = name;
  k.entry = name + "_call";
  if (parallel) {  // without vars (a caller that does not split the loop), the whole loop
    params += ", const int64_t core_start, const int64_t core_end";
    unpack += ", vars ? vars[0] : 0, vars ? vars[1] : " + val(parallel->src(0));
  }
  std::string prelude = vector_types(vectors) + (uses_half ? kHalfHelpers : "");
  for (const auto& h : helpers) prelude += h.second;
  k.source = std::string("#include <stdint.h>\n") + prelude + "\nvoid " + name + "(" + params + ") {\n" + body + "}\n\nvoid " + k.entry +
             "(void* const* bufs, const int64_t* vars) { " + name + "(" + unpack + "); }\n";
  return k;
}

}  // namespace tg::renderer
