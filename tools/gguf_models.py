#!/usr/bin/env python3
"""GGUF files of the random-weight models tools/llm_reference.py writes, from the GGUF specification (ggml's
docs/gguf.md) in numpy and struct, independent of tinygrad.cpp's reader, with their PyTorch reference.

    gguf_models.py make HF_DIR OUT_DIR TYPE   OUT_DIR/model.gguf from the Hugging Face folder HF_DIR, its 2-d
                                              weights stored as TYPE (F32, F16, Q8_0, Q4_0, Q4_K, ...; norms, biases
                                              and weights whose rows do not fill whole blocks stay F32, as llama.cpp
                                              does), laid out as llama.cpp's converter does (LLaMA's q/k rows
                                              interleaved per head, GPT-2's projections transposed); and the
                                              reference of llm_reference.py (reference.json, prompt_logits.npy,
                                              greedy_logits.npy) computed on the weights the file holds (each
                                              quantized weight dequantized by tools/gguf_reference.py), and
                                              llama_cpp_logits.npy: the same with activations rounded as llama.cpp
                                              rounds them; a placeholder vocabulary lets llama.cpp load the file

    gguf_models.py tokenizer TOKENIZER_JSON OUT.gguf
                                              a GGUF holding only that vocabulary as tokenizer.ggml.* metadata
    gguf_models.py chat OUT.gguf TOKENIZER_JSON
                                              llama_tiny with random weights, that vocabulary plus ChatML's
                                              <|im_start|> and <|im_end|>, and a ChatML chat template (the server's
                                              tests)
    gguf_models.py bench CONFIG OUT.gguf TYPE TOKENIZER_JSON
                                              llm_reference.py's CONFIG (a LLaMA) with random weights as TYPE and
                                              that vocabulary: a file llama.cpp loads too (bench/gguf.sh)

make needs python3-torch (the reference forward) and exits 77 (a skip for ctest) without it; both need numpy.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if sys.argv[1:2] in (["make"], ["bench"], ["chat"]):  # they need PyTorch (llm_reference exits 77 without it)
  import llm_reference as ref  # noqa: E402
  import torch  # noqa: E402

TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10, "Q3_K": 11,
         "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "BF16": 30}
BLOCK = {"Q4_0": 32, "Q4_1": 32, "Q5_0": 32, "Q5_1": 32, "Q8_0": 32, "Q2_K": 256, "Q3_K": 256, "Q4_K": 256,
         "Q5_K": 256, "Q6_K": 256}
ALIGN = 32


def read_safetensors(folder):
  files = [f for f in sorted(os.listdir(folder)) if f.endswith(".safetensors")]
  out = {}
  for name in files:
    data = open(os.path.join(folder, name), "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    for key, info in header.items():
      if key == "__metadata__": continue
      a, b = info["data_offsets"]
      raw = data[8 + n + a:8 + n + b]
      if info["dtype"] == "F32":
        t = torch.from_numpy(np.frombuffer(raw, np.float32).copy())
      elif info["dtype"] == "BF16":
        t = torch.from_numpy(np.frombuffer(raw, np.int16).copy()).view(torch.bfloat16).float()
      else:
        raise ValueError(info["dtype"])
      out[key] = t.reshape(info["shape"])
  return out


def gguf_string(s):
  b = s.encode()
  return struct.pack("<Q", len(b)) + b


class I32(int):  # a metadata integer written as int32 (llama.cpp reads token types as int32)
  pass


class Strings(list):  # an array of strings, typed as such even when empty (llama.cpp checks merges' type)
  pass


def gguf_value(v):
  """(value type, bytes) of a metadata value: str, bool, int (u32), float (f32), or a list of one of them"""
  if isinstance(v, list):
    kinds = {gguf_value(x)[0] for x in v} or {8 if isinstance(v, Strings) else 4}
    assert len(kinds) == 1, "a GGUF array holds one type"
    return 9, struct.pack("<IQ", kinds.pop(), len(v)) + b"".join(gguf_value(x)[1] for x in v)
  if isinstance(v, str): return 8, gguf_string(v)
  if isinstance(v, bool): return 7, struct.pack("<B", v)
  if isinstance(v, I32): return 5, struct.pack("<i", v)
  if isinstance(v, int): return 4, struct.pack("<I", v)
  if isinstance(v, float): return 6, struct.pack("<f", v)
  raise TypeError(v)


def write_gguf(path, metadata, tensors):
  """tensors: list of (name, shape (row-major), type name, bytes); written as they come (files of GBs)"""
  head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
  for k, v in metadata.items():
    t, b = gguf_value(v)
    head += gguf_string(k) + struct.pack("<I", t) + b
  offsets, at = [], 0
  for _, _, _, raw in tensors:
    at += -at % ALIGN
    offsets.append(at)
    at += len(raw)
  for (name, shape, type_name, _), off in zip(tensors, offsets):
    head += gguf_string(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in reversed(shape))
    head += struct.pack("<IQ", TYPES[type_name], off)
  head += b"\0" * (-len(head) % ALIGN)
  with open(path, "wb") as f:
    f.write(head)
    at = 0
    for (_, _, _, raw), off in zip(tensors, offsets):
      f.write(b"\0" * (off - at))
      f.write(raw)
      at = off + len(raw)


def permute(w, heads):  # llama.cpp's converter: HF's halves -> interleaved pairs, per head
  out, inp = w.shape
  return w.reshape(heads, 2, out // heads // 2, inp).transpose(1, 2).reshape(out, inp)


def unpermute(w, heads):
  out, inp = w.shape
  return w.reshape(heads, out // heads // 2, 2, inp).transpose(1, 2).reshape(out, inp)


def store(w, type_name):
  """(type actually stored, bytes, the float32 values the file holds)"""
  a = w.float().contiguous().numpy().astype(np.float32)
  if w.dim() < 2 or type_name == "F32" or (type_name in BLOCK and a.shape[-1] % BLOCK[type_name]):
    return "F32", a.tobytes(), torch.from_numpy(a.copy())
  if type_name == "F16":
    h = a.astype(np.float16)
    return "F16", h.tobytes(), torch.from_numpy(h.astype(np.float32))
  import gguf_reference as q
  raw = q.quantize(type_name, a.reshape(-1))
  back = np.asarray(q.dequantize(type_name, raw, a.size), np.float32).reshape(a.shape)
  return type_name, bytes(raw), torch.from_numpy(back.copy())


class Held(dict):
  """weights by HF name, with the GGUF type each is stored as (.types)"""
  def __init__(self):
    super().__init__()
    self.types = {}


def f16_round(x): return x.half().float()


def q8_round(x, block=32):
  """ggml's quantize_row_q8_0 on x86 (and q8_1's values): per block of 32, d = max|x|/127 kept as float16,
  q = x * (127/max|x|) rounded half to even"""
  b = x.reshape(-1, block)
  amax = b.abs().amax(-1, keepdim=True)
  inv = torch.where(amax > 0, 127 / amax, torch.zeros_like(amax))
  return (torch.round(b * inv) * (amax / 127).half().float()).reshape(x.shape)


def q8k_round(x):
  """ggml's quantize_row_q8_K: per block of 256, the element of largest magnitude (with its sign) maps to -127,
  q = nearest(x * -127/max) (at most 127), d = 1/scale in float32"""
  b = x.reshape(-1, 256)
  big = b.gather(-1, b.abs().argmax(-1, keepdim=True))
  scale = torch.where(big != 0, -127 / big, torch.zeros_like(big))
  q = torch.clamp(torch.round(b * scale), max=127)  # nearest_int rounds half to even, as torch.round
  d = torch.where(big != 0, 1 / scale, torch.zeros_like(big))
  return (q * d).reshape(x.shape)


# how llama.cpp's CPU backend reads the activations a weight of each type multiplies (ggml's vec_dot_type)
ACTIVATION_ROUNDING = {"F16": f16_round, "BF16": lambda x: x.bfloat16().float(), "Q4_0": q8_round, "Q4_1": q8_round,
                       "Q5_0": q8_round, "Q5_1": q8_round, "Q8_0": q8_round, "Q2_K": q8k_round, "Q3_K": q8k_round,
                       "Q4_K": q8k_round, "Q5_K": q8k_round, "Q6_K": q8k_round}


def convert(c, w, type_name, keep=True):
  """(metadata, tensors, held): HF config and weights as llama.cpp's converter lays them out; held: the weights as
  the file holds them, under the HF names (keep=False: not kept), and held.types: the type each is stored as"""
  tensors, held = [], Held()

  def put(gguf_name, hf_name, transform=lambda t: t, inverse=lambda t: t):
    stored, raw, values = store(transform(w[hf_name]), type_name)
    tensors.append((gguf_name, list(values.shape), stored, raw))
    if keep: held[hf_name], held.types[hf_name] = inverse(values), stored
    w[hf_name] = None  # let a large model's float32 copy go

  if c["model_type"] == "gpt2":
    arch, L = "gpt2", c["n_layer"]
    meta = {"general.architecture": arch, "gpt2.context_length": c["n_positions"], "gpt2.embedding_length": c["n_embd"],
            "gpt2.block_count": L, "gpt2.feed_forward_length": c.get("n_inner") or 4 * c["n_embd"],
            "gpt2.attention.head_count": c["n_head"], "gpt2.attention.layer_norm_epsilon": float(c["layer_norm_epsilon"])}
    T = lambda t: t.T.contiguous()
    put("token_embd.weight", "transformer.wte.weight")
    put("position_embd.weight", "transformer.wpe.weight")
    put("output_norm.weight", "transformer.ln_f.weight")
    put("output_norm.bias", "transformer.ln_f.bias")
    for i in range(L):
      p, b = f"transformer.h.{i}.", f"blk.{i}."
      for hf, gg in (("ln_1", "attn_norm"), ("ln_2", "ffn_norm")):
        put(b + gg + ".weight", p + hf + ".weight")
        put(b + gg + ".bias", p + hf + ".bias")
      for hf, gg in (("attn.c_attn", "attn_qkv"), ("attn.c_proj", "attn_output"), ("mlp.c_fc", "ffn_up"),
                     ("mlp.c_proj", "ffn_down")):
        put(b + gg + ".weight", p + hf + ".weight", T, T)
        put(b + gg + ".bias", p + hf + ".bias")
  else:
    # Qwen2 and Qwen3 are LLaMA's block under their own names; their q and k rows are not permuted (NEOX rotation)
    arch = {"qwen2": "qwen2", "qwen3": "qwen3", "qwen3_moe": "qwen3moe", "olmoe": "olmoe"}.get(c["model_type"], "llama")
    L, nh, nkv = c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    d = c["hidden_size"]
    hd = c.get("head_dim", d // nh)
    meta = {"general.architecture": arch, f"{arch}.context_length": c["max_position_embeddings"],
            f"{arch}.embedding_length": d, f"{arch}.block_count": L, f"{arch}.feed_forward_length": c["intermediate_size"],
            f"{arch}.attention.head_count": nh, f"{arch}.attention.head_count_kv": nkv,
            f"{arch}.attention.layer_norm_rms_epsilon": float(c["rms_norm_eps"]),
            f"{arch}.rope.freq_base": float(c["rope_theta"]), f"{arch}.rope.dimension_count": hd}
    if hd != d // nh: meta[f"{arch}.attention.key_length"] = meta[f"{arch}.attention.value_length"] = hd
    experts = ref.moe(c) if c["model_type"] in ("qwen3_moe", "mixtral", "olmoe") else None
    if experts:
      E, fe, (router, expert, *projections) = experts
      meta.update({f"{arch}.expert_count": E, f"{arch}.expert_used_count": c["num_experts_per_tok"]})
      if arch == "qwen3moe": meta[f"{arch}.expert_feed_forward_length"] = fe
      for i in range(L):  # llama.cpp's layout: the experts of a projection stacked into one (E, out, in) tensor
        p = f"model.layers.{i}."
        w[p + "mlp.gate.weight"] = w.pop(p + router)
        for hf, ours in zip(projections, ("gate_proj", "up_proj", "down_proj")):
          w[f"{p}mlp.experts.{ours}.weight"] = torch.stack([w.pop(p + expert.format(j) + hf) for j in range(E)])
    qk = (lambda t, n: t, lambda t, n: t) if arch != "llama" else (permute, unpermute)
    put("token_embd.weight", "model.embed_tokens.weight")
    put("output_norm.weight", "model.norm.weight")
    if not c.get("tie_word_embeddings"): put("output.weight", "lm_head.weight")
    for i in range(L):
      p, b = f"model.layers.{i}.", f"blk.{i}."
      put(b + "attn_norm.weight", p + "input_layernorm.weight")
      put(b + "attn_q.weight", p + "self_attn.q_proj.weight", lambda t: qk[0](t, nh), lambda t: qk[1](t, nh))
      put(b + "attn_k.weight", p + "self_attn.k_proj.weight", lambda t: qk[0](t, nkv), lambda t: qk[1](t, nkv))
      for hf, gg in (("self_attn.q_proj.bias", "attn_q.bias"), ("self_attn.k_proj.bias", "attn_k.bias"),
                     ("self_attn.v_proj.bias", "attn_v.bias"), ("self_attn.q_norm.weight", "attn_q_norm.weight"),
                     ("self_attn.k_norm.weight", "attn_k_norm.weight")):
        if p + hf in w: put(b + gg, p + hf)
      for hf, gg in (("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"),
                     ("post_attention_layernorm", "ffn_norm"), ("mlp.gate_proj", "ffn_gate"),
                     ("mlp.up_proj", "ffn_up"), ("mlp.down_proj", "ffn_down"), ("mlp.gate", "ffn_gate_inp"),
                     ("mlp.experts.gate_proj", "ffn_gate_exps"), ("mlp.experts.up_proj", "ffn_up_exps"),
                     ("mlp.experts.down_proj", "ffn_down_exps")):
        if p + hf + ".weight" in w: put(b + gg + ".weight", p + hf + ".weight")
      if keep and experts:  # the reference reads HF's names, one expert each
        held[p + router] = held.pop(p + "mlp.gate.weight")
        held.types[p + router] = held.types[p + "mlp.gate.weight"]
        for hf, ours in zip(projections, ("gate_proj", "up_proj", "down_proj")):
          stacked = held.pop(f"{p}mlp.experts.{ours}.weight")
          held.update({p + expert.format(j) + hf: stacked[j] for j in range(E)})
          held.types.update({p + expert.format(j) + hf: held.types[f"{p}mlp.experts.{ours}.weight"] for j in range(E)})
    if c.get("rope_scaling"):  # LLaMA 3.1: the scaled frequencies as divisors, as llama.cpp's converter writes them
      s, hd = c["rope_scaling"], d // nh
      inv = 1.0 / (c["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.float32) / hd))
      old, low, high = s["original_max_position_embeddings"], s["low_freq_factor"], s["high_freq_factor"]
      factors = []
      for f in inv:
        wl = 2 * np.pi / f
        if wl < old / high: factors.append(1.0)
        elif wl > old / low: factors.append(s["factor"])
        else:
          smooth = (old / wl - low) / (high - low)
          factors.append(1 / ((1 - smooth) / s["factor"] + smooth))
      tensors.append(("rope_freqs.weight", [len(factors)], "F32", np.asarray(factors, np.float32).tobytes()))
  return meta, tensors, held


def byte_level_chars():
  """GPT-2's byte-level alphabet: each byte as a printable character (itself where printable, else 256 + its rank)"""
  keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
  chars, extra = {}, 0
  for b in range(256):
    if b in keep: chars[b] = chr(b)
    else: chars[b], extra = chr(256 + extra), extra + 1
  return [chars[b] for b in range(256)]


