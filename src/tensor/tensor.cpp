// The Tensor handle: the registry of live tensors, properties, host data in and out, realize.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "engine/realize.h"
#include "multi/multi.h"
#include "runtime/device.h"
#include "runtime/buffer_uop.h"
#include "schedule/grouping.h"
#include "schedule/schedule.h"
#include "tensor/realize_observer.h"
#include "tensor/tensor_impl.h"
#include "tg/device.h"
#include "tg/profile.h"
#include "viz/record.h"

namespace tg {

using uop::Ops;
using uop::UOp;

namespace detail {

namespace {
std::mutex& registry_mutex() {
  static std::mutex* m = new std::mutex();  // never destroyed: tensors in statics die after it otherwise
  return *m;
}
TensorImpl* registry_head = nullptr;
}  // namespace

TensorImpl::TensorImpl(UOp u, std::string dev, SourceLocation where)
    : shape(u.max_shape()), dims(u.symbolic_shape() ? u.sym_shape() : std::vector<Dim>{}), dtype(u.dtype()), device(std::move(dev)), created(where), uop_(std::move(u)) {
  std::lock_guard lock(registry_mutex());
  next = registry_head;
  if (next) next->prev = this;
  registry_head = this;
}

TensorImpl::~TensorImpl() {
  std::lock_guard lock(registry_mutex());
  if (prev) prev->next = next;
  else registry_head = next;
  if (next) next->prev = prev;
}

SavedGraphs apply_becomes(const std::vector<std::pair<UOp, UOp>>& becomes) {
  SavedGraphs saved;
  if (becomes.empty()) return saved;
  std::lock_guard lock(registry_mutex());
  std::vector<TensorImpl*> lazy;
  std::vector<UOp> graphs;
  // only graphs that may contain a replaced node (every buffer it reads is in their Bloom filter): a GGUF model's
  // weights stay lazy dequantizations, and walking them at each of a prompt's cache writes would cost a large part
  // of its first prompt chunk
  std::vector<uint64_t> keys;
  for (const auto& [from, to] : becomes) keys.push_back(from.buffer_bloom());
  auto may_contain = [&](const UOp& g) {
    uint64_t b = g.buffer_bloom();
    return std::any_of(keys.begin(), keys.end(), [&](uint64_t k) { return (b & k) == k; });
  };
  std::unordered_set<const uop::UOpNode*> leaves;  // the nodes of the tensors that require gradients
  std::vector<std::pair<TensorImpl*, const uop::UOpNode*>> with_grads;  // and of those that have one (backward_all's)
  for (TensorImpl* t = registry_head; t; t = t->next) {
    if (t->requires_grad) leaves.insert(t->uop().get());
    else if (t->has_grad) with_grads.emplace_back(t, t->uop().get());
    if (!schedule::is_realized_form(t->uop()) && may_contain(t->uop())) lazy.push_back(t), graphs.push_back(t->uop());
  }
  // one walk for all tensors: an ONNX model's or a network's intermediates share most of their graphs, and a walk
  // per tensor made each realize quadratic in the graph's size (a Reshape whose shape is computed reads it back)
  std::vector<UOp> now = uop::substitute(graphs, becomes);
  // A tensor that has a gradient and keeps its graph is a leaf of a later backward_all() as well: the graphs this
  // realize changes keep what reaches it (reading x.grad realized the max that o = x.max() is, and o.backward()
  // again reached no x). One whose own graph changes now is not: its gradient is of the graph it had.
  if (!with_grads.empty()) {
    std::unordered_set<const TensorImpl*> moved;
    for (size_t i = 0; i < lazy.size(); i++)
      if (now[i] != graphs[i]) moved.insert(lazy[i]);
    for (const auto& [t, node] : with_grads)
      if (!moved.count(t)) leaves.insert(node);
  }
  // a changed graph that reaches a tensor requiring a gradient is kept for backward() (TensorImpl::autograd_uop);
  // not a leaf's own: its buffer is what the gradient is of
  std::vector<UOp> changed;
  for (size_t i = 0; i < lazy.size(); i++)
    if (now[i] != graphs[i] && !lazy[i]->requires_grad) changed.push_back(graphs[i]);
  std::unordered_set<const uop::UOpNode*> reaching;
  if (!leaves.empty() && !changed.empty()) reaching = tensor::nodes_reaching(UOp::sink(changed).toposort(), leaves);
  std::vector<std::pair<UOp, UOp>> leaf_moves;  // leaves this realize gives a buffer
  for (size_t i = 0; i < lazy.size(); i++) {
    if (now[i] == graphs[i]) continue;
    if (lazy[i]->requires_grad) leaf_moves.emplace_back(graphs[i], now[i]);
    saved.emplace_back(lazy[i], lazy[i]->become(std::move(now[i]), !lazy[i]->requires_grad && reaching.count(graphs[i].get())));
  }
  // kept graphs name such a leaf (a layer's lazily initialized parameter) by its buffer from now on, as backward()
  // finds leaves by their graphs
  if (!leaf_moves.empty()) {
    std::vector<TensorImpl*> keepers;
    std::vector<UOp> kept;
    for (TensorImpl* t = registry_head; t; t = t->next)
      if (UOp k = t->autograd_uop()) keepers.push_back(t), kept.push_back(std::move(k));
    std::vector<UOp> moved = uop::substitute(kept, leaf_moves);
    for (size_t i = 0; i < keepers.size(); i++)
      if (moved[i] != kept[i]) keepers[i]->move_autograd_uop(std::move(moved[i]));
  }
  return saved;
}

UOp autograd_graph(const TensorImpl& root) {
  UOp g = root.autograd_uop();
  if (!g) g = root.uop();
  std::vector<std::pair<UOp, UOp>> back;  // what live tensors are now -> the graphs they were
  {
    std::lock_guard lock(registry_mutex());
    for (TensorImpl* t = registry_head; t; t = t->next)
      if (UOp kept = t->autograd_uop(); kept && kept != t->uop()) back.emplace_back(t->uop(), std::move(kept));
  }
  // a kept graph may read buffers of earlier realizes that other kept graphs stand for: until nothing changes (a
  // kept graph was made before the buffers that replaced it, so this ends)
  for (UOp next; !back.empty(); g = next)
    if ((next = uop::substitute({g}, back)[0]) == g) break;
  return g;
}

std::unique_lock<std::recursive_mutex> realize_lock() {
  static std::recursive_mutex* m = new std::recursive_mutex();  // never destroyed, as the registry's
  return std::unique_lock(*m);
}

void restore_graphs(const SavedGraphs& saved) {
  std::lock_guard lock(registry_mutex());
  std::unordered_map<TensorImpl*, const UOp*> before;
  for (const auto& [t, u] : saved) before[t] = &u;
  for (TensorImpl* t = registry_head; t; t = t->next)  // only tensors still alive
    if (auto it = before.find(t); it != before.end()) t->become(*it->second, false);  // a graph it kept stays
}

std::vector<std::pair<std::weak_ptr<TensorImpl>, UOp>> live_tensors() {
  std::vector<std::pair<std::weak_ptr<TensorImpl>, UOp>> out;
  std::lock_guard lock(registry_mutex());
  for (TensorImpl* t = registry_head; t; t = t->next) out.emplace_back(t->weak_from_this(), t->uop());
  return out;
}

std::vector<Tensor> lazy_readers(const UOp& buffer) {
  std::vector<std::shared_ptr<TensorImpl>> lazy;
  std::vector<UOp> graphs;
  {
    std::lock_guard lock(registry_mutex());
    uint64_t bit = buffer.buffer_bloom();  // a graph without the buffer's bit does not read it
    for (TensorImpl* t = registry_head; t; t = t->next)
      if (!schedule::is_realized_form(t->uop()) && (t->uop().buffer_bloom() & bit) == bit)
        if (auto p = t->weak_from_this().lock()) lazy.push_back(std::move(p)), graphs.push_back(lazy.back()->uop());
  }
  // one walk over all the graphs (they share most of their nodes): which nodes read the buffer
  std::unordered_set<const uop::UOpNode*> reads{buffer.get()};
  for (const UOp& u : UOp::sink(graphs).toposort())
    for (const UOp& s : u.src())
      if (reads.count(s.get())) {
        reads.insert(u.get());
        break;
      }
  std::vector<Tensor> out;
  for (size_t i = 0; i < lazy.size(); i++)
    if (reads.count(graphs[i].get())) out.push_back(handle(lazy[i]));
  return out;
}

std::vector<Tensor> tensors_requiring_grad(bool every_float) {
  std::vector<Tensor> out;
  std::lock_guard lock(registry_mutex());
  for (TensorImpl* t = registry_head; t; t = t->next)
    if (t->requires_grad || (every_float && t->uop().dtype().is_float() && !t->is_gradient))
      if (auto p = t->weak_from_this().lock()) out.push_back(handle(std::move(p)));
  return out;
}

Tensor handle(std::shared_ptr<TensorImpl> impl) { return Tensor(std::move(impl)); }

Tensor make_tensor(const UOp& u, const std::string& device, SourceLocation created) {
  // the ops that make new sizes: every tensor's element count fits, whichever op or composite method built it
  switch (u.op()) {
    case Ops::RESHAPE: tensor::checked_numel(u.max_shape(), "reshape", created); break;
    case Ops::EXPAND: tensor::checked_numel(u.max_shape(), "expand", created); break;
    case Ops::PAD: tensor::checked_numel(u.max_shape(), "pad", created); break;
    case Ops::IOTA: tensor::checked_numel(u.max_shape(), "arange", created); break;
    default: break;
  }
  // under NoGradGuard a computed value is detached: no gradient flows back through it
  bool detach = Tensor::no_grad && u.dtype().is_float() && !u.src().empty() && u.op() != Ops::DETACH && u.op() != Ops::BUFFER;
  return Tensor(std::make_shared<TensorImpl>(detach ? UOp::make(Ops::DETACH, u.dtype(), {u}) : u, device, created));
}

}  // namespace detail

namespace tensor {

std::string resolve_device(const std::string& device, const char* op, SourceLocation where) {
  if (device.empty()) return Device::default_device();
  if (!multi::is_multi(device)) return runtime::canonical_device(device);
  std::vector<std::string> names = multi::split_devices(device);
  for (std::string& n : names) {
    n = runtime::canonical_device(n);
    if (std::count(names.begin(), names.end(), n) > 1)
      throw ArgumentError(op, "'" + device + "' names " + n + " twice", where);
  }
  multi::note_multi_used();
  return multi::join_devices(names);
}

UOp device_uop(const std::string& device) { return UOp::make(Ops::DEVICE, dtypes::void_, {}, uop::Arg(device)); }

UOp movement(Ops op, const UOp& x, std::vector<int64_t> arg) { return UOp::make(op, x.dtype(), {x}, uop::Arg(std::move(arg))); }
UOp movement(Ops op, const UOp& x, std::vector<Dim> arg) { return UOp::make(op, x.dtype(), {x}, uop::Arg(std::move(arg))); }

Tensor const_tensor(ConstValue v, DType dtype, const DimList& shape, const std::string& device) {
  UOp c = UOp::make(Ops::CONST, dtype, {device_uop(device)}, uop::Arg(cast_const(v, dtype)));
  const std::vector<Dim>& s = shape.dims();
  if (s.empty()) return wrap(c, device);
  std::vector<Dim> ones(s.size(), Dim(1));
  UOp r = movement(Ops::RESHAPE, c, ones);
  return wrap(s == ones ? r : movement(Ops::EXPAND, r, s), device);
}

void check_shape(const Shape& shape, const char* op, SourceLocation where) {
  for (int64_t d : shape)
    if (d < 0) throw ShapeError(op, "negative dimension in shape " + shape_str(shape), where);
  checked_numel(shape, op, where);
}

int64_t checked_numel(const Shape& shape, const char* op, SourceLocation where) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;  // empty, whatever the other dims
  int64_t n = 1;
  bool over = false;
  for (int64_t d : shape) over = over || __builtin_mul_overflow(n, d, &n);
  if (over || n > kMaxElements)
    throw ArgumentError(op, "shape " + shape_str(shape) + " has more elements than a tensor can hold (at most 2^60, so " +
                                "that its size in bytes fits in int64 for every dtype)", where);
  return n;
}

std::string num_str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_value_dtype(DType dt, const char* op, SourceLocation where) {
  if (dt == dtypes::void_ || dt.is_ptr() || dt.count() != 1) throw DTypeError(op, "not a value dtype: " + dt.name(), where);
}

void rethrow_in(const Error& e, const char* method, SourceLocation where) {
  if (!e.is_user_error() || e.op() == method) throw;
  rethrow_as(e, method, e.op() + ": " + e.message(), where);
}

int64_t prod(const Shape& s) { return checked_numel(s, "shape", {}); }

}  // namespace tensor

