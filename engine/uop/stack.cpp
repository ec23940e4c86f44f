#include "engine/uop/stack.h"

#include <pthread.h>

#include <cstdint>
#include <exception>
#include <string>

#include "engine/uop/error.h"

namespace ts {

namespace {
struct Job {
  const std::function<void()>* fn;
  std::exception_ptr error;
};
void* trampoline(void* arg) {
  auto* job = static_cast<Job*>(arg);
  try {
    (*job->fn)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}
}  // namespace

void run_with_big_stack(const std::function<void()>& fn, size_t bytes) {
  Job job{&fn, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_t th;
  // fall back to smaller reservations where the address space is limited (ulimit -v, sanitizers)
  int rc = -1;
  for (size_t b = bytes; b >= (size_t{64} << 20); b /= 2) {
    if (pthread_attr_setstacksize(&attr, b) != 0) continue;
    if ((rc = pthread_create(&th, &attr, trampoline, &job)) == 0) break;
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) throw Error("cannot start the engine thread (pthread_create: " + std::to_string(rc) + ")");
  pthread_join(th, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

size_t stack_remaining() {
  thread_local uintptr_t low = [] {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    return reinterpret_cast<uintptr_t>(addr);
  }();
  char here;
  auto p = reinterpret_cast<uintptr_t>(&here);
  return low && p > low ? p - low : SIZE_MAX;
}

}  // namespace ts
