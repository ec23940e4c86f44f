// Tests for the GPU path of codegen (a target with locals: gpu_opt_target(), the reference's generic GPU renderer as
// its DEV=PYTHON runs it): LOCAL / GROUP / GROUPTOP / NOLOCALS opts and their checks, kernel names with colours, the
// two-phase group reduce through LOCAL memory, gidx/lidx launch dims (merged and split to fit the limits), implicit
// barriers, the C/LLVM renderers refusing such programs, and the interpreter running them lane by lane.
// Oracles: names, opts and launch dims as tinygrad a9069c1 reports them on DEV=PYTHON (tests/corpus-gpu and
// programs recorded the same way, named in each test); get_grouped_dims outputs printed by the reference's
// codegen/gpudims.py; numbers worked out by hand.
#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "engine/renderer/c_renderer.h"
#include "engine/renderer/llvm_renderer.h"
#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/linearize.h"
#include "engine/codegen/lowering.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/to_program.h"
#include "engine/renderer/glsl_renderer.h"
#include "engine/runtime/interp/interpreter.h"
#include "engine/runtime/program_runner.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"
#include "engine/uop/uop.h"
#include "tests/engine/codegen/kernels.h"
#include "tests/engine/codegen/test_util.h"

using namespace ts;

namespace {

using ts_test::check_close;
using ts_test::colored_from;
using ts_test::opts;
using Dims = std::array<int64_t, 3>;

ProgramSpec gpu(const UOpRef& ast, const OptTarget& t = gpu_opt_target()) { return to_program(ast, interp_renderer(), t); }
// the GLSL the Vulkan devices' renderer writes for the kernel on the generic GPU target (its own passes included)
std::string glsl(const UOpRef& ast) { return to_program(ast, glsl_renderer(), gpu_opt_target()).src; }

void run(const ProgramSpec& p, std::vector<std::vector<float>*> bufs, std::vector<int64_t> vars = {}) { ts_test::run_interp(p, bufs, vars); }
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}
int count_op(const ProgramSpec& p, Ops op) {
  int n = 0;
  for (auto& u : p.lowered->src) n += u->op == op;
  return n;
}
std::vector<std::pair<std::string, int64_t>> specials(const ProgramSpec& p) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (auto& u : p.lowered->src)
    if (u->op == Ops::SPECIAL) out.emplace_back(u->as<std::string>(), u->src[0]->const_int());
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<float> pattern(int n, int mul, int mod, float scale, float shift = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>((i * mul) % mod) * scale + shift;
  return v;
}

// out[r0] = sum_r1 x[r0*K+r1] (an M x K row sum)
UOpRef row_sum(int64_t M, int64_t K) {
  auto o = k::param(0, M), x = k::param(1, M * K);
  auto r0 = k::R(M, 0), r1 = k::R(K, 1, AxisType::REDUCE);
  return k::sink(k::end(k::store(o, r0, k::reduce(Ops::ADD, k::idx(x, iadd(imul(r0, k::c(K)), r1)), {r1})), {r0}));
}
// out[0] = sum x[r0] over N
UOpRef total_sum(int64_t N) {
  auto o = k::param(0, 1), x = k::param(1, N);
  auto r0 = k::R(N, 0, AxisType::REDUCE);
  return k::sink(k::store(o, k::c(0), k::reduce(Ops::ADD, k::idx(x, r0), {r0})));
}
// out[j] = sum_i w[i] * A[i*N+j]: a vector (K) times a K x N matrix
UOpRef vecmat(int64_t K, int64_t N) {
  auto o = k::param(0, N), w = k::param(1, K), A = k::param(2, K * N);
  auto rj = k::R(N, 0), ri = k::R(K, 1, AxisType::REDUCE);
  auto v = alu(Ops::MUL, k::idx(w, ri), k::idx(A, iadd(imul(ri, k::c(N)), rj)));
  return k::sink(k::end(k::store(o, rj, k::reduce(Ops::ADD, v, {ri})), {rj}));
}
// out = x.permute(3, 2, 1, 0) * 2 of a (2, 3, 4, 5) x: four output ranges no pair of which merges
UOpRef ew_2345() {
  auto o = k::param(0, 120), x = k::param(1, 120);
  auto r0 = k::R(2, 0), r1 = k::R(3, 1), r2 = k::R(4, 2), r3 = k::R(5, 3);
  auto in = iadd(iadd(iadd(imul(r0, k::c(60)), imul(r1, k::c(20))), imul(r2, k::c(5))), r3);
  auto out = iadd(iadd(iadd(imul(r3, k::c(24)), imul(r2, k::c(6))), imul(r1, k::c(2))), r0);
  return k::sink(k::end(k::store(o, out, alu(Ops::MUL, k::idx(x, in), uconst(dtypes::float32, 2.0))), {r0, r1, r2, r3}));
}

struct EnvGuard {  // a codegen option (the reference's tuning variable) set for a scope
  const char* name;
  EnvGuard(const char* n, const char* v) : name(n) { codegen_options()[n] = v; }
  ~EnvGuard() { codegen_options().erase(name); }
};

// evaluates index math over SPECIALs for the given values
int64_t eval_with(const UOpRef& x, const std::map<std::string, int64_t>& vals) {
  std::unordered_map<const UOp*, UOpRef> m;
  for (auto& u : x->toposort())
    if (u->op == Ops::SPECIAL) m[u.get()] = iconst(vals.at(u->as<std::string>()));
  UOpRef v = simplify(substitute(x, m));
  if (v->op != Ops::CONST) throw Error("not a constant: " + v->render());
  return v->const_int();
}

