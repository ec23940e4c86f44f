// `tinyscope bench --dev VULKAN`: the engine's kernels on a GPU beside what hand-written GLSL reaches on the same
// device in the same run (the practical limit) and the datasheet's figures where the device is known. Every input is
// a pattern (never constants), every output is checked against its closed form, and every figure is a median of the
// kernels' own timestamps with the spread beside it.
#include "app/cli/bench.h"
#include "app/cli/bench_run.h"
#include "app/cli/limits_cache.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/schedule/schedule.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"

namespace tscli {

namespace {


struct Stats {
  double median = 0, lo = 0, hi = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v.front(), v.back()};
}
std::string spread(const Stats& s, double scale, const char* unit) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%9.1f %s (%.1f-%.1f)", s.median * scale, unit, s.lo * scale, s.hi * scale);
  return buf;
}

// ---- hand-written shaders: the practical limits --------------------------------------------------------------------

const char* kAddVec4 = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer O { vec4 o[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 2) readonly buffer B { vec4 b[]; };
layout(push_constant) uniform P { uint n4; uint row; };
void main() {
  uint i = gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x;
  if (i < n4) o[i] = a[i] + b[i];
}
)";

// one work group of 256 sums 64 vec4 per invocation (4 loads in flight, coalesced), subgroup sums, then a second
// dispatch sums the partials
const char* kSumPartial = R"(#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(push_constant) uniform P { uint n4; uint row; };
shared float part[32];
void main() {
  uint g = gl_WorkGroupID.y * (row / 256u) + gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
  uint base = g * 16384u + t;
  vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
  if (base + 16128u < n4) {
    for (uint j = 0u; j < 64u; j += 4u) {
      a0 += a[base + j * 256u];
      a1 += a[base + (j + 1u) * 256u];
      a2 += a[base + (j + 2u) * 256u];
      a3 += a[base + (j + 3u) * 256u];
    }
  } else {
    for (uint j = 0u; j < 64u; j++) {
      uint i = base + j * 256u;
      if (i < n4) a0 += a[i];
    }
  }
  vec4 v = (a0 + a1) + (a2 + a3);
  float s = subgroupAdd((v.x + v.y) + (v.z + v.w));
  if (subgroupElect()) part[gl_SubgroupID] = s;
  barrier();
  if (t == 0u) {
    float r = 0.0;
    for (uint k = 0u; k < gl_NumSubgroups; k++) r += part[k];
    o[g] = r;
  }
}
)";
// a fixed grid (a few work groups per multiprocessor) striding over the whole input, four loads in flight
const char* kSumStride = R"(#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 512) in;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(push_constant) uniform P { uint n4; uint groups; };
shared float part[32];
void main() {
  uint g = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, stride = groups * 512u;
  vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
  uint i = g * 512u + t;
  for (; i + 3u * stride < n4; i += 4u * stride) {
    a0 += a[i];
    a1 += a[i + stride];
    a2 += a[i + 2u * stride];
    a3 += a[i + 3u * stride];
  }
  for (; i < n4; i += stride) a0 += a[i];
  vec4 v = (a0 + a1) + (a2 + a3);
  float s = subgroupAdd((v.x + v.y) + (v.z + v.w));
  if (subgroupElect()) part[gl_SubgroupID] = s;
  barrier();
  if (t == 0u) {
    float r = 0.0;
    for (uint k = 0u; k < gl_NumSubgroups; k++) r += part[k];
    o[g] = r;
  }
}
)";
// one link of the dependent chain: o = a * c over 1024 floats
const char* kChainLink = R"(#version 450
layout(local_size_x = 256) in;
layout(push_constant) uniform P { float c; } p;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { float a[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < 1024u) o[i] = a[i] * p.c;
}
)";

// the same link in the engine's shape (E_8_32_4: 8 work groups of 32 lanes, a vec4 each, the output read-write)
const char* kChainLinkEngine = R"(#version 450
layout(local_size_x = 32) in;
layout(push_constant) uniform P { float c; } p;
layout(set = 0, binding = 0) restrict buffer O { vec4 o[]; };
layout(set = 0, binding = 1) restrict readonly buffer A { vec4 a[]; };
void main() {
  uint i = gl_WorkGroupID.x * 32u + gl_LocalInvocationID.x;
  o[i] = a[i] * p.c;
}
)";

const char* kSumFinal = R"(#version 450
layout(local_size_x = 1024) in;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { float a[]; };
layout(push_constant) uniform P { uint n; };
shared float part[1024];
void main() {
  uint t = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint i = t; i < n; i += 1024u) acc += a[i];
  part[t] = acc;
  barrier();
  for (uint s = 512u; s > 0u; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    barrier();
  }
  if (t == 0u) o[0] = part[0];
}
)";

