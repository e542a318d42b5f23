// A float64 reference for matmuls of 16-bit (or any) values: the exact sums of the inputs' products, and of their
// magnitudes (the scale of a float32 accumulation's error). Shared by the tensor-core and 16-bit product tests.
#pragma once
#include <cstdint>
#include <vector>

namespace tg::reference {

struct MatmulSums {
  std::vector<double> value, magnitude;
};
// out[b][i][j] = sum_k a[b][i][k] * w[b][k][j], row-major (batch, m, k) and (batch, k, n) inputs
MatmulSums matmul_sums(const std::vector<double>& a, const std::vector<double>& w, int64_t batch, int64_t m, int64_t k, int64_t n);

}  // namespace tg::reference
