#include "engine/runtime/program_runner.h"

#include <chrono>
#include <mutex>
#include <vector>

#include "engine/runtime/interp/interpreter.h"
#include "engine/runtime/interp/provenance.h"
#include "engine/runtime/thread_pool.h"
#include "engine/uop/buffer.h"
#include "engine/uop/error.h"

namespace ts {

void run_program(const ProgramSpec& spec, KernelEntry entry, std::span<void*> bufs, std::span<const int64_t> vars) {
  if (static_cast<int>(bufs.size()) < spec.num_buffers)
    throw Error("run_program " + spec.name + ": needs " + std::to_string(spec.num_buffers) + " buffers, got " + std::to_string(bufs.size()));
  if (vars.size() < spec.vars.size())
    throw Error("run_program " + spec.name + ": needs " + std::to_string(spec.vars.size()) + " variable values, got " + std::to_string(vars.size()));
  int threads = std::max(1, spec.threads);
  if (!entry && recording_provenance()) {  // (interp/provenance.h: asked once per launch)
    Provenance launch;
    launch.kernel = spec.name;
    std::mutex mu;
    cpu_thread_pool().parallel_for(threads, [&](int core) {
      Provenance mine;
      interpret_core(spec, bufs, vars, core, &mine);
      std::lock_guard lk(mu);
      launch.merge(std::move(mine));
    });
    keep_provenance(std::move(launch));
    return;
  }
  if (!entry) {
    cpu_thread_pool().parallel_for(threads, [&](int core) { interpret_core(spec, bufs, vars, core); });
    return;
  }
  std::vector<long long> v(vars.begin(), vars.end());
  v.push_back(0);  // never an empty array
  cpu_thread_pool().parallel_for(threads, [&](int core) { entry(bufs.data(), v.data(), core); });
}

double run_host(const ProgramSpec& spec, KernelEntry entry, std::span<Buffer* const> bufs, std::span<const int64_t> vars) {
  std::vector<void*> ptrs;
  for (Buffer* b : bufs) {
    if (!b->ptr && b->nbytes()) throw Error("kernel " + spec.name + ": a buffer on " + b->device + " is not in host memory");
    ptrs.push_back(b->ptr);
  }
  auto t0 = std::chrono::steady_clock::now();
  run_program(spec, entry, std::span<void*>(ptrs), vars);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ts
