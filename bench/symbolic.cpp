// Time to build and simplify a large graph of index expressions, like those of a big kernel.
#include <cstdio>

#include "bench.h"
#include "uop/symbolic.h"

namespace tg::bench {

using uop::UOp;

// Per step, an index expression as kernels make them: a flat index unraveled into 4 dims, re-flattened in another
// order, masked by a bound check. The steps are chained so the graph is one deep connected whole.
static UOp build_graph(int64_t nodes) {
  UOp acc = UOp::const_(dtypes::int32, 0);
  UOp gidx = UOp::variable("gidx", 0, 4095);
  // each step adds about 6-7 new nodes (the rest is shared through interning)
  for (int64_t i = 0; i < nodes / 6; i++) {
    UOp v = UOp::variable("v" + std::to_string(i % 64), 0, 15 + i % 7);
    UOp flat = gidx * 16 + v;
    UOp d0 = flat / 4096, d1 = (flat / 256) % 16, d2 = (flat / 16) % 16, d3 = flat % 16;
    UOp idx = d3 * 4096 + d2 * 256 + d1 * 16 + d0 + (i % 5);
    UOp valid = (v < 12) & (idx < 60000);
    acc = (acc + valid.where(idx % 1024, acc * 0 + 3)) % 4099;
  }
  return acc;
}

int symbolic(const Args& args) {
  int64_t nodes = args.get("--nodes", 100000), reps = args.get("--reps", 3);
  std::vector<double> build_t, simp_t;
  size_t n_in = 0, n_out = 0;
  for (int64_t r = 0; r < reps; r++) {
    double t0 = now_s();
    UOp g = build_graph(nodes);
    double t1 = now_s();
    UOp s = uop::simplify(g);
    double t2 = now_s();
    build_t.push_back(t1 - t0), simp_t.push_back(t2 - t1);
    n_in = g.toposort().size(), n_out = s.toposort().size();
  }
  std::printf("{\"name\": \"symbolic_simplify\", \"nodes_in\": %zu, \"nodes_out\": %zu, \"build_s\": %.4f, \"simplify_s\": %.4f}\n",
              n_in, n_out, median(build_t), median(simp_t));
  return 0;
}

}  // namespace tg::bench
