// Arg: the static argument of a UOp (a constant's value, a variable's range, a shape, ...).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tg/dim.h"
#include "tg/dtype.h"
#include "uop/ops.h"

namespace tg::uop {

// Combines a value into a running hash (a splitmix64 finalizer): cheap, well spread, the same in every run.
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 27, x *= 0x94d049bb133111ebull, x ^= x >> 31;
  return x;
}

// DEFINE_VAR's argument: a named integer in [min, max] (both inclusive).
struct VarArg {
  std::string name;
  int64_t min, max;
  bool operator==(const VarArg&) const = default;
};

// Extension point for arguments that later layers define (ShapeTracker, kernel info): hashable and printable.
struct ArgExt {
  virtual ~ArgExt() = default;
  virtual uint64_t hash() const = 0;
  virtual bool equals(const ArgExt& other) const = 0;
  virtual std::string repr() const = 0;
};

class Arg {
 public:
  // std::vector<Dim>: a movement op's sizes when one is symbolic (all-concrete sizes are std::vector<int64_t>)
  using Value = std::variant<std::monostate, ConstValue, int64_t, std::string, std::vector<int64_t>, VarArg, Ops,
                             std::shared_ptr<const ArgExt>, std::vector<Dim>>;
  Arg() = default;
  Arg(ConstValue v) : v_(v) {}
  Arg(int64_t i) : v_(i) {}
  Arg(std::string s) : v_(std::move(s)) {}
  Arg(const char* s) : v_(std::string(s)) {}
  Arg(std::vector<int64_t> xs) : v_(std::move(xs)) {}
  Arg(std::vector<Dim> xs);  // std::vector<int64_t> when every size is concrete
  Arg(VarArg v) : v_(std::move(v)) {}
  Arg(Ops op) : v_(op) {}
  Arg(std::shared_ptr<const ArgExt> e) : v_(std::move(e)) {}

  const Value& value() const { return v_; }
  bool empty() const { return std::holds_alternative<std::monostate>(v_); }
  template <class T> bool is() const { return std::holds_alternative<T>(v_); }
  template <class T> const T& get() const { return std::get<T>(v_); }
  template <class T> const T* get_if() const { return std::get_if<T>(&v_); }

  uint64_t hash() const;
  // exact equality: doubles compare by bit pattern, so 0.0 and -0.0 stay distinct and nan equals itself
  bool operator==(const Arg& o) const;
  std::string repr() const;

 private:
  Value v_;
};

}  // namespace tg::uop
