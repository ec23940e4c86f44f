// The bench's hand-written tensor-core shaders (GLSL text only; app/cli/bench_gpu_internal.h declares them): the fp16
// matmul limit's tilings and the tensor cores' own rate
#include <string>

#include "app/cli/bench_gpu_internal.h"
#include "engine/runtime/vulkan/vulkan.h"

namespace tscli {

std::string CoopmatTiling::name() const {
  return "matmul_coopmat_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "_w" + std::to_string(wm) + "x" +
         std::to_string(wn) + "_" + std::to_string(tm) + "x" + std::to_string(tn) + "x" + std::to_string(tk);
}

// A tensor-core fp16 matmul through subgroup-scope cooperative matrices (fp16 A and B, fp32 accumulate and C) of one
// (tm, tn, tk) shape the device lists: a work group of wm x wn subgroups computes a bm x bn tile of C, each subgroup
// (bm/wm) x (bn/wn) of it; per bk-deep block the A and B tiles are read in 16-byte units into registers, stored to
// shared memory (rows padded by 8 halves, so fragment loads meet no bank twice), and the next block's read while the
// matrices multiply this one. `khr`: the KHR extension (the SPIR-V rewrite), else NV's.
std::string coopmat_matmul_source(const CoopmatTiling& t, bool khr, bool bf16) {
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  const int64_t lanes = t.wm * t.wn * 32, wtm = t.bm / t.wm, wtn = t.bn / t.wn, fm = wtm / t.tm, fn = wtn / t.tn;
  const int64_t astr = (t.bk + 8) / 8, bstr = (t.bn + 8) / 8;  // shared rows, in uvec4
  const int64_t au = t.bm * t.bk / 8, bu = t.bk * t.bn / 8, ar = (au + lanes - 1) / lanes, br = (bu + lanes - 1) / lanes;
  // (bf16: the operands' bits move as uvec4 and the matrices are declared float16; the rewrite makes them bf16)
  std::string s = khr ? std::string(ts::vk::kKhrCoopmatMarker) + (bf16 ? " bf16\n" : "\n") : std::string();
  s += R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(std430, set = 0, binding = 0) restrict writeonly buffer C { float c[]; };
layout(std430, set = 0, binding = 1) restrict readonly buffer A { uvec4 a[]; };
layout(std430, set = 0, binding = 2) restrict readonly buffer B { uvec4 b[]; };
layout(push_constant) uniform P { uint n; };
)";
  s += "layout(local_size_x = " + std::to_string(lanes) + ") in;\n";
  s += "#define ACC fcoopmatNV<32, gl_ScopeSubgroup, " + u(t.tm) + ", " + u(t.tn) + ">\n";
  s += "#define FA fcoopmatNV<16, gl_ScopeSubgroup, " + u(t.tm) + ", " + u(t.tk) + ">\n";
  s += "#define FB fcoopmatNV<16, gl_ScopeSubgroup, " + u(t.tk) + ", " + u(t.tn) + ">\n";
  s += "shared uvec4 sa[" + std::to_string(t.bm * astr) + "];\nshared uvec4 sb[" + std::to_string(t.bk * bstr) + "];\n";
  s += "void main() {\n  const uint lane = gl_LocalInvocationID.x, w = lane / 32u, wm = w / " + u(t.wn) + ", wn = w % " + u(t.wn) + ";\n";
  s += "  const uint row0 = gl_WorkGroupID.y * " + u(t.bm) + ", col0 = gl_WorkGroupID.x * " + u(t.bn) + ", n8 = n / 8u;\n";
  s += "  uvec4 ra[" + std::to_string(ar) + "], rb[" + std::to_string(br) + "];\n";
  // unit q of a tile: lane + lanes * r; A's row q / (bk/8), B's row q / (bn/8)
  auto each = [&](int64_t units, int64_t r, const std::string& body) {
    return "{ const uint q = lane + " + u(lanes * r) + "; " + (units % lanes ? "if (q < " + u(units) + ") " : std::string()) + body + " }\n";
  };
  auto global_load = [&](const std::string& k0, const std::string& ind) {
    std::string o;
    for (int64_t r = 0; r < ar; ++r)
      o += ind + each(au, r, "ra[" + std::to_string(r) + "] = a[(row0 + q / " + u(t.bk / 8) + ") * n8 + (" + k0 + ") / 8u + q % " + u(t.bk / 8) + "];");
    for (int64_t r = 0; r < br; ++r)
      o += ind + each(bu, r, "rb[" + std::to_string(r) + "] = b[((" + k0 + ") + q / " + u(t.bn / 8) + ") * n8 + col0 / 8u + q % " + u(t.bn / 8) + "];");
    return o;
  };
  std::string store;
  for (int64_t r = 0; r < ar; ++r)
    store += "    " + each(au, r, "sa[(q / " + u(t.bk / 8) + ") * " + u(astr) + " + q % " + u(t.bk / 8) + "] = ra[" + std::to_string(r) + "];");
  for (int64_t r = 0; r < br; ++r)
    store += "    " + each(bu, r, "sb[(q / " + u(t.bn / 8) + ") * " + u(bstr) + " + q % " + u(t.bn / 8) + "] = rb[" + std::to_string(r) + "];");
  s += global_load("0u", "  ");
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) s += "  ACC acc" + std::to_string(i) + "_" + std::to_string(j) + " = ACC(0.0);\n";
  s += "  for (uint k0 = 0u; k0 < n; k0 += " + u(t.bk) + ") {\n    barrier();\n" + store + "    barrier();\n";
  s += "    if (k0 + " + u(t.bk) + " < n) {\n" + global_load("k0 + " + u(t.bk), "      ") + "    }\n";
  s += "    for (uint kk = 0u; kk < " + u(t.bk) + "; kk += " + u(t.tk) + ") {\n";
  for (int64_t j = 0; j < fn; ++j)
    s += "      FB fb" + std::to_string(j) + "; coopMatLoadNV(fb" + std::to_string(j) + ", sb, kk * " + u(bstr) + " + (wn * " + u(wtn) + " + " +
         u(j * t.tn) + ") / 8u, " + u(bstr) + ", false);\n";
  for (int64_t i = 0; i < fm; ++i)
    s += "      FA fa" + std::to_string(i) + "; coopMatLoadNV(fa" + std::to_string(i) + ", sa, (wm * " + u(wtm) + " + " + u(i * t.tm) + ") * " +
         u(astr) + " + kk / 8u, " + u(astr) + ", false);\n";
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) {
      const std::string a = "acc" + std::to_string(i) + "_" + std::to_string(j);
      s += "      " + a + " = coopMatMulAddNV(fa" + std::to_string(i) + ", fb" + std::to_string(j) + ", " + a + ");\n";
    }
  s += "    }\n  }\n";
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j)
      s += "  coopMatStoreNV(acc" + std::to_string(i) + "_" + std::to_string(j) + ", c, (row0 + wm * " + u(wtm) + " + " + u(i * t.tm) +
           ") * n + col0 + wn * " + u(wtn) + " + " + u(j * t.tn) + ", n, false);\n";
  return s + "}\n";
}

