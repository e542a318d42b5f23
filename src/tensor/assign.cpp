// assign (in place into a realized tensor's buffer, or lazy) and replace.
//
// A realized tensor, or a view of one (a shrink, a permute, a reshape: movement ops over a BUFFER), takes x's values
// in place: one kernel writes x through the view into the buffer at once, so every tensor that views the buffer
// sees them (PyTorch's aliasing) and a KV cache's row costs a row, not a copy of the cache. Tensors not yet realized
// that read the buffer are realized first: they keep the values they were made from. A tensor not realized takes
// x's graph lazily instead (there is no buffer to write), as does a whole realized tensor whose new value reads its
// old one (an optimizer's w - lr * g: one lazy schedule for the whole step, no copy).
#include "schedule/grouping.h"
#include "schedule/kernel_ast.h"
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;
using uop::Ops;
using uop::UOp;

namespace {

// A view that holds each of its elements once (no expand repeats one, no pad makes one up) can be written through
void check_writable(const UOp& target, const Shape& shape, SourceLocation where) {
  uop::VarVals vals;
  shape::ShapeTracker st = schedule::target_view(target, &vals);
  for (const shape::View& v : st.views()) {
    if (v.mask) throw ArgumentError("assign", "cannot write through a padded view of shape " + shape_str(shape), where);
    for (size_t i = 0; i < v.shape.size(); i++)
      if (v.strides[i] == Dim(0) && !(v.shape[i] == Dim(1)))
        throw ArgumentError("assign", "cannot write through an expanded view of shape " + shape_str(shape) +
                                          ": it holds one element several times (assign to the tensor it expands)", where);
  }
}

}  // namespace

Tensor& Tensor::assign(const Tensor& x, Loc where) {
  if (x.shape() != shape())
    throw ShapeError("assign", "cannot assign shape " + shape_str(x.shape()) + " to a tensor of shape " + shape_str(shape()), where);
  if (x.device() != device()) throw ArgumentError("assign", "value on " + x.device() + " for a tensor on " + device(), where);
  auto lock = detail::realize_lock();  // no realize between the checks and the write
  Tensor value = x.cast(dtype(), where);
  UOp target = uop();
  const UOp& buffer = schedule::movement_base(target);
  if (buffer.op() != Ops::BUFFER || (schedule::plain_buffer(target) && value.uop().contains(buffer))) {
    // lazy: this tensor's graph becomes x's; CONTIGUOUS gives it a buffer of its own when realized, even when x is
    // a constant. A buffer already (a loaded checkpoint's tensor, another model's weight) is copied: sharing it, a
    // later in-place write here would change x too
    impl_->set_uop((schedule::plain_buffer(value.uop()) ? value.clone(where) : value.contiguous(where)).uop());
    return *this;
  }
  if (numel() == 0) return *this;  // nothing to write
  check_writable(target, shape(), where);
  // the old values for whoever still needs them (value too, when it reads them: then it is computed whole first)
  Tensor::realize(detail::lazy_readers(buffer));
  UOp write = UOp::make(Ops::ASSIGN, dtype(), {value.uop(), target});
  detail::realize_graphs({write}, {&impl()});
  return *this;
}

Tensor& Tensor::replace(const Tensor& x, Loc where) {
  if (x.shape() != shape() || x.dtype() != dtype() || x.device() != device())
    throw ArgumentError("replace", "needs the same shape, dtype and device: " + shape_str(x.shape()) + " " + x.dtype().name() +
                                       " on " + x.device() + " for " + shape_str(shape()) + " " + dtype().name() + " on " +
                                       device() + " (a tensor's dtype and device are fixed; assign casts)", where);
  impl_->set_uop(x.uop());
  return *this;
}

}  // namespace tg
