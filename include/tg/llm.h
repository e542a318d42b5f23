// Language models (tinygrad's extra/models/gpt2.py and llama.py): decoder-only transformers with a key/value cache,
// loaded from Hugging Face checkpoint folders, and greedy or sampled generation. Link tg::tg_models (libtg_models).
//
//   auto model = tg::llm::load("path/to/gpt2");            // config.json + model.safetensors (or its shards)
//   tg::llm::Generator gen(*model);                        // a KV cache of the model's context, TinyJit decode
//   std::vector<float> logits = gen.prefill({464, 3290});  // the prompt's tokens; logits of the next one
//   for (int i = 0; i < 32; i++) logits = gen.step(tg::llm::argmax(logits));
// or, picking each token on the device (only the token comes back):
//   tg::llm::Sampler sampler({.temperature = 0.8, .top_k = 40, .top_p = 0.95, .seed = 1});
//   int32_t next = gen.next({464, 3290}, sampler);
//   for (int i = 0; i < 32; i++) next = gen.next({next}, sampler);
//
// Architectures: "gpt2" (GPT2LMHeadModel's names, with or without the "transformer." prefix) and "llama"
// (LlamaForCausalLM's: LLaMA 2 and 3, Mistral-style grouped-query attention, tied or untied head). Weights keep the
// dtype they are stored in (float32, float16, bfloat16) and are computed in float32.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tg/jit.h"
#include "tg/nn.h"
#include "tg/state.h"
#include "tg/tensor.h"

namespace tg::llm {

using Loc = SourceLocation;

// A model's shape, from a Hugging Face config.json (GPT-2's n_embd/n_layer/... or LLaMA's hidden_size/...).
struct Config {
  std::string arch;  // "gpt2" or "llama" (LLaMA's block, also for Mistral, Qwen2 and Qwen3)
  int64_t vocab_size = 0, dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0, hidden_dim = 0;
  int64_t max_context = 0;  // GPT-2's n_positions, LLaMA's max_position_embeddings
  double norm_eps = 1e-5;
  bool tie_embeddings = false;  // the head reuses the token embedding
  // LLaMA's rotary embedding: base, and the "llama3" frequency scaling when rope_factor > 0
  double rope_theta = 10000, rope_factor = 0, rope_low_freq_factor = 1, rope_high_freq_factor = 4;
  int64_t rope_original_context = 8192;
  std::vector<float> rope_freq_factors;  // GGUF's rope_freqs: each inverse frequency divided by its factor
  // q and k rotated in pairs (2i, 2i+1) instead of halves (i, i + D/2): the layout of the q and k projections' rows
  // in GGUF files (llama.cpp's converter permutes each head's rows so); the attention scores are the same
  bool rope_interleaved = false;
  bool attention_bias = false;  // Qwen2's: biases on the q, k and v projections
  bool qk_norm = false;         // Qwen3's: an RMSNorm over each head of q and of k, before the rotation
  bool qk_norm_whole = false;   // OLMoE's: the RMSNorm over all of q's and all of k's projection instead
  // a mixture of experts in place of the feed-forward (Qwen3-MoE, Mixtral, OLMoE): a router picks n_experts_used of n_experts per
  // token, each a SwiGLU of expert_hidden_dim, mixed by the router's softmax (renormalized over the chosen ones)
  int64_t n_experts = 0, n_experts_used = 0, expert_hidden_dim = 0;
  bool experts_renormalize = true;
  std::vector<int32_t> eos_token_ids;  // config.json's eos_token_id (one or a list): generation stops at them
};
// Reads and checks a config.json: a missing or malformed field raises tg::ArgumentError naming the file and field.
Config read_config(const std::string& path, Loc where = Loc::current());

// A decoder-only transformer. Its state() names are the checkpoint's ("transformer.h.0.attn.c_attn.weight",
// "model.layers.0.self_attn.q_proj.weight", ...), so tg::load_state_dict and safe_load fill it.
class Transformer : public nn::Module {
 public:
  Transformer(Config config, std::string device) : config_(std::move(config)), device_(std::move(device)) {}
  const Config& config() const { return config_; }
  const std::string& device() const { return device_; }

  // A key/value cache for `batch` sequences of up to max_context tokens (at most the model's), zeroed; every
  // forward and decode call writes its positions into it. Called by the first forward if not before.
  void allocate_cache(int64_t batch, int64_t max_context = 0, Loc where = Loc::current());
  int64_t cache_context() const { return cache_context_; }

