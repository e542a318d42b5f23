// Rendering linear uops as source in a C-family language (tinygrad's CStyleLanguage): cstyle.cpp writes the kernel
// body once for every dialect, and a dialect (c.cpp, opencl.cpp, cuda.cpp) says how its language spells what differs: types,
// literals, math functions, vectors, the hardware indices of a grid, and the kernel's signature.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "uop/uop.h"

namespace tg::renderer {

struct RenderedKernel {
  std::string name;    // the kernel function
  std::string entry;   // the symbol a Program calls: C's "name_call(void* const* bufs, const int64_t* vars)",
                       // OpenCL's kernel itself
  std::string source;  // self-contained source in the dialect's language
};

// What a kernel's source needs besides its body, collected while rendering it.
struct Prelude {
  std::map<std::string, DType> vectors;      // vector types used, by their name in the dialect
  std::map<std::string, std::string> helpers;  // functions the kernel calls, by name: their definitions
  bool half = false;                         // the 16-bit float conversion helpers
  bool fp64 = false;                         // float64 values (OpenCL enables cl_khr_fp64)
};

// A kernel parameter: a buffer (DEFINE_GLOBAL, a pointer) or a symbolic variable (int64).
struct Param {
  std::string type, name;
  bool buffer;
};

class CStyleLanguage {
 public:
  virtual ~CStyleLanguage() = default;
  virtual std::string name() const = 0;

  // Types. A value in registers: bool as the language's bool, 16-bit floats computed as float; in memory: bool as
  // one byte, 16-bit floats as their bits.
  virtual std::string scalar_type(DType dt) const = 0;  // a scalar value dtype: "float", "int64_t" / "long"
  virtual std::string bool_type() const = 0;
  virtual std::string vector_type(DType dt) const = 0;  // a vector of dt.count() elements
  std::string value_type(DType dt) const;               // registers: one of the three above
  std::string storage_type(DType dt) const;             // a buffer's element type

  // Literals: NaN and infinities, and the suffix of a 64-bit integer literal.
  virtual std::string nan_literal(DType dt) const = 0;
  virtual std::string inf_literal(DType dt) const = 0;
  virtual std::string int64_suffix(bool is_unsigned) const = 0;
  std::string literal(const uop::UOp& c) const;  // a CONST of its dtype ("5.0f", "-3", "7ULL")

  // Ops whose spelling differs. `x` etc. are rendered operands; `p` collects what the kernel must define.
  virtual std::string math(uop::Ops op, DType dt, const std::string& x, Prelude& p) const = 0;  // EXP2 LOG2 SQRT SIN
  virtual std::string bitcast(DType from, DType to, const std::string& x) const = 0;  // same-size value types
  virtual std::string fma(DType dt, const std::string& a, const std::string& b, const std::string& c, Prelude& p) const = 0;
  virtual std::string special(const uop::UOp& u) const;  // a grid index (SPECIAL); only grid dialects have them
  // A work-group's shared array and the barrier its work-items wait at (GROUP); only grid dialects have them.
  virtual std::string local_array(const std::string& type, const std::string& name, int64_t size) const;
  virtual std::string barrier() const;
  // A warp's tensor-core multiply (WMMA, codegen/tensor_core.cpp): `args` are its rendered sources, then the 4
  // values its product is added to; the result a float32 x 4. Only dialects whose devices state
  // DeviceCaps::tensor_cores have it.
  virtual std::string wmma(const uop::UOp& u, const std::vector<std::string>& args, Prelude& p) const;
  // How many float sums a kernel keeps going at once: a float add waits for the one before it (4 cycles), so a
  // kernel with a single accumulator does one add per 4 cycles. Below this many, an unrolled sum's terms go to
  // partial accumulators added together after the loop. 1 on grid dialects, whose other threads hide the wait.
  virtual int accumulator_chains() const { return 1; }
  // Whether signed int arithmetic wraps in the compiled language (C under -fwrapv). Where it does not (OpenCL C,
  // CUDA C++: overflow is undefined, and a compiler may widen or assume it away), a value's signed add, multiply
  // and negation go through the unsigned type; index math, which never overflows, stays signed.
  virtual bool signed_overflow_wraps() const { return false; }
  // `acc += x;` for a scalar float sum (of C type `type`) over a loop of symbolic length (no opt applies to it: a
  // softmax's sum of exponentials over a KV cache's positions), in a form that lets the compiler reorder that one
  // add, and so vectorize the loop. Only that add: x and the rest of the loop keep their order. "" where the
  // dialect has no such form.
  virtual std::string reordered_sum(const std::string&, const std::string&, const std::string&, Prelude&) const { return ""; }
  // A float32 max over a loop of symbolic length as an integer max of keys that order as the floats do (the bits,
  // the negatives' lower 31 flipped) and a flag for a NaN seen, which the compiler vectorizes (a float max where a
  // NaN wins it does not): `declare` follows the accumulator `acc`'s declaration, `update` takes a term x, `finish`
  // sets acc after the loop (NaN if one was seen). All "" where the dialect keeps the float max.
  struct KeyedMax {
    std::string declare, update, finish;
  };
  virtual KeyedMax keyed_max(const std::string&, const std::string&, Prelude&) const { return {}; }
  // acc (float32 x 16) plus two bfloat16 products per lane, a[0] * b0 + a[1] * b1: `a_first` the first of two
  // consecutive bfloat16 scalars in memory, b0_first and b1_first the first of 16 consecutive ones each (lvalues of
  // the first element). "" where the dialect has no such form (then the products are summed one by one).
  virtual std::string bf16_pair_dot(const std::string&, const std::string&, const std::string&, const std::string&, Prelude&) const {
    return "";
  }

