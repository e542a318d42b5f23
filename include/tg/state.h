// Model state (tinygrad's nn.state): named tensors of a module and loading them back. (safetensors files: next.)
//
//   tg::StateDict sd = tg::get_state_dict(model);   // "l1.weight", ...
//   tg::load_state_dict(model, sd);
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tg/nn.h"

namespace tg {

using StateDict = std::map<std::string, Tensor>;

// Every state tensor of the module by its dotted name ("l1.weight", "layers.0.bias", "bn.running_mean").
StateDict get_state_dict(nn::Module& model);
// The same tensors in the module's order (what an optimizer takes: those with requires_grad are trained).
std::vector<Tensor> get_parameters(nn::Module& model);
// Assigns each of the model's tensors the value of the same name (cast to nothing: dtypes must match). Throws
// tg::ArgumentError listing the names missing from `state` (strict: and the names the model lacks), and
// tg::ShapeError / tg::DTypeError naming each tensor whose shape or dtype differs. Nothing is assigned unless all
// checks pass. The values are realized.
void load_state_dict(nn::Module& model, const StateDict& state, bool strict = true,
                     SourceLocation where = SourceLocation::current());

}  // namespace tg
