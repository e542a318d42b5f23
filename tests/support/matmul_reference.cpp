#include "support/matmul_reference.h"

#include <cmath>

namespace tg::reference {

MatmulSums matmul_sums(const std::vector<double>& a, const std::vector<double>& w, int64_t batch, int64_t m, int64_t k, int64_t n) {
  MatmulSums r{std::vector<double>(static_cast<size_t>(batch * m * n)), std::vector<double>(static_cast<size_t>(batch * m * n))};
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0, mag = 0;
        for (int64_t q = 0; q < k; q++) {
          double p = a[static_cast<size_t>((b * m + i) * k + q)] * w[static_cast<size_t>((b * k + q) * n + j)];
          s += p, mag += std::abs(p);
        }
        r.value[static_cast<size_t>((b * m + i) * n + j)] = s;
        r.magnitude[static_cast<size_t>((b * m + i) * n + j)] = mag;
      }
  return r;
}

}  // namespace tg::reference
