// Movement ops composed from the six primitives: view, transpose, flatten, squeeze, repeat, pad modes, roll, triu ...
#include <algorithm>
#include <map>

#include "tensor/tensor_impl.h"

namespace tg {

using tensor::normalize_axis;
using tensor::shape_str;
using Pads = std::vector<std::pair<int64_t, int64_t>>;

Tensor Tensor::view(const Shape& shape, Loc where) const { return reshape(shape, where); }

Tensor Tensor::transpose(int64_t dim0, int64_t dim1, Loc where) const {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < ndim(); i++) order.push_back(i);
  int64_t a = normalize_axis(dim0, ndim(), "transpose", where), b = normalize_axis(dim1, ndim(), "transpose", where);
  if (ndim() == 0) return *this;
  std::swap(order[a], order[b]);
  return permute(order, where);
}

Tensor Tensor::T(Loc where) const { return ndim() < 2 ? *this : transpose(1, 0, where); }

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim, Loc where) const {
  int64_t s = normalize_axis(start_dim, ndim(), "flatten", where), e = normalize_axis(end_dim, ndim(), "flatten", where);
  if (ndim() == 0) return reshape({1}, where);
  if (s > e)
    throw ArgumentError("flatten", "start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim) +
                                       " for shape " + shape_str(shape()), where);
  Shape out(shape().begin(), shape().begin() + s);
  out.push_back(tensor::prod(Shape(shape().begin() + s, shape().begin() + e + 1)));
  out.insert(out.end(), shape().begin() + e + 1, shape().end());
  return reshape(out, where);
}

Tensor Tensor::unflatten(int64_t dim, const Shape& sizes, Loc where) const try {
  int64_t d = normalize_axis(dim, ndim(), "unflatten", where);
  if (ndim() == 0) throw ShapeError("unflatten", "a 0-d tensor has no dimension to unflatten", where);
  if (sizes.empty()) throw ShapeError("unflatten", "needs at least one size for dimension " + std::to_string(d) + " of " + shape_str(shape()), where);
  Shape inner = Tensor::empty({shape()[d]}).reshape(sizes, where).shape();  // checks sizes and infers -1 (no data)
  Shape out(shape().begin(), shape().begin() + d);
  out.insert(out.end(), inner.begin(), inner.end());
  out.insert(out.end(), shape().begin() + d + 1, shape().end());
  return reshape(out, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "unflatten", where);
}

Tensor Tensor::squeeze(Loc where) const {
  Shape out;
  for (int64_t d : shape())
    if (d != 1) out.push_back(d);
  return reshape(out, where);
}
Tensor Tensor::squeeze(int64_t dim, Loc where) const {
  int64_t d = normalize_axis(dim, ndim(), "squeeze", where);
  std::vector<Dim> out = sym_shape();
  if (ndim() == 0 || !(out[d] == Dim(1))) return *this;  // as PyTorch: only a dimension of size 1 goes
  out.erase(out.begin() + d);
  return reshape(out, where);
}
Tensor Tensor::unsqueeze(int64_t dim, Loc where) const {
  int64_t d = normalize_axis(dim, ndim() + 1, "unsqueeze", where);
  std::vector<Dim> out = sym_shape();
  out.insert(out.begin() + d, Dim(1));
  return reshape(out, where);
}

Tensor Tensor::repeat(const Shape& repeats, Loc where) const {
  if (repeats.size() < shape().size())
    throw ShapeError("repeat", "needs at least one repeat count per dimension: " + tensor::list_str(repeats) + " for shape " +
                                   shape_str(shape()), where);
  for (int64_t r : repeats)
    if (r < 0) throw ArgumentError("repeat", "negative repeat count in " + tensor::list_str(repeats), where);
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  // (1, d0, 1, d1, ...) expanded to (r0, d0, r1, d1, ...), then merged pairwise
  Shape spread, tiled, out;
  for (size_t i = 0; i < base.size(); i++) {
    spread.insert(spread.end(), {1, base[i]});
    tiled.insert(tiled.end(), {repeats[i], base[i]});
  }
  tensor::checked_numel(tiled, "repeat", where);  // before the products below, which it keeps in range
  for (size_t i = 0; i < base.size(); i++) out.push_back(repeats[i] * base[i]);
  return reshape(spread, where).expand(tiled, where).reshape(out, where);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim, Loc where) const {
  if (repeats < 0) throw ArgumentError("repeat_interleave", "negative repeat count " + std::to_string(repeats), where);
  if (!dim) return flatten(0, -1, where).repeat_interleave(repeats, 0, where);
  int64_t d = normalize_axis(*dim, ndim(), "repeat_interleave", where);
  if (ndim() == 0) return reshape({1}, where).repeat_interleave(repeats, 0, where);
  Shape big = unsqueeze(d + 1, where).shape();
  big[d + 1] = repeats;
  tensor::checked_numel(big, "repeat_interleave", where);
  return unsqueeze(d + 1, where).expand(big, where).flatten(d, d + 1, where);
}