  // Vectors (dt is the vector dtype). A mask is the int vector of a comparison: -1 where true, 0 where false.
  virtual std::string splat(DType dt, const std::string& scalar) const = 0;
  virtual std::string select(DType dt, const std::string& mask, const std::string& a, const std::string& b, Prelude& p) const = 0;
  virtual std::string convert(DType to, const std::string& x) const = 0;
  virtual std::string make_vector(DType dt, const std::vector<std::string>& elems) const = 0;
  virtual std::string element(const std::string& v, int64_t i) const = 0;  // one lane, assignable
  virtual std::string shuffle(DType to, const std::string& v, const std::vector<int64_t>& lanes) const = 0;
  virtual std::string vector_load(DType dt, const std::string& first) const = 0;  // n elements from `first` on
  // n 16-bit floats (float16 or bfloat16: dt) from `first` on, as a float32 vector
  virtual std::string half_vector_load(DType dt, const std::string& first, Prelude& p) const = 0;
  virtual std::string vector_store(DType dt, const std::string& first, const std::string& v) const = 0;
  // A float32 x 16 vector whose lane l is table[idx[l] & 15] (`idx` an int32 x 16 vector); "" where the language has
  // no such form (then the table is not made: the lanes compute their values themselves)
  virtual std::string lut16(const std::string&, const std::string&, Prelude&) const { return ""; }
  // A float32 vector `v` stored from `first` on as n 16-bit floats (dt: float16 or bfloat16 x n), each rounded to
  // nearest even as the scalar conversion rounds; "" where the language has no such form (then lane by lane).
  virtual std::string half_vector_store(DType, const std::string&, const std::string&, Prelude&) const { return ""; }

  // The whole source: prelude, the kernel (its parameters in order) and whatever entry the runtime calls.
  // `parallel_size`, when not empty, is the trip count of the outer loop threads split (core_start, core_end).
  virtual RenderedKernel finish(const std::string& name, const std::vector<Param>& params, const std::string& body,
                                const Prelude& p, const std::string& parallel_size) const = 0;
};

const CStyleLanguage& c_language();       // c.cpp
const CStyleLanguage& opencl_language();  // opencl.cpp
const CStyleLanguage& cuda_language();    // cuda.cpp
// The dialect called `dialect` (a DeviceCaps::dialect: "C", "OpenCL", "CUDA"); throws InternalError for an unknown one.
const CStyleLanguage& language(const std::string& dialect);

// The kernel in the dialect's language. `parallel`, when not null, is the outermost loop (a RANGE in uops): it runs
// over [core_start, core_end) so that threads can each run a part of it (the C dialect's entry reads them from
// vars[0] and vars[1]: the whole loop when vars is null).
RenderedKernel render(const CStyleLanguage& lang, const std::string& name, const std::vector<uop::UOp>& uops,
                      const uop::UOp* parallel = nullptr);

// The C dialect (c.cpp): GNU C for clang and gcc.
RenderedKernel render_c(const std::string& name, const std::vector<uop::UOp>& uops, const uop::UOp* parallel = nullptr);

// Shared by dialects (cstyle.cpp): float <-> 16-bit float conversions with round to nearest even, written in the
// C subset every dialect accepts. `f16_hw`, when given, opens tg_f16_to_f32's body with a dialect's faster way under
// an #if (its "#if ... return ...; #else" lines; the #endif is added).
std::string half_helpers(const std::string& f16_hw = "");

}  // namespace tg::renderer
