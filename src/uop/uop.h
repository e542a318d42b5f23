// UOp: the one IR node of tinygrad.cpp, (op, dtype, src, arg), immutable and interned (hash-consed).
#pragma once
#include <atomic>
#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tg/dtype.h"
#include "tg/error.h"
#include "uop/arg.h"
#include "uop/ops.h"

namespace tg::uop {

struct UOpNode;

// Scalars on either side of an operator become constants of the UOp's dtype.
template <class T>
concept Scalar = std::is_arithmetic_v<T>;
template <Scalar T> ConstValue to_const(T v) {
  if constexpr (std::is_same_v<T, bool>) return v;
  else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
  else if constexpr (std::is_unsigned_v<T>) return static_cast<uint64_t>(v);
  else return static_cast<int64_t>(v);
}

// A cheap reference-counted handle to an interned node. Building the same (op, dtype, src, arg) twice returns the
// same node, so == is pointer identity and common subexpressions are shared for free. A node is freed (and leaves
// the intern table) when its last handle goes away.
//
// Comparison operators (<, ne, eq) build CMPLT/CMPNE nodes; == and != compare node identity.
class UOp {
 public:
  UOp() noexcept = default;
  UOp(const UOp& o) noexcept;
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) noexcept;
  UOp& operator=(UOp&& o) noexcept;
  ~UOp();

  // The interning constructor.
  static UOp make(Ops op, DType dtype, std::vector<UOp> src = {}, Arg arg = {});
  static UOp const_(DType dtype, ConstValue v);  // v is cast into dtype's canonical form
  static UOp variable(std::string name, int64_t min, int64_t max, DType dtype = dtypes::int32,
                      tg::SourceLocation where = tg::SourceLocation::current());
  static UOp sink(std::vector<UOp> src) { return make(Ops::SINK, dtypes::void_, std::move(src)); }
  // A new handle to a node another handle keeps alive (tg::Dim holds its expression as a bare node).
  static UOp share(const UOpNode* n) noexcept;

  Ops op() const;
  DType dtype() const;
  const std::vector<UOp>& src() const;
  const UOp& src(size_t i) const;
  const Arg& arg() const;
  uint64_t hash() const;  // structural: the same graph hashes the same in every run
  const UOpNode* get() const { return n_; }
  explicit operator bool() const { return n_ != nullptr; }
  friend bool operator==(const UOp& a, const UOp& b) { return a.n_ == b.n_; }

  // ---- derived facts (cached on the node) ----
  bool is_const() const { return n_ && op() == Ops::CONST; }
  const ConstValue& const_value() const;  // only for CONST
  // Bounds on the value for bool and integer dtypes, computed over the graph without recursion. A dtype without
  // exact integer bounds (floats, uint64) reports the whole int64 range.
  int64_t vmin() const;
  int64_t vmax() const;
  std::vector<UOp> toposort() const;  // every node once, sources before users; iterative
  bool contains(const UOp& node) const;  // whether node is this one or below it
  // A 64-bit Bloom filter of the BUFFER nodes at or below this one (each sets the bit its hash picks), computed over
  // the graph without recursion and cached: a graph whose filter lacks a buffer's bit does not read it, and one
  // whose filter lacks any bit of a node's does not contain that node (tensor.cpp skips such graphs in its walks)
  uint64_t buffer_bloom() const;
  std::string render() const;         // C-like: "((idx1*10)+idx0)"
  // The shape of a tensor-level node (BUFFER, CONST, IOTA, movement, REDUCE_AXIS, ALU over those ...), inferred
  // from the sources and args and cached. The Tensor layer validates shapes before it builds a node. shape() is
  // for concrete shapes (InternalError for a symbolic one: nothing bakes a bound value by accident); sym_shape()
  // has the exact sizes, max_shape() each size's largest value (a symbolic node's buffer is that big).
  const std::vector<int64_t>& shape() const;
  std::vector<Dim> sym_shape() const;
  const std::vector<int64_t>& max_shape() const;
  bool symbolic_shape() const;

