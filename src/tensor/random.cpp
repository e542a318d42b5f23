// Random numbers: tinygrad's stream, bit for bit. Each device has a key (a word of SHA-256 of its place among the
// devices drawn on, and the seed) and a 64-bit counter of the 32-bit words drawn so far. A call of n words derives
// its own key by Threefry-2x32 (20 rounds, Salmon et al. 2011) of the counter, then takes Threefry of the counter
// pairs (i, i + n/2) under that key: the first words of every pair, then the second words.
//
// The key and the counter live in device buffers, not in the kernel as constants: every call of rand with the same
// shape reuses one compiled kernel. Each call advances the counter with a kernel (realized at once), so a TinyJit
// replay, which runs the captured kernels again without the host code, draws new numbers every time.
#include <bit>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "base/util.h"
#include "multi/multi.h"
#include "tensor/tensor_impl.h"

namespace tg {

namespace {

struct DeviceStream {
  Tensor key;      // uint32 (SHA-256 word, seed)
  Tensor counter;  // uint32 (low, high): the words drawn so far
};
struct RngState {
  std::mutex mu;
  uint32_t seed = static_cast<uint32_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::map<std::string, DeviceStream> devices;
};
RngState& rng() {
  static RngState* s = new RngState();  // never destroyed: its buffers must not outlive the devices at exit
  return *s;
}

// The device's key and its counter before this call (realized buffers); the counter advances by `words`.
std::pair<Tensor, Tensor> next_counter(const std::string& dev, uint64_t words) {
  auto realizing = detail::realize_lock();  // taken first, as a TinyJit call that draws numbers takes them
  std::lock_guard lock(rng().mu);
  auto it = rng().devices.find(dev);
  if (it == rng().devices.end()) {
    // the low word of SHA-256 of the device's place (4 bytes, big-endian), read as a big-endian number
    uint32_t place = static_cast<uint32_t>(rng().devices.size());
    const unsigned char be[4] = {static_cast<unsigned char>(place >> 24), static_cast<unsigned char>(place >> 16),
                                 static_cast<unsigned char>(place >> 8), static_cast<unsigned char>(place)};
    std::array<unsigned char, 32> d = base::sha256(be, 4);
    uint32_t word = uint32_t{d[28]} << 24 | uint32_t{d[29]} << 16 | uint32_t{d[30]} << 8 | d[31];
    it = rng().devices.emplace(dev, DeviceStream{Tensor(std::vector<uint32_t>{word, rng().seed}, {2}, dev),
                                                 Tensor(std::vector<uint32_t>{0u, 0u}, {2}, dev)}).first;
  }
  Tensor& c = it->second.counter;
  Tensor start(c.uop());  // the current value, which the assign below does not change
  Tensor old_low = c.shrink({{0, 1}}), low = old_low + static_cast<uint32_t>(words);
  Tensor high = c.shrink({{1, 2}}) + static_cast<uint32_t>(words >> 32) + (low < old_low).cast(dtypes::uint32);
  c.assign(Tensor::cat({low, high})).realize();
  return {it->second.key, start};
}

Tensor rotl(const Tensor& x, int r) { return (x << r) | (x >> (32 - r)); }

// threefry2x32_20(key = (k0, k1), counter = (x0, x1)): both words
std::pair<Tensor, Tensor> threefry(Tensor x0, Tensor x1, const Tensor& k0, const Tensor& k1) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const Tensor ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 = x0 + ks[0];
  x1 = x1 + ks[1];
  for (uint32_t i = 0; i < 5; i++) {
    for (int j = 0; j < 4; j++) {
      x0 = x0 + x1;
      x1 = rotl(x1, kRot[(i % 2) * 4 + j]) ^ x0;
    }
    x0 = x0 + ks[(i + 1) % 3];
    x1 = x1 + ks[(i + 2) % 3] + (i + 1);
  }
  return {x0, x1};
}

Tensor word(const Tensor& pair, int64_t i) { return pair.shrink({{i, i + 1}}).reshape({}); }

// `words` random uint32s from the device's stream
Tensor random_bits(const std::string& dev, int64_t words) {
  auto [key, start] = next_counter(dev, static_cast<uint64_t>(words));
  auto [k0, k1] = threefry(word(start, 0), word(start, 1), word(key, 0), word(key, 1));
  int64_t half = (words + 1) / 2;
  Tensor first = Tensor::arange(0, static_cast<double>(half), 1, dtypes::uint32, dev);
  auto [b0, b1] = threefry(first, first + static_cast<uint32_t>(half), k0, k1);
  return Tensor::cat({b0, b1}).shrink({{0, words}});
}

// the bits of 1.0 and the mantissa's width in a float dtype
std::pair<uint64_t, int> one_and_mantissa(DType dt) {
  if (dt == dtypes::float64) return {std::bit_cast<uint64_t>(1.0), 52};
  if (dt == dtypes::float32) return {std::bit_cast<uint32_t>(1.0f), 23};
  if (dt == dtypes::float16) return {float_to_half_bits(1.0f), 10};
  if (dt == dtypes::bfloat16) return {float_to_bf16_bits(1.0f), 7};
  return {double_to_fp8_bits(1.0, dt), fp8_format(dt).mant_bits};
}

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard lock(rng().mu);
  rng().seed = static_cast<uint32_t>(seed);  // the low word, as tinygrad's uint32 key holds it
  rng().devices.clear();  // every device starts again at its first draw with the new seed
}

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  tensor::check_shape(shape, "rand", where);
  tensor::check_value_dtype(dtype, "rand", where);
  if (!dtype.is_float()) throw DTypeError("rand", "needs a float dtype, not " + dtype.name(), where);
  int64_t n = tensor::prod(shape), size = static_cast<int64_t>(dtype.itemsize());
  if (n > (int64_t{UINT32_MAX} * 4 / size))
    throw ArgumentError("rand", "at most 2^32 - 1 random words (4 bytes each) per call, asked for " + std::to_string(n) + " " +
                                    dtype.name() + " numbers", where);
  std::string dev = tensor::resolve_device(device);
  if (n == 0) return Tensor::zeros(shape, dtype, dev, where);
  // for several devices: drawn on the first, the same numbers on each
  if (multi::is_multi(dev)) return rand(shape, dtype, multi::split_devices(dev)[0], where).to(dev, where);
  Tensor bits = random_bits(dev, (n * size + 3) / 4);
  // the top mantissa bits under the exponent of 1.0: a number in [1, 2), minus 1
  auto [one, mant] = one_and_mantissa(dtype);
  DType u = size == 8 ? dtypes::uint64 : size == 2 ? dtypes::uint16 : size == 1 ? dtypes::uint8 : dtypes::uint32;
  Tensor ub = size == 4 ? bits : bits.bitcast(u);
  Tensor in_1_2 = ((ub >> (8 * static_cast<int>(size) - mant)) | Tensor(one, u, dev)).bitcast(dtype);
  return (in_1_2.shrink({{0, n}}) - 1).reshape(shape, where);
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
  // Box-Muller over one draw of 2 x shape, in float32, in tinygrad's order: cos(2 pi u0) * sqrt(-2 ln(1 - u1))
  Shape both = shape;
  both.insert(both.begin(), 2);
  Tensor u = rand(both, dtypes::float32, device, where);
  Tensor u0 = u[{0}], u1 = u[{1}];
  return (u0 * (2 * M_PI)).cos().mul(((1.0 - u1).log() * -2.0).sqrt(), where).cast(dtype, where);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype, const std::string& device, Loc where) {
  tensor::check_shape(shape, "randint", where);
  tensor::check_value_dtype(dtype, "randint", where);
  if (!dtype.is_int()) throw DTypeError("randint", "needs an integer dtype, not " + dtype.name(), where);
  if (low >= high)
    throw ArgumentError("randint", "needs low < high, got [" + std::to_string(low) + ", " + std::to_string(high) + ")", where);
  // tinygrad's float32 draw where it resolves every value of the range, else a float64 one; the minimum keeps a
  // product rounded up to the range's size inside it
  double range = static_cast<double>(high - low);
  Tensor u = rand(shape, range <= (1 << 24) ? dtypes::float32 : dtypes::float64, device, where);
  Tensor r = (u * range).cast(dtypes::int64).minimum(high - low - 1) + low;
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
  return (rand(shape, dtypes::float32, device, where) * (high - low)).cast(dtype, where).add(low, where);
}

Tensor Tensor::scaled_uniform(const Shape& shape, DType dtype, const std::string& device, Loc where) try {
  tensor::check_shape(shape, "scaled_uniform", where);
  double n = static_cast<double>(tensor::prod(shape));
  return uniform(shape, -1, 1, dtype, device, where).mul(std::pow(std::max(n, 1.0), -0.5), where);
} catch (const Error& e) {
  tensor::rethrow_in(e, "scaled_uniform", where);
}

Tensor Tensor::glorot_uniform(const Shape& shape, DType dtype, const std::string& device, Loc where) {
  double bound = std::pow(6.0 / (static_cast<double>(shape.empty() ? 1 : shape[0]) + fan_in(shape, "glorot_uniform", where)), 0.5);
  return uniform(shape, -bound, bound, dtype, device, where);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, DType dtype, const std::string& device, Loc where) {
  double bound = std::pow(6.0 / (1 + a * a) / fan_in(shape, "kaiming_uniform", where), 0.5);
  return uniform(shape, -bound, bound, dtype, device, where);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, DType dtype, const std::string& device, Loc where) {
  double std = std::pow(2.0 / (1 + a * a) / fan_in(shape, "kaiming_normal", where), 0.5);
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