def placeholder_vocab(n, avoid):
  """a vocabulary of n tokens, so that llama.cpp, which needs one, runs the file on token ids: a byte-level BPE of
  the 256 bytes and made-up tokens, no merges; its end-of-text a token that neither the prompt nor the greedy
  continuation holds"""
  eos = max(set(range(n)) - avoid)
  return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "default",
          "tokenizer.ggml.tokens": (byte_level_chars() + [f"<t{i}>" for i in range(256, n)])[:n],
          "tokenizer.ggml.merges": Strings(), "tokenizer.ggml.token_type": [I32(1) for _ in range(n)],
          "tokenizer.ggml.bos_token_id": eos, "tokenizer.ggml.eos_token_id": eos}


def make(hf_dir, out_dir, type_name):
  c = json.load(open(os.path.join(hf_dir, "config.json")))
  meta, tensors, held = convert(c, read_safetensors(hf_dir), type_name)
  os.makedirs(out_dir, exist_ok=True)

  # the reference on the held weights: llm_reference's forward, greedy from its prompt
  arch = c["model_type"]
  L = c.get("n_layer") or c["num_hidden_layers"]
  fwd = ref.gpt2_forward if arch == "gpt2" else ref.llama_forward
  heads = c.get("n_head") or c["num_key_value_heads"]
  hd = c.get("head_dim") or (c.get("n_embd") or c["hidden_size"]) // (c.get("n_head") or c["num_attention_heads"])
  new_cache = lambda: [[torch.zeros(heads, 0, hd), torch.zeros(heads, 0, hd)] for _ in range(L)]
  with torch.no_grad():
    result = ref.greedy(c, held, fwd, new_cache)
    if result is None: sys.exit("gguf_models.py: a near-tie in the greedy continuation of these weights")
    prompt_logits, tokens, logits = result
    # llama.cpp's arithmetic on the same file (tests/models/llama_cpp_check.mjs): the activations rounded as its CPU
    # backend rounds them for each weight's type, along the same greedy tokens
    act = {n: ACTIVATION_ROUNDING[t] for n, t in held.types.items() if t in ACTIVATION_ROUNDING}
    llama_cpp_logits = fwd(held, c, ref.PROMPT + tokens[:-1], 0, new_cache(), act)[len(ref.PROMPT) - 1:]
  meta.update(placeholder_vocab(c["vocab_size"], avoid=set(ref.PROMPT) | set(tokens)))
  write_gguf(os.path.join(out_dir, "model.gguf"), meta, tensors)
  with open(os.path.join(out_dir, "types.json"), "w") as f:
    json.dump({name: t for name, _, t, _ in tensors}, f, indent=1)
  np.save(os.path.join(out_dir, "prompt_logits.npy"), prompt_logits.numpy().astype(np.float32))
  np.save(os.path.join(out_dir, "greedy_logits.npy"), logits.numpy().astype(np.float32))
  np.save(os.path.join(out_dir, "llama_cpp_logits.npy"), llama_cpp_logits.numpy().astype(np.float32))
  with open(os.path.join(out_dir, "reference.json"), "w") as f:
    json.dump({"prompt": ref.PROMPT, "greedy": tokens}, f)