namespace {

// The negative widths of `padding` as a crop of x: (begin, end) per dimension
Tensor crop(const Tensor& x, const Pads& padding, const char* name, SourceLocation where) {
  Pads keep;
  for (int64_t d = 0; d < x.ndim(); d++) {
    auto [b, a] = padding[d];
    // in 128 bits: -INT64_MIN is not an int64
    __int128 lo = b < 0 ? -static_cast<__int128>(b) : 0, hi = x.shape()[d] - (a < 0 ? -static_cast<__int128>(a) : 0);
    if (hi < lo)
      throw ArgumentError(name, "padding (" + std::to_string(b) + ", " + std::to_string(a) + ") removes more than the " +
                                    std::to_string(x.shape()[d]) + " elements of axis " + std::to_string(d), where);
    keep.push_back({static_cast<int64_t>(lo), static_cast<int64_t>(hi)});
  }
  return x.shrink(keep, where);
}

}  // namespace

Tensor Tensor::pad(const Pads& padding, PadMode mode, double value, Loc where) const {
  if (mode == PadMode::constant) return pad(padding, value, where);
  const char* name = mode == PadMode::reflect ? "pad (reflect)" : mode == PadMode::replicate ? "pad (replicate)" : "pad (circular)";
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw ShapeError(name, std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_str(shape()), where);
  // negative widths crop, as PyTorch's: circular wraps what is left after the crop, reflect and replicate index the
  // whole input (so they pad first and crop after)
  bool has_negative = std::any_of(padding.begin(), padding.end(), [](const auto& p) { return p.first < 0 || p.second < 0; });
  Tensor x = mode == PadMode::circular && has_negative ? crop(*this, padding, name, where) : *this;
  for (int64_t d = 0; d < ndim(); d++) {
    int64_t b = std::max<int64_t>(0, padding[d].first), a = std::max<int64_t>(0, padding[d].second);
    int64_t n = x.shape()[d];
    int64_t limit = mode == PadMode::reflect ? n - 1 : mode == PadMode::circular ? n : (n > 0 ? INT64_MAX : 0);
    if (b > limit || a > limit)
      throw ArgumentError(name, "padding (" + std::to_string(padding[d].first) + ", " + std::to_string(padding[d].second) + ") does not fit axis " +
                                    std::to_string(d) + " of size " + std::to_string(n) + " in shape " + shape_str(shape()), where);
    if (b == 0 && a == 0) continue;
    auto part = [&](int64_t lo, int64_t hi) {
      Pads r;
      for (int64_t i = 0; i < ndim(); i++) r.push_back(i == d ? std::pair{lo, hi} : std::pair{int64_t{0}, x.shape()[i]});
      return x.shrink(r, where);
    };
    Tensor before, after;
    if (mode == PadMode::reflect) before = part(1, b + 1).flip(d, where), after = part(n - 1 - a, n - 1).flip(d, where);
    else if (mode == PadMode::circular) before = part(n - b, n), after = part(0, a);
    else {
      Shape sb = x.shape(), sa = x.shape();
      sb[d] = b, sa[d] = a;
      before = part(0, 1).expand(sb, where), after = part(n - 1, n).expand(sa, where);
    }
    x = Tensor::cat({before, x, after}, d, where);
  }
  return mode != PadMode::circular && has_negative ? crop(x, padding, name, where) : x;
}

