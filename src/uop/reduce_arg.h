// REDUCE_AXIS's argument: the reduce op (ADD for sum, MAX for max) and the axes it reduces.
#pragma once
#include <memory>
#include <vector>

#include "uop/uop.h"

namespace tg::uop {

struct ReduceArg : ArgExt {
  Ops op;
  std::vector<int64_t> axes;  // sorted, distinct
  ReduceArg(Ops o, std::vector<int64_t> a) : op(o), axes(std::move(a)) {}
  uint64_t hash() const override;
  bool equals(const ArgExt& other) const override;
  std::string repr() const override;
};

inline Arg reduce_arg(Ops op, std::vector<int64_t> axes) { return Arg(std::make_shared<const ReduceArg>(op, std::move(axes))); }
// The ReduceArg of a REDUCE_AXIS node.
const ReduceArg& get_reduce_arg(const UOp& u);

}  // namespace tg::uop
