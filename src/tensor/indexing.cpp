// Indexing: x[...] with ints, slices, newaxis, ellipsis and integer tensors; setitem; masked_fill and
// masked_select; one_hot.
//
// Basic indexing is movement only (flip, shrink, a pad+reshape for steps, reshape). Tensor indices select by
// comparison with an arange (a one-hot mask summed over the indexed dims), as tinygrad does: it fuses into one
// kernel and needs no data-dependent shapes. An index outside the dimension selects nothing and reads 0.
#include <algorithm>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;

Index::Index(const Tensor& t) : kind_(Kind::Tensor), t_(std::make_shared<const Tensor>(t)) {}

namespace {

// One consumed dimension after normalization: the elements first, first+step, ... (count of them), or one integer.
struct DimSel {
  int64_t first = 0, count = 0, step = 1;
  bool integer = false, tensor = false;
};

struct Plan {
  std::vector<DimSel> dims;         // one per dimension of x
  Shape out_shape;                  // the shape of the basic-indexed result
  std::vector<int64_t> tensor_out;  // for each tensor index, its dimension in out_shape
  std::vector<Tensor> tensors;
  // tensors are the advanced indices (ints are basic, as PyTorch's); next to each other (or with only ints
  // between them), their result dims go where the first was (first_advanced dims of the result come before it),
  // else first
  bool adjacent = true;
  int64_t first_advanced = -1;
};

std::string index_str(const std::vector<Index>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); i++) {
    const Index& x = idx[i];
    s += i ? ", " : "";
    switch (x.kind()) {
      case Index::Kind::Int: s += std::to_string(x.integer()); break;
      case Index::Kind::Slice:
        s += (x.slice().start ? std::to_string(*x.slice().start) : "") + ":" + (x.slice().stop ? std::to_string(*x.slice().stop) : "") +
             (x.slice().step != 1 ? ":" + std::to_string(x.slice().step) : "");
        break;
      case Index::Kind::NewAxis: s += "None"; break;
      case Index::Kind::Ellipsis: s += "..."; break;
      case Index::Kind::Tensor: s += "tensor" + shape_str(x.tensor().shape()); break;
    }
  }
  return s + "]";
}

// Python's slice.indices(n) for one dimension, as (first, count, step)
DimSel slice_sel(const Slice& s, int64_t n) {
  DimSel d;
  d.step = s.step;
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v < 0 ? v + n : v, lo), hi); };
  int64_t start, stop;
  if (s.step > 0) {
    start = s.start ? clamp(*s.start, 0, n) : 0;
    stop = s.stop ? clamp(*s.stop, 0, n) : n;
    d.count = stop > start ? (stop - start + s.step - 1) / s.step : 0;
  } else {
    start = s.start ? clamp(*s.start, -1, n - 1) : n - 1;
    stop = s.stop ? clamp(*s.stop, -1, n - 1) : -1;
    d.count = start > stop ? (start - stop - s.step - 1) / -s.step : 0;
  }
  d.first = start;
  return d;
}

// slice bounds given as tensors, read: each must be a 0-d integer tensor
std::vector<Index> read_tensor_bounds(const std::vector<Index>& idx, const char* op, SourceLocation where) {
  std::vector<Index> out = idx;
  for (Index& i : out) {
    if (i.kind() != Index::Kind::Slice || !i.slice().start_tensor) continue;
    Slice s = i.slice();
    auto read = [&](const Tensor& t) {
      if (t.ndim() != 0 || !t.dtype().is_int())
        throw ArgumentError(op, "slice bounds must be 0-d integer tensors, got " + t.dtype().name() + " of shape " +
                                    shape_str(t.shape()), where);
      return t.cast(dtypes::int64, where).item<int64_t>(where);
    };
    s.start = read(*s.start_tensor), s.stop = read(*s.stop_tensor);
    s.start_tensor = s.stop_tensor = nullptr;
    i = Index(s);
  }
  return out;
}

