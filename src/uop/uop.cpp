// Interning, lifetime, building and printing of UOps.
#include "uop/uop.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tg/error.h"

namespace tg::uop {

namespace {

// The intern table: an open-addressing hash set of nodes (linear probing, backward-shift deletion), keyed by the
// node's structural hash. A node whose refcount reached zero is dying: lookups skip it (they never resurrect a
// node), and the thread that dropped it to zero removes it.
class InternTable {
 public:
  std::mutex mu;

  template <class Eq> UOpNode* find(uint64_t h, Eq&& eq) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      UOpNode* n = slots_[i];
      if (!n) return nullptr;
      if (n->hash == h && eq(n)) return n;
    }
  }
  void insert(UOpNode* n) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    size_t i = n->hash & mask_;
    while (slots_[i]) i = (i + 1) & mask_;
    slots_[i] = n;
    size_++;
  }
  void erase(UOpNode* n) {
    size_t i = n->hash & mask_;
    while (slots_[i] != n) i = (i + 1) & mask_;
    // backward-shift: move later entries of the probe run into the hole so no lookup stops early
    for (size_t j = (i + 1) & mask_; slots_[j]; j = (j + 1) & mask_) {
      size_t home = slots_[j]->hash & mask_;
      if (((j - home) & mask_) >= ((j - i) & mask_)) slots_[i] = slots_[j], i = j;
    }
    slots_[i] = nullptr;
    size_--;
  }
  size_t size() const { return size_; }

 private:
  void grow() {
    std::vector<UOpNode*> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, nullptr);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (UOpNode* n : old)
      if (n) insert(n);
  }
  std::vector<UOpNode*> slots_;
  size_t mask_ = 0, size_ = 0;
};
InternTable& table() {
  static InternTable* t = new InternTable();  // never destroyed: nodes may die during static destruction
  return *t;
}

bool same_key(const UOpNode* n, Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  if (n->op != op || n->dtype != dtype || n->src.size() != src.size()) return false;
  for (size_t i = 0; i < src.size(); i++)
    if (n->src[i] != src[i]) return false;
  return n->arg == arg;
}

}  // namespace

// Freeing is iterative: a dying node hands its sources to a thread-local worklist instead of recursing, so a
// chain of a million nodes dies without deep recursion.
void destroy_node(UOpNode* n) {
  // the worklist of the outermost call on this thread; a plain pointer to a local, so it still works while
  // thread_locals and statics are being destroyed at exit (UOps held in static caches die then)
  thread_local std::vector<UOpNode*>* pending = nullptr;
  if (pending) {
    pending->push_back(n);
    return;
  }
  std::vector<UOpNode*> work{n};
  pending = &work;
  while (!work.empty()) {
    UOpNode* d = work.back();
    work.pop_back();
    {
      InternTable& t = table();
      std::lock_guard lock(t.mu);
      t.erase(d);
    }
    for (UOp& s : d->src) {
      UOpNode* sn = s.release();
      if (sn && sn->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) work.push_back(sn);
    }
    delete d->shape_cache.load(std::memory_order_relaxed);
    delete d;
  }
  pending = nullptr;
}

UOp UOp::make(Ops op, DType dtype, std::vector<UOp> src, Arg arg) {
  uint64_t h = hash_mix(static_cast<uint64_t>(op), static_cast<uint64_t>(dtype.scalar_type()));
  h = hash_mix(hash_mix(h, dtype.count()), static_cast<uint64_t>(dtype.addr_space()));
  for (const UOp& s : src) {
    if (!s) throw InternalError("UOp", std::string("null source for ") + std::string(op_name(op)));
    h = hash_mix(h, s.hash());
  }
  h = hash_mix(h, arg.hash());
  InternTable& t = table();
  std::lock_guard lock(t.mu);
  // take a reference unless the node is already dying (refcount 0): then it is as good as gone
  auto live_match = [&](UOpNode* n) {
    if (!same_key(n, op, dtype, src, arg)) return false;
    uint32_t rc = n->refcount.load(std::memory_order_relaxed);
    while (rc != 0 && !n->refcount.compare_exchange_weak(rc, rc + 1, std::memory_order_acq_rel)) {
    }
    return rc != 0;
  };
  if (UOpNode* n = t.find(h, live_match)) return UOp(n);
  auto* n = new UOpNode{op, dtype, std::move(src), std::move(arg), h};
  t.insert(n);
  return UOp(n);
}

size_t live_uop_count() {
  InternTable& t = table();
  std::lock_guard lock(t.mu);
  return t.size();
}

UOp UOp::const_(DType dtype, ConstValue v) { return make(Ops::CONST, dtype, {}, Arg(cast_const(v, dtype))); }

