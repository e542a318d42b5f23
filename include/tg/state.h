// Model state (tinygrad's nn.state): named tensors of a module, loading them back, and safetensors files.
//
//   tg::safe_save(tg::get_state_dict(model), "model.safetensors");
//   tg::load_state_dict(model, tg::safe_load("model.safetensors"));
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

// The safetensors format: an 8-byte little-endian header size, a JSON header (dtype, shape, data_offsets per
// tensor, optional "__metadata__" of strings), then the raw little-endian data. Every tg dtype is written.
void safe_save(const StateDict& state, const std::string& path, const std::map<std::string, std::string>& metadata = {},
               SourceLocation where = SourceLocation::current());
// Maps the file; each tensor copies its bytes from the mapping when it is first realized. A missing, truncated or
// malformed file, an unknown dtype or data outside the file raise tg::Error naming the file and what is wrong.
StateDict safe_load(const std::string& path, SourceLocation where = SourceLocation::current());
// The "__metadata__" of a safetensors file.
std::map<std::string, std::string> safe_metadata(const std::string& path, SourceLocation where = SourceLocation::current());

}  // namespace tg
