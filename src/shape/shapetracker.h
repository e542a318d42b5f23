// ShapeTracker: a stack of Views, so that any sequence of movement ops is zero copy.
//
// views[0] reads the buffer; each View above it reads the one below as a flat, row-major array of that View's
// shape. Movement ops change the top View; a reshape that the top View cannot absorb pushes a new one.
// simplify() merges adjacent Views when one View expresses both exactly.
#pragma once
#include <iosfwd>
#include <vector>

#include "shape/view.h"

namespace tg::shape {

class ShapeTracker {
 public:
  explicit ShapeTracker(std::vector<View> views);
  static ShapeTracker from_shape(const Shape& shape) { return ShapeTracker({View::create(shape)}); }

  const std::vector<View>& views() const { return views_; }
  const Shape& shape() const { return views_.back().shape; }
  const Shape& strides() const { return views_.back().strides; }  // of the top View
  size_t ndim() const { return shape().size(); }
  sint size() const { return prod(shape()); }
  // How many buffer elements the positions can reach (at the variables' largest values): the buffer must hold at
  // least this many.
  int64_t real_size() const { return views_.front().max_extent(); }
  // One View reading the whole buffer in order: the tensor is its buffer.
  bool contiguous() const { return views_.size() == 1 && views_[0].contiguous; }

  // Movement ops; each throws a tg::ShapeError naming the op and the shapes for a bad argument.
  ShapeTracker reshape(const Shape& new_shape, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker permute(const std::vector<int64_t>& order, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker expand(const Shape& new_shape, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker pad(const Ranges& before_after, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker shrink(const Ranges& ranges, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker stride(const std::vector<int64_t>& steps, SourceLocation where = SourceLocation::current()) const;
  ShapeTracker flip(const std::vector<bool>& axes, SourceLocation where = SourceLocation::current()) const;

  // The same positions with as few Views as exact merging allows.
  ShapeTracker simplify() const;
  // `upper` applied on top of this one: upper's buffer is what this ShapeTracker presents.
  ShapeTracker compose(const ShapeTracker& upper) const;

  // (index into the buffer, valid) for positions idxs, one integer UOp per dimension, simplified.
  std::pair<uop::UOp, uop::UOp> to_indexed(const std::vector<uop::UOp>& idxs) const;
  // The same over variables idx0..idxN, each ranging over its dimension (int32, or int64 when needed).
  std::pair<uop::UOp, uop::UOp> to_indexed() const;
  // Whether index math needs int64: some View reaches past what int32 holds.
  bool needs_int64() const;

  bool operator==(const ShapeTracker& o) const { return views_ == o.views_; }
  uint64_t hash() const;
  std::string repr() const;  // ShapeTracker(views=(View(shape=(10, 10), strides=(10, 1), ...),))

 private:
  ShapeTracker with_top(View v) const;
  std::vector<View> views_;
};

std::ostream& operator<<(std::ostream& os, const ShapeTracker& st);
std::ostream& operator<<(std::ostream& os, const View& v);

// One View reading what `upper` reads from the flat positions of `lower`, or nullopt when no View does exactly.
std::optional<View> merge_views(const View& lower, const View& upper);

// The per-dimension positions of flat index `idx` in a row-major array of `shape`.
std::vector<uop::UOp> unravel(const Shape& shape, const uop::UOp& idx);

}  // namespace tg::shape
