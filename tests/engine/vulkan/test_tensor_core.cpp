// The TC opt on a target with tensor cores (16x8x16 and 16x8x8 fp16 -> fp32, 32-lane subgroups, as the H200 reports
// them): which kernels take it, the opts the heuristic adds after it (the reference's), the layout read off the AST,
// and the cooperative-matrix GLSL compiled by glslang. lavapipe has no cooperative matrices, so what the shader
// computes is checked on a GPU that has them (`tinyscope bench --dev VULKAN` checks its fp16 matmul's output).
#include <QtTest>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "engine/renderer/glsl_renderer.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/tensor_core.h"
#include "engine/codegen/to_program.h"
#include "engine/device/search.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"
#include "../codegen/kernels.h"
#include "app/cli/bench_gpu_internal.h"

using namespace ts;

namespace {

OptTarget tc_target() {
  OptTarget t = gpu_opt_target();
  t.global_max = {0x7FFFFFFF, 65535, 65535};
  t.local_max = {1024, 1024, 64};
  t.tensor_cores = {{16, 8, 16, dtypes::float16, dtypes::float32, 32}, {16, 8, 8, dtypes::float16, dtypes::float32, 32}};
  return t;
}

// out[r0*N+r1] = half(sum_r2 float(a[..] * b[..])) as tinygrad's half matmul; b_transposed reads b[r1*K+r2]
UOpRef half_matmul(int64_t M, int64_t K, int64_t N, bool b_transposed = false, bool half_out = true, DType in = dtypes::float16) {
  auto o = k::param(0, M * N, half_out ? in : dtypes::float32), a = k::param(1, M * K, in), b = k::param(2, K * N, in);
  auto r0 = k::R(M, 0), r1 = k::R(N, 1), r2 = k::R(K, 2, AxisType::REDUCE);
  auto bi = b_transposed ? iadd(imul(r1, k::c(K)), r2) : iadd(imul(r2, k::c(N)), r1);
  auto v = ucast(alu(Ops::MUL, k::idx(a, iadd(imul(r0, k::c(K)), r2)), k::idx(b, bi)), dtypes::float32);
  UOpRef s = k::reduce(Ops::ADD, v, {r2});
  if (half_out) s = ucast(s, in);
  return k::sink(k::end(k::store(o, iadd(imul(r0, k::c(N)), r1), s), {r0, r1}));
}

ProgramSpec program(const UOpRef& ast, const OptTarget& t) { return to_program(ast, glsl_renderer(), t); }

// out[r0*N+r1] = sum_r2 a[..] * b[r2*N+r1] in fp32; a_transposed reads a[r2*M+r0] (A column-major)
UOpRef f32_matmul(int64_t M, int64_t K, int64_t N, bool a_transposed = false) {
  auto o = k::param(0, M * N, dtypes::float32), a = k::param(1, M * K, dtypes::float32), b = k::param(2, K * N, dtypes::float32);
  auto r0 = k::R(M, 0), r1 = k::R(N, 1), r2 = k::R(K, 2, AxisType::REDUCE);
  auto ai = a_transposed ? iadd(imul(r2, k::c(M)), r0) : iadd(imul(r0, k::c(K)), r2);
  auto v = alu(Ops::MUL, k::idx(a, ai), k::idx(b, iadd(imul(r2, k::c(N)), r1)));
  return k::sink(k::end(k::store(o, iadd(imul(r0, k::c(N)), r1), k::reduce(Ops::ADD, v, {r2})), {r0, r1}));
}

// a GPU target whose fp32 matmuls are staged (a Vulkan device's, as the H100 lists its limits), no tensor cores
OptTarget staged_target() {
  OptTarget t = tc_target();
  t.tensor_cores.clear();
  t.tc_shared_max = 49152;
  t.stage_matmul = true;
  return t;
}

std::vector<Opt> opts_of(const std::vector<std::tuple<OptOps, int, int64_t>>& v) {
  std::vector<Opt> out;
  for (auto [op, axis, arg] : v) out.push_back(Opt{op, axis, arg});
  return out;
}


bool has_tc(const ProgramSpec& p) {
  return !p.applied_opts.empty() && p.applied_opts[0].rfind("Opt(op=OptOps.TC", 0) == 0;
}

void compiles(const ProgramSpec& p) {
  vk::Compiler c;
  try {
    auto spv = c.compile_glsl(p.src, p.name);
    QVERIFY(!spv.words.empty());
  } catch (const Error& e) {
    QFAIL((std::string(e.what()) + "\n" + p.src).c_str());
  }
}

// The structure of a KHR cooperative-matrix binary (SPIRV-Tools 2023.1 cannot validate it): no NV matrix instruction
// left; the KHR capability and extension (and bf16's); every KHR type's operands declared before it, its use a constant
// 0, 1 or 2; every multiply-add's A of use 0 and M x K, B of use 1 and K x N, C and the result of use 2 and M x N, of
// the component types asked; result ids unique and under the bound; every other instruction as many times as in the
// NV binary it came from. Returns what is wrong ("" when nothing).
std::string khr_structure(const vk::SpirvBinary& nv, const vk::SpirvBinary& khr, bool bf16) {
  struct In {
    uint32_t op;
    std::vector<uint32_t> w;
  };
  auto parse = [](const vk::SpirvBinary& b) {
    std::vector<In> v;
    for (size_t i = 5; i < b.words.size(); i += b.words[i] >> 16) v.push_back({b.words[i] & 0xffff, {b.words.begin() + static_cast<long>(i) + 1, b.words.begin() + static_cast<long>(i + (b.words[i] >> 16))}});
    return v;
  };
  auto str = [](const std::vector<uint32_t>& w) { return std::string(reinterpret_cast<const char*>(w.data())); };
  const std::vector<In> a = parse(nv), b = parse(khr);
  std::map<uint32_t, int> count_nv, count_khr;
  for (auto& x : a) count_nv[x.op]++;
  for (auto& x : b) count_khr[x.op]++;
  for (uint32_t op = 5358; op <= 5362; ++op)
    if (count_khr[op]) return "NV instruction " + std::to_string(op) + " left";
  for (auto [op, n] : count_nv) {
    const bool rewritten = (op >= 5358 && op <= 5362) || op == 17 || op == 10 || op == 32 || op == 43 || op == 22;
    if (!rewritten && count_khr[op] != n) return "instruction " + std::to_string(op) + " appears " + std::to_string(count_khr[op]) + " times, " + std::to_string(n) + " in the NV binary";
  }
  if (count_khr[4457] != count_nv[5359] || count_khr[4458] != count_nv[5360] || count_khr[4459] != count_nv[5361]) return "loads, stores or multiply-adds lost";
  std::set<uint32_t> caps;
  std::set<std::string> exts;
  std::map<uint32_t, const In*> def;  // result id -> its instruction (types and constants: their first operand)
  std::map<uint32_t, uint32_t> value_type;
  for (auto& x : b) {
    if (x.op == 17) caps.insert(x.w[0]);
    if (x.op == 10) exts.insert(str(x.w));
    uint32_t id = 0;
    if (x.op == 21 || x.op == 22 || x.op == 32 || x.op == 4456 || x.op == 19 || x.op == 20 || x.op == 23 || x.op == 28 || x.op == 29 || x.op == 30 || x.op == 33) id = x.w[0];
    else if ((x.op >= 41 && x.op <= 44) || x.op == 59 || x.op == 61 || x.op == 4457 || x.op == 4459 || x.op == 115 || x.op == 80 || x.op == 83) id = x.w[1], value_type[x.w[1]] = x.w[0];
    if (!id) continue;
    if (id >= khr.words[3]) return "id " + std::to_string(id) + " at or past the bound";
    if (!def.emplace(id, &x).second) return "id " + std::to_string(id) + " defined twice";
    if (x.op == 4456) {
      for (size_t k = 1; k < 6; ++k)
        if (!def.count(x.w[k])) return "matrix type %" + std::to_string(id) + ": operand %" + std::to_string(x.w[k]) + " not declared before it";
      const In* use = def.at(x.w[5]);
      if (use->op != 43 || use->w[2] > 2) return "matrix type %" + std::to_string(id) + ": its use is no constant 0..2";
    }
  }
  if (!caps.count(6022) || caps.count(5357) || !exts.count("SPV_KHR_cooperative_matrix") || exts.count("SPV_NV_cooperative_matrix")) return "capability or extension";
  if (bf16 != (caps.count(5116) && caps.count(5118) && exts.count("SPV_KHR_bfloat16"))) return "bf16 capabilities or extension";
  auto constant = [&](uint32_t id) { return def.at(id)->w[2]; };
  for (auto& x : b) {
    if (x.op != 4459) continue;
    auto mat = [&](uint32_t value) { return def.at(value_type.at(value)); };
    const In *A = mat(x.w[2]), *B = mat(x.w[3]), *C = mat(x.w[4]), *R = def.at(x.w[0]);
    if (R != C) return "a multiply-add's result type is not its accumulator's";
    if (constant(A->w[5]) != 0 || constant(B->w[5]) != 1 || constant(C->w[5]) != 2) return "a multiply-add's operand uses";
    if (constant(A->w[3]) != constant(C->w[3]) || constant(A->w[4]) != constant(B->w[3]) || constant(B->w[4]) != constant(C->w[4])) return "a multiply-add's shapes";
    const In *ca = def.at(A->w[1]), *cc = def.at(C->w[1]);
    const bool a_bf16 = ca->op == 22 && ca->w[1] == 16 && ca->w.size() == 3 && ca->w[2] == 0;
    if (a_bf16 != bf16 || A->w[1] != B->w[1]) return "a multiply-add's A and B component types";
    if (cc->op != 22 || cc->w[1] != 32) return "a multiply-add's accumulator is not float32";
  }
  return "";
}

}  // namespace