UOp UOp::variable(std::string name, int64_t min, int64_t max, DType dtype, SourceLocation where) {
  if (min > max)
    throw ArgumentError("Variable", "Variable '" + name + "' has min " + std::to_string(min) + " > max " +
                                        std::to_string(max), where);
  if (!dtype.is_int()) throw DTypeError("Variable", "Variable '" + name + "' must be an integer, not " + dtype.name(), where);
  return make(Ops::DEFINE_VAR, dtype, {}, Arg(VarArg{std::move(name), min, max}));
}

const ConstValue& UOp::const_value() const {
  if (!is_const()) throw InternalError("const_value", "not a CONST: " + std::string(op_name(op())));
  return arg().get<ConstValue>();
}

UOp UOp::alu(Ops op, const std::vector<UOp>& others) const {
  std::vector<UOp> src;
  src.reserve(others.size() + 1);
  src.push_back(*this);
  src.insert(src.end(), others.begin(), others.end());
  std::string name(op_name(op));
  size_t want = GroupOp::Unary().contains(op) ? 1 : GroupOp::Binary().contains(op) ? 2 : GroupOp::Ternary().contains(op) ? 3 : 0;
  if (want == 0 || (op == Ops::CAST || op == Ops::BITCAST)) throw InternalError(name, "alu() builds ALU ops; use cast()");
  if (src.size() != want) throw ArgumentError(name, name + " takes " + std::to_string(want) + " sources");
  DType out = dtype();
  if (op == Ops::WHERE) {
    if (!dtype().is_bool()) throw DTypeError("where", "condition must be bool, not " + dtype().name());
    if (src[1].dtype() != src[2].dtype())
      throw DTypeError("where", "branches differ: " + src[1].dtype().name() + " vs " + src[2].dtype().name());
    out = src[1].dtype();
  } else {
    for (size_t i = 1; i < src.size(); i++)
      if (src[i].dtype() != dtype())
        throw DTypeError(name, "operands differ in dtype: " + dtype().name() + " vs " + src[i].dtype().name());
  }
  if (GroupOp::Comparison().contains(op)) out = dtypes::bool_.vec(dtype().count());
  if ((op == Ops::IDIV || op == Ops::MOD || op == Ops::SHL || op == Ops::SHR) && !dtype().is_int())
    throw DTypeError(name, name + " needs integers, not " + dtype().name());
  if ((op == Ops::AND || op == Ops::OR || op == Ops::XOR) && !(dtype().is_int() || dtype().is_bool()))
    throw DTypeError(name, name + " needs integers or bools, not " + dtype().name());
  if ((op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN || op == Ops::SQRT || op == Ops::RECIPROCAL) && !dtype().is_float())
    throw DTypeError(name, name + " needs a float, not " + dtype().name());
  if ((op == Ops::IDIV || op == Ops::MOD) && src[1].is_const() && const_to_int(src[1].const_value()) == 0)
    throw ArgumentError(name, std::string(op == Ops::IDIV ? "division" : "modulo") + " by zero in " + render() +
                                  (op == Ops::IDIV ? "//0" : "%0"));
  return make(op, out, std::move(src));
}

UOp UOp::cast(DType dt) const { return dt == dtype() ? *this : make(Ops::CAST, dt, {*this}); }
UOp UOp::bitcast(DType dt) const {
  if (dt.itemsize() != dtype().itemsize())
    throw DTypeError("bitcast", "sizes differ: " + dtype().name() + " to " + dt.name());
  return dt == dtype() ? *this : make(Ops::BITCAST, dt, {*this});
}
UOp UOp::with_src(std::vector<UOp> src) const { return make(op(), dtype(), std::move(src), arg()); }
UOp UOp::minimum(const UOp& o) const { return -((-*this).maximum(-o)); }

UOp operator+(const UOp& a, const UOp& b) { return a.alu(Ops::ADD, {b}); }
UOp operator*(const UOp& a, const UOp& b) { return a.alu(Ops::MUL, {b}); }
UOp operator-(const UOp& a) {
  if (a.dtype().is_bool()) throw DTypeError("neg", "cannot negate a bool; use logical_not");
  return a * a.const_like(int64_t{-1});
}
UOp operator-(const UOp& a, const UOp& b) { return a + (-b); }
UOp operator/(const UOp& a, const UOp& b) {
  if (a.dtype().is_float()) return a * b.alu(Ops::RECIPROCAL);
  return a.alu(Ops::IDIV, {b});
}
UOp operator%(const UOp& a, const UOp& b) { return a.alu(Ops::MOD, {b}); }
UOp operator<(const UOp& a, const UOp& b) { return a.alu(Ops::CMPLT, {b}); }
UOp operator&(const UOp& a, const UOp& b) { return a.alu(Ops::AND, {b}); }
UOp operator|(const UOp& a, const UOp& b) { return a.alu(Ops::OR, {b}); }
UOp operator^(const UOp& a, const UOp& b) { return a.alu(Ops::XOR, {b}); }
UOp operator<<(const UOp& a, const UOp& b) { return a.alu(Ops::SHL, {b}); }
UOp operator>>(const UOp& a, const UOp& b) { return a.alu(Ops::SHR, {b}); }

