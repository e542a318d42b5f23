// The CUDA C++ dialect (compiled by NVRTC): an extern "C" __global__ kernel over raw pointers, grid indices from
// blockIdx / threadIdx, __shared__ arrays and __syncthreads() for GROUP, and CUDA's math functions. CUDA has no
// vector arithmetic, so a CUDA device states max_vector 1 and kernels are scalar (UPCAST copies, no VECTOR). 16-bit
// floats are stored as their bits and computed in float with the shared helpers, as on OpenCL.
#include <string>

#include "renderer/cstyle.h"
#include "tg/error.h"

namespace tg::renderer {

using uop::Ops;

namespace {

class CudaLanguage : public CStyleLanguage {
 public:
  std::string name() const override { return "CUDA"; }
  std::string scalar_type(DType dt) const override {
    if (dt.is_bool()) return "bool";
    if (dt.is_float()) return dt.scalar() == dtypes::float64 ? "double" : "float";
    static const char* sign[] = {"signed char", "short", "int", "long long"};
    static const char* unsign[] = {"unsigned char", "unsigned short", "unsigned int", "unsigned long long"};
    int i = dt.scalar().itemsize() == 1 ? 0 : dt.scalar().itemsize() == 2 ? 1 : dt.scalar().itemsize() == 4 ? 2 : 3;
    return dt.is_unsigned() ? unsign[i] : sign[i];
  }
  std::string bool_type() const override { return "bool"; }
  // the one vector: a tensor-core multiply's part of the product (float4, CUDA's built-in)
  std::string vector_type(DType dt) const override {
    if (dt == dtypes::float32.vec(4)) return "float4";
    throw no_vectors(dt);
  }
  std::string nan_literal(DType dt) const override {
    return dt == dtypes::float64 ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  }
  std::string inf_literal(DType dt) const override {
    return dt == dtypes::float64 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__int_as_float(0x7f800000)";
  }
  std::string int64_suffix(bool is_unsigned) const override { return is_unsigned ? "ULL" : "LL"; }

  std::string math(Ops op, DType dt, const std::string& x, Prelude&) const override {
    std::string fn = op == Ops::EXP2 ? "exp2" : op == Ops::LOG2 ? "log2" : op == Ops::SQRT ? "sqrt" : "sin";
    return fn + (dt.scalar() == dtypes::float64 ? "" : "f") + "(" + x + ")";  // IEEE forms: no fast math
  }
  // the bits of one value type as another of the same size (memcpy is the defined way in device code too)
  std::string bitcast(DType, DType to, const std::string& x) const override {
    return "tg_bitcast<" + value_type(to) + ">(" + x + ")";
  }
  std::string fma(DType dt, const std::string& a, const std::string& b, const std::string& c, Prelude&) const override {
    return std::string(dt.scalar() == dtypes::float64 ? "fma" : "fmaf") + "(" + a + ", " + b + ", " + c + ")";
  }
  // SPECIAL names (codegen/grid.cpp): gidx = the block's index, lidx = the thread's in its block, idx = the global
  // index (the runtime picks the block size, a divisor of the dimension's size)
  std::string special(const uop::UOp& u) const override {
    std::string n = u.arg().get<std::string>(), d(1, "xyz"[n.back() - '0']);
    std::string v = n.rfind("gidx", 0) == 0 ? "blockIdx." + d
                    : n.rfind("lidx", 0) == 0 ? "threadIdx." + d
                                               : "(blockIdx." + d + "*blockDim." + d + "+threadIdx." + d + ")";
    return "(" + value_type(u.dtype()) + ")" + v;
  }
  std::string local_array(const std::string& type, const std::string& name, int64_t size) const override {
    return "__shared__ " + type + " " + name + "[" + std::to_string(size) + "]";
  }
  std::string barrier() const override { return "__syncthreads()"; }