// a LINEAR program by hand (srcs refer to earlier entries)
struct Asm {
  UOps ins;
  UOpRef add(Ops op, DType dt, UOps src = {}, Arg arg = {}) {
    ins.push_back(UOp::make(op, dt, std::move(src), std::move(arg)));
    return ins.back();
  }
  ProgramSpec spec(const std::string& name, int num_buffers, Dims local) {
    ProgramSpec p;
    p.name = name;
    p.num_buffers = num_buffers;
    p.local_size = local;
    p.lowered = UOp::make(Ops::LINEAR, dtypes::void_, ins);
    return p;
  }
};
UOpRef out_param(int64_t size) {
  ParamArg pa;
  pa.slot = 0;
  pa.size = size;
  pa.device = "CPU";
  return UOp::make(Ops::PARAM, dtypes::float32, {}, pa);
}

}  // namespace

class TestGpuCodegen : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    codegen_options()["NUM_CPU_THREADS"] = "8";
    codegen_options().erase("NOOPT");
    codegen_options().erase("NOLOCALS");
  }

  // the reference Renderer's defaults; the CPU target keeps its own
  void targets() {
    OptTarget g = gpu_opt_target();
    QVERIFY(g.has_local && g.has_shared && !g.has_threads && g.supports_float4);
    QCOMPARE(g.global_max, (Dims{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF}));
    QCOMPARE(g.local_max, (Dims{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF}));
    QCOMPARE(g.shared_max, int64_t{32768});
    OptTarget c = cpu_opt_target();
    QVERIFY(!c.has_local && c.has_threads);
    QCOMPARE(c.global_max[0], int64_t{8});
  }

  // corpus-gpu 11 (E_3_2: two LOCAL axes), 00 (E_4: fully upcast, no launch dims), 08 (E_3_4)
  void elementwise_locals() {
    ProgramSpec t = gpu(k::transpose_3x2());
    QCOMPARE(t.name, std::string("E_3_2"));
    QCOMPARE(t.colored_name, colored_from("E", {{"3", "cyan"}, {"2", "cyan"}}));
    QCOMPARE(t.applied_opts, opts({"Opt(op=OptOps.LOCAL, axis=0, arg=3)", "Opt(op=OptOps.LOCAL, axis=0, arg=2)"}));
    QCOMPARE(t.global_size, (Dims{1, 1, 1}));
    QVERIFY(t.local_size.has_value());
    QCOMPARE(*t.local_size, (Dims{3, 2, 1}));
    QCOMPARE(specials(t), (std::vector<std::pair<std::string, int64_t>>{{"lidx0", 3}, {"lidx1", 2}}));
    std::vector<float> out(6), x{1, 2, 3, 4, 5, 6};
    run(t, {&out, &x});
    check_close(out, {1, 4, 2, 5, 3, 6});

    ProgramSpec s = gpu(k::seed_add());
    QCOMPARE(s.colored_name, colored_from("E", {{"4", "yellow"}}));
    QCOMPARE(s.global_size, (Dims{1, 1, 1}));
    QCOMPARE(*s.local_size, (Dims{1, 1, 1}));  // no lidx: one lane per work-group, as the reference's ProgramInfo
    QCOMPARE(count_op(s, Ops::SPECIAL), 0);

    ProgramSpec f = gpu(k::softmax_final_3x4());
    QCOMPARE(f.colored_name, colored_from("E", {{"3", "cyan"}, {"4", "yellow"}}));
    QCOMPARE(f.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.LOCAL, axis=0, arg=3)"}));
  }

  // GLSL: 4 adjacent float accesses at a multiple of 4 are one vec4 access through a second (non-restrict) view of
  // the binding; accesses that are not are left scalar
  void glsl_vec4_accesses() {
    const std::string add = glsl(k::seed_add());
    QVERIFY2(add.find("vec4 val0 = data1_v4[") != std::string::npos, add.c_str());
    QVERIFY2(add.find("data0_v4[0] = vec4(") != std::string::npos, add.c_str());
    // only the vec4 view is declared where only it is used, and it stays restrict
    QVERIFY2(add.find("binding = 1) restrict readonly buffer buf_1_v4 { vec4 data1_v4[]; };") != std::string::npos, add.c_str());
    QVERIFY2(add.find("data1_4[]") == std::string::npos, add.c_str());
    QVERIFY2(add.substr(add.find("void main")).find("data1_4[") == std::string::npos, add.c_str());  // no scalar access is left
    QVERIFY2(add.find("data1_v4[0]") != std::string::npos, add.c_str());  // a constant index is divided, not shifted
    // work-group packing: never across barriers or local memory, never for 2-D work groups
    ProgramSpec grouped = gpu(k::split_sum_256());
    QVERIFY(count_op(grouped, Ops::BARRIER) > 0);
    QCOMPARE(glsl_group_packing(grouped), 1);
    QCOMPARE(glsl_group_packing(gpu(k::transpose_3x2())), 1);
    const std::string tr = glsl(k::transpose_3x2());
    QVERIFY2(tr.find("vec4") == std::string::npos && tr.find("restrict") != std::string::npos, tr.c_str());
    // a 2-D work group orders its lanes by lidx1 first: local_size_x is lidx1's size and lidx0 reads .y (the same
    // lowered program; test_corpus runs such kernels on lavapipe)
    QVERIFY(glsl_swaps_lanes(gpu(k::transpose_3x2())));
    QVERIFY2(tr.find("layout(local_size_x = 2, local_size_y = 3, local_size_z = 1) in;") != std::string::npos, tr.c_str());
    QVERIFY2(tr.find("gl_LocalInvocationID.x") != std::string::npos && tr.find("gl_LocalInvocationID.y") != std::string::npos, tr.c_str());
    QVERIFY(!glsl_swaps_lanes(gpu(k::split_sum_256())));  // one dimension: as it is
    codegen_options()["GLSL_LANES_SWAP"] = "0";
    const std::string plain = glsl(k::transpose_3x2());
    codegen_options().erase("GLSL_LANES_SWAP");
    QVERIFY2(plain.find("layout(local_size_x = 3, local_size_y = 2, local_size_z = 1) in;") != std::string::npos, plain.c_str());
    // the swap exchanges exactly .x and .y
    std::string back = tr;
    for (size_t q = back.find("gl_LocalInvocationID."); q != std::string::npos; q = back.find("gl_LocalInvocationID.", q + 1))
      back[q + 21] = back[q + 21] == 'x' ? 'y' : back[q + 21] == 'y' ? 'x' : back[q + 21];
    QCOMPARE(back.substr(back.find("void main")), plain.substr(plain.find("void main")));
  }

  // GLSL on a GPU target: a launch of few lanes each summing rows of its own (a row sum of 16384 x 256: 4096 lanes in
  // work groups of 32, 4 rows a lane, rows 1 KB apart) reads each row with the whole work group: a loop over the
  // group's 32 rows per accumulator, lane l reading piece l of each (a chunk of 32 trips), the sums through work-group memory (one
  // padded 32 x 33 array per accumulator), two barriers a chunk. Name, opts and launch stay. Not on a target without
  // coalesce_row_reads (the generic GPU, lavapipe), nor with ROW_READS=0; ROW_READS=1 applies it there. Lanes that read
  // adjacent pieces already (a column sum) and two local dimensions (the 64^3 matmul): as the opts made them
  void glsl_row_reads() {
    OptTarget gpu_t = gpu_opt_target();
    gpu_t.coalesce_row_reads = true;
    const UOpRef rs = k::row_sum(16384, 256);
    const ProgramSpec plain = to_program(rs, glsl_renderer(), gpu_opt_target());
    const ProgramSpec p = to_program(rs, glsl_renderer(), gpu_t);
    QCOMPARE(p.name, plain.name);
    QCOMPARE(p.applied_opts, plain.applied_opts);
    QCOMPARE(p.global_size, plain.global_size);
    QCOMPARE(p.local_size, plain.local_size);
    QCOMPARE(*p.local_size, (Dims{32, 1, 1}));
    QVERIFY2(plain.src.find("shared") == std::string::npos, plain.src.c_str());
    auto count = [](const std::string& s, const std::string& what) {
      size_t n = 0;
      for (size_t q = s.find(what); q != std::string::npos; q = s.find(what, q + 1)) ++n;
      return n;
    };
    const size_t accs = count(plain.src, "float acc");
    QVERIFY(accs >= 2);
    QCOMPARE(count(p.src, "shared float local"), accs);
    QVERIFY2(p.src.find("shared float local0[1056];") != std::string::npos, p.src.c_str());  // 32 rows of 33
    QCOMPARE(count(p.src, "barrier();"), size_t{2});
    QCOMPARE(count(p.src, " < 32; Lidx"), accs);  // a loop over the group's rows per accumulator
    QCOMPARE(count(p.src, " < 31; Lidx"), accs);  // and one over a lane's terms but the first, which starts the sum
    QVERIFY2(p.src.find("(int(gl_LocalInvocationID.x))*33") != std::string::npos, p.src.c_str());  // each lane's own row
    QCOMPARE(count(p.src, "vec4 val"), count(plain.src, "vec4 val"));  // one piece of a row a lane and chunk
    QVERIFY2(p.src.find("Ridx1 < 2;") != std::string::npos, p.src.c_str());  // 64 trips: 2 chunks of 32
    codegen_options()["ROW_READS"] = "0";
    QCOMPARE(to_program(rs, glsl_renderer(), gpu_t).src, plain.src);
    codegen_options()["ROW_READS"] = "1";
    QCOMPARE(to_program(rs, glsl_renderer(), gpu_opt_target()).src, p.src);
    codegen_options().erase("ROW_READS");
    {
      const ProgramSpec a = to_program(k::matmul(64, 64, 64), glsl_renderer(), gpu_opt_target()), b = to_program(k::matmul(64, 64, 64), glsl_renderer(), gpu_t);
      QCOMPARE(b.src, a.src);
    }
    // a row max: its terms through work-group memory too, combined as the loop combined them (a < b ? b : a)
    const ProgramSpec mx = to_program(k::row_max(16384, 256), glsl_renderer(), gpu_t);
    QVERIFY2(mx.src.find("shared float local0[1056];") != std::string::npos && count(mx.src, "barrier();") == 2, mx.src.c_str());
    QVERIFY2(mx.src.find("((acc0<") != std::string::npos && mx.src.find("\n    acc0 = alu") != std::string::npos, mx.src.c_str());
    QVERIFY2(mx.src.find("((acc4<val5)?val5:acc4);") != std::string::npos && count(mx.src, " < 31; Lidx") == count(mx.src, " < 32; Lidx"), mx.src.c_str());
    // a column sum: adjacent lanes read adjacent floats
    auto o = k::param(0, 4096), x = k::param(1, 4096 * 256);
    auto r0 = k::R(4096, 0), r1 = k::R(256, 1, AxisType::REDUCE);
    const UOpRef cs = k::sink(k::end(k::store(o, r0, k::reduce(Ops::ADD, k::idx(x, iadd(imul(r1, k::c(4096)), r0)), {r1})), {r0}));
    QCOMPARE(to_program(cs, glsl_renderer(), gpu_t).src, to_program(cs, glsl_renderer(), gpu_opt_target()).src);
    // a matrix times a vector (16384 x 256): the vector's pieces read a lane each, as the rows' are
    {
      auto mo = k::param(0, 16384), ma = k::param(1, 16384 * 256), mx = k::param(2, 256);
      auto mr = k::R(16384, 0), mk = k::R(256, 1, AxisType::REDUCE);
      auto prod = alu(Ops::MUL, k::idx(ma, iadd(imul(mr, k::c(256)), mk)), k::idx(mx, mk));
      const UOpRef mv = k::sink(k::end(k::store(mo, mr, k::reduce(Ops::ADD, prod, {mk})), {mr}));
      const ProgramSpec a = to_program(mv, glsl_renderer(), gpu_opt_target()), b = to_program(mv, glsl_renderer(), gpu_t);
      QVERIFY2(a.src.find("shared") == std::string::npos, a.src.c_str());
      QVERIFY2(b.src.find("shared float local0[1056]") != std::string::npos, b.src.c_str());
    }
    // a softmax's sum of exps: the row's max read once a row, where the row is summed
    const ProgramSpec se = to_program(k::row_sum_exp(16384, 256), glsl_renderer(), gpu_t);
    QVERIFY2(se.src.find("shared float local0") != std::string::npos, se.src.c_str());
  }

  // corpus-gpu 16: the 64^3 matmul
  void matmul_64() {
    ProgramSpec p = gpu(k::matmul(64, 64, 64));
    QCOMPARE(p.name, std::string("r_2_8_16_4_4_16_4"));
    QCOMPARE(p.colored_name, colored_from("r", {{"2", "blue"}, {"8", "cyan"}, {"16", "cyan"}, {"4", "yellow"}, {"4", "yellow"}, {"16", "red"}, {"4", "magenta"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.UPCAST, axis=0, arg=4)",
                                   "Opt(op=OptOps.UNROLL, axis=0, arg=4)", "Opt(op=OptOps.LOCAL, axis=0, arg=8)",
                                   "Opt(op=OptOps.LOCAL, axis=1, arg=16)"}));
    QCOMPARE(p.global_size, (Dims{2, 1, 1}));
    QCOMPARE(*p.local_size, (Dims{8, 16, 1}));
    std::vector<float> a = pattern(64 * 64, 7, 5, 0.5f, -1), b = pattern(64 * 64, 3, 7, 0.25f), out(64 * 64);
    run(p, {&out, &a, &b});
    std::vector<float> want(64 * 64);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double acc = 0;
        for (int q = 0; q < 64; ++q) acc += double(a[i * 64 + q]) * b[q * 64 + j];
        want[i * 64 + j] = static_cast<float>(acc);
      }
    check_close(out, want, 1e-4f);
  }

  // small outputs group their reduce: 16 lanes each reduce a slice, their partials go through LOCAL memory and one
  // lane stores the total (a 4096-element sum is r_16_256, an 8x512 row sum r_8_16_32 on DEV=PYTHON)
  void grouptop_reduces() {
    ProgramSpec t = gpu(total_sum(4096));
    QCOMPARE(t.name, std::string("r_16_256"));
    QCOMPARE(t.colored_name, colored_from("r", {{"16", "RED"}, {"256", "red"}}));
    QCOMPARE(t.applied_opts, opts({"Opt(op=OptOps.GROUPTOP, axis=0, arg=16)"}));
    QCOMPARE(t.global_size, (Dims{1, 1, 1}));
    QCOMPARE(*t.local_size, (Dims{16, 1, 1}));
    QCOMPARE(count_op(t, Ops::BUFFER), 1);
    QCOMPARE(count_op(t, Ops::BARRIER), 1);
    for (auto& u : t.lowered->src)
      if (u->op == Ops::BUFFER) {
        QCOMPARE(u->as<ParamArg>().addrspace, AddrSpace::LOCAL);
        QCOMPARE(u->as<ParamArg>().size, int64_t{16});
      }
    // the global store is gated to lane 0 of the group
    bool gated = false;
    for (auto& u : t.lowered->src)
      if (u->op == Ops::STORE && u->src[0]->op == Ops::INDEX && u->src[0]->src[0]->op == Ops::PARAM)
        gated = u->src[0]->src.size() == 3 && u->src[0]->src[2]->op == Ops::CMPEQ && u->src[0]->src[2]->src[0]->op == Ops::SPECIAL;
    QVERIFY(gated);
    std::vector<float> x(4096), out(1);
    double want = 0;
    for (int i = 0; i < 4096; ++i) want += x[i] = static_cast<float>((i * 29) % 31);
    run(t, {&out, &x});
    QCOMPARE(out[0], static_cast<float>(want));  // integers: exact in any order

    ProgramSpec r = gpu(row_sum(8, 512));
    QCOMPARE(r.colored_name, colored_from("r", {{"8", "blue"}, {"16", "RED"}, {"32", "red"}}));
    QCOMPARE(r.global_size, (Dims{8, 1, 1}));
    QCOMPARE(*r.local_size, (Dims{16, 1, 1}));
    std::vector<float> m = pattern(8 * 512, 13, 17, 1.0f), rs(8), wr(8, 0);
    for (int i = 0; i < 8 * 512; ++i) wr[i / 512] += m[i];
    run(r, {&rs, &m});
    check_close(rs, wr);

    // a reduce that does not divide by 16 is not grouped (corpus-gpu 08: r_3_4)
    QCOMPARE(gpu(k::row_max_3x4()).colored_name, colored_from("r", {{"3", "cyan"}, {"4", "magenta"}}));
  }

  // mat-vec (recorded on DEV=PYTHON: w(64) @ A(64x32) is r_2_8_4_4_8): GROUP 8 of the reduce, LOCAL 4, UPCAST 4
  void matvec() {
    ProgramSpec p = gpu(vecmat(64, 32));
    QCOMPARE(p.name, std::string("r_2_8_4_4_8"));
    QCOMPARE(p.colored_name, colored_from("r", {{"2", "blue"}, {"8", "RED"}, {"4", "cyan"}, {"4", "yellow"}, {"8", "red"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.GROUP, axis=0, arg=8)", "Opt(op=OptOps.LOCAL, axis=0, arg=4)",
                                   "Opt(op=OptOps.UPCAST, axis=0, arg=4)"}));
    QCOMPARE(p.global_size, (Dims{2, 1, 1}));
    QCOMPARE(*p.local_size, (Dims{8, 4, 1}));
    std::vector<float> w = pattern(64, 3, 5, 1.0f / 3), A = pattern(64 * 32, 7, 11, 0.25f), out(32), want(32, 0);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 32; ++j) want[j] += w[i] * A[i * 32 + j];
    run(p, {&out, &w, &A});
    check_close(out, want, 1e-5f);
    // MV=0 turns the heuristic off: the output is then small enough to be grouped
    EnvGuard off("MV", "0");
    QCOMPARE(gpu(vecmat(64, 32)).applied_opts, opts({"Opt(op=OptOps.GROUPTOP, axis=0, arg=16)"}));
  }

  // the reference's checks in apply_opt
  void opt_checks() {
    auto err = [](const UOpRef& ast, const OptTarget& t, std::vector<Opt> os) {
      return error_of([&] {
        Scheduler s(ast, t);
        s.convert_loop_to_global();
        for (auto& o : os) s.apply_opt(o);
      });
    };
    OptTarget g = gpu_opt_target();
    QCOMPARE(err(row_sum(8, 512), cpu_opt_target(), {{OptOps::GROUPTOP, 0, 16}}), std::string("locals needed for opt"));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::LOCAL, 1, 4}}), std::string("local is for globals"));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::GROUP, 1, 4}}), std::string("invalid group axis 1"));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::GROUP, 0, 3}}).substr(0, 15), std::string("3 can't divide "));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::LOCAL, 0, 2}, {OptOps::NOLOCALS, 0, 0}}), std::string("no locals can't have locals"));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::NOLOCALS, 0, 0}, {OptOps::LOCAL, 0, 2}}), std::string("can't use locals"));
    QCOMPARE(err(row_sum(8, 512), g, {{OptOps::NOLOCALS, 0, 0}, {OptOps::GROUP, 0, 2}}), std::string("can't use locals"));
    // shared memory: 16 partials of 4 bytes need 64 bytes
    OptTarget small = g;
    small.shared_max = 32;
    QCOMPARE(err(total_sum(4096), small, {{OptOps::GROUPTOP, 0, 16}}), std::string("exceeds maximum shared memory size: needs 64, max 32"));
    QCOMPARE(err(total_sum(4096), small, {{OptOps::GROUPTOP, 0, 8}}), std::string("no error"));
    // once grouped, every later opt keeps the buffer within shared_max (8 partials x an upcast of 2 x 4 bytes > 32)
    QCOMPARE(err(row_sum(8, 512), small, {{OptOps::GROUPTOP, 0, 8}, {OptOps::UPCAST, 0, 2}}),
             std::string("exceeds maximum shared memory size: needs 64, max 32"));
    // a target whose shared memory cannot hold the group falls back to unrolling the reduce
    QCOMPARE(to_program(total_sum(4096), interp_renderer(), small).colored_name, colored_from("r", {{"1024", "red"}, {"4", "magenta"}}));
    // a group inside another reduce: sum_r1 (y[r1] * sum_r2 x[r1*4+r2])
    auto o = k::param(0, 1), y = k::param(1, 8), x = k::param(2, 32);
    auto r1 = k::R(8, 1, AxisType::REDUCE), r2 = k::R(4, 2, AxisType::REDUCE);
    auto inner = k::reduce(Ops::ADD, k::idx(x, iadd(imul(r1, k::c(4)), r2)), {r2});
    auto nested = k::sink(k::store(o, k::c(0), k::reduce(Ops::ADD, alu(Ops::MUL, k::idx(y, r1), inner), {r1})));
    QCOMPARE(err(nested, g, {{OptOps::GROUP, 1, 2}}), std::string("cannot have a GROUP_REDUCE inside another reduce"));
    QCOMPARE(err(nested, g, {{OptOps::GROUP, 0, 2}}), std::string("no error"));
    QCOMPARE((Opt{OptOps::NOLOCALS, 0, 0}.str()), std::string("Opt(op=OptOps.NOLOCALS, axis=None, arg=None)"));
  }

  // NOLOCALS=1 (recorded from the reference's to_program on DEV=PYTHON): E_3_4 with the global axis BLUE, idx0
  // specials, no local size; the global size then counts invocations
  void nolocals() {
    EnvGuard nl("NOLOCALS", "1");
    auto o = k::param(0, 12), a = k::param(1, 12), b = k::param(2, 4);
    auto r0 = k::R(3, 0), r1 = k::R(4, 1);
    auto i = iadd(imul(r0, k::c(4)), r1);
    auto ast = k::sink(k::end(k::store(o, i, alu(Ops::ADD, k::idx(a, i), k::idx(b, r1))), {r0, r1}));
    ProgramSpec p = gpu(ast);
    QCOMPARE(p.colored_name, colored_from("E", {{"3", "BLUE"}, {"4", "yellow"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)"}));
    QCOMPARE(p.global_size, (Dims{3, 1, 1}));
    QVERIFY(!p.local_size.has_value());
    QCOMPARE(specials(p), (std::vector<std::pair<std::string, int64_t>>{{"idx0", 3}}));
    std::vector<float> av = pattern(12, 1, 12, 1.0f), bv{10, 20, 30, 40}, out(12);
    run(p, {&out, &av, &bv});
    check_close(out, {10, 21, 32, 43, 14, 25, 36, 47, 18, 29, 40, 51});
    // every global axis is BLUE under NOLOCALS
    QCOMPARE(gpu(k::ew_2x4()).colored_name, colored_from("E", {{"2", "BLUE"}, {"4", "yellow"}}));
  }

  // the reference's get_grouped_dims (codegen/gpudims.py), its outputs printed for each case
  void grouped_dims() {
    struct Case {
      std::string prefix;
      std::vector<int64_t> dims;
      Dims max;
      bool reverse;
      std::vector<std::pair<std::string, int64_t>> specials;
      std::function<std::vector<int64_t>(const std::map<std::string, int64_t>&)> expect;
    };
    std::vector<Case> cases = {
        {"gidx", {2, 3, 4, 5}, {16, 16, 16}, false, {{"gidx0", 6}, {"gidx1", 4}, {"gidx2", 5}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx0") / 3, v.at("gidx0") % 3, v.at("gidx1"), v.at("gidx2")}; }},
        {"gidx", {2, 3, 4, 5}, {16, 16, 16}, true, {{"gidx0", 5}, {"gidx1", 12}, {"gidx2", 2}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx2"), v.at("gidx1") % 3, v.at("gidx1") / 3, v.at("gidx0")}; }},
        {"gidx", {64}, {16, 16, 16}, false, {{"gidx0", 16}, {"gidx1", 4}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx1") + v.at("gidx0") * 4}; }},
        {"gidx", {100}, {8, 8, 8}, false, {{"gidx0", 5}, {"gidx1", 5}, {"gidx2", 4}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx2") + v.at("gidx0") * 20 + v.at("gidx1") * 4}; }},
        {"lidx", {6, 20}, {4, 64, 64}, false, {{"lidx0", 3}, {"lidx1", 40}},
         [](auto& v) { return std::vector<int64_t>{v.at("lidx0") * 2 + v.at("lidx1") / 20, v.at("lidx1") % 20}; }},
        {"gidx", {3, 5, 7}, {1024, 1024, 1024}, true, {{"gidx0", 7}, {"gidx1", 5}, {"gidx2", 3}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx2"), v.at("gidx1"), v.at("gidx0")}; }},
        {"lidx", {32, 4}, {16, 16, 16}, false, {{"lidx0", 16}, {"lidx1", 8}},
         [](auto& v) { return std::vector<int64_t>{v.at("lidx0") * 2 + v.at("lidx1") / 4, v.at("lidx1") % 4}; }},
        {"gidx", {4, 6}, {8, 3, 8}, true, {{"gidx0", 6}, {"gidx1", 2}, {"gidx2", 2}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx2") + v.at("gidx1") * 2, v.at("gidx0")}; }},
        {"gidx", {1001}, {16, 16, 16}, true, {{"gidx0", 13}, {"gidx1", 11}, {"gidx2", 7}},
         [](auto& v) { return std::vector<int64_t>{v.at("gidx2") + v.at("gidx0") * 77 + v.at("gidx1") * 7}; }},
    };
    for (auto& c : cases) {
      UOps dims;
      for (int64_t d : c.dims) dims.push_back(iconst(d));
      auto idxs = get_grouped_dims(c.prefix, dims, c.max, c.reverse);
      QCOMPARE(idxs.size(), c.dims.size());
      std::map<std::string, int64_t> sizes;
      for (auto& x : idxs)
        for (auto& u : x->toposort())
          if (u->op == Ops::SPECIAL) sizes[u->as<std::string>()] = u->src[0]->const_int();
      const std::vector<std::pair<std::string, int64_t>> got(sizes.begin(), sizes.end());
      QCOMPARE(got, c.specials);
      // every launch index maps to the index the reference computes
      std::vector<std::pair<std::string, int64_t>> sp = c.specials;
      std::map<std::string, int64_t> v;
      std::function<void(size_t)> walk = [&](size_t k) {
        if (k == sp.size()) {
          auto want = c.expect(v);
          for (size_t i = 0; i < idxs.size(); ++i)
            if (eval_with(idxs[i], v) != want[i]) QFAIL(qPrintable(QString("%1 dim %2 differs").arg(QString::fromStdString(c.prefix)).arg(i)));
          return;
        }
        for (int64_t x = 0; x < sp[k].second; ++x) {
          v[sp[k].first] = x;
          walk(k + 1);
        }
      };
      walk(0);
    }
    // a prime over the limit cannot be split (the reference's RuntimeError)
    std::string e = error_of([] { get_grouped_dims("gidx", {iconst(7)}, {4, 4, 4}, false); });
    QVERIFY2(e.find("cannot limit dim (7,), (4, 4, 4)") != std::string::npos, e.c_str());
  }

  // whole kernels whose launch dims do not fit: four global dims merged into three, one dim over global_max split
  // across three, results checked element by element
  void launch_dims_merge_and_split() {
    {
      EnvGuard noopt("NOOPT", "1");
      ProgramSpec p = gpu(ew_2345());
      QCOMPARE(p.colored_name, colored_from("E", {{"2", "blue"}, {"3", "blue"}, {"4", "blue"}, {"5", "blue"}}));
      QCOMPARE(p.global_size, (Dims{20, 3, 2}));  // (5, 4) merged: gidx0 = 20
      std::vector<float> x = pattern(120, 1, 120, 1.0f), out(120);
      run(p, {&out, &x});
      std::vector<float> want(120);
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 3; ++b)
          for (int c = 0; c < 4; ++c)
            for (int d = 0; d < 5; ++d) want[d * 24 + c * 6 + b * 2 + a] = 2.0f * x[a * 60 + b * 20 + c * 5 + d];
      check_close(out, want);
    }
    OptTarget t = gpu_opt_target();
    t.global_max = {16, 16, 16};
    auto o = k::param(0, 1001), x = k::param(1, 1001);
    auto r0 = k::R(1001, 0);
    ProgramSpec p = gpu(k::sink(k::end(k::store(o, r0, alu(Ops::ADD, k::idx(x, r0), uconst(dtypes::float32, 1.0))), {r0})), t);
    QCOMPARE(p.colored_name, colored_from("E", {{"1001", "blue"}}));
    QCOMPARE(p.global_size, (Dims{13, 11, 7}));
    std::vector<float> xv = pattern(1001, 1, 1001, 1.0f), out(1001, -1);
    run(p, {&out, &xv});
    for (int i = 0; i < 1001; ++i) QCOMPARE(out[i], xv[i] + 1);
    // a dim that cannot be split is an error naming it
    t.global_max = {4, 4, 4};
    auto o7 = k::param(0, 7), x7 = k::param(1, 7);
    auto r7 = k::R(7, 0);
    std::string e = error_of([&] { gpu(k::sink(k::end(k::store(o7, r7, k::idx(x7, r7)), {r7})), t); });
    QVERIFY2(e.find("cannot limit dim (7,)") != std::string::npos, e.c_str());
  }

  // a symbolic global dim: the SPECIAL's size is the Variable, launch_dims evaluates it
  void symbolic_launch_dims() {
    ParamArg pa;
    pa.slot = -1;
    pa.name = "n";
    pa.vmin = 1;
    pa.vmax = 10;
    pa.addrspace = AddrSpace::ALU;
    auto n = UOp::make(Ops::PARAM, dtypes::weakint, {}, pa);
    auto o = k::param(0, 10), x = k::param(1, 10);
    auto r0 = UOp::make(Ops::RANGE, dtypes::weakint, {n}, RangeArg{0, AxisType::WEAK});
    ProgramSpec p = gpu(k::sink(k::end(k::store(o, r0, alu(Ops::MUL, k::idx(x, r0), uconst(dtypes::float32, 3.0))), {r0})));
    QCOMPARE(p.colored_name, colored_from("E", {{"n", "blue"}}));
    QCOMPARE(p.vars, std::vector<std::string>{"n"});
    QCOMPARE(p.global_size, (Dims{10, 1, 1}));  // its largest value
    std::vector<int64_t> vars{7};
    QCOMPARE(launch_dims(p, vars).global_size, (Dims{7, 1, 1}));
    std::vector<float> xv = pattern(10, 1, 10, 1.0f), out(10, -1);
    run(p, {&out, &xv}, {7});
    check_close(out, {0, 3, 6, 9, 12, 15, 18, -1, -1, -1});
  }

  // pm_implicit_barriers on hand-built graphs: a read of LOCAL memory after LOCAL stores waits on a BARRIER (RAW);
  // a loop body that stores and loads LOCAL memory ends with one (WAR); no barrier without LOCAL stores
  void barrier_placement() {
    ParamArg la;
    la.slot = 0;
    la.size = 4;
    la.addrspace = AddrSpace::LOCAL;
    auto buf = UOp::make(Ops::BUFFER, dtypes::float32, {}, la);
    auto lid = UOp::make(Ops::SPECIAL, dtypes::int32, {uconst_int(dtypes::int32, 4)}, std::string("lidx0"));
    auto st = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, lid}), uconst(dtypes::float32, 1.0)});
    auto after = UOp::make(Ops::AFTER, dtypes::float32, {buf, st});
    auto rd = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32, {after, uconst_int(dtypes::int32, 0)})});
    auto o = out_param(4);
    auto gst = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {o, lid}), rd});
    auto sink = UOp::make(Ops::SINK, dtypes::void_, {gst});
    UOpRef res = graph_rewrite(sink, pm_implicit_barriers(), "test barriers");
    int barriers = 0;
    for (auto& u : res->toposort())
      if (u->op == Ops::BARRIER) {
        ++barriers;
        QCOMPARE(u->src.size(), size_t{1});
        QCOMPARE(u->src[0], st);  // it waits for the LOCAL store
      }
    QCOMPARE(barriers, 1);
    QCOMPARE(graph_rewrite(res, pm_implicit_barriers(), "again"), res);  // idempotent
    // WAR: for r in 0..3: local[lid] = r; out[lid] += local[(lid+1)%4] -- the next iteration's store must wait
    auto r = urange(4, 0, AxisType::REDUCE);
    auto rc = ucast(r, dtypes::float32);
    auto st2 = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {buf, lid}), rc});
    auto ld2 = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32, {UOp::make(Ops::AFTER, dtypes::float32, {buf, st2}), lid})});
    auto body = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {o, lid}), ld2});
    auto loop = UOp::make(Ops::END, dtypes::void_, {body, r});
    UOpRef war = graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, {loop}), pm_implicit_barriers(), "test war");
    const UOpRef& end = war->src[0];
    QCOMPARE(end->op, Ops::END);
    QCOMPARE(end->src[0]->op, Ops::BARRIER);
    bool waits_for_load = false;
    for (size_t i = 1; i < end->src[0]->src.size(); ++i) waits_for_load = waits_for_load || end->src[0]->src[i]->op == Ops::LOAD;
    QVERIFY(waits_for_load);
    // global memory needs none
    auto g2 = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::float32, {o, lid}), rc});
    auto gl = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::END, dtypes::void_, {g2, r})});
    QCOMPARE(graph_rewrite(gl, pm_implicit_barriers(), "none"), gl);
  }

  // the lowered group reduce: the LOCAL store, then the barrier, then the loads of the partials
  void group_reduce_program_order() {
    ProgramSpec t = gpu(total_sum(4096));
    int local_store = -1, barrier = -1, first_local_load = -1;
    for (size_t i = 0; i < t.lowered->src.size(); ++i) {
      const UOpRef& u = t.lowered->src[i];
      auto is_local = [&](const UOpRef& x) {
        const UOp* b = x.get();
        while (b->op == Ops::INDEX || b->op == Ops::AFTER) b = b->src[0].get();
        return b->op == Ops::BUFFER;
      };
      if (u->op == Ops::STORE && u->src[0]->op == Ops::INDEX && is_local(u->src[0])) local_store = static_cast<int>(i);
      if (u->op == Ops::BARRIER) barrier = static_cast<int>(i);
      if (u->op == Ops::LOAD && u->src[0]->op == Ops::INDEX && is_local(u->src[0]) && first_local_load < 0) first_local_load = static_cast<int>(i);
    }
    QVERIFY2(local_store >= 0 && local_store < barrier && barrier < first_local_load, t.src.c_str());
  }

  // the CPU renderers refuse GPU programs with an error naming the kernel and the op
  void cpu_renderers_refuse_gpu_programs() {
    for (const Renderer* l : {&clang_renderer(), &llvm_renderer()}) {
      std::string e = error_of([&] { to_program(total_sum(4096), *l, gpu_opt_target()); });
      QVERIFY2(e.find("renderer is a CPU renderer: kernel r_16_256 has") != std::string::npos, e.c_str());
      e = error_of([&] { to_program(k::transpose_3x2(), *l, gpu_opt_target()); });
      QVERIFY2(e.find("kernel E_3_2 has SPECIAL lidx") != std::string::npos, e.c_str());
    }
    // the same kernels on the CPU target still render
    QVERIFY(!to_program(total_sum(4096), clang_renderer()).src.empty());
  }

  // lanes share LOCAL memory and wait for each other at a barrier: lane i writes 10*i, then reads lane i+1's value
  void interpreter_barriers_and_local_memory() {
    Asm a;
    auto o = a.add(Ops::PARAM, dtypes::float32, {}, out_param(4)->arg);
    ParamArg la;
    la.slot = 0;
    la.size = 4;
    la.addrspace = AddrSpace::LOCAL;
    auto buf = a.add(Ops::BUFFER, dtypes::float32, {}, la);
    auto four = a.add(Ops::CONST, dtypes::int32, {}, int64_t{4});
    auto lid = a.add(Ops::SPECIAL, dtypes::int32, {four}, std::string("lidx0"));
    auto ten = a.add(Ops::CONST, dtypes::float32, {}, 10.0);
    auto one = a.add(Ops::CONST, dtypes::int32, {}, int64_t{1});
    auto li = a.add(Ops::INDEX, dtypes::float32, {buf, lid});
    auto val = a.add(Ops::MUL, dtypes::float32, {a.add(Ops::CAST, dtypes::float32, {lid}), ten});
    auto st = a.add(Ops::STORE, dtypes::void_, {li, val});
    a.add(Ops::BARRIER, dtypes::void_, {st});
    auto next = a.add(Ops::FLOORMOD, dtypes::int32, {a.add(Ops::ADD, dtypes::int32, {lid, one}), four});
    auto ld = a.add(Ops::LOAD, dtypes::float32, {a.add(Ops::INDEX, dtypes::float32, {buf, next})});
    a.add(Ops::STORE, dtypes::void_, {a.add(Ops::INDEX, dtypes::float32, {o, lid}), ld});
    ProgramSpec p = a.spec("exchange", 1, {4, 1, 1});
    std::vector<float> out(4, -1);
    run(p, {&out});
    check_close(out, {10, 20, 30, 0});

    // LOCAL memory is bounds-checked like buffers
    Asm b;
    auto bo = b.add(Ops::PARAM, dtypes::float32, {}, out_param(4)->arg);
    auto bb = b.add(Ops::BUFFER, dtypes::float32, {}, la);
    auto bf = b.add(Ops::CONST, dtypes::int32, {}, int64_t{4});
    auto bl = b.add(Ops::SPECIAL, dtypes::int32, {bf}, std::string("lidx0"));
    auto b2 = b.add(Ops::CONST, dtypes::int32, {}, int64_t{2});
    auto bld = b.add(Ops::LOAD, dtypes::float32, {b.add(Ops::INDEX, dtypes::float32, {bb, b.add(Ops::ADD, dtypes::int32, {bl, b2})})});
    b.add(Ops::STORE, dtypes::void_, {b.add(Ops::INDEX, dtypes::float32, {bo, bl}), bld});
    std::string e = error_of([&] { run(b.spec("peek", 1, {4, 1, 1}), {&out}); });
    QVERIFY2(e.find("kernel peek reads local0_4[4], outside its 4 elements") != std::string::npos, e.c_str());
  }

  // a lane that finishes while others wait at a barrier is an error naming the kernel: lane l loops l+1 times
  // around a barrier, so lane 0 ends while lanes 1..3 wait at the second one
  void interpreter_barrier_divergence() {
    auto program = [](bool per_lane_trip_count) {
      Asm a;
      auto o = a.add(Ops::PARAM, dtypes::float32, {}, out_param(4)->arg);
      auto four = a.add(Ops::CONST, dtypes::int32, {}, int64_t{4});
      auto lid = a.add(Ops::SPECIAL, dtypes::int32, {four}, std::string("lidx0"));
      auto one = a.add(Ops::CONST, dtypes::int32, {}, int64_t{1});
      auto n = per_lane_trip_count ? a.add(Ops::ADD, dtypes::int32, {lid, one}) : a.add(Ops::CONST, dtypes::int32, {}, int64_t{3});
      auto r = a.add(Ops::RANGE, dtypes::int32, {n}, RangeArg{0, AxisType::LOOP});
      auto bar = a.add(Ops::BARRIER, dtypes::void_, {r});
      a.add(Ops::END, dtypes::void_, {bar, r});
      a.add(Ops::STORE, dtypes::void_, {a.add(Ops::INDEX, dtypes::float32, {o, lid}), a.add(Ops::CAST, dtypes::float32, {lid})});
      return a.spec("divergent", 1, {4, 1, 1});
    };
    std::vector<float> out(4, -1);
    std::string e = error_of([&] { run(program(true), {&out}); });
    QVERIFY2(e.find("barrier divergence in kernel divergent") != std::string::npos && e.find("lane 0 finished while lane 1 waits") != std::string::npos,
             e.c_str());
    // the same barrier in a loop every lane runs 3 times is fine
    run(program(false), {&out});
    check_close(out, {0, 1, 2, 3});
  }
};

QTEST_GUILESS_MAIN(TestGpuCodegen)
#include "test_gpu_codegen.moc"
