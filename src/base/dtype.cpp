#include "tg/dtype.h"

#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>
#include <vector>

#include "base/util.h"
#include "tg/context.h"
#include "tg/error.h"

namespace tg {

namespace {

struct ScalarInfo {
  const char* name;
  const char* c_type;
  int itemsize;
  bool is_float, is_int, is_unsigned;
};

constexpr std::array<ScalarInfo, 18> kInfo = {{
    {"bool", "bool", 1, false, false, false},
    {"int8", "int8_t", 1, false, true, false},
    {"uint8", "uint8_t", 1, false, true, true},
    {"int16", "int16_t", 2, false, true, false},
    {"uint16", "uint16_t", 2, false, true, true},
    {"int32", "int", 4, false, true, false},
    {"uint32", "unsigned int", 4, false, true, true},
    {"int64", "long long", 8, false, true, false},
    {"uint64", "unsigned long long", 8, false, true, true},
    {"fp8e4m3", "uint8_t", 1, true, false, false},
    {"fp8e5m2", "uint8_t", 1, true, false, false},
    {"fp8e4m3fnuz", "uint8_t", 1, true, false, false},
    {"fp8e5m2fnuz", "uint8_t", 1, true, false, false},
    {"float16", "_Float16", 2, true, false, false},
    {"bfloat16", "__bf16", 2, true, false, false},
    {"float32", "float", 4, true, false, false},
    {"float64", "double", 8, true, false, false},
    {"void", "void", 0, false, false, false},
}};

const ScalarInfo& info(ScalarType s) { return kInfo[static_cast<size_t>(s)]; }

// tinygrad's promotion lattice, over ranks: a scalar type's position in priority order with tinygrad's weak float
// between uint64 and the 8-bit floats. The widest ints meet the floats there, and a tensor holds it as the default
// float (int8 with uint64 is float32, as in tinygrad, not an 8-bit float). Its weak int is promote_with_scalar's.
constexpr int kWeakFloatRank = static_cast<int>(ScalarType::FP8E4M3);
int rank(ScalarType s) { return static_cast<int>(s) < kWeakFloatRank ? static_cast<int>(s) : static_cast<int>(s) + 1; }
ScalarType from_rank(int r) { return static_cast<ScalarType>(r < kWeakFloatRank ? r : r - 1); }

uint32_t direct_parents(int r) {
  auto bit = [](ScalarType t) { return 1u << rank(t); };
  using S = ScalarType;
  const uint32_t fp8s = bit(S::FP8E4M3) | bit(S::FP8E5M2) | bit(S::FP8E4M3FNUZ) | bit(S::FP8E5M2FNUZ);
  if (r == kWeakFloatRank) return fp8s;
  switch (from_rank(r)) {
    case S::Bool: return bit(S::Int8) | bit(S::UInt8);
    case S::Int8: return bit(S::Int16);
    case S::Int16: return bit(S::Int32);
    case S::Int32: return bit(S::Int64);
    case S::UInt8: return bit(S::Int16) | bit(S::UInt16);
    case S::UInt16: return bit(S::Int32) | bit(S::UInt32);
    case S::UInt32: return bit(S::Int64) | bit(S::UInt64);
    case S::Int64:
    case S::UInt64: return 1u << kWeakFloatRank;
    case S::FP8E4M3:
    case S::FP8E5M2:
    case S::FP8E4M3FNUZ:
    case S::FP8E5M2FNUZ: return bit(S::Float16) | bit(S::BFloat16);
    case S::Float16: return bit(S::Float32);
    case S::BFloat16: return bit(S::Float32);
    case S::Float32: return bit(S::Float64);
    default: return 0;
  }
}

// the rank and everything above it in the lattice, as a bitset over ranks
uint32_t ancestors(int r) {
  uint32_t out = 1u << r, frontier = out;
  while (frontier) {
    uint32_t next = 0;
    for (int i = 0; i <= kNumValueScalarTypes; i++)
      if (frontier & (1u << i)) next |= direct_parents(i);
    frontier = next & ~out;
    out |= next;
  }
  return out;
}

}  // namespace

int DType::itemsize() const { return info(scalar_).itemsize * count_; }
const char* DType::c_type() const { return info(scalar_).c_type; }
bool DType::is_float() const { return !is_ptr() && info(scalar_).is_float; }
bool DType::is_int() const { return !is_ptr() && info(scalar_).is_int; }
bool DType::is_unsigned() const { return !is_ptr() && info(scalar_).is_unsigned; }

std::string DType::name() const {
  std::string s = info(scalar_).name;
  if (count_ != 1) s += ".vec(" + std::to_string(count_) + ")";
  if (addr_ == AddrSpace::Global) s += "*";
  if (addr_ == AddrSpace::Local) s += "* [local]";
  if (addr_ == AddrSpace::Reg) s += "* [reg]";
  return s;
}

std::ostream& operator<<(std::ostream& os, const DType& dt) { return os << "dtypes." << dt.name(); }

ConstValue DType::min() const {
  DType s = scalar();
  if (s.is_bool()) return false;
  if (s.is_float()) return -std::get<double>(s.max());
  if (s.is_unsigned()) return uint64_t{0};
  if (s.is_int()) return static_cast<int64_t>(s.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (s.bits() - 1)));
  throw DTypeError("dtype.min", "dtype " + name() + " has no values");
}