class TestTensorCore : public QObject {
  Q_OBJECT

 private slots:

  // fp32 matmuls whose lanes share tiles are rendered staged (staged_matmul_layout): the hand-written shader's tiling
  // (8 x 8 a lane as 2 x 4 rows and columns 64 apart, 256 lanes, K blocks of 4) gives a 128 x 128 tile, fills 16 deep,
  // the lane's values read from shared memory as vec4, the trip count through the launch (so the program is never
  // packed several work groups to one); STAGE_MATMUL=0 keeps the lowered program. What it computes is checked on
  // lavapipe (test_vulkan_math staged_matmul_results) and by the bench on a GPU.
  void staged_fp32_matmul() {
    const OptTarget t = staged_target();
    const auto hand = opts_of({{OptOps::UPCAST, 0, 4}, {OptOps::LOCAL, 0, 16}, {OptOps::UPCAST, 0, 2}, {OptOps::UPCAST, 1, 4},
                               {OptOps::LOCAL, 1, 16}, {OptOps::UPCAST, 1, 2}, {OptOps::UNROLL, 0, 4}});
    ProgramSpec p = to_program(f32_matmul(512, 512, 512), glsl_renderer(), t, hand);
    QVERIFY2(p.src.find("// fp32 multiply-adds: a 128x128 tile per work group of 256 lanes, 8x8 outputs a lane, A and B staged in shared "
                        "memory 16 deep (K blocks of 4)") != std::string::npos, p.src.c_str());
    QCOMPARE(p.lowered->src.back()->op, Ops::CUSTOM);
    QCOMPARE(p.global_size, (std::array<int64_t, 3>{4, 4, 1}));
    QVERIFY(p.local_size && *p.local_size == (std::array<int64_t, 3>{16, 16, 1}));
    QCOMPARE(glsl_group_packing(p), 1);
    QVERIFY(p.src.find("const uint fills = 32u + (gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z - 16u);") != std::string::npos);
    // tiles of 128 x 16 floats each (16 KB), read as vec4 from the buffers; 8 vec4 accumulators stored as vec4
    QVERIFY(p.src.find("shared vec4 sa[512];") != std::string::npos && p.src.find("shared vec4 sb[512];") != std::string::npos);
    QVERIFY(p.src.find("buffer buf_a { vec4 a[]; }") != std::string::npos && p.src.find("buffer buf_c { vec4 c[]; }") != std::string::npos);
    compiles(p);
    QCOMPARE(p.name, std::string("r_4_4_16_16_4_2_4_2_128_4"));
    // A column-major (a.T @ b): its rows are the contiguous run, so its vec4 loads go to shared memory whole (a
    // row-major A's are stored a component at a time, k-major)
    ProgramSpec pt = to_program(f32_matmul(512, 512, 512, true), glsl_renderer(), t, hand);
    QVERIFY2(pt.src.find("buffer buf_a { vec4 a[]; }") != std::string::npos && pt.src.find(") >> 2u] = ra0;") != std::string::npos, pt.src.c_str());
    QVERIFY(p.src.find(") >> 2u] = ra0;") == std::string::npos && p.src.find("[(p) & 3u] = ra0.x;") != std::string::npos);
    compiles(pt);
    // upcasts of 3 and 6: scalar shared reads and accumulators, B's loads scalar; A's 96 vec4 units do not divide among
    // the 64 lanes (the last load guarded)
    ProgramSpec p3 = to_program(f32_matmul(96, 64, 96), glsl_renderer(), t,
                                opts_of({{OptOps::UPCAST, 0, 3}, {OptOps::LOCAL, 0, 8}, {OptOps::UPCAST, 1, 6}, {OptOps::LOCAL, 1, 8}, {OptOps::UNROLL, 0, 4}}));
    QVERIFY2(p3.src.find("of 64 lanes, 3x6 outputs a lane") != std::string::npos, p3.src.c_str());
    QVERIFY(p3.src.find("if ((lane + 64u) < 96u)") != std::string::npos && p3.src.find("buffer buf_b { float b[]; }") != std::string::npos);
    QVERIFY(p3.src.find("shared float sa[") != std::string::npos && p3.src.find(" < ") != std::string::npos);
    compiles(p3);
    // the default opts of test_vulkan_math's matmuls (which check what they compute) stage them
    for (auto [m, k, n, at] : std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{{256, 192, 320, false}, {256, 192, 320, true}, {256, 256, 256, false}}) {
      ProgramSpec q = program(f32_matmul(m, k, n, at), t);
      QVERIFY2(q.src.find("fp32 multiply-adds") != std::string::npos, q.name.c_str());
    }
    // STAGE_MATMUL=0, fewer than 32 lanes, fewer than 16 outputs a lane, fp16 operands: the lowered program
    codegen_options()["STAGE_MATMUL"] = "0";
    ProgramSpec off = to_program(f32_matmul(512, 512, 512), glsl_renderer(), t, hand);
    codegen_options().erase("STAGE_MATMUL");
    QVERIFY(off.src.find("fp32 multiply-adds") == std::string::npos && off.lowered->src.back()->op != Ops::CUSTOM);
    QCOMPARE(off.name, p.name);
    // the lowered kernel's launch, dim for dim
    QCOMPARE(off.global_size, p.global_size);
    QVERIFY(off.local_size == p.local_size);
    for (const auto& [ast, opts] : std::vector<std::pair<UOpRef, std::vector<Opt>>>{
             {f32_matmul(512, 512, 512), opts_of({{OptOps::UPCAST, 0, 4}, {OptOps::UPCAST, 1, 4}, {OptOps::LOCAL, 0, 4}, {OptOps::LOCAL, 1, 4}})},
             {f32_matmul(512, 512, 512), opts_of({{OptOps::UPCAST, 0, 2}, {OptOps::UPCAST, 1, 4}, {OptOps::LOCAL, 0, 8}, {OptOps::LOCAL, 1, 8}})},
             {half_matmul(512, 512, 512, false, false), opts_of({{OptOps::UPCAST, 0, 4}, {OptOps::UPCAST, 1, 4}, {OptOps::LOCAL, 0, 8}, {OptOps::LOCAL, 1, 8}})}}) {
      ProgramSpec q = to_program(ast, glsl_renderer(), t, opts);
      QVERIFY2(q.src.find("fp32 multiply-adds") == std::string::npos, q.name.c_str());
    }
  }
  // the heuristic: TC first (the first tensor core that fits: 16x8x16), then UPCAST of the A axis by 4, of the B axis by
  // 4 and LOCAL of the B axis by 4, so a work group of 4 subgroups computes a 64 x 128 tile in K blocks of 16
  void heuristic_opts_and_layout() {
    const OptTarget t = tc_target();
    ProgramSpec p = program(half_matmul(256, 256, 256), t);
    QVERIFY2(has_tc(p), p.name.c_str());
    QCOMPARE(p.applied_opts.size(), size_t{4});
    QCOMPARE(QString::fromStdString(p.applied_opts[0]), QString("Opt(op=OptOps.TC, axis=0, arg=(-1, 0, 1))"));
    QCOMPARE(p.applied_opts[1].rfind("Opt(op=OptOps.UPCAST", 0), size_t{0});
    QCOMPARE(p.applied_opts[2].rfind("Opt(op=OptOps.UPCAST", 0), size_t{0});
    QCOMPARE(p.applied_opts[3].rfind("Opt(op=OptOps.LOCAL", 0), size_t{0});
    // 256/64 x 256/128 work groups of 4 x 32 lanes
    QCOMPARE(p.global_size[0] * p.global_size[1] * p.global_size[2], int64_t{8});
    QVERIFY(p.local_size);
    QCOMPARE((*p.local_size)[0], int64_t{128});
    QCOMPARE(p.estimates.ops, 2.0 * 256 * 256 * 256);
    QCOMPARE(p.outs, std::vector<int>{0});
    QCOMPARE(p.ins, (std::vector<int>{1, 2}));
    QVERIFY(p.src.find("coopMatMulAddNV") != std::string::npos);
    QVERIFY(p.src.find("uvec4 a8[]") != std::string::npos);  // 16-byte loads of both row-major operands
    QVERIFY(p.src.find("uvec4 b8[]") != std::string::npos);
    QVERIFY(p.src.find("shared uvec4 sa[") != std::string::npos);  // and 16-byte tiles in shared memory
    QVERIFY(p.src.find("float16_t c[]") != std::string::npos);  // converted to the output's half
    // 16 K blocks of 16, two staged per fill (64 accumulator + 24 prefetch registers a lane, within the budget)
    QVERIFY2(p.src.find("K blocks of 16, 2 staged at a time") != std::string::npos, p.src.c_str());
    QVERIFY(p.src.find("kb < 8u;") != std::string::npos);
    compiles(p);
    // 8-byte loads (TC_VEC8=0), one K block a fill (TC_STAGE=1): the same opts and launch
    codegen_options()["TC_VEC8"] = "0";
    codegen_options()["TC_STAGE"] = "1";
    ProgramSpec narrow = program(half_matmul(256, 256, 256), t);
    codegen_options().erase("TC_VEC8");
    codegen_options().erase("TC_STAGE");
    QCOMPARE(narrow.applied_opts, p.applied_opts);
    QCOMPARE(narrow.global_size, p.global_size);
    QVERIFY(narrow.src.find("f16vec4 a4[]") != std::string::npos);
    QVERIFY(narrow.src.find("f16vec4 b4[]") != std::string::npos);
    QVERIFY(narrow.src.find("staged at a time") == std::string::npos);
    QVERIFY(narrow.src.find("kb < 16u;") != std::string::npos);
    compiles(narrow);
    // a staging depth that does not divide the K blocks refuses TC: the kernel keeps the ordinary opts
    codegen_options()["TC_STAGE"] = "3";
    ProgramSpec odd = program(half_matmul(256, 256, 256), t);
    codegen_options().erase("TC_STAGE");
    QVERIFY(!has_tc(odd));
  }

