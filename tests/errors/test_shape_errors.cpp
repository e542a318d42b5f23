// Bad movement-op arguments raise a tg::ShapeError that names the op and the shapes.
#include <gtest/gtest.h>

#include "shape/shapetracker.h"
#include "support/expect_error.h"

using namespace tg;
using namespace tg::shape;

namespace {

template <class F>
void expect_shape_error(F f, const std::string& op, const std::vector<std::string>& parts) {
  tg::testing::expect_error<ShapeError>(f, op, parts, "test_shape_errors.cpp");
}

const ShapeTracker st = ShapeTracker::from_shape({3, 4});

}  // namespace

TEST(ShapeErrors, Reshape) {
  expect_shape_error([] { st.reshape({5, 2}); }, "reshape", {"(3, 4)", "(5, 2)", "12 elements", "10 elements"});
  expect_shape_error([] { st.reshape({-1, 12}); }, "reshape", {"(3, 4)", "(-1, 12)"});
}

TEST(ShapeErrors, Permute) {
  expect_shape_error([] { st.permute({0, 0}); }, "permute", {"(0, 0)", "(3, 4)"});
  expect_shape_error([] { st.permute({0, 2}); }, "permute", {"(0, 2)", "(3, 4)"});
  expect_shape_error([] { st.permute({1}); }, "permute", {"(1,)", "(3, 4)"});
  expect_shape_error([] { st.permute({-1, 0}); }, "permute", {"(-1, 0)"});
}

TEST(ShapeErrors, Expand) {
  expect_shape_error([] { st.expand({3, 8}); }, "expand", {"(3, 4)", "(3, 8)", "size 1"});
  expect_shape_error([] { st.expand({1, 3, 4}); }, "expand", {"(3, 4)", "(1, 3, 4)"});
  expect_shape_error([] { ShapeTracker::from_shape({1}).expand({-2}); }, "expand", {"(1,)", "(-2,)"});
}

TEST(ShapeErrors, Pad) {
  expect_shape_error([] { st.pad({{0, 0}, {-1, 2}}); }, "pad", {"negative", "((0, 0), (-1, 2))", "(3, 4)"});
  expect_shape_error([] { st.pad({{1, 1}}); }, "pad", {"((1, 1),)", "(3, 4)"});
}

TEST(ShapeErrors, Shrink) {
  expect_shape_error([] { st.shrink({{0, 3}, {2, 5}}); }, "shrink", {"out of bounds", "(2, 5)", "(3, 4)"});
  expect_shape_error([] { st.shrink({{2, 1}, {0, 4}}); }, "shrink", {"inverted", "(2, 1)", "(3, 4)"});
  expect_shape_error([] { st.shrink({{-1, 1}, {0, 4}}); }, "shrink", {"out of bounds", "(3, 4)"});
  expect_shape_error([] { st.shrink({{0, 1}}); }, "shrink", {"(3, 4)"});
}

TEST(ShapeErrors, StrideAndFlip) {
  expect_shape_error([] { st.stride({1, 0}); }, "stride", {"step 0", "(1, 0)", "(3, 4)"});
  expect_shape_error([] { st.stride({2}); }, "stride", {"(2,)", "(3, 4)"});
  expect_shape_error([] { st.flip({true}); }, "flip", {"(3, 4)"});
}