ConstValue DType::max() const {
  DType s = scalar();
  if (s.is_bool()) return true;
  if (s.is_fp8()) {
    Fp8Format f = fp8_format(s);
    if (!f.has_inf) return static_cast<double>(fp8_bits_to_float(f.max_code, s));
  }
  if (s.is_float()) return std::numeric_limits<double>::infinity();
  if (s.is_unsigned()) return s.bits() == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << s.bits()) - 1;
  if (s.is_int()) return s.bits() == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (s.bits() - 1)) - 1;
  throw DTypeError("dtype.max", "dtype " + name() + " has no values");
}

std::optional<DType> dtype_from_name(const std::string& raw) {
  using namespace dtypes;
  std::string n;
  for (char c : raw) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::array<std::pair<const char*, DType>, 32> names = {{
      {"bool", bool_},      {"bool_", bool_},      {"int8", int8},       {"char", int8},       {"uint8", uint8},
      {"uchar", uint8},     {"int16", int16},      {"short", int16},     {"uint16", uint16},   {"ushort", uint16},
      {"int32", int32},     {"int", int32},        {"uint32", uint32},   {"uint", uint32},     {"int64", int64},
      {"long", int64},      {"uint64", uint64},    {"ulong", uint64},    {"float16", float16}, {"half", float16},
      {"bfloat16", bfloat16}, {"float32", float32}, {"float", float32},  {"float64", float64},
      {"fp8e4m3", fp8e4m3}, {"float8_e4m3", fp8e4m3}, {"fp8e5m2", fp8e5m2}, {"float8_e5m2", fp8e5m2},
      {"fp8e4m3fnuz", fp8e4m3fnuz}, {"float8_e4m3fnuz", fp8e4m3fnuz}, {"fp8e5m2fnuz", fp8e5m2fnuz},
      {"float8_e5m2fnuz", fp8e5m2fnuz}}};
  for (const auto& [name, dt] : names)
    if (n == name) return dt;
  if (n == "double") return float64;
  return std::nullopt;
}

namespace dtypes {
namespace {
// a setting naming a dtype (DEFAULT_FLOAT, DEFAULT_INT), parsed again only when a Context begins or ends: it is
// read for every float literal and promotion
DType dtype_setting(const char* key, DType fallback, bool is_float) {
  struct Cached {
    uint64_t generation = ~uint64_t{0};
    std::string value;
    DType dtype;
  };
  thread_local Cached cache[2];
  Cached& c = cache[is_float ? 0 : 1];
  uint64_t g = base::context_generation();
  if (c.generation == g) return c.dtype;
  std::string v = getenv_str(key, "");
  DType dt = fallback;
  if (!v.empty()) {
    std::optional<DType> named = dtype_from_name(v);
    if (!named || (is_float ? !named->is_float() : !named->is_int()))
      throw ArgumentError(key, "'" + v + "' is not " + (is_float ? "a float dtype (float16, bfloat16, float32, float64)" : "an int dtype"));
    dt = *named;
  }
  c = {g, v, dt};
  return dt;
}
}  // namespace

DType default_float() { return dtype_setting("DEFAULT_FLOAT", float32, true); }
DType default_int() { return dtype_setting("DEFAULT_INT", int32, false); }

std::span<const DType> all() {
  static const std::array<DType, kNumValueScalarTypes> kAll = {
      bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz,
      float16, bfloat16, float32, float64};
  return kAll;
}
}  // namespace dtypes

