// Hashing on the device: Keccak (SHA-3 and SHAKE) over the last dimension's bytes, and tinygrad's hash() built
// from SHAKE-128. The state is 25 uint64 lanes per message; the constants (rotation offsets, the pi permutation,
// the round constants) are derived here from the specification's own recurrences
// (https://keccak.team/keccak_specs_summary.html), not copied tables.
#include <array>

#include "tensor/tensor_impl.h"

namespace tg {

namespace {

constexpr int kLanes = 25, kRounds = 24;

struct KeccakConstants {
  std::array<uint64_t, kLanes> rotation{};  // r[x + 5y]
  std::array<int32_t, kLanes> source{};     // the lane that rho-pi moves into lane i
  std::array<uint64_t, kRounds> round{};    // iota's RC[i]
};

const KeccakConstants& keccak_constants() {
  static const KeccakConstants k = [] {
    KeccakConstants c;
    // rho: lane (1, 0) turns by 1, and each step (x, y) -> (y, 2x + 3y) by the next triangular number
    for (int t = 0, x = 1, y = 0; t < 24; t++) {
      c.rotation[static_cast<size_t>(x + 5 * y)] = static_cast<uint64_t>(((t + 1) * (t + 2) / 2) % 64);
      int nx = y, ny = (2 * x + 3 * y) % 5;
      x = nx, y = ny;
    }
    // pi: B[y, 2x + 3y] = A[x, y]
    for (int x = 0; x < 5; x++)
      for (int y = 0; y < 5; y++) c.source[static_cast<size_t>(y + 5 * ((2 * x + 3 * y) % 5))] = x + 5 * y;
    // iota: bit 2^j - 1 of RC[i] is rc(j + 7i), rc(t) the output of the LFSR x^8 + x^6 + x^5 + x^4 + 1
    auto rc = [](int t) {
      uint32_t r = 1;
      for (int i = 0; i < t % 255; i++) {
        r <<= 1;
        if (r & 0x100) r ^= 0x171;
      }
      return static_cast<uint64_t>(r & 1);
    };
    for (int i = 0; i < kRounds; i++)
      for (int j = 0; j < 7; j++) c.round[static_cast<size_t>(i)] |= rc(j + 7 * i) << ((1 << j) - 1);
    return c;
  }();
  return k;
}

// The constants as tensors on a device, made once per keccak call (not per block or round)
struct KeccakTensors {
  Tensor rot, back, source, round;  // round: (24, 25), RC[i] in lane 0 of row i
  explicit KeccakTensors(const std::string& dev) {
    const KeccakConstants& k = keccak_constants();
    rot = Tensor(std::vector<uint64_t>(k.rotation.begin(), k.rotation.end()), {kLanes}, dev);
    back = Tensor(uint64_t{64}, dtypes::uint64, dev) - rot;  // a shift by 64 gives 0: lane 0 turns by 0
    source = Tensor(std::vector<int32_t>(k.source.begin(), k.source.end()), {kLanes}, dev);
    std::vector<uint64_t> rc(kRounds * kLanes, 0);
    for (int i = 0; i < kRounds; i++) rc[static_cast<size_t>(i * kLanes)] = k.round[static_cast<size_t>(i)];
    round = Tensor(rc, {kRounds, kLanes}, dev);
  }
};

// Keccak-f[1600] on states (bs, 25)
Tensor keccak_f(Tensor s, int64_t bs, const KeccakTensors& k) {
  for (int64_t i = 0; i < kRounds; i++) {
    // theta: each lane ^= parity of column x - 1 ^ parity of column x + 1 turned by 1 (lanes as [y][x])
    Tensor a = s.reshape({bs, 5, 5});
    Tensor c = a.shrink({{0, bs}, {0, 1}, {0, 5}});
    for (int64_t y = 1; y < 5; y++) c = c ^ a.shrink({{0, bs}, {y, y + 1}, {0, 5}});
    Tensor right = c.roll({-1}, {2});
    Tensor d = c.roll({1}, {2}) ^ ((right << uint64_t{1}) | (right >> uint64_t{63}));
    s = (a ^ d).reshape({bs, kLanes});
    // rho then pi: every lane turned by its offset, then moved
    s = ((s << k.rot) | (s >> k.back))[{Slice(), k.source}];
    // chi along each row, then iota
    Tensor b = s.reshape({bs, 5, 5});
    s = (b ^ (b.roll({-1}, {2}).bitwise_not() & b.roll({-2}, {2}))).reshape({bs, kLanes});
    s = s ^ k.round.shrink({{i, i + 1}, {0, kLanes}});
  }
  return s;
}

}  // namespace

Tensor Tensor::keccak(int64_t rate, int64_t suffix, int64_t out_bytes, Loc where) const try {
  if (rate <= 0 || rate >= 200 || rate % 8 != 0)
    throw ArgumentError("keccak", "the rate must be a multiple of 8 bytes in (0, 200), got " + std::to_string(rate), where);
  if (suffix < 1 || suffix > 255) throw ArgumentError("keccak", "the domain byte must be in [1, 255], got " + std::to_string(suffix), where);
  if (out_bytes < 1 || out_bytes > rate)
    throw ArgumentError("keccak", "can squeeze 1 to " + std::to_string(rate) + " bytes in one block, not " + std::to_string(out_bytes), where);
  Tensor bytes = ndim() == 0 ? reshape({1}, where) : *this;
  if (bytes.dtype().is_bool()) throw DTypeError("keccak", "hashes bytes; cast bool to uint8 first", where);
  bytes = bytes.bitcast(dtypes::uint8, where);
  Shape lead(bytes.shape().begin(), bytes.shape().end() - 1);
  int64_t n = bytes.shape().back(), bs = tensor::prod(lead);
  // pad10*1 after the domain bits: one suffix byte, zeros, the last byte's top bit; always at least one byte
  int64_t pad = rate - n % rate, blocks = (n + pad) / rate;
  std::vector<uint8_t> tail(static_cast<size_t>(pad), 0);
  tail.front() = static_cast<uint8_t>(suffix);
  tail.back() |= 0x80;
  Tensor msg = Tensor::cat({bytes.reshape({bs, n}, where), Tensor(tail, {1, pad}, device()).expand({bs, pad})}, 1, where);
  Tensor lanes = msg.reshape({bs, blocks, rate}).pad({{0, 0}, {0, 0}, {0, 200 - rate}}).bitcast(dtypes::uint64);
  Tensor s = Tensor::zeros({bs, kLanes}, dtypes::uint64, device());
  KeccakTensors constants(device());
  for (int64_t b = 0; b < blocks; b++)
    s = keccak_f(s ^ lanes.shrink({{0, bs}, {b, b + 1}, {0, kLanes}}).reshape({bs, kLanes}), bs, constants);
  Shape out = lead;
  out.push_back(out_bytes);
  return s.bitcast(dtypes::uint8).shrink({{0, bs}, {0, out_bytes}}).reshape(out, where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "keccak", where);
}

Tensor Tensor::keccak(const std::string& cfg, Loc where) const try {
  if (cfg == "sha3_224") return keccak(144, 0x06, 28, where);
  if (cfg == "sha3_256") return keccak(136, 0x06, 32, where);
  if (cfg == "sha3_384") return keccak(104, 0x06, 48, where);
  if (cfg == "sha3_512") return keccak(72, 0x06, 64, where);
  if (cfg == "shake_128") return keccak(168, 0x1f, 16, where);
  if (cfg == "shake_256") return keccak(136, 0x1f, 32, where);
  throw ArgumentError("keccak", "unknown configuration \"" + cfg + "\" (sha3_224, sha3_256, sha3_384, sha3_512, shake_128, shake_256)", where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "keccak", where);
}

// tinygrad's hash: the bytes in 1 MiB chunks (zero-padded), each chunk's 4 KiB pieces hashed with SHAKE-128 (16
// bytes each) and those 256 digests hashed again; while there is more than one chunk, the chunk digests are
// the next round's data. The first 16 bytes of the last digest.
Tensor Tensor::hash(Loc where) const try {
  constexpr int64_t chunk = int64_t{1} << 20;
  Tensor data = flatten(0, -1, where);
  if (data.dtype().is_bool()) throw DTypeError("hash", "hashes bytes; cast bool to uint8 first", where);
  data = data.bitcast(dtypes::uint8, where);
  auto hash_chunks = [&](const Tensor& d, int64_t chunks) {
    Tensor c = d.pad_to({chunks * chunk}).reshape({chunks * chunk / 4096, 4096}).keccak("shake_128");
    return c.reshape({chunks, -1}).keccak("shake_128").flatten();
  };
  int64_t chunks = (data.numel() + chunk - 1) / chunk;
  while (chunks > 1) {
    data = hash_chunks(data, chunks);
    chunks = (chunks + 65535) / 65536;
  }
  return hash_chunks(data, 1).shrink({{0, 16}});
} catch (const Error& e) {
  tensor::rethrow_in(e, "hash", where);
}

}  // namespace tg
