// The C dialect: GNU C for clang and gcc (the CPU device). Vectors are GNU C vectors with an unaligned, aliasing
// twin for loads and stores; vector exp2/log2 are polynomials in vector ops (libm has no vector form the compilers
// call); the kernel gets an entry with the uniform signature every CPU Program has.
#include <string>

#include "renderer/cstyle.h"

namespace tg::renderer {

using uop::Ops;

namespace {

// element type of a vector: a mask (bool vector, from comparing float32 vectors) holds int32 elements, -1 or 0
std::string vector_elem(DType dt) {
  std::string c = dt.is_bool() ? "int" : dt.scalar().c_type();
  for (char& ch : c)
    if (ch == ' ') ch = '_';
  return c;
}

// per lane a where mask (an int vector of -1/0) is set, else b, in a helper of float vector type t, int vector type i
std::string bits_select(const std::string& t, const std::string& i, const std::string& mask, const std::string& a,
                        const std::string& b) {
  return "(" + t + ")(((" + i + ")(" + a + ") & (" + mask + ")) | ((" + i + ")(" + b + ") & ~(" + mask + ")))";
}

// the polynomials' steps p * f + c as FMAs (one rounding: as accurate or more, and half the instructions); clang
// contracts the helper's body only, gcc ignores the pragma
const std::string contract = "#pragma clang fp contract(fast)\n";

// p * 2^r in one AVX-512 vscalefps for 4, 8 or 16 lanes (the compilers' builtin, under the #if of the feature
// -march=native turns on; "" for other widths): it gives 0, subnormals and inf where the exponent fields would need
// two multiplies. With the FMAs, 13 instructions per exp2 of 16 lanes instead of 28 (./build/bin/tg_bench softmax
// --rows 1024 --cols 1024)
std::string scalef(int lanes) {
  std::string feature = lanes == 16 ? "defined(__AVX512F__)" : "defined(__AVX512F__) && defined(__AVX512VL__)";
  std::string call = lanes == 16 ? "__builtin_ia32_scalefps512_mask(p, r, p, (unsigned short)0xffff, 4)"
                     : lanes == 8 || lanes == 4 ? "__builtin_ia32_scalefps" + std::string(lanes == 8 ? "256" : "128") +
                                                      "_mask(p, r, p, (unsigned char)0xff)"
                                                : "";
  return call.empty() ? "" : "#if " + feature + "\n  return " + call + ";\n#else\n";
}

// exp2 of a float32 vector in vector ops (a scalar float when i is empty): x = r + f with r an integer (rounded by
// adding 1.5 * 2^23) and |f| <= 1/2; 2^f by its Taylor polynomial of degree 7 (error 5e-9 relative); 2^r as two
// exponent fields, so results in the subnormal range come out right. x is clamped to [-150, 128] first (0 and inf
// beyond; NaN passes through the compares unchanged and makes the polynomial NaN). The scalar form calls no libm,
// so clang vectorizes a loop of it that the opts could not (a symbolic length: attention's softmax over a KV cache).
std::string exp2_helper(const std::string& name, const std::string& t, const std::string& i, int lanes = 1) {
  bool scalar = i.empty();
  std::string clamp = scalar ? "  x = x < -150.0f ? -150.0f : x;\n  x = x > 128.0f ? 128.0f : x;\n"
                             : "  const " + t + " lo = (" + t + "){} - 150.0f, hi = (" + t + "){} + 128.0f;\n"
                               "  x = " + bits_select(t, i, "x < lo", "lo", "x") + ";\n"
                               "  x = " + bits_select(t, i, "x > hi", "hi", "x") + ";\n";
  std::string power = scalar ? "  int e = (int)r, a = e >> 1, b = e - a;\n"
                               "  union { int i; float f; } ua = {(a + 127) << 23}, ub = {(b + 127) << 23};\n"
                               "  return (p * ua.f) * ub.f;\n}\n"
                             : "  " + i + " e = __builtin_convertvector(r, " + i + "), a = e >> 1, b = e - a;\n"
                               "  return (p * (" + t + ")((a + 127) << 23)) * (" + t + ")((b + 127) << 23);\n" +
                                   (scalef(lanes).empty() ? "" : "#endif\n") + "}\n";
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " x) {\n" + contract + clamp +
         "  " + t + " r = (x + 12582912.0f) - 12582912.0f, f = x - r;\n"
         "  " + t + " p = f * 1.52527338e-05f + 1.54035304e-04f;\n"
         "  p = p * f + 1.33335581e-03f;\n  p = p * f + 9.61812911e-03f;\n  p = p * f + 5.55041087e-02f;\n"
         "  p = p * f + 2.40226507e-01f;\n  p = p * f + 6.93147181e-01f;\n  p = p * f + 1.0f;\n" + scalef(lanes) + power;
}

// log2 of a float32 vector in vector ops: x = m * 2^e with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23
// first), log2(m) = 2 atanh(t) / ln 2 with t = (m - 1) / (m + 1), |t| <= 0.172, by its odd series to t^11 (the
// coefficients times 2 / ln 2; truncation error 4e-10 relative); 0 gives -inf, negatives and NaN NaN, inf inf.
std::string log2_helper(const std::string& name, const std::string& t, const std::string& i) {
  auto select = [&](const std::string& mask, const std::string& a, const std::string& b) { return bits_select(t, i, mask, a, b); };
  std::string z = "(" + t + "){}";
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " x) {\n" + contract +
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

// The x86 instruction that widens 1, 4, 8 or 16 float16 values `x` (F16C; AVX-512 for 16), called through the
// compilers' builtin (gcc and clang name it alike; <immintrin.h> would slow every compile: ./build/bin/tg_bench
// compile), under the #if of the feature -march=native turns on; "" for other widths. It is exact, as the integer
// ops are, but it quiets a signaling NaN (the payload kept, as IEEE 754's conversions do). In integer ops the
// conversion is a float16 matrix-vector product's bottleneck; the scalar form decodes the scales of quantized
// blocks (TYPES="F16 Q4_0" bench/gguf.sh).
std::string f16c_widen(int lanes, const std::string& t, const std::string& x = "x") {
  std::string s8 = "short __attribute__((vector_size(16)))";
  if (lanes == 1) return "#if defined(__F16C__)\n  return __builtin_ia32_vcvtph2ps((" + s8 + "){(short)" + x + "})[0];\n#else\n";
  if (lanes == 16)
    return "#if defined(__AVX512F__)\n  return __builtin_ia32_vcvtph2ps512_mask((short __attribute__((vector_size(32))))" + x + ", (" + t +
           "){}, (unsigned short)0xffff, 4);\n#else\n";
  if (lanes == 8) return "#if defined(__F16C__)\n  return __builtin_ia32_vcvtph2ps256((" + s8 + ")" + x + ");\n#else\n";
  if (lanes == 4)
    return "#if defined(__F16C__)\n  return __builtin_ia32_vcvtph2ps((" + s8 + ")__builtin_shufflevector(" + x + ", " + x +
           ", 0, 1, 2, 3, 0, 1, 2, 3));\n#else\n";
  return "";
}

// n 16-bit floats' bits as a float32 vector: float16 through f16c_widen where the CPU has it, else in integer vector
// ops (no _Float16 needed from the compiler) as the scalar tg_f16_to_f32 (magnitude bits moved into place and scaled
// by 2^112, which also makes subnormals right; inf and NaN get the full exponent; the sign last); bfloat16 as the
// high half of a float32
std::string half_to_float_helper(const std::string& name, DType dt, int lanes, const std::string& t, const std::string& h,
                                 const std::string& u) {
  std::string hw = dt == dtypes::float16 ? f16c_widen(lanes, t) : "";
  std::string body = dt == dtypes::bfloat16
      ? "  return (" + t + ")(__builtin_convertvector(x, " + u + ") << 16);\n"
      : "  " + u + " b = __builtin_convertvector(x, " + u + ");\n"
        "  " + t + " f = (" + t + ")((b & 0x7fffu) << 13) * 0x1p112f;\n"
        "  " + u + " r = (" + u + ")f | ((" + u + ")((b & 0x7c00u) == 0x7c00u) & 0x7f800000u) | ((b & 0x8000u) << 16);\n"
        "  return (" + t + ")r;\n";
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + h + " x) {\n" + hw + body +
         (hw.empty() ? "" : "#endif\n") + "}\n";
}

// A float32 vector's n values as 16-bit floats' bits, rounded to nearest even as the scalar tg_f32_to_bf16 and
// tg_f32_to_f16 round (NaN quiet with the sign kept, a bfloat16's top payload bits kept). bfloat16 in integer
// vector ops; float16 through F16C's vcvtps2ph (AVX-512 for 16) with the scalar's NaN, else lane by lane
std::string float_to_half_helper(const std::string& name, DType dt, int lanes, const std::string& t, const std::string& h,
                                 const std::string& u) {
  std::string head = "static inline __attribute__((always_inline)) " + h + " " + name + "(" + t + " x) {\n  " + u + " b = (" + u + ")x;\n";
  std::string nan = "((b & 0x7fffffffu) > 0x7f800000u)";
  if (dt == dtypes::bfloat16)
    return head + "  " + u + " r = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16, q = (b >> 16) | 0x40u, m = (" + u + ")" + nan + ";\n" +
           "  return __builtin_convertvector((r & ~m) | (q & m), " + h + ");\n}\n";
  std::string s8 = "short __attribute__((vector_size(16)))", cvt;
  if (lanes == 16)
    cvt = "#if defined(__AVX512F__)\n  " + h + " r = (" + h + ")__builtin_ia32_vcvtps2ph512_mask(x, 0, (short __attribute__((vector_size(32)))){}, (unsigned short)0xffff);\n";
  else if (lanes == 8) cvt = "#if defined(__F16C__)\n  " + h + " r = (" + h + ")__builtin_ia32_vcvtps2ph256(x, 0);\n";
  else if (lanes == 4)
    cvt = "#if defined(__F16C__)\n  " + s8 + " w = __builtin_ia32_vcvtps2ph(x, 0);\n  " + h + " r = (" + h + ")__builtin_shufflevector(w, w, 0, 1, 2, 3);\n";
  std::string per_lane = "  " + h + " r;\n  for (int l = 0; l < " + std::to_string(lanes) + "; l++) r[l] = tg_f32_to_f16(x[l]);\n  return r;\n";
  if (cvt.empty()) return head + per_lane + "}\n";
  return head + cvt + "  " + h + " m = __builtin_convertvector((" + u + ")" + nan + ", " + h + ");\n" +
         "  return (r & ~m) | (__builtin_convertvector((b >> 16) & 0x8000u, " + h + ") & m) | (m & 0x7e00u);\n#else\n" +
         per_lane + "#endif\n}\n";
}

// acc + a*b rounded once (an FMA instruction): clang contracts this body only; gcc ignores the pragma
std::string fma_helper(const std::string& name, const std::string& t) {
  return "static inline __attribute__((always_inline)) " + t + " " + name + "(" + t + " a, " + t + " b, " + t +
         " c) {\n#pragma clang fp contract(fast)\n  return a * b + c;\n}\n";
}

// acc + a[0] * b0 + a[1] * b1 per lane, `a` pointing at two consecutive bfloat16 values. With AVX512-BF16
// (-march=native says: Zen 4, Sapphire Rapids, Cooper Lake) one vdpbf16ps for the 32 products, through an asm
// statement (its intrinsic's header slows every compile, and gcc and clang name its builtin apart): b0 and b1
// interleaved lane by lane, a's pair in every lane. The instruction adds a[1] * b1 first, then a[0] * b0, each
// product exact and each sum rounded, subnormals read and written as 0; without it, the same sums in the same
// order (a product of two bfloat16 values is exact in float32, so a multiply and an add are an FMA's value).
std::string bf16_pair_dot_helper(const std::string& name, const std::string& f, const std::string& u16, const std::string& u32) {
  std::string interleave;
  for (int l = 0; l < 16; l++) interleave += ", " + std::to_string(l) + ", " + std::to_string(16 + l);
  return "static inline __attribute__((always_inline)) " + f + " " + name + "(" + f + " acc, const void* at, " + u16 +
         " b0, " + u16 + " b1) {\n"
         "  unsigned int a;\n  __builtin_memcpy(&a, at, 4);\n"
         "#if defined(__AVX512BF16__)\n"
         "  unsigned short __attribute__((vector_size(64))) b = __builtin_shufflevector(b0, b1" + interleave + ");\n"
         "  " + u32 + " pair = a - (" + u32 + "){};\n"
         "  __asm__(\"vdpbf16ps %2, %1, %0\" : \"+v\"(acc) : \"v\"(b), \"v\"(pair));\n"
         "  return acc;\n"
         "#else\n"
         "  " + f + " a0 = (" + f + ")((a << 16) - (" + u32 + "){}), a1 = (" + f + ")((a & 0xffff0000u) - (" + u32 + "){});\n"
         "  acc = acc + a1 * (" + f + ")(__builtin_convertvector(b1, " + u32 + ") << 16);\n"
         "  return acc + a0 * (" + f + ")(__builtin_convertvector(b0, " + u32 + ") << 16);\n"
         "#endif\n}\n";
}

class CLanguage : public CStyleLanguage {
 public:
  bool signed_overflow_wraps() const override { return true; }  // the CPU compiler runs with -fwrapv
  std::string name() const override { return "C"; }
  std::string scalar_type(DType dt) const override { return dt.scalar().c_type(); }
  std::string bool_type() const override { return "_Bool"; }
  std::string vector_type(DType dt) const override { return "tg_" + vector_elem(dt) + std::to_string(dt.count()); }
  std::string nan_literal(DType dt) const override { return dt == dtypes::float64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")"; }
  std::string inf_literal(DType dt) const override { return dt == dtypes::float64 ? "__builtin_inf()" : "__builtin_inff()"; }
  std::string int64_suffix(bool is_unsigned) const override { return is_unsigned ? "ULL" : "LL"; }

  std::string math(Ops op, DType dt, const std::string& x, Prelude& p) const override {
    std::string fn = op == Ops::EXP2 ? "exp2" : op == Ops::LOG2 ? "log2" : op == Ops::SQRT ? "sqrt" : "sin";
    if (dt == dtypes::float32 && op == Ops::EXP2) {
      p.helpers.emplace("tg_exp2_float", exp2_helper("tg_exp2_float", "float", ""));
      return "tg_exp2_float(" + x + ")";
    }
    if (dt.count() == 1) return "__builtin_" + fn + (dt == dtypes::float64 ? "" : "f") + "(" + x + ")";
    // exp2 and log2 of vectors as polynomials in vector ops, sqrt and sin as libm per lane
    std::string f = "tg_" + fn + "_" + vector_elem(dt) + std::to_string(dt.count()), t = vector_type(dt);
    DType mask = dtypes::int32.vec(dt.count());
    if (op == Ops::EXP2 || op == Ops::LOG2) p.vectors.emplace(vector_type(mask), mask);
    p.helpers.emplace(f, op == Ops::EXP2   ? exp2_helper(f, t, vector_type(mask), dt.count())
                         : op == Ops::LOG2 ? log2_helper(f, t, vector_type(mask))
                                           : per_lane_helper(f, t, dt.count(), "__builtin_" + fn + "f"));
    return f + "(" + x + ")";
  }
  std::string bitcast(DType from, DType to, const std::string& x) const override {
    return "({ union { " + value_type(from) + " a; " + value_type(to) + " b; } _u; _u.a = " + x + "; _u.b; })";
  }
  std::string fma(DType dt, const std::string& a, const std::string& b, const std::string& c, Prelude& p) const override {
    std::string f = "tg_fma_" + vector_elem(dt) + (dt.count() > 1 ? std::to_string(dt.count()) : "");
    p.helpers.emplace(f, fma_helper(f, value_type(dt)));
    return f + "(" + a + ", " + b + ", " + c + ")";
  }

  std::string bf16_pair_dot(const std::string& acc, const std::string& a_first, const std::string& b0_first,
                            const std::string& b1_first, Prelude& p) const override {
    DType f = dtypes::float32.vec(16), u16 = dtypes::uint16.vec(16), u32 = dtypes::uint32.vec(16);
    for (DType v : {f, u16, u32}) p.vectors.emplace(vector_type(v), v);
    p.helpers.emplace("tg_bf16_dot2_16", bf16_pair_dot_helper("tg_bf16_dot2_16", vector_type(f), vector_type(u16), vector_type(u32)));
    return "tg_bf16_dot2_16(" + acc + ", &" + a_first + ", " + vector_load(u16, b0_first) + ", " + vector_load(u16, b1_first) + ")";
  }

  // two FMA ports, 4 cycles each (x86 since Haswell, Zen, ARM's big cores): 8 sums in flight keep both busy
  int accumulator_chains() const override { return 8; }
  // a scalar is splat by the language in a vector op (x - 0 keeps -0 and NaN)
  std::string splat(DType dt, const std::string& x) const override {
    // an integer first converted to the element type (clang refuses an int variable beside a char vector)
    std::string scalar = dt.is_int() ? "(" + std::string(dt.scalar().c_type()) + ")(" + x + ")" : x;
    return "(" + scalar + " - (" + vector_type(dt) + "){})";
  }
  std::string select(DType dt, const std::string& mask, const std::string& a, const std::string& b, Prelude& p) const override {
    DType bits = dtypes::int32.vec(dt.count());
    p.vectors.emplace(vector_type(bits), bits);
    return "((" + vector_type(dt) + ")(((" + vector_type(bits) + ")" + a + " & " + mask + ") | ((" + vector_type(bits) +
           ")" + b + " & ~" + mask + ")))";
  }
  std::string convert(DType to, const std::string& x) const override {
    return "__builtin_convertvector(" + x + ", " + vector_type(to) + ")";
  }
  std::string make_vector(DType dt, const std::vector<std::string>& elems) const override {
    std::string e = "(" + vector_type(dt) + "){";
    for (size_t i = 0; i < elems.size(); i++) e += (i ? ", " : "") + elems[i];
    return e + "}";
  }
  std::string element(const std::string& v, int64_t i) const override { return v + "[" + std::to_string(i) + "]"; }
  std::string shuffle(DType, const std::string& v, const std::vector<int64_t>& lanes) const override {
    std::string e = "__builtin_shufflevector(" + v + ", " + v;
    for (int64_t i : lanes) e += ", " + std::to_string(i);
    return e + ")";
  }
  std::string vector_load(DType dt, const std::string& first) const override {
    return "*(" + vector_type(dt) + "_u*)&" + first;
  }
  std::string vector_store(DType dt, const std::string& first, const std::string& v) const override {
    return "*(" + vector_type(dt) + "_u*)&" + first + " = " + v;
  }
  // AVX-512's vpermps, through an asm statement (gcc and clang name its builtin apart); it reads the low 4 bits of each
  // index itself
  std::string lut16(const std::string& table, const std::string& idx, Prelude& p) const override {
    DType f = dtypes::float32.vec(16), i = dtypes::int32.vec(16);
    for (DType x : {f, i}) p.vectors.emplace(vector_type(x), x);
    std::string t = vector_type(f);
    p.helpers.emplace("tg_lut16", "static inline __attribute__((always_inline)) " + t + " tg_lut16(" + t + " table, " + vector_type(i) +
                                      " idx) {\n  " + t + " r;\n#if defined(__AVX512F__)\n"
                                      "  __asm__(\"vpermps %1, %2, %0\" : \"=v\"(r) : \"v\"(table), \"v\"(idx));\n#else\n"
                                      "  for (int l = 0; l < 16; l++) r[l] = table[idx[l] & 15];\n#endif\n  return r;\n}\n");
    return "tg_lut16(" + table + ", " + idx + ")";
  }
  // clang's `fp reassociate` on the add alone (the loop's other math, exp2's rounding among it, keeps its order);
  // other compilers have no statement-level form and keep the loop scalar
  std::string reordered_sum(const std::string& type, const std::string& acc, const std::string& x, Prelude& p) const override {
    p.helpers.emplace("TG_REORDERED", "#if defined(__clang__)\n#define TG_REORDERED _Pragma(\"clang fp reassociate(on)\")\n#else\n"
                                      "#define TG_REORDERED\n#endif\n");
    return "{ const " + type + " term = " + x + "; { TG_REORDERED " + acc + " += term; } }";
  }
  KeyedMax keyed_max(const std::string& acc, const std::string& x, Prelude& p) const override {
    p.helpers.emplace("tg_max_key",
                      "static inline __attribute__((always_inline)) int tg_max_key(float f) {\n"
                      "  union { float f; int i; } u = {f};\n  return u.i ^ ((u.i >> 31) & 0x7fffffff);\n}\n"
                      "static inline __attribute__((always_inline)) float tg_max_of_key(int k) {\n"
                      "  union { int i; float f; } u = {k ^ ((k >> 31) & 0x7fffffff)};\n  return u.f;\n}\n");
    std::string key = acc + "_key", nan = acc + "_nan";
    return {"int " + key + " = tg_max_key(" + acc + "), " + nan + " = 0;",
            "{ const float term = " + x + "; const int key = tg_max_key(term); " + key + " = key > " + key + " ? key : " + key +
                "; " + nan + " |= term != term; }",
            acc + " = " + nan + " ? __builtin_nanf(\"\") : tg_max_of_key(" + key + ");"};
  }
  std::string half_vector_store(DType dt, const std::string& first, const std::string& v, Prelude& p) const override {
    int n = dt.count();
    DType bits = dtypes::uint16.vec(n), wide = dtypes::uint32.vec(n), f = dtypes::float32.vec(n);
    for (DType x : {bits, wide, f}) p.vectors.emplace(vector_type(x), x);
    p.half = true;  // the scalar conversion, for lanes without F16C
    std::string name = "tg_f32_to_" + std::string(dt.scalar() == dtypes::bfloat16 ? "bf16" : "f16") + "_" + std::to_string(n);
    p.helpers.emplace(name, float_to_half_helper(name, dt.scalar(), n, vector_type(f), vector_type(bits), vector_type(wide)));
    return vector_store(bits, first, name + "(" + v + ")");
  }
  std::string half_vector_load(DType dt, const std::string& first, Prelude& p) const override {
    int n = dt.count();
    DType bits = dtypes::uint16.vec(n), wide = dtypes::uint32.vec(n), f = dtypes::float32.vec(n);
    for (DType v : {bits, wide, f}) p.vectors.emplace(vector_type(v), v);
    std::string name = "tg_" + std::string(dt.scalar() == dtypes::bfloat16 ? "bf16" : "f16") + "_to_f32_" + std::to_string(n);
    p.helpers.emplace(name, half_to_float_helper(name, dt.scalar(), n, vector_type(f), vector_type(bits), vector_type(wide)));
    return name + "(" + vector_load(bits, first) + ")";
  }

  RenderedKernel finish(const std::string& name, const std::vector<Param>& params, const std::string& body,
                        const Prelude& p, const std::string& parallel_size) const override {
    std::string sig, unpack;
    size_t n_bufs = 0, n_vars = 0;
    // the uniform entry: buffers, then vars = {core_start, core_end, the variables' values by name...}
    for (const Param& prm : params) {
      sig += (sig.empty() ? "" : ", ") + (prm.buffer ? prm.type + "* restrict " : "const " + prm.type + " ") + prm.name;
      unpack += std::string(unpack.empty() ? "" : ", ") +
                (prm.buffer ? "(" + prm.type + "*)bufs[" + std::to_string(n_bufs++) + "]" : "vars[" + std::to_string(2 + n_vars++) + "]");
    }
    if (!parallel_size.empty()) {  // without vars (a caller that does not split the loop), the whole loop
      sig += ", const int64_t core_start, const int64_t core_end";
      unpack += ", vars ? vars[0] : 0, vars ? vars[1] : " + parallel_size;
    }
    // GNU C vector types, one per width the kernel uses; the _u variant reads and writes unaligned memory that
    // aliases its elements
    std::string prelude;
    for (const auto& [t, dt] : p.vectors) {
      std::string elem = dt.is_bool() ? "int" : dt.scalar().c_type(), align = std::to_string(dt.is_bool() ? 4 : dt.scalar().itemsize());
      std::string bytes = std::to_string(dt.count() * (dt.is_bool() ? 4 : dt.scalar().itemsize()));
      prelude += "typedef " + elem + " " + t + " __attribute__((vector_size(" + bytes + ")));\n";
      prelude += "typedef " + elem + " " + t + "_u __attribute__((vector_size(" + bytes + "), aligned(" + align + "), may_alias));\n";
    }
    // helpers are defined once per translation unit: the CPU compiles a schedule's kernels as one (a repeated
    // typedef is legal C11, a repeated function is not)
    auto once = [](const std::string& name, const std::string& def) {
      return "#ifndef TG_ONCE_" + name + "\n#define TG_ONCE_" + name + "\n" + def + "#endif\n";
    };
    if (p.half) prelude += once("half_helpers", half_helpers(f16c_widen(1, "float", "h")));
    for (const auto& [hname, def] : p.helpers) prelude += once(hname, def);
    RenderedKernel k;
    k.name = name;
    k.entry = name + "_call";
    k.source = "#include <stdint.h>\n" + prelude + "\nvoid " + name + "(" + sig + ") {\n" + body + "}\n\nvoid " + k.entry +
               "(void* const* bufs, const int64_t* vars) { " + name + "(" + unpack + "); }\n";
    return k;
  }
};

}  // namespace

const CStyleLanguage& c_language() {
  static const CLanguage lang;
  return lang;
}

RenderedKernel render_c(const std::string& name, const std::vector<uop::UOp>& uops, const uop::UOp* parallel) {
  return render(c_language(), name, uops, parallel);
}

}  // namespace tg::renderer
