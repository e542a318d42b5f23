// Standalone ShapeTracker fuzzer for long runs: fuzz_shapetracker [chains=20000] [seed=1] [max_ops=8]
// Random movement-op chains against a naive reference; prints the first chain whose (index, valid) is wrong.
#include <cstdlib>
#include <iostream>

#include "support/shapetracker_check.h"

int main(int argc, char** argv) {
  int chains = argc > 1 ? std::atoi(argv[1]) : 20000;
  uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  int max_ops = argc > 3 ? std::atoi(argv[3]) : 8;
  std::string err = tg::testing::fuzz_movement_chains(seed, chains, max_ops);
  if (!err.empty()) {
    std::cout << "seed " << seed << ", " << err << "\n";
    return 1;
  }
  std::cout << chains << " chains passed (seed " << seed << ")\n";
  return 0;
}
