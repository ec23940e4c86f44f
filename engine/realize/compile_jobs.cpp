#include "engine/realize/compile_jobs.h"

#include <algorithm>
#include <deque>
#include <thread>

#include "engine/uop/stack.h"

namespace ts {
namespace {

constexpr size_t kStackBytes = size_t{512} << 20;  // reserved address space, committed as used

// The workers and their queue, never destroyed: a worker may be waiting for work when the process exits
class Workers {
 public:
  static Workers& get() {
    static Workers* w = new Workers();
    return *w;
  }
  void post(std::function<void()> job) {
    {
      std::lock_guard lk(mu_);
      queue_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  // one per core, at most 8 (the CPU JIT runs one front end at a time, cpu_jit.cpp's frontend_mutex: a compile span in
  // the trace may hold a wait for it)
  Workers() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < std::min(cores, 8u); ++i)
      std::thread([this] { run_with_big_stack([this] { loop(); }, kStackBytes); }).detach();
  }
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [this] { return !queue_.empty(); });
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();  // a job catches its own exceptions (CompileJobs::start)
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
};

}  // namespace

CompileJobs::~CompileJobs() { wait(); }

void CompileJobs::start(size_t order, std::function<void()> fn) {
  {
    std::lock_guard lk(state_->mu);
    ++state_->running;
  }
  Workers::get().post([state = state_, order, fn = std::move(fn)] {
    std::exception_ptr error;
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lk(state->mu);
    if (error) state->errors.emplace_back(order, error);
    if (--state->running == 0) state->done.notify_all();
  });
}

bool CompileJobs::failed() const {
  std::lock_guard lk(state_->mu);
  return !state_->errors.empty();
}

std::exception_ptr CompileJobs::wait() {
  std::unique_lock lk(state_->mu);
  state_->done.wait(lk, [&] { return state_->running == 0; });
  if (state_->errors.empty()) return nullptr;
  return std::min_element(state_->errors.begin(), state_->errors.end(), [](auto& a, auto& b) { return a.first < b.first; })->second;
}

}  // namespace ts
