// The machine's limits, so every other figure can be read as a share of them: the float32 FMA peak (one core and
// every core) and the copy bandwidth of every core together.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench.h"
#include "runtime/device.h"

namespace tg::bench {

namespace {

// Independent FMA chains in the widest vectors the CPU has, compiled by the CPU device's own compiler and flags
// (what our kernels could reach): enough chains to cover the FMA units' latency times their count (Zen 5, Ice Lake
// and later: 2 units x 4 cycles), few enough to stay in registers (10 x 2 ymm halves with AVX2)
constexpr int kChains = 10;

int vector_lanes() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx2")) return 8;
#endif
  return 4;
}

std::string fma_source(int lanes) {
  std::string n = std::to_string(lanes), src = "typedef float v __attribute__((vector_size(" + std::to_string(4 * lanes) + ")));\n";
  src += "static inline __attribute__((always_inline)) v fma_v(v a, v b, v c) {\n#pragma clang fp contract(fast)\n  return a * b + c;\n}\n";
  src += "void tg_peak_fma(void* const* bufs, const long long* vars) {\n  float* io = (float*)bufs[0];\n  v b = (v){} + io[0], c = (v){} + io[1];\n";
  for (int i = 0; i < kChains; i++) src += "  v a" + std::to_string(i) + " = (v){} + io[" + std::to_string(2 + i) + "];\n";
  src += "  for (long long k = 0; k < vars[0]; k++) {\n";
  for (int i = 0; i < kChains; i++) src += "    a" + std::to_string(i) + " = fma_v(a" + std::to_string(i) + ", b, c);\n";
  src += "  }\n  v s = a0";
  for (int i = 1; i < kChains; i++) src += " + a" + std::to_string(i);
  src += ";\n  for (int l = 0; l < " + n + "; l++) io[0] += s[l];\n}\n";
  return src;
}

// Chains of AVX512-BF16's vdpbf16ps (32 bfloat16 products added per instruction: the bfloat16 matmul's limit,
// CStyleLanguage::bf16_pair_dot), as the CPU device compiles them; io[0] -1 where -march=native has no AVX512-BF16.
// 16 lanes, and more chains than the FMAs' (its latency is longer: on 2 cores of an AMD EPYC with AVX512-BF16,
// 10 chains reached 850 GFLOP/s, 16 reached 1037, twice the float32 FMA peak).
constexpr int kDotChains = 16;
std::string bf16_dot_source() {
  std::string src = "typedef float v __attribute__((vector_size(64)));\ntypedef unsigned short h __attribute__((vector_size(64)));\n";
  src += "void tg_peak_bf16(void* const* bufs, const long long* vars) {\n  float* io = (float*)bufs[0];\n#if defined(__AVX512BF16__)\n";
  src += "  h b = (h){} + (unsigned short)0x3f80, c = (h){} + (unsigned short)0x3380;\n";  // 1.0 and 2^-24
  for (int i = 0; i < kDotChains; i++) src += "  v a" + std::to_string(i) + " = (v){} + io[" + std::to_string(2 + i) + "];\n";
  src += "  for (long long k = 0; k < vars[0]; k++) {\n";
  for (int i = 0; i < kDotChains; i++)
    src += "    __asm__(\"vdpbf16ps %2, %1, %0\" : \"+v\"(a" + std::to_string(i) + ") : \"v\"(b), \"v\"(c));\n";
  src += "  }\n  v s = a0";
  for (int i = 1; i < kDotChains; i++) src += " + a" + std::to_string(i);
  src += ";\n  for (int l = 0; l < 16; l++) io[0] += s[l];\n#else\n  io[0] = -1;\n#endif\n}\n";
  return src;
}

// GFLOP/s of `threads` threads each running `iters` iterations of the chains (each step of a chain `flops`),
// median of `reps`
double chains_gflops(runtime::Program& fma, double flops, int threads, int64_t iters, int64_t reps, int chains = kChains) {
  std::vector<double> ts;
  for (int64_t r = 0; r < reps; r++) {
    std::vector<std::vector<float>> io(static_cast<size_t>(threads), std::vector<float>(2 + static_cast<size_t>(chains), 1.0f));
    for (auto& v : io) v[0] = 0.999999f, v[1] = 1e-7f;
    double t0 = now_s();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
      pool.emplace_back([&, t] {
        void* bufs[1] = {io[static_cast<size_t>(t)].data()};
        fma(bufs, &iters);
      });
    for (auto& th : pool) th.join();
    ts.push_back(now_s() - t0);
  }
  return static_cast<double>(threads) * static_cast<double>(iters) * chains * flops / median(ts) / 1e9;
}

// GB/s (bytes read plus bytes written) of `threads` threads each copying its slice of `bytes`, median of `reps`
double copy_gbs(size_t bytes, int threads, int64_t reps) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  size_t part = bytes / static_cast<size_t>(threads);
  std::vector<double> ts;
  for (int64_t r = 0; r < reps + 1; r++) {
    double t0 = now_s();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
      pool.emplace_back([&, t] { std::memcpy(dst.data() + t * part, src.data() + t * part, part); });
    for (auto& th : pool) th.join();
    if (r > 0) ts.push_back(now_s() - t0);  // the first pass maps dst's pages
  }
  return 2.0 * static_cast<double>(part * static_cast<size_t>(threads)) / median(ts) / 1e9;
}

}  // namespace

int peak(const Args& args) {
  int threads = static_cast<int>(std::max<unsigned>(1, std::thread::hardware_concurrency()));
  int64_t iters = args.get("--iters", 20000000), reps = args.get("--reps", 5);
  int lanes = vector_lanes();
  std::shared_ptr<runtime::Program> fma = runtime::get_device("CPU").program("tg_peak_fma", fma_source(lanes));
  double one = chains_gflops(*fma, 2.0 * lanes, 1, iters, reps), all = chains_gflops(*fma, 2.0 * lanes, threads, iters, reps);
  std::printf("{\"name\": \"fma_peak\", \"shape\": \"float32 x%d, 1 core\", \"gflops\": %.1f}\n", lanes, one);
  std::printf("{\"name\": \"fma_peak\", \"shape\": \"float32 x%d, %d cores\", \"gflops\": %.1f}\n", lanes, threads, all);
  std::shared_ptr<runtime::Program> dot = runtime::get_device("CPU").program("tg_peak_bf16", bf16_dot_source());
  std::vector<float> probe(2 + kDotChains, 0.0f);
  void* probe_bufs[1] = {probe.data()};
  int64_t one_iter = 1;
  (*dot)(probe_bufs, &one_iter, {}, false);
  if (probe[0] >= 0)  // 16 lanes x 2 products, a multiply and an add each
    std::printf("{\"name\": \"bf16_dot_peak\", \"shape\": \"bfloat16 pairs x16, %d cores\", \"gflops\": %.1f}\n", threads,
                chains_gflops(*dot, 64.0, threads, iters, reps, kDotChains));
  std::printf("{\"name\": \"copy_bandwidth\", \"shape\": \"256 MiB, %d cores\", \"gbs\": %.1f}\n", threads,
              copy_gbs(size_t{256} << 20, threads, reps));
  return 0;
}

}  // namespace tg::bench
