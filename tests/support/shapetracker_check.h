// Test support for ShapeTracker: a naive reference that materializes movement ops on an array of element ids, a
// fast evaluator for index expressions, and a random movement-op chain generator.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "shape/shapetracker.h"

namespace tg::testing {

// the reference works on plain integers; ShapeTrackers get them as Dims (shape::dims)
using IntShape = std::vector<int64_t>;
using IntRanges = std::vector<std::pair<int64_t, int64_t>>;

// The reference: which buffer element each position holds, -1 for padding. Obviously correct: each op is a
// gather over the new positions.
struct RefArray {
  IntShape shape;
  std::vector<int64_t> ids;

  static RefArray arange(const IntShape& shape);
  RefArray reshape(const IntShape& s) const { return {s, ids}; }
  RefArray permute(const std::vector<int64_t>& order) const;
  RefArray expand(const IntShape& s) const;
  RefArray pad(const IntRanges& before_after) const;
  RefArray shrink(const IntRanges& ranges) const;
  RefArray stride(const std::vector<int64_t>& steps) const;
  RefArray flip(const std::vector<bool>& axes) const;

 private:
  // new array of shape s; old_pos maps a new position to the old one, or nullopt for padding
  RefArray gather(const IntShape& s,
                  const std::function<std::optional<std::vector<int64_t>>(const std::vector<int64_t>&)>& old_pos) const;
};

// Integer UOp graphs compiled once to a flat program, then evaluated at many points (C semantics, int64).
class IndexProgram {
 public:
  explicit IndexProgram(const uop::UOp& root);
  int64_t operator()(const std::vector<int64_t>& idx) const;  // values of the variables idx0, idx1, ...

 private:
  struct Step {
    uop::Ops op;
    int a, b, c;
    int64_t value;  // CONST value, or DEFINE_VAR's position in idx
  };
  std::vector<Step> steps_;
  mutable std::vector<int64_t> regs_;
};

// Random chains of movement ops applied to both a ShapeTracker and the reference.
struct MovementFuzzer {
  std::mt19937_64 rng;
  explicit MovementFuzzer(uint64_t seed) : rng(seed) {}
  int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  IntShape random_shape(int max_dims = 5, int64_t max_size = 6);
  // applies one random legal movement op to both; returns its description
  std::string step(shape::ShapeTracker& st, RefArray& ref);
};

// "" when every position's (index, valid) of st matches ref, else a description of the first mismatch.
std::string compare_with_reference(const shape::ShapeTracker& st, const RefArray& ref);

// Runs `chains` random chains of up to max_ops ops: each step is checked before and after simplify().
// Returns "" or the first failure with the chain that produced it.
std::string fuzz_movement_chains(uint64_t seed, int chains, int max_ops = 8);

}  // namespace tg::testing
