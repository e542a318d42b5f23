// ShapeTrackers over a symbolic dimension (symbolic shapes, step 1): random chains of movement ops over a shape
// with one dimension p + c (p a bound Variable), built once; for every value of p in its range, the index and valid
// with p substituted read the same elements as the reference array built with that value (support/
// shapetracker_check), position by position, before and after simplify(). Also the reshape segment rule and a few
// hand-made cases.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>

#include "shape/shapetracker.h"
#include "support/shapetracker_check.h"
#include "uop/sint.h"
#include "uop/symbolic.h"

using namespace tg;
using shape::ShapeTracker;
using tg::testing::IntRanges;
using tg::testing::IntShape;
using tg::testing::RefArray;

namespace {

constexpr int64_t kLo = 3, kHi = 9;  // the variable's range

// A dimension of the chain's current shape: a number, or p + add.
struct Spec {
  bool sym;
  int64_t size;  // concrete size, or the add
  Dim at(const Dim& p) const { return sym ? p + size : Dim(size); }
};

// One movement op, applied to a ShapeTracker with p symbolic and to the reference with p a number.
using Op = std::function<void(ShapeTracker*, RefArray*, const Dim& p)>;

shape::Shape dims_at(const std::vector<Spec>& s, const Dim& p) {
  shape::Shape out;
  for (const Spec& d : s) out.push_back(d.at(p));
  return out;
}
IntShape ints_at(const std::vector<Spec>& s, const Dim& p) { return shape::ints(dims_at(s, p), "test"); }

struct Chain {
  std::vector<Spec> initial, spec;  // the shape it starts from, and the one it is at
  std::vector<Op> ops;
  std::string desc;
};

Chain random_chain(std::mt19937_64& rng, int n_ops) {
  auto rnd = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Chain c;
  int n = static_cast<int>(rnd(1, 4));
  int sym_at = static_cast<int>(rnd(0, n - 1));
  for (int i = 0; i < n; i++) c.spec.push_back(i == sym_at ? Spec{true, 0} : Spec{false, rnd(1, 4)});
  c.initial = c.spec;
  c.desc = "shape with p at " + std::to_string(sym_at);
  for (int k = 0; k < n_ops; k++) {
    std::vector<Spec>& s = c.spec;
    size_t nd = s.size();
    int kind = static_cast<int>(rnd(0, 6));
    if (kind == 0) {  // permute
      std::vector<int64_t> order(nd);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<Spec> ns;
      for (int64_t a : order) ns.push_back(s[a]);
      s = ns;
      c.ops.push_back([order](ShapeTracker* st, RefArray* r, const Dim&) { st ? void(*st = st->permute(order)) : void(*r = r->permute(order)); });
      c.desc += ".permute";
    } else if (kind == 1) {  // pad, any dimension
      size_t i = static_cast<size_t>(rnd(0, nd - 1));
      int64_t b = rnd(0, 2), a = rnd(0, 2);
      std::vector<Spec> before = s;
      s[i].size += b + a;
      c.ops.push_back([before, i, b, a](ShapeTracker* st, RefArray* r, const Dim&) {
        IntRanges ir(before.size(), {0, 0});
        ir[i] = {b, a};
        if (st) *st = st->pad(shape::Ranges(ir.begin(), ir.end()));
        else *r = r->pad(ir);
      });
      c.desc += ".pad(" + std::to_string(i) + ")";
    } else if (kind == 2) {  // shrink: a concrete dimension anywhere, the symbolic one from either end
      size_t i = static_cast<size_t>(rnd(0, nd - 1));
      int64_t lo = rnd(0, 1), hi = rnd(0, 1);
      int64_t smallest = s[i].sym ? kLo + s[i].size : s[i].size;
      if (smallest - lo - hi < 1) continue;
      std::vector<Spec> before = s;
      s[i].size -= lo + hi;
      c.ops.push_back([before, i, lo, hi](ShapeTracker* st, RefArray* r, const Dim& p) {
        shape::Ranges rg;
        for (size_t d = 0; d < before.size(); d++) rg.push_back({0, before[d].at(p)});
        rg[i] = {lo, before[i].at(p) - hi};
        if (st) *st = st->shrink(rg);
        else {
          IntRanges ir;
          for (const auto& [x, y] : rg) ir.push_back({x.concrete("test"), y.concrete("test")});
          *r = r->shrink(ir);
        }
      });
      c.desc += ".shrink(" + std::to_string(i) + ")";
    } else if (kind == 3) {  // flip, any dimension
      std::vector<bool> axes(nd);
      for (size_t d = 0; d < nd; d++) axes[d] = rnd(0, 1);
      c.ops.push_back([axes](ShapeTracker* st, RefArray* r, const Dim&) { st ? void(*st = st->flip(axes)) : void(*r = r->flip(axes)); });
      c.desc += ".flip";
    } else if (kind == 4) {  // stride a concrete dimension
      std::vector<int64_t> steps(nd, 1);
      size_t i = static_cast<size_t>(rnd(0, nd - 1));
      if (s[i].sym) continue;
      steps[i] = rnd(2, 3) * (rnd(0, 1) ? 1 : -1);
      int64_t k = std::abs(steps[i]);
      s[i].size = (s[i].size + k - 1) / k;
      c.ops.push_back([steps](ShapeTracker* st, RefArray* r, const Dim&) { st ? void(*st = st->stride(steps)) : void(*r = r->stride(steps)); });
      c.desc += ".stride(" + std::to_string(i) + ")";
    } else if (kind == 5) {  // expand a size-1 dimension (inserted by a reshape first)
      size_t i = static_cast<size_t>(rnd(0, nd));
      std::vector<Spec> before = s;
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(i), Spec{false, 1});
      std::vector<Spec> mid = s;
      s[i].size = rnd(1, 3);
      std::vector<Spec> after = s;
      c.ops.push_back([mid, after](ShapeTracker* st, RefArray* r, const Dim& p) {
        if (st) *st = st->reshape(dims_at(mid, p)).expand(dims_at(after, p));
        else *r = r->reshape(ints_at(mid, p)).expand(ints_at(after, p));
      });
      c.desc += ".expand(" + std::to_string(i) + ")";
    } else {  // reshape: merge two concrete neighbours, or split a concrete dimension
      size_t i = static_cast<size_t>(rnd(0, nd - 1));
      if (s[i].sym) continue;
      if (i + 1 < nd && !s[i + 1].sym && rnd(0, 1)) {
        s[i].size *= s[i + 1].size;
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      } else if (s[i].size % 2 == 0) {
        s[i].size /= 2;
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(i), Spec{false, 2});
      } else {
        continue;
      }
      std::vector<Spec> after = s;
      c.ops.push_back([after](ShapeTracker* st, RefArray* r, const Dim& p) {
        if (st) *st = st->reshape(dims_at(after, p));
        else *r = r->reshape(ints_at(after, p));
      });
      c.desc += ".reshape";
    }
  }
  return c;
}