// C = A B, n a multiple of 128: a 128x128 tile a work group of 256, 8x8 outputs an invocation, k in steps of 8
// through shared memory (A stored transposed), operands read as vec4
const char* kMatmul = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer C { vec4 c[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 2) readonly buffer B { vec4 b[]; };
layout(push_constant) uniform P { uint n; };
shared vec4 As[8][32];
shared vec4 Bs[8][32];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint bm = gl_WorkGroupID.y * 128u, bn = gl_WorkGroupID.x * 128u;
  uint tr = t / 16u, tc = t % 16u;
  uint n4 = n / 4u;
  vec4 acc[8][2];
  for (int i = 0; i < 8; i++) { acc[i][0] = vec4(0.0); acc[i][1] = vec4(0.0); }
  uint ar = t / 2u, ac = (t % 2u) * 4u;   // A tile: 128 rows x 8 columns, one vec4 each
  uint br = t / 32u, bc = t % 32u;        // B tile: 8 rows x 128 columns, one vec4 each
  for (uint k0 = 0u; k0 < n; k0 += 8u) {
    vec4 av = a[(bm + ar) * n4 + (k0 + ac) / 4u];
    As[ac + 0u][ar / 4u][ar % 4u] = av.x;
    As[ac + 1u][ar / 4u][ar % 4u] = av.y;
    As[ac + 2u][ar / 4u][ar % 4u] = av.z;
    As[ac + 3u][ar / 4u][ar % 4u] = av.w;
    Bs[br][bc] = b[(k0 + br) * n4 + bn / 4u + bc];
    barrier();
    for (uint k = 0u; k < 8u; k++) {
      vec4 a0 = As[k][tr * 2u], a1 = As[k][tr * 2u + 1u];
      vec4 b0 = Bs[k][tc * 2u], b1 = Bs[k][tc * 2u + 1u];
      float av8[8] = float[8](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
      for (int i = 0; i < 8; i++) {
        acc[i][0] = fma(vec4(av8[i]), b0, acc[i][0]);
        acc[i][1] = fma(vec4(av8[i]), b1, acc[i][1]);
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; i++) {
    uint row = bm + tr * 8u + i;
    c[row * n4 + (bn + tc * 8u) / 4u] = acc[i][0];
    c[row * n4 + (bn + tc * 8u) / 4u + 1u] = acc[i][1];
  }
}
)";

// the same tile with k in steps of 16, the next tile's operands loaded into registers while this one is computed,
// and each invocation's 8x8 outputs as four 4x4 blocks 64 rows / columns apart (conflict-free vec4 reads of shared)
const char* kMatmul2 = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer C { vec4 c[]; };
layout(set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 2) readonly buffer B { vec4 b[]; };
layout(push_constant) uniform P { uint n; };
shared vec4 As[16][32];
shared vec4 Bs[16][32];
void main() {
  uint t = gl_LocalInvocationID.x;
  uint bm = gl_WorkGroupID.y * 128u, bn = gl_WorkGroupID.x * 128u;
  uint tr = t / 16u, tc = t % 16u;
  uint n4 = n / 4u;
  vec4 acc[8][2];
  for (int i = 0; i < 8; i++) { acc[i][0] = vec4(0.0); acc[i][1] = vec4(0.0); }
  // A tile 128 x 16: two vec4 an invocation (rows t/4 and 64 + t/4, columns 4 (t%4)); B tile 16 x 128: rows t/32, 8 + t/32
  uint ar = t / 4u, ac = t % 4u, br = t / 32u, bc = t % 32u;
  vec4 pa0 = a[(bm + ar) * n4 + ac], pa1 = a[(bm + ar + 64u) * n4 + ac];
  vec4 pb0 = b[br * n4 + bn / 4u + bc], pb1 = b[(br + 8u) * n4 + bn / 4u + bc];
  for (uint k0 = 0u; k0 < n; k0 += 16u) {
    As[ac * 4u + 0u][ar / 4u][ar % 4u] = pa0.x; As[ac * 4u + 1u][ar / 4u][ar % 4u] = pa0.y;
    As[ac * 4u + 2u][ar / 4u][ar % 4u] = pa0.z; As[ac * 4u + 3u][ar / 4u][ar % 4u] = pa0.w;
    As[ac * 4u + 0u][16u + ar / 4u][ar % 4u] = pa1.x; As[ac * 4u + 1u][16u + ar / 4u][ar % 4u] = pa1.y;
    As[ac * 4u + 2u][16u + ar / 4u][ar % 4u] = pa1.z; As[ac * 4u + 3u][16u + ar / 4u][ar % 4u] = pa1.w;
    Bs[br][bc] = pb0;
    Bs[br + 8u][bc] = pb1;
    barrier();
    if (k0 + 16u < n) {
      uint kn = (k0 + 16u) / 4u;
      pa0 = a[(bm + ar) * n4 + kn + ac]; pa1 = a[(bm + ar + 64u) * n4 + kn + ac];
      pb0 = b[(k0 + 16u + br) * n4 + bn / 4u + bc]; pb1 = b[(k0 + 24u + br) * n4 + bn / 4u + bc];
    }
    for (uint k = 0u; k < 16u; k++) {
      vec4 a0 = As[k][tr], a1 = As[k][tr + 16u];
      vec4 b0 = Bs[k][tc], b1 = Bs[k][tc + 16u];
      float av8[8] = float[8](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
      for (int i = 0; i < 8; i++) {
        acc[i][0] = fma(vec4(av8[i]), b0, acc[i][0]);
        acc[i][1] = fma(vec4(av8[i]), b1, acc[i][1]);
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; i++) {
    uint row = bm + (i < 4u ? tr * 4u + i : 64u + tr * 4u + i - 4u);
    c[row * n4 + bn / 4u + tc] = acc[i][0];
    c[row * n4 + bn / 4u + 16u + tc] = acc[i][1];
  }
}
)";

// group counts for `groups` work groups within the device's x limit
std::array<uint32_t, 3> grid(uint64_t groups, uint32_t max_x, uint32_t* row_groups) {
  uint32_t x = static_cast<uint32_t>(std::min<uint64_t>(groups, max_x));
  uint32_t y = static_cast<uint32_t>((groups + x - 1) / x);
  *row_groups = x;
  return {x, y, 1};
}

struct Limit {
  std::string name;
  std::optional<Stats> value;  // per second: bytes or flops
  std::string check;
};

// times `reps` submissions of one batch after a second of them (clocks ramp up from idle, and drop again after a
// pause such as an output check: the same shader measured cold read less than half), returning the per-run sums of
// the dispatches' times
std::vector<double> time_batch(ts::vk::Batch& batch, int reps) {
  batch.submit_and_wait(300);
  for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) batch.submit_and_wait(300);
  std::vector<double> out;
  for (int r = 0; r < reps; ++r) {
    auto res = batch.submit_and_wait(300);
    double s = 0;
    for (double g : res.gpu_seconds) s += g;
    out.push_back(s);
  }
  return out;
}

std::vector<double> per_second(const std::vector<double>& secs, double work) {
  std::vector<double> v;
  for (double s : secs) v.push_back(work / s);
  return v;
}

float pat_a(int64_t i) { return static_cast<float>(i % 16) * 0.0625f; }
float pat_b(int64_t i) { return static_cast<float>(i % 7) * 0.125f; }
// matmul operands: small multiples of 1/4, so every product and every partial sum of 4096 of them is exact in fp32
float mat_a(int64_t i, int64_t k) { return static_cast<float>((i + 2 * k) % 9 - 4) * 0.25f; }
float mat_b(int64_t k, int64_t j) { return static_cast<float>((3 * k + j) % 7 - 3) * 0.25f; }

struct Sizes {
  int64_t n_vec = 0;  // elements of the add and sum inputs
  int64_t n_mat = 0;  // matmul side
};

// the vec4 add on fresh buffers
Limit hand_add(ts::vk::Context& ctx, const std::vector<float>& ha, const std::vector<float>& hb, int reps) {
  const int64_t n = static_cast<int64_t>(ha.size()), n4 = n / 4;
  auto A = ctx.alloc(4 * n), B = ctx.alloc(4 * n), O = ctx.alloc(4 * n);
  ctx.copy_in(A, ha.data(), 4 * n);
  ctx.copy_in(B, hb.data(), 4 * n);
  auto prog = ctx.program(ctx.compile_glsl(kAddVec4, "add_vec4"), "add_vec4", 3, 8);
  uint32_t row = 0;
  auto g = grid((n4 + 255) / 256, ctx.info().max_workgroup_count[0], &row);
  ts::vk::PushConstants pc;
  pc.u32(static_cast<uint32_t>(n4)).u32(row * 256);
  auto batch = ctx.batch();
  batch.dispatch(prog, {O, A, B}, pc.bytes(), g);
  auto secs = time_batch(batch, reps);
  std::vector<float> ho(n);
  ctx.copy_out(ho.data(), O, 4 * n);
  std::string check = "ok";
  for (int64_t i = 0; i < n; ++i)
    if (ho[i] != ha[i] + hb[i]) { check = "WRONG at [" + std::to_string(i) + "]"; break; }
  return {"add (vec4)", stats(per_second(secs, 12.0 * n)), check};
}

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
ChainFloor hand_chain(ts::vk::Context& ctx, int reps) {
  constexpr int kLinks = 200;
  std::vector<float> h(1024);
  for (int i = 0; i < 1024; ++i) h[i] = static_cast<float>(i % 16) * 0.0625f;
  auto X = ctx.alloc(4096), Y = ctx.alloc(4096);
  auto link_c = [](int k) { return static_cast<float>(1.0 + k / 4096.0); };  // link k multiplies by this
  float f = 1;
  for (int k = 0; k < kLinks; ++k) f *= link_c(k);
  // link k of the ping-pong chain writes Y from X (k even) or X from Y: after 200 links the result is in X
  auto pingpong = [&](int k) { return k % 2 ? std::vector<ts::vk::DeviceBuffer>{X, Y} : std::vector<ts::vk::DeviceBuffer>{Y, X}; };
  ChainFloor out;
  out.check = "ok";
  auto check = [&](const ts::vk::DeviceBuffer& result, const std::string& what) {
    std::vector<float> got(1024);
    ctx.copy_out(got.data(), result, 4096);
    for (int i = 0; i < 1024 && out.check == "ok"; ++i)
      if (std::fabs(got[i] - h[i] * f) > 1e-4 * std::max(1.0f, h[i] * f)) out.check = "WRONG at [" + std::to_string(i) + "] (" + what + ")";
  };
  auto prog = ctx.program(ctx.compile_glsl(kChainLink, "chain_link"), "chain_link", 2, 4);
  auto prog_e = ctx.program(ctx.compile_glsl(kChainLinkEngine, "chain_link_engine"), "chain_link_engine", 2, 4);
  // the engine's chain bakes each link's constant into its kernel: 200 pipelines, bound one after the other
  std::vector<ts::vk::Program> distinct;
  for (int k = 0; k < kLinks; ++k) {
    std::string src = kChainLink;
    char c[48];
    std::snprintf(c, sizeof c, "%.9g", 1.0 + k / 4096.0);
    src.replace(src.find("a[i] * p.c"), 10, std::string("a[i] * ") + c);
    distinct.push_back(ctx.program(ctx.compile_glsl(src, "chain_link_" + std::to_string(k)), "chain_link_" + std::to_string(k), 2, 4));
  }
  std::vector<ts::vk::DeviceBuffer> own;  // variant 3: link k reads own[k] and writes own[k + 1]
  for (int k = 0; k <= kLinks; ++k) own.push_back(ctx.alloc(4096));
  // timestamps, none, none with a pipeline per link, none with a buffer per link, the engine's shape untimed and timed
  Stats* const wall_of[] = {&out.wall_ts, &out.wall_plain, &out.wall_distinct, &out.wall_buffers, &out.wall_engine, nullptr};
  Stats* const own_of[] = {&out.own, nullptr, nullptr, nullptr, nullptr, &out.own_engine};
  for (int variant = 0; variant < 6; ++variant) {
    ctx.copy_in(variant == 3 ? own[0] : X, h.data(), 4096);
    ts::vk::BatchOptions o;
    o.timestamps = own_of[variant] != nullptr;
    auto batch = ctx.batch(o);
    for (int k = 0; k < kLinks; ++k) {
      ts::vk::PushConstants pc;
      pc.f32(link_c(k));
      const std::vector<ts::vk::DeviceBuffer> io = variant == 3 ? std::vector<ts::vk::DeviceBuffer>{own[k + 1], own[k]} : pingpong(k);
      if (variant >= 4) batch.dispatch(prog_e, io, pc.bytes(), {8, 1, 1});
      else batch.dispatch(variant == 2 ? distinct[k] : prog, io, pc.bytes(), {4, 1, 1});
    }
    batch.submit_and_wait(60);
    check(variant == 3 ? own[kLinks] : X, "variant " + std::to_string(variant));
    for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) batch.submit_and_wait(60);
    std::vector<double> wall, self;
    for (int r = 0; r < reps; ++r) {
      ts::vk::BatchResult res = batch.submit_and_wait(60);
      wall.push_back(res.wall_seconds / kLinks);
      double sum = 0;
      for (double g : res.gpu_seconds) sum += g;
      self.push_back(sum / kLinks);
    }
    if (wall_of[variant]) *wall_of[variant] = stats(wall);
    if (own_of[variant]) *own_of[variant] = stats(self);
  }
  // the ping-pong chain in pieces, each after the earlier ones (a barrier first), all submitted before the first wait
  {
    std::vector<ts::vk::Batch> pieces;
    for (int k = 0, size = 8; k < kLinks; size = std::min(2 * size, 32)) {
      ts::vk::BatchOptions o;
      o.timestamps = false;
      o.after_previous = !pieces.empty();
      pieces.push_back(ctx.batch(o));
      for (int end = std::min(kLinks, k + size); k < end; ++k) {
        ts::vk::PushConstants pc;
        pc.f32(link_c(k));
        pieces.back().dispatch(prog, pingpong(k), pc.bytes(), {4, 1, 1});
      }
    }
    auto run = [&] {
      auto t0 = clk::now();
      for (auto& b : pieces) b.submit();
      for (auto& b : pieces) b.wait(60);
      return seconds_since(t0) / kLinks;
    };
    ctx.copy_in(X, h.data(), 4096);
    run();
    check(X, "pieces");
    for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) run();
    std::vector<double> wall;
    for (int r = 0; r < reps; ++r) wall.push_back(run());
    out.wall_pieces = stats(wall);
  }
  return out;
}

// One matmul shader on m x m operands (C at binding 0, A and B after it, m as the push constant, a work group per
// 128 x 128 tile of C): C poisoned first, the runs timed, 97 entries checked against exact sums; the line printed.
Limit time_matmul_shader(ts::vk::Context& ctx, const std::string& src, const std::string& nm, const std::string& label,
                         const ts::vk::DeviceBuffer& C, const ts::vk::DeviceBuffer& A, const ts::vk::DeviceBuffer& B, int64_t m, int reps) {
  auto prog = ctx.program(ctx.compile_glsl(src, nm), nm, 3, 4);
  ts::vk::PushConstants pc;
  pc.u32(static_cast<uint32_t>(m));
  std::vector<float> poison(m * m, -7.0f), mc(m * m);
  ctx.copy_in(C, poison.data(), 4 * m * m);
  auto batch = ctx.batch();
  batch.dispatch(prog, {C, A, B}, pc.bytes(), {static_cast<uint32_t>(m / 128), static_cast<uint32_t>(m / 128), 1});
  auto secs = time_batch(batch, reps);
  ctx.copy_out(mc.data(), C, 4 * m * m);
  std::string check = "ok";
  for (int64_t s = 0; s < 97 && check == "ok"; ++s) {
    int64_t i = (s * 7919) % m, j = (s * 104729) % m;
    double e = 0;
    for (int64_t k = 0; k < m; ++k) e += static_cast<double>(mat_a(i, k)) * mat_b(k, j);
    if (mc[i * m + j] != e)
      check = "WRONG at [" + std::to_string(i) + "," + std::to_string(j) + "]: " + std::to_string(mc[i * m + j]) + ", expected " + std::to_string(e);
  }
  Limit l{label + " (" + nm + ")", stats(per_second(secs, 2.0 * m * m * m)), check};
  std::printf("    %-38s %s  output %s\n", l.name.c_str(), spread(*l.value, 1e-9, "GFLOP/s").c_str(), check.c_str());
  return l;
}

// A tensor-core fp16 matmul through GL_NV_cooperative_matrix (fp16 A and B, fp32 accumulate and C) for one of the
// device's (m, n, k) subgroup shapes: a work group of 256 lanes (8 subgroups of 32, 2 x 4) computes a 128 x 128 tile
// of C, each subgroup 64 x 32 of it in (64/m) x (32/n) accumulators; the next 128 x 32 A and 32 x 128 B tiles are
// read into registers (f16vec4) while the current ones, in shared memory (rows padded by 8), feed the matrix ops.
std::string coopmat_matmul_source(uint32_t tm, uint32_t tn, uint32_t tk) {
  const uint32_t fm = 64 / tm, fn = 32 / tn;
  std::string s = R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer C { float c[]; };
layout(set = 0, binding = 1) readonly buffer A { f16vec4 a[]; };
layout(set = 0, binding = 2) readonly buffer B { f16vec4 b[]; };
layout(push_constant) uniform P { uint n; };
)";
  s += "#define TM " + std::to_string(tm) + "\n#define TN " + std::to_string(tn) + "\n#define TK " + std::to_string(tk) + "\n";
  s += R"(#define ACC fcoopmatNV<32, gl_ScopeSubgroup, TM, TN>
#define FA fcoopmatNV<16, gl_ScopeSubgroup, TM, TK>
#define FB fcoopmatNV<16, gl_ScopeSubgroup, TK, TN>
const uint BK = 32, AS = BK + 8, BS = 128 + 8;
shared float16_t sa[128 * AS];
shared float16_t sb[BK * BS];
void main() {
  const uint t = gl_LocalInvocationID.x, warp = t / 32, wm = warp / 4, wn = warp % 4;
  const uint row0 = gl_WorkGroupID.y * 128, col0 = gl_WorkGroupID.x * 128, n4 = n / 4;
  f16vec4 ra[4], rb[4];
  for (uint r = 0; r < 4; ++r) {
    const uint q = t + 256 * r;
    ra[r] = a[(row0 + q / 8) * n4 + q % 8];
    rb[r] = b[(q / 32) * n4 + col0 / 4 + q % 32];
  }
)";
  for (uint32_t i = 0; i < fm; ++i)
    for (uint32_t j = 0; j < fn; ++j) s += "  ACC acc" + std::to_string(i) + "_" + std::to_string(j) + " = ACC(0.0);\n";
  s += R"(  for (uint k0 = 0; k0 < n; k0 += BK) {
    barrier();
    for (uint r = 0; r < 4; ++r) {
      const uint q = t + 256 * r, ia = (q / 8) * AS + (q % 8) * 4, ib = (q / 32) * BS + (q % 32) * 4;
      sa[ia] = ra[r].x; sa[ia + 1] = ra[r].y; sa[ia + 2] = ra[r].z; sa[ia + 3] = ra[r].w;
      sb[ib] = rb[r].x; sb[ib + 1] = rb[r].y; sb[ib + 2] = rb[r].z; sb[ib + 3] = rb[r].w;
    }
    barrier();
    if (k0 + BK < n) {
      for (uint r = 0; r < 4; ++r) {
        const uint q = t + 256 * r;
        ra[r] = a[(row0 + q / 8) * n4 + (k0 + BK) / 4 + q % 8];
        rb[r] = b[(k0 + BK + q / 32) * n4 + col0 / 4 + q % 32];
      }
    }
    for (uint kk = 0; kk < BK; kk += TK) {
)";
  for (uint32_t i = 0; i < fm; ++i)
    s += "      FA fa" + std::to_string(i) + "; coopMatLoadNV(fa" + std::to_string(i) + ", sa, (wm * 64 + " + std::to_string(i * tm) +
         ") * AS + kk, AS, false);\n";
  for (uint32_t j = 0; j < fn; ++j)
    s += "      FB fb" + std::to_string(j) + "; coopMatLoadNV(fb" + std::to_string(j) + ", sb, kk * BS + wn * 32 + " + std::to_string(j * tn) +
         ", BS, false);\n";
  for (uint32_t i = 0; i < fm; ++i)
    for (uint32_t j = 0; j < fn; ++j) {
      const std::string a = "acc" + std::to_string(i) + "_" + std::to_string(j);
      s += "      " + a + " = coopMatMulAddNV(fa" + std::to_string(i) + ", fb" + std::to_string(j) + ", " + a + ");\n";
    }
  s += "    }\n  }\n";
  for (uint32_t i = 0; i < fm; ++i)
    for (uint32_t j = 0; j < fn; ++j)
      s += "  coopMatStoreNV(acc" + std::to_string(i) + "_" + std::to_string(j) + ", c, (row0 + wm * 64 + " + std::to_string(i * tm) +
           ") * n + col0 + wn * 32 + " + std::to_string(j * tn) + ", n, false);\n";
  s += "}\n";
  return s;
}