using tensor::check_shape;
using tensor::shape_str;

namespace {

// one value into dtype's bytes
void write_value(unsigned char* dst, DType dt, const ConstValue& v) {
  ConstValue c = cast_const(v, dt);
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof x); };
  switch (dt.scalar_type()) {
    case ScalarType::Bool: put(static_cast<uint8_t>(const_to_int(c) != 0)); break;
    case ScalarType::Int8: put(static_cast<int8_t>(const_to_int(c))); break;
    case ScalarType::UInt8: put(static_cast<uint8_t>(const_to_int(c))); break;
    case ScalarType::Int16: put(static_cast<int16_t>(const_to_int(c))); break;
    case ScalarType::UInt16: put(static_cast<uint16_t>(const_to_int(c))); break;
    case ScalarType::Int32: put(static_cast<int32_t>(const_to_int(c))); break;
    case ScalarType::UInt32: put(static_cast<uint32_t>(const_to_int(c))); break;
    case ScalarType::Int64: put(static_cast<int64_t>(const_to_int(c))); break;
    case ScalarType::UInt64: put(static_cast<uint64_t>(const_to_int(c))); break;
    case ScalarType::Float16: put(double_to_half_bits(const_to_double(c))); break;
    case ScalarType::BFloat16: put(double_to_bf16_bits(const_to_double(c))); break;
    case ScalarType::FP8E4M3:
    case ScalarType::FP8E5M2:
    case ScalarType::FP8E4M3FNUZ:
    case ScalarType::FP8E5M2FNUZ: put(double_to_fp8_bits(const_to_double(c), dt)); break;
    case ScalarType::Float32: put(static_cast<float>(const_to_double(c))); break;
    case ScalarType::Float64: put(const_to_double(c)); break;
    case ScalarType::Void: throw InternalError("Tensor", "void data");
  }
}

}  // namespace

