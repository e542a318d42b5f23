// ShapeTracker and View: the seed's walk-through, canonical forms, view counts, and a fuzz against a naive
// reference that materializes every movement op.
#include <gtest/gtest.h>

#include "shape/shapetracker.h"
#include "support/shapetracker_check.h"

using namespace tg;
using namespace tg::shape;
using tg::testing::compare_with_reference;
using tg::testing::RefArray;

namespace {

std::string index_of(const ShapeTracker& st) { return st.to_indexed().first.render(); }
std::string valid_of(const ShapeTracker& st) { return st.to_indexed().second.render(); }

}  // namespace

// seed 001, "Example: ShapeTracker", step by step
TEST(ShapeTracker, SeedWalkThrough) {
  ShapeTracker a = ShapeTracker::from_shape({10, 10});
  ASSERT_EQ(a.views().size(), 1u);
  EXPECT_EQ(a.shape(), (Shape{10, 10}));
  EXPECT_EQ(a.strides(), (Shape{10, 1}));

  a = a.permute({1, 0});
  EXPECT_EQ(a.views().size(), 1u);
  EXPECT_EQ(a.strides(), (Shape{1, 10}));

  a = a.reshape({5, 2, 5, 2});
  EXPECT_EQ(a.views().size(), 1u);
  EXPECT_EQ(a.strides(), (Shape{2, 1, 20, 10}));

  a = a.reshape({100});
  ASSERT_EQ(a.views().size(), 2u);
  EXPECT_EQ(a.views()[0].shape, (Shape{5, 2, 5, 2}));
  EXPECT_EQ(a.views()[0].strides, (Shape{2, 1, 20, 10}));
  EXPECT_EQ(a.views()[1].shape, (Shape{100}));
  EXPECT_EQ(a.views()[1].strides, (Shape{1}));
  EXPECT_EQ(index_of(a), "(((idx0%10)*10)+(idx0//10))");

  a = a.reshape({10, 10});
  EXPECT_EQ(index_of(a), "((idx1*10)+idx0)");
  EXPECT_EQ(a.views().size(), 2u);

  a = a.simplify();
  ASSERT_EQ(a.views().size(), 1u);
  EXPECT_EQ(a.shape(), (Shape{10, 10}));
  EXPECT_EQ(a.strides(), (Shape{1, 10}));
  EXPECT_EQ(a.views()[0].offset, 0);

  a = a.permute({1, 0});
  EXPECT_EQ(a.strides(), (Shape{10, 1}));
  EXPECT_TRUE(a.contiguous());
  EXPECT_EQ(a.repr(), "ShapeTracker(views=(View(shape=(10, 10), strides=(10, 1), offset=0, mask=None, contiguous=True),))");
}

TEST(View, CanonicalForm) {
  // size-1 dimensions get stride 0
  View v = View::create({3, 1, 4});
  EXPECT_EQ(v.strides, (Shape{4, 0, 1}));
  EXPECT_TRUE(v.contiguous);
  // a mask covering everything is dropped; one selecting a single position folds into the offset
  EXPECT_FALSE(View::create({2, 3}, Shape{3, 1}, 0, Ranges{{0, 2}, {0, 3}}).mask.has_value());
  View single = View::create({4, 3}, Shape{3, 1}, 0, Ranges{{2, 3}, {0, 3}});
  EXPECT_EQ(single.strides, (Shape{0, 1}));
  EXPECT_EQ(single.offset, 6);
  // an empty mask makes everything zero; so does an empty shape
  View none = View::create({2, 3}, Shape{3, 1}, 5, Ranges{{1, 1}, {0, 3}});
  EXPECT_TRUE(none.fully_masked());
  EXPECT_EQ(none.strides, (Shape{0, 0}));
  EXPECT_EQ(none.offset, 0);
  View empty = View::create({2, 0, 3}, Shape{7, 7, 7}, 4);
  EXPECT_EQ(empty.strides, (Shape{0, 0, 0}));
  EXPECT_TRUE(empty.contiguous);
}

TEST(View, PadThenShrinkBackIsTheOriginal) {
  ShapeTracker st = ShapeTracker::from_shape({3, 4}).pad({{1, 2}, {0, 3}});
  ASSERT_TRUE(st.views()[0].mask.has_value());
  EXPECT_EQ(*st.views()[0].mask, (Ranges{{1, 4}, {0, 4}}));
  EXPECT_EQ(st.views()[0].offset, -4);
  st = st.shrink({{1, 4}, {0, 4}});
  EXPECT_TRUE(st.contiguous());
  EXPECT_EQ(st, ShapeTracker::from_shape({3, 4}));
}

