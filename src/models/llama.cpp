// LLaMA (tinygrad's extra/models/llama.py; Meta's model.py in Hugging Face's layout): RMSNorm pre-norm blocks,
// rotary position embeddings (the rotate-half convention of HF checkpoints, with LLaMA 3's frequency scaling),
// grouped-query attention, a SwiGLU feed-forward, an untied or tied head. Projections are (out, in) weights.
// Qwen2 adds biases to the q, k and v projections; Qwen3 normalizes each head of q and k before the rotation;
// Qwen3-MoE, Mixtral and OLMoE replace the feed-forward by a mixture of experts (OLMoE normalizes all of q and
// of k, not each head).
#include <cmath>

#include "models/models.h"

namespace tg::llm {

namespace {

Tensor rms_norm(const Tensor& x, const Tensor& w, double eps) {
  return (x * (x.square().mean(-1, true) + eps).rsqrt() * f32(w)).contiguous();  // read by a matmul: once
}

// The rotary frequencies as Hugging Face computes them, in float32 (the angles of long contexts depend on it):
// inv_freq[i] = 1 / theta^(2i / head_dim), with LLaMA 3's scaling of the low frequencies when configured.
std::vector<float> inverse_frequencies(const Config& c) {
  std::vector<float> inv(static_cast<size_t>(c.head_dim / 2));
  for (size_t i = 0; i < inv.size(); i++) {
    float exponent = static_cast<float>(2 * i) / static_cast<float>(c.head_dim);
    inv[i] = 1.0f / std::pow(static_cast<float>(c.rope_theta), exponent);
  }
  if (!c.rope_freq_factors.empty()) {  // GGUF's rope_freqs tensor: LLaMA 3's scaling, precomputed
    if (c.rope_freq_factors.size() != inv.size())
      throw ArgumentError("llm::load", "rope_freqs has " + std::to_string(c.rope_freq_factors.size()) + " factors for " +
                                           std::to_string(inv.size()) + " frequencies");
    for (size_t i = 0; i < inv.size(); i++) inv[i] /= c.rope_freq_factors[i];
  } else if (c.rope_factor > 0) {  // "rope_type": "llama3"
    const double old_context = static_cast<double>(c.rope_original_context);
    const double low_wavelen = old_context / c.rope_low_freq_factor, high_wavelen = old_context / c.rope_high_freq_factor;
    for (float& f : inv) {
      double wavelen = 2 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = static_cast<float>(f / c.rope_factor);
      } else if (wavelen >= high_wavelen) {  // between: a blend of the scaled and the unscaled frequency
        double smooth = (old_context / wavelen - c.rope_low_freq_factor) / (c.rope_high_freq_factor - c.rope_low_freq_factor);
        f = static_cast<float>((1 - smooth) * f / c.rope_factor + smooth * f);
      }
    }
  }
  return inv;
}

class Llama : public Transformer {
 public:
  struct Layer : nn::Module {
    Tensor input_norm, q_proj, k_proj, v_proj, o_proj, post_norm, gate_proj, up_proj, down_proj;
    Tensor q_bias, k_bias, v_bias, q_norm, k_norm;  // Qwen2's biases, Qwen3's head norms (undefined: none)
    Tensor router, experts_gate, experts_up, experts_down;  // a mixture of experts: (E, d) and stacked (E, out, in)
    void state(const nn::StateVisitor& v) override {
      v("input_layernorm.weight", input_norm), v("self_attn.q_proj.weight", q_proj), v("self_attn.k_proj.weight", k_proj);
      v("self_attn.v_proj.weight", v_proj), v("self_attn.o_proj.weight", o_proj);
      v("post_attention_layernorm.weight", post_norm), v("mlp.gate_proj.weight", gate_proj);
      v("mlp.up_proj.weight", up_proj), v("mlp.down_proj.weight", down_proj);
      v("self_attn.q_proj.bias", q_bias), v("self_attn.k_proj.bias", k_bias), v("self_attn.v_proj.bias", v_bias);
      v("self_attn.q_norm.weight", q_norm), v("self_attn.k_norm.weight", k_norm);
      v("mlp.gate.weight", router), v("mlp.experts.gate_proj.weight", experts_gate);  // the loader stacks HF's experts
      v("mlp.experts.up_proj.weight", experts_up), v("mlp.experts.down_proj.weight", experts_down);
    }
  };