  // no vector forms: a CUDA device's caps allow no VECTOR opt, so none of these is reached
  std::string splat(DType dt, const std::string&) const override { throw no_vectors(dt); }
  std::string select(DType dt, const std::string&, const std::string&, const std::string&, Prelude&) const override { throw no_vectors(dt); }
  std::string convert(DType to, const std::string&) const override { throw no_vectors(to); }
  std::string make_vector(DType dt, const std::vector<std::string>&) const override { throw no_vectors(dt); }
  std::string element(const std::string& v, int64_t i) const override {
    if (i < 0 || i > 3) throw no_vectors(dtypes::float32);
    return v + "." + "xyzw"[i];
  }
  // mma.sync m16n8k16 (sm_80 on): the operands, 16-bit values held as float, packed two to a register (the lower
  // element in the low half: cvt's first operand goes high), the product added to c
  std::string wmma(const uop::UOp& u, const std::vector<std::string>& a, Prelude& p) const override {
    std::string t = u.arg().get<std::string>() == "bfloat16" ? "bf16" : "f16", fn = "tg_mma_" + t;
    std::string h = R"CU(
static __device__ __forceinline__ unsigned tg_pack_@T(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.@Tx2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
static __device__ __forceinline__ float4 tg_mma_@T(float a0, float a1, float a2, float a3, float a4, float a5, float a6,
                                                  float a7, float b0, float b1, float b2, float b3, float c0,
                                                  float c1, float c2, float c3) {
  float4 d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.@T.@T.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d.x), "=f"(d.y), "=f"(d.z), "=f"(d.w)
      : "r"(tg_pack_@T(a0, a1)), "r"(tg_pack_@T(a2, a3)), "r"(tg_pack_@T(a4, a5)), "r"(tg_pack_@T(a6, a7)),
        "r"(tg_pack_@T(b0, b1)), "r"(tg_pack_@T(b2, b3)), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  return d;
}
)CU";
    for (size_t at = 0; (at = h.find("@T", at)) != std::string::npos;) h.replace(at, 2, t);
    p.helpers[fn] = h;
    std::string call = fn + "(";
    for (size_t i = 0; i < a.size(); i++) call += (i ? ", " : "") + a[i];
    return call + ")";
  }
  std::string shuffle(DType to, const std::string&, const std::vector<int64_t>&) const override { throw no_vectors(to); }
  std::string vector_load(DType dt, const std::string&) const override { throw no_vectors(dt); }
  std::string half_vector_load(DType dt, const std::string&, Prelude&) const override { throw no_vectors(dt); }
  std::string vector_store(DType dt, const std::string&, const std::string&) const override { throw no_vectors(dt); }

  RenderedKernel finish(const std::string& name, const std::vector<Param>& params, const std::string& body,
                        const Prelude& p, const std::string&) const override {
    std::string sig;
    for (const Param& prm : params)
      sig += (sig.empty() ? "" : ", ") + (prm.buffer ? prm.type + "* __restrict__ " : "const " + prm.type + " ") + prm.name;
    // NVRTC has no standard headers: the fixed-width names the shared 16-bit helpers use (memcpy is built in)
    std::string prelude =
        "typedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\ntypedef int int32_t;\n"
        "template <class T, class F> __device__ __forceinline__ T tg_bitcast(F x) { T t; memcpy(&t, &x, sizeof t); return t; }\n";
    // a 16-bit float to float32 in one conversion instruction (exact), not the shared helper's bit math
    if (p.half)
      prelude += device_functions(half_helpers(
          "#if defined(__CUDA_ARCH__)\n  float f;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n  return f;\n#else\n"));
    for (const auto& h : p.helpers) prelude += device_functions(h.second);
    RenderedKernel k;
    k.name = k.entry = name;
    k.source = prelude + "\nextern \"C\" __global__ void " + name + "(" + sig + ") {\n" + body + "}\n";
    return k;
  }

 private:
  static InternalError no_vectors(DType dt) {
    return InternalError("render", "CUDA kernels have no vector types (" + dt.name() + "): a CUDA device allows no VECTOR opt");
  }
  // the shared helpers are C ("static inline"): device functions here
  static std::string device_functions(std::string src) {
    for (size_t at = 0; (at = src.find("static inline ", at)) != std::string::npos; at += 25) src.replace(at, 14, "static __device__ inline ");
    return src;
  }
};

}  // namespace

const CStyleLanguage& cuda_language() {
  static const CudaLanguage lang;
  return lang;
}

}  // namespace tg::renderer