// (index, valid) with the variable p set to v, over variables idx0.. (support's IndexProgram reads those)
std::pair<uop::UOp, uop::UOp> at_value(const std::pair<uop::UOp, uop::UOp>& indexed, const Variable& var, int64_t v) {
  const auto& [idx, valid] = indexed;
  std::vector<std::pair<uop::UOp, uop::UOp>> subs;
  for (const uop::UOp& root : {idx, valid})
    for (const uop::UOp& u : root.toposort())
      if ((u.op() == uop::Ops::BIND && u.src(0).arg().get<uop::VarArg>().name == var.name()) ||
          (u.op() == uop::Ops::DEFINE_VAR && u.arg().get<uop::VarArg>().name == var.name()))
        subs.emplace_back(u, uop::UOp::const_(u.dtype(), v));
  return {idx.substitute(subs), valid.substitute(subs)};  // evaluated as they are: no simplify needed
}

// "" when st at p = v reads what ref does, position by position
std::string compare_at(const ShapeTracker& st, const std::pair<uop::UOp, uop::UOp>& indexed, const Variable& var, int64_t v,
                       const RefArray& ref) {
  IntShape shape = ref.shape;
  for (size_t d = 0; d < shape.size(); d++) {
    Dim s = st.shape()[d];
    if (s.is_symbolic() ? uop::eval(uop::to_uop(uop::unbind(s, nullptr)), uop::VarVals{{{{var.name(), kLo, kHi}, v}}}) != shape[d]
                        : s.concrete("test") != shape[d])
      return "shape " + shape::shape_str(st.shape()) + " at " + std::to_string(v) + " != " + shape::shape_str(shape);
  }
  if (shape::prod(shape) == 0) return "";
  auto [idx, valid] = at_value(indexed, var, v);
  tg::testing::IndexProgram index(idx), is_valid(valid);
  std::vector<int64_t> pos(shape.size(), 0);
  size_t flat = 0;
  for (;;) {
    int64_t want = ref.ids[flat++];
    int64_t got = is_valid(pos) ? index(pos) : -1;
    if (got != want || got >= st.real_size())
      return "at p=" + std::to_string(v) + " position " + shape::shape_str(pos) + ": index " + std::to_string(got) +
             ", reference " + std::to_string(want) + ", real_size " + std::to_string(st.real_size()) + "; " + st.repr();
    size_t d = shape.size();
    while (d-- > 0 && ++pos[d] == shape[d]) pos[d] = 0;
    if (d == static_cast<size_t>(-1)) break;
  }
  return "";
}

}  // namespace

