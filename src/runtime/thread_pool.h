// A persistent pool of worker threads for the CPU device: a kernel's outermost loop is cut into ranges that the
// workers and the calling thread take in turn (a thread that starts late, or is slowed by another process, takes
// fewer). Workers are created once (on first need), wait awake for CPU_SPIN_US (default 1000) microseconds after
// a launch, since the next kernel usually follows at once, then sleep; nothing is created per launch.
#pragma once
#include <cstddef>
#include <functional>

namespace tg::runtime {

// Threads a CPU kernel may use: CPU_THREADS if set (>= 1), else every core.
size_t cpu_threads();

// Runs task(0) ... task(n - 1) on at most `threads` threads (the caller and workers of the pool), and returns
// when all are done. Calls from several threads at once take turns.
void parallel_for(size_t threads, size_t n, const std::function<void(size_t)>& task);

}  // namespace tg::runtime
