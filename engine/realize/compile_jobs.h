#pragma once
// One schedule's kernel compiles on worker threads: the calling thread lowers the next kernel while earlier ones
// compile (clang and LLVM take most of a cold run's time). The workers are the process's, started at first use, one
// per core (at most 8), each on a big stack as the engine's thread (LLVM's passes recurse over a kernel's code).
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ts {

class CompileJobs {
 public:
  CompileJobs() = default;
  // waits for the jobs still running (an error in the caller leaves none behind it)
  ~CompileJobs();
  CompileJobs(const CompileJobs&) = delete;
  CompileJobs& operator=(const CompileJobs&) = delete;

  // runs fn on a worker; `order` ranks its failure among the others' (a schedule's item index)
  void start(size_t order, std::function<void()> fn);
  // whether a job has failed so far (the caller stops starting more)
  bool failed() const;
  // waits for every job; the exception of the failed job of the lowest order, or null when none failed
  std::exception_ptr wait();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable done;
    size_t running = 0;
    std::vector<std::pair<size_t, std::exception_ptr>> errors;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace ts