// the tensor-core limit: the coopmat matmul above for each fp16 x fp16 + fp32 subgroup shape that tiles 64 x 32 x 32
// (the best is the limit), on fp16 copies of the fp32 operands (exact in fp16); nullopt when the device has none
std::optional<Limit> hand_coopmat(ts::vk::Context& ctx, int64_t m, const std::vector<float>& ma, const std::vector<float>& mb, int reps) {
  const auto& info = ctx.info();
  if (!info.cooperative_matrix_nv || m % 128 || info.subgroup_size != 32) return std::nullopt;
  std::vector<_Float16> ha(m * m), hb(m * m);
  for (int64_t i = 0; i < m * m; ++i) { ha[i] = static_cast<_Float16>(ma[i]); hb[i] = static_cast<_Float16>(mb[i]); }
  auto A = ctx.alloc(2 * m * m), B = ctx.alloc(2 * m * m), C = ctx.alloc(4 * m * m);
  ctx.copy_in(A, ha.data(), 2 * m * m);
  ctx.copy_in(B, hb.data(), 2 * m * m);
  std::optional<Limit> best;
  for (const auto& c : info.cooperative_matrix_nv_shapes) {
    if (!(c.a_type == "float16" && c.b_type == "float16" && c.c_type == "float32" && c.result_type == "float32" && c.scope == "subgroup" &&
          64 % c.m == 0 && 32 % c.n == 0 && 32 % c.k == 0))
      continue;
    const std::string nm = "matmul_coopmat_" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    Limit l = time_matmul_shader(ctx, coopmat_matmul_source(c.m, c.n, c.k), nm, "matmul " + std::to_string(m) + " fp16", C, A, B, m, reps);
    if (l.check == "ok" && (!best || l.value->median > best->value->median)) best = l;
  }
  return best;
}

