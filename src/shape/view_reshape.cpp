// View::reshape: absorbing a reshape into one View when its strides and mask allow it.
//
// The old and new shapes are cut into the smallest groups of dimensions with equal products (size-1 dimensions
// belong to no group). Within a group, the old dimensions must read the buffer as ONE arithmetic sequence over
// their flattened position f (index = f*s + c) with valid positions forming one contiguous run [B, E) of f; the
// new dimensions then split f again, and the run [B, E) must be a box in them. When any group fails, no single
// View expresses the reshape.
#include <algorithm>

#include "shape/view.h"

namespace tg::shape {

namespace {

struct Dim {
  sint size, stride, begin, end;  // [begin, end): the valid positions
};

// A group of old dimensions read as one: index = f*stride + base over valid flat positions f in [begin, end).
struct Flat {
  sint stride, base, begin, end;
};

std::optional<Flat> flatten_group(const std::vector<Dim>& dims) {
  // run = the first dimension with more than one valid position: the ones before it hold a single position and
  // the ones after it must be whole, or the valid positions would not be one contiguous run
  size_t m = dims.size(), run = m;
  for (size_t k = 0; k < m && run == m; k++)
    if (dims[k].end - dims[k].begin > 1) run = k;
  for (size_t k = run + 1; k < m; k++)
    if (dims[k].begin != 0 || dims[k].end != dims[k].size) return std::nullopt;
  std::vector<sint> inner(m, 1);  // product of the sizes of the dimensions after k
  for (size_t k = m - 1; k-- > 0;) inner[k] = inner[k + 1] * dims[k + 1].size;
  sint stride = run == m ? 0 : dims[m - 1].stride;
  for (size_t k = run; k < m; k++)
    if (dims[k].stride != stride * inner[k]) return std::nullopt;
  sint first = 0, at_first = 0;  // flat position and buffer index of the first valid position
  for (size_t k = 0; k < m; k++) {
    first += dims[k].begin * inner[k];
    at_first += dims[k].begin * dims[k].stride;
  }
  sint end = run == m ? first + 1 : first - dims[run].begin * inner[run] + dims[run].end * inner[run];
  return Flat{stride, at_first - first * stride, first, end};
}

// Splits a flat run over new dimensions `sizes`: writes their strides and valid ranges, or fails when [begin, end)
// is not a box in them.
bool split_group(const Flat& f, const std::vector<sint>& sizes, std::vector<sint>& strides, Ranges& ranges) {
  size_t r = sizes.size();
  std::vector<sint> inner(r, 1);
  for (size_t i = r - 1; i-- > 0;) inner[i] = inner[i + 1] * sizes[i + 1];
  strides.resize(r);
  ranges.resize(r);
  for (size_t i = 0; i < r; i++) strides[i] = f.stride * inner[i];
  // the box: dimensions before `cut` at one position, `cut` over a range, the ones after it whole
  for (size_t cut = 0; cut < r; cut++) {
    sint unit = inner[cut], outer = unit * sizes[cut];
    if (f.begin % unit != 0 || f.end % unit != 0 || f.begin / outer != (f.end - 1) / outer) continue;
    for (size_t i = 0; i < r; i++) {
      sint at = (f.begin / inner[i]) % sizes[i];
      if (i < cut) ranges[i] = {at, at + 1};
      else if (i == cut) ranges[i] = {at, ((f.end - 1) / inner[i]) % sizes[i] + 1};
      else ranges[i] = {0, sizes[i]};
    }
    return true;
  }
  return false;
}

}  // namespace

std::optional<View> View::reshape(const Shape& new_shape, SourceLocation where) const {
  bool ok = std::all_of(new_shape.begin(), new_shape.end(), [](sint s) { return s >= 0; });
  if (!ok || prod(new_shape) != size())
    throw ShapeError("reshape", "cannot reshape " + shape_str(shape) + " (" + std::to_string(size()) + " elements) to " +
                                    shape_str(new_shape) + (ok ? " (" + std::to_string(prod(new_shape)) + " elements)" : ""),
                     where);
  if (new_shape == shape) return *this;
  if (size() == 0 || contiguous) return create(new_shape);
  // a 0-d View has no dimension to carry a mask: padding reshaped to () needs a View of its own
  if (fully_masked() && new_shape.empty()) return std::nullopt;
  if (fully_masked()) return create(new_shape, Shape(new_shape.size(), 0), 0, Ranges(new_shape.size(), {0, 0}));

  std::vector<Dim> old_dims;
  for (size_t i = 0; i < ndim(); i++) {
    auto [b, e] = mask ? (*mask)[i] : std::pair<sint, sint>{0, shape[i]};
    if (shape[i] != 1) old_dims.push_back({shape[i], strides[i], b, e});
  }
  std::vector<size_t> new_axes;  // the new dimensions of size > 1
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] != 1) new_axes.push_back(i);

  Shape new_strides(new_shape.size(), 0);
  Ranges new_mask;
  for (sint s : new_shape) new_mask.emplace_back(0, s);
  sint new_offset = offset;
  size_t i = 0, j = 0;
  while (i < old_dims.size()) {
    // the smallest run of old and of new dimensions with equal products
    std::vector<Dim> group{old_dims[i++]};
    std::vector<sint> sizes{new_shape[new_axes[j++]]};
    sint po = group[0].size, pn = sizes[0];
    while (po != pn) {
      if (po < pn) group.push_back(old_dims[i++]), po *= group.back().size;
      else sizes.push_back(new_shape[new_axes[j++]]), pn *= sizes.back();
    }
    std::optional<Flat> flat = flatten_group(group);
    std::vector<sint> st;
    Ranges rg;
    if (!flat || !split_group(*flat, sizes, st, rg)) return std::nullopt;
    new_offset += flat->base;
    for (size_t k = 0; k < sizes.size(); k++) {
      size_t axis = new_axes[j - sizes.size() + k];
      new_strides[axis] = st[k];
      new_mask[axis] = rg[k];
    }
  }
  return create(new_shape, std::move(new_strides), new_offset, std::move(new_mask));
}

View View::minified() const {
  if (fully_masked()) return *this;  // reads nothing; keeps the dimensions that carry its mask
  Shape squeezed;
  for (sint s : shape)
    if (s != 1) squeezed.push_back(s);
  View v = *reshape(squeezed);  // dropping size-1 dimensions always works when something is valid
  for (size_t k = v.ndim(); k-- > 1;) {
    Shape merged = v.shape;
    merged[k - 1] *= merged[k];
    merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(k));
    if (std::optional<View> m = v.reshape(merged)) v = std::move(*m);
  }
  return v;
}

}  // namespace tg::shape
