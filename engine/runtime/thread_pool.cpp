#include "engine/runtime/thread_pool.h"

#include <chrono>

#include "engine/codegen/opt.h"

namespace ts {

ThreadPool::ThreadPool(int workers) : poll_(workers + 1 <= static_cast<int>(std::thread::hardware_concurrency())) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

// A worker polls for the next launch for a while before it sleeps: a program's kernels come back to back, and waking
// a sleeping thread costs more than a small kernel runs (on this kind of virtual machine the second core's share began
// about 80 us after the first core's when its thread slept, within 2 us when it polled). Only when the pool's threads
// fit the cores.
void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock lk(mu_);
  for (;;) {
    if (poll_ && generation_ == seen && !stop_) {
      lk.unlock();
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (generation_.load(std::memory_order_acquire) == seen && !stop_.load(std::memory_order_relaxed) &&
             std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      lk.lock();
    }
    work_cv_.wait(lk, [&] { return stop_ || (generation_ != seen && next_ < total_); });
    if (stop_) return;
    seen = generation_;
    while (next_ < total_) {
      int i = next_++;
      const auto* fn = fn_;
      lk.unlock();
      try {
        (*fn)(i);
      } catch (...) {
        std::lock_guard g(mu_);
        if (!error_) error_ = std::current_exception();
      }
      lk.lock();
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  if (n == 1 || threads_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard run(run_mu_);
  std::unique_lock lk(mu_);
  fn_ = &fn;
  next_ = 0;
  total_ = n;
  pending_ = n;
  error_ = nullptr;
  ++generation_;
  work_cv_.notify_all();
  // the caller helps too
  while (next_ < total_) {
    int i = next_++;
    lk.unlock();
    try {
      fn(i);
    } catch (...) {
      std::lock_guard g(mu_);
      if (!error_) error_ = std::current_exception();
    }
    lk.lock();
    --pending_;
  }
  done_cv_.wait(lk, [&] { return pending_ == 0; });
  fn_ = nullptr;
  total_ = 0;
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

ThreadPool& cpu_thread_pool() {
  static ThreadPool* pool = new ThreadPool(std::max(0, num_cpu_threads() - 1));  // + the calling thread
  return *pool;
}

}  // namespace ts
