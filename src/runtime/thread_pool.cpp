#include "runtime/thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tg/context.h"

namespace tg::runtime {

namespace {

class Pool {
 public:
  void run(size_t n, const std::function<void(size_t)>& task) {
    std::lock_guard turn(launch_mu_);  // one launch at a time
    while (workers_.size() + 1 < n) workers_.emplace_back([this, id = workers_.size()] { work(id); });
    {
      std::lock_guard lock(mu_);
      task_ = &task;
      n_.store(n);
      next_.store(0);
      done_ = 0;
      generation_++;
    }
    wake_.notify_all();
    drain();
    std::unique_lock lock(mu_);
    finished_.wait(lock, [&] { return done_ == n_; });
    task_ = nullptr;
  }

 private:
  // take tasks until none is left; count each one done
  void drain() {
    size_t i;
    while ((i = next_.fetch_add(1)) < n_) {
      (*task_)(i);
      std::lock_guard lock(mu_);
      if (++done_ == n_) finished_.notify_one();
    }
  }
  void work(size_t) {
    uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
      }
      drain();
    }
  }

  std::mutex launch_mu_, mu_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> workers_;
  const std::function<void(size_t)>* task_ = nullptr;
  size_t done_ = 0;
  std::atomic<size_t> n_{0}, next_{0};  // read by workers outside the lock
  uint64_t generation_ = 0;
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

void parallel_for(size_t n, const std::function<void(size_t)>& task) {
  if (n == 0) return;
  if (n == 1) return task(0);
  pool().run(n, task);
}

}  // namespace tg::runtime