TEST(View, FlipAndStride) {
  ShapeTracker st = ShapeTracker::from_shape({3, 4}).flip({false, true});
  EXPECT_EQ(st.strides(), (Shape{4, -1}));
  EXPECT_EQ(st.views()[0].offset, 3);
  EXPECT_EQ(index_of(st), "((idx0*4)+(idx1*-1)+3)");
  // every second column, backwards: columns 3 and 1
  st = ShapeTracker::from_shape({3, 4}).stride({1, -2});
  EXPECT_EQ(st.shape(), (Shape{3, 2}));
  EXPECT_EQ(st.strides(), (Shape{4, -2}));
  EXPECT_EQ(st.views()[0].offset, 3);
  // steps that do not divide the size round up, as Python's slices do: 5 positions by 3 -> 0 and 3
  EXPECT_EQ(ShapeTracker::from_shape({5}).stride({3}).shape(), (Shape{2}));
  EXPECT_EQ(ShapeTracker::from_shape({5}).stride({-3}).views()[0].offset, 4);  // positions 4 and 1
}

TEST(View, PaddingGivesAValid) {
  ShapeTracker st = ShapeTracker::from_shape({3}).pad({{2, 1}});
  EXPECT_EQ(st.shape(), (Shape{6}));
  EXPECT_EQ(valid_of(st), "(((idx0<2)!=true)&(idx0<5))");
  EXPECT_EQ(index_of(st), "(idx0+-2)");
  // the valid range survives a permute and an expand of another dimension
  st = ShapeTracker::from_shape({3, 1}).pad({{1, 0}, {0, 0}}).expand({4, 5}).permute({1, 0});
  EXPECT_EQ(st.shape(), (Shape{5, 4}));
  EXPECT_EQ(valid_of(st), "((idx1<1)!=true)");
}

TEST(ShapeTracker, RealSize) {
  EXPECT_EQ(ShapeTracker::from_shape({3, 4}).real_size(), 12);
  EXPECT_EQ(ShapeTracker::from_shape({3, 4}).shrink({{1, 2}, {1, 3}}).real_size(), 7);  // reads 5 and 6
  EXPECT_EQ(ShapeTracker::from_shape({3, 1}).expand({3, 100}).real_size(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({3}).pad({{4, 4}}).real_size(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({3}).flip({true}).real_size(), 3);
  EXPECT_EQ(ShapeTracker::from_shape({3, 0}).real_size(), 0);
  EXPECT_EQ(ShapeTracker::from_shape({3}).shrink({{1, 1}}).pad({{2, 0}}).real_size(), 0);  // only padding left
}

// permute + reshape of a contiguous tensor stays one View whenever one View can express it
TEST(ShapeTracker, ViewCounts) {
  auto views_after = [](const ShapeTracker& st) { return st.views().size(); };
  ShapeTracker base = ShapeTracker::from_shape({2, 3, 4});
  // splitting any dimension, and merging dimensions that stay adjacent and in order, never needs a second View
  EXPECT_EQ(views_after(base.permute({2, 0, 1}).reshape({4, 6})), 1u);
  EXPECT_EQ(views_after(base.permute({2, 0, 1}).reshape({2, 2, 3, 2})), 1u);
  EXPECT_EQ(views_after(base.permute({1, 2, 0}).reshape({12, 2})), 1u);
  EXPECT_EQ(views_after(base.reshape({6, 4}).permute({1, 0}).reshape({2, 2, 2, 3})), 1u);
  EXPECT_EQ(views_after(base.permute({0, 2, 1}).reshape({1, 2, 1, 4, 3, 1})), 1u);
  // through size-1 dimensions, expands and shrinks too
  EXPECT_EQ(views_after(base.reshape({2, 1, 12}).expand({2, 5, 12}).reshape({2, 5, 3, 4})), 1u);
  EXPECT_EQ(views_after(base.shrink({{0, 2}, {1, 3}, {0, 4}}).reshape({2, 8})), 1u);
  // merging dimensions that a permute took out of order needs a second View
  EXPECT_EQ(views_after(base.permute({1, 0, 2}).reshape({3, 8})), 2u);
  EXPECT_EQ(views_after(base.permute({2, 1, 0}).reshape({24})), 2u);
}

TEST(ShapeTracker, ReshapeKeepsMasksWherePossible) {
  // rows [1, 3) of a (4, 3) array are the flat run [3, 9): one View
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).pad({{1, 1}, {0, 0}}).reshape({12});
  ASSERT_EQ(st.views().size(), 1u);
  EXPECT_EQ(*st.views()[0].mask, (Ranges{{3, 9}}));
  // splitting it again at the row boundaries stays one View
  EXPECT_EQ(st.reshape({4, 1, 3}).views().size(), 1u);
  EXPECT_EQ(compare_with_reference(st.reshape({4, 1, 3}), RefArray::arange({2, 3}).pad({{1, 1}, {0, 0}}).reshape({4, 1, 3})), "");
  // but rows 1 and 2 as (2, 2, 3) are positions (0, 1, :) and (1, 0, :): not a box, so a second View
  EXPECT_EQ(st.reshape({2, 2, 3}).views().size(), 2u);
  // padding inside rows is not one run: a second View
  EXPECT_EQ(ShapeTracker::from_shape({2, 3}).pad({{0, 0}, {1, 0}}).reshape({8}).views().size(), 2u);
}

TEST(ShapeTracker, SimplifyMergesExactly) {
  // transposing twice through a flat reshape is the identity
  ShapeTracker st = ShapeTracker::from_shape({4, 6}).permute({1, 0}).reshape({24}).reshape({6, 4}).permute({1, 0});
  EXPECT_EQ(st.views().size(), 2u);
  EXPECT_TRUE(st.simplify().contiguous());
  // a padded view under a contiguous reshape merges when the mask stays a box
  st = ShapeTracker::from_shape({3, 2}).pad({{0, 0}, {1, 1}}).permute({1, 0}).reshape({12}).reshape({4, 3});
  ShapeTracker simple = st.simplify();
  EXPECT_EQ(simple.views().size(), 1u);
  EXPECT_EQ(compare_with_reference(simple, RefArray::arange({3, 2}).pad({{0, 0}, {1, 1}}).permute({1, 0})), "");
  // a flatten of a transposed array cannot be one View
  st = ShapeTracker::from_shape({3, 5}).permute({1, 0}).reshape({15});
  EXPECT_EQ(st.simplify().views().size(), 2u);
  // a pair deep in a stack merges where the top pair cannot: a (K, N) matrix split into panels (K, N/4, 4),
  // panels first and back, composed view by view as a kernel reads it (every op its own View), is the matrix
  // itself; the top pair, a flatten of the panels' permuted view, is no View alone
  ShapeTracker panels = ShapeTracker::from_shape({3, 8}).reshape({3, 2, 4});
  ShapeTracker stack = panels.compose(ShapeTracker::from_shape({3, 2, 4}).permute({1, 0, 2}))
                           .compose(ShapeTracker::from_shape({2, 3, 4}).permute({1, 0, 2}))
                           .compose(ShapeTracker::from_shape({3, 2, 4}).reshape({3, 8}));
  ASSERT_EQ(stack.views().size(), 4u);
  EXPECT_FALSE(merge_views(stack.views()[2], stack.views()[3]));
  ShapeTracker merged = stack.simplify();
  EXPECT_EQ(merged.views().size(), 1u);
  EXPECT_TRUE(merged.contiguous());
  EXPECT_EQ(compare_with_reference(merged, RefArray::arange({3, 8})), "");
}

TEST(ShapeTracker, EqualityHashAndCompose) {
  ShapeTracker a = ShapeTracker::from_shape({4, 4}).permute({1, 0});
  ShapeTracker b = ShapeTracker::from_shape({4, 4}).permute({1, 0});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a.hash(), ShapeTracker::from_shape({4, 4}).hash());
  ShapeTracker c = ShapeTracker::from_shape({16}).reshape({4, 4}).compose(a);
  EXPECT_EQ(c.views().size(), 2u);  // from_shape(16).reshape is contiguous, but compose keeps both Views
  EXPECT_EQ(c.simplify(), a);
}

