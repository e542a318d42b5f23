// Cost of the ShapeTracker operations the scheduler and codegen run per kernel: movement ops, simplify() and
// to_indexed() on typical stacks (a transpose, a conv-style pad + window, a flatten that needs two Views).
#include <cstdio>
#include <functional>

#include "bench.h"
#include "shape/shapetracker.h"

namespace tg::bench {

using shape::ShapeTracker;

namespace {

double time_per_call_us(const std::function<void()>& f, int64_t reps) {
  std::vector<double> runs;
  for (int r = 0; r < 5; r++) {
    double t0 = now_s();
    for (int64_t i = 0; i < reps; i++) f();
    runs.push_back((now_s() - t0) / static_cast<double>(reps) * 1e6);
  }
  return median(runs);
}

}  // namespace

int shapetracker(const Args& args) {
  int64_t reps = args.get("--reps", 2000);
  const ShapeTracker base = ShapeTracker::from_shape({64, 32, 28, 28});
  struct Case {
    const char* name;
    std::function<ShapeTracker()> build;
  };
  const Case cases[] = {
      {"transpose", [&] { return base.permute({0, 2, 3, 1}).reshape({64, 784, 32}); }},
      {"pad_window", [&] { return base.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).shrink({{0, 64}, {0, 32}, {1, 29}, {0, 28}}); }},
      {"flatten_transposed", [&] { return base.permute({1, 0, 2, 3}).reshape({32, 64 * 784}).reshape({32 * 64, 784}).permute({1, 0}); }},
  };
  for (const Case& c : cases) {
    ShapeTracker st = c.build();
    double build = time_per_call_us([&] { c.build(); }, reps);
    double simplify = time_per_call_us([&] { st.simplify(); }, reps / 10 + 1);
    double indexed = time_per_call_us([&] { st.to_indexed(); }, reps / 10 + 1);
    std::printf("{\"name\": \"shapetracker_%s\", \"views\": %zu, \"movement_us\": %.2f, \"simplify_us\": %.2f, "
                "\"to_indexed_us\": %.2f}\n",
                c.name, st.views().size(), build, simplify, indexed);
  }
  return 0;
}

}  // namespace tg::bench