std::vector<UOp> UOp::toposort() const {
  std::vector<UOp> out;
  if (!n_) return out;
  NodeIndex done;
  std::vector<std::pair<const UOp*, bool>> stack{{this, false}};  // (node, its sources are pushed)
  stack.reserve(16);
  while (!stack.empty()) {
    auto [u, expanded] = stack.back();
    stack.pop_back();
    if (done.find(u->get())) continue;
    if (expanded) {
      done.insert(u->get(), 0);
      out.push_back(*u);
      continue;
    }
    stack.push_back({u, true});
    for (auto it = u->src().rbegin(); it != u->src().rend(); ++it)
      if (!done.find(it->get())) stack.push_back({&*it, false});
  }
  return out;
}

bool UOp::contains(const UOp& node) const {
  for (const UOp& u : toposort())
    if (u == node) return true;
  return false;
}

uint64_t UOp::buffer_bloom() const {
  if (n_->bloom_state.load(std::memory_order_acquire)) return n_->bloom.load(std::memory_order_relaxed);
  // post-order over the nodes not computed yet (a node reached twice before it is done is computed twice, alike)
  std::vector<std::pair<const UOpNode*, size_t>> stack{{n_, 0}};
  while (!stack.empty()) {
    const UOpNode* node = stack.back().first;
    size_t& next = stack.back().second;
    if (next < node->src.size()) {
      const UOpNode* s = node->src[next++].get();
      if (!s->bloom_state.load(std::memory_order_acquire)) stack.emplace_back(s, 0);
      continue;
    }
    uint64_t b = node->op == Ops::BUFFER ? uint64_t{1} << (node->hash >> 58) : 0;
    for (const UOp& s : node->src) b |= s.get()->bloom.load(std::memory_order_relaxed);
    node->bloom.store(b, std::memory_order_relaxed);
    node->bloom_state.store(1, std::memory_order_release);
    stack.pop_back();
  }
  return n_->bloom.load(std::memory_order_relaxed);
}

std::vector<UOp> substitute(const std::vector<UOp>& roots, const std::vector<std::pair<UOp, UOp>>& replacements) {
  std::unordered_map<const UOpNode*, UOp> map;
  for (const auto& [from, to] : replacements) map[from.get()] = to;
  // roots that are themselves replaced need no walk (a realized tensor's own graph, the common case)
  if (std::all_of(roots.begin(), roots.end(), [&](const UOp& r) { return map.count(r.get()); })) {
    std::vector<UOp> out;
    for (const UOp& r : roots) out.push_back(map.at(r.get()));
    return out;
  }
  std::vector<UOp> nodes = UOp::sink(roots).toposort();
  nodes.pop_back();  // the SINK
  for (const UOp& u : nodes) {
    if (map.count(u.get())) continue;
    std::vector<UOp> src;
    bool changed = false;
    for (const UOp& s : u.src()) {
      auto it = map.find(s.get());
      src.push_back(it == map.end() ? s : it->second);
      changed |= it != map.end() && it->second != s;
    }
    if (changed) map[u.get()] = u.with_src(std::move(src));
  }
  std::vector<UOp> out;
  for (const UOp& r : roots) {
    auto it = map.find(r.get());
    out.push_back(it == map.end() ? r : it->second);
  }
  return out;
}

UOp UOp::substitute(const std::vector<std::pair<UOp, UOp>>& replacements) const {
  if (!n_) return *this;
  return uop::substitute(std::vector<UOp>{*this}, replacements)[0];
}

std::string print_graph(const UOp& root) {
  std::vector<UOp> nodes = root.toposort();
  std::unordered_map<const UOpNode*, size_t> index;
  std::ostringstream os;
  for (size_t i = 0; i < nodes.size(); i++) {
    const UOp& u = nodes[i];
    index[u.get()] = i;
    std::string srcs = "[";
    for (size_t j = 0; j < u.src().size(); j++) srcs += (j ? ", " : "") + std::to_string(index.at(u.src(j).get()));
    srcs += "]";
    char line[128];
    std::snprintf(line, sizeof(line), "%4zu %-18s : %-22s %-12s ", i, ("Ops." + std::string(op_name(u.op()))).c_str(),
                  ("dtypes." + u.dtype().name()).c_str(), srcs.c_str());
    os << line << u.arg().repr() << "\n";
  }
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const UOp& u) { return os << (u ? print_graph(u) : "UOp(null)\n"); }

}  // namespace tg::uop
