// Random numbers: Threefry-2x32 (20 rounds, Salmon et al. 2011) over a counter, computed on the device.
//
// The key (seed, call number) is read from a small buffer, not baked into the kernel as constants, so every call
// of rand with the same shape reuses one compiled kernel.
#include <chrono>
#include <mutex>

#include "tensor/tensor_impl.h"

namespace tg {

namespace {

struct RngState {
  std::mutex mu;
  uint64_t seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  uint64_t calls = 0;
};
RngState& rng() {
  static RngState s;
  return s;
}

Tensor rotl(const Tensor& x, int r) { return (x << r) | (x >> (32 - r)); }

// threefry2x32_20(counter = (x0, 0), key = (k0, k1)), first word
Tensor threefry(Tensor x0, const Tensor& k0, const Tensor& k1) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const Tensor ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 = x0 + ks[0];
  Tensor x1 = k1.expand(x0.shape());
  for (uint32_t i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) {
      x0 = x0 + x1;
      x1 = rotl(x1, kRot[(i % 2) * 4 + j]) ^ x0;
    }
    x0 = x0 + ks[(i + 1) % 3];
    x1 = x1 + ks[(i + 2) % 3] + (i + 1);
  }
  return x0;
}

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard lock(rng().mu);
  rng().seed = seed;
  rng().calls = 0;
}

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  tensor::check_shape(shape, "rand", where);
  tensor::check_value_dtype(dtype, "rand", where);
  if (!dtype.is_float()) throw DTypeError("rand", "needs a float dtype, not " + dtype.name(), where);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n > UINT32_MAX) throw ArgumentError("rand", "at most 2^32 numbers per call, asked for " + std::to_string(n), where);
  uint32_t key[2];
  {
    std::lock_guard lock(rng().mu);
    key[0] = static_cast<uint32_t>(rng().seed) ^ static_cast<uint32_t>(rng().seed >> 32);
    key[1] = static_cast<uint32_t>(rng().calls++);
  }
  std::string dev = tensor::resolve_device(device);
  if (n == 0) return Tensor::zeros(shape, dtype, dev, where);
  Tensor k(std::vector<uint32_t>{key[0], key[1]}, {2}, dev);
  Tensor counts = Tensor::arange(0, static_cast<double>(n), 1, dtypes::uint32, dev);
  Tensor bits = threefry(counts, k.shrink({{0, 1}}).reshape({}), k.shrink({{1, 2}}).reshape({}));
  // the top bits as a float in [0, 1), as many as the dtype holds exactly, so rounding never gives 1.0
  int mant = dtype == dtypes::float16 ? 11 : dtype == dtypes::bfloat16 ? 8 : 24;
  Tensor u = (bits >> (32 - mant)).cast(dtypes::float32) * static_cast<float>(1.0 / static_cast<double>(1u << mant));
  return u.reshape(shape, where).cast(dtype, where);
}

}  // namespace tg
