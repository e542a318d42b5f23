// Framework overhead of the lazy Tensor path: launch, schedule, compile, and time to a first result.
#include <cstdio>

#include <tg/tg.h>

#include "bench.h"
#include "engine/realize.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace tg::bench {

namespace {

double process_start_s = now_s();  // set during static initialization, before main

}  // namespace

// Per launch of an already compiled kernel: the whole realize (graph, schedule, run) and the engine alone.
int overhead(const Args& args) {
  int64_t reps = args.get("--reps", 2000);
  Tensor x = Tensor::arange(16).cast(dtypes::float32).contiguous().realize();
  (x + 1).realize();  // compile once
  std::vector<double> full, engine_only;
  for (int64_t i = 0; i < reps; i++) {
    double t0 = now_s();
    (x + 1).realize();
    full.push_back(now_s() - t0);
  }
  schedule::Schedule s = schedule::create_schedule({(x + 1).uop()});
  for (int64_t i = 0; i < reps; i++) {
    double t0 = now_s();
    engine::run_schedule(s);  // a copy: run_schedule consumes its schedule
    engine_only.push_back(now_s() - t0);
  }
  std::printf("{\"name\": \"overhead\", \"what\": \"realize of (x + 1), x of 16 floats, kernel compiled\", \"median_us\": %.2f, \"target_us\": 20}\n",
              median(full) * 1e6);
  std::printf("{\"name\": \"overhead\", \"what\": \"run_schedule of one compiled kernel\", \"median_us\": %.2f}\n", median(engine_only) * 1e6);
  return 0;
}

// Scheduling a graph of N elementwise and reduce ops.
int schedule_time(const Args& args) {
  int64_t n = args.get("--ops", 10000);
  Tensor a = Tensor::rand({64}).realize(), b = Tensor::rand({64}).realize();
  std::vector<double> build, sched;
  size_t items = 0;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now_s();
    Tensor x = a;
    for (int64_t i = 0; i < n; i++) {
      // mostly elementwise, a reduce every 100 ops (broadcast back), so the graph splits into kernels
      if (i % 100 == 99) x = x - x.max(0, true) * 0.5f;
      else x = (i % 3 == 0) ? x * 0.999f + b : (i % 3 == 1 ? x.maximum(b) : x - b * 0.5f);
    }
    double t1 = now_s();
    schedule::Schedule s = schedule::create_schedule({x.uop()});
    sched.push_back(now_s() - t1);
    build.push_back(t1 - t0);
    items = s.items.size();
  }
  std::printf("{\"name\": \"schedule\", \"ops\": %lld, \"kernels\": %zu, \"build_ms\": %.2f, \"schedule_ms\": %.2f, \"target_ms\": 50}\n",
              static_cast<long long>(n), items, median(build) * 1e3, median(sched) * 1e3);
  return 0;
}

// Compile time of fresh kernels (nothing from the caches).
int compile_time(const Args& args) {
  int64_t n = args.get("--kernels", 5);
  Context ctx{{"DISABLE_COMPILER_CACHE", 1}};
  std::vector<double> times;
  Tensor x = Tensor::arange(256).cast(dtypes::float32).contiguous().realize();
  for (int64_t i = 0; i < n; i++) {
    // a distinct constant makes a distinct kernel
    double t0 = now_s();
    ((x * static_cast<float>(i + 1000.5)).exp2() + 1).realize();
    times.push_back(now_s() - t0);
  }
  std::printf("{\"name\": \"compile\", \"kernels\": %lld, \"median_ms_per_kernel\": %.1f}\n", static_cast<long long>(n), median(times) * 1e3);
  return 0;
}

// From process start to the first value read back: a small fused graph. With a warm disk cache nothing compiles;
// "compiled" says how many kernels this process had to compile.
int first_result(const Args&) {
  try {  // DEV names a device that is not here (ctest then reports the run as skipped)
    runtime::get_device(runtime::default_device());
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 77;
  }
  Tensor a = Tensor({{1.0f, 2.0f}, {3.0f, 4.0f}});
  float v = ((a * 2 + 1).sum() / 4).item<float>();
  double t = now_s() - process_start_s;
  const runtime::CompileStats& s = runtime::compile_stats();
  std::printf("{\"name\": \"first_result\", \"value\": %g, \"ms_from_start\": %.1f, \"compiled\": %lld, \"disk_hits\": %lld}\n", v,
              t * 1e3, static_cast<long long>(s.compiled), static_cast<long long>(s.disk_hits));
  return 0;
}

}  // namespace tg::bench