Plan make_plan(const Tensor& x, const std::vector<Index>& given, const char* op, SourceLocation where) {
  std::vector<Index> idx = read_tensor_bounds(given, op, where);
  int64_t consumed = 0, ellipses = 0;
  for (const Index& i : idx) {
    if (i.kind() == Index::Kind::Ellipsis) ellipses++;
    else if (i.kind() != Index::Kind::NewAxis) consumed++;
  }
  if (ellipses > 1) throw ArgumentError(op, "an index can have only a single ellipsis: " + index_str(idx), where);
  if (consumed > x.ndim())
    throw ArgumentError(op, "too many indices for shape " + shape_str(x.shape()) + ": " + index_str(idx), where);
  std::vector<Index> full;
  for (const Index& i : idx) {
    if (i.kind() == Index::Kind::Ellipsis)
      for (int64_t k = 0; k < x.ndim() - consumed; k++) full.push_back(Slice());
    else full.push_back(i);
  }
  if (!ellipses)
    for (int64_t k = consumed; k < x.ndim(); k++) full.push_back(Slice());
  Plan p;
  int64_t d = 0, last_advanced_pos = -1;
  for (size_t pos = 0; pos < full.size(); pos++) {
    const Index& i = full[pos];
    if (i.kind() == Index::Kind::NewAxis) {
      p.out_shape.push_back(1);
      continue;
    }
    int64_t n = x.shape()[d];
    DimSel s;
    if (i.kind() == Index::Kind::Tensor) {
      // only ints between two tensor indices keep them adjacent: an int is basic indexing (PyTorch's and
      // tinygrad's rule; numpy would count it as advanced and move the tensor's dims to the front)
      for (int64_t q = last_advanced_pos + 1; last_advanced_pos >= 0 && q < static_cast<int64_t>(pos); q++)
        if (full[q].kind() != Index::Kind::Int) p.adjacent = false;
      if (p.first_advanced < 0) p.first_advanced = static_cast<int64_t>(p.out_shape.size());
      last_advanced_pos = static_cast<int64_t>(pos);
    }
    if (i.kind() == Index::Kind::Int) {
      int64_t v = i.integer() < 0 ? i.integer() + n : i.integer();
      if (v < 0 || v >= n)
        throw ArgumentError(op, "index " + std::to_string(i.integer()) + " is out of bounds for dimension " + std::to_string(d) +
                                    " of size " + std::to_string(n) + " (shape " + shape_str(x.shape()) + ")", where);
      s.first = v, s.count = 1, s.integer = true;
    } else if (i.kind() == Index::Kind::Slice) {
      if (i.slice().step == 0) throw ArgumentError(op, "slice step cannot be zero: " + index_str(idx), where);
      s = slice_sel(i.slice(), n);
      p.out_shape.push_back(s.count);
    } else {
      const Tensor& t = i.tensor();
      if (!t.dtype().is_int())
        throw DTypeError(op, "tensor indices must be integers, not " + t.dtype().name() + " (a bool mask is the only index: x[mask])", where);
      if (t.device() != x.device())
        throw ArgumentError(op, "index tensor on " + t.device() + " for a tensor on " + x.device(), where);
      s.count = n, s.tensor = true;
      p.tensor_out.push_back(static_cast<int64_t>(p.out_shape.size()));
      p.tensors.push_back(t);
      p.out_shape.push_back(n);
    }
    p.dims.push_back(s);
    d++;
  }
  return p;
}

// the selection per dimension, with ints kept as dimensions of size 1
Tensor select_basic(const Tensor& x, const Plan& p, SourceLocation where) {
  std::vector<int64_t> flips;
  std::vector<std::pair<int64_t, int64_t>> box;
  for (int64_t d = 0; d < x.ndim(); d++) {
    const DimSel& s = p.dims[d];
    int64_t n = x.shape()[d];
    if (s.step < 0) flips.push_back(d);
    int64_t first = s.step < 0 ? n - 1 - s.first : s.first, step = std::abs(s.step);
    int64_t end = s.count == 0 ? first : first + (s.count - 1) * step + 1;
    box.push_back({std::min(first, n), std::min(end, n)});
  }
  Tensor r = flips.empty() ? x : x.flip(flips, where);
  r = r.shrink(box, where);
  for (int64_t d = 0; d < x.ndim(); d++) {
    int64_t step = std::abs(p.dims[d].step), c = p.dims[d].count;
    if (step == 1 || c == 0) continue;
    // every step-th element: pad to c*step, split the dimension into (c, step), keep column 0
    Shape s = r.shape();
    std::vector<std::pair<int64_t, int64_t>> pad(r.ndim(), {0, 0}), keep;
    pad[d] = {0, c * step - s[d]};
    Shape split = s;
    split[d] = c;
    split.insert(split.begin() + d + 1, step);
    for (int64_t i = 0; i < static_cast<int64_t>(split.size()); i++) keep.push_back(i == d + 1 ? std::pair{int64_t{0}, int64_t{1}} : std::pair{int64_t{0}, split[i]});
    s[d] = c;
    r = r.pad(pad, 0, where).reshape(split, where).shrink(keep, where).reshape(s, where);
  }
  return r;
}

