// Tensors held by several devices: shard, devices, shards (the graphs are lowered per device in src/multi/).
#include <algorithm>

#include "multi/multi.h"
#include "schedule/grouping.h"
#include "schedule/schedule.h"
#include "tensor/tensor_impl.h"

namespace tg {

using uop::Ops;
using uop::UOp;

Tensor Tensor::shard(const std::vector<std::string>& devices, std::optional<int64_t> axis, Loc where) const {
  if (devices.empty()) throw ArgumentError("shard", "needs at least one device", where);
  std::string joined = tensor::resolve_device(multi::join_devices(devices), "shard", where);
  std::vector<std::string> names = multi::split_devices(joined);
  if (!axis || names.size() == 1) return to(joined, where);
  if (ndim() == 0) throw ShapeError("shard", "a 0-d tensor has no axis to split", where);
  if (is_symbolic()) throw ShapeError("shard", "cannot split a tensor of symbolic shape " + uop::dims_str(sym_shape()), where);
  int64_t a = tensor::normalize_axis(*axis, ndim(), "shard", where);
  // a tensor already on several devices is gathered onto the first of them, then split
  Tensor x = multi::is_multi(device()) ? to(names[0], where) : *this;
  std::vector<UOp> src{tensor::device_uop(joined)};
  std::vector<std::pair<int64_t, int64_t>> bounds = multi::even_bounds(shape()[static_cast<size_t>(a)], names.size());
  for (size_t i = 0; i < names.size(); i++) {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int64_t d = 0; d < ndim(); d++) r.push_back(d == a ? bounds[i] : std::pair{int64_t{0}, shape()[static_cast<size_t>(d)]});
    src.push_back(x.shrink(r, where).to(names[i], where).uop());
  }
  Tensor out = tensor::wrap(UOp::make(Ops::MULTI, dtype(), std::move(src), uop::Arg(a)), joined, where);
  if (requires_grad()) out.requires_grad_();
  return out;
}

std::vector<std::string> Tensor::devices() const { return multi::split_devices(device()); }

std::vector<Tensor> Tensor::shards() const {
  if (!multi::is_multi(device())) return {*this};
  UOp m = uop();
  if (m.op() != Ops::MULTI || !schedule::is_realized_form(m)) m = contiguous().realize().uop();
  if (m.op() != Ops::MULTI) throw InternalError("shards", "a realized tensor on " + device() + " is not a MULTI");
  std::vector<Tensor> out;
  for (size_t i = 1; i < m.src().size(); i++) out.push_back(tensor::wrap(m.src(i), uop::device_of(m.src(i))));
  return out;
}

}  // namespace tg
