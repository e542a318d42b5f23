#!/usr/bin/env python3
"""Small GPT-2 and LLaMA checkpoints in the Hugging Face layout, with random weights, and the logits of a PyTorch
reference implementation written here from the models' published definitions (GPT-2: OpenAI's gpt-2 model.py and
HF's modeling_gpt2; LLaMA: Meta's llama model.py and HF's modeling_llama, rotate_half rotary convention).

    llm_reference.py make CONFIG DIR   writes DIR/config.json, DIR/model.safetensors (or shards), DIR/reference.json
                                       (the prompt, its greedy continuation) and DIR/prompt_logits.npy (T, vocab),
                                       DIR/greedy_logits.npy (STEPS, vocab): the logits that chose each new token
    llm_reference.py weights CONFIG DIR
                                       only config.json and model.safetensors (random weights, seed 0)
    llm_reference.py bench CONFIG PROMPT NEW THREADS
                                       PyTorch's prefill and decode tokens/s for CONFIG (with a KV cache, batch 1)
    llm_reference.py list              the configs

Nothing is downloaded: the weights are made here, larger than HF's 0.02 init so that the logits are spread, with
the first torch.manual_seed whose greedy choices have no near-tie (a tie would make the token test meaningless).
Needs Debian's python3-torch; exits 77 (a skip for ctest) where it is missing.
"""
import json
import math
import os
import struct
import sys

CONFIGS = {
    # a tiny GPT-2 (HF GPT2LMHeadModel names under "transformer.", tied lm_head)
    "gpt2_tiny": dict(model_type="gpt2", vocab_size=320, n_positions=64, n_embd=64, n_layer=2, n_head=4,
                      layer_norm_epsilon=1e-5, activation_function="gelu_new", n_inner=None),
    # LLaMA 2 style: grouped-query attention (4 query heads over 2 key/value heads), untied head, sharded safetensors
    "llama_tiny": dict(model_type="llama", vocab_size=320, hidden_size=64, intermediate_size=176,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                       rope_theta=10000.0, max_position_embeddings=64, tie_word_embeddings=False, hidden_act="silu"),
    # LLaMA 3 style: tied embeddings, rope_theta 500000 with LLaMA 3.1's frequency scaling (its bands fall inside
    # this small head: the fastest frequency kept, one blended, the rest slowed), bfloat16 weights (computed in float32)
    "llama3_tiny_bf16": dict(model_type="llama", vocab_size=320, hidden_size=64, intermediate_size=128,
                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                             rope_theta=500000.0, max_position_embeddings=64, tie_word_embeddings=True,
                             hidden_act="silu", torch_dtype="bfloat16",
                             rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                               high_freq_factor=8.0, original_max_position_embeddings=64)),
    # Qwen2: biases on the q, k and v projections (no field says so), tied embeddings, rope_theta 1e6
    "qwen2_tiny": dict(model_type="qwen2", vocab_size=320, hidden_size=64, intermediate_size=128,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                       rope_theta=1000000.0, max_position_embeddings=64, tie_word_embeddings=True, hidden_act="silu"),
    # Qwen3: an RMSNorm over each head of q and k before the rotation, and a head_dim wider than hidden/heads
    "qwen3_tiny": dict(model_type="qwen3", vocab_size=320, hidden_size=64, intermediate_size=128,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                       rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=64,
                       tie_word_embeddings=False, hidden_act="silu", attention_bias=False),
    # Qwen3-MoE: Qwen3's attention, and a router choosing 2 of 4 SwiGLU experts per token (norm_topk_prob)
    "qwen3moe_tiny": dict(model_type="qwen3_moe", vocab_size=320, hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                          rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=64,
                          tie_word_embeddings=False, hidden_act="silu", num_experts=4, num_experts_per_tok=2,
                          moe_intermediate_size=64, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[]),
    # Mixtral: LLaMA's attention, 2 of 4 experts per token under HF's block_sparse_moe names (w1 gate, w3 up, w2 down)
    "mixtral_tiny": dict(model_type="mixtral", vocab_size=320, hidden_size=64, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                         rope_theta=1000000.0, max_position_embeddings=64, tie_word_embeddings=False,
                         hidden_act="silu", num_local_experts=4, num_experts_per_tok=2),
    # OLMoE: an RMSNorm over all of q's and all of k's projection, 2 of 4 experts with no renormalization
    "olmoe_tiny": dict(model_type="olmoe", vocab_size=320, hidden_size=64, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-5,
                       rope_theta=10000.0, max_position_embeddings=64, tie_word_embeddings=False, hidden_act="silu",
                       num_experts=4, num_experts_per_tok=2, norm_topk_prob=False),
    # rows of 256 and 512: whole blocks of every GGUF type, K-quants included (tools/gguf_models.py)
    "llama_q": dict(model_type="llama", vocab_size=320, hidden_size=256, intermediate_size=512,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=64, tie_word_embeddings=False, hidden_act="silu"),
    # TinyLlama 1.1B's shape with LLaMA 2's vocabulary, for bench/gguf.sh (random weights)
    "llama_1b": dict(model_type="llama", vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                     num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4, rms_norm_eps=1e-5,
                     rope_theta=10000.0, max_position_embeddings=2048, tie_word_embeddings=False, hidden_act="silu"),
    # a Qwen3-MoE of about 0.7B parameters, 4 of 32 experts per token (about 1/6 of them read per token), with LLaMA
    # 2's vocabulary, for bench/gguf.sh's mixture-of-experts line (random weights)
    "qwen3moe_bench": dict(model_type="qwen3_moe", vocab_size=32000, hidden_size=1024, intermediate_size=2048,
                           num_hidden_layers=12, num_attention_heads=16, num_key_value_heads=4, head_dim=64,
                           rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=2048,
                           tie_word_embeddings=False, hidden_act="silu", num_experts=32, num_experts_per_tok=4,
                           moe_intermediate_size=512, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[]),
    # GPT-2 124M's shape, for the benchmark (random weights)
    "gpt2_124m": dict(model_type="gpt2", vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                      layer_norm_epsilon=1e-5, activation_function="gelu_new", n_inner=None),
}
PROMPT = [3, 141, 59, 26, 53, 58, 97, 93, 23, 84, 62, 64, 33, 83, 27, 95]
STEPS = 32

