// GPT-2 (tinygrad's extra/models/gpt2.py; OpenAI's model.py): learned positions, pre-norm blocks with LayerNorm,
// one fused qkv projection, GELU (tanh) feed-forward, the head tied to the token embedding. Projections are
// Conv1D-style (in, out) weights, as the checkpoints store them.
#include "models/models.h"

namespace tg::llm {

namespace {

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return (x.layernorm(-1, eps) * f32(w) + f32(b)).contiguous();  // read by a matmul: once, not per output column
}
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b) { return x.linear(f32(w), f32(b)); }

class GPT2 : public Transformer {
 public:
  struct Block : nn::Module {
    Tensor ln_1_w, ln_1_b, c_attn_w, c_attn_b, attn_proj_w, attn_proj_b, ln_2_w, ln_2_b, c_fc_w, c_fc_b, mlp_proj_w,
        mlp_proj_b;
    void state(const nn::StateVisitor& v) override {
      v("ln_1.weight", ln_1_w), v("ln_1.bias", ln_1_b), v("attn.c_attn.weight", c_attn_w), v("attn.c_attn.bias", c_attn_b);
      v("attn.c_proj.weight", attn_proj_w), v("attn.c_proj.bias", attn_proj_b), v("ln_2.weight", ln_2_w);
      v("ln_2.bias", ln_2_b), v("mlp.c_fc.weight", c_fc_w), v("mlp.c_fc.bias", c_fc_b);
      v("mlp.c_proj.weight", mlp_proj_w), v("mlp.c_proj.bias", mlp_proj_b);
    }
  };

  GPT2(const Config& c, const std::string& device, Init init) : Transformer(c, device) {
    auto normal = [&](const Shape& s) { return init_normal(s, device, init); };
    auto zeros = [&](int64_t n) { return init_full(n, 0, device, init); };
    auto ones = [&](int64_t n) { return init_full(n, 1, device, init); };
    int64_t d = c.dim, f = c.hidden_dim;
    wte = normal({c.vocab_size, d}), wpe = normal({c.max_context, d}), ln_f_w = ones(d), ln_f_b = zeros(d);
    for (int64_t i = 0; i < c.n_layers; i++) {
      Block& b = h.emplace_back();
      b.ln_1_w = ones(d), b.ln_1_b = zeros(d), b.c_attn_w = normal({d, 3 * d}), b.c_attn_b = zeros(3 * d);
      b.attn_proj_w = normal({d, d}), b.attn_proj_b = zeros(d), b.ln_2_w = ones(d), b.ln_2_b = zeros(d);
      b.c_fc_w = normal({d, f}), b.c_fc_b = zeros(f), b.mlp_proj_w = normal({f, d}), b.mlp_proj_b = zeros(d);
    }
  }

  void state(const nn::StateVisitor& v) override {
    v("transformer.wte.weight", wte), v("transformer.wpe.weight", wpe), v("transformer.h", h);
    v("transformer.ln_f.weight", ln_f_w), v("transformer.ln_f.bias", ln_f_b);
  }

 protected:
  Tensor embed(const Tensor& tokens, const Positions& p) const override {
    Tensor positions = p.at ? wpe[{*p.at}] : wpe.shrink({{p.start, p.start + p.count}, {0, config_.dim}});
    return f32(wte[{tokens}]) + f32(positions);
  }
  QKV attention_inputs(size_t layer, const Tensor& x, const Positions& p) const override {
    const Block& b = h[layer];
    Tensor qkv = conv1d(layer_norm(x, b.ln_1_w, b.ln_1_b, config_.norm_eps), b.c_attn_w, b.c_attn_b);
    Shape heads{x.shape()[0], x.shape()[1], config_.n_heads, config_.head_dim};
    std::vector<Tensor> parts = qkv.split(config_.dim, -1);
    return {parts[0].reshape(heads), parts[1].reshape(heads), parts[2].reshape(heads)};
  }
  Tensor attention_output(size_t layer, const Tensor& a) const override {
    return conv1d(a, h[layer].attn_proj_w, h[layer].attn_proj_b);
  }
  Tensor feed_forward(size_t layer, const Tensor& x) const override {
    const Block& b = h[layer];
    Tensor up = conv1d(layer_norm(x, b.ln_2_w, b.ln_2_b, config_.norm_eps), b.c_fc_w, b.c_fc_b);
    return conv1d(up.gelu("tanh"), b.mlp_proj_w, b.mlp_proj_b);
  }
  Tensor head(const Tensor& x) const override {
    return layer_norm(x, ln_f_w, ln_f_b, config_.norm_eps).linear(f32(wte).T());
  }

 private:
  Tensor wte, wpe, ln_f_w, ln_f_b;
  std::vector<Block> h;
};

}  // namespace

std::unique_ptr<Transformer> make_gpt2(const Config& config, const std::string& device, Init init) {
  return std::make_unique<GPT2>(config, device, init);
}

}  // namespace tg::llm