  Llama(const Config& c, const std::string& device, Init init) : Transformer(c, device) {
    auto normal = [&](const Shape& s) { return init_normal(s, device, init); };
    auto ones = [&](int64_t n) { return init_full(n, 1, device, init); };
    int64_t d = c.dim, f = c.hidden_dim, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
    embed_tokens = normal({c.vocab_size, d}), norm = ones(d);
    if (!c.tie_embeddings) lm_head = normal({c.vocab_size, d});
    for (int64_t i = 0; i < c.n_layers; i++) {
      Layer& l = layers.emplace_back();
      l.input_norm = ones(d), l.q_proj = normal({q, d}), l.k_proj = normal({kv, d}), l.v_proj = normal({kv, d});
      l.o_proj = normal({d, q}), l.post_norm = ones(d);
      if (c.n_experts) {
        const int64_t e = c.n_experts, fe = c.expert_hidden_dim;
        l.router = normal({e, d}), l.experts_gate = normal({e, fe, d}), l.experts_up = normal({e, fe, d}), l.experts_down = normal({e, d, fe});
      } else {
        l.gate_proj = normal({f, d}), l.up_proj = normal({f, d}), l.down_proj = normal({d, f});
      }
      if (c.attention_bias) l.q_bias = normal({q}), l.k_bias = normal({kv}), l.v_bias = normal({kv});
      if (c.qk_norm) l.q_norm = ones(c.qk_norm_whole ? q : c.head_dim), l.k_norm = ones(c.qk_norm_whole ? kv : c.head_dim);
    }
    // cos and sin of every position's angles, (max_context, head_dim / 2)
    std::vector<float> inv = inverse_frequencies(c), cos, sin;
    for (int64_t pos = 0; pos < c.max_context; pos++)
      for (float f_i : inv) {
        float angle = static_cast<float>(pos) * f_i;
        cos.push_back(std::cos(angle)), sin.push_back(std::sin(angle));
      }
    Shape table{c.max_context, static_cast<int64_t>(inv.size())};
    rope_cos = Tensor(cos, table, device).realize(), rope_sin = Tensor(sin, table, device).realize();
  }

  void state(const nn::StateVisitor& v) override {
    v("model.embed_tokens.weight", embed_tokens), v("model.layers", layers), v("model.norm.weight", norm);
    v("lm_head.weight", lm_head);  // undefined (skipped) when tied
  }

 protected:
  Tensor embed(const Tensor& tokens, const Positions&) const override { return f32(embed_tokens[{tokens}]); }
  QKV attention_inputs(size_t layer, const Tensor& h, const Positions& p) const override {
    const Layer& l = layers[layer];
    Tensor x = rms_norm(h, l.input_norm, config_.norm_eps);
    int64_t B = h.shape()[0], T = h.shape()[1], D = config_.head_dim;
    auto heads = [&](const Tensor& t, int64_t n, const Tensor& norm) {
      if (!norm.defined()) return t.reshape({B, T, n, D});
      if (config_.qk_norm_whole) return rms_norm(t, norm, config_.norm_eps).reshape({B, T, n, D});  // OLMoE
      return rms_norm(t.reshape({B, T, n, D}), norm, config_.norm_eps);                              // Qwen3
    };
    return {rope(heads(linear(x, l.q_proj, l.q_bias), config_.n_heads, l.q_norm), p),
            rope(heads(linear(x, l.k_proj, l.k_bias), config_.n_kv_heads, l.k_norm), p),
            heads(linear(x, l.v_proj, l.v_bias), config_.n_kv_heads, Tensor())};
  }
  Tensor attention_output(size_t layer, const Tensor& a) const override { return linear(a, layers[layer].o_proj); }
  Tensor feed_forward(size_t layer, const Tensor& h) const override {
    const Layer& l = layers[layer];
    Tensor x = rms_norm(h, l.post_norm, config_.norm_eps);
    if (config_.n_experts) return experts(l, x);
    return linear(linear(x, l.gate_proj).silu() * linear(x, l.up_proj), l.down_proj);
  }
  Tensor head(const Tensor& h) const override {
    return linear(rms_norm(h, norm, config_.norm_eps), lm_head.defined() ? lm_head : embed_tokens);
  }