try:
  import numpy as np
  import torch
except ImportError as e:
  print(f"skipped: {e}")
  sys.exit(77)


def gpt2_weights(c):
  d, v, f = c["n_embd"], c["vocab_size"], c["n_inner"] or 4 * c["n_embd"]
  r = lambda *s, std=0.2: torch.randn(*s) * std
  w = {"transformer.wte.weight": r(v, d, std=0.5), "transformer.wpe.weight": r(c["n_positions"], d, std=0.3)}
  for i in range(c["n_layer"]):
    p = f"transformer.h.{i}."
    w.update({p + "ln_1.weight": 1 + r(d), p + "ln_1.bias": r(d), p + "attn.c_attn.weight": r(d, 3 * d),
              p + "attn.c_attn.bias": r(3 * d), p + "attn.c_proj.weight": r(d, d), p + "attn.c_proj.bias": r(d),
              p + "ln_2.weight": 1 + r(d), p + "ln_2.bias": r(d), p + "mlp.c_fc.weight": r(d, f),
              p + "mlp.c_fc.bias": r(f), p + "mlp.c_proj.weight": r(f, d), p + "mlp.c_proj.bias": r(d)})
  w.update({"transformer.ln_f.weight": 1 + r(d), "transformer.ln_f.bias": r(d)})
  return w


def rounding(act, name):
  """x as the matmul with weight `name` reads it: act (a dict, weight name -> function) rounds the activations as
  llama.cpp does before multiplying them by a quantized weight (gguf_models.py's llama.cpp reference); else x"""
  return (act or {}).get(name, lambda x: x)


def gpt2_forward(w, c, tokens, start, cache, act=None):
  """logits (T, vocab) of `tokens` at positions start..; cache: per layer [k, v] (heads, S, hd), extended in place"""
  d, nh = c["n_embd"], c["n_head"]
  hd, T = d // nh, len(tokens)
  ln = lambda x, p: torch.nn.functional.layer_norm(x, (d,), w[p + ".weight"], w[p + ".bias"], c["layer_norm_epsilon"])
  gelu_new = lambda x: 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
  pos = torch.arange(start, start + T)
  h = w["transformer.wte.weight"][torch.tensor(tokens)] + w["transformer.wpe.weight"][pos]
  for i in range(c["n_layer"]):
    p = f"transformer.h.{i}."
    mm = lambda x, name: rounding(act, p + name)(x) @ w[p + name]
    qkv = mm(ln(h, p + "ln_1"), "attn.c_attn.weight") + w[p + "attn.c_attn.bias"]
    q, k, v = (t.reshape(T, nh, hd).transpose(0, 1) for t in qkv.split(d, dim=-1))
    k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
    cache[i] = [k, v]
    a = attention(q, k, v, start)
    h = h + mm(a.transpose(0, 1).reshape(T, d), "attn.c_proj.weight") + w[p + "attn.c_proj.bias"]
    m = gelu_new(mm(ln(h, p + "ln_2"), "mlp.c_fc.weight") + w[p + "mlp.c_fc.bias"])
    h = h + mm(m, "mlp.c_proj.weight") + w[p + "mlp.c_proj.bias"]
  return rounding(act, "transformer.wte.weight")(ln(h, "transformer.ln_f")) @ w["transformer.wte.weight"].T