// the limits in a fixed order ([0] add, [1] sum, [2] fp32 matmul, [3] fp16 matmul); those `wanted` refuses are not run
std::vector<Limit> hand_written(ts::vk::Context& ctx, const Sizes& z, int reps, const std::function<bool(const std::string&)>& wanted) {
  std::vector<Limit> out;
  auto skipped = [](const std::string& name) { return Limit{name, std::nullopt, "not run (--only)"}; };
  const auto& info = ctx.info();
  const uint32_t max_x = info.max_workgroup_count[0];
  const int64_t n = z.n_vec, n4 = n / 4;
  std::vector<float> ha(n), hb(n);
  for (int64_t i = 0; i < n; ++i) { ha[i] = pat_a(i); hb[i] = pat_b(i); }
  out.push_back(wanted("add") ? hand_add(ctx, ha, hb, reps) : skipped("add"));
  auto A = ctx.alloc(4 * n);
  ctx.copy_in(A, ha.data(), 4 * n);
  if (!wanted("sum")) {
    out.push_back(skipped("sum"));
  } else {
    const uint64_t groups = (n4 + 16383) / 16384;
    auto P = ctx.alloc(4 * std::max<uint64_t>(groups, 1024)), S = ctx.alloc(4);
    auto p1 = ctx.program(ctx.compile_glsl(kSumPartial, "sum_partial"), "sum_partial", 2, 8);
    auto p2 = ctx.program(ctx.compile_glsl(kSumFinal, "sum_final"), "sum_final", 2, 4);
    uint32_t row = 0;
    auto g = grid(groups, max_x, &row);
    ts::vk::PushConstants pc1, pc2;
    pc1.u32(static_cast<uint32_t>(n4)).u32(row * 256);
    pc2.u32(static_cast<uint32_t>(groups));
    auto batch = ctx.batch();
    batch.dispatch(p1, {P, A}, pc1.bytes(), g);
    batch.dispatch(p2, {S, P}, pc2.bytes(), {1, 1, 1});
    auto secs = time_batch(batch, reps);
    float s = 0;
    ctx.copy_out(&s, S, 4);
    double e = 0;
    for (int64_t i = 0; i < n; ++i) e += ha[i];
    auto check_sum = [&](float got) {
      return std::fabs(got - e) <= 1e-5 * std::fabs(e) ? std::string("ok") : "WRONG: " + std::to_string(got) + ", expected " + std::to_string(e);
    };
    Limit tiles{"sum (two passes)", stats(per_second(secs, 4.0 * n)), check_sum(s)};
    // the grid-stride variant: a fixed 1024 work groups of 512, then the same final pass
    const uint32_t sg = 1024;
    auto p3 = ctx.program(ctx.compile_glsl(kSumStride, "sum_stride"), "sum_stride", 2, 8);
    ts::vk::PushConstants pc3, pc4;
    pc3.u32(static_cast<uint32_t>(n4)).u32(sg);
    pc4.u32(sg);
    auto b2 = ctx.batch();
    b2.dispatch(p3, {P, A}, pc3.bytes(), {sg, 1, 1});
    b2.dispatch(p2, {S, P}, pc4.bytes(), {1, 1, 1});
    auto secs2 = time_batch(b2, reps);
    ctx.copy_out(&s, S, 4);
    Limit strided{"sum (grid-stride + final)", stats(per_second(secs2, 4.0 * n)), check_sum(s)};
    std::printf("    %-38s %s  output %s\n", tiles.name.c_str(), spread(*tiles.value, 1e-9, "GB/s   ").c_str(), tiles.check.c_str());
    std::printf("    %-38s %s  output %s\n", strided.name.c_str(), spread(*strided.value, 1e-9, "GB/s   ").c_str(), strided.check.c_str());
    out.push_back(strided.check == "ok" && (tiles.check != "ok" || strided.value->median > tiles.value->median) ? strided : tiles);
  }
  {
    const int64_t m = z.n_mat;
    std::vector<float> ma(m * m), mb(m * m);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = 0; k < m; ++k) { ma[i * m + k] = mat_a(i, k); mb[i * m + k] = mat_b(i, k); }
    const std::string fp32 = "matmul " + std::to_string(m) + " fp32";
    if (!wanted(fp32)) {
      out.push_back(skipped(fp32));
    } else {
      auto MA = ctx.alloc(4 * m * m), MB = ctx.alloc(4 * m * m), MC = ctx.alloc(4 * m * m);
      ctx.copy_in(MA, ma.data(), 4 * m * m);
      ctx.copy_in(MB, mb.data(), 4 * m * m);
      // the better of two tilings is the limit
      std::optional<Limit> best;
      for (auto [src, nm] : {std::pair{kMatmul, "matmul_tiled"}, std::pair{kMatmul2, "matmul_tiled_prefetch"}}) {
        Limit l = time_matmul_shader(ctx, src, nm, fp32, MC, MA, MB, m, reps);
        if (l.check == "ok" && (!best || l.value->median > best->value->median)) best = l;
      }
      out.push_back(best ? *best : Limit{fp32, std::nullopt, "no tiling gave the right result"});
    }
    // [3]: tensor cores, where the device has cooperative matrices GLSL can reach
    std::optional<Limit> tc;
    try {
      if (!wanted("matmul " + std::to_string(m) + " fp16")) tc = skipped("matmul " + std::to_string(m) + " fp16 (coopmat)");
      else tc = hand_coopmat(ctx, m, ma, mb, reps);
    } catch (const std::exception& e) {
      tc = Limit{"matmul " + std::to_string(m) + " fp16 (coopmat)", std::nullopt, std::string("failed: ") + e.what()};
    }
    if (tc && tc->check != "ok") tc->value.reset();
    const char* why = !info.cooperative_matrix_nv ? "the device has no VK_NV_cooperative_matrix"
                                                  : "no fp16 x fp16 + fp32 subgroup shape of 32 lanes gave the right result";
    out.push_back(tc ? *tc : Limit{"matmul " + std::to_string(m) + " fp16 (coopmat)", std::nullopt, why});
  }
  return out;
}