DType least_upper_dtype(std::initializer_list<DType> dts) {
  if (dts.size() == 0) throw ArgumentError("least_upper_dtype", "needs at least one dtype");
  uint32_t common = ~0u;
  for (const DType& d : dts) {
    if (d.is_ptr() || d.count() != 1 || d.scalar_type() == ScalarType::Void)
      throw DTypeError("least_upper_dtype", "cannot promote " + d.name());
    common &= ancestors(rank(d.scalar_type()));
  }
  // float64 is above everything, so the intersection is never empty; the lowest priority wins
  int r = std::countr_zero(common);
  return r == kWeakFloatRank ? dtypes::default_float() : DType(from_rank(r));
}

DType least_upper_float(DType dt) { return dt.is_float() ? dt : least_upper_dtype({dt, dtypes::default_float()}); }

DType promote_with_scalar(DType x, ScalarKind scalar) {
  if (x.is_float()) return x;
  if (x.is_int() && scalar != ScalarKind::Float) return x;
  DType s = scalar == ScalarKind::Bool ? dtypes::bool_ : scalar == ScalarKind::Int ? dtypes::default_int() : dtypes::default_float();
  return least_upper_dtype({x, s});
}

// ---- 16-bit floats ----

uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf / nan
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;  // may carry into the exponent, which is right
  return static_cast<uint16_t>(sign | h);
}

namespace {

// d rounded to a float by round-to-odd: an inexact result keeps its last bit set, so rounding it again to a
// narrower format (11 or 8 significant bits of 24) gives what one rounding of d would
float to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d && (std::bit_cast<uint32_t>(f) & 1u) == 0)
    f = std::nextafter(f, d > static_cast<double>(f) ? INFINITY : -INFINITY);  // the odd neighbour on d's side
  return f;
}

}  // namespace

uint16_t double_to_half_bits(double d) { return float_to_half_bits(to_float_round_odd(d)); }
uint16_t double_to_bf16_bits(double d) { return float_to_bf16_bits(to_float_round_odd(d)); }

float half_bits_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // keep nan a nan
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// ---- 8-bit floats ----

Fp8Format fp8_format(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::FP8E4M3: return {3, 7, false, false, 0x7e};
    case ScalarType::FP8E5M2: return {2, 15, false, true, 0x7b};
    case ScalarType::FP8E4M3FNUZ: return {3, 8, true, false, 0x7f};
    case ScalarType::FP8E5M2FNUZ: return {2, 16, true, false, 0x7f};
    default: throw DTypeError("fp8", dt.name() + " is not an 8-bit float");
  }
}

uint8_t double_to_fp8_bits(double d, DType dt) {
  const Fp8Format f = fp8_format(dt);
  uint8_t sign = std::signbit(d) ? 0x80 : 0;
  if (std::isnan(d) || std::isinf(d)) {
    if (f.fnuz) return 0x80;
    if (f.has_inf) return static_cast<uint8_t>(sign | (std::isinf(d) ? 0x7c : 0x7f));
    return static_cast<uint8_t>(sign | 0x7f);  // E4M3 has no infinity: NaN
  }
  // the significand's 53 bits cut at the fp8's quantum (larger below the smallest normal), rounded to nearest even
  uint64_t bits = std::bit_cast<uint64_t>(d) & ~(uint64_t{1} << 63);
  int exp = static_cast<int>(bits >> 52) - 1023, min_exp = 1 - f.bias;
  uint32_t code = 0;
  if (bits >> 52 == 0) code = 0;                  // zero or a double subnormal: far below the fp8's range
  else if (exp > 17) code = f.max_code;           // far above it: saturates
  else {
    int shift = 52 - f.mant_bits + (exp < min_exp ? min_exp - exp : 0);
    if (shift <= 53) {
      uint64_t sig = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
      uint64_t q = sig >> shift, rem = sig & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
      if (rem > half || (rem == half && (q & 1))) q++;
      // a normal value's code is its biased exponent above its mantissa; a carry of q moves it up one binade
      code = static_cast<uint32_t>(q) + (exp >= min_exp ? static_cast<uint32_t>(exp + f.bias - 1) << f.mant_bits : 0);
    }
    if (code > f.max_code) code = f.max_code;
  }
  if (code == 0 && f.fnuz) return 0;
  return static_cast<uint8_t>(sign | code);
}

