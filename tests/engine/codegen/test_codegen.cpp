// Tests for codegen (engine/codegen/to_program.h): kernel names and opts as the reference's CPU heuristics pick them,
// estimates, the rendered C signature, and the interpreter's numbers on hand-built kernel ASTs.
#include <QtTest/QtTest>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/renderer/c_renderer.h"
#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/linearize.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/to_program.h"
#include "engine/runtime/interp/interpreter.h"
#include "engine/runtime/program_runner.h"
#include "engine/uop/symbolic.h"
#include "engine/uop/uop.h"
#include "tests/engine/codegen/kernels.h"
#include "tests/engine/codegen/test_util.h"

using namespace ts;

namespace {

using ts_test::check_close;
using ts_test::colored_from;
using ts_test::opts;
using ts_test::run_interp;
std::vector<float> iota_f(int n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + step * i;
  return v;
}

}  // namespace

class TestCodegen : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { codegen_options()["NUM_CPU_THREADS"] = "8"; }

  // the interpreter checks every load and store against its buffer's size; the error names the kernel, the buffer
  // and the index (a read one past the end of a 4-element input, a store one past the end of a 3-element output)
  void interpreter_bounds_checks_every_access() {
    auto out_of_bounds_message = [](const UOpRef& ast, std::vector<std::vector<float>*> bufs) -> std::string {
      try {
        run_interp(to_program(ast, interp_renderer()), bufs);
      } catch (const std::exception& e) {
        return e.what();
      }
      return "no error";
    };
    std::vector<float> out(4), small_out(3), x{1, 2, 3, 4};
    auto o = k::param(0, 4), a = k::param(1, 4);
    auto r0 = k::R(4, 0);
    UOpRef read_past = k::sink(k::end(k::store(o, r0, k::idx(a, iadd(r0, k::c(1)))), {r0}));
    std::string m = out_of_bounds_message(read_past, {&out, &x});
    QVERIFY2(m.find("kernel E_4") != std::string::npos && m.find("reads data1_4[4]") != std::string::npos &&
                 m.find("outside its 4 elements") != std::string::npos, m.c_str());
    auto o3 = k::param(0, 3);
    UOpRef store_past = k::sink(k::end(k::store(o3, r0, k::idx(a, r0)), {r0}));
    m = out_of_bounds_message(store_past, {&small_out, &x});
    QVERIFY2(m.find("stores to data0_3[3]") != std::string::npos, m.c_str());
    // in bounds: the same kernel shapes run
    run_interp(to_program(k::seed_add(), interp_renderer()), {&out, &x, &x});
    check_close(out, {2, 4, 6, 8});
  }

  void seed_add_is_E_4() {
    ProgramSpec p = to_program(k::seed_add(), clang_renderer());
    QCOMPARE(p.name, std::string("E_4"));
    QCOMPARE(p.colored_name, colored_from("E", {{"4", "yellow"}}));
    QCOMPARE(p.colored_name, std::string("E\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m"));
    QCOMPARE(p.function_name, std::string("E_4"));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=0, arg=4)"}));
    QCOMPARE(p.global_size, (std::array<int64_t, 3>{1, 1, 1}));
    QCOMPARE(p.threads, 1);
    QCOMPARE(p.outs, std::vector<int>{0});
    QCOMPARE(p.ins, (std::vector<int>{1, 2}));
    QCOMPARE(p.num_buffers, 3);
    QCOMPARE(p.estimates.ops, 4.0);
    QCOMPARE(p.estimates.lds, 48.0);
    QCOMPARE(p.estimates.mem, 48.0);
    QVERIFY2(p.src.find("void E_4(float* restrict data0_4, float* restrict data1_4, float* restrict data2_4) {") != std::string::npos, p.src.c_str());
    QVERIFY(p.src.find("void E_4_entry(void** bufs, const long long* vars, int core_id) {") != std::string::npos);
    QCOMPARE(entry_symbol(p), std::string("E_4_entry"));
    // four lanes at base+0..3 become one float4 access, as in the reference's DEBUG=4 output
    QVERIFY2(p.src.find("float4 val0 = (*((float4*)((data1_4+0))));") != std::string::npos, p.src.c_str());
    QVERIFY(p.src.find("*((float4*)((data0_4+0))) = (float4){val0[0]+val1[0],val0[1]+val1[1],val0[2]+val1[2],val0[3]+val1[3]};") != std::string::npos);
    std::vector<float> out(4), a{1, 2, 3, 4}, b{10, 20, 30, 40};
    run_interp(to_program(k::seed_add(), interp_renderer()), {&out, &a, &b});
    check_close(out, {11, 22, 33, 44});
  }

  void sums_of_2x3() {
    ProgramSpec row = to_program(k::row_sum_2x3(), interp_renderer());
    QCOMPARE(row.name, std::string("r_2_3"));
    QCOMPARE(row.colored_name, colored_from("r", {{"2", "WHITE"}, {"3", "magenta"}}));
    QCOMPARE(row.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(row.estimates.ops, 4.0);
    QCOMPARE(row.estimates.lds, 32.0);
    QCOMPARE(row.estimates.mem, 32.0);
    std::vector<float> x = iota_f(6, 1), o2(2), o3(3), o1(1);
    run_interp(row, {&o2, &x});
    check_close(o2, {6, 15});

    ProgramSpec col = to_program(k::col_sum_2x3(), interp_renderer());
    QCOMPARE(col.name, std::string("r_3_2"));
    QCOMPARE(col.colored_name, colored_from("r", {{"3", "WHITE"}, {"2", "magenta"}}));
    QCOMPARE(col.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(col.estimates.ops, 3.0);
    QCOMPARE(col.estimates.lds, 36.0);
    run_interp(col, {&o3, &x});
    check_close(o3, {5, 7, 9});

    // two contiguous reduce ranges merge into one: r_6, not r_2_3
    ProgramSpec full = to_program(k::full_sum_2x3(), interp_renderer());
    QCOMPARE(full.name, std::string("r_6"));
    QCOMPARE(full.colored_name, colored_from("r", {{"6", "magenta"}}));
    QCOMPARE(full.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(full.estimates.ops, 5.0);
    QCOMPARE(full.estimates.lds, 28.0);
    QCOMPARE(full.estimates.mem, 28.0);
    run_interp(full, {&o1, &x});
    check_close(o1, {21});
  }

  void softmax_kernels() {
    ProgramSpec mx = to_program(k::row_max_3x4(), interp_renderer());
    QCOMPARE(mx.name, std::string("r_3_4"));
    QCOMPARE(mx.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(mx.estimates.ops, 18.0);  // MAX is a<b?b:a: two ops, as the reference counts it
    QCOMPARE(mx.estimates.lds, 60.0);
    std::vector<float> x{1, 5, 2, 0, -1, -3, -2, -7, 4, 4, 9, 8}, m(3);
    run_interp(mx, {&m, &x});
    check_close(m, {5, -1, 9});

    ProgramSpec fin = to_program(k::softmax_final_3x4(), interp_renderer());
    QCOMPARE(fin.name, std::string("E_3_4"));
    QCOMPARE(fin.colored_name, colored_from("E", {{"3", "WHITE"}, {"4", "yellow"}}));
    QCOMPARE(fin.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)"}));
    QCOMPARE(fin.estimates.lds, 120.0);
    std::vector<float> s{2, 4, 8}, out(12);
    run_interp(fin, {&out, &x, &m, &s});
    std::vector<float> want(12);
    for (int i = 0; i < 12; ++i) want[i] = std::exp(x[i] - m[i / 4]) / s[i / 4];
    check_close(out, want, 1e-5f);
  }

  void matmuls() {
    ProgramSpec small = to_program(k::matmul(4, 8, 3), interp_renderer());
    QCOMPARE(small.name, std::string("r_4_3_8"));
    QCOMPARE(small.colored_name, colored_from("r", {{"4", "WHITE"}, {"3", "WHITE"}, {"8", "magenta"}}));
    QCOMPARE(small.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(small.estimates.ops, 180.0);
    QCOMPARE(small.estimates.lds, 560.0);
    QCOMPARE(small.estimates.mem, 272.0);

    ProgramSpec p = to_program(k::matmul(64, 64, 64), interp_renderer());
    QCOMPARE(p.name, std::string("r_8_16_2_4_4_16_4"));
    QCOMPARE(p.colored_name, colored_from("r", {{"8", "WHITE"}, {"16", "WHITE"}, {"2", "BLUE"}, {"4", "yellow"},
                                                {"4", "yellow"}, {"16", "red"}, {"4", "magenta"}}));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=1, arg=4)", "Opt(op=OptOps.UPCAST, axis=0, arg=4)",
                                   "Opt(op=OptOps.UNROLL, axis=0, arg=4)", "Opt(op=OptOps.THREAD, axis=0, arg=2)"}));
    QCOMPARE(p.threads, 2);
    QCOMPARE(p.global_size, (std::array<int64_t, 3>{2, 1, 1}));
    QCOMPARE(p.estimates.ops, 524288.0);
    // the bytes the program loads: 4 column tiles computed together read each row of a once for all 4 (the loop
    // jam); without the jam, the reference's program and figure
    QCOMPARE(p.estimates.lds, 344064.0);
    QCOMPARE(p.estimates.mem, 49152.0);
    codegen_options()["JAM"] = "0";
    QCOMPARE(to_program(k::matmul(64, 64, 64), interp_renderer()).estimates.lds, 540672.0);
    codegen_options().erase("JAM");
    QVERIFY(p.vars.empty());  // core_id is supplied by the runtime, not a user Variable

    const int n = 64;
    std::vector<float> a(n * n), b(n * n), out(n * n, -1.f);
    for (int i = 0; i < n * n; ++i) {
      a[i] = static_cast<float>((i * 7) % 13) - 6;
      b[i] = static_cast<float>((i * 5) % 11) - 5;
    }
    run_interp(p, {&out, &a, &b});
    std::vector<float> want(n * n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < n; ++kk) acc += static_cast<double>(a[i * n + kk]) * b[kk * n + j];
        want[i * n + j] = static_cast<float>(acc);
      }
    check_close(out, want);

    ProgramSpec c = to_program(k::matmul(64, 64, 64), clang_renderer());
    QVERIFY2(c.src.find("void r_8_16_2_4_4_16_4(float* restrict data0_4096, float* restrict data1_4096, float* restrict data2_4096, const int data3_) {") != std::string::npos, c.src.c_str());
    QVERIFY2(c.src.find("for (int Ridx2 = 0; Ridx2 < 16; Ridx2++) {") != std::string::npos, c.src.c_str());
    // b's reads walk its columns (4 rows of 64 floats, 1 KiB, a reduce step): copied into a panel per column tile, before
    // the row loop
    QVERIFY2(c.src.find("float panel0[1024] __attribute__((aligned(64)));") != std::string::npos, c.src.c_str());
    codegen_options()["PACK"] = "0";
    const ProgramSpec unpacked = to_program(k::matmul(64, 64, 64), clang_renderer());
    codegen_options().erase("PACK");
    QVERIFY2(unpacked.src.find("for (int Lidx0 = 0; Lidx0 < 8; Lidx0++) {") != std::string::npos, unpacked.src.c_str());
    QVERIFY2(unpacked.src.find("panel") == std::string::npos, unpacked.src.c_str());
  }

  void threads_follow_NUM_CPU_THREADS() {  // the option the CLI fills from NUM_CPU_THREADS
    codegen_options()["NUM_CPU_THREADS"] = "1";
    ProgramSpec p = to_program(k::matmul(64, 64, 64), interp_renderer());
    codegen_options()["NUM_CPU_THREADS"] = "8";
    QCOMPARE(p.name, std::string("r_16_16_4_4_16_4"));
    QCOMPARE(p.threads, 1);
  }

  void elementwise_shapes() {
    ProgramSpec t = to_program(k::transpose_3x2(), interp_renderer());
    QCOMPARE(t.name, std::string("E_3_2"));  // merging would add div/mod: the ranges stay apart
    QCOMPARE(t.colored_name, colored_from("E", {{"3", "WHITE"}, {"2", "WHITE"}}));
    QVERIFY(t.applied_opts.empty());
    QCOMPARE(t.estimates.ops, 0.0);
    QCOMPARE(t.estimates.lds, 48.0);
    std::vector<float> x = iota_f(6), o(6);
    run_interp(t, {&o, &x});
    check_close(o, {0, 3, 1, 4, 2, 5});

    ProgramSpec e = to_program(k::ew_2x4(), interp_renderer());
    QCOMPARE(e.name, std::string("E_2_4"));
    QCOMPARE(e.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=0, arg=4)"}));
    std::vector<float> a = iota_f(8, 1), b = iota_f(8, 2), o8(8);
    run_interp(e, {&o8, &a, &b});
    std::vector<float> want(8);
    for (int i = 0; i < 8; ++i) want[i] = a[i] * b[i] + a[i];
    check_close(o8, want);

    ProgramSpec big = to_program(k::arange_mod3(), interp_renderer());
    QCOMPARE(big.name, std::string("E_16384_4"));
    QCOMPARE(big.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=0, arg=4)"}));
    std::vector<float> o64(65536);
    run_interp(big, {&o64});
    for (int i : {0, 1, 2, 3, 4, 65535}) QCOMPARE(o64[i], static_cast<float>(i % 3));

    ProgramSpec sp = to_program(k::split_sum_256(), interp_renderer());
    QCOMPARE(sp.name, std::string("r_256_64_4"));
    QCOMPARE(sp.colored_name, colored_from("r", {{"256", "WHITE"}, {"64", "red"}, {"4", "magenta"}}));
    QCOMPARE(sp.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=4)"}));
    QCOMPARE(sp.estimates.ops, 65536.0);
    QCOMPARE(sp.estimates.lds, 263168.0);
    std::vector<float> o256(256);
    run_interp(sp, {&o256, &o64});
    float s0 = 0;
    for (int i = 0; i < 256; ++i) s0 += static_cast<float>(i % 3);
    QCOMPARE(o256[0], s0);
  }

  void where_and_compare() {
    ProgramSpec w = to_program(k::where_5(), interp_renderer());
    QCOMPARE(w.name, std::string("E_5"));
    QCOMPARE(w.colored_name, colored_from("E", {{"5", "yellow"}}));  // masked small axis: upcast fully
    QCOMPARE(w.applied_opts, opts({"Opt(op=OptOps.UPCAST, axis=0, arg=0)"}));
    QCOMPARE(w.estimates.lds, 65.0);
    ProgramSpec c = to_program(k::cmp_5(), interp_renderer());
    QCOMPARE(c.colored_name, colored_from("E", {{"5", "WHITE"}}));
    QVERIFY(c.applied_opts.empty());
    QCOMPARE(c.estimates.lds, 45.0);

    std::vector<float> a{1, 5, -3, 4, 0}, b{2, 5, -4, 1, 0.5f}, sel(5);
    std::vector<uint8_t> gt(5);
    std::vector<void*> cb{gt.data(), a.data(), b.data()};
    run_program(c, nullptr, cb, {});
    QCOMPARE(gt, (std::vector<uint8_t>{1, 0, 0, 0, 1}));  // a < b
    std::vector<void*> wb{sel.data(), gt.data(), a.data(), b.data()};
    run_program(w, nullptr, wb, {});
    check_close(sel, {1, 5, -4, 1, 0});
  }

  void reference_algebra_before_codegen() {
    // (x*2).sum(1)+1: the constant factor moves after the reduce, 4 ops per row as the reference counts
    ProgramSpec p = to_program(k::scaled_row_sum_4x3(), interp_renderer());
    QCOMPARE(p.name, std::string("r_4_3"));
    QCOMPARE(p.applied_opts, opts({"Opt(op=OptOps.UNROLL, axis=0, arg=0)"}));
    QCOMPARE(p.estimates.ops, 16.0);
    QCOMPARE(p.estimates.lds, 64.0);
    std::vector<float> x = iota_f(12, 1), o(4);
    run_interp(p, {&o, &x});
    check_close(o, {13, 31, 49, 67});
    // !(a!=b) is one CMPEQ
    ProgramSpec e = to_program(k::eq_5(), interp_renderer());
    QCOMPARE(e.estimates.ops, 5.0);
    std::vector<float> a{1, 5, -3, 4, 0}, b{2, 5, -4, 4, 0.5f};
    std::vector<uint8_t> eq(5);
    std::vector<void*> bufs{eq.data(), a.data(), b.data()};
    run_program(e, nullptr, bufs, {});
    QCOMPARE(eq, (std::vector<uint8_t>{0, 1, 0, 1, 0}));
  }

  void c_source_shape() {
    ProgramSpec p = to_program(k::row_sum_2x3(), clang_renderer());
    QCOMPARE(p.lang, std::string("c"));
    QVERIFY2(p.src.find("void r_2_3(float* restrict data0_2, float* restrict data1_6) {") != std::string::npos, p.src.c_str());
    QVERIFY(p.src.find("for (int Lidx0 = 0; Lidx0 < 2; Lidx0++) {") != std::string::npos);
    QVERIFY(p.src.find("#include") == std::string::npos);
    ProgramSpec s = to_program(k::softmax_final_3x4(), clang_renderer());
    // exp2 is the reference's polynomial (its first coefficient), not the libm call
    QVERIFY2(s.src.find("__builtin_exp2f(") == std::string::npos && s.src.find("0.00015359208919107914f") != std::string::npos, s.src.c_str());
    ProgramSpec mx = to_program(k::row_max_3x4(), clang_renderer());  // the reference's r_3_4 body
    QVERIFY2(mx.src.find("float4 val0 = (*((float4*)((data1_12+(Lidx0<<2)))));") != std::string::npos, mx.src.c_str());
    QVERIFY(mx.src.find("float alu0 = ((val0[0]<val0[1])?val0[1]:val0[0]);") != std::string::npos);
    ProgramSpec r = to_program(k::split_sum_256(), clang_renderer());
    QVERIFY2(r.src.find("float acc0 = 0.0f;") != std::string::npos, r.src.c_str());
    QVERIFY(r.src.find("for (int Ridx1 = 0; Ridx1 < 64; Ridx1++) {") != std::string::npos);
  }

  // index math simplified under its valid, as the reference's uop_given_valid / simplify_valid: hand-checked cases
  void simplify_under_valid() {
    using k::c;
    UOpRef r0 = UOp::make(Ops::RANGE, dtypes::weakint, {c(4)}, RangeArg{0, AxisType::LOOP});
    UOpRef r1 = UOp::make(Ops::RANGE, dtypes::weakint, {c(3)}, RangeArg{1, AxisType::LOOP});
    UOpRef b = simplify(alu(Ops::ADD, alu(Ops::MUL, r1, c(4)), r0));  // 0..11
    UOpRef carry = alu(Ops::FLOORDIV, b, c(10));
    // without a valid b//10 stays (b reaches 11); with b < 10 it is 0
    QVERIFY(simplify(carry)->op == Ops::FLOORDIV);
    UOpRef lt10 = alu(Ops::CMPLT, b, c(10));
    UOpRef g = uop_given_valid(lt10, carry);
    QVERIFY(g->op == Ops::CONST);
    QCOMPARE(g->const_int(), int64_t{0});
    // (b + 3*(b//10)) % 10 under b < 10 is b
    QCOMPARE(uop_given_valid(lt10, alu(Ops::FLOORMOD, alu(Ops::ADD, b, alu(Ops::MUL, carry, c(3))), c(10))), b);
    // r1 < 1 pins r1 to 0: r0 + r1*2 -> r0
    UOpRef pinned = uop_given_valid(alu(Ops::CMPLT, r1, c(1)), alu(Ops::ADD, r0, alu(Ops::MUL, r1, c(2))));
    QCOMPARE(pinned, r0);
    // a lower bound: r1 >= 1 (written (r1 < 1) != True) makes (r1 + 2)//3 == 1
    UOpRef ge1 = alu(Ops::CMPNE, alu(Ops::CMPLT, r1, c(1)), uconst_bool(true));
    UOpRef q = uop_given_valid(ge1, alu(Ops::FLOORDIV, alu(Ops::ADD, r1, c(2)), c(3)));
    QVERIFY(q->op == Ops::CONST);
    QCOMPARE(q->const_int(), int64_t{1});
    // simplify_valid: a duplicate clause goes, a clause implied by an earlier one folds to true
    UOpRef dup = alu(Ops::AND, lt10, lt10);
    QCOMPARE(simplify(simplify_valid(dup)), lt10);
    UOpRef implied = alu(Ops::AND, lt10, alu(Ops::CMPLT, carry, c(1)));
    QCOMPARE(simplify(simplify_valid(implied)), lt10);
    // r0 < 2 is taken first (r0 is inside b): then b = 4*r1 + r0 <= 9, so b < 10 folds to true
    UOpRef r0lt2 = alu(Ops::CMPLT, r0, c(2));
    QCOMPARE(simplify(simplify_valid(alu(Ops::AND, lt10, r0lt2))), r0lt2);
  }

  void linear_program_is_printed() {
    ProgramSpec p = to_program(k::split_sum_256(), interp_renderer());
    QCOMPARE(p.lang, std::string("interp"));
    QVERIFY(p.lowered && p.lowered->op == Ops::LINEAR);
    QVERIFY(p.src.find("DEFINE_ACC") != std::string::npos);
    QVERIFY(p.src.find("RANGE") != std::string::npos);
    QVERIFY(p.src.find("END") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestCodegen)
#include "test_codegen.moc"
