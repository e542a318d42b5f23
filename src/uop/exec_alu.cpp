#include "uop/exec_alu.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tg::uop {

namespace {

std::optional<ConstValue> float_alu(Ops op, const double* a, size_t n) {
  switch (op) {
    case Ops::EXP2: return std::exp2(a[0]);
    case Ops::LOG2: return std::log2(a[0]);
    case Ops::SIN: return std::sin(a[0]);
    case Ops::SQRT: return std::sqrt(a[0]);
    case Ops::RECIPROCAL: return 1.0 / a[0];
    case Ops::NEG: return -a[0];
    case Ops::ADD: return a[0] + a[1];
    case Ops::MUL: return a[0] * a[1];
    case Ops::MAX: return std::isnan(a[0]) || std::isnan(a[1]) ? std::nan("") : std::max(a[0], a[1]);
    case Ops::CMPLT: return a[0] < a[1];
    case Ops::CMPNE: return a[0] != a[1];
    case Ops::MULACC: return a[0] * a[1] + a[2];
    default: (void)n; return std::nullopt;
  }
}

// signed (is_signed) or unsigned integer arithmetic on 64-bit patterns; wrapping to the dtype happens after
std::optional<ConstValue> int_alu(Ops op, const uint64_t* a, bool is_signed, int bits) {
  auto s = [&](int i) { return static_cast<int64_t>(a[i]); };
  switch (op) {
    case Ops::NEG: return 0 - a[0];
    case Ops::ADD: return a[0] + a[1];
    case Ops::MUL: return a[0] * a[1];
    case Ops::MULACC: return a[0] * a[1] + a[2];
    case Ops::MAX: return is_signed ? static_cast<uint64_t>(std::max(s(0), s(1))) : std::max(a[0], a[1]);
    case Ops::CMPLT: return is_signed ? s(0) < s(1) : a[0] < a[1];
    case Ops::CMPNE: return a[0] != a[1];
    case Ops::AND: return a[0] & a[1];
    case Ops::OR: return a[0] | a[1];
    case Ops::XOR: return a[0] ^ a[1];
    case Ops::IDIV:
    case Ops::MOD: {
      if (a[1] == 0) return std::nullopt;
      if (!is_signed) return op == Ops::IDIV ? a[0] / a[1] : a[0] % a[1];
      if (s(0) == std::numeric_limits<int64_t>::min() && s(1) == -1)  // the one overflowing case: wraps
        return op == Ops::IDIV ? a[0] : uint64_t{0};
      return static_cast<uint64_t>(op == Ops::IDIV ? s(0) / s(1) : s(0) % s(1));
    }
    case Ops::SHL:
    case Ops::SHR: {
      if (s(1) < 0 || s(1) >= bits) return std::nullopt;
      if (op == Ops::SHL) return a[0] << a[1];
      return is_signed ? static_cast<uint64_t>(s(0) >> s(1)) : a[0] >> a[1];
    }
    default: return std::nullopt;
  }
}


ConstValue bitcast_const(const ConstValue& v, DType from, DType to) {
  uint64_t bits;
  switch (from.scalar_type()) {
    case ScalarType::Float32: bits = std::bit_cast<uint32_t>(static_cast<float>(std::get<double>(v))); break;
    case ScalarType::Float64: bits = std::bit_cast<uint64_t>(std::get<double>(v)); break;
    case ScalarType::Float16: bits = float_to_half_bits(static_cast<float>(std::get<double>(v))); break;
    case ScalarType::BFloat16: bits = float_to_bf16_bits(static_cast<float>(std::get<double>(v))); break;
    default: bits = from.is_fp8() ? double_to_fp8_bits(std::get<double>(v), from) : const_to_bits(v);
  }
  if (from.bits() < 64) bits &= (uint64_t{1} << from.bits()) - 1;
  switch (to.scalar_type()) {
    case ScalarType::Float32: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case ScalarType::Float64: return std::bit_cast<double>(bits);
    case ScalarType::Float16: return static_cast<double>(half_bits_to_float(static_cast<uint16_t>(bits)));
    case ScalarType::BFloat16: return static_cast<double>(bf16_bits_to_float(static_cast<uint16_t>(bits)));
    default:
      if (to.is_fp8()) return static_cast<double>(fp8_bits_to_float(static_cast<uint8_t>(bits), to));
      return cast_const(ConstValue{bits}, to);
  }
}

}  // namespace

std::optional<ConstValue> exec_alu(Ops op, DType out, DType in, std::span<const ConstValue> args) {
  if (op == Ops::CAST) return cast_const(args[0], out);
  if (op == Ops::BITCAST) return bitcast_const(args[0], in, out);
  if (op == Ops::WHERE) return cast_const(std::get<bool>(cast_const(args[0], dtypes::bool_)) ? args[1] : args[2], out);
  std::optional<ConstValue> r;
  if (in.is_float()) {
    double a[3];
    for (size_t i = 0; i < args.size() && i < 3; i++) a[i] = const_to_double(args[i]);
    r = float_alu(op, a, args.size());
  } else {
    uint64_t a[3];
    for (size_t i = 0; i < args.size() && i < 3; i++) a[i] = const_to_bits(args[i]);
    if (in.is_bool()) {
      // bools are 0/1: ADD is OR, MUL is AND, and a comparison compares the bits
      if (op == Ops::ADD) op = Ops::OR;
      if (op == Ops::MUL) op = Ops::AND;
    }
    r = int_alu(op, a, !in.is_unsigned() && !in.is_bool(), in.is_bool() ? 1 : in.bits());
  }
  if (!r) return r;
  return cast_const(*r, out);
}

}  // namespace tg::uop