  // every layout the matmul can take compiles: B transposed (column-major fragments), a float output, the second
  // tensor core by tc_select, more opts on top (UNROLL of the K blocks, LOCAL of the A axis)
  void layouts_compile() {
    const OptTarget t = tc_target();
    ProgramSpec bt = program(half_matmul(128, 64, 256, true), t);
    QVERIFY(has_tc(bt));
    QVERIFY(bt.src.find(", true);") != std::string::npos);
    compiles(bt);
    ProgramSpec f = program(half_matmul(128, 64, 128, false, false), t);
    QVERIFY(has_tc(f));
    QVERIFY(f.src.find("float c[]") != std::string::npos);
    compiles(f);
    ProgramSpec second = to_program(half_matmul(128, 64, 128), glsl_renderer(), t, {{OptOps::TC, 0, 1}, {OptOps::UNROLL, 0, 2}, {OptOps::LOCAL, 0, 2}});
    QVERIFY(second.src.find("gl_ScopeSubgroup, 16u, 8u>") != std::string::npos);
    QVERIFY(second.src.find("fcoopmatNV<16, gl_ScopeSubgroup, 16u, 8u> fa") != std::string::npos);  // k = 8
    compiles(second);
  }

  // kernels the tensor cores do not take keep the ordinary opts: sizes that are not multiples of the shape, float
  // inputs, a target without tensor cores, USE_TC=0; an opt that breaks the layout is refused and changes nothing
  void refusals() {
    const OptTarget t = tc_target();
    QVERIFY(!has_tc(program(half_matmul(100, 64, 128), t)));
    QVERIFY(!has_tc(program(k::matmul(128, 64, 128), t)));
    QVERIFY(!has_tc(program(half_matmul(128, 64, 128), gpu_opt_target())));
    codegen_options()["USE_TC"] = "0";
    QVERIFY(!has_tc(program(half_matmul(128, 64, 128), t)));
    codegen_options().erase("USE_TC");
    Scheduler s = opt_scheduler(half_matmul(128, 64, 128), t);
    s.apply_opt({OptOps::TC, 0, -1});
    QCOMPARE(s.tc_ranges.size(), size_t{3});
    const UOpRef before = s.ast;
    // GROUP splits the reduce into lanes, which a tensor core's subgroup cannot share
    QVERIFY_THROWS_EXCEPTION(KernelOptError, s.apply_opt({OptOps::GROUP, 0, 4}));
    QCOMPARE(s.ast, before);
    QCOMPARE(s.applied_opts.size(), size_t{1});
    // TC must come first
    Scheduler u = opt_scheduler(half_matmul(128, 64, 128), t);
    u.apply_opt({OptOps::UPCAST, 0, 2});
    QVERIFY_THROWS_EXCEPTION(KernelOptError, u.apply_opt({OptOps::TC, 0, -1}));
  }