// the inverse of select_basic for a value of the selected shape: the value placed where it came from, 0 elsewhere
Tensor place_basic(const Tensor& v, const Tensor& x, const Plan& p, SourceLocation where) {
  Tensor r = v;
  std::vector<int64_t> flips;
  for (int64_t d = 0; d < x.ndim(); d++) {
    const DimSel& s = p.dims[d];
    int64_t n = x.shape()[d], step = std::abs(s.step), c = s.count;
    if (step > 1 && c > 0) {  // (c,) -> (c, 1) -> pad to (c, step) -> c*step, trimmed to the strided extent
      Shape col = r.shape();
      col.insert(col.begin() + d + 1, 1);
      std::vector<std::pair<int64_t, int64_t>> pad(col.size(), {0, 0}), trim;
      pad[d + 1] = {0, step - 1};
      Shape flat = r.shape();
      flat[d] = c * step;
      r = r.reshape(col, where).pad(pad, 0, where).reshape(flat, where);
      for (int64_t i = 0; i < r.ndim(); i++) trim.push_back({0, i == d ? (c - 1) * step + 1 : r.shape()[i]});
      r = r.shrink(trim, where);
    }
    int64_t first = s.step < 0 ? n - 1 - s.first : s.first;
    std::vector<std::pair<int64_t, int64_t>> grow(r.ndim(), {0, 0});
    grow[d] = {first, n - first - r.shape()[d]};
    if (c == 0) grow[d] = {0, n};
    r = r.pad(grow, 0, where);
    if (s.step < 0) flips.push_back(d);
  }
  return flips.empty() ? r : r.flip(flips, where);
}

// Advanced indexing over r (the basic selection, shaped as the result before the tensor indices act): r with the
// indexed dims moved last and a broadcast dim per index dim before them, (rest..., 1.., n_1..n_k), and the one-hot
// mask (b..., n_1..n_k) of which element each broadcast index position picks
struct Advanced {
  Tensor region, mask;
  Shape rest, b;
  std::vector<int64_t> to_region;     // r.permute(to_region) puts the indexed dims last
  std::vector<int64_t> selected;      // region's indexed dims, n_1..n_k
  std::vector<int64_t> result_order;  // (rest..., b...) -> the result's order, numpy's
};

