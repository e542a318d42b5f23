#include "runtime/buffer_uop.h"

#include "runtime/device.h"

namespace tg::runtime {

using uop::Ops;
using uop::UOp;

UOp new_buffer(const std::string& device, DType dtype, int64_t size) {
  if (is_multi(device))
    throw ArgumentError("buffer", "a buffer is on one device, not on '" + device + "': make the tensor on one and "
                                  "spread it with .to(\"" + device + "\") or .shard(...)");
  auto mem = std::make_shared<Buffer>(get_device(device), static_cast<size_t>(size), dtype);
  auto arg = std::make_shared<const uop::BufferArg>(uop::next_buffer_id(), size, std::move(mem));
  UOp dev = UOp::make(Ops::DEVICE, dtypes::void_, {}, uop::Arg(device));
  return UOp::make(Ops::BUFFER, dtype, {dev}, uop::Arg(std::shared_ptr<const uop::ArgExt>(arg)));
}

UOp buffer_as_shape(const UOp& buffer, const std::vector<int64_t>& shape) {
  if (shape.size() == 1 && shape[0] == uop::get_buffer_arg(buffer).size) return buffer;
  return UOp::make(Ops::RESHAPE, buffer.dtype(), {buffer}, uop::Arg(shape));
}

UOp buffer_as_node(const UOp& buffer, const UOp& node) {
  if (!node.symbolic_shape()) return buffer_as_shape(buffer, node.shape());
  UOp laid_out = buffer_as_shape(buffer, node.max_shape());
  std::vector<Dim> ranges;
  for (const Dim& d : node.sym_shape()) ranges.push_back(0), ranges.push_back(d);
  return UOp::make(Ops::SHRINK, buffer.dtype(), {laid_out}, uop::Arg(std::move(ranges)));
}

Buffer& buffer_of(const UOp& buffer) {
  return *static_cast<Buffer*>(uop::get_buffer_arg(buffer).memory.get());
}

}  // namespace tg::runtime