  // KHR cooperative matrices (TensorCore::khr: a device's VK_KHR_cooperative_matrix shapes, unless TC_KHR=0): the
  // kernel's GLSL is the NV one with the marker that asks the compiler for the KHR rewrite; its binary has the
  // structure khr_structure checks, for fp16 and bf16 (16x16x16 and 16x8x16, half or float out, B transposed).
  // lavapipe has no cooperative matrices: what the binaries compute is checked on a device that has them
  void khr_cooperative_matrices() {
    for (DType in : {dtypes::float16, dtypes::bfloat16})
      for (bool transposed : {false, true})
        for (bool half_out : {true, false})
          for (const char* vec8 : {"1", "0"}) {  // (TC_VEC8=0: 4-element loads, the u16vec4 / f16vec4 arrays)
          codegen_options()["TC_VEC8"] = vec8;
          OptTarget t = tc_target();
          t.tensor_cores = {{16, 16, 16, in, dtypes::float32, 32, true}, {16, 8, 16, in, dtypes::float32, 32, true}};
          ProgramSpec p = program(half_matmul(256, 128, 256, transposed, half_out, in), t);
          codegen_options().erase("TC_VEC8");
          QVERIFY2(has_tc(p), p.src.c_str());
          QVERIFY2((std::string(vec8) == "1") == (p.src.find("uvec4 a8[]") != std::string::npos), p.src.c_str());
          const std::string marker = std::string(vk::kKhrCoopmatMarker) + (in == dtypes::bfloat16 ? " bf16\n" : "\n");
          QVERIFY2(p.src.rfind(marker, 0) == 0, p.src.c_str());
          vk::Compiler c;
          vk::SpirvBinary khr;
          try {
            khr = c.compile_glsl(p.src, p.name);
          } catch (const Error& e) {
            QFAIL((std::string(e.what()) + "\n" + p.src).c_str());
          }
          // the same GLSL without the marker: the NV binary it was rewritten from
          const vk::SpirvBinary nv = c.compile_glsl(p.src.substr(p.src.find('\n') + 1), p.name);
          QVERIFY(vk::validate_spirv(nv).empty());
          const std::string wrong = khr_structure(nv, khr, in == dtypes::bfloat16);
          QVERIFY2(wrong.empty(), (wrong + "\n" + p.src).c_str());
          // the interface the runtime reads off the binary is the NV one's
          const vk::ShaderInterface a = vk::reflect(nv, p.name), b = vk::reflect(khr, p.name);
          QCOMPARE(b.local_size, a.local_size);
          QCOMPARE(b.bindings.size(), a.bindings.size());
          QCOMPARE(b.shared_memory_bytes, a.shared_memory_bytes);
          }
    // without the KHR shapes a bf16 matmul takes no tensor core (the NV extension has no bf16)
    QVERIFY(!has_tc(program(half_matmul(256, 128, 256, false, true, dtypes::bfloat16), tc_target())));
    // a shader the rewrite cannot express is an error naming the kernel
    vk::Compiler c;
    QVERIFY_THROWS_EXCEPTION(Error, vk::khr_cooperative_matrix(c.compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n", "plain"), false, "plain"));
  }

  // the bench's hand-written tensor-core shaders (the fp16 limit's tilings and the tensor cores' rate), KHR and NV: each
  // compiles; the KHR binary is its NV one rewritten (the structure check above), with the matrix operations a tiling
  // asks for: (bm/wm)/tm x (bn/wn)/tn multiply-adds, as many A and B fragment loads, a store per accumulator; the
  // shared memory its padded tiles need
  void bench_coopmat_shaders() {
    vk::Compiler c;
    auto count = [](const vk::SpirvBinary& b, uint32_t op) {
      int n = 0;
      for (size_t i = 5; i < b.words.size(); i += b.words[i] >> 16) n += (b.words[i] & 0xffff) == op;
      return n;
    };
    for (auto [tm, tn, tk] : {std::array<int64_t, 3>{16, 8, 16}, {16, 16, 16}, {16, 8, 8}})
      for (const tscli::CoopmatTiling& t : {tscli::CoopmatTiling{128, 128, 64, 2, 4, tm, tn, tk}, tscli::CoopmatTiling{128, 128, 32, 2, 2, tm, tn, tk},
                                            tscli::CoopmatTiling{64, 128, 32, 1, 4, tm, tn, tk}}) {
        const std::string src = tscli::coopmat_matmul_source(t, true);
        vk::SpirvBinary khr, nv;
        try {
          khr = c.compile_glsl(src, t.name());
          nv = c.compile_glsl(tscli::coopmat_matmul_source(t, false), t.name());
        } catch (const Error& e) {
          QFAIL((std::string(e.what()) + "\n" + src).c_str());
        }
        QVERIFY(vk::validate_spirv(nv).empty());
        const std::string wrong = khr_structure(nv, khr, false);
        QVERIFY2(wrong.empty(), (wrong + "\n" + src).c_str());
        const int fm = static_cast<int>(t.bm / t.wm / tm), fn = static_cast<int>(t.bn / t.wn / tn);
        QCOMPARE(count(khr, 4459), fm * fn);  // OpCooperativeMatrixMulAddKHR
        QCOMPARE(count(khr, 4457), fm + fn);  // OpCooperativeMatrixLoadKHR
        QCOMPARE(count(khr, 4458), fm * fn);  // OpCooperativeMatrixStoreKHR
        QCOMPARE(vk::reflect(khr, t.name()).local_size[0], static_cast<uint32_t>(t.wm * t.wn * 32));
        QCOMPARE(vk::reflect(khr, t.name()).shared_memory_bytes, static_cast<uint32_t>(2 * (t.bm * (t.bk + 8) + t.bk * (t.bn + 8))));
        // bf16: the same shader, its matrices made bf16 by the rewrite
        const vk::SpirvBinary bf16 = c.compile_glsl(tscli::coopmat_matmul_source(t, true, true), t.name());
        const std::string wrong16 = khr_structure(nv, bf16, true);
        QVERIFY2(wrong16.empty(), wrong16.c_str());
        const tscli::CoopmatTiling shape{0, 0, 0, 0, 0, tm, tn, tk};
        const vk::SpirvBinary rate = c.compile_glsl(tscli::coopmat_rate_source(shape, true, 64), "rate");
        QVERIFY(khr_structure(c.compile_glsl(tscli::coopmat_rate_source(shape, false, 64), "rate"), rate, false).empty());
        QCOMPARE(count(rate, 4459), 16);
      }
  }

  // Workgroup-scope matrices (VK_NV_cooperative_matrix2): glslang passes gl_ScopeWorkgroup and any size through the
  // NV types; the rewrite keeps the scope, declares SPV_NV_cooperative_matrix2 and SPIR-V 1.6 (which that extension
  // asks for), and refuses a scope neither subgroup nor workgroup
  void workgroup_scope_matrices() {
    auto source = [](const char* scope) {
      return std::string(vk::kKhrCoopmatMarker) + R"(
#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer C { float c[]; };
layout(set = 0, binding = 1) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 2) readonly buffer B { float16_t b[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  fcoopmatNV<32, )" + std::string(scope) + R"(, 128, 256> acc = fcoopmatNV<32, )" + scope + R"(, 128, 256>(0.0);
  for (uint k = 0; k < n; k += 32) {
    fcoopmatNV<16, )" + scope + R"(, 128, 32> fa; coopMatLoadNV(fa, a, gl_WorkGroupID.y * 128 * n + k, n, false);
    fcoopmatNV<16, )" + scope + R"(, 32, 256> fb; coopMatLoadNV(fb, b, k * n + gl_WorkGroupID.x * 256, n, false);
    acc = coopMatMulAddNV(fa, fb, acc);
  }
  coopMatStoreNV(acc, c, gl_WorkGroupID.y * 128 * n + gl_WorkGroupID.x * 256, n, false);
}
)";
    };
    vk::Compiler c;
    const std::string src = source("gl_ScopeWorkgroup");
    const vk::SpirvBinary khr = c.compile_glsl(src, "wg"), nv = c.compile_glsl(src.substr(src.find('\n') + 1), "wg");
    QVERIFY(vk::validate_spirv(nv).empty());
    const std::string wrong = khr_structure(nv, khr, false);
    QVERIFY2(wrong.empty(), wrong.c_str());
    QCOMPARE(khr.words[1], 0x00010600u);
    // every matrix type of scope Workgroup (2), the A 128 x 32, B 32 x 256 and accumulator 128 x 256 the source asked for
    std::map<uint32_t, uint32_t> consts;
    std::set<std::string> exts;
    std::set<std::array<uint32_t, 3>> shapes;
    for (size_t i = 5; i < khr.words.size(); i += khr.words[i] >> 16) {
      const uint32_t op = khr.words[i] & 0xffff;
      const uint32_t* w = &khr.words[i + 1];
      if (op == 43) consts[w[1]] = w[2];
      if (op == 10) exts.insert(reinterpret_cast<const char*>(w));
      if (op == 4456) {
        QCOMPARE(consts.at(w[2]), 2u);
        shapes.insert({consts.at(w[3]), consts.at(w[4]), consts.at(w[5])});
      }
    }
    QVERIFY(exts.count("SPV_NV_cooperative_matrix2"));
    QCOMPARE(shapes, (std::set<std::array<uint32_t, 3>>{{128, 32, 0}, {32, 256, 1}, {128, 256, 2}}));
    // a subgroup-scope kernel keeps SPIR-V 1.5 and declares no SPV_NV_cooperative_matrix2
    const vk::SpirvBinary sub = c.compile_glsl(source("gl_ScopeSubgroup"), "sg");
    QCOMPARE(sub.words[1], 0x00010500u);
    QVERIFY(khr_structure(c.compile_glsl(source("gl_ScopeSubgroup").substr(src.find('\n') + 1), "sg"), sub, false).empty());
    // device scope: refused, the kernel named
    try {
      c.compile_glsl(source("gl_ScopeDevice"), "dev_scope");
      QFAIL("a device-scope matrix was rewritten");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("dev_scope") != std::string::npos && std::string(e.what()).find("scope 1") != std::string::npos, e.what());
    }
  }