Tensor Tensor::pad2d(const std::vector<int64_t>& padding, double value, Loc where) const {
  if (padding.size() % 2 != 0 || static_cast<int64_t>(padding.size() / 2) > ndim())
    throw ShapeError("pad2d", "padding " + tensor::list_str(padding) + " needs (before, after) pairs for at most the " +
                                  std::to_string(ndim()) + " dimensions of " + shape_str(shape()), where);
  Pads p(ndim(), {0, 0});
  for (size_t i = 0; i < padding.size() / 2; i++) p[ndim() - 1 - i] = {padding[2 * i], padding[2 * i + 1]};
  return pad(p, value, where);
}

Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims, Loc where) const {
  if (dims.empty() && shifts.size() == 1) return flatten(0, -1, where).roll(shifts, {0}, where).reshape(shape(), where);
  if (shifts.size() != dims.size())
    throw ArgumentError("roll", "shifts " + tensor::list_str(shifts) + " and dims " + tensor::list_str(dims) +
                                    " have different lengths", where);
  Tensor x = *this;
  for (size_t i = 0; i < dims.size(); i++) {
    int64_t d = normalize_axis(dims[i], ndim(), "roll", where);
    if (ndim() == 0) continue;
    int64_t n = shape()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    std::vector<Tensor> parts = x.split({n - s, s}, d, where);
    x = Tensor::cat({parts[1], parts[0]}, d, where);
  }
  return x;
}

namespace {

// keeps the elements with col - row >= k (upper) or <= k (lower) of the last two dims
Tensor triangle(const Tensor& x, int64_t k, bool upper, const char* name, SourceLocation where) {
  if (x.ndim() < 2) throw ShapeError(name, "needs at least 2 dimensions, got shape " + shape_str(x.shape()), where);
  int64_t n = x.shape()[x.ndim() - 2], m = x.shape()[x.ndim() - 1];
  Tensor row = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64, x.device(), where).reshape({n, 1});
  Tensor col = Tensor::arange(0, static_cast<double>(m), 1, dtypes::int64, x.device(), where).reshape({1, m});
  Tensor diff = col - row;
  return (upper ? diff >= k : diff <= k).where(x, x.zeros_like());
}

}  // namespace

Tensor Tensor::triu(int64_t diagonal, Loc where) const { return triangle(*this, diagonal, true, "triu", where); }
Tensor Tensor::tril(int64_t diagonal, Loc where) const { return triangle(*this, diagonal, false, "tril", where); }

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2, Loc where) const try {
  if (ndim() < 2) throw ShapeError("diagonal", "needs at least 2 dimensions, got shape " + shape_str(shape()), where);
  int64_t a = normalize_axis(dim1, ndim(), "diagonal", where), b = normalize_axis(dim2, ndim(), "diagonal", where);
  if (a == b) throw ArgumentError("diagonal", "dim1 and dim2 are the same dimension (" + std::to_string(a) + ")", where);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < ndim(); i++)
    if (i != a && i != b) order.push_back(i);
  order.push_back(a), order.push_back(b);
  Tensor x = permute(order, where);
  int64_t rows = x.shape()[ndim() - 2], cols = x.shape()[ndim() - 1];
  // the (d, d) block that starts at the offset, flattened: its diagonal is every (d + 1)-th element
  int64_t r0 = offset < 0 ? std::min(-offset, rows) : 0, c0 = offset > 0 ? std::min(offset, cols) : 0;
  int64_t d = std::min(rows - r0, cols - c0);
  Pads box;
  for (int64_t i = 0; i < ndim() - 2; i++) box.push_back({0, x.shape()[i]});
  Shape lead(x.shape().begin(), x.shape().end() - 2), flat = lead, grid = lead;
  box.push_back({r0, r0 + d}), box.push_back({c0, c0 + d});
  flat.push_back(d * d), grid.insert(grid.end(), {d, d + 1});
  Pads grow(lead.size(), {0, 0}), first(box.begin(), box.end() - 2);
  grow.push_back({0, d});
  first.push_back({0, d}), first.push_back({0, 1});
  Shape out = lead;
  out.push_back(d);
  return x.shrink(box, where).reshape(flat, where).pad(grow, 0, where).reshape(grid, where).shrink(first, where).reshape(out, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "diagonal", where);
}

