#pragma once
// A small persistent thread pool for running a kernel's core_ids in parallel (the reference's CPU worker threads).
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ts {

class ThreadPool {
 public:
  explicit ThreadPool(int workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // runs fn(0..n-1), spread over the workers and the calling thread; returns when all are done.
  // The first exception thrown by fn is rethrown here.
  void parallel_for(int n, const std::function<void(int)>& fn);
  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  void worker_loop();
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  int next_ = 0, total_ = 0, pending_ = 0;
  // written under mu_; atomic because polling workers read them without it (see worker_loop)
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  bool poll_ = false;  // the workers and the caller fit the machine's cores (more polling threads than cores would
                       // take the cores from the ones with work)
  std::exception_ptr error_;
  std::mutex run_mu_;  // one parallel_for at a time
};

// the process-wide pool: NUM_CPU_THREADS workers (default 8)
ThreadPool& cpu_thread_pool();

}  // namespace ts