// The rate the tensor cores multiply at through the extension, with no memory in the way: 4 x 4 accumulators a subgroup
// of 4, their fragments loaded from shared memory once, `iters` rounds of 16 multiply-adds; each subgroup's results
// stored (so nothing is optimized away) to its own place of a buffer of 256 subgroups' 16 matrices (16 tm x tn floats
// each subgroup)
std::string coopmat_rate_source(const CoopmatTiling& t, bool khr, int64_t iters) {
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  std::string s = khr ? std::string(ts::vk::kKhrCoopmatMarker) + "\n" : std::string();
  s += R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 128) in;
layout(std430, set = 0, binding = 0) restrict writeonly buffer C { float c[]; };
layout(std430, set = 0, binding = 1) restrict readonly buffer A { uvec4 a[]; };
layout(std430, set = 0, binding = 2) restrict readonly buffer B { uvec4 b[]; };
layout(push_constant) uniform P { uint n; };
shared uvec4 sa[640];
shared uvec4 sb[640];
)";
  s += "#define ACC fcoopmatNV<32, gl_ScopeSubgroup, " + u(t.tm) + ", " + u(t.tn) + ">\n";
  s += "void main() {\n  const uint lane = gl_LocalInvocationID.x, w = (gl_WorkGroupID.x * 4u + lane / 32u) % 256u;\n";
  s += "  for (uint i = lane; i < 640u; i += 128u) { sa[i] = a[i]; sb[i] = b[i]; }\n  barrier();\n";
  for (int i = 0; i < 4; ++i) {
    s += "  fcoopmatNV<16, gl_ScopeSubgroup, " + u(t.tm) + ", " + u(t.tk) + "> fa" + std::to_string(i) + "; coopMatLoadNV(fa" + std::to_string(i) +
         ", sa, " + u(i * t.tm * 5) + ", 5u, false);\n";
    s += "  fcoopmatNV<16, gl_ScopeSubgroup, " + u(t.tk) + ", " + u(t.tn) + "> fb" + std::to_string(i) + "; coopMatLoadNV(fb" + std::to_string(i) +
         ", sb, " + u(i * t.tk * 5) + ", 5u, false);\n";
    for (int j = 0; j < 4; ++j) s += "  ACC acc" + std::to_string(i) + std::to_string(j) + " = ACC(0.0);\n";
  }
  s += "  for (uint it = 0u; it < " + u(iters) + "; ++it) {\n";
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const std::string a = "acc" + std::to_string(i) + std::to_string(j);
      s += "    " + a + " = coopMatMulAddNV(fa" + std::to_string(i) + ", fb" + std::to_string(j) + ", " + a + ");\n";
    }
  s += "  }\n";
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      s += "  coopMatStoreNV(acc" + std::to_string(i) + std::to_string(j) + ", c, w * " + u(16 * t.tm * t.tn) + " + " + u((i * 4 + j) * t.tm * t.tn) + ", " + u(t.tn) + ", false);\n";
  return s + "}\n";
}

}  // namespace tscli
