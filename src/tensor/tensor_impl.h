// What a Tensor handle points to, and the registry of live tensors that realize() updates.
#pragma once
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "tensor/helpers.h"
#include "tg/tensor.h"
#include "uop/sint.h"
#include "uop/uop.h"

namespace tg::detail {

// The graph a tensor is can be replaced from another thread (a realize there swaps realized nodes for buffers in
// every live tensor): it is read and written under the tensor's own lock, by value. What never changes (shape,
// dtype, device) is read without one.
struct TensorImpl : std::enable_shared_from_this<TensorImpl> {
  TensorImpl(uop::UOp u, std::string dev, SourceLocation where);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  uop::UOp uop() const {
    std::lock_guard lock(mu_);
    return uop_;
  }
  // A new graph of the same shape and dtype (a new value: no kept autograd graph); returns the old one (released by
  // the caller, outside the lock).
  uop::UOp set_uop(uop::UOp u) {
    std::lock_guard lock(mu_);
    autograd_uop_ = uop::UOp();
    std::swap(uop_, u);
    return u;
  }
  // The same value with realized nodes replaced by their buffers (a realize's becomes); keep: the graph before is
  // kept for backward() (the first one kept stays: the later ones are it with buffers in). Returns the old graph.
  uop::UOp become(uop::UOp u, bool keep) {
    std::lock_guard lock(mu_);
    if (keep && !autograd_uop_) autograd_uop_ = uop_;
    std::swap(uop_, u);
    return u;
  }
  // The graph this tensor had before a realize replaced it (or part of it) by buffers, kept when it reaches a tensor
  // that requires a gradient: backward() differentiates through it, so reading a value (printing a layer's output,
  // a statistic of an activation) before backward() loses no gradient. Undefined when none was kept.
  uop::UOp autograd_uop() const {
    std::lock_guard lock(mu_);
    return autograd_uop_;
  }
  void move_autograd_uop(uop::UOp u) {  // the kept graph with leaves named by their new buffers
    std::lock_guard lock(mu_);
    autograd_uop_ = std::move(u);
  }
  const Shape shape;             // each size's largest value when one is symbolic
  const std::vector<Dim> dims;   // the exact sizes when one is symbolic, else empty
  const DType dtype;
  const std::string device;  // canonical name; a tensor never changes device
  const SourceLocation created;  // the user's line that made it: named when realizing it fails
  std::atomic<bool> requires_grad = false;  // read by backward() in every thread (tensors_requiring_grad)
  Tensor grad;             // accumulated by backward(); undefined until then
  std::atomic<bool> is_gradient = false;  // some tensor's .grad: never a target of backward_all()
  std::atomic<bool> has_grad = false;  // grad is defined (read by apply_becomes in every thread)
  TensorImpl* prev = nullptr;  // the registry: an intrusive list of every live tensor
  TensorImpl* next = nullptr;

 private:
  mutable std::mutex mu_;
  uop::UOp uop_;
  uop::UOp autograd_uop_;
};

// Realizing is serialized: one realize (schedule, becomes, run), TinyJit call or read of a result at a time in the
// process. Graphs are built in parallel; the kernels of one realize use every core.
std::unique_lock<std::recursive_mutex> realize_lock();

// Replaces realized nodes in the graph of every live tensor (tinygrad's becomes map): later ops on any tensor
// that used them read the buffers instead of computing again. Returns each changed tensor's previous graph, for
// restore_graphs() when the schedule that fills the buffers fails.
using SavedGraphs = std::vector<std::pair<TensorImpl*, uop::UOp>>;
SavedGraphs apply_becomes(const std::vector<std::pair<uop::UOp, uop::UOp>>& becomes);
void restore_graphs(const SavedGraphs& saved);
// Every live tensor with its graph (TinyJit's snapshot before a capture).
std::vector<std::pair<std::weak_ptr<TensorImpl>, uop::UOp>> live_tensors();
// Realizes the graphs `outs` as one schedule; a failed compile or launch names the first of `tensors` made at a
// known line (the user's tensors being computed).
void realize_graphs(const std::vector<uop::UOp>& outs, const std::vector<const TensorImpl*>& tensors);
// The live tensors not yet realized whose graphs read `buffer` (an in-place write realizes them first: they keep
// the values they were made from).
std::vector<Tensor> lazy_readers(const uop::UOp& buffer);
// Whether a tensor with graph u is a realized buffer, or a view of one, that can be written in place (a view that
// holds each element once).
bool writes_in_place(const uop::UOp& u);
// Every live tensor with requires_grad set (backward() picks those in its graph), or every live float tensor but
// the gradients themselves (backward_all()'s). A gradient is often a constant, and a constant's node is the node of
// that value in every graph (an earlier seed 1.0 is the 1.0 of x - 1), so it would take gradients meant for nothing
// it was made for.
std::vector<Tensor> tensors_requiring_grad(bool every_float = false);
// The graph backward() differentiates from root: its kept autograd graph (TensorImpl::autograd_uop) or its graph,
// with each node a realize replaced by a buffer that a live tensor kept the graph of put back.
uop::UOp autograd_graph(const TensorImpl& root);

}  // namespace tg::detail

