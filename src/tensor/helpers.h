// What the layers above tensor/ (nn, optim, state, jit and the frontends) use of its internals: shapes and numbers
// formatted for errors, checked sizes, device names, and a composite method's error handling. The TensorImpl and
// the registry of live tensors stay in tensor_impl.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shape/view.h"
#include "tg/error.h"
#include "tg/tensor.h"

namespace tg::tensor {

using shape::shape_str;  // "(2, 3)"
// the device a new tensor goes to: the given one, canonical, or the default; several joined by commas
// ("CPU,CPU:1"), each canonical, for a tensor held by several (ArgumentError naming `op` when one appears twice)
std::string resolve_device(const std::string& device, const char* op = "device", SourceLocation where = {});
// The most elements a tensor holds: its byte size fits in int64 for every dtype (8 bytes at most), so no size or
// index computation below the Tensor overflows. A shape with a 0 is empty, whatever its other dimensions.
constexpr int64_t kMaxElements = INT64_MAX / 8;
// The shape's element count; ArgumentError naming op and the shape when it is over kMaxElements.
int64_t checked_numel(const Shape& shape, const char* op, SourceLocation where);
// The dtype composite math runs in: float32 for 16-bit floats (one rounding at the end, as PyTorch), else dt.
inline DType compute_float(DType dt) { return dt.itemsize() < 4 ? dtypes::float32 : dt; }
// f(x) computed in compute_float and returned in x's float dtype (ints and bool become float32).
template <class F> Tensor float_math(const Tensor& x, SourceLocation where, F f) {
  DType out = least_upper_float(x.dtype());
  return f(x.cast(compute_float(out), where)).cast(out, where);
}
// Inside a composite method's catch: a user error from a primitive it called is raised again as the method's own
// ("conv2d: reshape: cannot reshape ..."), at the user's line. Other errors pass through unchanged.
[[noreturn]] void rethrow_in(const Error& e, const char* method, SourceLocation where);
std::string list_str(const std::vector<int64_t>& v);
std::string num_str(double v);  // shortest form: 1e+300, 0.5, 3
int64_t prod(const Shape& s);  // checked_numel, for shapes already checked

}  // namespace tg::tensor
