// Dim: a size that is an integer, or an integer expression over bound Variables (tinygrad's sint, with
// Variable("start_pos", 0, 1023).bind(7)). The first step of symbolic shapes (docs/plans/symbolic_shapes.md):
// the type, its algebra and its checks. A Dim never turns into a number by itself: there is no conversion to int64
// and no < or >, so every place that needs one says how (concrete(), value(), min()/max(), resolve_lt()).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tg/error.h"

namespace tg {

namespace uop {
struct UOpNode;
}

class Dim {
 public:
  Dim(int64_t v = 0) noexcept : c_(v) {}  // implicit: {2, 3} and int64 shapes stay what they were
  Dim(int v) noexcept : c_(v) {}
  Dim(const Dim& o) noexcept : c_(o.c_), n_(o.n_) {
    if (n_) retain();
  }
  Dim(Dim&& o) noexcept : c_(o.c_), n_(o.n_) { o.n_ = nullptr; }
  Dim& operator=(const Dim& o) noexcept;
  Dim& operator=(Dim&& o) noexcept;
  ~Dim() {
    if (n_) release();
  }

  bool is_symbolic() const { return n_ != nullptr; }
  // The integer; a symbolic size raises a ShapeError naming `op` ("reshape needs a concrete size, not start_pos+1").
  int64_t concrete(const char* op, SourceLocation where = SourceLocation::current()) const;
  // The value with every variable at its bound value (ArgumentError if one is unbound).
  int64_t value(SourceLocation where = SourceLocation::current()) const;
  // Bounds over the variables' ranges (the integer itself when concrete).
  int64_t min() const { return n_ ? bound(false) : c_; }
  int64_t max() const { return n_ ? bound(true) : c_; }
  std::string str() const;  // "12", "(start_pos+1)"
  uint64_t hash() const;    // agrees with ==

  // The same integer, or the same canonical expression (p+1 and 1+p are equal; bound to other values they differ).
  friend bool operator==(const Dim& a, const Dim& b) { return a.n_ || b.n_ ? a.n_ == b.n_ : a.c_ == b.c_; }
  friend Dim operator+(const Dim& a, const Dim& b) { return a.n_ || b.n_ ? symbolic('+', a, b) : Dim(a.c_ + b.c_); }
  friend Dim operator-(const Dim& a, const Dim& b) { return a.n_ || b.n_ ? symbolic('-', a, b) : Dim(a.c_ - b.c_); }
  friend Dim operator*(const Dim& a, const Dim& b) { return a.n_ || b.n_ ? symbolic('*', a, b) : Dim(a.c_ * b.c_); }
  Dim operator-() const { return Dim(0) - *this; }
  Dim& operator+=(const Dim& o) { return *this = *this + o; }
  Dim& operator*=(const Dim& o) { return *this = *this * o; }
  // Floor division and modulo by a positive integer (sizes are never negative).
  Dim idiv(int64_t d, SourceLocation where = SourceLocation::current()) const;
  Dim mod(int64_t d, SourceLocation where = SourceLocation::current()) const;

  const uop::UOpNode* node() const { return n_; }  // the expression (null when concrete): for the uop layer

 private:
  friend struct DimAccess;
  static Dim symbolic(char op, const Dim& a, const Dim& b);
  int64_t bound(bool upper) const;
  void retain() const noexcept;
  void release() noexcept;
  int64_t c_ = 0;
  uop::UOpNode* n_ = nullptr;  // one reference to an interned int64 expression over DEFINE_VAR/BIND leaves
};

// A named integer in [min, max] (both inclusive) that sizes can depend on; bind() gives a Dim with its value.
class Variable {
 public:
  // 0 <= min <= max <= 2^62; name a C identifier (it names the kernel argument)
  Variable(std::string name, int64_t min, int64_t max, SourceLocation where = SourceLocation::current());
  Dim bind(int64_t v, SourceLocation where = SourceLocation::current()) const;  // ArgumentError outside [min, max]
  Dim unbound() const;
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

 private:
  std::string name_;
  int64_t min_, max_;
};

// What a Dim is when it is exactly one Variable: the variable, with its value when bound (v.bind(n)), none when it is
// v.unbound(); as_variable gives nullopt for an integer or any other expression.
struct VariableUse {
  Variable var;
  std::optional<int64_t> value;
};
std::optional<VariableUse> as_variable(const Dim& d);

// Whether a < b for every value of the variables: true, false, or nullopt when that depends on them.
std::optional<bool> resolve_lt_symbolic(const Dim& a, const Dim& b);
inline std::optional<bool> resolve_lt(const Dim& a, const Dim& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.min() < b.min();
  return resolve_lt_symbolic(a, b);
}
// Whether a - b simplifies to 0 (equal for every value of the variables).
bool provably_equal(const Dim& a, const Dim& b);

std::ostream& operator<<(std::ostream& os, const Dim& d);

// The sizes a movement method takes (reshape, expand): integers as before ({2, -1}, a Shape) or Dims.
class DimList {
 public:
  DimList(std::initializer_list<Dim> sizes) : v_(sizes) {}
  DimList(const std::vector<int64_t>& sizes) : v_(sizes.begin(), sizes.end()) {}
  DimList(std::vector<Dim> sizes) : v_(std::move(sizes)) {}
  const std::vector<Dim>& dims() const { return v_; }
  bool is_symbolic() const;
  std::vector<int64_t> ints() const;  // each concrete(); for an all-concrete list

 private:
  std::vector<Dim> v_;
};

// The (begin, end) or (before, after) pairs a movement method takes (shrink): integers as before or Dims.
class DimRanges {
 public:
  DimRanges(std::initializer_list<std::pair<Dim, Dim>> ranges) : v_(ranges) {}
  DimRanges(const std::vector<std::pair<int64_t, int64_t>>& ranges) : v_(ranges.begin(), ranges.end()) {}
  DimRanges(std::vector<std::pair<Dim, Dim>> ranges) : v_(std::move(ranges)) {}
  const std::vector<std::pair<Dim, Dim>>& pairs() const { return v_; }
  bool is_symbolic() const;
  std::vector<std::pair<int64_t, int64_t>> ints() const;  // for an all-concrete list

 private:
  std::vector<std::pair<Dim, Dim>> v_;
};

}  // namespace tg
