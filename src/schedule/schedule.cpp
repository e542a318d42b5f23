#include "schedule/schedule.h"

#include <sstream>

#include "schedule/buffer_uop.h"
#include "schedule/kernel_ast.h"
#include "shape/view.h"

namespace tg::schedule {

using uop::Ops;
using uop::UOp;

namespace {

// how the buffer reads as a tensor of `shape`
UOp as_shape(const UOp& buffer, const std::vector<int64_t>& shape) {
  if (shape.size() == 1 && shape[0] == uop::get_buffer_arg(buffer).size) return buffer;
  return UOp::make(Ops::RESHAPE, buffer.dtype(), {buffer}, uop::Arg(shape));
}

}  // namespace

Schedule create_schedule(const std::vector<UOp>& outputs) {
  Grouping g = group(outputs);
  Schedule s;
  std::unordered_map<const uop::UOpNode*, UOp> buffers;  // realized node -> its new BUFFER
  // the device of every node, in one pass (device_of walks down a chain, which would make this quadratic)
  std::unordered_map<const uop::UOpNode*, const std::string*> device;
  for (const UOp& u : g.nodes) {
    if (u.op() == Ops::DEVICE) device[u.get()] = &u.arg().get<std::string>();
    else if (u.op() == Ops::COPY) device[u.get()] = &u.src(1).arg().get<std::string>();
    else if (!u.src().empty()) device[u.get()] = device.at(u.src(0).get());
  }
  for (const UOp& u : g.nodes) {
    if (!g.realized(u)) continue;
    int64_t size = shape::prod(u.shape());
    UOp out = new_buffer(*device.at(u.get()), u.dtype(), size);
    buffers[u.get()] = out;
    s.becomes.push_back({u, as_shape(out, u.shape())});
    if (size == 0) continue;  // nothing to compute
    if (u.op() == Ops::COPY) {
      UOp src = plain_buffer(u.src(0));
      if (!src) src = buffers.at(u.src(0).get());
      s.items.push_back({ScheduleItem::Kind::Copy, UOp(), {out, src}});
      continue;
    }
    KernelAST k = build_kernel(u, out, g, buffers);
    s.items.push_back({ScheduleItem::Kind::Kernel, k.ast, k.bufs});
  }
  return s;
}

std::string print_schedule(const Schedule& s) {
  std::ostringstream os;
  for (size_t i = 0; i < s.items.size(); i++) {
    const ScheduleItem& it = s.items[i];
    os << "schedule item " << i << ": " << (it.kind == ScheduleItem::Kind::Copy ? "copy" : "kernel") << ", buffers";
    for (const UOp& b : it.bufs) os << " " << uop::get_buffer_arg(b).repr() << ":" << b.dtype().name();
    os << "\n";
    if (it.ast) os << it.ast;
  }
  return os.str();
}

}  // namespace tg::schedule