// NestedList's members are private; this friend reads them for flatten_list().
struct NestedListAccess {
  static bool leaf(const NestedList& n) { return n.leaf_; }
  static const ConstValue& value(const NestedList& n) { return n.value_; }
  static const std::vector<NestedList>& items(const NestedList& n) { return n.items_; }
};

namespace {

void flatten_list(const NestedList& n, size_t depth, Shape& shape, std::vector<ConstValue>& out, SourceLocation where) {
  // the first path down fixes the shape; every other path must match it
  bool first = out.empty() && shape.size() == depth;
  if (NestedListAccess::leaf(n)) {
    if (first) shape.resize(depth);
    else if (shape.size() != depth) throw ShapeError("Tensor", "ragged nested list: a number where a list was expected", where);
    out.push_back(NestedListAccess::value(n));
    return;
  }
  const auto& items = NestedListAccess::items(n);
  if (first) shape.push_back(static_cast<int64_t>(items.size()));
  else if (depth >= shape.size() || shape[depth] != static_cast<int64_t>(items.size()))
    throw ShapeError("Tensor", "ragged nested list: rows of different lengths (expected shape " + shape_str(shape) + ")", where);
  for (const NestedList& c : items) flatten_list(c, depth + 1, shape, out, where);
}

}  // namespace

