// tg_bench: benchmarks of tinygrad.cpp. Each prints one JSON line per measurement.
//   tg_bench symbolic [--nodes N]   build and simplify an N-node index expression graph
//   tg_bench shapetracker [--reps N] movement ops, simplify() and to_indexed() on typical View stacks
//   tg_bench overhead [--reps N]     framework time per launch of an already compiled kernel
//   tg_bench schedule [--ops N]      time to schedule an N-op graph
//   tg_bench compile [--kernels N]   compile time per fresh kernel
//   tg_bench first_result            process start to the first value read back (run twice: warm cache)
//   tg_bench mlp_backward [--layers N --width W --batch B]  peak memory of a deep MLP's forward + backward
#include <cstring>
#include <iostream>
#include <string>

#include "bench.h"

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help")) {
    std::cerr << "usage: tg_bench <workload> [options]\n  workloads: symbolic [--nodes N], shapetracker [--reps N], overhead [--reps N],\n"
                 "             schedule [--ops N], compile [--kernels N], first_result,\n"
                 "             mlp_backward [--layers N --width W --batch B]\n";
    return argc < 2 ? 1 : 0;
  }
  std::string what = argv[1];
  tg::bench::Args args(argc - 2, argv + 2);
  if (what == "symbolic") return tg::bench::symbolic(args);
  if (what == "shapetracker") return tg::bench::shapetracker(args);
  if (what == "overhead") return tg::bench::overhead(args);
  if (what == "schedule") return tg::bench::schedule_time(args);
  if (what == "compile") return tg::bench::compile_time(args);
  if (what == "first_result") return tg::bench::first_result(args);
  if (what == "mlp_backward") return tg::bench::mlp_backward(args);
  std::cerr << "tg_bench: unknown workload '" << what << "'\n";
  return 1;
}
