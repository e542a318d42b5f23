// The OpenCL C dialect (OpenCL 1.2): a __kernel over __global buffers, grid indices from get_group_id /
// get_local_id / get_global_id, the language's vector types (float4 ...) with vload/vstore for unaligned memory,
// select() for masks, and its overloaded math builtins. 16-bit floats are stored as their bits and computed in float
// (the shared helpers), so devices without cl_khr_fp16 run them too.
#include <string>

#include "renderer/cstyle.h"

namespace tg::renderer {

using uop::Ops;

namespace {

constexpr const char* kHex = "0123456789abcdef";

class OpenCLLanguage : public CStyleLanguage {
 public:
  std::string name() const override { return "OpenCL"; }
  std::string scalar_type(DType dt) const override {
    if (dt.is_bool()) return "bool";
    if (dt.is_float()) return dt.scalar() == dtypes::float64 ? "double" : "float";
    static const char* sign[] = {"char", "short", "int", "long"}, *unsign[] = {"uchar", "ushort", "uint", "ulong"};
    int i = dt.scalar().itemsize() == 1 ? 0 : dt.scalar().itemsize() == 2 ? 1 : dt.scalar().itemsize() == 4 ? 2 : 3;
    return dt.is_unsigned() ? unsign[i] : sign[i];
  }
  std::string bool_type() const override { return "bool"; }
  // a mask (bool vector, from comparing float32 vectors) is an int vector, -1 or 0, as the language's comparisons give
  std::string vector_type(DType dt) const override {
    return (dt.is_bool() ? std::string("int") : scalar_type(dt.scalar())) + std::to_string(dt.count());
  }
  std::string nan_literal(DType dt) const override { return dt == dtypes::float64 ? "((double)NAN)" : "NAN"; }
  std::string inf_literal(DType dt) const override { return dt == dtypes::float64 ? "((double)INFINITY)" : "INFINITY"; }
  std::string int64_suffix(bool is_unsigned) const override { return is_unsigned ? "UL" : "L"; }

  std::string math(Ops op, DType dt, const std::string& x, Prelude&) const override {
    std::string fn = op == Ops::EXP2 ? "exp2" : op == Ops::LOG2 ? "log2" : op == Ops::SQRT ? "sqrt" : "sin";
    return fn + "(" + x + ")";  // overloaded for scalars and vectors of float and double
  }
  std::string bitcast(DType from, DType to, const std::string& x) const override {
    return "as_" + value_type(to) + "(" + x + ")";
  }
  std::string fma(DType, const std::string& a, const std::string& b, const std::string& c, Prelude&) const override {
    return "fma(" + a + ", " + b + ", " + c + ")";
  }
  // SPECIAL names (codegen/grid.cpp): gidx = the work-group's index, lidx = the work-item's in its group, idx = the
  // global index (when the driver picks the work-groups)
  std::string special(const uop::UOp& u) const override {
    std::string n = u.arg().get<std::string>(), d = n.substr(n.size() - 1);
    std::string fn = n.rfind("gidx", 0) == 0 ? "get_group_id" : n.rfind("lidx", 0) == 0 ? "get_local_id" : "get_global_id";
    return "(" + value_type(u.dtype()) + ")" + fn + "(" + d + ")";
  }

