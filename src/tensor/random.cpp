// Random numbers: Threefry-2x32 (20 rounds, Salmon et al. 2011) over a counter, computed on the device.
//
// The key (seed, call number) lives in a 2-element buffer per device, not in the kernel as constants: every call
// of rand with the same shape reuses one compiled kernel. Each call reads the key's buffer and advances the call
// number with a kernel (realized at once), so a TinyJit replay, which runs the captured kernels again without the
// host code, draws new numbers every time.
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "multi/multi.h"
#include "tensor/tensor_impl.h"

namespace tg {

namespace {

struct RngState {
  std::mutex mu;
  uint32_t seed_word = fold(static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()));
  std::map<std::string, Tensor> keys;  // per device: (seed word, call number), uint32
  static uint32_t fold(uint64_t seed) { return static_cast<uint32_t>(seed) ^ static_cast<uint32_t>(seed >> 32); }
};
RngState& rng() {
  static RngState* s = new RngState();  // never destroyed: its buffers must not outlive the devices at exit
  return *s;
}

// This call's key on `dev` (a realized 2-element buffer), advancing the device's call number for the next call.
Tensor next_key(const std::string& dev) {
  auto realizing = detail::realize_lock();  // taken first, as a TinyJit call that draws numbers takes them
  std::lock_guard lock(rng().mu);
  auto it = rng().keys.find(dev);
  if (it == rng().keys.end())
    it = rng().keys.emplace(dev, Tensor(std::vector<uint32_t>{rng().seed_word, 0u}, {2}, dev)).first;
  Tensor& state = it->second;
  Tensor key(state.uop());  // the current value, which the assign below does not change
  state.assign(state + Tensor::arange(0, 2, 1, dtypes::uint32, dev)).realize();  // (seed, n) -> (seed, n + 1)
  return key;
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
  rng().seed_word = RngState::fold(seed);
  rng().keys.clear();  // every device starts again at call 0 with the new seed
}

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  tensor::check_shape(shape, "rand", where);
  tensor::check_value_dtype(dtype, "rand", where);
  if (!dtype.is_float()) throw DTypeError("rand", "needs a float dtype, not " + dtype.name(), where);
  int64_t n = tensor::prod(shape);
  if (n > UINT32_MAX) throw ArgumentError("rand", "at most 2^32 numbers per call, asked for " + std::to_string(n), where);
  std::string dev = tensor::resolve_device(device);
  if (n == 0) return Tensor::zeros(shape, dtype, dev, where);
  // for several devices: drawn on the first, the same numbers on each
  if (multi::is_multi(dev)) return rand(shape, dtype, multi::split_devices(dev)[0], where).to(dev, where);
  Tensor k = next_key(dev);
  Tensor counts = Tensor::arange(0, static_cast<double>(n), 1, dtypes::uint32, dev);
  Tensor bits = threefry(counts, k.shrink({{0, 1}}).reshape({}), k.shrink({{1, 2}}).reshape({}));
  // the top bits as a float in [0, 1), as many as the dtype holds exactly, so rounding never gives 1.0
  int mant = dtype == dtypes::float16 ? 11 : dtype == dtypes::bfloat16 ? 8 : !dtype.is_fp8() ? 24
             : dtype == dtypes::fp8e4m3 || dtype == dtypes::fp8e4m3fnuz ? 4 : 3;
  Tensor u = (bits >> (32 - mant)).cast(dtypes::float32) * static_cast<float>(1.0 / static_cast<double>(1u << mant));
  return u.reshape(shape, where).cast(dtype, where);
}

namespace {

void check_float(const Shape& shape, DType dt, const char* op, SourceLocation where) {
  tensor::check_shape(shape, op, where);
  tensor::check_value_dtype(dt, op, where);
  if (!dt.is_float()) throw DTypeError(op, "needs a float dtype, not " + dt.name(), where);
}

// fan_in of a weight shape (out, in, k...): prod(shape[1:])
double fan_in(const Shape& shape, const char* op, SourceLocation where) {
  if (shape.size() < 2) throw ShapeError(op, "needs a weight shape of at least 2 dimensions, got " + tensor::shape_str(shape), where);
  tensor::check_shape(shape, op, where);
  return static_cast<double>(tensor::prod(Shape(shape.begin() + 1, shape.end())));
}

}  // namespace