// ---- the engine's kernels ----------------------------------------------------------------------------------------

// 0, 1, .. n-1 as int32 on the device (arange alone is deviceless until used with a tensor that has one)
ts::Tensor iota(const std::string& dev, int64_t n) {
  return ts::Tensor::arange(0, static_cast<double>(n), 1, ts::dtypes::int32).add(ts::Tensor::zeros({n}, ts::dtypes::int32, dev));
}

// an int pattern on the device: (arange(n) * mul + add) % mod as float, times scale
ts::Tensor pattern(const std::string& dev, int64_t n, int64_t mul, int64_t add, int64_t mod, double scale, ts::DType dt = ts::dtypes::float32) {
  ts::Tensor i = iota(dev, n);
  ts::Tensor v = i.mul(ts::Tensor::scalar(static_cast<double>(mul), ts::dtypes::weakint)).add(ts::Tensor::scalar(static_cast<double>(add), ts::dtypes::weakint));
  v = v.mod(ts::Tensor::scalar(static_cast<double>(mod), ts::dtypes::weakint));
  return v.cast(ts::dtypes::float32).mul(ts::Tensor::scalar(scale, ts::dtypes::weakfloat)).cast(dt).contiguous().realize();
}

// the hand-written limits as the limits cache keeps them (the vec4 add is the roof's slope: it counts every byte read
// and written, as the kernels' estimated memory does; the fp32 matmul its flat part), or none when either is missing
std::optional<MeasuredLimits> gpu_limits_entry(const ts::vk::DeviceInfo& info, const Sizes& z, const std::vector<Limit>& limits) {
  if (limits.size() < 3 || !limits[0].value || limits[0].check != "ok" || !limits[2].value || limits[2].check != "ok") return std::nullopt;
  MeasuredLimits m;
  m.device = "VULKAN";
  m.machine = vulkan_machine(info.name, info.driver_name, info.driver_info, info.driver_version);  // as vulkan_machine_of
  m.measured_at = utc_now();
  const std::string n = std::to_string(z.n_vec), mm = std::to_string(z.n_mat);
  m.bandwidth_gbs = limits[0].value->median * 1e-9;
  m.bandwidth_label = "add bandwidth GB/s (hand-written GLSL vec4 add o = a + b over " + n +
                      " fp32, 12 bytes an element, median of the timestamps)";
  m.peak_gflops = limits[2].value->median * 1e-9;
  // the tiling that won, from "matmul 4096 fp32 (matmul_tiled)"
  const std::string& nm = limits[2].name;
  const std::string tiling = nm.find('(') != std::string::npos ? nm.substr(nm.find('(') + 1, nm.rfind(')') - nm.find('(') - 1) : nm;
  m.peak_label = "fp32 matmul GFLOP/s (hand-written GLSL " + tiling + ", " + mm + "x" + mm + "x" + mm +
                 ", the better of two tilings, 2 FLOP a multiply-add, median of the timestamps)";
  if (limits[1].value && limits[1].check == "ok")
    m.figures.push_back({"read bandwidth", limits[1].value->median * 1e-9, "GB/s", "read bandwidth GB/s (hand-written GLSL " + limits[1].name + " over " + n + " fp32)"});
  if (limits.size() > 3 && limits[3].value && limits[3].check == "ok")
    m.figures.push_back({"fp16 matmul", limits[3].value->median * 1e-9, "GFLOP/s",
                         "fp16 matmul GFLOP/s, fp32 accumulation (hand-written GLSL " + limits[3].name + ", cooperative matrices)"});
  return m;
}

}  // namespace

std::string vulkan_machine_of(const std::string& dev) {
  const auto& info = ts::vk::device_context(dev)->info();
  return vulkan_machine(info.name, info.driver_name, info.driver_info, info.driver_version);
}

