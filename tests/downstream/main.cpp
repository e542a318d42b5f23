// A program of another project using an installed tinygrad.cpp (ctest package.install_and_use builds it with
// find_package and with pkg-config): a sum of squares computed lazily, checked against a plain loop, and the
// elementwise comparisons. It compiles without a warning under -Wall -Wextra with g++ and clang.
#include <cstdio>
#include <vector>

#include <tg/tg.h>

int main() {
  tg::Tensor a = tg::Tensor::arange(0, 12, 1).reshape({3, 4});
  std::vector<float> got = (a * a).sum(1).to_vector<float>();
  for (int i = 0; i < 3; i++) {
    float want = 0;
    for (int j = 0; j < 4; j++) want += static_cast<float>((4 * i + j) * (4 * i + j));
    if (got[static_cast<size_t>(i)] != want) {
      std::fprintf(stderr, "row %d: %g, want %g\n", i, got[static_cast<size_t>(i)], want);
      return 1;
    }
  }
  // comparisons of two tensors (elementwise): every entry of a equals itself and differs from a + 1
  if ((a == a).sum().item<int>() != 12 || (a != a + 1).sum().item<int>() != 12) {
    std::fprintf(stderr, "== or != between tensors gave a wrong count\n");
    return 1;
  }
  std::printf("downstream: %g %g %g\n", got[0], got[1], got[2]);
  return 0;
}
