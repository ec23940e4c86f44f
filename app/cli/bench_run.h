#pragma once
// What both halves of `tinyscope bench` (bench.cpp for the host devices, bench_gpu.cpp for VULKAN) time a workload by.
#include <chrono>
#include <functional>
#include <string>

#include "engine/tensor/tensor.h"

namespace tscli {

using clk = std::chrono::steady_clock;
double seconds_since(clk::time_point t0);

// One realize of a freshly built graph: its wall time and its kernels' own times, read from the call log.
struct RealizeRun {
  double wall = 0;     // build + realize
  double kernels = 0;  // the sum of the kernels' times
  int nkernels = 0;
  std::string each;    // "name 12.3 us, ..." of every kernel, in order
  // "name: Register Count 157, ...; ..." of every kernel whose device's compiler reported figures (empty: none did)
  std::string compiled;
};
RealizeRun realize_timed(const std::function<ts::Tensor()>& build, ts::Tensor* out = nullptr);

struct MeasuredLimits;
// Writes the limits just measured to the limits cache (limits_cache.h) and prints where; `required` (bench --limits):
// a cache that cannot be written is an error (thrown), else a line says so and the bench goes on.
void save_measured_limits(const MeasuredLimits& l, bool required);

}  // namespace tscli
