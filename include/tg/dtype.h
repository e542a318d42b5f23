// DType: the element types of tinygrad.cpp and tinygrad's promotion rules.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <variant>

namespace tg {

// Scalar kinds in tinygrad's priority order: promotion picks the lowest common ancestor by this order.
// The 8-bit floats are OCP's E4M3 (no infinity, 448 at most) and E5M2, and the FNUZ variants (one NaN, no -0).
enum class ScalarType : uint8_t {
  Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ,
  Float16, BFloat16, Float32, Float64,
  Void,  // no value (STORE, SINK)
};
inline constexpr int kNumValueScalarTypes = 17;  // all but Void

// A constant's value, stored canonically for its dtype: bool for bool, int64 for signed ints, uint64 for unsigned
// ints, double for floats (rounded to the dtype's precision).
using ConstValue = std::variant<bool, int64_t, uint64_t, double>;

// Where a pointer points; None for a value.
enum class AddrSpace : uint8_t { None, Global, Local, Reg };

class DType {
 public:
  constexpr DType() = default;
  constexpr DType(ScalarType s, int count = 1, AddrSpace addr = AddrSpace::None) : scalar_(s), count_(count), addr_(addr) {}

  constexpr ScalarType scalar_type() const { return scalar_; }
  constexpr int count() const { return count_; }  // vector width, 1 for scalars
  constexpr bool is_ptr() const { return addr_ != AddrSpace::None; }
  constexpr AddrSpace addr_space() const { return addr_; }

  constexpr DType scalar() const { return DType(scalar_); }  // the element type: drops vector width and pointer
  constexpr DType base() const { return DType(scalar_, count_); }  // the pointee of a pointer
  constexpr DType vec(int n) const { return DType(scalar_, n, addr_); }
  constexpr DType ptr(AddrSpace addr = AddrSpace::Global) const { return DType(scalar_, count_, addr); }

  int itemsize() const;     // bytes of one element (times the vector width)
  std::string name() const;  // "float32", "int8", "float32.vec(4)", "float32*"
  const char* c_type() const;  // C spelling of the scalar: "float", "int8_t", "_Float16" ...
  bool is_float() const;
  bool is_int() const;  // signed or unsigned integer (not bool)
  bool is_unsigned() const;
  bool is_bool() const { return scalar_ == ScalarType::Bool && !is_ptr(); }
  // float16 or bfloat16, of any vector width: stored as 16 bits, computed in float32
  bool is_half() const { return (scalar_ == ScalarType::Float16 || scalar_ == ScalarType::BFloat16) && !is_ptr(); }
  // an 8-bit float: stored as its byte, computed in float32 (rounded to its format after every op)
  bool is_fp8() const {
    return scalar_ >= ScalarType::FP8E4M3 && scalar_ <= ScalarType::FP8E5M2FNUZ && !is_ptr();
  }
  int bits() const { return itemsize() * 8; }
  ConstValue min() const;  // the lowest value (-inf for floats; the lowest finite one for 8-bit floats without infinities)
  ConstValue max() const;  // the highest value (+inf for floats; likewise)

  friend constexpr bool operator==(const DType&, const DType&) = default;

 private:
  ScalarType scalar_ = ScalarType::Void;
  int count_ = 1;
  AddrSpace addr_ = AddrSpace::None;
};

std::ostream& operator<<(std::ostream& os, const DType& dt);  // prints "dtypes.float32"

namespace dtypes {
inline constexpr DType bool_{ScalarType::Bool};
inline constexpr DType int8{ScalarType::Int8}, int16{ScalarType::Int16}, int32{ScalarType::Int32}, int64{ScalarType::Int64};
inline constexpr DType uint8{ScalarType::UInt8}, uint16{ScalarType::UInt16}, uint32{ScalarType::UInt32},
    uint64{ScalarType::UInt64};
inline constexpr DType float16{ScalarType::Float16}, bfloat16{ScalarType::BFloat16}, float32{ScalarType::Float32},
    float64{ScalarType::Float64};
inline constexpr DType fp8e4m3{ScalarType::FP8E4M3}, fp8e5m2{ScalarType::FP8E5M2}, fp8e4m3fnuz{ScalarType::FP8E4M3FNUZ},
    fp8e5m2fnuz{ScalarType::FP8E5M2FNUZ};
inline constexpr DType void_{ScalarType::Void};
// The dtype of floating-point data given none (float literals, Tensor::rand, and int -> float results such as exp
// and division): the DEFAULT_FLOAT setting, from the environment or a tg::Context ("float16", "half", "bfloat16",
// "float32", "float64"), else float32. tinygrad's dtypes.default_float. ArgumentError for a name that is not a float
// dtype.
DType default_float();
// The dtype of integer data given none: the DEFAULT_INT setting (an int dtype's name), else int32.
DType default_int();
// every value dtype, in priority order
std::span<const DType> all();
}  // namespace dtypes

// A value dtype by tinygrad's name or alias, in any case: "float32", "float", "half", "bfloat16", "int", "uchar",
// "bool" ...; nullopt for an unknown name.
std::optional<DType> dtype_from_name(const std::string& name);

// The smallest dtype every argument promotes to, over tinygrad's promotion lattice.
DType least_upper_dtype(std::initializer_list<DType> dts);
// least_upper_dtype(dt, default_float()) unless dt is already a float: the dtype of exp/log/division results.
DType least_upper_float(DType dt);
// Weak scalars: the result dtype of `x op scalar` where the scalar is a C++ bool, integer or floating value.
// A float tensor keeps its dtype; an int tensor keeps it against an int scalar; otherwise the scalar's default
// dtype (bool, default_int(), default_float()) joins the promotion.
enum class ScalarKind { Bool, Int, Float };
DType promote_with_scalar(DType x, ScalarKind scalar);

// Constants: put a value into dtype's canonical form (wrapping ints to the dtype's width, rounding floats to its
// precision), and read one as a number.
ConstValue cast_const(const ConstValue& v, DType dt);
double const_to_double(const ConstValue& v);
int64_t const_to_int(const ConstValue& v);  // bool -> 0/1, uint64 keeps its bit pattern, floats truncate
uint64_t const_to_bits(const ConstValue& v);  // the stored bits: a double's IEEE bits, an integer's two's complement
std::string const_repr(const ConstValue& v);
bool const_equal(const ConstValue& a, const ConstValue& b);  // by numeric value, across representations

// float <-> 16-bit float conversions (round to nearest even), shared by folding and the runtime.
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(float f);
// from a double with one rounding to nearest even (through a float, 65519.999 rounded twice to an infinite half)
uint16_t double_to_half_bits(double d);
uint16_t double_to_bf16_bits(double d);
float bf16_bits_to_float(uint16_t b);
// The layout of an 8-bit float dtype (DTypeError for another dtype).
struct Fp8Format {
  int mant_bits, bias;
  bool fnuz;         // no infinities, no -0, 0x80 the one NaN
  bool has_inf;      // E5M2: IEEE-style infinities, and NaNs, at the top exponent
  uint8_t max_code;  // the code of the largest finite value, where conversions saturate
};
Fp8Format fp8_format(DType dt);
// double <-> 8-bit float (dt one of the fp8 dtypes) as tinygrad's float_to_fp8 / fp8_to_float: round to nearest
// even, saturating at the largest finite value; NaN (and E4M3's infinities) to NaN; FNUZ's zero is never negative.
uint8_t double_to_fp8_bits(double d, DType dt);
float fp8_bits_to_float(uint8_t b, DType dt);

}  // namespace tg