TEST(SymbolicShapeTracker, FuzzEveryValueAgainstTheReference) {
  std::mt19937_64 rng(20261124);
  Variable var("p", kLo, kHi);
  for (int trial = 0; trial < 40; trial++) {
    Chain c = random_chain(rng, static_cast<int>(std::uniform_int_distribution<int>(1, 6)(rng)));
    Dim p = var.bind(std::uniform_int_distribution<int64_t>(kLo, kHi)(rng));
    ShapeTracker st = ShapeTracker::from_shape(dims_at(c.initial, p));
    for (const Op& op : c.ops) op(&st, nullptr, p);
    ShapeTracker simple = st.simplify();
    auto indexed = st.to_indexed(), simple_indexed = simple.to_indexed();  // built once, for every value
    for (int64_t v = kLo; v <= kHi; v++) {
      RefArray ref = RefArray::arange(ints_at(c.initial, Dim(v)));
      for (const Op& op : c.ops) op(nullptr, &ref, Dim(v));
      std::string err = compare_at(st, indexed, var, v, ref);
      if (err.empty()) err = compare_at(simple, simple_indexed, var, v, ref);
      ASSERT_EQ(err, "") << "trial " << trial << ": " << c.desc;
    }
  }
}

TEST(SymbolicShapeTracker, ReshapeKeepsASymbolicDimensionInOneView) {
  Variable var("n", 1, 64);
  Dim p = var.bind(5);
  ShapeTracker st = ShapeTracker::from_shape({4, p, 6});
  // the symbolic dimension regroups only with itself: split and merged concrete neighbours stay one View
  ShapeTracker r = st.reshape({2, 2, p, 3, 2});
  EXPECT_EQ(r.views().size(), 1u) << r.repr();
  EXPECT_EQ(r.reshape({4, p, 6}).views().size(), 1u);
  EXPECT_EQ(r.shape(), (shape::Shape{2, 2, p, 3, 2}));
  // a size-1 dimension beside it is free; concrete dimensions whose strides are symbolic (over p) do not merge
  EXPECT_EQ(st.reshape({4, 1, p, 6}).views().size(), 1u);
  EXPECT_EQ(st.reshape({4 * 6, p}).views().size(), 1u);  // contiguous: any reshape is one View
  EXPECT_EQ(st.permute({0, 2, 1}).reshape({4 * 6, p}).views().size(), 2u);
  // the element count must agree for every value
  EXPECT_THROW(st.reshape({4, p + 1, 6}), ShapeError);
  EXPECT_NO_THROW(st.reshape({p * 4, 6}));
  // a shrink past the end at the bound value raises; within it, a symbolic end is kept
  EXPECT_THROW(st.shrink({{0, 4}, {0, p + 1}, {0, 6}}), ShapeError);
  ShapeTracker s = st.shrink({{0, 4}, {1, p}, {0, 6}});
  EXPECT_EQ(s.shape()[1], p - 1);
  EXPECT_FALSE(s.shape()[1].is_symbolic() && s.shape()[1] == p);
  // bounds over the variable: the buffer must hold the largest
  EXPECT_EQ(st.real_size(), 4 * 64 * 6);
  EXPECT_FALSE(st.needs_int64());
  EXPECT_TRUE(ShapeTracker::from_shape({Variable("big", 1, int64_t{1} << 40).bind(2), 4}).needs_int64());
}