 private:
  // x (B, T, heads, D) rotated by its positions' angles: halves (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), or
  // with Config::rope_interleaved the pairs (x[2i], x[2i+1]) alike
  Tensor rope(const Tensor& x, const Positions& p) const {
    int64_t half = config_.head_dim / 2, T = x.shape()[1];
    auto rows = [&](const Tensor& table) {
      return (p.at ? table[{*p.at}] : table.shrink({{p.start, p.start + T}, {0, half}})).reshape({T, 1, half});
    };
    Tensor c = rows(rope_cos), s = rows(rope_sin);
    Shape sh = x.shape();
    if (config_.rope_interleaved) {
      Tensor pairs = x.reshape({sh[0], sh[1], sh[2], half, 2});
      auto part = [&](int64_t b) {
        return pairs.shrink({{0, sh[0]}, {0, sh[1]}, {0, sh[2]}, {0, half}, {b, b + 1}}).reshape({sh[0], sh[1], sh[2], half});
      };
      Tensor x1 = part(0), x2 = part(1);
      return Tensor::stack({x1 * c - x2 * s, x2 * c + x1 * s}, -1).reshape(sh);
    }
    auto part = [&](int64_t b) { return x.shrink({{0, sh[0]}, {0, sh[1]}, {0, sh[2]}, {b, b + half}}); };
    Tensor x1 = part(0), x2 = part(half);
    return Tensor::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
  }

  // Each token's chosen experts, and the outputs mixed by the router's probabilities of them. x (B, T, d) ->
  // (B, T, d). An expert's product is one sum over the experts and the input axis of where(chosen == expert, w * v,
  // 0): codegen folds the sum over the experts into a read of the chosen one (fold_gathers), so only the chosen
  // experts' bytes are read, in the product's own kernel. Gathering w first (w[chosen]) would store a float32 copy
  // of the chosen experts, because a reduce read by another reduce gets a buffer of its own.
  Tensor experts(const Layer& l, const Tensor& x) const {
    auto [p, chosen] = linear(x, l.router).softmax(-1).topk(config_.n_experts_used, -1);  // (B, T, K)
    if (config_.experts_renormalize) p = p / p.sum(-1, true);
    Tensor arange = Tensor::arange(0, static_cast<double>(config_.n_experts), 1, chosen.dtype(), x.device());
    Tensor pick = chosen.unsqueeze(-1).eq(arange).unsqueeze(-1).unsqueeze(-1);  // (B, T, K, E, 1, 1)
    // w (E, out, in), v (B, T, K or 1, 1, 1, in) -> (B, T, K, out)
    auto product = [&](const Tensor& w, const Tensor& v) { return pick.where(f32(w) * v, 0.0f).sum({3, 5}); };
    Tensor xe = x.unsqueeze(2).unsqueeze(3).unsqueeze(4);
    Tensor g = product(l.experts_gate, xe), u = product(l.experts_up, xe);          // (B, T, K, f)
    Tensor y = product(l.experts_down, (g.silu() * u).unsqueeze(3).unsqueeze(4));  // (B, T, K, d)
    return (y * p.unsqueeze(-1)).sum(2);
  }

  Tensor embed_tokens, norm, lm_head, rope_cos, rope_sin;
  std::vector<Layer> layers;
};

}  // namespace

std::unique_ptr<Transformer> make_llama(const Config& config, const std::string& device, Init init) {
  return std::make_unique<Llama>(config, device, init);
}

}  // namespace tg::llm