int run_gpu_limits(const std::string& dev) {
  auto ctx = ts::vk::device_context(dev);
  const auto& info = ctx->info();
  std::printf("tinyscope bench --limits  device %s: %s (%s %s)\n", dev.c_str(), info.name.c_str(), info.driver_name.c_str(),
              info.driver_info.c_str());
  // the bench's sizes (a CPU device, lavapipe, a 64 MiB add: past its caches, and seconds, not minutes)
  Sizes z;
  z.n_vec = int64_t{1} << 28;
  while (z.n_vec * 4 > static_cast<int64_t>(info.max_storage_buffer_range) || (info.type == "cpu" && z.n_vec > (int64_t{1} << 24))) z.n_vec /= 2;
  z.n_mat = info.type == "cpu" ? 512 : 4096;
  const int reps = 5;
  std::printf("sizes: add/sum %lld fp32, matmul %lld; each figure the median of %d runs, timestamps\n", static_cast<long long>(z.n_vec),
              static_cast<long long>(z.n_mat), reps);
  std::fflush(stdout);
  std::vector<Limit> limits = hand_written(*ctx, z, reps, [](const std::string&) { return true; });
  for (auto& l : limits) {
    const bool flops = l.name.find("matmul") != std::string::npos;
    std::printf("  %-38s %s  output %s\n", l.name.c_str(),
                l.value ? spread(*l.value, 1e-9, flops ? "GFLOP/s" : "GB/s   ").c_str() : "(none)", l.check.c_str());
  }
  std::optional<MeasuredLimits> m = gpu_limits_entry(info, z, limits);
  if (!m) throw std::runtime_error("the add or the fp32 matmul gave no figure (see above): nothing is kept");
  save_measured_limits(*m, /*required=*/true);
  std::printf("limits: %s\n", limits_summary(*m).c_str());
  return 0;
}