  // Logits (B, T, vocab) of tokens (B, T) at positions start_pos .. start_pos + T - 1, attending to the cached
  // positions before them; their keys and values go into the cache. last_only: logits of the last position only
  // (B, 1, vocab).
  Tensor forward(const Tensor& tokens, int64_t start_pos, bool last_only = false, Loc where = Loc::current());
  // Logits (B, T, vocab) of tokens (B, T) at positions 0 .. T-1 without the cache (causal attention within the
  // tokens): the training forward, differentiable.
  Tensor logits(const Tensor& tokens, Loc where = Loc::current());
  // One token per sequence (B, 1) at the position held by `pos` (a 0-d int32 tensor): logits (B, vocab). Its
  // shapes do not depend on the position, so every position runs the same kernels and TinyJit replays it; the
  // attention reads the whole cache with the positions after `pos` masked.
  Tensor decode(const Tensor& tokens, const Tensor& pos, Loc where = Loc::current());
  // The same with the position also as `start_pos`, a Variable bound to pos's value (symbolic shapes): the attention
  // reads only the cached positions 0 .. start_pos, and every position still runs the same kernels (each over the
  // rows so far), so TinyJit replays it with the Variable rebound.
  Tensor decode(const Tensor& tokens, const Tensor& pos, const Dim& start_pos, Loc where = Loc::current());
  // Several tokens per sequence (B, T) at positions pos .. pos + T - 1 the same way (pos also as start_pos, bound,
  // its range within the cache's context - T): logits (B, vocab) of the token at index `last` (a 0-d int32 tensor)
  // of each row. Every position runs the same kernels, so a prompt fed in chunks of one length (the last chunk
  // padded: what it writes past `last` is overwritten before it is read) compiles once for every prompt length.
  Tensor decode_chunk(const Tensor& tokens, const Tensor& pos, const Dim& start_pos, const Tensor& last,
                      Loc where = Loc::current());

 protected:
  // What an architecture provides: the token (and learned position) embedding, a block's attention inputs and its
  // output projection, its feed-forward part, and the final norm and head.
  struct Positions {  // the positions of a call: a range known when building (forward) or a tensor (decode)
    int64_t start = 0, count = 0;
    std::optional<Tensor> at;  // decode: the count positions, (count) int32
    bool cached = true;        // false: logits(), attention within the call's tokens only
    std::optional<Dim> at_symbolic = std::nullopt;  // decode: the first position as a bound Variable (reads only the rows so far)
    std::optional<Tensor> last = std::nullopt;      // decode_chunk: the index of the position whose logits are wanted
  };
  struct QKV { Tensor q, k, v; };  // (B, T, heads, head_dim) each; rotary embeddings already applied
  virtual Tensor embed(const Tensor& tokens, const Positions& p) const = 0;
  virtual QKV attention_inputs(size_t layer, const Tensor& h, const Positions& p) const = 0;
  virtual Tensor attention_output(size_t layer, const Tensor& a) const = 0;  // a: (B, T, dim)
  virtual Tensor feed_forward(size_t layer, const Tensor& h) const = 0;      // the block's residual branch
  virtual Tensor head(const Tensor& h) const = 0;                            // final norm and logits

  Config config_;
  std::string device_;

 private:
  Tensor run(const Tensor& tokens, const Positions& p, bool last_only, Loc where);
  Tensor decode_at(const Tensor& tokens, const Tensor& pos, const std::optional<Dim>& start_pos,
                   const std::optional<Tensor>& last, Loc where);  // the decodes
  Tensor attend(size_t layer, const QKV& x, const Positions& p, Loc where);
  Tensor attention(const Tensor& q, Tensor keys, Tensor values, const Tensor& mask) const;
  std::vector<Tensor> cache_k_, cache_v_;  // per layer (B, kv_heads, cache_context, head_dim), float32
  int64_t cache_batch_ = 0, cache_context_ = 0;
};

// A model of the config's architecture with random weights (normal, std 0.02, norms at 1), on `device`.
std::unique_ptr<Transformer> make_model(const Config& config, const std::string& device = "", Loc where = Loc::current());
// A Hugging Face folder (config.json and model.safetensors, or model.safetensors.index.json with its shards), or a
// GGUF file (path ending in .gguf: llama.cpp's "llama" and "gpt2" architectures, quantized weights kept quantized).
// Missing or misshapen tensors raise naming the file and tensor; tensors the model does not use (GPT-2's attention
// mask buffers, rotary caches) are ignored.
std::unique_ptr<Transformer> load(const std::string& folder, const std::string& device = "", Loc where = Loc::current());
// The model of a GGUF file already read (tg::gguf_load, on the device its tensors are on); `source` names it in
// errors. With Tokenizer::from_gguf on the same file's metadata, the file is parsed once for both.
std::unique_ptr<Transformer> from_gguf(const GGUFFile& file, const std::string& source, Loc where = Loc::current());

// Picking the next token from logits: greedy when temperature is 0; otherwise softmax(logits / temperature)
// restricted to the top_k most likely tokens (0: all; tokens tied with the k-th are kept, as Hugging Face's
// TopKLogitsWarper) and then to the most likely tokens whose probability reaches top_p (ties at the boundary kept),
// drawn with uniform numbers from a generator seeded with `seed`.
struct SamplingOptions {
  double temperature = 0;
  int64_t top_k = 0;
  double top_p = 1;
  uint64_t seed = 0;
};

// Sampling on the device the logits are on: a few small reduction kernels per token (the k-th largest logit and
// the top_p boundary found by a radix search on their bits, the draw by one on the cumulative probability), so only
// the chosen token leaves the device. The uniform draws come from the host generator, one per row and call.
class Sampler {
 public:
  explicit Sampler(SamplingOptions options = {});
  const SamplingOptions& options() const { return options_; }
  // The next token of each row of logits (..., vocab), int32 (...), lazy, on the logits' device.
  Tensor operator()(const Tensor& logits, Loc where = Loc::current());
  int32_t operator()(const std::vector<float>& logits, Loc where = Loc::current());  // host logits, one row
  // The two halves of operator(), for a step that TinyJit replays: draws() gives this call's uniform numbers in
  // [0, 1) (shape `rows`) to pass as an input; pick() is a pure function of the logits and those draws.
  Tensor draws(const Shape& rows, const std::string& device);
  Tensor pick(const Tensor& logits, const Tensor& u, Loc where = Loc::current()) const;

