// Sampling on the device: the next token from logits without bringing them to the host.
//
// A sort of the vocabulary is what a host sampler does; on the device three searches replace it, each a radix
// search that settles a few bits per round with one small reduction kernel over the vocabulary:
//  - top-k: the k-th largest logit, as the largest key t with at least k logits at or above it (keys: the float
//    bits mapped to uint32 in the same order);
//  - top-p: the smallest probability kept, as the largest t (a float's bits) whose tokens at or above it carry at
//    least top_p of the mass;
//  - the draw: the token where the cumulative probability passes u * total, as the largest index t whose tokens
//    before it carry at most that much.
// Each round is a small kernel; under TinyJit they cost less per token than bringing the logits to the host and
// sorting them there.
#include <bit>
#include <cmath>

#include "models/models.h"

namespace tg::llm {

namespace {

constexpr int kDigitBits = 2;     // bits settled per round: 2^kDigitBits - 1 candidates tried in one kernel
constexpr int64_t kLanes = 16;  // the sums over the vocabulary run as this many running sums

// Per row, the largest t in [0, 2^bits) for which passes(candidates) holds. passes maps candidates (rows, C, 1) of
// uint32 to bool (rows, C); it must hold at 0 and be monotone: true up to the answer, false after it.
// Every round runs the same kernels: the answer so far and the round's digit weight are read from buffers (not
// folded into the source as constants), so a search compiles a few kernels, whatever its length.
template <class Passes>
Tensor largest_passing(int64_t rows, int bits, const std::string& device, Passes passes) {
  int rounds = (bits + kDigitBits - 1) / kDigitBits;
  Tensor t = Tensor::zeros({rows, 1}, dtypes::uint32, device).contiguous();
  Tensor weight = Tensor::full({1, 1}, static_cast<double>(1u << (rounds - 1) * kDigitBits), dtypes::uint32, device).contiguous();
  Tensor digits = Tensor::arange(1, 1 << kDigitBits, 1, dtypes::uint32, device).reshape({1, (1 << kDigitBits) - 1});
  for (int r = 0; r < rounds; r++) {
    Tensor ok = passes((t + digits * weight).unsqueeze(-1));
    // the candidates that pass are the digits 1..d of the answer's digit d: their count is d
    t = t + ok.sum(1, true, dtypes::uint32) * weight;
    if (r + 1 < rounds) weight = (weight >> kDigitBits).contiguous();
  }
  return t;
}

// float32 values as uint32 keys in the same order: a positive value's bits with the sign bit set, a negative
// value's bits inverted (-0 counted as +0)
Tensor order_key(const Tensor& x) {
  Tensor bits = (x == 0).where(0.0f, x).bitcast(dtypes::uint32);
  return (bits >= 0x80000000u).where(bits ^ 0xFFFFFFFFu, bits | 0x80000000u);
}

}  // namespace

Sampler::Sampler(SamplingOptions options) : options_(options), rng_(options.seed) {}

Tensor Sampler::draws(const Shape& rows, const std::string& device) {
  std::vector<float> u(static_cast<size_t>(tensor::prod(rows)));
  for (float& v : u) v = static_cast<float>(rng_() >> 40) * 0x1p-24f;  // 24 bits: exact in float32, below 1
  return Tensor(u, rows, device);
}

Tensor Sampler::pick(const Tensor& logits, const Tensor& u, Loc where) const try {
  const Shape& shape = logits.shape();
  if (shape.empty() || shape.back() == 0)
    throw ShapeError("Sampler", "needs logits of shape (..., vocab) with a vocabulary, got " + shape_str(shape), where);
  Shape rows(shape.begin(), shape.end() - 1);
  if (u.shape() != rows)
    throw ShapeError("Sampler", "needs one uniform draw per row of logits " + shape_str(shape) + ", got " + shape_str(u.shape()), where);
  int64_t n = tensor::prod(rows), vocab = shape.back();
  if (vocab > INT32_MAX) throw ArgumentError("Sampler", "a vocabulary of " + std::to_string(vocab) + " tokens is beyond int32", where);
  const std::string& dev = logits.device();
  Tensor x = logits.cast(dtypes::float32).reshape({n, vocab});
  if (options_.temperature <= 0) return x.argmax(1).reshape(rows);
  // The searches' sums over the vocabulary, padded to whole lanes (keys 0, probabilities 0: never counted): as
  // kLanes running sums, then one (a layout the CPU vectorizes; one long sum would be a serial chain of adds).
  const int64_t padded = (vocab + kLanes - 1) / kLanes * kLanes;
  auto pad = [&](const Tensor& t) { return t.pad({{0, 0}, {0, padded - vocab}}).contiguous(); };
  auto total = [&](const Tensor& t) {  // (n, C, padded) -> (n, C)
    return t.reshape({n, t.shape()[1], padded / kLanes, kLanes}).sum(2).sum(2);
  };
  if (options_.top_k > 0 && options_.top_k < vocab) {
    Tensor key = order_key(x), padded_key = pad(key).unsqueeze(1);
    Tensor kth = largest_passing(n, 32, dev, [&](const Tensor& c) { return total((padded_key >= c).cast(dtypes::int32)) >= options_.top_k; });
    x = (key >= kth).where(x, -INFINITY);
  }
  Tensor e = pad(((x - x.max(1, true)) / options_.temperature).exp());  // unnormalized probabilities, the largest 1
  if (options_.top_p < 1) {
    Tensor key = e.bitcast(dtypes::uint32), target = e.sum(1, true) * options_.top_p;
    Tensor edge = largest_passing(n, 31, dev, [&](const Tensor& c) {  // probabilities are >= 0: the sign bit is 0
      return total((key.unsqueeze(1) >= c).where(e.unsqueeze(1), 0.0f)) >= target;
    });
    e = ((key >= edge).where(e, 0.0f)).contiguous();
  }
  Tensor index = Tensor::arange(0, static_cast<double>(padded), 1, dtypes::uint32, dev);
  Tensor goal = e.sum(1, true) * u.cast(dtypes::float32).reshape({n, 1});
  int bits = std::max(1, static_cast<int>(std::bit_width(static_cast<uint64_t>(vocab - 1))));
  Tensor at = largest_passing(n, bits, dev, [&](const Tensor& c) { return total((index < c).where(e.unsqueeze(1), 0.0f)) <= goal; });
  // the last token with a probability at or before it: a draw at the very top can round past the total
  Tensor token = ((index <= at) & (e > 0)).where(index.cast(dtypes::int32), -1).max(1).maximum(0);
  return token.reshape(rows);
} catch (const Error& e) {
  tensor::rethrow_in(e, "Sampler", where);
}

Tensor Sampler::operator()(const Tensor& logits, Loc where) {
  if (logits.ndim() == 0) throw ShapeError("Sampler", "needs logits of shape (..., vocab), got a scalar", where);
  return pick(logits, draws(Shape(logits.shape().begin(), logits.shape().end() - 1), logits.device()), where);
}

int32_t Sampler::operator()(const std::vector<float>& logits, Loc where) {
  Tensor t(logits, {static_cast<int64_t>(logits.size())}, "CPU", where);
  return (*this)(t, where).item<int32_t>();
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace tg::llm
