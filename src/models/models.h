// What the model files share: the op name in errors, shape text, weights computed in float32.
#pragma once
#include <string>

#include "tensor/helpers.h"
#include "tg/llm.h"
#include "tg/state.h"

namespace tg::llm {

inline constexpr const char* kOp = "Transformer";

using tensor::shape_str;  // "(2, 3)"
// A weight as float32 (a cast the consumer's kernel fuses when it is stored as float16 or bfloat16).
inline Tensor f32(const Tensor& w) { return w.dtype() == dtypes::float32 ? w : w.cast(dtypes::float32); }
// x @ w.T (+ b) for a PyTorch Linear's (out, in) weight
inline Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = Tensor()) {
  return x.linear(f32(w).T(), b.defined() ? std::optional<Tensor>(f32(b)) : std::nullopt);
}

// How a new model's weights start: drawn as make_model describes, or empty (a buffer of the shape, no kernel) for a
// loader that replaces every one. Drawn, each weight realized the device's random state, and each realize walked
// the graphs of every weight drawn before it: a large part of a GGUF model's load.
enum class Init { Random, Empty };

// make_model's weights: normal(0, 0.02) matrices, constant vectors (norm weights 1, biases 0), float32
inline Tensor init_normal(const Shape& shape, const std::string& device, Init init) {
  if (init == Init::Empty) return Tensor::empty(shape, dtypes::float32, device);
  return Tensor::normal(shape, 0, 0.02, dtypes::float32, device).contiguous();
}
inline Tensor init_full(int64_t n, double value, const std::string& device, Init init) {
  if (init == Init::Empty) return Tensor::empty({n}, dtypes::float32, device);
  return Tensor::full({n}, value, dtypes::float32, device).contiguous();
}

// The architectures (gpt2.cpp, llama.cpp), and the model of a config's architecture (loader.cpp; make_model's
// with Init::Random).
std::unique_ptr<Transformer> make_gpt2(const Config& config, const std::string& device, Init init);
std::unique_ptr<Transformer> make_llama(const Config& config, const std::string& device, Init init);
std::unique_ptr<Transformer> new_model(const Config& config, const std::string& device, Init init, Loc where);

// Replaces each of the model's tensors by the one of the same name in `found` (shapes checked, dtypes kept); an
// error names `source` and what is missing or misshapen.
void assign_weights(Transformer& model, const StateDict& found, const std::string& source, Loc where);
std::vector<Tensor> model_weights(Transformer& model);

}  // namespace tg::llm