float fp8_bits_to_float(uint8_t b, DType dt) {
  const Fp8Format f = fp8_format(dt);
  int mag = b & 0x7f, exp = mag >> f.mant_bits, mant = mag & ((1 << f.mant_bits) - 1), top = 0x7f >> f.mant_bits;
  float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (f.fnuz && b == 0x80) return std::numeric_limits<float>::quiet_NaN();
  if (!f.fnuz && f.has_inf && exp == top) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (!f.fnuz && !f.has_inf && mag == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mant_bits);
  return sign * std::ldexp(static_cast<float>(mant | (1 << f.mant_bits)), exp - f.bias - f.mant_bits);
}

// ---- constants ----

double const_to_double(const ConstValue& v) {
  return std::visit([](auto x) { return static_cast<double>(x); }, v);
}

int64_t const_to_int(const ConstValue& v) {
  return std::visit(
      [](auto x) -> int64_t {
        using T = decltype(x);
        if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(x)) return 0;
          if (x >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
          if (x <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
          return static_cast<int64_t>(x);
        } else {
          return static_cast<int64_t>(x);
        }
      },
      v);
}

uint64_t const_to_bits(const ConstValue& v) {
  return std::visit(
      [](auto x) -> uint64_t {
        if constexpr (std::is_same_v<decltype(x), double>) return std::bit_cast<uint64_t>(x);
        else return static_cast<uint64_t>(x);
      },
      v);
}

bool const_equal(const ConstValue& a, const ConstValue& b) {
  if (a.index() == b.index()) return a == b;
  if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) return const_to_double(a) == const_to_double(b);
  // mixing signed and unsigned: equal when both are the same non-negative number
  auto as_u = [](const ConstValue& v, bool& neg) {
    if (auto* i = std::get_if<int64_t>(&v)) { neg = *i < 0; return static_cast<uint64_t>(*i); }
    if (auto* u = std::get_if<uint64_t>(&v)) { neg = false; return *u; }
    neg = false;
    return static_cast<uint64_t>(std::get<bool>(v));
  };
  bool na, nb;
  uint64_t ua = as_u(a, na), ub = as_u(b, nb);
  return na == nb && ua == ub;
}

std::string const_repr(const ConstValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  double d = std::get<double>(v);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(17);
  os << d;
  std::string s = os.str();
  // shortest form that reads back exactly
  for (int p = 1; p <= 17; p++) {
    std::ostringstream t;
    t.precision(p);
    t << d;
    if (std::stod(t.str()) == d) { s = t.str(); break; }
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

ConstValue cast_const(const ConstValue& v, DType dt) {
  DType s = dt.scalar();
  if (s.is_bool()) return std::visit([](auto x) { return static_cast<bool>(x != 0); }, v);
  if (s.is_float()) {
    double d = const_to_double(v);
    switch (s.scalar_type()) {
      case ScalarType::Float32: return static_cast<double>(static_cast<float>(d));
      case ScalarType::Float16: return static_cast<double>(half_bits_to_float(double_to_half_bits(d)));
      case ScalarType::BFloat16: return static_cast<double>(bf16_bits_to_float(double_to_bf16_bits(d)));
      case ScalarType::Float64: return d;
      default: return static_cast<double>(fp8_bits_to_float(double_to_fp8_bits(d, s), s));
    }
  }
  if (s.is_int()) {
    // ints wrap to the dtype's width; floats convert through int64 first (C truncation)
    uint64_t bits = std::holds_alternative<double>(v) ? static_cast<uint64_t>(const_to_int(v))
                                                      : std::visit([](auto x) { return static_cast<uint64_t>(x); }, v);
    int nbits = s.bits();
    if (nbits < 64) bits &= (uint64_t{1} << nbits) - 1;
    if (s.is_unsigned()) return bits;
    if (nbits < 64 && (bits >> (nbits - 1)) & 1) bits |= ~((uint64_t{1} << nbits) - 1);  // sign-extend
    return static_cast<int64_t>(bits);
  }
  throw DTypeError("cast_const", "cannot make a constant of dtype " + dt.name());
}

}  // namespace tg
