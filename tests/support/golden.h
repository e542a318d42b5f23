// Reading tests/golden/*.txt (written by tools/gen_*_goldens.py from PyTorch) into tensors and expectations.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <tg/tensor.h>

namespace tg::testing {

struct GoldenTensor {
  DType dtype;
  Shape shape;
  std::vector<double> floats;   // float dtypes
  std::vector<int64_t> ints;    // integer and bool dtypes (uint64 as its bit pattern)
  Tensor make() const;          // a realized tensor holding exactly these values
};

struct GoldenCase {
  std::string op, variant;
  std::vector<double> args;
  std::vector<GoldenTensor> inputs;
  GoldenTensor output;
  // PyTorch's gradient of sum(output * w), w[k] = sin(1 + 0.7 k), for each float input index (api.txt only)
  std::map<size_t, GoldenTensor> grads;
};

// Every case in tests/golden/<file>, grouped by op. Throws if the file is missing or malformed.
const std::map<std::string, std::vector<GoldenCase>>& golden_cases(const std::string& file = "ops.txt");

DType dtype_from_name(const std::string& name);

// "" when `got` matches the golden (dtype, shape, values within tolerance), else what differs.
std::string compare(const Tensor& got, const GoldenTensor& want, double atol, double rtol);

}  // namespace tg::testing
