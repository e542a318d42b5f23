#include "uop/spec.h"

#include <algorithm>

#include "tg/context.h"
#include "tg/error.h"
#include "uop/ops.h"

namespace tg::uop {

namespace {

const char* stage_name(SpecStage s) {
  return s == SpecStage::Tensor ? "tensor graph" : s == SpecStage::Kernel ? "kernel AST" : "linearized kernel";
}

// the ops a stage may hold besides constants, ALU ops and SINK
bool allowed(Ops op, SpecStage stage) {
  switch (stage) {
    case SpecStage::Tensor:
      return GroupOp::Movement().contains(op) || op == Ops::DEVICE || op == Ops::BUFFER || op == Ops::IOTA ||
             op == Ops::COPY || op == Ops::ALLREDUCE || op == Ops::CONTIGUOUS || op == Ops::DETACH || op == Ops::CONTIGUOUS_BACKWARD ||
             op == Ops::CUSTOM_GRAD || op == Ops::ASSIGN || op == Ops::REDUCE_AXIS || op == Ops::DEFINE_VAR ||
             op == Ops::BIND || op == Ops::MULTI || op == Ops::MSELECT;
    case SpecStage::Kernel:
      return op == Ops::STORE || op == Ops::LOAD || op == Ops::DEFINE_GLOBAL || op == Ops::VIEW || op == Ops::IOTA ||
             op == Ops::REDUCE_AXIS || op == Ops::DEFINE_VAR;
    case SpecStage::Linear:
      return op == Ops::DEFINE_GLOBAL || op == Ops::DEFINE_LOCAL || op == Ops::DEFINE_REG || op == Ops::DEFINE_VAR ||
             op == Ops::SPECIAL || op == Ops::RANGE || op == Ops::END || op == Ops::INDEX || op == Ops::LOAD ||
             op == Ops::STORE || op == Ops::VECTORIZE || op == Ops::GEP || op == Ops::REDUCE || op == Ops::VCONST ||
             op == Ops::BARRIER || op == Ops::IF || op == Ops::ENDIF || op == Ops::NOOP || op == Ops::WMMA;
  }
  return false;
}

std::string describe(const UOp& u) {
  std::string s = std::string(op_name(u.op())) + " of dtype " + u.dtype().name() + " with sources (";
  for (size_t i = 0; i < u.src().size(); i++) s += (i ? ", " : "") + std::string(op_name(u.src(i).op())) + " " + u.src(i).dtype().name();
  return s + ")";
}

// `s` as a source where `dt` is wanted: the same, or a scalar of its element type broadcast over a vector op's lanes
// (the vectorizer leaves those to the C vector extensions)
bool fits(DType s, DType dt) { return s == dt || (dt.count() > 1 && s == dt.scalar()); }

// the rule an ALU node breaks, or ""
std::string alu_rule(const UOp& u) {
  Ops op = u.op();
  const std::vector<UOp>& src = u.src();
  DType dt = u.dtype();
  if (GroupOp::Unary().contains(op) && src.size() != 1) return "a unary op takes one source";
  if (GroupOp::Binary().contains(op) && src.size() != 2) return "a binary op takes two sources";
  if (GroupOp::Ternary().contains(op) && src.size() != 3) return "a ternary op takes three sources";
  if (op == Ops::CAST) return "";
  if (op == Ops::BITCAST)
    return src[0].dtype().itemsize() == dt.itemsize() ? "" : "BITCAST keeps the size in bytes";
  if (GroupOp::Comparison().contains(op)) {
    if (dt.scalar() != dtypes::bool_ || dt.count() != std::max(src[0].dtype().count(), src[1].dtype().count()))
      return "a comparison gives bool, one per lane";
    DType in = src[0].dtype().count() >= src[1].dtype().count() ? src[0].dtype() : src[1].dtype();
    return fits(src[0].dtype(), in) && fits(src[1].dtype(), in) ? "" : "a comparison's sources have one dtype";
  }
  if (op == Ops::WHERE) {
    if (src[0].dtype().scalar() != dtypes::bool_) return "WHERE's condition is bool";
    return fits(src[1].dtype(), dt) && fits(src[2].dtype(), dt) ? "" : "WHERE's two values have its dtype";
  }
  if ((op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN || op == Ops::SQRT || op == Ops::RECIPROCAL) && !dt.is_float())
    return "a transcendental op is on floats";
  if ((op == Ops::IDIV || op == Ops::MOD || op == Ops::SHL || op == Ops::SHR) && !dt.is_int()) return "IDIV, MOD and shifts are on integers";
  if ((op == Ops::AND || op == Ops::OR || op == Ops::XOR) && dt.is_float()) return "bitwise ops are on integers and bools";
  for (const UOp& s : src)
    if (!fits(s.dtype(), dt)) return "an ALU op's sources have its dtype (or its element type, broadcast)";
  return "";
}

}  // namespace

std::string spec_violation(const std::vector<UOp>& nodes, SpecStage stage) {
  for (const UOp& u : nodes) {
    Ops op = u.op();
    std::string rule;
    if (op == Ops::CONST) rule = u.src().empty() || stage != SpecStage::Linear ? "" : "a constant has no sources";
    else if (op == Ops::SINK) rule = u.dtype() == dtypes::void_ ? "" : "SINK is void";
    else if (GroupOp::ALU().contains(op)) rule = alu_rule(u);
    else if (!allowed(op, stage)) rule = std::string(op_name(op)) + " does not belong in a " + stage_name(stage);
    if (!rule.empty()) return rule + ": " + describe(u);
  }
  return "";
}

void check_spec(const std::vector<UOp>& nodes, SpecStage stage) {
  if (getenv_int("SPEC") < 1) return;
  std::string broken = spec_violation(nodes, stage);
  if (!broken.empty()) throw InternalError("SPEC", std::string("the ") + stage_name(stage) + " breaks a rule: " + broken);
}

}  // namespace tg::uop
