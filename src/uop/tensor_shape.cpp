// Shape inference for tensor-level nodes: a pure function of the op, the sources' shapes and the arg.
#include <atomic>

#include "uop/buffer_arg.h"
#include "uop/reduce_arg.h"

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

using Shape = std::vector<int64_t>;

// the shape of u given its sources' shapes (already cached)
Shape infer(const UOp& u) {
  auto src_shape = [&]() -> const Shape& { return u.src(0).shape(); };
  auto arg = [&]() -> const Shape& { return u.arg().get<Shape>(); };
  switch (u.op()) {
    case Ops::BUFFER: return {get_buffer_arg(u).size};
    case Ops::IOTA: return {u.arg().get<int64_t>()};
    case Ops::CONST: return {};
    case Ops::RESHAPE:
    case Ops::EXPAND: return arg();
    case Ops::PERMUTE: {
      Shape out;
      for (int64_t a : arg()) out.push_back(src_shape()[a]);
      return out;
    }
    case Ops::PAD:
    case Ops::SHRINK: {
      Shape out = src_shape();
      const Shape& p = arg();  // (before, after) or (begin, end) per axis
      for (size_t i = 0; i < out.size(); i++) out[i] = u.op() == Ops::PAD ? out[i] + p[2 * i] + p[2 * i + 1] : p[2 * i + 1] - p[2 * i];
      return out;
    }
    case Ops::STRIDE: {
      Shape out = src_shape();
      for (size_t i = 0; i < out.size(); i++) {
        int64_t st = arg()[i] < 0 ? -arg()[i] : arg()[i];
        out[i] = (out[i] + st - 1) / st;
      }
      return out;
    }
    case Ops::REDUCE_AXIS: {
      Shape out = src_shape();
      for (int64_t a : get_reduce_arg(u).axes) out[a] = 1;
      return out;
    }
    case Ops::WHERE: return u.src(1).shape();
    default:
      if (u.src().empty() || u.op() == Ops::SINK || u.op() == Ops::DEVICE)
        throw InternalError("shape", "no shape for " + std::string(op_name(u.op())));
      return src_shape();  // elementwise, CAST, BITCAST, CONTIGUOUS, COPY, DETACH, ASSIGN, FLIP
  }
}

bool has_shape(const UOp& u) { return u.op() != Ops::DEVICE; }

}  // namespace

const std::vector<int64_t>& UOp::shape() const {
  auto cached = [](const UOp& u) { return !has_shape(u) || u.n_->shape_cache.load(std::memory_order_acquire); };
  // fill the caches bottom-up without recursion, stopping at nodes already known
  std::vector<const UOp*> stack{this};
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
    auto* s = new Shape(infer(u));
    const Shape* expected = nullptr;
    if (!u.n_->shape_cache.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) delete s;
  }
  return *n_->shape_cache.load(std::memory_order_acquire);
}

}  // namespace tg::uop
