// merge_views: one View for two stacked ones, found through the symbolic algebra.
//
// The composed index and valid are built over variables for upper's positions and simplified. When the index comes
// out linear in the variables (index = offset + sum(stride_k * y_k)) and the valid as per-variable bounds, those
// ARE a View, exact wherever the composition is valid, because every simplification rule is exact.
#include "shape/shapetracker.h"
#include "uop/linear.h"
#include "uop/symbolic.h"

namespace tg::shape {

using uop::Ops;
using uop::UOp;

namespace {

// The per-dimension ranges a simplified valid states, or nullopt when it says something else.
std::optional<std::vector<std::pair<int64_t, int64_t>>> valid_as_mask(const UOp& valid, const std::vector<UOp>& vars, const std::vector<int64_t>& shape) {
  std::vector<std::pair<int64_t, int64_t>> mask;
  for (int64_t s : shape) mask.emplace_back(0, s);
  auto axis_of = [&](const UOp& u) -> std::optional<size_t> {
    for (size_t i = 0; i < vars.size(); i++)
      if (vars[i] == u) return i;
    return std::nullopt;
  };
  for (const UOp& c : uop::split_and(valid)) {
    if (c.is_const() && tg::const_to_int(c.const_value())) continue;
    // y < k
    if (c.op() == Ops::CMPLT && c.src(1).is_const()) {
      if (auto a = axis_of(c.src(0))) {
        mask[*a].second = std::min(mask[*a].second, tg::const_to_int(c.src(1).const_value()));
        continue;
      }
    }
    // !(y < k), as (y < k) != true
    if (c.op() == Ops::CMPNE && c.src(1).is_const() && tg::const_to_int(c.src(1).const_value()) == 1 &&
        c.src(0).op() == Ops::CMPLT && c.src(0).src(1).is_const()) {
      if (auto a = axis_of(c.src(0).src(0))) {
        mask[*a].first = std::max(mask[*a].first, tg::const_to_int(c.src(0).src(1).const_value()));
        continue;
      }
    }
    return std::nullopt;
  }
  return mask;
}

bool concrete(const View& v) {
  if (is_symbolic(v.shape) || is_symbolic(v.strides) || v.offset.is_symbolic()) return false;
  if (v.mask)
    for (const auto& [b, e] : *v.mask)
      if (b.is_symbolic() || e.is_symbolic()) return false;
  return true;
}

}  // namespace

std::optional<View> merge_views(const View& lower, const View& upper) {
  const size_t n = upper.ndim();
  if (upper.size() == Dim(0) || lower.contiguous) return upper;
  if (upper.fully_masked()) return upper;
  if (upper.contiguous && upper.size() == lower.size()) return lower.reshape(upper.shape);
  // the algebra below works on concrete Views: symbolic ones stay stacked (correct, with div/mod by their sizes)
  if (!concrete(lower) || !concrete(upper)) return std::nullopt;
  std::vector<int64_t> upper_shape = ints(upper.shape, "merge_views");

  std::vector<UOp> vars;
  for (size_t i = 0; i < n; i++)
    vars.push_back(upper_shape[i] == 1 ? UOp::const_(dtypes::int64, 0)
                                       : UOp::variable("merge" + std::to_string(i), 0, upper_shape[i] - 1, dtypes::int64));
  // the composition, simplified: the index already narrowed by the valid
  auto [idx, valid] = ShapeTracker({lower, upper}).to_indexed(vars);
  if (valid.is_const() && !tg::const_to_int(valid.const_value())) {
    if (n == 0) return std::nullopt;  // no dimension to carry the mask
    return View::create(upper.shape, Shape(n, 0), 0, Ranges(n, {0, 0}));
  }
  std::optional<std::vector<std::pair<int64_t, int64_t>>> mask = valid_as_mask(valid, vars, upper_shape);
  if (!mask) return std::nullopt;

  std::optional<uop::LinearForm> lin = uop::decompose(idx);
  if (!lin) return std::nullopt;
  Shape strides(n, 0);
  for (const auto& [term, coeff] : lin->terms) {
    size_t a = 0;
    while (a < n && vars[a] != term) a++;
    if (a == n) return std::nullopt;  // not linear in the positions: // or % survived
    strides[a] = coeff;
  }
  return View::create(upper.shape, std::move(strides), lin->constant, Ranges(mask->begin(), mask->end()));
}

}  // namespace tg::shape
