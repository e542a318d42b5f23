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
// Assigns each of the model's tensors the value of the same name (cast to nothing: dtypes must match), moved to the
// model tensor's device, or devices (split as a sharded one is: a checkpoint loads into a replicated model). Throws
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
// Reads a safetensors file written by any tool. The file is mapped, not read: on the CPU a tensor whose bytes are
// aligned for its dtype uses them in place (the mapping is private: writing to the tensor never changes the file);
// otherwise its bytes are copied to `device` (default: the default device) when the tensor is first used. The
// mapping lives as long as a tensor needs it. A
// truncated or malformed file, a header that points outside the file, or a dtype we lack (the 8-bit floats) raise
// tg::ArgumentError naming the file and the tensor; nothing is read out of bounds.
StateDict safe_load(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());
// Copies the bytes of loaded tensors that are still waiting for their first use (safe_load, gguf_load, torch_load,
// load_npy) into device memory now, so that the first computation reading them pays no copy (a benchmark timing
// a model's first call, a server before its first request). Other tensors (those that use a file's bytes in place
// among them) are left as they are.
void load_now(const std::vector<Tensor>& tensors);
// The "__metadata__" strings of a safetensors file.
std::map<std::string, std::string> safe_load_metadata(const std::string& path, SourceLocation where = SourceLocation::current());

// numpy's .npy files: one tensor, every dtype numpy and tinygrad.cpp share (all but bfloat16). load_npy reads
// versions 1.0 to 3.0, either byte order and Fortran order (a transposed view); the data is mapped and copied to
// `device` on first use. A malformed or truncated file, an object or structured array, or a dtype we lack raise
// tg::ArgumentError naming the file. save_npy writes version 1.0 (2.0 for a header over 64 KiB), little-endian,
// C order, atomically (as safe_save).
Tensor load_npy(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());
void save_npy(const Tensor& t, const std::string& path, SourceLocation where = SourceLocation::current());

// PyTorch checkpoints: torch.save's ZIP format (since PyTorch 1.6; Hugging Face's pytorch_model.bin) of a dict of
// tensors, nested dicts flattened as "outer.inner" and other values skipped. The pickle inside is read by a small
// machine that knows only what a state dict needs (OrderedDict, the tensor and parameter rebuilders, the storage
// types): any other callable it names (os.system, eval, a class of the program that saved it) is refused with a
// tg::ArgumentError before anything runs. Views and storages shared by several tensors come out as they were
// saved; the storages are mapped and copied to `device` on first use. Compressed, big-endian and pre-1.6 files
// are refused with an error saying so.
StateDict torch_load(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());

// GGUF, llama.cpp's format (versions 2 and 3): its metadata and its tensors. Each tensor is the file's bytes, mapped
// and copied to `device` on first use, shaped row-major (GGUF lists dimensions innermost first: they are reversed).
// F32, F16, BF16 and the integer types give tensors of those dtypes (viewed from the bytes); the quantized types
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K ... Q6_K) give float32 tensors computed lazily from the quantized bytes, which
// stay quantized on the device: the dequantization fuses into the kernels that read them. Malformed files (counts,
// lengths or offsets past the end, overlapping tensors, unknown types) raise tg::ArgumentError naming the file.
struct GGUFValue {
  enum class Kind { Int, UInt, Float, Bool, String, Array } kind = Kind::Int;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<GGUFValue> items;  // Array
  // the value as one of these, or a tg::ArgumentError naming `what`
  int64_t as_int(const std::string& what, SourceLocation where = SourceLocation::current()) const;
  double as_float(const std::string& what, SourceLocation where = SourceLocation::current()) const;
  const std::string& as_string(const std::string& what, SourceLocation where = SourceLocation::current()) const;
};
struct GGUFFile {
  std::map<std::string, GGUFValue> metadata;  // "general.architecture", "llama.block_count", ...
  StateDict tensors;                          // by the file's names ("blk.0.attn_q.weight")
  std::map<std::string, std::string> types;   // each tensor's ggml type ("Q4_K")
};
GGUFFile gguf_load(const std::string& path, const std::string& device = "", SourceLocation where = SourceLocation::current());

}  // namespace tg