Tensor::Tensor() = default;

Tensor::Tensor(const UOp& u) : Tensor(detail::make_tensor(u, uop::device_of(u), {})) {}

Tensor::Tensor(NestedList data, std::optional<DType> dtype, const std::string& device, Loc where) {
  Shape shape;
  std::vector<ConstValue> values;
  flatten_list(data, 0, shape, values, where);
  // tinygrad's defaults: any float makes it float32, else any integer int32, else bool
  DType dt = dtypes::bool_;
  for (const ConstValue& v : values) {
    if (std::holds_alternative<double>(v)) dt = dtypes::default_float();
    else if (!std::holds_alternative<bool>(v) && dt == dtypes::bool_) dt = dtypes::default_int();
  }
  dt = dtype.value_or(dt);
  std::vector<unsigned char> bytes(values.size() * dt.itemsize());
  for (size_t i = 0; i < values.size(); i++) write_value(bytes.data() + i * dt.itemsize(), dt, values[i]);
  *this = from_host(bytes.data(), values.size(), dt, shape, device, where);
}

Tensor Tensor::scalar_tensor(ConstValue v, DType dtype, const std::string& device, Loc where) {
  tensor::check_value_dtype(dtype, "Tensor", where);
  return tensor::const_tensor(v, dtype, {}, tensor::resolve_device(device));
}

