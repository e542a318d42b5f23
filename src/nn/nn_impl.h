// Helpers shared by the layers in src/nn/.
#pragma once
#include <optional>

#include "tg/tensor.h"

namespace tg::nn::detail {

// an optional parameter (a bias left out is an undefined Tensor) as the Tensor methods take it
inline std::optional<Tensor> if_defined(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace tg::nn::detail
