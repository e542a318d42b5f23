// Test support: evaluate integer UOp graphs at a point, and generate random expressions for fuzzing.
#pragma once
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "uop/exec_alu.h"
#include "uop/uop.h"

namespace tg::testing {

using Env = std::map<std::string, int64_t>;

// The value of every node, by the dtype's own semantics (exec_alu); nullopt when some node is undefined
// (division by zero) or a variable is missing. `wide` evaluates int32 nodes as int64 instead, to detect overflow.
inline std::optional<std::map<const uop::UOpNode*, ConstValue>> eval_all(const uop::UOp& root, const Env& env,
                                                                         bool wide = false) {
  using namespace uop;
  std::map<const UOpNode*, ConstValue> val;
  auto widen = [&](DType dt) { return wide && dt == dtypes::int32 ? dtypes::int64 : dt; };
  for (const UOp& u : root.toposort()) {
    if (u.op() == Ops::CONST) {
      val[u.get()] = cast_const(u.const_value(), widen(u.dtype()));
    } else if (u.op() == Ops::DEFINE_VAR) {
      auto it = env.find(u.arg().get<VarArg>().name);
      if (it == env.end()) return std::nullopt;
      val[u.get()] = cast_const(ConstValue{it->second}, widen(u.dtype()));
    } else {
      std::vector<ConstValue> args;
      for (const UOp& s : u.src()) args.push_back(val.at(s.get()));
      DType in = u.op() == Ops::WHERE ? u.src(1).dtype() : u.src(0).dtype();
      auto r = exec_alu(u.op(), widen(u.dtype()), widen(in), args);
      if (!r) return std::nullopt;
      val[u.get()] = *r;
    }
  }
  return val;
}

inline std::optional<int64_t> eval(const uop::UOp& root, const Env& env) {
  auto v = eval_all(root, env);
  if (!v) return std::nullopt;
  return const_to_int(v->at(root.get()));
}

// Random integer expressions over up to 4 variables whose ranges include negatives.
struct ExprGen {
  std::mt19937_64 rng;
  std::vector<uop::UOp> vars;
  explicit ExprGen(uint64_t seed) : rng(seed) {}

  int64_t rand_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  void new_vars() {
    vars.clear();
    int n = static_cast<int>(rand_int(1, 4));
    for (int i = 0; i < n; i++) {
      int64_t lo = rand_int(-12, 8), hi = lo + rand_int(0, 24);
      vars.push_back(uop::UOp::variable(std::string(1, static_cast<char>('a' + i)), lo, hi));
    }
  }

  uop::UOp nonzero_const() {
    int64_t c = rand_int(-9, 12);
    return uop::UOp::const_(dtypes::int32, c == 0 ? 7 : c);
  }

  uop::UOp leaf() {
    if (rand_int(0, 3) == 0) return uop::UOp::const_(dtypes::int32, rand_int(-20, 20));
    return vars[rand_int(0, vars.size() - 1)];
  }

  uop::UOp expr(int depth) {
    using namespace uop;
    if (depth <= 0) return leaf();
    switch (rand_int(0, 11)) {
      case 0: case 1: return expr(depth - 1) + expr(depth - 1);
      case 2: return expr(depth - 1) * UOp::const_(dtypes::int32, rand_int(-6, 12));
      case 3: return leaf() * leaf();
      case 4: case 5: return expr(depth - 1) / nonzero_const();
      case 6: case 7: return expr(depth - 1) % nonzero_const();
      case 8: return expr(depth - 1).maximum(expr(depth - 1));
      case 9: return expr(depth - 1) - expr(depth - 1);
      case 10: {
        UOp x = expr(depth - 1);
        UOp valid = x < UOp::const_(dtypes::int32, rand_int(-5, 15));
        if (rand_int(0, 1)) valid = valid & (expr(depth - 2) < UOp::const_(dtypes::int32, rand_int(-5, 15))).logical_not();
        return valid.where(expr(depth - 1), expr(depth - 1));
      }
      default: return (expr(depth - 1) / nonzero_const()) * nonzero_const() + expr(depth - 1) % nonzero_const();
    }
  }

  Env random_point() {
    Env env;
    for (const auto& v : vars) {
      const auto& a = v.arg().get<uop::VarArg>();
      env[a.name] = rand_int(a.min, a.max);
    }
    return env;
  }
};

// Checks one expression: simplified == original at random points where the original is defined and does not
// overflow int32, and vmin/vmax bound every node's value. Returns an empty string or what went wrong.
std::string check_expression(const uop::UOp& original, const uop::UOp& simplified, ExprGen& gen, int points);

}  // namespace tg::testing