Tensor Tensor::from_host(const void* data, size_t count, DType dtype, const Shape& shape, const std::string& device,
                         Loc where) {
  check_shape(shape, "Tensor", where);
  int64_t n = tensor::prod(shape);
  if (static_cast<size_t>(n) != count)
    throw ShapeError("Tensor", std::to_string(count) + " values do not fill shape " + shape_str(shape), where);
  std::string dev = tensor::resolve_device(device);
  if (multi::is_multi(dev)) return from_host(data, count, dtype, shape, multi::split_devices(dev)[0], where).to(dev, where);
  UOp buf = runtime::new_buffer(dev, dtype, n);
  if (n) runtime::buffer_of(buf).copyin(data, count * dtype.itemsize());
  Shape flat{n};
  return tensor::wrap(shape == flat ? buf : tensor::movement(Ops::RESHAPE, buf, shape), dev, where);
}

const detail::TensorImpl& Tensor::impl() const {
  if (!impl_) throw ArgumentError("Tensor", "use of an empty Tensor handle (default-constructed, never assigned)");
  return *impl_;
}
UOp Tensor::uop() const { return impl().uop(); }
const Shape& Tensor::shape() const {
  const detail::TensorImpl& t = impl();
  if (!t.dims.empty())
    throw ShapeError("shape", "the tensor of shape " + uop::dims_str(t.dims) +
                                  " has a symbolic size: use sym_shape(), or shrink it to concrete sizes first", t.created);
  return t.shape;
}
std::vector<Dim> Tensor::sym_shape() const {
  const detail::TensorImpl& t = impl();
  return t.dims.empty() ? std::vector<Dim>(t.shape.begin(), t.shape.end()) : t.dims;
}
bool Tensor::is_symbolic() const { return !impl().dims.empty(); }
int64_t Tensor::ndim() const { return static_cast<int64_t>(impl().shape.size()); }
int64_t Tensor::size(int64_t dim, Loc where) const {
  if (ndim() == 0) throw ArgumentError("size", "a 0-d tensor has no dimension " + std::to_string(dim), where);
  return shape()[tensor::normalize_axis(dim, ndim(), "size", where)];
}
int64_t Tensor::numel() const { return tensor::prod(shape()); }
DType Tensor::dtype() const { return impl().dtype; }
const std::string& Tensor::device() const { return impl().device; }
bool Tensor::is_realized() const {
  UOp graph = uop();  // (movement_base refers into it)
  const UOp& base = schedule::movement_base(graph);
  return base.op() == Ops::BUFFER || (base.op() == Ops::MULTI && schedule::is_realized_form(base));
}