  // A device with workgroup-scope matrices of the KHR types (TensorCore::wg_lanes): the kernel of the same opts, name and
  // launch renders its 64 x 256 tile as one workgroup-scope matrix, loaded straight from the buffers (row-major A, B
  // row- or column-major, the output converted), through the KHR rewrite; a work group of a size the device does not
  // list, a tile past its largest dimension, or TC_WG=0 keeps the subgroup-scope kernel
  void workgroup_scope_kernels() {
    for (DType in : {dtypes::float16, dtypes::bfloat16})
      for (bool transposed : {false, true}) {
        OptTarget t = tc_target();
        t.tensor_cores = {{16, 16, 16, in, dtypes::float32, 32, true, 16, 16, 16, 256, {128, 256}}};
        const UOpRef ast = half_matmul(256, 256, 256, transposed, true, in);
        ProgramSpec p = program(ast, t);
        QVERIFY2(has_tc(p), p.src.c_str());
        QVERIFY2(p.src.find("the tile one workgroup-scope matrix") != std::string::npos, p.src.c_str());
        QVERIFY2(p.src.find("fcoopmatNV<32, gl_ScopeWorkgroup, 64u, 256u> acc") != std::string::npos, p.src.c_str());
        QVERIFY2(p.src.find("gl_ScopeSubgroup") == std::string::npos && p.src.find("shared") == std::string::npos, p.src.c_str());
        // A's rows 256 apart; B's rows 256 apart, or (transposed) its columns; two K blocks of 16 a load (K one run)
        QVERIFY2(p.src.find("K blocks of 16, 2 a load, the tile one workgroup-scope matrix") != std::string::npos, p.src.c_str());
        QVERIFY2(p.src.find("for (uint kn = 0u; kn < 8u; ++kn)") != std::string::npos, p.src.c_str());
        QVERIFY2(p.src.find("gl_ScopeWorkgroup, 64u, 32u> fa; coopMatLoadNV(fa, a, oa + 16u * (2u * kn), 256u, false)") != std::string::npos, p.src.c_str());
        QVERIFY2(p.src.find(transposed ? "gl_ScopeWorkgroup, 32u, 256u> fb; coopMatLoadNV(fb, b, ob + 16u * (2u * kn), 256u, true)"
                                       : "gl_ScopeWorkgroup, 32u, 256u> fb; coopMatLoadNV(fb, b, ob + 4096u * (2u * kn), 256u, false)") != std::string::npos,
                 p.src.c_str());
        QVERIFY2(p.src.find("coopMatStoreNV(fcoopmatNV<16, gl_ScopeWorkgroup, 64u, 256u>(acc), c, oc, 256u, false)") != std::string::npos, p.src.c_str());
        vk::Compiler c;
        const vk::SpirvBinary khr = c.compile_glsl(p.src, p.name), nv = c.compile_glsl(p.src.substr(p.src.find('\n') + 1), p.name);
        QVERIFY(vk::validate_spirv(nv).empty());
        const std::string wrong = khr_structure(nv, khr, in == dtypes::bfloat16);
        QVERIFY2(wrong.empty(), (wrong + "\n" + p.src).c_str());
        QCOMPARE(khr.words[1], 0x00010600u);
        // one K block a load (TC_STAGE=1)
        codegen_options()["TC_STAGE"] = "1";
        ProgramSpec one = program(ast, t);
        codegen_options().erase("TC_STAGE");
        QVERIFY2(one.src.find("for (uint kn = 0u; kn < 16u; ++kn)") != std::string::npos && one.src.find("16u * kn, 256u") != std::string::npos, one.src.c_str());
        QVERIFY(khr_structure(c.compile_glsl(one.src.substr(one.src.find('\n') + 1), one.name), c.compile_glsl(one.src, one.name), in == dtypes::bfloat16).empty());
        // the subgroup-scope kernel: the same opts and launch
        t.tensor_cores[0].wg_lanes = {256};
        ProgramSpec sub = program(ast, t);
        QCOMPARE(sub.applied_opts, p.applied_opts);
        QCOMPARE(sub.global_size, p.global_size);
        QCOMPARE(sub.local_size, p.local_size);
        QVERIFY(sub.src.find("gl_ScopeSubgroup") != std::string::npos && sub.src.find("gl_ScopeWorkgroup") == std::string::npos);
        t.tensor_cores[0].wg_lanes = {128}, t.tensor_cores[0].wg_max = 64;
        QVERIFY(program(ast, t).src.find("gl_ScopeSubgroup") != std::string::npos);
        t.tensor_cores[0].wg_max = 256;
        codegen_options()["TC_WG"] = "0";
        ProgramSpec off = program(ast, t);
        codegen_options().erase("TC_WG");
        QVERIFY(off.src.find("gl_ScopeSubgroup") != std::string::npos);
        QCOMPARE(off.applied_opts, p.applied_opts);
      }
  }

  // BEAM's actions on the matmul include TC; the fragment's 16 x 8 x 16 does not count against the upcast limit
  void beam_actions_take_tc() {
    const OptTarget t = tc_target();
    Scheduler s = opt_scheduler(half_matmul(128, 64, 128), t);
    auto acts = kernel_actions(s, 256, 1024);
    const auto tcs = std::count_if(acts.begin(), acts.end(), [](const Scheduler& x) { return !x.tc_ranges.empty(); });
    QVERIFY(tcs >= 1);
    for (auto& a : acts)
      if (!a.tc_ranges.empty()) {
        auto more = kernel_actions(a, 256, 1024);
        QVERIFY(!more.empty());
        for (auto& m : more) QCOMPARE(m.tc_ranges, a.tc_ranges);
      }
  }
};

QTEST_GUILESS_MAIN(TestTensorCore)
#include "test_tensor_core.moc"
