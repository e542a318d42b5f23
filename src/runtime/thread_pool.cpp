#include "runtime/thread_pool.h"

#include <atomic>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/util.h"
#include "tg/context.h"

namespace tg::runtime {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Tasks are claimed from one atomic word, (generation << 32) | next task. A launch first publishes its generation
// with no task claimable (kClosed), then writes the job, then opens it at task 0: a worker still holding an older
// generation fails its claim, so it can neither run a task twice nor count one for the wrong launch.
class Pool {
  static constexpr uint64_t kClosed = 0xffffffffu;

 public:
  void run(size_t threads, size_t n, const std::function<void(size_t)>& task) {
    std::lock_guard turn(launch_mu_);  // one launch at a time
    while (workers_.size() + 1 < threads) workers_.emplace_back([this, id = workers_.size()] { work(id); });
    uint64_t gen = (claim_.load() >> 32) + 1;
    claim_.store(gen << 32 | kClosed);
    task_.store(&task), n_.store(n), done_.store(0), helpers_.store(threads - 1);
    claim_.store(gen << 32);
    if (sleepers_.load() > 0) {
      std::lock_guard lock(mu_);
      wake_.notify_all();
    }
    drain(gen, kCaller);
    // the other threads are running the last tasks: short waits, so spin rather than sleep
    for (int spins = 0; done_.load() < n; spins++) spins < 4096 ? cpu_relax() : std::this_thread::yield();
  }

 private:
  static constexpr size_t kCaller = SIZE_MAX;

  // claim and run tasks of generation `gen` until none is left or a newer launch has begun; worker `id` takes part
  // only when the launch wants that many helpers
  void drain(uint64_t gen, size_t id) {
    uint64_t s = claim_.load();
    while (s >> 32 == gen) {
      uint64_t i = s & kClosed;
      if (i == kClosed) {  // the launch is writing its job
        cpu_relax();
        s = claim_.load();
        continue;
      }
      const std::function<void(size_t)>* task = task_.load();
      size_t n = n_.load();
      if (i >= n || (id != kCaller && id >= helpers_.load())) return;
      if (!claim_.compare_exchange_weak(s, s + 1)) continue;  // s reloaded
      (*task)(static_cast<size_t>(i));
      done_.fetch_add(1);
      s = claim_.load();
    }
  }

  void work(size_t id) {
    uint64_t seen = 0;
    while (true) {
      static const base::IntSetting spin_us("CPU_SPIN_US", 1000);
      auto spin = std::chrono::microseconds(spin_us.get());
      // kernels of a step come back to back: waiting awake a little while saves the wake-up of a sleeping thread
      // (tens of microseconds, more on a virtual machine) on the next launch
      auto until = std::chrono::steady_clock::now() + spin;
      for (int i = 0; claim_.load() >> 32 == seen; i++) {
        cpu_relax();
        if (i % 256 == 0 && std::chrono::steady_clock::now() > until) {
          std::unique_lock lock(mu_);
          sleepers_.fetch_add(1);
          wake_.wait(lock, [&] { return claim_.load() >> 32 != seen; });
          sleepers_.fetch_sub(1);
        }
      }
      seen = claim_.load() >> 32;
      drain(seen, id);
    }
  }

  std::mutex launch_mu_, mu_;
  std::condition_variable wake_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> claim_{0};
  std::atomic<const std::function<void(size_t)>*> task_{nullptr};
  std::atomic<size_t> n_{0}, done_{0}, helpers_{0};
  std::atomic<int> sleepers_{0};
};

Pool& pool() {
  // never destroyed: workers sleep in it until the process ends
  static Pool* p = new Pool();
  return *p;
}

}  // namespace

size_t cpu_threads() {
  int64_t n = getenv_int("CPU_THREADS", 0);
  if (n >= 1) return static_cast<size_t>(n);
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

void parallel_for(size_t threads, size_t n, const std::function<void(size_t)>& task) {
  if (n == 0) return;
  if (threads <= 1 || n == 1) {
    for (size_t i = 0; i < n; i++) task(i);
    return;
  }
  pool().run(threads, n, task);
}

}  // namespace tg::runtime
