// Linear forms: an integer expression as sum(coeff_i * term_i) + constant, the canonical shape of index math.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "uop/uop.h"

namespace tg::uop {

struct LinearForm {
  DType dtype;
  std::vector<std::pair<UOp, int64_t>> terms;  // sorted by term_less, distinct, no zero coefficients
  int64_t constant = 0;

  UOp build() const;  // left-associated sum of terms in order, constant last
  // bounds of the value as exact integers (from the terms' vmin/vmax), or nullopt if it may leave the dtype's range
  std::optional<std::pair<int64_t, int64_t>> exact_range() const;
};

// The deterministic order of terms in a canonical sum: variables by name, then other nodes by structure.
bool term_less(const UOp& a, const UOp& b);

// Flattens ADDs, constant MULs and NEG below u into a linear form, combining like terms and the pair
// (x//c)*c + x%c into x. Only for integer dtypes; nullopt for sums of more than max_terms terms, which are left
// as they are (normalizing them at every node would be quadratic).
std::optional<LinearForm> decompose(const UOp& u, size_t max_terms = 64);

// Wraps v to the dtype's width (two's complement), as the hardware would.
int64_t wrap_to(DType dt, int64_t v);

}  // namespace tg::uop
