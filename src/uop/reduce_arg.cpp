#include "uop/reduce_arg.h"

namespace tg::uop {

uint64_t ReduceArg::hash() const {
  uint64_t h = hash_mix(0x52454455ull, static_cast<uint64_t>(op));
  for (int64_t a : axes) h = hash_mix(h, static_cast<uint64_t>(a));
  return h;
}

bool ReduceArg::equals(const ArgExt& other) const {
  auto* o = dynamic_cast<const ReduceArg*>(&other);
  return o && o->op == op && o->axes == axes;
}

std::string ReduceArg::repr() const {
  std::string s = "(" + std::string(op_name(op)) + ", (";
  for (size_t i = 0; i < axes.size(); i++) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + (axes.size() == 1 ? ",))" : "))");
}

const ReduceArg& get_reduce_arg(const UOp& u) {
  const auto* e = u.arg().get_if<std::shared_ptr<const ArgExt>>();
  const ReduceArg* r = e ? dynamic_cast<const ReduceArg*>(e->get()) : nullptr;
  if (!r) throw InternalError("REDUCE_AXIS", "argument is not a ReduceArg: " + u.arg().repr());
  return *r;
}

}  // namespace tg::uop
