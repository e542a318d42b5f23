// The decoder skeleton GPT-2 and LLaMA share (tinygrad's Transformer in extra/models): embeddings, then per block
// attention over a key/value cache and a feed-forward branch, each added to the residual stream, then the head.
// An architecture (gpt2.cpp, llama.cpp) fills in the pieces that differ; the cache and the attention live here.
#include <cmath>
#include <limits>

#include "models/models.h"

namespace tg::llm {

void Transformer::allocate_cache(int64_t batch, int64_t max_context, Loc where) {
  if (max_context == 0) max_context = config_.max_context;
  if (batch < 1 || max_context < 1 || max_context > config_.max_context)
    throw ArgumentError(kOp, "cache of batch " + std::to_string(batch) + " and context " + std::to_string(max_context) +
                                 ": needs batch >= 1 and 1 <= context <= the model's " + std::to_string(config_.max_context),
                        where);
  cache_k_.clear(), cache_v_.clear();
  for (int64_t i = 0; i < config_.n_layers; i++)
    for (auto* cache : {&cache_k_, &cache_v_})
      cache->push_back(Tensor::zeros({batch, config_.n_kv_heads, max_context, config_.head_dim}, dtypes::float32, device_)
                           .contiguous()
                           .realize());
  cache_batch_ = batch, cache_context_ = max_context;
}

Tensor Transformer::forward(const Tensor& tokens, int64_t start_pos, bool last_only, Loc where) {
  if (tokens.ndim() != 2) throw ShapeError(kOp, "tokens must be (batch, length), not " + shape_str(tokens.shape()), where);
  if (cache_context_ == 0) allocate_cache(tokens.shape()[0], 0, where);
  int64_t count = tokens.shape()[1];
  if (start_pos < 0 || count < 1 || start_pos + count > cache_context_)
    throw ArgumentError(kOp, std::to_string(count) + " tokens at position " + std::to_string(start_pos) +
                                 " do not fit the cache's context of " + std::to_string(cache_context_), where);
  return run(tokens, Positions{start_pos, count, std::nullopt}, last_only, where);
}

Tensor Transformer::logits(const Tensor& tokens, Loc where) {
  if (tokens.ndim() != 2 || tokens.shape()[1] < 1 || tokens.shape()[1] > config_.max_context)
    throw ShapeError(kOp, "tokens must be (batch, length) with 1 <= length <= " + std::to_string(config_.max_context) +
                              ", not " + shape_str(tokens.shape()), where);
  return run(tokens, Positions{0, tokens.shape()[1], std::nullopt, false}, false, where);
}

Tensor Transformer::decode(const Tensor& tokens, const Tensor& pos, Loc where) {
  return decode_at(tokens, pos, std::nullopt, std::nullopt, where);
}

Tensor Transformer::decode(const Tensor& tokens, const Tensor& pos, const Dim& start_pos, Loc where) {
  return decode_at(tokens, pos, start_pos, std::nullopt, where);
}

Tensor Transformer::decode_chunk(const Tensor& tokens, const Tensor& pos, const Dim& start_pos, const Tensor& last, Loc where) {
  if (last.ndim() != 0 || last.dtype() != dtypes::int32)
    throw ArgumentError(kOp + std::string(" decode_chunk"), "last must be a 0-d int32 tensor", where);
  return decode_at(tokens, pos, start_pos, last, where);
}

Tensor Transformer::decode_at(const Tensor& tokens, const Tensor& pos, const std::optional<Dim>& start_pos,
                              const std::optional<Tensor>& last, Loc where) {
  const std::string op = kOp + std::string(last ? " decode_chunk" : " decode");
  if (tokens.ndim() != 2 || tokens.shape()[1] < 1 || (!last && tokens.shape()[1] != 1))
    throw ShapeError(op, std::string("tokens must be (batch, ") + (last ? "length" : "1") + "), not " + shape_str(tokens.shape()), where);
  if (pos.ndim() != 0 || pos.dtype() != dtypes::int32) throw ArgumentError(op, "pos must be a 0-d int32 tensor", where);
  if (cache_context_ == 0) allocate_cache(tokens.shape()[0], 0, where);
  const int64_t T = tokens.shape()[1];
  if (start_pos && (start_pos->min() < 0 || start_pos->max() + T > cache_context_))
    throw ArgumentError(op, "start_pos " + start_pos->str() + " ranges over [" + std::to_string(start_pos->min()) + ", " +
                                std::to_string(start_pos->max()) + "]: " + std::to_string(T) + " tokens from there pass the cache's " +
                                std::to_string(cache_context_) + " positions", where);
  Tensor at = pos + Tensor::arange(0, static_cast<double>(T), 1, dtypes::int32, pos.device());
  return run(tokens, Positions{0, T, at, true, start_pos, last}, true, where).reshape({tokens.shape()[0], config_.vocab_size});
}

Tensor Transformer::run(const Tensor& tokens, const Positions& p, bool last_only, Loc where) {
  if (!tokens.dtype().is_int()) throw DTypeError(kOp, "tokens must be integers, not " + tokens.dtype().name(), where);
  if (p.cached && tokens.shape()[0] != cache_batch_)
    throw ShapeError(kOp, "a batch of " + std::to_string(tokens.shape()[0]) + " sequences, but the cache holds " +
                              std::to_string(cache_batch_), where);
  Tensor h = embed(tokens, p);
  for (size_t layer = 0; layer < static_cast<size_t>(config_.n_layers); layer++) {
    // the residual stream realized after each branch (tinygrad's llama does so too): fused into the next matmul it
    // would be recomputed, through every earlier layer's adds, for each of the matmul's output columns
    h = (h + attention_output(layer, attend(layer, attention_inputs(layer, h, p), p, where))).contiguous();
    h = (h + feed_forward(layer, h)).contiguous();
  }
  if (p.last) {  // the row at index last, of a count known only when the kernels run
    Tensor row = Tensor::arange(0, static_cast<double>(p.count), 1, dtypes::int32, h.device()) == *p.last;
    h = row.reshape({1, p.count, 1}).where(h, 0.0f).sum(1, true);
  } else if (last_only && p.count > 1) {
    h = h.shrink({{0, h.shape()[0]}, {p.count - 1, p.count}, {0, h.shape()[2]}});
  }
  return head(h);
}

// softmax(q k^T / sqrt(head_dim)) v over the cached positions up to each query's own. The new keys and values are
// written into the cache first (in place, where the positions are known when building; realized, as tinygrad's
// llama does), so the attention reads one buffer.
Tensor Transformer::attend(size_t layer, const QKV& x, const Positions& p, Loc where) {
  const int64_t B = x.q.shape()[0], C = cache_context_, KV = config_.n_kv_heads, D = config_.head_dim, T = p.count;
  Tensor q = x.q.transpose(1, 2), k = x.k.transpose(1, 2), v = x.v.transpose(1, 2);  // (B, heads, T, D)
  auto positions = [&](int64_t begin, int64_t end) {  // int32 [begin, end)
    return Tensor::arange(static_cast<double>(begin), static_cast<double>(end), 1, dtypes::int32, q.device());
  };
  if (!p.cached) return attention(q, k, v, positions(0, T).reshape({1, T}) <= positions(0, T).reshape({T, 1}));
  Tensor slot = positions(0, C).reshape({1, 1, C, 1});
  Tensor& ck = cache_k_[layer];
  Tensor& cv = cache_v_[layer];
  int64_t seen;  // how many cached positions the attention reads
  Tensor mask;   // (T, seen): query i sees key j
  if (p.at_symbolic) {  // decode at a bound position: its rows written in place, then only the rows so far are read
    const Dim& at = *p.at_symbolic;
    DimRanges written{{0, B}, {0, KV}, {at, at + T}, {0, D}}, rows{{0, B}, {0, KV}, {0, at + T}, {0, D}};
    ck.shrink(written).assign(k);
    cv.shrink(written).assign(v);
    // one query sees every row so far; of several, query i sees the rows up to at + i
    if (T > 1) mask = (slot.reshape({1, C}) <= p.at->reshape({T, 1})).shrink({{0, T}, {0, at + T}});
    return attention(q, ck.shrink(rows), cv.shrink(rows), mask);
  }
  if (p.at) {  // decode: one position, known only when the kernels run: the cache rewritten where the slot is it
    Tensor here = slot == *p.at;
    ck.assign(here.where(k, ck));
    cv.assign(here.where(v, cv));
    Tensor::realize({ck, cv});
    seen = C;
    mask = slot.reshape({1, C}) <= *p.at;
  } else {  // rows start .. start + T written in place
    ck.shrink({{0, B}, {0, KV}, {p.start, p.start + T}, {0, D}}).assign(k);
    cv.shrink({{0, B}, {0, KV}, {p.start, p.start + T}, {0, D}}).assign(v);
    seen = p.start + T;
    mask = positions(0, seen).reshape({1, seen}) <= positions(p.start, seen).reshape({T, 1});
  }
  std::vector<std::pair<int64_t, int64_t>> rows{{0, B}, {0, KV}, {0, seen}, {0, D}};
  return attention(q, ck.shrink(rows), cv.shrink(rows), mask);
}

// q (B, H, T, D) against keys and values (B, KV, seen, D); query i sees key j where mask (T, seen) holds (every key
// without a mask; seen may be symbolic)
Tensor Transformer::attention(const Tensor& q, Tensor keys, Tensor values, const Tensor& mask) const {
  const int64_t B = q.shape()[0], H = config_.n_heads, KV = config_.n_kv_heads, D = config_.head_dim, T = q.shape()[2];
  const int64_t G = H / KV;  // grouped-query attention: each key/value head serves G query heads
  const Dim seen = keys.sym_shape()[2];
  // those G heads are an axis of their own, (B, KV, G, T, D) against keys and values (B, KV, 1, seen, D), so a
  // kernel can read each key and value row once for all G (an axis the row does not depend on, which the opts
  // block in registers) rather than once per head
  Tensor grouped = q.reshape({B, KV, G, T, D});
  keys = keys.reshape({B, KV, 1, seen, D}), values = values.reshape({B, KV, 1, seen, D});
  Tensor scores = grouped.matmul(keys.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(D)));
  if (mask.defined()) scores = mask.where(scores, -std::numeric_limits<double>::infinity());
  // softmax with its exponentials stored: the sum and the product with the values read them (fused into that
  // product, each was a scalar exp2 per head and position, which made it the slowest attention kernel)
  Tensor e = (scores - scores.max(-1, true)).exp().contiguous();
  Tensor out = (e / e.sum(-1, true)).matmul(values).reshape({B, H, T, D});
  // stored as (B, T, H, D): the output projection then reads each row's values as one run (read through the
  // transposed view, its K loop would jump T * D floats per head; PROMPT=128 bench/gguf.sh)
  return out.transpose(1, 2).contiguous().reshape({B, T, H * D});
}

}  // namespace tg::llm
