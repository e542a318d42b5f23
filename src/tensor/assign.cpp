// assign (in place into a realized tensor's buffer, or lazy) and replace.
//
// A realized tensor, or a view of one (a shrink, a permute, a reshape: movement ops over a BUFFER), takes x's values
// in place: one kernel writes x through the view into the buffer at once, so every tensor that views the buffer
// sees them (PyTorch's aliasing) and a KV cache's row costs a row, not a copy of the cache. Tensors not yet realized
// that read the buffer are realized first: they keep the values they were made from. A tensor not realized takes
// x's graph lazily instead (there is no buffer to write), as does a whole realized tensor whose new value reads its
// old one (an optimizer's w - lr * g: one lazy schedule for the whole step, no copy).
#include <unordered_set>

#include "schedule/grouping.h"
#include "schedule/kernel_ast.h"
#include "tensor/tensor_impl.h"

namespace tg {

using tensor::shape_str;
using uop::Ops;
using uop::UOp;

namespace {

// Why a view of a buffer cannot be written through, or nullptr: each of its elements must be held once (no expand
// repeats one, no pad makes one up)
constexpr const char* kPadded = "a padded view";
constexpr const char* kExpanded = "an expanded view";
const char* unwritable(const UOp& target) {
  uop::VarVals vals;
  shape::ShapeTracker st = schedule::target_view(target, &vals);
  for (const shape::View& v : st.views()) {
    if (v.mask) return kPadded;
    for (size_t i = 0; i < v.shape.size(); i++)
      if (v.strides[i] == Dim(0) && !(v.shape[i] == Dim(1))) return kExpanded;
  }
  return nullptr;
}

void check_writable(const UOp& target, const Shape& shape, SourceLocation where) {
  const char* why = unwritable(target);
  if (!why) return;
  std::string what = std::string("cannot write through ") + why + " of shape " + shape_str(shape);
  if (why == kExpanded) what += ": it holds one element several times (assign to the tensor it expands)";
  throw ArgumentError("assign", what, where);
}

// Whether `value` reads `buffer` other than element by element through `target` itself: through a shifted, flipped
// or transposed view, or under a reduce. The kernel that writes target computes value as it goes, so such a read
// could see an element already written (t[1:].assign(t[:-1]) copied t[0] everywhere).
bool reads_other_elements(const UOp& value, const UOp& target, const UOp& buffer) {
  uint64_t bit = buffer.buffer_bloom();  // a value without the buffer's bit does not read it: no walk
  if ((value.buffer_bloom() & bit) != bit) return false;
  std::unordered_set<const uop::UOpNode*> same{target.get()}, other{buffer.get()};
  for (const UOp& u : value.toposort()) {
    if (u == target || u == buffer) continue;
    bool elementwise = uop::GroupOp::ALU().contains(u.op()) || u.op() == Ops::CAST || u.op() == Ops::BITCAST;
    for (const UOp& s : u.src()) {
      if (other.count(s.get()) || (same.count(s.get()) && !elementwise)) other.insert(u.get());
      else if (same.count(s.get())) same.insert(u.get());
    }
  }
  return other.count(value.get()) > 0;
}

}  // namespace

bool detail::writes_in_place(const UOp& u) { return schedule::movement_base(u).op() == Ops::BUFFER && !unwritable(u); }

void Tensor::write_in_place(const Tensor& value, Loc where) {
  auto lock = detail::realize_lock();  // no realize between the checks and the write
  UOp target = uop();
  const UOp& buffer = schedule::movement_base(target);
  if (numel() == 0) return;  // nothing to write
  check_writable(target, shape(), where);
  // the old values for whoever still needs them; value, when it reads them elsewhere than where it writes, into a
  // buffer of its own first
  Tensor::realize(detail::lazy_readers(buffer));
  UOp v = reads_other_elements(value.uop(), target, buffer) ? value.clone(where).uop() : value.uop();
  detail::realize_graphs({UOp::make(Ops::ASSIGN, dtype(), {v, target})}, {&impl()});
}

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
  write_in_place(value, where);
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
