// tg_bench: benchmarks of tinygrad.cpp. Each prints one JSON line per measurement.
//   tg_bench symbolic [--nodes N]   build and simplify an N-node index expression graph
//   tg_bench shapetracker [--reps N] movement ops, simplify() and to_indexed() on typical View stacks
#include <cstring>
#include <iostream>
#include <string>

#include "bench.h"

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help")) {
    std::cerr << "usage: tg_bench <workload> [options]\n  workloads: symbolic [--nodes N], shapetracker [--reps N]\n";
    return argc < 2 ? 1 : 0;
  }
  std::string what = argv[1];
  tg::bench::Args args(argc - 2, argv + 2);
  if (what == "symbolic") return tg::bench::symbolic(args);
  if (what == "shapetracker") return tg::bench::shapetracker(args);
  std::cerr << "tg_bench: unknown workload '" << what << "'\n";
  return 1;
}