namespace tg::tensor {

// Building tensor-level nodes (src/tensor/): these check nothing; the Tensor methods validate first.
inline Tensor wrap(const uop::UOp& u, const std::string& device, SourceLocation where = {}) {
  return detail::make_tensor(u, device, where);
}
uop::UOp movement(uop::Ops op, const uop::UOp& x, std::vector<int64_t> arg);
uop::UOp device_uop(const std::string& device);
uop::UOp movement(uop::Ops op, const uop::UOp& x, std::vector<Dim> arg);
// The movement methods and broadcasting where a size is symbolic (symbolic_shapes.cpp): sizes compare as expressions,
// and a check that depends on the variables holds at their bound values (tinygrad's resolve).
Tensor symbolic_reshape(const Tensor& t, std::vector<Dim> sizes, SourceLocation where);
Tensor symbolic_expand(const Tensor& t, std::vector<Dim> sizes, SourceLocation where);
Tensor symbolic_shrink(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& ranges, SourceLocation where);
// Zeros (or `value`) around t: (before, after) per axis, each >= 0; sizes and amounts may be symbolic.
Tensor symbolic_pad(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& grow, double value, SourceLocation where);
// Tensor::cat over tensors of which some size is symbolic.
Tensor symbolic_cat(const std::vector<Tensor>& tensors, int64_t dim, SourceLocation where);
std::vector<Dim> symbolic_broadcast_shape(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where);
Tensor symbolic_broadcast_to(const Tensor& t, const std::vector<Dim>& shape);
// A constant of dtype broadcast to shape (no buffer).
Tensor const_tensor(ConstValue v, DType dtype, const DimList& shape, const std::string& device);
// ShapeError for a negative dimension, ArgumentError for more than kMaxElements; DTypeError for void, pointer or
// vector dtypes.
void check_shape(const Shape& shape, const char* op, SourceLocation where);
void check_value_dtype(DType dt, const char* op, SourceLocation where);
// Axes validated and made non-negative, sorted, distinct.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op, SourceLocation where);

// x and y broadcast to one shape and promoted to one dtype (numpy and tinygrad rules)
std::pair<Tensor, Tensor> broadcasted(const Tensor& x, const Tensor& y, const char* op, SourceLocation where);
Shape broadcast_shape(const std::vector<const Tensor*>& ts, const char* op, SourceLocation where);
Tensor broadcast_to(const Tensor& t, const Shape& shape);
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op, SourceLocation where);
// x * y for a sum of products (matmul, conv): 16-bit floats multiply in float32, as PyTorch's matmul and conv do:
// each product is exact (8 or 11 significant bits per factor) and never rounded to 16 bits (linalg.cpp)
Tensor exact_products(const Tensor& x, const Tensor& y, SourceLocation where);
// Reverse-mode gradients of root (seeded with root_grad) for each target node; undefined where none flows.
std::vector<Tensor> compute_gradients(const uop::UOp& root, const Tensor& root_grad, const std::vector<uop::UOp>& targets);
// The float nodes of `order` (a toposort) from which a path not through DETACH reaches one of `wanted`.
std::unordered_set<const uop::UOpNode*> nodes_reaching(const std::vector<uop::UOp>& order,
                                                      const std::unordered_set<const uop::UOpNode*>& wanted);

}  // namespace tg::tensor
