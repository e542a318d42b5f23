// View::reshape: absorbing a reshape into one View when its strides and mask allow it.
//
// The old and new shapes are cut into the smallest groups of dimensions with equal products (size-1 dimensions
// belong to no group). Within a group, the old dimensions must read the buffer as ONE arithmetic sequence over
// their flattened position f (index = f*s + c) with valid positions forming one contiguous run [B, E) of f; the
// new dimensions then split f again, and the run [B, E) must be a box in them. When any group fails, no single
// View expresses the reshape.
#include <algorithm>

#include "shape/view.h"
#include "uop/sint.h"

namespace tg::shape {

namespace {

struct Axis {
  int64_t size, stride, begin, end;  // [begin, end): the valid positions
};

// A group of old dimensions read as one: index = f*stride + base over valid flat positions f in [begin, end).
struct Flat {
  int64_t stride, base, begin, end;
};

std::optional<Flat> flatten_group(const std::vector<Axis>& dims) {
  // run = the first dimension with more than one valid position: the ones before it hold a single position and
  // the ones after it must be whole, or the valid positions would not be one contiguous run
  size_t m = dims.size(), run = m;
  for (size_t k = 0; k < m && run == m; k++)
    if (dims[k].end - dims[k].begin > 1) run = k;
  for (size_t k = run + 1; k < m; k++)
    if (dims[k].begin != 0 || dims[k].end != dims[k].size) return std::nullopt;
  std::vector<int64_t> inner(m, 1);  // product of the sizes of the dimensions after k
  for (size_t k = m - 1; k-- > 0;) inner[k] = inner[k + 1] * dims[k + 1].size;
  int64_t stride = run == m ? 0 : dims[m - 1].stride;
  for (size_t k = run; k < m; k++)
    if (dims[k].stride != stride * inner[k]) return std::nullopt;
  int64_t first = 0, at_first = 0;  // flat position and buffer index of the first valid position
  for (size_t k = 0; k < m; k++) {
    first += dims[k].begin * inner[k];
    at_first += dims[k].begin * dims[k].stride;
  }
  int64_t end = run == m ? first + 1 : first - dims[run].begin * inner[run] + dims[run].end * inner[run];
  return Flat{stride, at_first - first * stride, first, end};
}

// Splits a flat run over new dimensions `sizes`: writes their strides and valid ranges, or fails when [begin, end)
// is not a box in them.
bool split_group(const Flat& f, const std::vector<int64_t>& sizes, std::vector<int64_t>& strides, std::vector<std::pair<int64_t, int64_t>>& ranges) {
  size_t r = sizes.size();
  std::vector<int64_t> inner(r, 1);
  for (size_t i = r - 1; i-- > 0;) inner[i] = inner[i + 1] * sizes[i + 1];
  strides.resize(r);
  ranges.resize(r);
  for (size_t i = 0; i < r; i++) strides[i] = f.stride * inner[i];
  // the box: dimensions before `cut` at one position, `cut` over a range, the ones after it whole
  for (size_t cut = 0; cut < r; cut++) {
    int64_t unit = inner[cut], outer = unit * sizes[cut];
    if (f.begin % unit != 0 || f.end % unit != 0 || f.begin / outer != (f.end - 1) / outer) continue;
    for (size_t i = 0; i < r; i++) {
      int64_t at = (f.begin / inner[i]) % sizes[i];
      if (i < cut) ranges[i] = {at, at + 1};
      else if (i == cut) ranges[i] = {at, ((f.end - 1) / inner[i]) % sizes[i] + 1};
      else ranges[i] = {0, sizes[i]};
    }
    return true;
  }
  return false;
}

// A run of old dimensions (sizes > 1) regrouped as new sizes (> 1) of the same product: each new dimension's stride
// and valid range, and the offset the run adds; nullopt when no single View expresses it.
struct Regrouped {
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t base = 0;
};
std::optional<Regrouped> regroup(const std::vector<Axis>& old_dims, const std::vector<int64_t>& new_sizes) {
  Regrouped out;
  size_t i = 0, j = 0;
  while (i < old_dims.size()) {
    // the smallest run of old and of new dimensions with equal products
    std::vector<Axis> group{old_dims[i++]};
    std::vector<int64_t> sizes{new_sizes[j++]};
    int64_t po = group[0].size, pn = sizes[0];
    while (po != pn) {
      if (po < pn) group.push_back(old_dims[i++]), po *= group.back().size;
      else sizes.push_back(new_sizes[j++]), pn *= sizes.back();
    }
    std::optional<Flat> flat = flatten_group(group);
    std::vector<int64_t> st;
    std::vector<std::pair<int64_t, int64_t>> rg;
    if (!flat || !split_group(*flat, sizes, st, rg)) return std::nullopt;
    out.base += flat->base;
    out.strides.insert(out.strides.end(), st.begin(), st.end());
    out.ranges.insert(out.ranges.end(), rg.begin(), rg.end());
  }
  return out;
}

bool all_concrete(const std::vector<const sint*>& xs) {
  return std::none_of(xs.begin(), xs.end(), [](const sint* x) { return x->is_symbolic(); });
}

}  // namespace

// Symbolic dimensions regroup only with themselves: the k-th symbolic dimension of the new shape must be the k-th
// of the old one (the same expression), and the concrete dimensions between them regroup as above, where their
// strides and masks are concrete. Anything else needs a View of its own.
std::optional<View> View::reshape(const Shape& new_shape, SourceLocation where) const {
  bool ok = std::all_of(new_shape.begin(), new_shape.end(), [](const sint& s) { return s.min() >= 0; });
  if (!ok || !provably_equal(prod(new_shape), size()))
    throw ShapeError("reshape", "cannot reshape " + shape_str(shape) + " (" + size().str() + " elements) to " +
                                    shape_str(new_shape) + (ok ? " (" + prod(new_shape).str() + " elements)" : ""),
                     where);
  if (new_shape == shape) return *this;
  if (size() == Dim(0) || contiguous) return create(new_shape);
  // a 0-d View has no dimension to carry a mask: padding reshaped to () needs a View of its own
  if (fully_masked() && new_shape.empty()) return std::nullopt;
  if (fully_masked()) return create(new_shape, Shape(new_shape.size(), 0), 0, Ranges(new_shape.size(), {0, 0}));

  std::vector<size_t> old_axes, new_axes;  // the dimensions of size other than 1
  for (size_t i = 0; i < ndim(); i++)
    if (shape[i] != Dim(1)) old_axes.push_back(i);
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] != Dim(1)) new_axes.push_back(i);

  Shape new_strides(new_shape.size(), 0);
  Ranges new_mask;
  for (const sint& s : new_shape) new_mask.emplace_back(0, s);
  sint new_offset = offset;
  size_t i = 0, j = 0;
  while (i < old_axes.size() || j < new_axes.size()) {
    // a symbolic dimension on either side: the same one on both, carried over
    bool sym_old = i < old_axes.size() && shape[old_axes[i]].is_symbolic();
    bool sym_new = j < new_axes.size() && new_shape[new_axes[j]].is_symbolic();
    if (sym_old || sym_new) {
      if (!sym_old || !sym_new || shape[old_axes[i]] != new_shape[new_axes[j]]) return std::nullopt;
      new_strides[new_axes[j]] = strides[old_axes[i]];
      if (mask) new_mask[new_axes[j]] = (*mask)[old_axes[i]];
      i++, j++;
      continue;
    }
    // the concrete run up to the next symbolic dimension on each side; where its dimensions are the same on both
    // sides, each keeps its stride and mask (symbolic ones too: a row-major stride over a symbolic size)
    size_t i_end = i, j_end = j;
    while (i_end < old_axes.size() && !shape[old_axes[i_end]].is_symbolic()) i_end++;
    while (j_end < new_axes.size() && !new_shape[new_axes[j_end]].is_symbolic()) j_end++;
    bool same = i_end - i == j_end - j;
    for (size_t k = 0; same && k < i_end - i; k++) same = shape[old_axes[i + k]] == new_shape[new_axes[j + k]];
    if (same) {
      for (; i < i_end; i++, j++) {
        new_strides[new_axes[j]] = strides[old_axes[i]];
        if (mask) new_mask[new_axes[j]] = (*mask)[old_axes[i]];
      }
      continue;
    }
    std::vector<Axis> run;
    std::vector<int64_t> sizes;
    for (; i < old_axes.size() && !shape[old_axes[i]].is_symbolic(); i++) {
      size_t a = old_axes[i];
      const sint& b = mask ? (*mask)[a].first : Dim(0);
      const sint& e = mask ? (*mask)[a].second : shape[a];
      if (!all_concrete({&strides[a], &b, &e})) return std::nullopt;
      run.push_back({shape[a].concrete("reshape"), strides[a].concrete("reshape"), b.concrete("reshape"), e.concrete("reshape")});
    }
    size_t j0 = j;
    for (; j < new_axes.size() && !new_shape[new_axes[j]].is_symbolic(); j++) sizes.push_back(new_shape[new_axes[j]].concrete("reshape"));
    int64_t po = 1, pn = 1;
    for (const Axis& d : run) po *= d.size;
    for (int64_t s : sizes) pn *= s;
    if (po != pn) return std::nullopt;
    std::optional<Regrouped> g = regroup(run, sizes);
    if (!g) return std::nullopt;
    new_offset += g->base;
    for (size_t k = 0; k < sizes.size(); k++) {
      new_strides[new_axes[j0 + k]] = g->strides[k];
      new_mask[new_axes[j0 + k]] = {g->ranges[k].first, g->ranges[k].second};
    }
  }
  return create(new_shape, std::move(new_strides), new_offset, std::move(new_mask));
}

View View::minified() const {
  if (fully_masked()) return *this;  // reads nothing; keeps the dimensions that carry its mask
  Shape squeezed;
  for (const sint& s : shape)
    if (s != Dim(1)) squeezed.push_back(s);
  View v = *reshape(squeezed);  // dropping size-1 dimensions always works when something is valid
  for (size_t k = v.ndim(); k-- > 1;) {
    if (v.shape[k - 1].is_symbolic() || v.shape[k].is_symbolic()) continue;  // a symbolic dimension merges with none
    Shape merged = v.shape;
    merged[k - 1] *= merged[k];
    merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(k));
    if (std::optional<View> m = v.reshape(merged)) v = std::move(*m);
  }
  return v;
}

}  // namespace tg::shape
