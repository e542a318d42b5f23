// What the examples' training loops share: settings from the environment, and the progress report (on a terminal a
// bar redrawn every step; otherwise a line every `every` steps and at the last).
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

inline int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}
inline double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

class Progress {
 public:
  Progress(int64_t steps, int64_t every) : steps_(steps), every_(every) {}
  // whether step i (from 0) is one that prints a line (and so the one to measure held-out figures at)
  bool reports(int64_t i) const { return i % every_ == every_ - 1 || i == steps_ - 1; }
  // after step i: `metrics` as "loss: 0.43 test_accuracy: 83.53%"
  void step(int64_t i, const std::string& metrics) const {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (tty_) {
      int width = 30, done = static_cast<int>(width * (i + 1) / steps_);
      std::printf("\r%4lld/%lld [%s%s] %s %6.1fs", static_cast<long long>(i + 1), static_cast<long long>(steps_),
                  std::string(done, '#').c_str(), std::string(width - done, ' ').c_str(), metrics.c_str(), s);
      if (i == steps_ - 1) std::printf("\n");
    } else if (reports(i)) {
      std::printf("step %lld/%lld %s (%.1fs)\n", static_cast<long long>(i + 1), static_cast<long long>(steps_),
                  metrics.c_str(), s);
    }
    std::fflush(stdout);
  }

 private:
  int64_t steps_, every_;
  bool tty_ = isatty(STDOUT_FILENO);
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// printf into a std::string
template <class... A> std::string format(const char* fmt, A... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}
