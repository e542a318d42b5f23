// What a Tensor handle points to, and the registry of live tensors that realize() updates.
#pragma once
#include "tg/tensor.h"
#include "uop/uop.h"

namespace tg::detail {

struct TensorImpl {
  TensorImpl(uop::UOp u, std::string dev, SourceLocation where);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  uop::UOp uop;
  std::string device;      // canonical name; a tensor never changes device
  SourceLocation created;  // the user's line that made it: named when realizing it fails
  TensorImpl* prev = nullptr;  // the registry: an intrusive list of every live tensor
  TensorImpl* next = nullptr;
};

// Replaces realized nodes in the graph of every live tensor (tinygrad's becomes map): later ops on any tensor
// that used them read the buffers instead of computing again.
void apply_becomes(const std::vector<std::pair<uop::UOp, uop::UOp>>& becomes);

}  // namespace tg::detail

namespace tg::tensor {

// Building tensor-level nodes (src/tensor/): these check nothing; the Tensor methods validate first.
inline Tensor wrap(const uop::UOp& u, const std::string& device, SourceLocation where = {}) {
  return detail::make_tensor(u, device, where);
}
uop::UOp movement(uop::Ops op, const uop::UOp& x, std::vector<int64_t> arg);
uop::UOp device_uop(const std::string& device);
// "(2, 3)"
std::string shape_str(const Shape& s);
// the device a new tensor goes to: the given one, canonical, or the default
std::string resolve_device(const std::string& device);
// A constant of dtype broadcast to shape (no buffer).
Tensor const_tensor(ConstValue v, DType dtype, const Shape& shape, const std::string& device);
// ShapeError for a negative dimension; DTypeError for void, pointer or vector dtypes.
void check_shape(const Shape& shape, const char* op, SourceLocation where);
void check_value_dtype(DType dt, const char* op, SourceLocation where);
// Axes validated and made non-negative, sorted, distinct.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op, SourceLocation where);

}  // namespace tg::tensor
