// Models from GGUF files (llama.cpp's format): the architecture's metadata as a Config, and the tensors under the
// Hugging Face names the modules use. llama.cpp's converter changes two things. LLaMA's q and k projections have the
// rows of each head interleaved for its rotary convention (pairs (2i, 2i+1) where HF rotates halves): they stay so,
// and the model rotates pairs (Config::rope_interleaved): undoing the permutation in the kernels that read them would
// make those kernels read every other row. GPT-2's projections are stored transposed, undone lazily (a movement op,
// fused into the kernels that read them). Quantized weights stay quantized (tg::gguf_load).
#include <map>

#include "models/models.h"

namespace tg::llm {

namespace {

struct Metadata {
  const GGUFFile& f;
  std::string path, arch;
  Loc where;
  const GGUFValue* find(const std::string& key) const {
    auto it = f.metadata.find(key);
    return it == f.metadata.end() ? nullptr : &it->second;
  }
  int64_t integer(const std::string& key, std::optional<int64_t> fallback = std::nullopt) const {
    const GGUFValue* v = find(arch + "." + key);
    if (!v && fallback) return *fallback;
    if (!v) throw ArgumentError("llm::load", path + ": no metadata '" + arch + "." + key + "'", where);
    int64_t n = v->as_int(path + ": metadata '" + arch + "." + key + "'", where);
    if (n < 1) throw ArgumentError("llm::load", path + ": metadata '" + arch + "." + key + "' must be positive", where);
    return n;
  }
  double number(const std::string& key, double fallback) const {
    const GGUFValue* v = find(arch + "." + key);
    return v ? v->as_float(path + ": metadata '" + arch + "." + key + "'", where) : fallback;
  }
};

}  // namespace

std::unique_ptr<Transformer> from_gguf(const GGUFFile& file, const std::string& path, Loc where) {
  const GGUFValue* arch = file.metadata.count("general.architecture") ? &file.metadata.at("general.architecture") : nullptr;
  Metadata m{file, path, arch ? arch->as_string(path + ": general.architecture", where) : "", where};
  auto tensor = [&](const std::string& name) -> const Tensor& {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) throw ArgumentError("llm::load", path + ": no tensor '" + name + "'", where);
    return it->second;
  };
  Config c;
  if (m.arch == "llama" || m.arch == "qwen2" || m.arch == "qwen3" || m.arch == "qwen3moe" || m.arch == "olmoe") {
    c.arch = "llama", c.n_heads = m.integer("attention.head_count"), c.n_kv_heads = m.integer("attention.head_count_kv", c.n_heads);
    c.norm_eps = m.number("attention.layer_norm_rms_epsilon", 1e-5), c.rope_theta = m.number("rope.freq_base", 10000);
    c.tie_embeddings = !file.tensors.count("output.weight");
    if (m.arch == "qwen3moe") {
      c.n_experts = m.integer("expert_count"), c.n_experts_used = m.integer("expert_used_count");
      c.expert_hidden_dim = m.integer("expert_feed_forward_length");
      const GGUFValue* norm = m.find("qwen3moe.expert_weights_norm");
      c.experts_renormalize = !norm || norm->b;  // Qwen3-MoE's norm_topk_prob, true in its releases
      c.hidden_dim = m.integer("feed_forward_length", c.expert_hidden_dim);
    } else if (const GGUFValue* experts = m.find(m.arch + ".expert_count")) {  // Mixtral (LLaMA with experts), OLMoE
      c.n_experts = experts->as_int(path + ": " + m.arch + ".expert_count", where), c.n_experts_used = m.integer("expert_used_count");
      c.hidden_dim = c.expert_hidden_dim = m.integer("feed_forward_length"), c.experts_renormalize = m.arch == "llama";
    } else {
      c.hidden_dim = m.integer("feed_forward_length");
    }
    // llama.cpp's converter permutes LLaMA's q and k rows into pairs; Qwen's keep Hugging Face's halves (NEOX)
    c.rope_interleaved = m.arch == "llama";
    c.qk_norm_whole = m.arch == "olmoe";
    c.attention_bias = file.tensors.count("blk.0.attn_q.bias") > 0, c.qk_norm = file.tensors.count("blk.0.attn_q_norm.weight") > 0;
    if (const GGUFValue* scaling = m.find(m.arch + ".rope.scaling.type"); scaling && scaling->as_string("rope.scaling.type", where) != "none")
      throw ArgumentError("llm::load", path + ": rope scaling '" + scaling->s + "' is not supported", where);
  } else if (m.arch == "gpt2") {
    c.arch = "gpt2", c.n_heads = c.n_kv_heads = m.integer("attention.head_count"), c.tie_embeddings = true;
    c.norm_eps = m.number("attention.layer_norm_epsilon", 1e-5), c.hidden_dim = m.integer("feed_forward_length");
  } else {
    throw ArgumentError("llm::load", path + ": general.architecture '" + m.arch + "' is not supported (llama, qwen2, qwen3, qwen3moe, olmoe, gpt2)", where);
  }
  c.dim = m.integer("embedding_length"), c.n_layers = m.integer("block_count"), c.max_context = m.integer("context_length");
  c.vocab_size = tensor("token_embd.weight").shape()[0];
  if (c.dim % c.n_heads || c.n_heads % c.n_kv_heads)
    throw ArgumentError("llm::load", path + ": " + std::to_string(c.n_heads) + " heads do not divide the embedding length " +
                                         std::to_string(c.dim) + " or the key/value heads", where);
  c.head_dim = m.integer("attention.key_length", c.dim / c.n_heads);
  if (const GGUFValue* eos = m.find("tokenizer.ggml.eos_token_id"))
    c.eos_token_ids.push_back(static_cast<int32_t>(eos->as_int(path + ": tokenizer.ggml.eos_token_id", where)));
  if (file.tensors.count("rope_freqs.weight"))  // LLaMA 3.1's scaled frequencies, as divisors
    c.rope_freq_factors = tensor("rope_freqs.weight").cast(dtypes::float32).to_vector<float>();
  std::unique_ptr<Transformer> model = new_model(c, tensor("token_embd.weight").device(), Init::Empty, where);