Advanced advanced(const Tensor& r, const Plan& p, const char* op, SourceLocation where) {
  Advanced a;
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : p.tensors) ptrs.push_back(&t);
  a.b = tensor::broadcast_shape(ptrs, op, where);
  size_t k = p.tensors.size();
  for (int64_t i = 0; i < r.ndim(); i++)
    if (std::find(p.tensor_out.begin(), p.tensor_out.end(), i) == p.tensor_out.end()) a.to_region.push_back(i);
  a.to_region.insert(a.to_region.end(), p.tensor_out.begin(), p.tensor_out.end());
  Tensor moved = r.permute(a.to_region, where);
  a.rest = Shape(moved.shape().begin(), moved.shape().end() - static_cast<int64_t>(k));
  Shape with_b = a.rest;
  for (size_t i = 0; i < a.b.size(); i++) with_b.push_back(1);
  with_b.insert(with_b.end(), moved.shape().end() - static_cast<int64_t>(k), moved.shape().end());
  a.region = moved.reshape(with_b, where);
  for (size_t j = 0; j < k; j++) {
    int64_t n = moved.shape()[a.rest.size() + j];
    Tensor idx = tensor::broadcast_to(p.tensors[j], a.b).cast(dtypes::int64, where);
    idx = (idx < 0).where(idx + n, idx);
    Shape is = a.b, as(a.b.size(), 1);
    for (size_t q = 0; q < k; q++) is.push_back(1), as.push_back(q == j ? n : 1);
    Tensor hit = idx.reshape(is, where) == Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64, r.device(), where).reshape(as, where);
    a.mask = a.mask.defined() ? a.mask & hit : hit;
  }
  for (size_t j = 0; j < k; j++) a.selected.push_back(static_cast<int64_t>(with_b.size() - k + j));
  // numpy: the broadcast dims replace adjacent index dims in place, else they come first
  int64_t nr = static_cast<int64_t>(a.rest.size()), nb = static_cast<int64_t>(a.b.size());
  int64_t at = p.adjacent ? p.first_advanced : 0;
  for (int64_t i = 0; i < at; i++) a.result_order.push_back(i);
  for (int64_t i = 0; i < nb; i++) a.result_order.push_back(nr + i);
  for (int64_t i = at; i < nr; i++) a.result_order.push_back(i);
  return a;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& order) {
  std::vector<int64_t> inv(order.size());
  for (size_t i = 0; i < order.size(); i++) inv[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return inv;
}

// x's basic selection (shaped p.out_shape) with v written where the tensor indices point: where several index
// positions point at one element, the last one's value is kept (numpy's and tinygrad's order)
Tensor scatter_advanced(const Tensor& r, const Plan& p, const Tensor& v, SourceLocation where) {
  Advanced a = advanced(r, p, "setitem", where);
  Shape result;  // the shape x[indices] has, which v broadcasts to
  Shape rb = a.rest;
  rb.insert(rb.end(), a.b.begin(), a.b.end());
  for (int64_t i : a.result_order) result.push_back(rb[static_cast<size_t>(i)]);
  Tensor vb = v.expand(result, where).permute(inverse(a.result_order), where);
  Shape vs = rb;
  for (size_t j = 0; j < p.tensors.size(); j++) vs.push_back(1);
  vb = vb.reshape(vs, where);
  // the last index position (in row-major order, counted from 1) that points at each element, 0 where none does
  int64_t count = 1;
  for (int64_t d : a.b) count *= d;
  Shape ps = a.b;
  for (size_t j = 0; j < p.tensors.size(); j++) ps.push_back(1);
  Tensor pos = Tensor::arange(1, static_cast<double>(count + 1), 1, dtypes::int32, r.device(), where).reshape(ps, where);
  std::vector<int64_t> b_dims, b_in_region;  // the broadcast index dims of the mask (b..., n...) and of the region
  for (size_t j = 0; j < a.b.size(); j++) b_dims.push_back(static_cast<int64_t>(j)), b_in_region.push_back(static_cast<int64_t>(a.rest.size() + j));
  Tensor last = a.mask.where(pos, pos.zeros_like()).max(b_dims, false, where);  // (n...)
  Tensor chosen = a.mask & (pos == last);
  Tensor written = chosen.where(vb, vb.zeros_like()).sum(b_in_region, false, where);  // (rest..., n...)
  Shape squeezed = a.rest;
  squeezed.insert(squeezed.end(), a.region.shape().end() - static_cast<int64_t>(p.tensors.size()), a.region.shape().end());
  return (last > 0).where(written, a.region.reshape(squeezed, where)).permute(inverse(a.to_region), where);
}

// x[mask]: one bool tensor as the index, which must match x's leading dims (PyTorch's)
bool is_mask_index(const Tensor& x, const std::vector<Index>& idx, const char* op, SourceLocation where) {
  if (idx.size() != 1 || idx[0].kind() != Index::Kind::Tensor || !idx[0].tensor().dtype().is_bool()) return false;
  const Tensor& mask = idx[0].tensor();
  if (mask.ndim() > x.ndim() || !std::equal(mask.shape().begin(), mask.shape().end(), x.shape().begin()))
    throw ShapeError(op, "a bool mask of shape " + shape_str(mask.shape()) + " does not match the indexed tensor's leading dimensions " +
                             shape_str(x.shape()), where);
  return true;
}

}  // namespace

