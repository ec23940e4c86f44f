// `tinyscope bench --dev VULKAN`'s limits: hand-written GLSL (add, sum, fp32 and tensor-core matmuls, a dependent
// chain) timed on the device, each output checked; `bench --limits` keeps them in the limits cache
#include "app/cli/bench.h"
#include "app/cli/bench_gpu_internal.h"
#include "app/cli/bench_run.h"
#include "app/cli/limits_cache.h"

#include <array>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/runtime/vulkan/vulkan_device.h"

namespace tscli {

namespace {

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

// what the device's compiler reported of a hand-written shader's machine code, a line under its row (none: nothing)
void print_statistics(const ts::vk::Program& prog) {
  if (prog.statistics().empty()) return;
  std::string line;
  for (auto& s : prog.statistics()) line += (line.empty() ? "" : ", ") + s.name + " " + s.value;
  std::printf("    %-38s (compiled: %s)\n", "", line.c_str());
}

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

}  // namespace

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

// the chain's floor (ChainFloor, bench_gpu_internal.h)
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

namespace {

// One matmul shader on m x m operands (C at binding 0, A and B after it, m as the push constant, a work group per
// tile_m x tile_n tile of C): C poisoned first, the runs timed, 97 entries checked against exact sums; the line printed.
Limit time_matmul_shader(ts::vk::Context& ctx, const std::string& src, const std::string& nm, const std::string& label,
                         const ts::vk::DeviceBuffer& C, const ts::vk::DeviceBuffer& A, const ts::vk::DeviceBuffer& B, int64_t m, int reps,
                         int64_t tile_m = 128, int64_t tile_n = 128) {
  auto prog = ctx.program(ctx.compile_glsl(src, nm), nm, 3, 4);
  ts::vk::PushConstants pc;
  pc.u32(static_cast<uint32_t>(m));
  std::vector<float> poison(m * m, -7.0f), mc(m * m);
  ctx.copy_in(C, poison.data(), 4 * m * m);
  auto batch = ctx.batch();
  batch.dispatch(prog, {C, A, B}, pc.bytes(), {static_cast<uint32_t>(m / tile_n), static_cast<uint32_t>(m / tile_m), 1});
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
  print_statistics(prog);
  return l;
}

// A tensor-core fp16 matmul through workgroup-scope matrices (VK_NV_cooperative_matrix2): the work group of `wg`
// invocations holds a bm x bn accumulator and multiplies bm x bk tiles of A by bk x bn tiles of B loaded straight from
// the buffers, `unroll` K steps a loop trip; the compiler stages the loads through shared memory.
std::string coopmat2_matmul_source(uint32_t bm, uint32_t bn, uint32_t bk, uint32_t wg, uint32_t unroll) {
  std::string s = std::string(ts::vk::kKhrCoopmatMarker) + R"(
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(set = 0, binding = 0) writeonly buffer C { float c[]; };
layout(set = 0, binding = 1) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 2) readonly buffer B { float16_t b[]; };
layout(push_constant) uniform P { uint n; };
)";
  s += "layout(local_size_x = " + std::to_string(wg) + ") in;\nconst uint BM = " + std::to_string(bm) + ", BN = " + std::to_string(bn) +
       ", BK = " + std::to_string(bk) + ", UNROLL = " + std::to_string(unroll) + ";\n";
  s += R"(void main() {
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  fcoopmatNV<32, gl_ScopeWorkgroup, BM, BN> acc = fcoopmatNV<32, gl_ScopeWorkgroup, BM, BN>(0.0);
  for (uint k0 = 0; k0 < n; k0 += BK * UNROLL) {
    for (uint u = 0; u < UNROLL; ++u) {
      fcoopmatNV<16, gl_ScopeWorkgroup, BM, BK> fa;
      fcoopmatNV<16, gl_ScopeWorkgroup, BK, BN> fb;
      coopMatLoadNV(fa, a, row0 * n + k0 + u * BK, n, false);
      coopMatLoadNV(fb, b, (k0 + u * BK) * n + col0, n, false);
      acc = coopMatMulAddNV(fa, fb, acc);
    }
  }
  coopMatStoreNV(acc, c, row0 * n + col0, n, false);
}
)";
  return s;
}

