// SPEC=1: each stage's graph checked against its rules; a broken rule names the stage, the node and the rule.
#include <gtest/gtest.h>

#include <string>

#include "shape/shapetracker.h"
#include "shape/view_arg.h"
#include "tg/context.h"
#include "tg/error.h"
#include "tg/tensor.h"
#include "uop/spec.h"

namespace tg {
namespace {

using uop::Ops;
using uop::SpecStage;
using uop::UOp;

UOp global(int64_t i, DType dt = dtypes::float32) { return UOp::make(Ops::DEFINE_GLOBAL, dt.ptr(), {}, uop::Arg(i)); }
UOp kernel(const UOp& value) {
  UOp view = shape::view_uop(shape::ShapeTracker::from_shape({4}));
  return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {global(0, value.dtype()), view, value})});
}
UOp load(int64_t i, DType dt) {
  return UOp::make(Ops::LOAD, dt, {global(i, dt), shape::view_uop(shape::ShapeTracker::from_shape({4}))});
}

void expect_broken(const UOp& root, SpecStage stage, const std::string& rule) {
  std::string got = uop::spec_violation(root.toposort(), stage);
  EXPECT_NE(got.find(rule), std::string::npos) << "got: " << got;
}

TEST(Spec, WellFormedKernelsPass) {
  UOp a = load(1, dtypes::float32), b = load(2, dtypes::float32);
  EXPECT_EQ(uop::spec_violation(kernel(a * b + a).toposort(), SpecStage::Kernel), "");
  UOp cond = a.alu(Ops::CMPLT, {b});
  EXPECT_EQ(uop::spec_violation(kernel(UOp::make(Ops::WHERE, dtypes::float32, {cond, a, b})).toposort(), SpecStage::Kernel), "");
  // a scalar broadcast over a vector op's lanes, as the vectorizer leaves it
  UOp v = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(4), {a, a, a, a});
  EXPECT_EQ(uop::spec_violation({a, v, UOp::make(Ops::MUL, dtypes::float32.vec(4), {v, a})}, SpecStage::Linear), "");
}

TEST(Spec, EachBrokenRuleIsNamedWithItsNode) {
  UOp f = load(1, dtypes::float32), i = load(2, dtypes::int32);
  expect_broken(kernel(UOp::make(Ops::ADD, dtypes::float32, {f, i})), SpecStage::Kernel,
                "an ALU op's sources have its dtype (or its element type, broadcast): ADD of dtype float32 with sources (LOAD float32, LOAD int32)");
  expect_broken(kernel(UOp::make(Ops::CMPLT, dtypes::float32, {f, f})), SpecStage::Kernel, "a comparison gives bool");
  expect_broken(kernel(UOp::make(Ops::WHERE, dtypes::float32, {f, f, f})), SpecStage::Kernel, "WHERE's condition is bool");
  expect_broken(kernel(UOp::make(Ops::EXP2, dtypes::int32, {i})), SpecStage::Kernel, "a transcendental op is on floats");
  expect_broken(kernel(UOp::make(Ops::MOD, dtypes::float32, {f, f})), SpecStage::Kernel, "IDIV, MOD and shifts are on integers");
  expect_broken(kernel(UOp::make(Ops::BITCAST, dtypes::int16, {f})), SpecStage::Kernel, "BITCAST keeps the size in bytes");
  // ops of another stage
  expect_broken(kernel(f), SpecStage::Linear, "VIEW does not belong in a linearized kernel");
  expect_broken(kernel(f), SpecStage::Tensor, "DEFINE_GLOBAL does not belong in a tensor graph");
  UOp range = UOp::make(Ops::RANGE, dtypes::int32, {UOp::const_(dtypes::int32, int64_t{4})}, uop::Arg(int64_t{0}));
  expect_broken(range, SpecStage::Kernel, "RANGE does not belong in a kernel AST");
}

TEST(Spec, Spec1RaisesWhereAPlainRunDoesNot) {
  UOp f = load(1, dtypes::float32), i = load(2, dtypes::int32);
  UOp bad = kernel(UOp::make(Ops::ADD, dtypes::float32, {f, i}));
  uop::check_spec(bad, SpecStage::Kernel);  // SPEC unset: not checked
  Context ctx{{"SPEC", 1}};
  try {
    uop::check_spec(bad, SpecStage::Kernel);
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("SPEC"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the kernel AST breaks a rule"), std::string::npos) << e.what();
  }
  // every stage of a real realize follows the rules
  EXPECT_EQ((Tensor::arange(8).cast(dtypes::float32).reshape({2, 4}).sum(1) * 2).to_vector<float>(), (std::vector<float>{12, 44}));
}

}  // namespace
}  // namespace tg
