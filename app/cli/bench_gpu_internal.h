#pragma once
// What bench_gpu.cpp and bench_gpu_limits.cpp share (private to them): figures, input patterns, the hand-written limits
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/limits_cache.h"
#include "engine/runtime/vulkan/vulkan.h"

namespace tscli {

// a figure's median and its spread (min-max) over the timed runs
struct Stats {
  double median = 0, lo = 0, hi = 0;
};
inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v.front(), v.back()};
}
inline std::string spread(const Stats& s, double scale, const char* unit) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%9.1f %s (%.1f-%.1f)", s.median * scale, unit, s.lo * scale, s.hi * scale);
  return buf;
}

struct Limit {
  std::string name;
  std::optional<Stats> value;  // per second: bytes or flops
  std::string check;
};

inline float pat_a(int64_t i) { return static_cast<float>(i % 16) * 0.0625f; }
inline float pat_b(int64_t i) { return static_cast<float>(i % 7) * 0.125f; }
// matmul operands: small multiples of 1/4, so every product and every partial sum of 4096 of them is exact in fp32
inline float mat_a(int64_t i, int64_t k) { return static_cast<float>((i + 2 * k) % 9 - 4) * 0.25f; }
inline float mat_b(int64_t k, int64_t j) { return static_cast<float>((3 * k + j) % 7 - 3) * 0.25f; }

struct Sizes {
  int64_t n_vec = 0;  // elements of the add and sum inputs
  int64_t n_mat = 0;  // matmul side
};

// the vec4 add on fresh buffers (bench_gpu_limits.cpp)
Limit hand_add(ts::vk::Context& ctx, const std::vector<float>& ha, const std::vector<float>& hb, int reps);

// The floor of the engine's 200-kernel chain: 200 dependent dispatches of a hand-written shader, recorded once, each
// after a barrier, ping-ponging two 1024-float buffers. Per dispatch, the wall time from submit to fence: with a
// timestamp pair around each dispatch (what the engine records to show kernel times) and without, with a pipeline or
// an output buffer per link, in pieces, and in the engine's shape.
struct ChainFloor {
  Stats wall_ts, wall_plain, wall_distinct;  // the last: each link its own pipeline (its constant compiled in), as the engine's
  Stats wall_buffers;                          // untimed, each link writing a buffer of its own (as the engine's intermediates)
  Stats wall_pieces;                           // untimed, in command buffers of 8, 16, then 32 links (as the engine submits them)
  Stats own;                                   // the timed variant's per-dispatch times from its timestamps, summed / 200
  Stats wall_engine, own_engine;               // the link in the engine's shape: untimed wall, and timed own time
  std::string check;
};
ChainFloor hand_chain(ts::vk::Context& ctx, int reps);

// A hand-written tensor-core matmul's tiling: a bm x bn tile of C a work group of wm x wn subgroups of 32 lanes, bk deep
// a block, in matrices of tm x tn x tk (a shape the device lists)
struct CoopmatTiling {
  int64_t bm, bn, bk, wm, wn, tm, tn, tk;
  std::string name() const;  // "matmul_coopmat_128x128x64_w2x4_16x8x16"
};
// the fp16 (bf16: bf16) matmul of one tiling, fp32 accumulators and C (C = A B, n x n, n the push constant; a work group
// per tile, x along C's columns); `khr`: KHR cooperative matrices (the SPIR-V rewrite; bf16 needs it), else NV's
// (bench_coopmat.cpp)
std::string coopmat_matmul_source(const CoopmatTiling& t, bool khr, bool bf16 = false);
// the tensor cores' rate with no memory in the way: 128 lanes a work group, each subgroup 16 multiply-adds of t's
// shape a round for `iters` rounds, on fragments loaded once; its results go to binding 0, which holds 256 x 16 x tm x tn
// floats (bench_coopmat.cpp)
std::string coopmat_rate_source(const CoopmatTiling& t, bool khr, int64_t iters);

// the limits in a fixed order ([0] add, [1] sum, [2] fp32 matmul, [3] fp16 matmul, [4] bf16 matmul); those `wanted` refuses
// are not run
// (bench_gpu_limits.cpp)
std::vector<Limit> hand_written(ts::vk::Context& ctx, const Sizes& z, int reps, const std::function<bool(const std::string&)>& wanted);
// the hand-written limits as the limits cache keeps them, or none when the add or the fp32 matmul is missing
std::optional<MeasuredLimits> gpu_limits_entry(const ts::vk::DeviceInfo& info, const Sizes& z, const std::vector<Limit>& limits);

}  // namespace tscli
