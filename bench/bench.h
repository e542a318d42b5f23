// Shared helpers of tg_bench: argument parsing, timing, JSON lines.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace tg::bench {

struct Args {
  std::vector<std::string> v;
  Args(int argc, char** argv) : v(argv, argv + argc) {}
  int64_t get(const std::string& flag, int64_t fallback) const {
    for (size_t i = 0; i + 1 < v.size(); i++)
      if (v[i] == flag) return std::atoll(v[i + 1].c_str());
    return fallback;
  }
};

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0 : xs[xs.size() / 2];
}

int symbolic(const Args& args);
int shapetracker(const Args& args);
int overhead(const Args& args);
int schedule_time(const Args& args);
int compile_time(const Args& args);
int first_result(const Args& args);
int mlp_backward(const Args& args);
int matmul(const Args& args);
int conv(const Args& args);
int elementwise(const Args& args);
int copy(const Args& args);
int reduce(const Args& args);
int softmax(const Args& args);
int sort(const Args& args);
int mnist_step(const Args& args);
int peak(const Args& args);
int mpi_allreduce(const Args& args);

}  // namespace tg::bench