  // ---- building (tinygrad's UOp methods) ----
  UOp alu(Ops op, const std::vector<UOp>& others = {}) const;  // result dtype: bool for comparisons, else ours
  UOp const_like(ConstValue v) const { return const_(dtype().scalar(), v); }
  UOp cast(DType dt) const;
  UOp bitcast(DType dt) const;
  UOp with_src(std::vector<UOp> src) const;  // same op, dtype and arg over new sources
  UOp lt(const UOp& o) const { return alu(Ops::CMPLT, {o}); }
  UOp ne(const UOp& o) const { return alu(Ops::CMPNE, {o}); }
  template <Scalar T> UOp ne(T v) const { return ne(const_like(to_const(v))); }
  template <Scalar T> UOp lt(T v) const { return lt(const_like(to_const(v))); }
  template <Scalar T> UOp maximum(T v) const { return maximum(const_like(to_const(v))); }
  UOp eq(const UOp& o) const { return ne(o).logical_not(); }
  UOp logical_not() const { return ne(const_like(true)); }
  UOp maximum(const UOp& o) const { return alu(Ops::MAX, {o}); }
  UOp minimum(const UOp& o) const;
  UOp where(const UOp& t, const UOp& f) const { return alu(Ops::WHERE, {t, f}); }
  UOp idiv(const UOp& o) const { return alu(Ops::IDIV, {o}); }
  UOp mod(const UOp& o) const { return alu(Ops::MOD, {o}); }
  UOp substitute(const std::vector<std::pair<UOp, UOp>>& replacements) const;  // replace nodes everywhere below

 private:
  explicit UOp(UOpNode* n) noexcept : n_(n) {}  // adopts one reference
  UOpNode* release() noexcept { UOpNode* n = n_; n_ = nullptr; return n; }
  friend void destroy_node(UOpNode* n);
  UOpNode* n_ = nullptr;
};

// Each root with the replacements made everywhere below it, in one walk over all the roots' graphs: a node that
// several roots share is rewritten once (realize() updates every live tensor's graph this way).
std::vector<UOp> substitute(const std::vector<UOp>& roots, const std::vector<std::pair<UOp, UOp>>& replacements);

std::ostream& operator<<(std::ostream& os, const UOp& u);  // the numbered graph listing, each node once
std::string print_graph(const UOp& u);
// Whether the float32 MUL mul is exact for every value it can take (its operands are casts from bounded integers or
// narrower floats, constants, or products of those, and the product keeps to 24 significant bits and the normal
// range): then mul + c rounds once whether or not it is one FMA (exact_product.cpp)
bool exact_float32_product(const UOp& mul);

// The device name of a tensor-level node: the DEVICE source of its BUFFER, CONST or IOTA leaves, where a COPY or
// MSELECT puts it, or a MULTI's joined names ("CPU,CPU:1").
const std::string& device_of(const UOp& u);

// How many nodes are alive (interned) now: for tests of memory behaviour.
size_t live_uop_count();

UOp operator+(const UOp& a, const UOp& b);
UOp operator*(const UOp& a, const UOp& b);
UOp operator-(const UOp& a, const UOp& b);
UOp operator-(const UOp& a);
UOp operator/(const UOp& a, const UOp& b);  // IDIV (truncating) for ints, a*(1/b) for floats
UOp operator%(const UOp& a, const UOp& b);
UOp operator<(const UOp& a, const UOp& b);
UOp operator&(const UOp& a, const UOp& b);
UOp operator|(const UOp& a, const UOp& b);
UOp operator^(const UOp& a, const UOp& b);
UOp operator<<(const UOp& a, const UOp& b);
UOp operator>>(const UOp& a, const UOp& b);
#define TG_UOP_SCALAR_OP(sym)                                                                      \
  template <Scalar T> UOp operator sym(const UOp& a, T b) { return a sym a.const_like(to_const(b)); } \
  template <Scalar T> UOp operator sym(T a, const UOp& b) { return b.const_like(to_const(a)) sym b; }