def vocab_metadata(tokenizer_json):
  """a GGUF file holding only the vocabulary of a tokenizer.json, as llama.cpp's converter writes it: "gpt2"
  (byte-level: tokens, merges, the pre-tokenizer's name) or "llama" (SentencePiece: tokens and scores; this file has
  merges instead of scores, so each token's score is minus the rank of the first merge that makes it)"""
  j = json.load(open(tokenizer_json))
  vocab = dict(j["model"]["vocab"])
  special = {}
  for a in j.get("added_tokens", []):
    vocab[a["content"]] = a["id"]
    if a.get("special"): special[a["content"]] = a["id"]
  tokens = [None] * (max(vocab.values()) + 1)
  for t, i in vocab.items(): tokens[i] = t
  tokens = [t if t is not None else f"[PAD{i}]" for i, t in enumerate(tokens)]
  merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
  byte_level = "ByteLevel" in json.dumps(j.get("pre_tokenizer"))
  if byte_level:
    pattern = json.dumps(j["pre_tokenizer"])
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "llama-bpe" if "(?i:" in pattern else "gpt-2",
            "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.merges": merges,
            "tokenizer.ggml.token_type": [I32(3 if t in special else 1) for t in tokens]}
  else:
    first = {}
    for r, m in enumerate(merges):
      first.setdefault(m.replace(" ", ""), r)
    unk = j["model"].get("unk_token")
    types = [2 if t == unk else 3 if t in special else 6 if (t.startswith("<0x") and len(t) == 6) else 1 for t in tokens]
    meta = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.scores": [float(-first.get(t, len(merges))) for t in tokens],
            "tokenizer.ggml.token_type": [I32(t) for t in types]}
  return meta


