// View: one strided, masked way of reading a flat buffer as an n-d array. The building block of ShapeTracker.
//
// Position (i0, .., in) of a View reads buffer element offset + sum(ik * strides[k]) when every ik lies in the
// half-open range mask[k]; outside the mask the value is padding (zero). Every movement op is a new View over the
// same buffer: nothing is copied.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/dim.h"
#include "tg/error.h"
#include "uop/uop.h"

namespace tg::shape {

// A dimension: an integer, or an expression over bound Variables (symbolic shapes). Shapes, strides, offsets and
// masks may all be symbolic; a check that cannot be decided for every value of the variables is decided at their
// bound values.
using sint = tg::Dim;
using Shape = std::vector<sint>;
// Per-dimension half-open ranges: the valid part of each dimension (mask), or pad/shrink arguments.
using Ranges = std::vector<std::pair<sint, sint>>;

sint prod(const Shape& shape);
int64_t prod(const std::vector<int64_t>& shape);
Shape strides_for_shape(const Shape& shape);  // row-major, 0 for dimensions of size 1
std::string shape_str(const Shape& shape);    // Python's tuple notation: "(10, 10)", "(100,)", "()"
std::string shape_str(const std::vector<int64_t>& shape);
std::string ranges_str(const Ranges& ranges);  // "((0, 2), (1, 3))"
// int64 sizes as Dims, and back (a symbolic size raises a ShapeError naming `op`)
Shape dims(const std::vector<int64_t>& ints);
std::vector<int64_t> ints(const Shape& shape, const char* op);
bool is_symbolic(const Shape& shape);

struct View {
  Shape shape;
  Shape strides;
  sint offset = 0;
  std::optional<Ranges> mask;  // none when every position is valid
  bool contiguous = true;      // reads the buffer in order from 0: offset 0, no mask, row-major strides

  // The canonical View: stride 0 for size-1 and single-position dimensions, no mask when it covers everything,
  // everything zero when the shape or the mask is empty. Strides default to row-major.
  static View create(Shape shape, std::optional<Shape> strides = std::nullopt, sint offset = 0,
                     std::optional<Ranges> mask = std::nullopt);

  sint size() const { return prod(shape); }
  size_t ndim() const { return shape.size(); }
  bool fully_masked() const;  // no position is valid

  // Movement ops. Each checks its argument and throws a tg::ShapeError naming the op and the shapes.
  // reshape gives nullopt when no single View can express the result; the ShapeTracker then stacks a new one.
  std::optional<View> reshape(const Shape& new_shape, SourceLocation where = SourceLocation::current()) const;
  View permute(const std::vector<int64_t>& order, SourceLocation where = SourceLocation::current()) const;
  View expand(const Shape& new_shape, SourceLocation where = SourceLocation::current()) const;
  View pad(const Ranges& before_after, SourceLocation where = SourceLocation::current()) const;
  View shrink(const Ranges& ranges, SourceLocation where = SourceLocation::current()) const;
  // Keeps every step-th position of each dimension; a negative step walks it backwards from its last position.
  View stride(const std::vector<int64_t>& steps, SourceLocation where = SourceLocation::current()) const;
  View flip(const std::vector<bool>& axes, SourceLocation where = SourceLocation::current()) const;

  // The same View with size-1 dimensions dropped and every mergeable pair of dimensions merged: the fewest
  // dimensions, so unravelling a flat index into it gives the simplest index math.
  View minified() const;

  // (index, valid) for positions idxs (one integer UOp per dimension), not simplified.
  std::pair<uop::UOp, uop::UOp> to_indexed(const std::vector<uop::UOp>& idxs) const;
  // One past the largest buffer element a valid position reads, at the variables' largest values; 0 when none is
  // valid.
  int64_t max_extent() const;

  bool operator==(const View&) const = default;
  std::string repr() const;  // View(shape=(10, 10), strides=(10, 1), offset=0, mask=None, contiguous=True)
};

}  // namespace tg::shape
