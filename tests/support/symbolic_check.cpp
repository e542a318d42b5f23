#include "support/symbolic_eval.h"

namespace tg::testing {

std::string check_expression(const uop::UOp& original, const uop::UOp& simplified, ExprGen& gen, int points) {
  const std::vector<uop::UOp> nodes = original.toposort();
  for (int p = 0; p < points; p++) {
    Env env = gen.random_point();
    auto vals = eval_all(original, env);
    auto wide = eval_all(original, env, true);
    if (!vals || !wide) continue;  // undefined at this point (a divisor that is zero there)
    bool overflow = false;
    for (const auto& [n, v] : *vals)
      overflow |= n->dtype.is_int() && const_to_int(v) != const_to_int(wide->at(n));
    if (overflow) continue;
    std::string where;
    for (const auto& [k, v] : env) where += k + "=" + std::to_string(v) + " ";
    for (const uop::UOp& u : nodes) {
      int64_t x = const_to_int(vals->at(u.get()));
      if (x < u.vmin() || x > u.vmax())
        return "vmin/vmax [" + std::to_string(u.vmin()) + ", " + std::to_string(u.vmax()) + "] miss " +
               std::to_string(x) + " of " + u.render() + " at " + where;
    }
    auto s = eval(simplified, env);
    int64_t want = const_to_int(vals->at(original.get()));
    if (!s || *s != want)
      return "at " + where + ": original " + original.render() + " = " + std::to_string(want) + ", simplified " +
             simplified.render() + " = " + (s ? std::to_string(*s) : std::string("undefined"));
    if (*s < simplified.vmin() || *s > simplified.vmax())
      return "simplified value outside its vmin/vmax at " + where;
  }
  return "";
}

}  // namespace tg::testing