Tensor Tensor::getitem(const std::vector<Index>& indices, Loc where) const try {
  // x[mask] with a bool mask over the leading dims: the elements (rows) where it is true, as PyTorch's, through
  // the mask's nonzero positions (this realizes the mask to learn their count)
  if (is_mask_index(*this, indices, "getitem", where)) {
    const Tensor& mask = indices[0].tensor();
    if (mask.ndim() == 0) return unsqueeze(0, where).getitem({mask.unsqueeze(0, where)}, where);
    Tensor nz = mask.nonzero(where);
    std::vector<Index> cols;
    for (int64_t i = 0; i < mask.ndim(); i++) cols.push_back(nz[{Slice(), i}]);
    return getitem(cols, where);
  }
  Plan p = make_plan(*this, indices, "getitem", where);
  Tensor r = select_basic(*this, p, where).reshape(p.out_shape, where);
  if (p.tensors.empty()) return r;
  Advanced a = advanced(r, p, "getitem", where);
  Tensor picked = a.mask.where(a.region, a.region.zeros_like()).sum(a.selected, false, where).cast(dtype(), where);
  return picked.permute(a.result_order, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "getitem", where);
}

// setitem's whole new value: written in place into a realized buffer (views of it see it), else lazily
void Tensor::set_values(const Tensor& value, Loc where) {
  if (detail::writes_in_place(uop())) write_in_place(value, where);
  else assign(value, where);
}

void Tensor::setitem(const std::vector<Index>& indices, const Tensor& value, Loc where) try {
  if (value.device() != device())
    throw ArgumentError("setitem", "value on " + value.device() + " for a tensor on " + device(), where);
  if (is_mask_index(*this, indices, "setitem", where)) {
    const Tensor& mask = indices[0].tensor();
    int64_t trailing = ndim() - mask.ndim();
    if (value.ndim() > trailing && mask.ndim() > 0) {  // a value row per true element: set at the mask's nonzeros
      Tensor nz = mask.nonzero(where);
      std::vector<Index> cols;
      for (int64_t i = 0; i < mask.ndim(); i++) cols.push_back(nz[{Slice(), i}]);
      return setitem(cols, value, where);
    }
    Shape m = mask.shape();  // a value that fits one selected row is written through a where
    m.insert(m.end(), static_cast<size_t>(trailing), 1);
    return set_values(mask.reshape(m, where).where(value.cast(dtype(), where), *this, where), where);
  }
  Plan p = make_plan(*this, indices, "setitem", where);
  // the value broadcast to the selection, placed back into this tensor's shape, chosen by a placed mask of trues
  Tensor v = value.cast(dtype(), where);
  Shape kept;  // the selection with ints as dimensions of size 1
  for (const DimSel& s : p.dims) kept.push_back(s.count);
  if (p.tensors.empty()) {
    v = v.expand(p.out_shape, where);
    // a realized buffer, or a view of one, is written in place, so every tensor that views the buffer sees the new
    // values (PyTorch's aliasing, and the chained t[1][2] = v); a lazy tensor takes the values below
    Tensor part = select_basic(*this, p, where);
    if (detail::writes_in_place(part.uop())) return part.write_in_place(v.reshape(part.shape(), where), where);
  } else {
    v = scatter_advanced(select_basic(*this, p, where).reshape(p.out_shape, where), p, v, where);
  }
  v = v.reshape(kept, where);
  Tensor mask = place_basic(Tensor::full(kept, 1, dtypes::bool_, device(), where), *this, p, where);
  set_values(mask.where(place_basic(v, *this, p, where), *this), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "setitem", where);
}

void Tensor::setitem(const std::vector<Index>& indices, double value, Loc where) {
  setitem(indices, Tensor(value, dtype(), device(), where), where);
}

Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value, Loc where) const {
  if (tensor::broadcast_shape({this, &mask, &value}, "masked_fill", where) != shape())
    throw ShapeError("masked_fill", "mask " + shape_str(mask.shape()) + " and value " + shape_str(value.shape()) +
                                        " must broadcast to the tensor's shape " + shape_str(shape()), where);
  if (!mask.dtype().is_bool()) throw DTypeError("masked_fill", "the mask must be bool, not " + mask.dtype().name(), where);
  return mask.where(value.cast(dtype(), where), *this, where);
}
Tensor Tensor::masked_fill(const Tensor& mask, double value, Loc where) const {
  return masked_fill(mask, Tensor(value, dtype(), device(), where), where);
}