TEST(ShapeTracker, ZeroDimAndEmpty) {
  ShapeTracker s = ShapeTracker::from_shape({});
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(index_of(s), "0");
  EXPECT_EQ(s.reshape({1, 1}).expand({3, 2}).real_size(), 1);
  ShapeTracker e = ShapeTracker::from_shape({2, 0, 3});
  EXPECT_EQ(e.size(), 0);
  EXPECT_EQ(e.reshape({0, 5}).shape(), (Shape{0, 5}));
  // padding an empty dimension gives only padding
  ShapeTracker p = ShapeTracker::from_shape({0}).pad({{1, 2}});
  EXPECT_EQ(p.shape(), (Shape{3}));
  EXPECT_EQ(valid_of(p), "false");
  // padding reshaped to () needs its own View: a 0-d View carries no mask
  ShapeTracker z = ShapeTracker::from_shape({1}).shrink({{0, 0}}).pad({{1, 0}}).reshape({});
  EXPECT_EQ(valid_of(z), "false");
  EXPECT_EQ(valid_of(z.simplify()), "false");
}

TEST(ShapeTracker, Int64IndexWhenNeeded) {
  EXPECT_FALSE(ShapeTracker::from_shape({1 << 15, 1 << 15}).needs_int64());
  ShapeTracker big = ShapeTracker::from_shape({1 << 16, 1 << 16});
  EXPECT_TRUE(big.needs_int64());
  EXPECT_EQ(big.to_indexed().first.dtype(), dtypes::int64);
  EXPECT_EQ(index_of(big), "((idx0*65536)+idx1)");
}

// Random chains of movement ops against the naive reference, before and after simplify().
TEST(ShapeTracker, FuzzAgainstReference) {
  EXPECT_EQ(tg::testing::fuzz_movement_chains(20261121, 3000), "");
}
