// Datasets (tinygrad's nn.datasets).
#pragma once
#include <string>

#include "tg/tensor.h"

namespace tg::datasets {

struct MNIST {
  Tensor X_train, Y_train, X_test, Y_test;  // uint8: images (N, 1, 28, 28), labels (N,)
};

// Where Debian's dataset-fashion-mnist package puts Fashion-MNIST.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The four IDX files of MNIST or Fashion-MNIST in `dir` (train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each plain or with .gz). An empty dir means Fashion-MNIST from
// kFashionMnistDir. A missing or malformed file raises tg::ArgumentError naming it and what is wrong.
MNIST mnist(const std::string& dir = "", SourceLocation where = SourceLocation::current());

}  // namespace tg::datasets