namespace {

// x's elements where m is true (both flat, of one length), into `size` slots: slot j holds the element whose
// running count of selected elements is j + 1 (0 where none is)
Tensor select_into(const Tensor& x, const Tensor& m, int64_t size, SourceLocation where) {
  Tensor pos = m.cast(dtypes::int32).cumsum(0) - 1;  // output slot of each selected element
  Tensor slot = Tensor::arange(0, static_cast<double>(size), 1, dtypes::int32, x.device(), where).reshape({size, 1});
  Tensor hit = (pos.reshape({1, -1}) == slot) & m.reshape({1, -1});
  return hit.where(x.reshape({1, -1}), x.zeros_like().reshape({1, -1})).sum(1).cast(x.dtype(), where);
}

std::pair<Tensor, Tensor> flat_masked(const Tensor& x, const Tensor& mask, SourceLocation where) {
  if (!mask.dtype().is_bool()) throw DTypeError("masked_select", "the mask must be bool, not " + mask.dtype().name(), where);
  Shape s = tensor::broadcast_shape({&x, &mask}, "masked_select", where);
  return {tensor::broadcast_to(x, s).flatten(), tensor::broadcast_to(mask, s).flatten()};
}

// every element's index along each dimension, (numel, ndim), row-major
Tensor all_indices(const Tensor& t, SourceLocation where) {
  std::vector<Tensor> cols;
  for (int64_t i = 0; i < t.ndim(); i++) {
    Shape s(t.ndim(), 1);
    s[i] = t.shape()[i];
    cols.push_back(Tensor::arange(0, static_cast<double>(t.shape()[i]), 1, dtypes::int32, t.device(), where).reshape(s).expand(t.shape()).flatten());
  }
  return Tensor::stack(cols, 1, where);
}

}  // namespace

Tensor Tensor::masked_select(const Tensor& mask, Loc where) const try {
  auto [x, m] = flat_masked(*this, mask, where);
  // the count decides the shape: the mask is realized here
  return select_into(x, m, m.sum().item<int32_t>(), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "masked_select", where);
}

Tensor Tensor::masked_select(const Tensor& mask, int64_t size, double fill_value, Loc where) const try {
  if (size < 0) throw ArgumentError("masked_select", "size must be non-negative, got " + std::to_string(size), where);
  auto [x, m] = flat_masked(*this, mask, where);
  Tensor slot = Tensor::arange(0, static_cast<double>(size), 1, dtypes::int32, device(), where);
  return (slot < m.sum()).where(select_into(x, m, size, where), x.scalar_like(fill_value, where)).cast(dtype(), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "masked_select", where);
}

Tensor Tensor::nonzero(Loc where) const try {
  Tensor m = ne(zeros_like(), where).flatten();
  int64_t n = m.sum().item<int32_t>();
  if (ndim() == 0) return Tensor::zeros({n, 0}, dtypes::int32, device(), where);
  std::vector<Tensor> cols;
  Tensor idx = all_indices(*this, where);
  for (int64_t i = 0; i < ndim(); i++) cols.push_back(select_into(idx[{Slice(), i}], m, n, where));
  return Tensor::stack(cols, 1, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "nonzero", where);
}

Tensor Tensor::nonzero(int64_t size, int64_t fill_value, Loc where) const try {
  if (size < 0) throw ArgumentError("nonzero", "size must be non-negative, got " + std::to_string(size), where);
  if (ndim() == 0) return Tensor::zeros({size, 0}, dtypes::int32, device(), where);
  Tensor m = ne(zeros_like(), where).flatten(), idx = all_indices(*this, where);
  std::vector<Tensor> cols;
  for (int64_t i = 0; i < ndim(); i++) cols.push_back(idx[{Slice(), i}].masked_select(m, size, static_cast<double>(fill_value), where));
  return Tensor::stack(cols, 1, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "nonzero", where);
}

Tensor Tensor::one_hot(int64_t num_classes, Loc where) const try {
  if (!dtype().is_int()) throw DTypeError("one_hot", "needs an integer tensor, not " + dtype().name(), where);
  if (num_classes < -1)
    throw ArgumentError("one_hot", "num_classes must be non-negative (or -1: one more than the largest value), got " +
                                       std::to_string(num_classes), where);
  if (num_classes == -1) num_classes = numel() == 0 ? 0 : max().cast(dtypes::int64).item<int64_t>() + 1;
  Shape s(ndim(), 1);
  s.push_back(num_classes);
  Tensor classes = Tensor::arange(0, static_cast<double>(num_classes), 1, dtype(), device(), where).reshape(s, where);
  return (unsqueeze(-1, where) == classes).cast(dtypes::int32, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "one_hot", where);
}

}  // namespace tg
