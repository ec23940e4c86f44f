// Tests for the GPU path of codegen (a target with locals: gpu_opt_target(), the reference's generic GPU renderer as
// its DEV=PYTHON runs it): LOCAL / GROUP / GROUPTOP / NOLOCALS opts and their checks and kernel names with colours.
// Oracles: names, opts and launch dims as tinygrad a9069c1 reports them on DEV=PYTHON (tests/corpus-gpu and
// programs recorded the same way, named in each test); numbers worked out by hand.
#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "engine/codegen/linearize.h"
#include "engine/codegen/lowering.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/to_program.h"
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

ProgramSpec gpu(const UOpRef& ast, const OptTarget& t = gpu_opt_target()) { return to_program(ast, Lang::INTERP, t); }

void run(const ProgramSpec& p, std::vector<std::vector<float>*> bufs, std::vector<int64_t> vars = {}) { ts_test::run_interp(p, bufs, vars); }
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
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
struct EnvGuard {
  const char* name;
  EnvGuard(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~EnvGuard() { unsetenv(name); }
};

}  // namespace

class TestGpuCodegen : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    setenv("NUM_CPU_THREADS", "8", 1);
    unsetenv("NOOPT");
    unsetenv("NOLOCALS");
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
    std::vector<float> out(6), x{1, 2, 3, 4, 5, 6};
    run(t, {&out, &x});
    check_close(out, {1, 4, 2, 5, 3, 6});

    ProgramSpec s = gpu(k::seed_add());
    QCOMPARE(s.colored_name, colored_from("E", {{"4", "yellow"}}));

    ProgramSpec f = gpu(k::softmax_final_3x4());
    QCOMPARE(f.colored_name, colored_from("E", {{"3", "cyan"}, {"4", "yellow"}}));
    QCOMPARE(f.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.LOCAL, axis=0, arg=3)"}));
  }

  // corpus-gpu 16: the 64^3 matmul
  void matmul_64() {
    ProgramSpec p = gpu(k::matmul(64, 64, 64));
    QCOMPARE(p.name, std::string("r_2_8_16_4_4_16_4"));
    QCOMPARE(p.colored_name, colored_from("r", {{"2", "blue"}, {"8", "cyan"}, {"16", "cyan"}, {"4", "yellow"}, {"4", "yellow"}, {"16", "red"}, {"4", "magenta"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.UPCAST, axis=0, arg=4)",
                                   "Opt(op=OptOps.UNROLL, axis=0, arg=4)", "Opt(op=OptOps.LOCAL, axis=0, arg=8)",
                                   "Opt(op=OptOps.LOCAL, axis=1, arg=16)"}));
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
    std::vector<float> x(4096), out(1);
    double want = 0;
    for (int i = 0; i < 4096; ++i) want += x[i] = static_cast<float>((i * 29) % 31);
    run(t, {&out, &x});
    QCOMPARE(out[0], static_cast<float>(want));  // integers: exact in any order

    ProgramSpec r = gpu(row_sum(8, 512));
    QCOMPARE(r.colored_name, colored_from("r", {{"8", "blue"}, {"16", "RED"}, {"32", "red"}}));
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
    QCOMPARE(to_program(total_sum(4096), Lang::INTERP, small).colored_name, colored_from("r", {{"1024", "red"}, {"4", "magenta"}}));
    // a group inside another reduce: sum_r1 (y[r1] * sum_r2 x[r1*4+r2])
    auto o = k::param(0, 1), y = k::param(1, 8), x = k::param(2, 32);
    auto r1 = k::R(8, 1, AxisType::REDUCE), r2 = k::R(4, 2, AxisType::REDUCE);
    auto inner = k::reduce(Ops::ADD, k::idx(x, iadd(imul(r1, k::c(4)), r2)), {r2});
    auto nested = k::sink(k::store(o, k::c(0), k::reduce(Ops::ADD, alu(Ops::MUL, k::idx(y, r1), inner), {r1})));
    QCOMPARE(err(nested, g, {{OptOps::GROUP, 1, 2}}), std::string("cannot have a GROUP_REDUCE inside another reduce"));
    QCOMPARE(err(nested, g, {{OptOps::GROUP, 0, 2}}), std::string("no error"));
    QCOMPARE((Opt{OptOps::NOLOCALS, 0, 0}.str()), std::string("Opt(op=OptOps.NOLOCALS, axis=None, arg=None)"));
  }

  // NOLOCALS=1 (recorded from the reference's to_program on DEV=PYTHON): E_3_4 with the global axis BLUE
  void nolocals() {
    EnvGuard nl("NOLOCALS", "1");
    auto o = k::param(0, 12), a = k::param(1, 12), b = k::param(2, 4);
    auto r0 = k::R(3, 0), r1 = k::R(4, 1);
    auto i = iadd(imul(r0, k::c(4)), r1);
    auto ast = k::sink(k::end(k::store(o, i, alu(Ops::ADD, k::idx(a, i), k::idx(b, r1))), {r0, r1}));
    ProgramSpec p = gpu(ast);
    QCOMPARE(p.colored_name, colored_from("E", {{"3", "BLUE"}, {"4", "yellow"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)"}));
    std::vector<float> av = pattern(12, 1, 12, 1.0f), bv{10, 20, 30, 40}, out(12);
    run(p, {&out, &av, &bv});
    check_close(out, {10, 21, 32, 43, 14, 25, 36, 47, 18, 29, 40, 51});
    // every global axis is BLUE under NOLOCALS
    QCOMPARE(gpu(k::ew_2x4()).colored_name, colored_from("E", {{"2", "BLUE"}, {"4", "yellow"}}));
  }
};

QTEST_GUILESS_MAIN(TestGpuCodegen)
#include "test_gpu_codegen.moc"
