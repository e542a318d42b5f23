// Ops: the enum, names and groups of every UOp op, generated from ops.def.
#pragma once
#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace tg::uop {

enum class Ops : uint8_t {
#define OP(name, groups) name,
#include "uop/ops.def"
};

inline constexpr int kNumOps = 0
#define OP(name, groups) +1
#include "uop/ops.def"
    ;

std::string_view op_name(Ops op);  // "ADD"
// The C infix operator of a binary op ("+", "/", "%", "<", ...), or nullptr for ops that are not infix in C.
const char* infix_symbol(Ops op);

// A set of ops (a bitset over the enum), for UPat and the groups below.
class OpSet {
 public:
  constexpr OpSet() = default;
  OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) bits_.set(static_cast<size_t>(o));
  }
  bool contains(Ops o) const { return bits_.test(static_cast<size_t>(o)); }
  OpSet operator|(const OpSet& o) const { OpSet r; r.bits_ = bits_ | o.bits_; return r; }
  OpSet operator-(const OpSet& o) const { OpSet r; r.bits_ = bits_ & ~o.bits_; return r; }
  bool empty() const { return bits_.none(); }
  size_t size() const { return bits_.count(); }
  template <class F> void for_each(F&& f) const {
    for (int i = 0; i < kNumOps; i++)
      if (bits_.test(i)) f(static_cast<Ops>(i));
  }

 private:
  std::bitset<kNumOps> bits_;
};

// Op groups, as tinygrad's GroupOp.
namespace GroupOp {
const OpSet& Unary();
const OpSet& Binary();
const OpSet& Ternary();
const OpSet& ALU();
const OpSet& Movement();
const OpSet& Commutative();
const OpSet& Associative();
const OpSet& Idempotent();
const OpSet& Comparison();
}  // namespace GroupOp

}  // namespace tg::uop
