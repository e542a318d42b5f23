// A seeded fuzzer of the Tensor API: random programs (a creation, then a chain of random calls with random shapes,
// dtypes and arguments: huge, negative and empty sizes, axes out of range, mismatched operands), inside and outside
// NoGradGuard and TrainGuard, some of them realized. Every call either works or raises a tg::Error; nothing else is
// thrown, nothing crashes (CI runs this under ASan and UBSan), no result has a negative or oversized shape, and a
// creation with a negative size is never accepted. TG_FUZZ_PROGRAMS and TG_FUZZ_SEED run it longer or elsewhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>

#include <tg/tg.h>

using namespace tg;

namespace {

struct Counts {
  int64_t calls = 0, errors = 0, realized = 0, foreign = 0, bad_shapes = 0, unnamed = 0;
};

class ApiFuzzer {
 public:
  explicit ApiFuzzer(uint64_t seed) : rng_(seed) {}

  int64_t pick(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  bool chance(int one_in) { return pick(one_in) == 0; }

  int64_t size() {
    static const int64_t huge[] = {int64_t{1} << 21, int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62, INT64_MAX,
                                   INT64_MIN, -1, -7};
    if (chance(25)) return huge[pick(8)];
    if (chance(12)) return 0;
    return 1 + pick(5);
  }
  Shape shape() {
    Shape s(static_cast<size_t>(pick(5)));
    for (int64_t& d : s) d = size();
    return s;
  }
  DType dtype() {
    static const DType all[] = {dtypes::float32, dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::float64,
                                dtypes::int32,   dtypes::int8,    dtypes::uint8,   dtypes::int64,    dtypes::bool_,
                                dtypes::fp8e4m3, dtypes::fp8e5m2fnuz};
    return all[pick(std::size(all))];
  }
  int64_t axis(const Tensor& t) { return chance(8) ? pick(9) - 4 : (t.ndim() ? pick(t.ndim()) : 0); }
  int64_t small() { return chance(10) ? size() : pick(4); }

  Tensor create() {
    Shape s = shape();
    DType dt = dtype();
    switch (pick(10)) {
      case 0: return Tensor::zeros(s, dt);
      case 1: return Tensor::full(s, double(pick(9)) - 4, dt);
      case 2: return Tensor::rand(s);
      case 3: return Tensor::randn(s, chance(2) ? dtypes::float32 : dt);
      case 4: return Tensor::arange(double(pick(7)) - 2, double(size()), chance(3) ? 0.5 : double(pick(3)) + 1);
      case 5: return Tensor::eye(size(), chance(2) ? -1 : size(), dt);
      case 6: return Tensor::empty(s, dt);
      case 7: return Tensor::randint(s, -3, int64_t(pick(5)) + 1, chance(2) ? dtypes::int32 : dt);
      case 8: {
        std::vector<float> v(static_cast<size_t>(pick(30)));
        for (size_t i = 0; i < v.size(); i++) v[i] = float(i) - 3;
        return Tensor(v, s);
      }
      default: return Tensor::linspace(0, 1, small(), dt);
    }
  }

  // a second operand: broadcastable to x, or not
  Tensor other(const Tensor& x) {
    if (chance(4)) return create();
    Shape s = x.shape();
    for (int64_t& d : s)
      if (chance(3)) d = 1;
    if (!s.empty() && chance(3)) s.erase(s.begin());
    return Tensor::rand(s).cast(chance(2) ? x.dtype() : dtype());
  }

  Tensor step(const Tensor& x) {
    switch (pick(40)) {
      case 0: return x + other(x);
      case 1: return x * other(x);
      case 2: return x / other(x);
      case 3: return x.exp().log().sqrt();
      case 4: return x.sum(axis(x), chance(2));
      case 5: return x.max(axis(x));
      case 6: return x.mean();
      case 7: return x.reshape(shape());
      case 8: return x.reshape({-1});
      case 9: {
        std::vector<int64_t> order(static_cast<size_t>(x.ndim()));
        for (size_t i = 0; i < order.size(); i++) order[i] = int64_t(i);
        std::shuffle(order.begin(), order.end(), rng_);
        if (chance(6) && !order.empty()) order[0] = pick(9) - 4;
        return x.permute(order);
      }
      case 10: return x.expand(shape());
      case 11: {
        std::vector<std::pair<int64_t, int64_t>> p;
        for (int64_t i = 0; i < x.ndim(); i++) p.push_back({small() - 1, small() - 1});
        return x.pad(p, double(pick(3)));
      }
      case 12: {
        std::vector<std::pair<int64_t, int64_t>> r;
        for (int64_t d : x.shape()) r.push_back({pick(2), d - pick(2)});
        if (chance(5) && !r.empty()) r[0].second = size();
        return x.shrink(r);
      }
      case 13: return x.flip(axis(x));
      case 14: return x.cast(dtype());
      case 15: return x.transpose(axis(x), axis(x));
      case 16: return x.unsqueeze(axis(x)).squeeze();
      case 17: return x.flatten(axis(x));
      case 18: return x.matmul(other(x));
      case 19: return x.softmax(axis(x));
      case 20: return x.cumsum(axis(x));
      case 21: return x.argmax(axis(x));
      case 22: return x.repeat(shape());
      case 23: return Tensor::cat({x, other(x)}, axis(x));
      case 24: return x[{Tensor::randint({3}, -2, 4)}];
      case 25: return x.gather(axis(x), Tensor::randint(x.shape(), -1, 3));
      case 26: return x.one_hot(small());
      case 27: return x.sort(axis(x)).first;
      case 28: return x.max_pool2d(chance(4) ? Ints(std::vector<int64_t>{}) : Ints(small()));
      case 29: return x.avg_pool2d(chance(4) ? Ints(std::vector<int64_t>{}) : Ints(small()), Ints(small()));
      case 30: return x.conv2d(Tensor::rand({small(), small(), small(), small()}), std::nullopt, 1, Ints(small()), 1,
                               Ints(small()));
      case 31: return x.where(other(x), 1.5f);
      case 32: return x.clip(-1.0, 1.0).relu().sigmoid();
      case 33: return x.pow(other(x));
      case 34: return x.bitcast(dtype());
      case 35: return x.roll({small()}, {axis(x)});
      case 36: return x.split(small(), axis(x)).back();
      case 37: return x.interpolate(shape());
      case 38: return x.topk(small(), axis(x)).first;
      default: return x.contiguous().realize();
    }
  }

  // one call: works (true) or raises a tg::Error (false); anything else fails the test
  bool attempt(Counts& c, const std::function<void()>& f) {
    c.calls++;
    try {
      f();
      return true;
    } catch (const Error& e) {
      c.errors++;
      if (e.op().empty() || (e.is_user_error() && !e.where().line())) {
        c.unnamed++;  // a user error names the op and the user's line
        ADD_FAILURE() << "an error without its op or the user's line: " << e.what();
      }
    } catch (const std::exception& e) {
      c.foreign++;
      ADD_FAILURE() << "a call raised something other than tg::Error: " << e.what();
    }
    return false;
  }

  void program(Counts& c) {
    std::optional<NoGradGuard> no_grad;
    std::optional<TrainGuard> train;
    if (chance(3)) no_grad.emplace();
    if (chance(3)) train.emplace();
    Tensor x;
    if (!attempt(c, [&] { x = create(); })) return;
    for (int64_t n = pick(5); n >= 0; n--) {
      Tensor y;
      if (!attempt(c, [&] { y = step(x); })) continue;
      for (int64_t d : y.shape())
        if (d < 0) c.bad_shapes++;
      if (y.numel() < 0 || y.numel() > (int64_t{1} << 60)) c.bad_shapes++;
      x = y;
    }
    if (x.numel() <= 4096 && chance(4) && attempt(c, [&] { x.to_bytes(); })) c.realized++;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(ApiFuzz, EveryCallWorksOrRaisesATgError) {
  const char* n_env = std::getenv("TG_FUZZ_PROGRAMS");
  const char* seed_env = std::getenv("TG_FUZZ_SEED");
  int64_t programs = n_env ? std::atoll(n_env) : 300;
  uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261123;
  ApiFuzzer fz(seed);
  Counts c;
  for (int64_t i = 0; i < programs; i++) fz.program(c);
  std::printf("api fuzz (seed %llu): %lld programs, %lld calls, %lld tg::Errors (%lld without op or line), %lld realized, "
              "%lld other exceptions, %lld bad shapes\n", static_cast<unsigned long long>(seed),
              static_cast<long long>(programs), static_cast<long long>(c.calls), static_cast<long long>(c.errors),
              static_cast<long long>(c.unnamed), static_cast<long long>(c.realized), static_cast<long long>(c.foreign),
              static_cast<long long>(c.bad_shapes));
  EXPECT_EQ(c.foreign, 0);
  EXPECT_EQ(c.bad_shapes, 0);
  EXPECT_EQ(c.unnamed, 0);
  EXPECT_GT(c.errors, 0);             // the fuzzer does reach the error paths
  EXPECT_GT(c.calls - c.errors, 0);   // and the working ones
}

// Every creation with a negative size raises; none is silently accepted.
TEST(ApiFuzz, NegativeSizesAreNeverAccepted) {
  for (int64_t bad : {int64_t{-1}, int64_t{-7}, INT64_MIN}) {
    Shape s{2, bad};
    EXPECT_THROW(Tensor::zeros(s), ShapeError);
    EXPECT_THROW(Tensor::empty(s), ShapeError);
    EXPECT_THROW(Tensor::rand(s), ShapeError);
    EXPECT_THROW(Tensor::randn(s), ShapeError);
    EXPECT_THROW(Tensor::randint(s, 0, 3), ShapeError);
    EXPECT_THROW(Tensor::ones({3}).reshape(s), ShapeError);
    if (bad != -1) {  // -1 keeps a dimension, as in tinygrad
      EXPECT_THROW(Tensor::ones({1, 1}).expand(s), ShapeError);
    }
    EXPECT_THROW(Tensor::eye(bad), ArgumentError);
    EXPECT_THROW(Tensor::linspace(0, 1, bad), ArgumentError);
    EXPECT_THROW(Tensor::randperm(bad), ArgumentError);
  }
}

// Pools with an empty kernel or a non-positive size or stride raise (one of them used to run for minutes).
TEST(ApiFuzz, PoolArgumentsAreChecked) {
  Tensor x = Tensor::rand({1, 1, 4, 4});
  EXPECT_THROW(x.max_pool2d(Ints(std::vector<int64_t>{})), ArgumentError);
  EXPECT_THROW(x.avg_pool2d(Ints(std::vector<int64_t>{})), ArgumentError);
  EXPECT_THROW(x.max_pool2d(Ints(0)), ArgumentError);
  EXPECT_THROW(x.avg_pool2d(Ints(2), Ints(0)), ArgumentError);
  EXPECT_THROW(x.max_pool2d(Ints(-2)), ArgumentError);
  EXPECT_THROW(x.max_pool2d(Ints(2), Ints(2), Ints(0)), ArgumentError);
  EXPECT_THROW(x.max_pool2d(Ints(int64_t{1} << 62), Ints(1), Ints(int64_t{1} << 62)), ArgumentError);  // no overflow
}

}  // namespace