  std::string local_array(const std::string& type, const std::string& name, int64_t size) const override {
    return "__local " + type + " " + name + "[" + std::to_string(size) + "]";
  }
  std::string barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE)"; }
  // tensor cores emulated (TC_EMULATE=1): each thread writes its fragment elements where mma.sync m16n8k16 has
  // them (codegen/tensor_core.cpp) into its warp's tiles in local memory, and after a barrier adds its 4
  // elements of the product to c. Checks the lowering's index math on any OpenCL device.
  std::string wmma(const uop::UOp&, const std::vector<std::string>& a, Prelude& p) const override {
    p.helpers["tg_mma_emulated"] = R"CL(
float4 tg_mma_emulated(__local float* scratch, float a0, float a1, float a2, float a3, float a4, float a5, float a6,
                       float a7, float b0, float b1, float b2, float b3, float c0, float c1, float c2, float c3) {
  size_t id = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
  __local float* A = scratch + (id / 32) * 384;
  __local float* B = A + 256;
  int g = (int)(id % 32) / 4, t = (int)(id % 32) % 4;
  float a[8] = {a0, a1, a2, a3, a4, a5, a6, a7}, b[4] = {b0, b1, b2, b3}, d[4] = {c0, c1, c2, c3};
  for (int j = 0; j < 8; j++) A[(g + 8 * ((j / 2) % 2)) * 16 + 2 * t + j % 2 + 8 * (j / 4)] = a[j];
  for (int j = 0; j < 4; j++) B[(2 * t + j % 2 + 8 * (j / 2)) * 8 + g] = b[j];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < 4; j++) {
    int row = g + 8 * (j / 2), col = 2 * t + j % 2;
    float s = 0.0f;
    for (int kk = 0; kk < 16; kk++) s += A[row * 16 + kk] * B[kk * 8 + col];
    d[j] += s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return (float4)(d[0], d[1], d[2], d[3]);
}
)CL";
    std::string call = "tg_mma_emulated(" + a.at(12);  // the scratch, then the fragments and the addends
    for (size_t i = 0; i < a.size(); i++)
      if (i != 12) call += ", " + a[i];
    return call + ")";
  }

  std::string splat(DType dt, const std::string& x) const override { return "((" + vector_type(dt) + ")(" + x + "))"; }
  std::string select(DType dt, const std::string& mask, const std::string& a, const std::string& b, Prelude&) const override {
    return "select(" + b + ", " + a + ", " + mask + ")";  // per lane: the mask's top bit set picks a
  }
  std::string convert(DType to, const std::string& x) const override { return "convert_" + vector_type(to) + "(" + x + ")"; }
  std::string make_vector(DType dt, const std::vector<std::string>& elems) const override {
    std::string e = "((" + vector_type(dt) + ")(";
    for (size_t i = 0; i < elems.size(); i++) e += (i ? ", " : "") + elems[i];
    return e + "))";
  }
  std::string element(const std::string& v, int64_t i) const override { return v + ".s" + kHex[i]; }
  std::string shuffle(DType to, const std::string& v, const std::vector<int64_t>& lanes) const override {
    std::string e = v + ".s";  // a swizzle: widths 2, 3, 4, 8 and 16
    for (int64_t i : lanes) e += kHex[i];
    return e;
  }
  std::string vector_load(DType dt, const std::string& first) const override {
    return "vload" + std::to_string(dt.count()) + "(0, &" + first + ")";
  }
  std::string half_vector_load(DType dt, const std::string& first, Prelude&) const override {
    std::string n = std::to_string(dt.count());
    // vload_half is core OpenCL (no cl_khr_fp16 needed); bfloat16 is the high half of a float
    if (dt.scalar() == dtypes::float16) return "vload_half" + n + "(0, (const __global half*)&" + first + ")";
    return "as_float" + n + "(convert_uint" + n + "(vload" + n + "(0, &" + first + ")) << 16)";
  }
  std::string vector_store(DType dt, const std::string& first, const std::string& v) const override {
    return "vstore" + std::to_string(dt.count()) + "(" + v + ", 0, &" + first + ")";
  }

  RenderedKernel finish(const std::string& name, const std::vector<Param>& params, const std::string& body,
                        const Prelude& p, const std::string&) const override {
    std::string sig;
    for (const Param& prm : params)
      sig += (sig.empty() ? "" : ", ") + (prm.buffer ? "__global " + prm.type + "* restrict " : "const " + prm.type + " ") + prm.name;
    // contraction off: x*y - x*y stays 0 and sums round as on the CPU (fma() is asked for where one rounding is meant)
    std::string prelude = "#pragma OPENCL FP_CONTRACT OFF\n";
    if (p.fp64) prelude += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    // the shared 16-bit helpers are written with C's fixed-width names
    if (p.half) prelude += "typedef ushort uint16_t;\ntypedef uint uint32_t;\ntypedef int int32_t;\n" + half_helpers();
    for (const auto& h : p.helpers) prelude += h.second;
    RenderedKernel k;
    k.name = k.entry = name;
    k.source = prelude + "\n__kernel void " + name + "(" + sig + ") {\n" + body + "}\n";
    return k;
  }
};

}  // namespace

const CStyleLanguage& opencl_language() {
  static const OpenCLLanguage lang;
  return lang;
}

}  // namespace tg::renderer