TG_UOP_SCALAR_OP(+)
TG_UOP_SCALAR_OP(*)
TG_UOP_SCALAR_OP(-)
TG_UOP_SCALAR_OP(/)
TG_UOP_SCALAR_OP(%)
TG_UOP_SCALAR_OP(<)
TG_UOP_SCALAR_OP(&)
TG_UOP_SCALAR_OP(|)
TG_UOP_SCALAR_OP(^)
#undef TG_UOP_SCALAR_OP
template <Scalar T> UOp operator<<(const UOp& a, T b) { return a << a.const_like(to_const(b)); }
template <Scalar T> UOp operator>>(const UOp& a, T b) { return a >> a.const_like(to_const(b)); }

// The node itself. Everything but the caches is immutable after construction.
struct UOpNode {
  Ops op;
  DType dtype;
  std::vector<UOp> src;
  Arg arg;
  uint64_t hash;
  mutable std::atomic<uint32_t> refcount{1};
  // vmin/vmax cache: state 0 = not computed, 1 = computed
  mutable std::atomic<uint8_t> range_state{0};
  mutable std::atomic<int64_t> range_min{0}, range_max{0};
  // buffer_bloom cache: state 0 = not computed, 1 = computed
  mutable std::atomic<uint8_t> bloom_state{0};
  mutable std::atomic<uint64_t> bloom{0};
  // tensor-level shape, once computed: each size's largest value, and the exact sizes when one is symbolic
  struct Shape {
    std::vector<int64_t> max;
    std::vector<Dim> dims;  // empty when concrete
  };
  mutable std::atomic<const Shape*> shape_cache{nullptr};
};

// A map from nodes to numbers (their place in a walk), open addressing keyed by the node's own hash: one
// allocation per walk, where an unordered_map allocated per node and small walks were most of a small realize.
class NodeIndex {
 public:
  const uint32_t* find(const UOpNode* n) const {
    for (size_t i = n->hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].node == n) return &slots_[i].value;
      if (!slots_[i].node) return nullptr;
    }
  }
  uint32_t at(const UOpNode* n) const { return *find(n); }  // n must be in the map
  void insert(const UOpNode* n, uint32_t value) {  // n must not be in the map yet
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = n->hash & mask_;
    while (slots_[i].node) i = (i + 1) & mask_;
    slots_[i] = {n, value};
    size_++;
  }
  size_t size() const { return size_; }

 private:
  struct Slot {
    const UOpNode* node = nullptr;
    uint32_t value = 0;
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.node) insert(s.node, s.value);
  }
  std::vector<Slot> slots_ = std::vector<Slot>(32);
  size_t mask_ = 31, size_ = 0;
};

inline Ops UOp::op() const { return n_->op; }
inline DType UOp::dtype() const { return n_->dtype; }
inline const std::vector<UOp>& UOp::src() const { return n_->src; }
inline const UOp& UOp::src(size_t i) const { return n_->src[i]; }
inline const Arg& UOp::arg() const { return n_->arg; }
inline uint64_t UOp::hash() const { return n_ ? n_->hash : 0; }
inline UOp::UOp(const UOp& o) noexcept : n_(o.n_) {
  if (n_) n_->refcount.fetch_add(1, std::memory_order_relaxed);
}
inline UOp& UOp::operator=(const UOp& o) noexcept {
  UOp tmp(o);
  std::swap(n_, tmp.n_);
  return *this;
}
inline UOp& UOp::operator=(UOp&& o) noexcept {
  std::swap(n_, o.n_);
  return *this;
}
void destroy_node(UOpNode* n);  // n's refcount just reached zero
inline UOp UOp::share(const UOpNode* n) noexcept {
  if (n) n->refcount.fetch_add(1, std::memory_order_relaxed);
  return UOp(const_cast<UOpNode*>(n));
}
inline UOp::~UOp() {
  // the common case, another handle remains, stays inline; the last one frees the node out of line
  if (n_ && n_->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(n_);
}

struct UOpHash {
  size_t operator()(const UOp& u) const { return std::hash<const void*>()(u.get()); }
};

}  // namespace tg::uop
