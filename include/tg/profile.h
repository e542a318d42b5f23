// The profiler: a trace of what the library did, in the Chrome trace-event JSON format that Perfetto
// (https://ui.perfetto.dev) and chrome://tracing open. Each kernel is a span on its device's row (with its ops,
// bytes, GFLOP/s, GB/s and opts), and each compile, copy, schedule and TinyJit replay a span on the row of the
// thread that did it, so a training step can be looked at whole.
//
//   PROFILE=1 ./build/bin/beautiful_mnist        records the whole run and writes the trace when the process ends:
//                                                 to PROFILE_PATH, else $TMPDIR/tinygrad_cpp_profile.json (or /tmp)
//   tg::profile::start(); ...; tg::profile::save("step.json");   the same from code, for a part of a run
//
// Recording costs a clock read and a lock per event, and nothing while off. A trace keeps at most kMaxEvents
// events; later ones are counted as dropped (the file says how many).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tg/error.h"

namespace tg::profile {

using Clock = std::chrono::steady_clock;
inline constexpr size_t kMaxEvents = size_t{1} << 21;

// Whether events are being recorded: after start() and before stop(), or from the first event on when the
// environment has PROFILE=1 (read once).
bool enabled();
void start();
void stop();
// Forgets the events recorded so far.
void clear();
// Writes the events recorded so far to `path` (they stay recorded); returns how many. Raises tg::ArgumentError
// naming the path and the caller's line when it cannot be written.
size_t save(const std::string& path, SourceLocation where = SourceLocation::current());

// One span: `name` on the row `lane` ("" for the calling thread's row), from `begin` to `end`. `args` are shown
// beside it (values are written as JSON numbers when they parse as numbers, else as strings).
void record(std::string name, const char* category, Clock::time_point begin, Clock::time_point end, std::string lane = "",
            std::vector<std::pair<std::string, std::string>> args = {});

// A span of the calling thread from construction to destruction (nothing when the profiler is off):
//   { tg::profile::Span s("data loading"); ... }
class Span {
 public:
  explicit Span(std::string name, const char* category = "user");
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  void arg(std::string key, std::string value);  // shown beside the span

 private:
  bool on_;
  std::string name_;
  const char* category_;
  Clock::time_point begin_;
  std::vector<std::pair<std::string, std::string>> args_;
};

}  // namespace tg::profile
