// BUFFER nodes and the runtime buffers they own: made here, above the IR, by every layer that creates a buffer
// (tensor/, state/, onnx/, the scheduler).
#pragma once
#include <string>
#include <vector>

#include "runtime/buffer.h"
#include "uop/buffer_arg.h"

namespace tg::runtime {

// A new BUFFER node of `size` elements on `device`; the memory is allocated on first use.
uop::UOp new_buffer(const std::string& device, DType dtype, int64_t size);
// How a BUFFER of prod(shape) elements reads as a tensor of `shape`: itself when 1-D, else a RESHAPE of it.
uop::UOp buffer_as_shape(const uop::UOp& buffer, const std::vector<int64_t>& shape);
// How a BUFFER reads as the tensor-level node `node`: buffer_as_shape of its shape, or for a symbolic shape the
// buffer laid out at the largest sizes and shrunk to the node's (SHRINK(RESHAPE(BUFFER, max), (0, S_i))): every
// value of the variables uses the same buffer and the same strides.
uop::UOp buffer_as_node(const uop::UOp& buffer, const uop::UOp& node);
// The runtime buffer a BUFFER node owns.
Buffer& buffer_of(const uop::UOp& buffer);

}  // namespace tg::runtime