// the tensor-core limit: the coopmat matmul in three tilings (the best of a sweep on an H100 of 30: 247, 240 and 212
// TFLOP/s there) for each fp16 (bf16) x fp16 (bf16) + fp32 subgroup shape of 32 lanes the device lists (the best is the
// limit), on fp16 (bf16) copies of the fp32 operands (exact in either); before them, a line with the tensor cores' own
// rate (fp16, no memory). nullopt when the device has no such shape.
std::optional<Limit> hand_coopmat(ts::vk::Context& ctx, int64_t m, const std::vector<float>& ma, const std::vector<float>& mb, int reps, bool bf16) {
  const auto& info = ctx.info();
  const bool khr = info.cooperative_matrix;
  if ((!khr && !info.cooperative_matrix_nv) || (bf16 && !info.bfloat16_cooperative_matrix) || m % 128 || info.subgroup_size != 32) return std::nullopt;
  std::vector<uint16_t> ha(m * m), hb(m * m);
  auto half = [bf16](float f) {  // (the operands are multiples of 1/4 in [-1, 1]: exact either way)
    if (bf16) {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return static_cast<uint16_t>(bits >> 16);
    }
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
  };
  for (int64_t i = 0; i < m * m; ++i) { ha[i] = half(ma[i]); hb[i] = half(mb[i]); }
  auto A = ctx.alloc(2 * m * m), B = ctx.alloc(2 * m * m), C = ctx.alloc(4 * m * m);
  ctx.copy_in(A, ha.data(), 2 * m * m);
  ctx.copy_in(B, hb.data(), 2 * m * m);
  std::optional<Limit> best;
  bool rate_shown = false;
  for (const auto& c : khr ? info.cooperative_matrix_shapes : info.cooperative_matrix_nv_shapes) {
    const char* in = bf16 ? "bfloat16" : "float16";
    if (!(c.a_type == in && c.b_type == in && c.c_type == "float32" && c.result_type == "float32" && c.scope == "subgroup" && c.k % 8 == 0 &&
          c.n % 8 == 0))
      continue;
    const int64_t tm = c.m, tn = c.n, tk = c.k;
    if (!rate_shown && !bf16) {  // the rate of the first shape, as a line of its own (not a limit: nothing reads memory)
      rate_shown = true;
      const CoopmatTiling t{0, 0, 0, 0, 0, tm, tn, tk};
      // (2048 work groups: every multiprocessor busy; Vulkan allows at least 65535 along x)
      const int64_t iters = 4096;
      const uint32_t groups = 2048;
      const std::string nm = "coopmat_rate_" + std::to_string(tm) + "x" + std::to_string(tn) + "x" + std::to_string(tk);
      try {
        auto prog = ctx.program(ctx.compile_glsl(coopmat_rate_source(t, khr, iters), nm), nm, 3, 4);
        ts::vk::PushConstants pc;
        pc.u32(static_cast<uint32_t>(m));
        auto batch = ctx.batch();
        auto R = ctx.alloc(4 * 256 * 16 * tm * tn);  // (what the rate kernel stores)
        batch.dispatch(prog, {R, A, B}, pc.bytes(), {groups, 1, 1});
        const double flops = 2.0 * tm * tn * tk * 16 * 4 * static_cast<double>(iters) * groups;
        std::printf("    %-38s %s  (the multiply-adds alone, fragments in registers: no limit)\n", ("tensor cores, " + nm).c_str(),
                    spread(stats(per_second(time_batch(batch, reps), flops)), 1e-9, "GFLOP/s").c_str());
        print_statistics(prog);
      } catch (const std::exception& e) {
        std::printf("    %-38s failed: %s\n", nm.c_str(), e.what());
      }
    }
    for (const CoopmatTiling& t : {CoopmatTiling{128, 128, 64, 2, 4, tm, tn, tk}, CoopmatTiling{128, 128, 32, 2, 2, tm, tn, tk},
                                   CoopmatTiling{64, 128, 32, 1, 4, tm, tn, tk}}) {
      if (m % t.bm || m % t.bn || m % t.bk || (t.bm / t.wm) % tm || (t.bn / t.wn) % tn || t.bk % tk) continue;
      const std::string nm = bf16 ? t.name() + "_bf16" : t.name();
      try {
        Limit l = time_matmul_shader(ctx, coopmat_matmul_source(t, khr, bf16), nm, "matmul " + std::to_string(m) + (bf16 ? " bf16" : " fp16"), C, A, B, m,
                                     reps, t.bm, t.bn);
        if (l.check == "ok" && (!best || l.value->median > best->value->median)) best = l;
      } catch (const std::exception& e) {
        std::printf("    %-38s failed: %s\n", nm.c_str(), e.what());
      }
    }
  }
  // workgroup-scope matrices (where the device was opened with them, TC_WG=1): a few tilings for each fp16 x fp16 +
  // fp32 flexible shape (its granules and work group)
  if (info.cooperative_matrix_workgroup && ctx.options().workgroup_matrices && !bf16)
    for (const auto& c : info.cooperative_matrix_flexible_shapes) {
      if (!(c.a_type == "float16" && c.b_type == "float16" && c.c_type == "float32" && c.result_type == "float32" && c.scope == "workgroup"))
        continue;
      for (auto [bm, bn, bk, unroll] : {std::array<uint32_t, 4>{128, 128, 32, 1}, {128, 256, 32, 1}, {256, 128, 32, 1}, {128, 128, 64, 1},
                                        {128, 256, 64, 1}, {128, 256, 32, 2}, {256, 256, 32, 1}, {64, 256, 32, 1}}) {
        if (bm % c.m || bn % c.n || bk % c.k || m % bm || m % bn || m % (bk * unroll) ||
            std::max(bm, bn) > info.cooperative_matrix_flexible_max_dimension)
          continue;
        const std::string nm = "matmul_coopmat2_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "_u" +
                               std::to_string(unroll) + "_wg" + std::to_string(c.workgroup_invocations);
        try {
          Limit l = time_matmul_shader(ctx, coopmat2_matmul_source(bm, bn, bk, c.workgroup_invocations, unroll), nm,
                                       "matmul " + std::to_string(m) + " fp16", C, A, B, m, reps, bm, bn);
          if (l.check == "ok" && (!best || l.value->median > best->value->median)) best = l;
        } catch (const std::exception& e) {
          std::printf("    %-38s failed: %s\n", nm.c_str(), e.what());
        }
      }
    }
  return best;
}

}  // namespace

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
    // [3], [4]: tensor cores (fp16, bf16), where the device has cooperative matrices GLSL can reach
    for (const char* dn : {"fp16", "bf16"}) {
      const bool bf16 = std::string(dn) == "bf16";
      const std::string label = "matmul " + std::to_string(m) + " " + dn;
      std::optional<Limit> tc;
      try {
        if (!wanted(label)) tc = skipped(label + " (coopmat)");
        else tc = hand_coopmat(ctx, m, ma, mb, reps, bf16);
      } catch (const std::exception& e) {
        tc = Limit{label + " (coopmat)", std::nullopt, std::string("failed: ") + e.what()};
      }
      if (tc && tc->check != "ok") tc->value.reset();
      const std::string why = !info.cooperative_matrix && !info.cooperative_matrix_nv ? "the device has no cooperative matrices"
                              : bf16 && !info.bfloat16_cooperative_matrix                 ? "the device has no bf16 cooperative matrices"
                                                                                          : std::string("no ") + dn + " x " + dn +
                                                                                                " + fp32 subgroup shape of 32 lanes gave the right result";
      out.push_back(tc ? *tc : Limit{label + " (coopmat)", std::nullopt, why});
    }
  }
  return out;
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
  for (size_t i : {size_t{3}, size_t{4}}) {
    const std::string dn = i == 3 ? "fp16" : "bf16";
    if (limits.size() > i && limits[i].value && limits[i].check == "ok")
      m.figures.push_back({dn + " matmul", limits[i].value->median * 1e-9, "GFLOP/s",
                           dn + " matmul GFLOP/s, fp32 accumulation (hand-written GLSL " + limits[i].name + ", cooperative matrices)"});
  }
  return m;
}

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

}  // namespace tscli