Tensor Tensor::rand_like(std::optional<DType> dt, Loc where) const { return rand(shape(), dt.value_or(dtype()), device(), where); }
Tensor Tensor::randn_like(std::optional<DType> dt, Loc where) const { return randn(shape(), dt.value_or(dtype()), device(), where); }

Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  check_float(shape, dtype, "randn", where);
  // Box-Muller: sqrt(-2 ln(1 - u1)) * cos(2 pi u2), in float32
  Tensor u1 = rand(shape, dtypes::float32, device, where), u2 = rand(shape, dtypes::float32, device, where);
  return ((1.0 - u1).log() * -2.0).sqrt().mul((u2 * (2 * M_PI)).cos(), where).cast(dtype, where);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype, const std::string& device, Loc where) {
  tensor::check_shape(shape, "randint", where);
  tensor::check_value_dtype(dtype, "randint", where);
  if (!dtype.is_int()) throw DTypeError("randint", "needs an integer dtype, not " + dtype.name(), where);
  if (low >= high)
    throw ArgumentError("randint", "needs low < high, got [" + std::to_string(low) + ", " + std::to_string(high) + ")", where);
  Tensor u = rand(shape, dtypes::float64, device, where);
  Tensor r = (u * static_cast<double>(high - low)).cast(dtypes::int64).minimum(high - low - 1) + low;
  return r.cast(dtype, where);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std, DType dtype, const std::string& device, Loc where) {
  check_float(shape, dtype, "normal", where);
  if (!(std >= 0) && tensor::prod(shape) > 0)  // as PyTorch (an empty tensor draws nothing: kaiming of a (4, 0) weight)
    throw ArgumentError("normal", "needs std >= 0, got " + tensor::num_str(std), where);
  return (randn(shape, dtypes::float32, device, where) * std + mean).cast(dtype, where);
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype, const std::string& device, Loc where) {
  check_float(shape, dtype, "uniform", where);
  if ((!(low <= high) || !std::isfinite(high - low)) && tensor::prod(shape) > 0)  // as PyTorch: a finite [low, high)
    throw ArgumentError("uniform", "needs low <= high, both finite, got [" + tensor::num_str(low) + ", " +
                                       tensor::num_str(high) + ")", where);
  return (rand(shape, dtypes::float32, device, where) * (high - low) + low).cast(dtype, where);
}

Tensor Tensor::scaled_uniform(const Shape& shape, DType dtype, const std::string& device, Loc where) try {
  tensor::check_shape(shape, "scaled_uniform", where);
  double n = static_cast<double>(tensor::prod(shape));
  return uniform(shape, -1, 1, dtype, device, where).mul(1 / std::sqrt(std::max(n, 1.0)), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scaled_uniform", where);
}

Tensor Tensor::glorot_uniform(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  double bound = std::sqrt(6.0 / (static_cast<double>(shape.empty() ? 1 : shape[0]) + fan_in(shape, "glorot_uniform", where)));
  return uniform(shape, -bound, bound, dtype, device, where);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, DType dtype, const std::string& device, Loc where) {
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + a * a)) / std::sqrt(fan_in(shape, "kaiming_uniform", where));
  return uniform(shape, -bound, bound, dtype, device, where);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, DType dtype, const std::string& device, Loc where) {
  double std = std::sqrt(2.0 / (1 + a * a)) / std::sqrt(fan_in(shape, "kaiming_normal", where));
  return normal(shape, 0, std, dtype, device, where);
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Loc where) const try {
  if (ndim() < 1 || ndim() > 2) throw ShapeError("multinomial", "needs a 1-d or 2-d tensor of weights, got shape " + tensor::shape_str(shape()), where);
  if (num_samples <= 0) throw ArgumentError("multinomial", "num_samples must be positive, got " + std::to_string(num_samples), where);
  Tensor w = (ndim() == 1 ? unsqueeze(0, where) : *this).cast(least_upper_float(dtype()), where);
  int64_t rows = w.shape()[0], n = w.shape()[1];
  if (!replacement && num_samples > n)
    throw ArgumentError("multinomial", "cannot draw " + std::to_string(num_samples) + " samples without replacement from " +
                                           std::to_string(n) + " categories", where);
  Tensor idx;
  if (replacement || num_samples == 1) {
    // the first category whose cumulative weight passes a uniform draw: how many CDF values the draw is at or above
    Tensor cw = w.cumsum(1, where), cdf = cw / cw[{Slice(), -1}].unsqueeze(1);
    Tensor u = Tensor::rand({num_samples, rows, 1}, dtypes::float32, device(), where);
    idx = (u >= cdf.cast(dtypes::float32).unsqueeze(0)).sum(2, false, dtypes::int32, where).permute({1, 0}, where);
    idx = idx.minimum(static_cast<int32_t>(n - 1), where);  // u just below 1 against a CDF that rounds short of it
  } else {
    // the num_samples largest log(u) / w: a weighted sample without replacement (zero weights give -inf keys)
    idx = (Tensor::rand(w.shape(), dtypes::float32, device(), where).log2() / w.cast(dtypes::float32)).topk(num_samples, 1, true, true, where).second;
  }
  return ndim() == 1 ? idx.squeeze(0, where) : idx;
} catch (const Error& e) {
  tensor::rethrow_in(e, "multinomial", where);
}

}  // namespace tg
