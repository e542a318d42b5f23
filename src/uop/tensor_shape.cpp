// Facts of tensor-level nodes: shape inference (a pure function of the op, the sources' shapes and the arg) and
// the device a node is on.
#include <atomic>

#include "uop/buffer_arg.h"
#include "uop/reduce_arg.h"
#include "uop/sint.h"

namespace tg::uop {

int64_t next_buffer_id() {
  static std::atomic<int64_t> counter{0};
  return ++counter;
}

const BufferArg& get_buffer_arg(const UOp& u) {
  auto* e = u.arg().get_if<std::shared_ptr<const ArgExt>>();
  auto* b = e ? dynamic_cast<const BufferArg*>(e->get()) : nullptr;
  if (u.op() != Ops::BUFFER || !b) throw InternalError("get_buffer_arg", "not a BUFFER node");
  return *b;
}

namespace {

using Dims = std::vector<Dim>;

Dims to_dims(const UOpNode::Shape& s) {
  if (!s.dims.empty()) return s.dims;
  return Dims(s.max.begin(), s.max.end());
}

// the shape of u given its sources' shapes (already cached)
Dims infer(const UOp& u) {
  auto src_shape = [&]() { return to_dims(*u.src(0).get()->shape_cache.load(std::memory_order_acquire)); };
  auto arg = [&]() {
    if (const auto* d = u.arg().get_if<Dims>()) return *d;
    const std::vector<int64_t>& a = u.arg().get<std::vector<int64_t>>();
    return Dims(a.begin(), a.end());
  };
  switch (u.op()) {
    case Ops::BUFFER: return {get_buffer_arg(u).size};
    case Ops::IOTA: return {u.arg().get<int64_t>()};
    case Ops::CONST: return {};
    case Ops::RESHAPE:
    case Ops::EXPAND: return arg();
    case Ops::PERMUTE: {
      Dims in = src_shape(), out;
      for (const Dim& a : arg()) out.push_back(in[static_cast<size_t>(a.min())]);
      return out;
    }
    case Ops::PAD:
    case Ops::SHRINK: {
      Dims out = src_shape(), p = arg();  // (before, after) or (begin, end) per axis
      for (size_t i = 0; i < out.size(); i++) out[i] = u.op() == Ops::PAD ? out[i] + p[2 * i] + p[2 * i + 1] : p[2 * i + 1] - p[2 * i];
      return out;
    }
    case Ops::STRIDE: {
      Dims out = src_shape();
      const std::vector<int64_t>& a = u.arg().get<std::vector<int64_t>>();
      for (size_t i = 0; i < out.size(); i++) {
        int64_t st = a[i] < 0 ? -a[i] : a[i];
        out[i] = (out[i] + Dim(st - 1)).idiv(st);
      }
      return out;
    }
    case Ops::REDUCE_AXIS: {
      Dims out = src_shape();
      for (int64_t a : get_reduce_arg(u).axes) out[static_cast<size_t>(a)] = 1;
      return out;
    }
    case Ops::MULTI: {  // the shards side by side along the axis
      auto shard = [&](size_t i) { return to_dims(*u.src(i).get()->shape_cache.load(std::memory_order_acquire)); };
      Dims out = shard(1);
      int64_t axis = u.arg().get<int64_t>();
      if (axis >= 0)
        for (size_t i = 2; i < u.src().size(); i++) out[static_cast<size_t>(axis)] = out[static_cast<size_t>(axis)] + shard(i)[static_cast<size_t>(axis)];
      return out;
    }
    case Ops::MSELECT: {
      Dims out = src_shape();
      const std::vector<int64_t>& a = u.arg().get<std::vector<int64_t>>();  // (index, axis, begin, end)
      if (a[1] >= 0) out[static_cast<size_t>(a[1])] = a[3] - a[2];
      return out;
    }
    case Ops::WHERE: return to_dims(*u.src(1).get()->shape_cache.load(std::memory_order_acquire));
    default:
      if (u.src().empty() || u.op() == Ops::SINK || u.op() == Ops::DEVICE)
        throw InternalError("shape", "no shape for " + std::string(op_name(u.op())));
      return src_shape();  // elementwise, CAST, BITCAST, CONTIGUOUS, COPY, DETACH, ASSIGN, FLIP
  }
}

bool has_shape(const UOp& u) { return u.op() != Ops::DEVICE; }

const UOpNode::Shape& cached_shape(const UOp& root) {
  auto cached = [](const UOp& u) { return !has_shape(u) || u.get()->shape_cache.load(std::memory_order_acquire); };
  // fill the caches bottom-up without recursion, stopping at nodes already known
  std::vector<const UOp*> stack{&root};
  while (!stack.empty()) {
    const UOp& u = *stack.back();
    if (cached(u)) {
      stack.pop_back();
      continue;
    }
    bool ready = true;
    for (const UOp& s : u.src())
      if (!cached(s)) stack.push_back(&s), ready = false;
    if (!ready) continue;
    stack.pop_back();
    Dims dims = infer(u);
    auto* s = new UOpNode::Shape();
    bool symbolic = false;
    for (const Dim& d : dims) s->max.push_back(d.max()), symbolic = symbolic || d.is_symbolic();
    if (symbolic) s->dims = std::move(dims);
    const UOpNode::Shape* expected = nullptr;
    if (!u.get()->shape_cache.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) delete s;
  }
  return *root.get()->shape_cache.load(std::memory_order_acquire);
}

}  // namespace

const std::vector<int64_t>& UOp::shape() const {
  const UOpNode::Shape& s = cached_shape(*this);
  if (!s.dims.empty())
    throw InternalError("shape", "the symbolic shape " + dims_str(s.dims) + " of " + std::string(op_name(op())) +
                                     " read as integers: this step does not support symbolic shapes yet");
  return s.max;
}

std::vector<Dim> UOp::sym_shape() const { return to_dims(cached_shape(*this)); }
const std::vector<int64_t>& UOp::max_shape() const { return cached_shape(*this).max; }
bool UOp::symbolic_shape() const { return !cached_shape(*this).dims.empty(); }

const std::string& device_of(const UOp& u) {
  // every path down ends at a leaf with a DEVICE source; follow the first source
  const UOp* n = &u;
  while (!n->src().empty()) {
    // COPY's and MSELECT's second source is where the value is; a MULTI's first names all its devices
    if (n->op() == Ops::COPY || n->op() == Ops::MSELECT) return n->src(1).arg().get<std::string>();
    if (n->src(0).op() == Ops::DEVICE) return n->src(0).arg().get<std::string>();
    n = &n->src(0);
  }
  throw InternalError("device_of", "no device below " + std::string(uop::op_name(u.op())));
}

}  // namespace tg::uop
