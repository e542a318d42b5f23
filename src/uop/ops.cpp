#include "uop/ops.h"

#include <array>

namespace tg::uop {

namespace {
enum GroupFlag : uint32_t {
  ALU = 1, UNARY = 2, BINARY = 4, TERNARY = 8, MOVEMENT = 16, COMMUTATIVE = 32, ASSOCIATIVE = 64, IDEMPOTENT = 128,
  COMPARISON = 256,
};
constexpr uint32_t kAlu = ALU, kUnary = UNARY, kBinary = BINARY, kTernary = TERNARY, kMovement = MOVEMENT,
                   kCommutative = COMMUTATIVE, kAssociative = ASSOCIATIVE, kIdempotent = IDEMPOTENT,
                   kComparison = COMPARISON;

struct OpInfo {
  std::string_view name;
  uint32_t groups;
};

constexpr std::array<OpInfo, kNumOps> kOpInfo = {{
#define OP(name, groups) {#name, groups},
#include "uop/ops.def"
}};

OpSet ops_with(uint32_t flag) {
  OpSet s;
  for (int i = 0; i < kNumOps; i++)
    if (kOpInfo[i].groups & flag) s = s | OpSet{static_cast<Ops>(i)};
  return s;
}
}  // namespace

std::string_view op_name(Ops op) { return kOpInfo[static_cast<size_t>(op)].name; }

const char* infix_symbol(Ops op) {
  switch (op) {
    case Ops::ADD: return "+";
    case Ops::MUL: return "*";
    case Ops::IDIV: return "/";
    case Ops::MOD: return "%";
    case Ops::CMPLT: return "<";
    case Ops::CMPNE: return "!=";
    case Ops::AND: return "&";
    case Ops::OR: return "|";
    case Ops::XOR: return "^";
    case Ops::SHL: return "<<";
    case Ops::SHR: return ">>";
    default: return nullptr;
  }
}

namespace GroupOp {
#define GROUP(fn, flag)               \
  const OpSet& fn() {                 \
    static const OpSet s = ops_with(flag); \
    return s;                         \
  }
GROUP(Unary, kUnary)
GROUP(Binary, kBinary)
GROUP(Ternary, kTernary)
GROUP(ALU, kAlu)
GROUP(Movement, kMovement)
GROUP(Commutative, kCommutative)
GROUP(Associative, kAssociative)
GROUP(Idempotent, kIdempotent)
GROUP(Comparison, kComparison)
#undef GROUP
}  // namespace GroupOp

}  // namespace tg::uop
