// Joining and splitting tensors: cat, stack, split, chunk, meshgrid.
#include <algorithm>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::normalize_axis;
using tensor::shape_str;

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t dim, Loc where) {
  if (tensors.empty()) throw ArgumentError("cat", "needs at least one tensor", where);
  const Tensor& first = tensors[0];
  int64_t d = normalize_axis(dim, first.ndim(), "cat", where);
  if (first.ndim() == 0) throw ShapeError("cat", "cannot concatenate 0-d tensors (use stack)", where);
  if (std::any_of(tensors.begin(), tensors.end(), [](const Tensor& t) { return t.is_symbolic(); }))
    return tensor::symbolic_cat(tensors, dim, where);
  DType dt = first.dtype();
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    Shape a = t.shape(), b = first.shape();
    if (a.size() == b.size()) a[d] = b[d] = 0;
    if (a != b)
      throw ShapeError("cat", "shapes " + shape_str(first.shape()) + " and " + shape_str(t.shape()) +
                                  " differ outside dimension " + std::to_string(d), where);
    if (t.device() != first.device())
      throw ArgumentError("cat", "tensors on different devices: " + first.device() + " and " + t.device(), where);
    dt = least_upper_dtype({dt, t.dtype()});
    total += t.shape()[d];
  }
  // each piece padded with zeros to the full length, then summed: one fused kernel, no copies
  Tensor out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    std::vector<std::pair<int64_t, int64_t>> p(t.ndim(), {0, 0});
    p[d] = {offset, total - offset - t.shape()[d]};
    offset += t.shape()[d];
    Tensor piece = t.cast(dt, where).pad(p, 0, where);
    out = out.defined() ? (dt.is_bool() ? out.bitwise_or(piece, where) : out.add(piece, where)) : piece;
  }
  return out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t dim, Loc where) {
  if (tensors.empty()) throw ArgumentError("stack", "needs at least one tensor", where);
  int64_t d = normalize_axis(dim, tensors[0].ndim() + 1, "stack", where);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    if (t.sym_shape() != tensors[0].sym_shape())
      throw ShapeError("stack", "shapes differ: " + uop::dims_str(tensors[0].sym_shape()) + " and " + uop::dims_str(t.sym_shape()), where);
    parts.push_back(t.unsqueeze(d, where));
  }
  return cat(parts, d, where);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t dim, Loc where) const {
  int64_t d = normalize_axis(dim, ndim(), "split", where);
  if (ndim() == 0) throw ShapeError("split", "cannot split a 0-d tensor", where);
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw ArgumentError("split", "negative size in " + tensor::list_str(sizes), where);
    sum += s;
  }
  if (sum != shape()[d])
    throw ShapeError("split", "sizes " + tensor::list_str(sizes) + " add up to " + std::to_string(sum) + ", not the " +
                                  std::to_string(shape()[d]) + " of dimension " + std::to_string(d) + " in " + shape_str(shape()), where);
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int64_t i = 0; i < ndim(); i++) r.push_back(i == d ? std::pair{offset, offset + s} : std::pair{int64_t{0}, shape()[i]});
    out.push_back(shrink(r, where));
    offset += s;
  }
  return out;
}

namespace {

// The sizes of pieces of `size` along dimension d, the last one shorter where it does not divide.
std::vector<int64_t> even_pieces(const char* op, const Shape& shape, int64_t d, int64_t size, SourceLocation where) {
  // Each piece is a graph node of a few hundred bytes: past this count the pieces cannot fit in memory, and the
  // process would be killed for it rather than raise.
  constexpr int64_t kMostPieces = int64_t{1} << 24;
  int64_t pieces = shape[d] / size + (shape[d] % size != 0);
  if (pieces > kMostPieces)
    throw ArgumentError(op, "pieces of " + std::to_string(size) + " along dimension " + std::to_string(d) + " of " +
                                shape_str(shape) + " make " + std::to_string(pieces) + " tensors, more than " +
                                std::to_string(kMostPieces) + "; take the ones you need with shrink", where);
  std::vector<int64_t> sizes;
  for (int64_t left = shape[d]; left > 0; left -= size) sizes.push_back(std::min(size, left));
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

}  // namespace

std::vector<Tensor> Tensor::split(int64_t size, int64_t dim, Loc where) const {
  if (size <= 0) throw ArgumentError("split", "size must be positive, got " + std::to_string(size), where);
  int64_t d = normalize_axis(dim, ndim(), "split", where);
  if (ndim() == 0) throw ShapeError("split", "cannot split a 0-d tensor", where);
  return split(even_pieces("split", shape(), d, size, where), d, where);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim, Loc where) const {
  if (chunks <= 0) throw ArgumentError("chunk", "needs a positive number of chunks, got " + std::to_string(chunks), where);
  int64_t d = normalize_axis(dim, ndim(), "chunk", where);
  if (ndim() == 0) throw ShapeError("chunk", "cannot split a 0-d tensor", where);
  // as PyTorch: pieces of ceil(n / chunks), so there may be fewer than `chunks`
  int64_t size = std::max<int64_t>(1, shape()[d] / chunks + (shape()[d] % chunks != 0));
  return split(even_pieces("chunk", shape(), d, size, where), d, where);
}

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing, Loc where) {
  if (indexing != "ij" && indexing != "xy")
    throw ArgumentError("meshgrid", "indexing is \"ij\" or \"xy\", not \"" + indexing + "\"", where);
  Shape out;
  for (const Tensor& t : tensors) {
    if (t.ndim() > 1) throw ShapeError("meshgrid", "needs 0-d or 1-d tensors, got shape " + shape_str(t.shape()), where);
    out.push_back(t.numel());
  }
  bool xy = indexing == "xy" && tensors.size() >= 2;
  if (xy) std::swap(out[0], out[1]);
  std::vector<Tensor> grids;
  for (size_t i = 0; i < tensors.size(); i++) {
    size_t axis = xy && i < 2 ? 1 - i : i;
    Shape s(tensors.size(), 1);
    s[axis] = tensors[i].numel();
    grids.push_back(tensors[i].reshape(s, where).expand(out, where));
  }
  return grids;
}

}  // namespace tg