def tokenizer(tokenizer_json, out):
  write_gguf(out, vocab_metadata(tokenizer_json), [])


def random_llama(c, embed_std, head_std, std):
  """HF-named random weights of LLaMA config c (normal; norms 1), drawn in one fixed order from torch's generator;
  Qwen3's q and k norms and a mixture of experts' router and experts where c has them"""
  d, L, f, nh = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["num_attention_heads"]
  hd = c.get("head_dim", d // nh)
  q, kv = nh * hd, c["num_key_value_heads"] * hd
  experts = ref.moe(c)
  w = {"model.embed_tokens.weight": torch.randn(c["vocab_size"], d) * embed_std, "model.norm.weight": torch.ones(d),
       "lm_head.weight": torch.randn(c["vocab_size"], d) * head_std}
  for i in range(L):
    p = f"model.layers.{i}."
    mlp = () if experts else (("mlp.gate_proj", (f, d)), ("mlp.up_proj", (f, d)), ("mlp.down_proj", (d, f)))
    for k, shape in (("self_attn.q_proj", (q, d)), ("self_attn.k_proj", (kv, d)), ("self_attn.v_proj", (kv, d)),
                     ("self_attn.o_proj", (d, q))) + mlp:
      w[p + k + ".weight"] = torch.randn(*shape) * std
    if experts:
      E, fe, (router, expert, *projections) = experts
      w[p + router] = torch.randn(E, d) * std
      for j in range(E):
        for hf, shape in zip(projections, ((fe, d), (fe, d), (d, fe))): w[p + expert.format(j) + hf] = torch.randn(*shape) * std
    if c["model_type"] in ("qwen3", "qwen3_moe"):
      w[p + "self_attn.q_norm.weight"], w[p + "self_attn.k_norm.weight"] = torch.ones(hd), torch.ones(hd)
    w[p + "input_layernorm.weight"], w[p + "post_attention_layernorm.weight"] = torch.ones(d), torch.ones(d)
  return w


def bench(name, out, type_name, tokenizer_json):
  """a GGUF of llm_reference's CONFIG with random weights (normal, std 0.02; norms 1) and a real vocabulary, for
  timing against llama.cpp (which needs the vocabulary to load a file)"""
  c = dict(ref.CONFIGS[name])
  torch.manual_seed(0)
  meta, tensors, _ = convert(c, random_llama(c, 0.02, 0.02, 0.02), type_name, keep=False)
  meta.update(vocab_metadata(tokenizer_json))
  write_gguf(out, meta, tensors)


# Qwen2's template, the ChatML format: what GGUF files of ChatML models carry as tokenizer.chat_template
CHATML_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
                   "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def chat(out, tokenizer_json):
  """a tiny LLaMA (llm_reference's llama_tiny shape) with random weights, tokenizer_json's vocabulary and ChatML's
  markers as control tokens, and the ChatML template; <|im_end|> is its end of text"""
  torch.manual_seed(0)
  meta = vocab_metadata(tokenizer_json)
  tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
  for marker in ("<|im_start|>", "<|im_end|>"):
    if marker not in tokens: tokens.append(marker), types.append(I32(3))
  c = dict(ref.CONFIGS["llama_tiny"], vocab_size=len(tokens))
  w = random_llama(c, 1.0, 0.5, 0.1)
  m, tensors, _ = convert(c, w, "F32", keep=False)
  m.update(meta)
  m["tokenizer.chat_template"] = CHATML_TEMPLATE
  m["tokenizer.ggml.eos_token_id"] = tokens.index("<|im_end|>")
  write_gguf(out, m, tensors)


if __name__ == "__main__":
  if sys.argv[1:2] == ["make"] and len(sys.argv) == 5:
    make(sys.argv[2], sys.argv[3], sys.argv[4])
  elif sys.argv[1:2] == ["tokenizer"] and len(sys.argv) == 4:
    tokenizer(sys.argv[2], sys.argv[3])
  elif sys.argv[1:2] == ["chat"] and len(sys.argv) == 4:
    chat(sys.argv[2], sys.argv[3])
  elif sys.argv[1:2] == ["bench"] and len(sys.argv) == 6:
    bench(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
  else:
    print(__doc__)
    sys.exit(2)