def attention(q, k, v, start):
  """softmax(q k^T / sqrt(hd)) v, query i (position start + i) seeing keys 0..start+i; k/v heads repeated (GQA)"""
  T, S, hd = q.shape[1], k.shape[1], q.shape[2]
  rep = q.shape[0] // k.shape[0]
  k, v = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
  s = q @ k.transpose(1, 2) / math.sqrt(hd)
  mask = torch.arange(S)[None, :] <= torch.arange(start, start + T)[:, None]
  return torch.softmax(s.masked_fill(~mask, float("-inf")), -1) @ v


def moe(c):
  """a mixture of experts' (count, expert width, HF names: router, expert prefix, gate, up, down), or None"""
  if c["model_type"] == "mixtral":
    return c["num_local_experts"], c["intermediate_size"], ("block_sparse_moe.gate.weight", "block_sparse_moe.experts.{}.",
                                                              "w1.weight", "w3.weight", "w2.weight")
  if c.get("num_experts"):
    return c["num_experts"], c.get("moe_intermediate_size", c["intermediate_size"]), ("mlp.gate.weight", "mlp.experts.{}.", "gate_proj.weight",
                                                          "up_proj.weight", "down_proj.weight")
  return None


def llama_weights(c):
  d, v, f, nh, nkv = (c[k] for k in ("hidden_size", "vocab_size", "intermediate_size", "num_attention_heads",
                                     "num_key_value_heads"))
  hd = c.get("head_dim", d // nh)
  r = lambda *s, std=0.2: torch.randn(*s) * std
  w = {"model.embed_tokens.weight": r(v, d, std=0.5)}
  for i in range(c["num_hidden_layers"]):
    p = f"model.layers.{i}."
    w.update({p + "input_layernorm.weight": 1 + r(d), p + "self_attn.q_proj.weight": r(nh * hd, d),
              p + "self_attn.k_proj.weight": r(nkv * hd, d), p + "self_attn.v_proj.weight": r(nkv * hd, d),
              p + "self_attn.o_proj.weight": r(d, nh * hd), p + "post_attention_layernorm.weight": 1 + r(d)})
    if moe(c):  # HF's layout: the router, then each expert's three projections
      E, fe, (router, expert, gate, up, down) = moe(c)
      w[p + router] = r(E, d, std=1.0)
      for j in range(E):
        e = p + expert.format(j)
        w.update({e + gate: r(fe, d), e + up: r(fe, d), e + down: r(d, fe)})
    else:
      w.update({p + "mlp.gate_proj.weight": r(f, d), p + "mlp.up_proj.weight": r(f, d), p + "mlp.down_proj.weight": r(d, f)})
    if c["model_type"] == "qwen2":
      w.update({p + "self_attn.q_proj.bias": r(nh * hd), p + "self_attn.k_proj.bias": r(nkv * hd),
                p + "self_attn.v_proj.bias": r(nkv * hd)})
    if c["model_type"] in ("qwen3", "qwen3_moe"):
      w.update({p + "self_attn.q_norm.weight": 1 + r(hd), p + "self_attn.k_norm.weight": 1 + r(hd)})
    if c["model_type"] == "olmoe":  # over the whole projections
      w.update({p + "self_attn.q_norm.weight": 1 + r(nh * hd), p + "self_attn.k_norm.weight": 1 + r(nkv * hd)})
  w["model.norm.weight"] = 1 + r(d)
  if not c["tie_word_embeddings"]: w["lm_head.weight"] = r(v, d, std=0.5)
  if c.get("torch_dtype") == "bfloat16":  # stored as bfloat16; the reference computes with the stored values
    w = {k: t.to(torch.bfloat16) for k, t in w.items()}
  return w


def llama_forward(w, c, tokens, start, cache, act=None):
  d, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
  hd, T, eps = c.get("head_dim", d // nh), len(tokens), c["rms_norm_eps"]
  w = {k: t.float() for k, t in w.items()}
  norm = lambda x, p: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w[p + ".weight"]
  inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
  if c.get("rope_scaling"):  # LLaMA 3.1: low frequencies slowed by `factor`, a smooth blend between the bands
    s = c["rope_scaling"]
    old, low, high = s["original_max_position_embeddings"], s["low_freq_factor"], s["high_freq_factor"]
    wavelen = 2 * math.pi / inv_freq
    smooth = (old / wavelen - low) / (high - low)
    blended = (1 - smooth) * inv_freq / s["factor"] + smooth * inv_freq
    inv_freq = torch.where(wavelen > old / low, inv_freq / s["factor"],
                           torch.where(wavelen < old / high, inv_freq, blended))
  freqs = torch.arange(start, start + T).float()[:, None] * inv_freq[None, :]
  emb = torch.cat([freqs, freqs], -1)
  cos, sin = emb.cos(), emb.sin()
  rotate_half = lambda x: torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1)
  rope = lambda x: x * cos + rotate_half(x) * sin
  mm = lambda x, name: rounding(act, name)(x) @ w[name].T
  h = w["model.embed_tokens.weight"][torch.tensor(tokens)]
  for i in range(c["num_hidden_layers"]):
    p = f"model.layers.{i}."
    x = norm(h, p + "input_layernorm")
    # Qwen2's projection biases; Qwen3's RMSNorm of each head of q and k (over head_dim) before the rotation
    proj = lambda name: mm(x, p + name + ".weight") + (w[p + name + ".bias"] if p + name + ".bias" in w else 0)
    head_norm = lambda t, name: norm(t, p + name) if p + name + ".weight" in w else t
    if c["model_type"] == "olmoe":  # the norm before the heads are split
      q = rope(head_norm(proj("self_attn.q_proj"), "self_attn.q_norm").reshape(T, nh, hd).transpose(0, 1))
      k = rope(head_norm(proj("self_attn.k_proj"), "self_attn.k_norm").reshape(T, nkv, hd).transpose(0, 1))
    else:
      q = rope(head_norm(proj("self_attn.q_proj").reshape(T, nh, hd), "self_attn.q_norm").transpose(0, 1))
      k = rope(head_norm(proj("self_attn.k_proj").reshape(T, nkv, hd), "self_attn.k_norm").transpose(0, 1))
    v = proj("self_attn.v_proj").reshape(T, nkv, hd).transpose(0, 1)
    k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
    cache[i] = [k, v]
    h = h + mm(attention(q, k, v, start).transpose(0, 1).reshape(T, nh * hd), p + "self_attn.o_proj.weight")
    x = norm(h, p + "post_attention_layernorm")
    swiglu = lambda g, u, dn: mm(torch.nn.functional.silu(mm(x, g)) * mm(x, u), dn)
    if moe(c):
      # every expert on every token, weighted by the router's softmax where it is among the token's top k, else 0
      E, _, (router, expert, gate, up, down) = moe(c)
      probs = torch.softmax(mm(x, p + router), -1)
      top = torch.topk(probs, c["num_experts_per_tok"], -1)
      mix = torch.zeros_like(probs).scatter(-1, top.indices, top.values)
      if c.get("norm_topk_prob", c["model_type"] == "mixtral"): mix = mix / mix.sum(-1, keepdim=True)
      e = lambda j: p + expert.format(j)
      h = h + sum(mix[:, j:j + 1] * swiglu(e(j) + gate, e(j) + up, e(j) + down) for j in range(E))
    else:
      h = h + swiglu(p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight", p + "mlp.down_proj.weight")
  head = "model.embed_tokens.weight" if c["tie_word_embeddings"] else "lm_head.weight"
  return mm(norm(h, "model.norm"), head)


def model(name, seed=0):
  c = dict(CONFIGS[name])
  gpt2 = c["model_type"] == "gpt2"
  n_layers, heads = (c["n_layer"], c["n_head"]) if gpt2 else (c["num_hidden_layers"], c["num_key_value_heads"])
  hd = (c["n_embd"] // c["n_head"]) if gpt2 else c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
  torch.manual_seed(seed)
  w = gpt2_weights(c) if gpt2 else llama_weights(c)
  fwd = gpt2_forward if gpt2 else llama_forward
  new_cache = lambda: [[torch.zeros(heads, 0, hd), torch.zeros(heads, 0, hd)] for _ in range(n_layers)]
  return c, w, fwd, new_cache


SAFETENSORS_DTYPES = {torch.float32: ("F32", np.float32), torch.bfloat16: ("BF16", np.uint16)}


def write_safetensors(path, tensors):
  header, blobs, at = {}, [], 0
  for name in sorted(tensors):
    t = tensors[name].contiguous()
    code, np_dtype = SAFETENSORS_DTYPES[t.dtype]
    data = (t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()).astype(np_dtype).tobytes()
    header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
    blobs.append(data)
    at += len(data)
  text = json.dumps(header).encode()
  text += b" " * (-len(text) % 8)
  with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def greedy(c, w, fwd, new_cache):
  """the prompt's logits, then STEPS greedy tokens and the logits that chose each; None on a near-tie"""
  cache = new_cache()
  prompt_logits = fwd(w, c, PROMPT, 0, cache)
  tokens, logits, last = [], [], prompt_logits[-1]
  for step in range(STEPS):
    top2 = torch.topk(last, 2).values
    if top2[0] - top2[1] <= 1e-3 * top2[0].abs(): return None
    tokens.append(int(last.argmax()))
    logits.append(last)
    last = fwd(w, c, tokens[-1:], len(PROMPT) + step, cache)[-1]
  # the cache must agree with running the whole sequence at once
  full = fwd(w, c, PROMPT + tokens[:-1], 0, new_cache())
  d = (full[len(PROMPT) - 1:] - torch.stack(logits)).abs().max() / full.abs().max()
  assert d < 1e-5, f"cached and whole-sequence logits differ by {d} of the largest"
  return prompt_logits, tokens, torch.stack(logits)


def write_folder(name, out, c, w):
  os.makedirs(out, exist_ok=True)
  with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(c, f, indent=2)
  if name == "gpt2_tiny":  # also as torch.save's pytorch_model.bin, loaded from a folder of its own
    bin_dir = out.rstrip("/") + ".bin"
    os.makedirs(bin_dir, exist_ok=True)
    torch.save({k: t.clone() for k, t in w.items()}, os.path.join(bin_dir, "pytorch_model.bin"))
    with open(os.path.join(bin_dir, "config.json"), "w") as f:
      json.dump(c, f, indent=2)
  if name == "llama_tiny":  # two shards and HF's index file
    names = sorted(w)
    shards = {"model-00001-of-00002.safetensors": names[:len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    for file, keys in shards.items():
      write_safetensors(os.path.join(out, file), {k: w[k] for k in keys})
    index = {"metadata": {}, "weight_map": {k: file for file, keys in shards.items() for k in keys}}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
      json.dump(index, f, indent=2)
  else:
    write_safetensors(os.path.join(out, "model.safetensors"), w)


def make(name, out):
  with torch.no_grad():
    for seed in range(100):  # the first seed whose greedy choices have no near-tie (a tie makes the test moot)
      c, w, fwd, new_cache = model(name, seed)
      ref = greedy(c, w, fwd, new_cache)
      if ref: break
  prompt_logits, tokens, logits = ref
  write_folder(name, out, c, w)
  np.save(os.path.join(out, "prompt_logits.npy"), prompt_logits.numpy().astype(np.float32))
  np.save(os.path.join(out, "greedy_logits.npy"), logits.numpy().astype(np.float32))
  with open(os.path.join(out, "reference.json"), "w") as f:
    json.dump({"prompt": PROMPT, "greedy": tokens}, f)


def bench(name, prompt_len, new, threads):
  import time
  torch.set_num_threads(threads)
  c, w, fwd, new_cache = model(name)
  prompt = [(i * 7919) % c["vocab_size"] for i in range(prompt_len)]
  with torch.no_grad():
    for _ in range(2):  # a warm-up, then the measured run
      cache = new_cache()
      t0 = time.perf_counter()
      last = fwd(w, c, prompt, 0, cache)[-1]
      t1 = time.perf_counter()
      for step in range(new):
        last = fwd(w, c, [int(last.argmax())], prompt_len + step, cache)[-1]
      t2 = time.perf_counter()
  print(f"prefill {prompt_len / (t1 - t0):.1f} tok/s decode {new / (t2 - t1):.1f} tok/s")


if __name__ == "__main__":
  if sys.argv[1:2] == ["make"]:
    make(sys.argv[2], sys.argv[3])
  elif sys.argv[1:2] == ["weights"]:
    c, w, _, _ = model(sys.argv[2])
    write_folder(sys.argv[2], sys.argv[3], c, w)
  elif sys.argv[1:2] == ["bench"]:
    bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
  elif sys.argv[1:2] == ["list"]:
    print(" ".join(CONFIGS))
  else:
    print(__doc__)
    sys.exit(2)
