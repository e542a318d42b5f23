// A persistent pool of worker threads for the CPU device: a kernel's outermost loop is cut into one range per
// thread, and the calling thread runs one of them itself. Workers are created once (on first need) and sleep
// between launches; nothing is created per launch.
#pragma once
#include <cstddef>
#include <functional>

namespace tg::runtime {

// Threads a CPU kernel may use: CPU_THREADS if set (>= 1), else every core.
size_t cpu_threads();

// Runs task(0) ... task(n - 1), spread over the pool and the caller, and returns when all are done. Calls from
// several threads at once take turns.
void parallel_for(size_t n, const std::function<void(size_t)>& task);

}  // namespace tg::runtime