int run_gpu_bench(const std::string& dev, bool quick, int beam, const std::string& only) {
  auto wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  auto ctx = ts::vk::device_context(dev);
  const auto& info = ctx->info();
  std::printf("tinyscope bench  device %s: %s (%s %s)\n", dev.c_str(), info.name.c_str(), info.driver_name.c_str(),
              info.driver_info.c_str());
  Sizes z;
  // 2^28 floats (1 GiB) where a binding holds that, else the largest power of two that fits
  z.n_vec = int64_t{1} << 28;
  while (z.n_vec * 4 > static_cast<int64_t>(info.max_storage_buffer_range) || (quick && z.n_vec > (int64_t{1} << 22))) z.n_vec /= 2;
  z.n_mat = info.type == "cpu" || quick ? 512 : 4096;
  const int reps = quick ? 3 : 10;
  std::printf("sizes: add/sum %lld fp32, matmul %lld; each figure the median of %d runs (min-max), timestamps\n\n",
              static_cast<long long>(z.n_vec), static_cast<long long>(z.n_mat), reps);

  // datasheet figures of devices this bench knows (labelled as such; the hand-written shaders are the measured limit)
  struct Sheet { const char* match; double bw, fp32, fp16; };
  const Sheet sheets[] = {{"H200", 4.8e12, 66.9e12, 989e12}, {"H100", 3.35e12, 66.9e12, 989e12}};
  for (const Sheet& s : sheets)
    if (info.name.find(s.match) != std::string::npos)
      std::printf("datasheet (%s): memory %.2f TB/s, fp32 %.1f TFLOP/s, fp16 dense tensor cores %.0f TFLOP/s\n", s.match, s.bw / 1e12,
                  s.fp32 / 1e12, s.fp16 / 1e12);

  std::printf("hand-written GLSL (the practical limit):\n");
  if (!only.empty()) std::printf("only the workloads whose name holds '%s'\n", only.c_str());
  std::vector<Limit> limits = hand_written(*ctx, z, reps, wanted);
  auto unit = [](const std::string& name, const Stats& s) {
    return name.find("matmul") != std::string::npos ? spread(s, 1e-9, "GFLOP/s") : spread(s, 1e-9, "GB/s   ");
  };
  for (auto& l : limits)
    std::printf("  %-28s %s  output %s\n", l.name.c_str(), l.value ? unit(l.name, *l.value).c_str() : "(none)", l.check.c_str());
  // the full-size limits are kept for the Roofline pane (a --quick or --only run's are not: smaller or partial)
  if (!quick && only.empty())
    if (std::optional<MeasuredLimits> m = gpu_limits_entry(info, z, limits)) save_measured_limits(*m, /*required=*/false);
  std::printf("\n");

  ts::realize_config().device = dev;
  struct Work {
    std::string name;
    double work;  // bytes or flops a run
    size_t limit;  // index into limits
    std::function<ts::Tensor()> build;
    std::function<std::string(const ts::Tensor&)> check;
  };
  const int64_t n = z.n_vec, m = z.n_mat;
  std::vector<Work> works;
  auto section = [&](const std::string& what, const std::function<void()>& fn) {
    // ("inputs" holds the add and sum rows, each filtered by its own name)
    if (what == "inputs" ? !wanted("add") && !wanted("sum") : !wanted(what)) return;
    try {
      fn();
    } catch (const std::exception& e) {
      std::printf("  %-28s not run: %s\n", what.c_str(), e.what());
    }
  };
  // BEAM's reports of the kernels searched during a row's first realize
  std::vector<ts::BeamProgress> searched;
  ts::realize_config().beam_lines = false;  // the rows print them
  ts::realize_config().beam_progress = [&](const ts::BeamProgress& p) {
    if (p.finished) searched.push_back(p);
    else if (p.done == 0)  // a round starts
      std::fprintf(stderr, "  BEAM %s: round %d, %zu candidates, best so far %.1f us, %.1f s\n", ts::ansistrip(p.kernel).c_str(), p.round,
                   p.total, p.best_s * 1e6, p.elapsed_s);
  };
  auto row = [&](const Work& w) {
    if (!wanted(w.name)) return;
    section(w.name, [&] {
      ts::Tensor out;
      searched.clear();
      RealizeRun cold = realize_timed(w.build, &out);
      std::string check = w.check(out);
      out = ts::Tensor();
      for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) realize_timed(w.build);  // warm, as the hand-written ones
      std::vector<double> rate;
      int nk = cold.nkernels;
      std::string each;
      for (int r = 0; r < reps; ++r) {
        RealizeRun e = realize_timed(w.build);
        rate.push_back(w.work / e.kernels);
        nk = e.nkernels;
        each = e.each;
      }
      Stats s = stats(rate);
      const bool flops = w.name.find("matmul") != std::string::npos;
      // a workload without a hand-written counterpart (fp16 where the device has no cooperative matrices) gets no percentage
      const double lim = w.limit < limits.size() && limits[w.limit].value ? limits[w.limit].value->median : 0;
      char pct[48];
      if (lim > 0) std::snprintf(pct, sizeof pct, "%5.1f%% of hand-written", 100 * s.median / lim);
      else std::snprintf(pct, sizeof pct, "(no hand-written limit)");
      std::printf("  %-28s %s  %s  kernels %d  first run %.1f ms  output %s\n", w.name.c_str(),
                  flops ? spread(s, 1e-9, "GFLOP/s").c_str() : spread(s, 1e-9, "GB/s   ").c_str(), pct, nk, cold.wall * 1e3, check.c_str());
      if (nk > 1 || ts::realize_config().beam) std::printf("  %-28s (the last run's kernels: %s)\n", "", each.c_str());
      for (auto& p : searched) {
        if (p.cached) std::printf("  %-28s BEAM %s: opts from the cache (no search)\n", "", ts::ansistrip(p.kernel).c_str());
        else
          std::printf("  %-28s BEAM %s: searched in %.1f s, %zu candidates timed in %d rounds; default opts %.1f us -> %.1f us\n", "",
                      ts::ansistrip(p.kernel).c_str(), p.elapsed_s, p.timed, p.round, p.default_s * 1e6, p.best_s * 1e6);
      }
      std::fflush(stdout);
    });
  };
  auto engine_rows = [&] {
    section("inputs", [&] {
      ts::Tensor a = pattern(dev, n, 1, 0, 16, 0.0625), b = pattern(dev, n, 1, 0, 7, 0.125);
      row({"add " + std::to_string(n) + " fp32", 12.0 * n, 0, [=] { return a.add(b).contiguous(); }, [&](const ts::Tensor& t) {
             ts::HostData h = t.data();
             for (int64_t i = 0; i < n; ++i)
               if (h.f[i] != static_cast<double>(pat_a(i) + pat_b(i))) return "WRONG at [" + std::to_string(i) + "]";
             return std::string("ok");
           }});
      row({"sum " + std::to_string(n) + " fp32 (schedule)", 4.0 * n, 1, [=] { return a.sum(); }, [&](const ts::Tensor& t) {
             double e = 0;
             for (int64_t i = 0; i < n; ++i) e += pat_a(i);
             double got = t.data().f.at(0);
             return std::fabs(got - e) <= 1e-5 * e ? std::string("ok") : "WRONG: " + std::to_string(got) + ", expected " + std::to_string(e);
           }});
    });
    auto matmul_check = [m](ts::Tensor t, double tol) {
      ts::HostData h = t.cast(ts::dtypes::float32).data();
      for (int64_t s = 0; s < 97; ++s) {
        int64_t i = (s * 7919) % m, j = (s * 104729) % m;
        double e = 0;
        for (int64_t k = 0; k < m; ++k) e += static_cast<double>(mat_a(i, k)) * mat_b(k, j);
        if (std::fabs(h.f[i * m + j] - e) > tol * std::max(1.0, std::fabs(e)))
          return "WRONG at [" + std::to_string(i) + "," + std::to_string(j) + "]: " + std::to_string(h.f[i * m + j]) + ", expected " + std::to_string(e);
      }
      return std::string("ok");
    };
    for (ts::DType dt : {ts::dtypes::float32, ts::dtypes::float16}) {
      const std::string dn = dt == ts::dtypes::float32 ? "fp32" : "fp16";
      section("matmul " + std::to_string(m) + " " + dn, [&] {
        // A[i,k] = ((i + 2k) % 9 - 4) / 4, B[k,j] = ((3k + j) % 7 - 3) / 4, from 2-D aranges
        auto idx = [&](int64_t ci, int64_t cj, int64_t mod) {
          ts::Tensor r = iota(dev, m);
          ts::Tensor v = r.reshape({m, 1}).mul(ts::Tensor::scalar(ci, ts::dtypes::weakint)).add(r.reshape({1, m}).mul(ts::Tensor::scalar(cj, ts::dtypes::weakint)));
          return v.mod(ts::Tensor::scalar(mod, ts::dtypes::weakint)).sub(ts::Tensor::scalar((mod - 1) / 2, ts::dtypes::weakint)).cast(ts::dtypes::float32)
              .mul(ts::Tensor::scalar(0.25, ts::dtypes::weakfloat)).cast(dt).contiguous().realize();
        };
        ts::Tensor A = idx(1, 2, 9), B = idx(3, 1, 7);
        const double tol = dt == ts::dtypes::float32 ? 0 : 2e-3;
        row({"matmul " + std::to_string(m) + " " + dn, 2.0 * m * m * m, dt == ts::dtypes::float32 ? size_t{2} : size_t{3}, [=] { return A.matmul(B); },
             [&](const ts::Tensor& t) { return matmul_check(t, tol); }});
      });
    }
  };
  std::printf("engine, default opts (kernel time from timestamps; %% of the hand-written shader):\n");
  engine_rows();
  // the TC opt on more layouts than the bench's matmul (odd sizes, transposed operands, a batch): each output element
  // checked against the host's sum (the inputs are quarters, the products exact; the half output rounds)
  if (!ts::get_device(dev).opt_target().tensor_cores.empty() && wanted("tensor-core layouts fp16 @")) {
    std::printf("engine, tensor-core layouts (default opts; every output element checked):\n");
    struct Case { int64_t batch, m, k, n; bool at, bt; };
    for (const Case& c : {Case{1, 192, 320, 256, false, false}, Case{1, 128, 256, 384, false, true}, Case{1, 128, 256, 64, true, false},
                          Case{2, 128, 64, 128, false, false}}) {
      const std::string nm = (c.batch > 1 ? std::to_string(c.batch) + " x " : "") + std::to_string(c.m) + "x" + std::to_string(c.k) + (c.at ? " (A^T)" : "") +
                             " @ " + std::to_string(c.k) + "x" + std::to_string(c.n) + (c.bt ? " (B^T)" : "");
      section("tensor-core layouts fp16 @ " + nm, [&] {
        auto host = [&](int64_t r, int64_t cdim, int64_t mul, int64_t mod, bool transposed) {
          ts::HostData h;
          h.dtype = ts::dtypes::float16;
          h.shape = transposed ? ts::Shape{c.batch, cdim, r} : ts::Shape{c.batch, r, cdim};
          const int64_t n = c.batch * r * cdim;
          for (int64_t i = 0; i < n; ++i) h.f.push_back(static_cast<double>((i * mul + 3) % mod - mod / 2) * 0.25);
          return h;
        };
        const ts::HostData ha = host(c.m, c.k, 5, 9, c.at), hb = host(c.k, c.n, 3, 7, c.bt);
        auto a_at = [&](int64_t b, int64_t i, int64_t k) { return ha.f[c.at ? (b * c.k + k) * c.m + i : (b * c.m + i) * c.k + k]; };
        auto b_at = [&](int64_t b, int64_t k, int64_t j) { return hb.f[c.bt ? (b * c.n + j) * c.k + k : (b * c.k + k) * c.n + j]; };
        ts::Tensor A = ts::Tensor::from_host(ha, dev).realize(), B = ts::Tensor::from_host(hb, dev).realize();
        if (c.at) A = A.permute({0, 2, 1});
        if (c.bt) B = B.permute({0, 2, 1});
        ts::Tensor out;
        RealizeRun r = realize_timed([&] { return A.matmul(B); }, &out);
        bool tc = false;
        const auto& log = ts::call_log();
        for (size_t i = log.size() - std::min<size_t>(log.size(), static_cast<size_t>(r.nkernels)); i < log.size(); ++i)
          if (!log[i].applied_opts.empty() && log[i].applied_opts[0].rfind("Opt(op=OptOps.TC", 0) == 0) tc = true;
        ts::HostData h = out.cast(ts::dtypes::float32).data();
        std::string check = "ok";
        for (int64_t b = 0; b < c.batch && check == "ok"; ++b)
          for (int64_t i = 0; i < c.m && check == "ok"; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
              double e = 0;
              for (int64_t k = 0; k < c.k; ++k) e += a_at(b, i, k) * b_at(b, k, j);
              const double got = h.f[(b * c.m + i) * c.n + j];
              if (std::fabs(got - e) > 1e-3 * std::max(1.0, std::fabs(e))) {
                check = "WRONG at [" + std::to_string(b) + "," + std::to_string(i) + "," + std::to_string(j) + "]: " + std::to_string(got) +
                        ", expected " + std::to_string(e);
                break;
              }
            }
        std::printf("  %-28s %s  tensor cores %s  output %s\n", nm.c_str(), r.each.c_str(), tc ? "yes" : "NO", check.c_str());
        std::fflush(stdout);
      });
    }
  }
  // 200 dependent small kernels, compiled once, then run again: host wall time per kernel (submit to result)
  section("200 dependent small kernels", [&] {
    ts::Tensor x = pattern(dev, 1024, 1, 0, 16, 0.0625);
    auto prog = [&] {
      ts::Tensor y = x;
      for (int k = 0; k < 200; ++k) y = y.mul(ts::Tensor::scalar(1.0 + k / 4096.0, ts::dtypes::weakfloat)).contiguous();
      return y;
    };
    ts::Tensor first;
    realize_timed(prog, &first);
    ts::HostData h = first.data();
    double f = 1;
    for (int k = 0; k < 200; ++k) f *= static_cast<float>(1.0 + k / 4096.0);
    std::string check = "ok";
    for (int64_t i = 0; i < 1024 && check == "ok"; ++i)
      if (std::fabs(h.f[i] - pat_a(i) * f) > 1e-4 * std::max(1.0, pat_a(i) * f)) check = "WRONG at [" + std::to_string(i) + "]";
    // the wall time as `tinyscope run` sees it (no kernel times asked for: no timestamps), then with every kernel
    // timed as DEBUG=2 and the window do
    std::vector<double> wall, wall_timed, gpu;
    ts::realize_config().time_kernels = false;
    for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) realize_timed(prog);
    for (int r = 0; r < reps; ++r) wall.push_back(realize_timed(prog).wall / 200);
    ts::realize_config().time_kernels = true;
    for (int r = 0; r < reps; ++r) {
      RealizeRun e = realize_timed(prog);
      wall_timed.push_back(e.wall / 200);
      gpu.push_back(e.kernels / 200);
    }
    Stats s = stats(wall);
    std::printf("  %-28s %s per kernel, wall (realize to result, cached programs, kernels untimed as in tinyscope run; each kernel timed: "
                "%.2f us, the kernels' own time %.2f us)  output %s\n",
                "200 dependent small kernels", spread(s, 1e6, "us").c_str(), stats(wall_timed).median * 1e6, stats(gpu).median * 1e6, check.c_str());
    // where the wall time goes, per kernel (medians): the graph's construction, the (cached) schedule, the launches
    // recorded, the command buffer recorded, its submit to the fence, and the rest of run_linear (the call records)
    std::vector<double> build, sched, run, rec, fence;
    ts::Device& d = ts::get_device(dev);
    ts::realize_config().time_kernels = false;
    for (int r = 0; r < reps; ++r) {
      auto t0 = clk::now();
      ts::Tensor y = prog();
      auto t1 = clk::now();
      auto linear = ts::schedule_linear({y});
      auto t2 = clk::now();
      ts::run_linear(*linear);
      auto t3 = clk::now();
      build.push_back(std::chrono::duration<double>(t1 - t0).count() / 200);
      sched.push_back(std::chrono::duration<double>(t2 - t1).count() / 200);
      run.push_back(std::chrono::duration<double>(t3 - t2).count() / 200);
      rec.push_back(d.last_batch_host_times().record_s / 200);
      fence.push_back(d.last_batch_host_times().submit_to_fence_s / 200);
    }
    ts::realize_config().time_kernels = true;
    const double m_run = stats(run).median, m_rec = stats(rec).median, m_fence = stats(fence).median;
    ChainFloor fl = hand_chain(*ctx, reps);
    std::printf("  %-28s hand-written chain of 200 dependent dispatches, submit to fence: %s per dispatch with timestamps, %s without, "
                "%s without and each its own pipeline, %s without and each its own output buffer, %s without in pieces of 8, 16, 32 "
                "(the timed dispatches' own time %.2f us)  output %s\n", "",
                spread(fl.wall_ts, 1e6, "us").c_str(), spread(fl.wall_plain, 1e6, "us").c_str(), spread(fl.wall_distinct, 1e6, "us").c_str(),
                spread(fl.wall_buffers, 1e6, "us").c_str(), spread(fl.wall_pieces, 1e6, "us").c_str(), fl.own.median * 1e6, fl.check.c_str());
    std::printf("  %-28s the same link in the engine's shape (8 groups of 32 lanes, vec4): %s per dispatch untimed, its own time %.2f us timed\n", "",
                spread(fl.wall_engine, 1e6, "us").c_str(), fl.own_engine.median * 1e6);
    std::printf("  %-28s host per kernel: build %.2f us, schedule %.2f us, run %.2f us (command buffers recorded and submitted %.2f us, "
                "last submit to fence %.2f us, the rest %.2f us)\n",
                "", stats(build).median * 1e6, stats(sched).median * 1e6, m_run * 1e6, m_rec * 1e6, m_fence * 1e6,
                (m_run - m_rec - m_fence) * 1e6);
    // the same chain as TinyJit runs it (the engine's capture, compiled once; what Python's TinyJit calls): replayed
    // in graph calls (JIT_BATCH_SIZE 32, doubling: 32 + 64 + 104 kernels, each one command buffer recorded once and
    // submitted again) and, as JIT=2, one call each; wall per kernel from the replay to the result read back
    auto jit_row = [&](int graph_batch, const char* label) {
      ts::begin_capture();
      ts::Tensor y = prog();
      y.realize();
      auto [captured, n] = ts::end_capture();
      (void)n;
      ts::compile_captured(*captured, graph_batch);
      ts::realize_config().time_kernels = false;
      std::vector<double> jw, jr;
      ts::HostData out;
      for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) ts::replay(*captured, {}, {}, {});
      for (int r = 0; r < reps; ++r) {
        auto t0 = clk::now();
        ts::replay(*captured, {}, {}, {});
        jw.push_back(seconds_since(t0) / 200);
        out = y.data();
        jr.push_back(seconds_since(t0) / 200);
      }
      ts::realize_config().time_kernels = true;
      // how the graph calls ran at the last replay (each submitted again as recorded, or recorded again)
      std::map<std::string, int> how;
      for (const ts::GraphCall& g : captured->graphs) ++how[g.graph->last_run()];
      std::string graphs;
      for (auto& [what, n] : how) graphs += (graphs.empty() ? "" : ", ") + std::to_string(n) + " " + what;
      std::string ok = "ok";
      for (int64_t i = 0; i < 1024 && ok == "ok"; ++i)
        if (std::fabs(out.f[i] - pat_a(i) * f) > 1e-4 * std::max(1.0, pat_a(i) * f)) ok = "WRONG at [" + std::to_string(i) + "]";
      std::printf("  %-28s TinyJit replay, %s: %s per kernel, wall (replay to its last fence, kernels untimed, as the hand-written chain; goal "
                  "<= 3 us), %.2f us with the result read back%s%s  output %s\n", "", label, spread(stats(jw), 1e6, "us").c_str(), stats(jr).median * 1e6,
                  graphs.empty() ? "" : "; graph calls at the last replay: ", graphs.c_str(), ok.c_str());
      std::fflush(stdout);
    };
    jit_row(32, "graph calls of 32, 64, 104 kernels");
    jit_row(-1, "one call a kernel (JIT=2)");
  });
  if (beam > 0) {
    ts::realize_config().beam = beam;
    std::printf("\nengine, BEAM=%d (opts searched on this device; the first run includes the search):\n", beam);
    engine_rows();
    ts::realize_config().beam = 0;
  }
  ts::realize_config().beam_progress = nullptr;
  // the limit measured again at the end: a figure that moved says the device's state changed during the run
  if (wanted("add")) {
    std::vector<float> ha(z.n_vec), hb(z.n_vec);
    for (int64_t i = 0; i < z.n_vec; ++i) { ha[i] = pat_a(i); hb[i] = pat_b(i); }
    Limit again = hand_add(*ctx, ha, hb, reps);
    std::printf("\nhand-written add again, at the end: %s  output %s\n", spread(*again.value, 1e-9, "GB/s").c_str(), again.check.c_str());
  }
  return 0;
}

}  // namespace tscli