  // the checkpoint names: HF's from llama.cpp's
  StateDict found;
  auto put = [&](const std::string& to, const std::string& from, auto transform) {
    if (file.tensors.count(from)) found[to] = transform(file.tensors.at(from));
  };
  auto same = [](const Tensor& t) { return t; };
  auto transposed = [](const Tensor& t) { return t.T(); };
  if (c.arch == "llama") {
    put("model.embed_tokens.weight", "token_embd.weight", same);
    put("model.norm.weight", "output_norm.weight", same);
    put("lm_head.weight", "output.weight", same);
    for (int64_t i = 0; i < c.n_layers; i++) {
      std::string b = "blk." + std::to_string(i) + ".", h = "model.layers." + std::to_string(i) + ".";
      put(h + "input_layernorm.weight", b + "attn_norm.weight", same);
      put(h + "self_attn.q_proj.weight", b + "attn_q.weight", same);
      put(h + "self_attn.k_proj.weight", b + "attn_k.weight", same);
      put(h + "self_attn.v_proj.weight", b + "attn_v.weight", same);
      put(h + "self_attn.o_proj.weight", b + "attn_output.weight", same);
      put(h + "self_attn.q_proj.bias", b + "attn_q.bias", same), put(h + "self_attn.k_proj.bias", b + "attn_k.bias", same);
      put(h + "self_attn.v_proj.bias", b + "attn_v.bias", same);
      put(h + "self_attn.q_norm.weight", b + "attn_q_norm.weight", same), put(h + "self_attn.k_norm.weight", b + "attn_k_norm.weight", same);
      put(h + "post_attention_layernorm.weight", b + "ffn_norm.weight", same);
      put(h + "mlp.gate.weight", b + "ffn_gate_inp.weight", same);
      put(h + "mlp.experts.gate_proj.weight", b + "ffn_gate_exps.weight", same);
      put(h + "mlp.experts.up_proj.weight", b + "ffn_up_exps.weight", same);
      put(h + "mlp.experts.down_proj.weight", b + "ffn_down_exps.weight", same);
      put(h + "mlp.gate_proj.weight", b + "ffn_gate.weight", same);
      put(h + "mlp.up_proj.weight", b + "ffn_up.weight", same);
      put(h + "mlp.down_proj.weight", b + "ffn_down.weight", same);
    }
  } else {
    put("transformer.wte.weight", "token_embd.weight", same);
    put("transformer.wpe.weight", "position_embd.weight", same);
    put("transformer.ln_f.weight", "output_norm.weight", same);
    put("transformer.ln_f.bias", "output_norm.bias", same);
    for (int64_t i = 0; i < c.n_layers; i++) {
      std::string b = "blk." + std::to_string(i) + ".", h = "transformer.h." + std::to_string(i) + ".";
      for (auto [to, from] : std::map<std::string, std::string>{{"ln_1", "attn_norm"}, {"ln_2", "ffn_norm"}})
        put(h + to + ".weight", b + from + ".weight", same), put(h + to + ".bias", b + from + ".bias", same);
      for (auto [to, from] : std::map<std::string, std::string>{
               {"attn.c_attn", "attn_qkv"}, {"attn.c_proj", "attn_output"}, {"mlp.c_fc", "ffn_up"}, {"mlp.c_proj", "ffn_down"}})
        put(h + to + ".weight", b + from + ".weight", transposed), put(h + to + ".bias", b + from + ".bias", same);
    }
  }
  assign_weights(*model, found, path, where);
  return model;  // the bytes are copied from the mapping when the first forward reads them
}

}  // namespace tg::llm