void Tensor::realize(const std::vector<Tensor>& tensors) {
  auto lock = detail::realize_lock();
  std::vector<UOp> outs;
  for (const Tensor& t : tensors)
    if (!schedule::is_realized_form(t.uop())) outs.push_back(t.uop());
  std::vector<const detail::TensorImpl*> named;
  for (const Tensor& t : tensors) named.push_back(&t.impl());
  detail::realize_graphs(outs, named);
}

namespace {
thread_local std::unordered_set<const uop::UOpNode*>* realize_observer = nullptr;
}
detail::RealizeObserver::RealizeObserver(std::unordered_set<const uop::UOpNode*>& nodes) : outer_(realize_observer) {
  realize_observer = &nodes;
}
detail::RealizeObserver::~RealizeObserver() { realize_observer = outer_; }

void detail::realize_graphs(const std::vector<UOp>& outs, const std::vector<const TensorImpl*>& tensors) {
  if (outs.empty()) return;
  auto lock = detail::realize_lock();
  if (realize_observer)
    for (const UOp& o : outs)
      if (!realize_observer->count(o.get()))
        for (const UOp& u : o.toposort()) realize_observer->insert(u.get());
  profile::Span realize_span("realize", "realize");
  std::string made_at;  // VIZ: the line that made the first of the tensors made at a known line
  if (viz::enabled())
    for (const TensorImpl* t : tensors)
      if (t->created.line() && made_at.empty()) made_at = t->created.str();
  viz::RealizeScope viz(outs, made_at);
  schedule::Schedule s;
  {
    profile::Span span("schedule", "schedule");
    viz::StageTimer timer;
    s = schedule::create_schedule(outs);
    span.arg("items", std::to_string(s.items.size()));
    if (viz) viz->stages.push_back(timer.stop("schedule"));
  }
  realize_span.arg("items", std::to_string(s.items.size()));
  // live tensors point at the new buffers before they are filled, so that running can free every buffer no tensor
  // holds after its last use (a deep backward's intermediates); on failure the tensors get their graphs back
  detail::SavedGraphs saved = detail::apply_becomes(s.becomes);
  s.becomes.clear();
  try {
    viz::StageTimer timer;
    engine::run_schedule(std::move(s));
    if (viz) viz->stages.push_back(timer.stop("run"));
  } catch (const Error& e) {
    detail::restore_graphs(saved);
    if (viz) viz->error = e.what();
    if (e.is_user_error() || e.kind() == ErrorKind::Internal) throw;
    // a failed compile or launch: say which of the user's tensors it was computing (the first one made at a known line)
    for (const detail::TensorImpl* t : tensors)
      if (t->created.line())
        rethrow_with_note(e, "\n(while realizing the tensor of shape " + tensor::shape_str(t->shape) + " made here)", t->created);
    throw;
  } catch (...) {  // std::bad_alloc and the like
    detail::restore_graphs(saved);
    throw;
  }
}

Tensor& Tensor::realize() {
  realize({*this});
  return *this;
}

void Tensor::check_single(Loc where) const {
  if (numel() != 1) throw ArgumentError("item", "item() needs exactly one element, the tensor has shape " + shape_str(shape()), where);
}

void Tensor::copy_to_host(void* out, DType as) const {
  Loc made = impl().created;  // errors while computing it point at the user's line that made it
  Tensor t = dtype() == as ? *this : cast(as, made);
  if (multi::is_multi(device())) t = t.to(devices()[0], made);  // read where the first part is
  auto lock = detail::realize_lock();  // no other realize between this one and the copy
  // the data must be one buffer read in order: contiguous() computes one when it is not
  t = t.contiguous(made);
  t.realize();
  if (t.numel() == 0) return;
  runtime::Buffer& b = runtime::buffer_of(schedule::plain_buffer(t.uop()));
  b.device().synchronize();
  b.copyout(out, b.nbytes());
}

}  // namespace tg
