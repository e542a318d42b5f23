// Evaluating ALU ops on constants, with the dtype's exact semantics (wrapping ints, truncating IDIV/MOD).
#pragma once
#include <optional>
#include <span>

#include "uop/uop.h"

namespace tg::uop {

// The value of `op` over `args` (each canonical for in_dtype), as a constant of out_dtype. Empty when the result is
// undefined: integer division or modulo by zero, a shift by a negative amount or by the width or more.
std::optional<ConstValue> exec_alu(Ops op, DType out_dtype, DType in_dtype, std::span<const ConstValue> args);

}  // namespace tg::uop
