// Rule callbacks of the symbolic algebra that live in their own files (internal to src/uop).
#pragma once
#include "uop/upat.h"

namespace tg::uop {

// divmod.cpp
UOp fold_divmod(const Match& m);       // root: IDIV/MOD with captures x, c
UOp fold_symbolic_divmod(const Match& m);  // root: IDIV/MOD with captures x, d (d not a constant)
UOp fold_nested_div(const Match& m);   // (x//c1)//c2
UOp fold_nested_mod(const Match& m);   // (x%c1)%c2
UOp fold_div_add_div(const Match& m);  // (x//c + a)//d

// valid.cpp
UOp simplify_valid(const Match& m);  // root: AND of bools

}  // namespace tg::uop
