// Reductions: sum and max over any axes (the two reduce primitives; mean, min, softmax ... compose them).
#include <algorithm>

#include "tensor/tensor_impl.h"
#include "uop/reduce_arg.h"

namespace tg {

using uop::Ops;
using uop::UOp;

namespace {

// tinygrad's accumulation dtypes: small ints sum as int32 (unsigned as uint32), 16-bit floats as float32
DType sum_acc_dtype(DType dt) {
  if (dt.is_bool()) return dtypes::int32;
  if (dt.is_int() && dt.itemsize() < 4) return dt.is_unsigned() ? dtypes::uint32 : dtypes::int32;
  if (dt == dtypes::float16 || dt == dtypes::bfloat16) return dtypes::float32;
  return dt;
}

Tensor reduce(const Tensor& x, Ops op, const std::vector<int64_t>& axes, bool keepdim, const char* name,
              SourceLocation where) {
  std::vector<int64_t> ax = tensor::normalize_axes(axes, x.ndim(), name, where);
  if (x.ndim() == 0) ax.clear();
  Shape out = x.shape(), squeezed;
  bool empty = false;
  for (int64_t a : ax) empty = empty || out[a] == 0, out[a] = 1;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) squeezed.push_back(x.shape()[i]);
  Tensor r;
  if (ax.empty()) {
    r = x;
  } else if (empty) {
    // nothing to reduce over: the identity, without a kernel
    if (op == Ops::MAX)
      throw ArgumentError(name, "cannot take the max over an empty axis of shape " + tensor::shape_str(x.shape()), where);
    r = tensor::const_tensor(int64_t{0}, x.dtype(), out, x.device());
  } else {
    r = tensor::wrap(UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x.uop()}, uop::reduce_arg(op, ax)), x.device(), where);
  }
  return keepdim ? r : r.reshape(squeezed, where);
}

std::vector<int64_t> all_axes(const Tensor& t) {
  std::vector<int64_t> ax;
  for (int64_t i = 0; i < t.ndim(); i++) ax.push_back(i);
  return ax;
}

}  // namespace

Tensor Tensor::sum(const std::vector<int64_t>& axes, bool keepdim, Loc where) const {
  DType acc = sum_acc_dtype(dtype());
  Tensor r = reduce(cast(acc, where), Ops::ADD, axes, keepdim, "sum", where);
  // 16-bit floats accumulate in float32 and come back in their own dtype
  return dtype().is_float() ? r.cast(dtype(), where) : r;
}
Tensor Tensor::sum(int64_t axis, bool keepdim, Loc where) const { return sum(std::vector<int64_t>{axis}, keepdim, where); }
Tensor Tensor::sum(Loc where) const { return sum(all_axes(*this), false, where); }

Tensor Tensor::max(const std::vector<int64_t>& axes, bool keepdim, Loc where) const {
  return reduce(*this, Ops::MAX, axes, keepdim, "max", where);
}
Tensor Tensor::max(int64_t axis, bool keepdim, Loc where) const { return max(std::vector<int64_t>{axis}, keepdim, where); }
Tensor Tensor::max(Loc where) const { return max(all_axes(*this), false, where); }

}  // namespace tg