Tensor Tensor::diag(int64_t offset, Loc where) const try {
  if (ndim() == 2) return diagonal(offset, 0, 1, where);
  if (ndim() != 1) throw ShapeError("diag", "needs a 1-d or 2-d tensor, got shape " + shape_str(shape()), where);
  // (n, 1) padded to (n, n + 1) and read as n rows of n: x on the diagonal, zeros elsewhere
  int64_t n = shape()[0], k = std::abs(offset);
  Tensor m = unsqueeze(-1, where).pad({{0, 0}, {0, n}}, 0, where).flatten(0, -1, where).shrink({{0, n * n}}, where).reshape({n, n}, where);
  return offset >= 0 ? m.pad({{0, k}, {k, 0}}, 0, where) : m.pad({{k, 0}, {0, k}}, 0, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "diag", where);
}

namespace {

// shape with keep_dim resolved, one entry per dimension of x
Shape resolved(const Tensor& x, const Shape& shape, const char* name, SourceLocation where) {
  if (static_cast<int64_t>(shape.size()) != x.ndim())
    throw ShapeError(name, "shape " + shape_str(shape) + " for a tensor of shape " + shape_str(x.shape()) + " needs one entry per dimension", where);
  Shape s = shape;
  for (size_t i = 0; i < s.size(); i++)
    if (s[i] == keep_dim) s[i] = x.shape()[i];
  return s;
}

}  // namespace

Tensor Tensor::pad_to(const Shape& shape_, Loc where) const {
  Shape s = resolved(*this, shape_, "pad_to", where);
  Pads p;
  for (int64_t i = 0; i < ndim(); i++) {
    if (s[i] < shape()[i]) throw ShapeError("pad_to", "cannot pad " + shape_str(shape()) + " to the smaller " + shape_str(s), where);
    p.push_back({0, s[i] - shape()[i]});
  }
  return pad(p, 0, where);
}

Tensor Tensor::shrink_to(const Shape& shape_, Loc where) const {
  Shape s = resolved(*this, shape_, "shrink_to", where);
  Pads r;
  for (int64_t i = 0; i < ndim(); i++) {
    if (s[i] < 0 || s[i] > shape()[i]) throw ShapeError("shrink_to", "cannot cut " + shape_str(shape()) + " to " + shape_str(s), where);
    r.push_back({0, s[i]});
  }
  return shrink(r, where);
}

namespace {

// One side of a rearrange formula: its groups of names ("(h w)" is one group of two, "1" or "()" a group of none)
std::vector<std::vector<std::string>> parse_side(const std::string& side, const std::string& formula, SourceLocation where) {
  std::vector<std::vector<std::string>> groups;
  bool open = false;
  std::string tok;
  auto flush = [&] {
    if (tok.empty()) return;
    if (tok == "1") {
      if (open) throw ArgumentError("rearrange", "\"1\" inside a group in \"" + formula + "\"", where);
      groups.push_back({});
    } else if (open) {
      groups.back().push_back(tok == "..." ? "(...)" : tok);  // an ellipsis in a group: its dimensions flattened
    } else {
      groups.push_back({tok});
    }
    tok.clear();
  };
  for (char c : side) {
    if (c == '(' || c == ')' || c == ' ') {
      flush();
      if (c == '(' && open) throw ArgumentError("rearrange", "nested brackets in \"" + formula + "\"", where);
      if (c == ')' && !open) throw ArgumentError("rearrange", "unmatched ')' in \"" + formula + "\"", where);
      if (c == '(') groups.push_back({});
      if (c != ' ') open = c == '(';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      tok += c;
    } else {
      throw ArgumentError("rearrange", "unexpected '" + std::string(1, c) + "' in \"" + formula + "\"", where);
    }
  }
  flush();
  if (open) throw ArgumentError("rearrange", "unclosed '(' in \"" + formula + "\"", where);
  return groups;
}

}  // namespace

