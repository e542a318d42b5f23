// VIEW's argument: a ShapeTracker inside a UOp (kernel ASTs read and write buffers through VIEWs).
#pragma once
#include <memory>

#include "shape/shapetracker.h"
#include "uop/uop.h"

namespace tg::shape {

struct ViewArg : uop::ArgExt {
  ShapeTracker st;
  explicit ViewArg(ShapeTracker s) : st(std::move(s)) {}
  uint64_t hash() const override { return st.hash(); }
  bool equals(const uop::ArgExt& other) const override {
    auto* o = dynamic_cast<const ViewArg*>(&other);
    return o && o->st == st;
  }
  std::string repr() const override { return st.repr(); }
};

// VIEW node of st (no sources: the buffer it applies to is the user's other source).
inline uop::UOp view_uop(ShapeTracker st) {
  return uop::UOp::make(uop::Ops::VIEW, dtypes::void_, {}, uop::Arg(std::make_shared<const ViewArg>(std::move(st))));
}
// The ShapeTracker of a VIEW node.
const ShapeTracker& get_view(const uop::UOp& u);

}  // namespace tg::shape