 private:
  SamplingOptions options_;
  std::mt19937_64 rng_;
};

// Generation for one sequence: prefill() runs the prompt through decode_chunk() in chunks of kLongPromptChunk tokens
// while that many are left (where the cache holds two of them), then of kPromptChunk, then of kShortPromptChunk,
// the last one padded (a 16-token prompt is two chunks of 8, not 32 rows for 16 tokens) (one set of kernels per chunk
// length for every prompt length and position: a long chunk reads each weight once per 128 tokens, and on a CPU
// its matmuls read their weights from panels), step() one token through decode() with the position
// as a bound Variable too; both under TinyJit (captured on the second call, replayed for every later position with
// no compile or schedule, each call reading the cache up to its position).
// A Generator owns the model's cache (it allocates it): use one Generator per model at a time; a new one replaces
// the cache, and the old one must not be stepped again.
class Generator {
 public:
  // max_context: the cache's length (0: the model's); jit false runs decode() without TinyJit.
  explicit Generator(Transformer& model, int64_t max_context = 0, bool jit = true);
  // Feeds tokens at the next positions; returns the logits (vocab) of the token after them.
  std::vector<float> prefill(const std::vector<int32_t>& tokens, Loc where = Loc::current());
  std::vector<float> step(int32_t token, Loc where = Loc::current());
  // Feeds tokens (the prompt, then each new token) and returns the next one, picked on the device by `sampler`:
  // the logits never leave it, and one token's step (decode and pick) is one TinyJit replay. A sampler with other
  // options than the last call's is captured anew.
  int32_t next(const std::vector<int32_t>& tokens, Sampler& sampler, Loc where = Loc::current());
  int64_t position() const { return pos_; }
  int64_t max_context() const { return model_.cache_context(); }
  // The tokens in the cache, position() of them; rewind(p) keeps the first p and the next tokens go after them
  // (a conversation's next turn reads only what is new).
  const std::vector<int32_t>& history() const { return history_; }
  void rewind(int64_t position, Loc where = Loc::current());

 private:
  static constexpr int64_t kShortPromptChunk = 8, kPromptChunk = 32, kLongPromptChunk = 128;
  struct StepInputs {  // a decode step's: the token (1, 1), its position as a 0-d tensor and as the bound Variable
    Tensor token, pos;
    Dim at;
  };
  void check_room(size_t n, const char* op, Loc where) const;                    // n more tokens fit the cache
  StepInputs step_inputs(int32_t token, const char* op, Loc where);             // checked, added to history_
  Tensor prompt(const std::vector<int32_t>& tokens, const char* op, Loc where);  // their last logits (1, vocab)
  // prompt chunks of one length: their first position as a Variable, and the TinyJit that runs them
  struct Chunks {
    int64_t length;
    Variable start;
    std::unique_ptr<TinyJit<Tensor>> jit;
  };
  Transformer& model_;
  int64_t pos_ = 0;
  std::vector<int32_t> history_;  // the tokens in the cache: a last chunk that would pass its end starts earlier
  std::unique_ptr<TinyJit<Tensor>> decode_, decode_pick_;
  SamplingOptions picked_with_;  // the options decode_pick_ was captured with
  Variable start_pos_;  // the position decode() reads the cache up to, rebound at every step
  // the longest first: kLongPromptChunk where the cache holds two, then kPromptChunk (or half a shorter context),
  // then kShortPromptChunk where that is shorter
  std::vector<Chunks> chunks_;
};

int32_t argmax(const std::vector<float>& logits);  // the first of the largest

}  // namespace tg::llm
