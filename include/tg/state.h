// Model state (tinygrad's nn.state): named tensors of a module, loading them back, safetensors and .npy files.
//
//   tg::StateDict sd = tg::get_state_dict(model);   // "l1.weight", ...
//   tg::safe_save(sd, "model.safetensors");
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

// Writes `dict` as a safetensors file (https://github.com/huggingface/safetensors: JSON header, little-endian
// row-major data; every dtype of tinygrad.cpp), realizing the tensors. The file is written beside `path` and
// renamed into place, so a failed save leaves no partial file under the name.
void safe_save(const StateDict& dict, const std::string& path, const std::map<std::string, std::string>& metadata = {},
               SourceLocation where = SourceLocation::current());
// Reads a safetensors file written by any tool. The file is mapped, not read: each tensor's bytes are copied to
// `device` (default: the default device) when the tensor is first used, and the mapping lives until then. A
// truncated or malformed file, a header that points outside the file, or a dtype we lack (the 8-bit floats) raise
// tg::ArgumentError naming the file and the tensor; nothing is read out of bounds.
StateDict safe_load(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());
// The "__metadata__" strings of a safetensors file.
std::map<std::string, std::string> safe_load_metadata(const std::string& path, SourceLocation where = SourceLocation::current());

// numpy's .npy files: one tensor, every dtype numpy and tinygrad.cpp share (all but bfloat16). load_npy reads
// versions 1.0 to 3.0, either byte order and Fortran order (a transposed view); the data is mapped and copied to
// `device` on first use. A malformed or truncated file, an object or structured array, or a dtype we lack raise
// tg::ArgumentError naming the file. save_npy writes version 1.0 (2.0 for a header over 64 KiB), little-endian,
// C order, atomically (as safe_save).
Tensor load_npy(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());
void save_npy(const Tensor& t, const std::string& path, SourceLocation where = SourceLocation::current());

}  // namespace tg
