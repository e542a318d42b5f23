// Argument types of the Tensor methods: the C++ spellings of tinygrad's `axis=None | int | tuple`,
// `stride=int | tuple`, indexing with ints, slices, None, ... and tensors, pad modes and loss reductions.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "tg/error.h"

namespace tg {

class Tensor;

// The axes of a reduction: all of them (the default, tinygrad's axis=None), one, or a list.
//   x.sum()   x.sum(1)   x.sum({0, 2}, true)
class Axes {
 public:
  Axes() = default;
  Axes(int64_t axis) : axes_(std::vector<int64_t>{axis}) {}
  Axes(int axis) : Axes(static_cast<int64_t>(axis)) {}
  Axes(std::initializer_list<int64_t> axes) : axes_(std::vector<int64_t>(axes)) {}
  Axes(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  bool all() const { return !axes_.has_value(); }
  // the listed axes, or 0..ndim-1 for all
  std::vector<int64_t> resolve(int64_t ndim) const;

 private:
  std::optional<std::vector<int64_t>> axes_;
};

// One size for every spatial dimension, or one per dimension: stride 2 or {2, 1}. A list of one ({3}) is one
// dimension where the count matters (a pool's kernel: 1-d pooling), unlike the number 3 (every dimension).
class Ints {
 public:
  Ints(int64_t v) : v_{v}, scalar_(true) {}
  Ints(int v) : v_{v}, scalar_(true) {}
  Ints(std::initializer_list<int64_t> v) : v_(v) {}
  Ints(std::vector<int64_t> v) : v_(std::move(v)) {}
  const std::vector<int64_t>& values() const { return v_; }
  bool scalar() const { return scalar_; }  // given as a number, not a list

 private:
  std::vector<int64_t> v_;
  bool scalar_ = false;
};

// A slice start:stop:step as Python writes it; an absent start or stop means "from the edge". The bounds may be
// 0-d integer tensors (tinygrad's x[a:b] with tensors a, b), read when the index is applied (that realizes them).
//   tg::Slice(1, 5)   tg::Slice({}, {}, -1)   tg::Slice()   (the last is `:`)   tg::Slice(start_t, stop_t)
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  std::shared_ptr<const Tensor> start_tensor, stop_tensor;  // set by the tensor form, until the index is applied
  Slice(std::optional<int64_t> b = {}, std::optional<int64_t> e = {}, int64_t s = 1) : start(b), stop(e), step(s) {}
  template <class T>
    requires std::is_same_v<T, Tensor>
  Slice(const T& b, const T& e, int64_t s = 1)
      : step(s), start_tensor(std::make_shared<const T>(b)), stop_tensor(std::make_shared<const T>(e)) {}
};
struct NewAxis {};   // Python's None inside an index: a new dimension of size 1
struct Ellipsis {};  // Python's ...: as many full slices as needed
inline constexpr NewAxis newaxis{};
inline constexpr Ellipsis ellipsis{};

// One entry of an index: x[{0, tg::Slice(1, {}, 2), tg::newaxis, tg::ellipsis, idx}]
class Index {
 public:
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Tensor };
  Index(int64_t i) : kind_(Kind::Int), i_(i) {}
  Index(int i) : Index(static_cast<int64_t>(i)) {}
  Index(tg::Slice s) : kind_(Kind::Slice), slice_(s) {}
  Index(NewAxis) : kind_(Kind::NewAxis) {}
  Index(tg::Ellipsis) : kind_(Kind::Ellipsis) {}
  Index(const Tensor& t);  // integer tensor: advanced indexing; a bool tensor as the only index: x[mask] (PyTorch's)
  Kind kind() const { return kind_; }
  int64_t integer() const { return i_; }
  const tg::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return *t_; }

 private:
  Kind kind_;
  int64_t i_ = 0;
  tg::Slice slice_;
  std::shared_ptr<const Tensor> t_;
};

// The argument of Tensor::operator[]: the indices and the caller's line (operator[] cannot take a defaulted one).
struct IndexAt {
  std::vector<Index> indices;
  SourceLocation where;
  IndexAt(std::initializer_list<Index> i, SourceLocation w = SourceLocation::current()) : indices(i), where(w) {}
  IndexAt(std::vector<Index> i, SourceLocation w = SourceLocation::current()) : indices(std::move(i)), where(w) {}
  IndexAt(int64_t i, SourceLocation w = SourceLocation::current()) : indices{Index(i)}, where(w) {}
  IndexAt(int i, SourceLocation w = SourceLocation::current()) : indices{Index(i)}, where(w) {}
};

enum class PadMode { constant, reflect, replicate, circular };

// How a loss combines its per-element values (PyTorch's reduction=).
enum class Reduction { none, mean, sum };

}  // namespace tg