Tensor Tensor::rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes, Loc where) const try {
  size_t arrow = formula.find("->");
  if (arrow == std::string::npos || formula.find("->", arrow + 2) != std::string::npos)
    throw ArgumentError("rearrange", "needs exactly one \"->\" in \"" + formula + "\"", where);
  auto lhs = parse_side(formula.substr(0, arrow), formula, where), rhs = parse_side(formula.substr(arrow + 2), formula, where);
  // "..." stands for the dimensions the other groups leave: named ...0, ...1 ... on both sides
  auto expand = [&](std::vector<std::vector<std::string>>& side, int64_t count) {
    std::vector<std::vector<std::string>> out;
    for (auto& g : side) {
      if (g.size() == 1 && g[0] == "...") {
        for (int64_t i = 0; i < count; i++) out.push_back({"..." + std::to_string(i)});
      } else {  // inside a group ("(...)"), the dimensions it stands for are flattened together
        std::vector<std::string> names;
        for (const std::string& n : g) {
          if (n != "(...)") names.push_back(n);
          for (int64_t i = 0; n == "(...)" && i < count; i++) names.push_back("..." + std::to_string(i));
        }
        out.push_back(names);
      }
    }
    side = out;
  };
  for (const auto& g : lhs)
    if (std::count(g.begin(), g.end(), "(...)") > 0)
      throw ArgumentError("rearrange", "\"...\" inside a group on the left of \"" + formula + "\"", where);
  int64_t named = static_cast<int64_t>(lhs.size()) - static_cast<int64_t>(std::count(lhs.begin(), lhs.end(), std::vector<std::string>{"..."}));
  bool ellipsis = named != static_cast<int64_t>(lhs.size());
  if (ellipsis ? named > ndim() : named != ndim())
    throw ShapeError("rearrange", "\"" + formula + "\" names " + std::to_string(named) + " dimensions of a tensor of shape " + shape_str(shape()), where);
  expand(lhs, ndim() - named), expand(rhs, ndim() - named);
  std::map<std::string, int64_t> size(sizes.begin(), sizes.end());
  std::vector<std::string> names;  // the left side's names in order: x reshaped to one dimension each
  Shape split;
  for (size_t d = 0; d < lhs.size(); d++) {
    int64_t known = 1, unknown = -1;
    for (size_t j = 0; j < lhs[d].size(); j++) {
      const std::string& n = lhs[d][j];
      if (std::find(names.begin(), names.end(), n) != names.end())
        throw ArgumentError("rearrange", "\"" + n + "\" appears twice on the left of \"" + formula + "\"", where);
      names.push_back(n);
      if (lhs[d].size() == 1) size[n] = shape()[d];
      if (size.count(n)) known *= size[n];
      else if (unknown >= 0)
        throw ArgumentError("rearrange", "group " + std::to_string(d) + " of \"" + formula + "\" has two unknown sizes (\"" +
                                             lhs[d][unknown] + "\" and \"" + n + "\"): give all its sizes but one", where);
      else unknown = static_cast<int64_t>(j);
    }
    if (unknown >= 0) size[lhs[d][unknown]] = known ? shape()[d] / known : 0;
    int64_t total = 1;
    for (const std::string& n : lhs[d]) total *= size[n], split.push_back(size[n]);
    if (total != shape()[d])
      throw ShapeError("rearrange", "group " + std::to_string(d) + " of \"" + formula + "\" has " + std::to_string(total) + " elements, dimension " +
                                        std::to_string(d) + " of " + shape_str(shape()) + " has " + std::to_string(shape()[d]), where);
  }
  for (const auto& [n, v] : sizes)
    if (std::find(names.begin(), names.end(), n) == names.end())
      throw ArgumentError("rearrange", "size given for \"" + n + "\", which the left of \"" + formula + "\" does not name", where);
  std::vector<int64_t> order;
  Shape out;
  for (const auto& g : rhs) {
    int64_t total = 1;
    for (const std::string& n : g) {
      auto it = std::find(names.begin(), names.end(), n);
      if (it == names.end())
        throw ArgumentError("rearrange", "\"" + n + "\" is on the right of \"" + formula + "\" only: every name is once on both sides", where);
      order.push_back(it - names.begin());
      total *= size[n];
    }
    out.push_back(total);
  }
  if (order.size() != names.size())
    throw ArgumentError("rearrange", "every name of \"" + formula + "\" must be once on both sides", where);
  return reshape(split, where).permute(order, where).reshape(out, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "rearrange", where);
}

}  // namespace tg
