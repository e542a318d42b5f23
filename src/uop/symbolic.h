// The symbolic algebra: simplification rules for integer (index) math as PatternMatchers.
//
// Semantics: integer ops wrap at the dtype's width; IDIV truncates toward zero and MOD takes the dividend's sign,
// exactly as C's / and %. Every rule here is exact under those semantics, for negative values too.
#pragma once
#include "uop/pattern_matcher.h"

namespace tg::uop {

// Constant folding and identities that need no range analysis (x+0, x*1, where(c,x,x), ...).
const PatternMatcher& symbolic_simple();
// symbolic_simple plus everything that uses vmin/vmax: canonical sums, div/mod folding, comparisons, valids.
const PatternMatcher& symbolic();

// graph_rewrite(u, symbolic())
UOp simplify(const UOp& u);

// The clauses of a conjunction of bools, in order: a & (b & c) -> [a, b, c].
std::vector<UOp> split_and(const UOp& u);

// Simplifies `expr` assuming the bool `valid` holds (valid is a conjunction of comparisons like idx < 5).
UOp uop_given_valid(const UOp& valid, const UOp& expr);

}  // namespace tg::uop
