// Differential tests: every hand-built kernel compiled as C and as LLVM IR through the CPU JIT must compute what
// the interpreter computes (engine/runtime/interp), on the same inputs.
#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/renderer/c_renderer.h"
#include "engine/renderer/llvm_renderer.h"
#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/to_program.h"
#include "engine/codegen/opt.h"
#include "engine/device/search.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/program_runner.h"
#include "tests/engine/codegen/kernels.h"

using namespace ts;

namespace {

struct Case {
  const char* label;
  std::function<UOpRef()> build;
  std::vector<int64_t> vars;
};

// fills every buffer of the kernel with deterministic values (bool buffers with 0/1)
std::vector<std::vector<uint8_t>> make_buffers(const UOpRef& ast) {
  std::vector<std::pair<int64_t, DType>> layout;
  std::vector<int64_t> sizes;
  for (auto& u : ast->toposort())
    if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace != AddrSpace::ALU) {
      const auto& pa = u->as<ParamArg>();
      if (static_cast<int64_t>(layout.size()) <= pa.slot) layout.resize(pa.slot + 1, {0, dtypes::float32});
      layout[pa.slot] = {pa.size, u->dtype};
    }
  std::vector<std::vector<uint8_t>> bufs;
  for (size_t s = 0; s < layout.size(); ++s) {
    auto [n, dt] = layout[s];
    std::vector<uint8_t> b(n * dt->itemsize());
    for (int64_t i = 0; i < n; ++i) {
      if (is_bool(dt)) b[i] = (i * 7 + s) % 3 == 0;
      else if (dt == dtypes::float32) {
        float v = static_cast<float>(((i * 37 + s * 11) % 23)) * 0.25f - 2.0f;
        std::memcpy(&b[i * 4], &v, 4);
      } else if (dt == dtypes::int32) {
        int32_t v = static_cast<int32_t>((i * 13 + s) % 17) - 8;
        std::memcpy(&b[i * 4], &v, 4);
      }
    }
    bufs.push_back(std::move(b));
  }
  return bufs;
}

std::vector<std::vector<uint8_t>> run(const ProgramSpec& p, KernelEntry entry, const std::vector<std::vector<uint8_t>>& init,
                                      const std::vector<int64_t>& vars) {
  auto bufs = init;
  std::vector<void*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  run_program(p, entry, ptrs, vars);
  return bufs;
}

bool close(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, DType dt) {
  if (a.size() != b.size()) return false;
  if (dt != dtypes::float32) return a == b;
  for (size_t i = 0; i < a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::fabs(x - y) > 1e-4f * std::max(1.0f, std::fabs(y))) {
      qWarning("element %zu: %g vs %g", i / 4, x, y);
      return false;
    }
  }
  return true;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"seed_add", k::seed_add, {}},           {"row_sum_2x3", k::row_sum_2x3, {}},
      {"col_sum_2x3", k::col_sum_2x3, {}},     {"full_sum_2x3", k::full_sum_2x3, {}},
      {"matmul_4_8_3", [] { return k::matmul(4, 8, 3); }, {}},
      {"matmul_64", [] { return k::matmul(64, 64, 64); }, {}},
      {"transpose_3x2", k::transpose_3x2, {}}, {"row_max_3x4", k::row_max_3x4, {}},
      {"softmax_final_3x4", k::softmax_final_3x4, {}},
      {"where_5", k::where_5, {}},             {"cmp_5", k::cmp_5, {}},
      {"split_sum_256", k::split_sum_256, {}}, {"arange_mod3", k::arange_mod3, {}},
      {"ew_2x4", k::ew_2x4, {}},               {"var_sum_n3", k::var_sum, {3}},
      {"var_sum_n10", k::var_sum, {10}},       {"mixed_6", k::mixed_6, {}},
      {"scaled_row_sum_4x3", k::scaled_row_sum_4x3, {}}, {"eq_5", k::eq_5, {}},
      {"row_sum_jammed_64x256", [] { return k::row_sum(64, 256); }, {}},
      {"row_sum_odd_rows_6x256", [] { return k::row_sum(6, 256); }, {}},
      {"matmul_wide_48_32_64", [] { return k::matmul(48, 32, 64); }, {}},
      {"exp2_jammed_4096", [] {
         auto o = k::param(0, 4096), x = k::param(1, 4096);
         auto r = k::R(4096, 0);
         return k::sink(k::end(k::store(o, r, alu(Ops::EXP2, k::idx(x, r))), {r}));
       }, {}},
  };
  return c;
}

}  // namespace

class TestCodegenJit : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { codegen_options()["NUM_CPU_THREADS"] = "8"; }

  void c_and_llvm_match_the_interpreter_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < cases().size(); ++i) QTest::newRow(cases()[i].label) << static_cast<int>(i);
  }
  void c_and_llvm_match_the_interpreter() {
    QFETCH(int, index);
    const Case& cs = cases()[index];
    UOpRef ast = cs.build();
    auto init = make_buffers(ast);
    ProgramSpec ip = to_program(ast, interp_renderer());
    auto want = run(ip, nullptr, init, cs.vars);
    for (const Renderer* lang : {&clang_renderer(), &llvm_renderer()}) {
      ProgramSpec p = to_program(ast, *lang);
      QCOMPARE(p.name, ip.name);
      void* fn = nullptr;
      try {
        fn = cpu::compile(lang == &clang_renderer() ? cpu::SourceKind::C : cpu::SourceKind::LlvmIr, p.src, entry_symbol(p));
      } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("%1\n%2").arg(e.what(), p.src.c_str())));
      }
      auto got = run(p, reinterpret_cast<KernelEntry>(fn), init, cs.vars);
      DType out_dt = dtypes::float32;
      for (auto& u : ast->toposort())
        if (u->op == Ops::PARAM && u->as<ParamArg>().slot == 0 && u->as<ParamArg>().addrspace != AddrSpace::ALU) out_dt = u->dtype;
      QVERIFY2(close(got[0], want[0], out_dt), qPrintable(QString("%1 (%2)\n%3").arg(cs.label, p.lang.c_str(), p.src.c_str())));
    }
  }

  // A reduce over few accumulators runs 4 iterations of its innermost loop together: four times the accumulators, a
  // quarter of the loop trips, the same name (opts) and the same values (c_and_llvm_match_the_interpreter runs it)
  void jammed_reduce_keeps_name() {
    const UOpRef ast = k::row_sum(64, 256);
    ProgramSpec jammed = to_program(ast, clang_renderer());
    codegen_options()["JAM"] = "0";
    ProgramSpec plain = to_program(ast, clang_renderer());
    codegen_options().erase("JAM");
    QCOMPARE(jammed.name, plain.name);
    QCOMPARE(jammed.applied_opts.size(), plain.applied_opts.size());
    auto count = [](const ProgramSpec& p, Ops op) {  // (accumulators kept as one vector count a lane each)
      int n = 0;
      for (auto& u : p.lowered->src) n += u->op == op ? 1 : op == Ops::DEFINE_ACC && u->op == Ops::DEFINE_VACC ? static_cast<int>(u->src.size()) : 0;
      return n;
    };
    QCOMPARE(count(jammed, Ops::DEFINE_ACC), 4 * count(plain, Ops::DEFINE_ACC));
    QVERIFY2(jammed.src.find("acc3 ") != std::string::npos, jammed.src.c_str());
    QVERIFY2(plain.src.find("acc1 ") == std::string::npos, plain.src.c_str());
    // a matmul's next column tiles read the next elements of b (vector lanes): 4 of its 4x4 tiles together, 64
    // accumulators; a row sum's next rows are a row apart: at most 16 scalar chains
    const UOpRef mm = k::matmul(64, 64, 64);
    ProgramSpec mj = to_program(mm, clang_renderer());
    codegen_options()["JAM"] = "0";
    ProgramSpec mp = to_program(mm, clang_renderer());
    codegen_options().erase("JAM");
    QCOMPARE(count(mp, Ops::DEFINE_ACC), 16);
    QCOMPARE(count(mj, Ops::DEFINE_ACC), 64);
    QCOMPARE(count(to_program(k::row_sum(64, 256), clang_renderer(), cpu_opt_target(), {{OptOps::UPCAST, 0, 8}}), Ops::DEFINE_ACC), 16);
    // an elementwise kernel over contiguous elements: 4 of its 4-wide iterations are one 16-wide vector
    auto o = k::param(0, 4096), x = k::param(1, 4096);
    auto r = k::R(4096, 0);
    const UOpRef ew = k::sink(k::end(k::store(o, r, alu(Ops::EXP2, k::idx(x, r))), {r}));
    ProgramSpec ej = to_program(ew, clang_renderer());
    QVERIFY2(ej.src.find("float16 val") != std::string::npos, ej.src.c_str());
    codegen_options()["JAM"] = "0";
    QCOMPARE(to_program(ew, clang_renderer()).name, ej.name);
    codegen_options().erase("JAM");
  }

  // accesses of 16 adjacent floats are one vector access (an AVX-512 register), of 8 one of 8, else of 4 (without
  // jamming, which would make 16 of the 8)
  void wide_vector_accesses() {
    codegen_options()["JAM"] = "0";
    std::vector<Opt> opts = {{OptOps::UPCAST, 1, 16}, {OptOps::UPCAST, 0, 2}};
    ProgramSpec p = to_program(k::matmul(48, 32, 64), clang_renderer(), cpu_opt_target(), opts);
    QVERIFY2(p.src.find("typedef float float16 ") != std::string::npos, p.src.c_str());
    QVERIFY2(p.src.find("*((float16*)") != std::string::npos, p.src.c_str());  // the output tile's rows are stored whole
    opts = {{OptOps::UPCAST, 1, 8}};
    p = to_program(k::matmul(48, 32, 64), clang_renderer(), cpu_opt_target(), opts);
    codegen_options().erase("JAM");
    QVERIFY2(p.src.find("float8") != std::string::npos && p.src.find("float16") == std::string::npos, p.src.c_str());
  }

  // b's strided reads copied into a panel (the loop over rows then inside the one over column tiles), reads whose
  // lanes lie far apart copied side by side, reduces that read several rows at once asking for the next block, 16
  // rows' accumulations written as one transposed vector accumulation, a second loop jammed, and accumulators kept as
  // vectors: the same values as without any of them, bit for bit
  void panels_prefetches_and_transposes_keep_every_value() {
    struct Shape {
      const char* label;
      UOpRef ast;
      std::vector<const char*> marks;
      std::vector<Opt> opts = {};  // (none: the default opts)
      const char* plain_lacks = nullptr;
    };
    const char* const options[] = {"PACK", "PREFETCH", "TRANSPOSE", "JAM2", "VECACC"};
    for (const Shape& c : {Shape{"matmul 64", k::matmul(64, 64, 64), {"panel0["}}, Shape{"matmul 96x128x256", k::matmul(96, 128, 256), {"panel0["}},
                           Shape{"row sum 64x256", k::row_sum(64, 256), {"__builtin_prefetch("}},
                           Shape{"row sum 512x1024, 4 rows of 4", k::row_sum(512, 1024), {"__builtin_prefetch(", "tacc0 = tacc0+tcol0+tcol1+tcol2+tcol3;"},
                                 {{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}},
                           // a running max of 16 rows at once
                           Shape{"row max 512x1024, 4 rows of 4", k::row_max(512, 1024), {"tacc0 = ((tacc0<tmax0)?tmax0:tacc0);"},
                                 {{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}},
                           // the row sum with each term an exp of its lane less its row's max: the exp computed 16 rows
                           // at a time on the transposed columns
                           Shape{"sum of exps 512x1024, 4 rows of 4", k::row_sum_exp(512, 1024), {"tacc0 = tacc0+tv", "__builtin_convertvector("},
                                 {{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}},
                           // 4 columns jammed into 16 vector lanes, then 4 rows: 64 accumulators (16 without the second)
                           Shape{"matmul 64, two loops jammed", k::matmul(64, 64, 64), {"float16 vacc3 "}, {{OptOps::UPCAST, 1, 4}}, "float acc16 "},
                           // 8 rows x 32 columns: 16 vector accumulators, each row's scalar times a 16-wide load
                           Shape{"matmul 64, an 8x32 tile", k::matmul(64, 64, 64), {"float16 vacc15 ", "vacc15 = vacc15+"},
                                 {{OptOps::UPCAST, 1, 16}, {OptOps::UPCAST, 1, 2}, {OptOps::UPCAST, 0, 8}}, "vacc"},
                           // 4 products an update (an unrolled reduce): acc+s0*v0+s1*v1+s2*v2+s3*v3, in that order
                           Shape{"matmul 64, unrolled by 4", k::matmul(64, 64, 64), {"float16 vacc0 ", "*val5+"},
                                 {{OptOps::UPCAST, 1, 16}, {OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}}, "vacc"},
                           // 16 of 32 output channels' weights (72 floats apart) copied with each tap's 16 side by side: a
                           // 16-wide read, times each input value, into 4 vector accumulators
                           Shape{"conv2d 3x3, 16 output channels as lanes", k::conv2d_3x3(32, 8, 10, 10), {"panel0[", "float16 vacc3 "},
                                 {{OptOps::UPCAST, 0, 16}, {OptOps::UPCAST, 2, 4}, {OptOps::UNROLL, 2, 0}, {OptOps::UNROLL, 1, 0}}, "vacc"}}) {
      // values whose sums round (make_buffers' quarters add exactly in any order)
      auto init = make_buffers(c.ast);
      for (auto& b : init)
        for (size_t i = 0; i + 4 <= b.size(); i += 4) {
          const float v = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 1000.0 + 1.0 / (static_cast<double>(i) + 3.0));
          std::memcpy(&b[i], &v, 4);
        }
      auto build = [&] { return c.opts.empty() ? to_program(c.ast, clang_renderer()) : to_program(c.ast, clang_renderer(), cpu_opt_target(), c.opts); };
      ProgramSpec fast = build();
      for (const char* o : options) codegen_options()[o] = "0";
      ProgramSpec plain = build();
      for (const char* o : options) codegen_options().erase(o);
      for (const char* m : c.marks) QVERIFY2(fast.src.find(m) != std::string::npos, qPrintable(QString("%1: %2\n%3").arg(c.label, m, fast.src.c_str())));
      QVERIFY2(plain.src.find("panel") == std::string::npos && plain.src.find("prefetch") == std::string::npos &&
                   plain.src.find("shufflevector") == std::string::npos, plain.src.c_str());
      if (c.plain_lacks) QVERIFY2(plain.src.find(c.plain_lacks) == std::string::npos, plain.src.c_str());
      QCOMPARE(fast.name, plain.name);
      std::vector<std::vector<uint8_t>> got[2];
      int i = 0;
      for (const ProgramSpec* p : {&fast, &plain}) {
        void* fn = cpu::compile(cpu::SourceKind::C, p->src, entry_symbol(*p));
        got[i++] = run(*p, reinterpret_cast<KernelEntry>(fn), init, {});
      }
      QVERIFY2(got[0][0] == got[1][0], c.label);
      // the LLVM renderer runs the same passes over the same program (the same UOps, op for op) and renders each of
      // them: its program computes what the interpreter computes (within rounding: a vector accumulation adds an
      // unrolled reduce's products in the C renderer's order, acc+p0+p1+..., the interpreter as the graph says,
      // acc+(p0+p1+...))
      ProgramSpec lfast = c.opts.empty() ? to_program(c.ast, llvm_renderer()) : to_program(c.ast, llvm_renderer(), cpu_opt_target(), c.opts);
      QCOMPARE(lfast.lowered->src.size(), fast.lowered->src.size());
      for (size_t k = 0; k < fast.lowered->src.size(); ++k) QCOMPARE(lfast.lowered->src[k]->op, fast.lowered->src[k]->op);
      QCOMPARE(lfast.name, fast.name);
      const ProgramSpec ip = c.opts.empty() ? to_program(c.ast, interp_renderer()) : to_program(c.ast, interp_renderer(), cpu_opt_target(), c.opts);
      const auto want = run(ip, nullptr, init, {});
      void* lfn = cpu::compile(cpu::SourceKind::LlvmIr, lfast.src, entry_symbol(lfast));
      const auto lgot = run(lfast, reinterpret_cast<KernelEntry>(lfn), init, {})[0];
      // (these sums cancel: each element within 1e-5 of the output's largest magnitude)
      std::vector<float> x(lgot.size() / 4), y(x.size());
      std::memcpy(x.data(), lgot.data(), lgot.size());
      std::memcpy(y.data(), want[0].data(), want[0].size());
      float scale = 1;
      for (float v : y) scale = std::max(scale, std::fabs(v));
      for (size_t k = 0; k < x.size(); ++k)
        QVERIFY2(std::fabs(x[k] - y[k]) <= 1e-5f * scale,
                 qPrintable(QString("%1 (LLVM): element %2 is %3, the interpreter's %4\n%5").arg(c.label).arg(k).arg(x[k]).arg(y[k]).arg(lfast.src.c_str())));
      // without fma (FP_CONTRACT=0) the two renderers compute the same values, bit for bit: the same operations in the
      // same order (float sums and products left to right over what the C renderer writes as one expression)
      codegen_options()["FP_CONTRACT"] = "0";
      const ProgramSpec cc = build();
      const ProgramSpec ll = c.opts.empty() ? to_program(c.ast, llvm_renderer()) : to_program(c.ast, llvm_renderer(), cpu_opt_target(), c.opts);
      codegen_options().erase("FP_CONTRACT");
      const auto c_out = run(cc, reinterpret_cast<KernelEntry>(cpu::compile(cpu::SourceKind::C, cc.src, entry_symbol(cc))), init, {})[0];
      const auto l_out = run(ll, reinterpret_cast<KernelEntry>(cpu::compile(cpu::SourceKind::LlvmIr, ll.src, entry_symbol(ll))), init, {})[0];
      QVERIFY2(c_out == l_out, qPrintable(QString("%1: C and LLVM differ without fma").arg(c.label)));
    }
  }

  // The CPU's schemes are passes over the LINEAR (engine/codegen/cpu/cpu_passes.h): the program holds their UOps, each
  // line of a scheme renders one of them, and the program computes what the interpreter computes
  void cpu_schemes_are_uops_of_the_program() {
    auto count = [](const ProgramSpec& p, Ops op) {
      int n = 0;
      for (auto& u : p.lowered->src) n += u->op == op;
      return n;
    };
    // the op of the UOp the first line containing `text` renders (NOOP: no such line)
    auto line_op = [](const ProgramSpec& p, const std::string& text) {
      std::vector<std::string> lines{""};
      for (char ch : p.src) ch == '\n' ? lines.push_back("") : void(lines.back() += ch);
      for (auto& [n, u] : p.source_lines)
        if (n >= 1 && static_cast<size_t>(n) <= lines.size() && lines[static_cast<size_t>(n) - 1].find(text) != std::string::npos) return u->op;
      return Ops::NOOP;
    };
    const UOpRef mm = k::matmul(64, 64, 64);
    ProgramSpec tile = to_program(mm, clang_renderer(), cpu_opt_target(), {{OptOps::UPCAST, 1, 16}, {OptOps::UPCAST, 1, 2}, {OptOps::UPCAST, 0, 8}});
    QCOMPARE(count(tile, Ops::DEFINE_VACC), 16);
    QCOMPARE(count(tile, Ops::VACC_UPDATE), 16);
    QCOMPARE(count(tile, Ops::DEFINE_ACC), 0);
    QVERIFY(count(tile, Ops::VLOAD) > 0 && count(tile, Ops::GEP) > 0);
    QCOMPARE(line_op(tile, "float16 vacc0 = "), Ops::DEFINE_VACC);
    QCOMPARE(line_op(tile, "vacc0 = vacc0+"), Ops::VACC_UPDATE);
    QCOMPARE(line_op(tile, "float16 val"), Ops::VLOAD);
    auto init = make_buffers(mm);
    auto want = run(to_program(mm, interp_renderer()), nullptr, init, {});
    void* fn = cpu::compile(cpu::SourceKind::C, tile.src, entry_symbol(tile));
    QVERIFY2(close(run(tile, reinterpret_cast<KernelEntry>(fn), init, {})[0], want[0], dtypes::float32), tile.src.c_str());
    // VECACC=0 leaves the accumulators scalar: no pass UOp of that scheme
    codegen_options()["VECACC"] = "0";
    ProgramSpec scalar = to_program(mm, clang_renderer(), cpu_opt_target(), {{OptOps::UPCAST, 1, 16}, {OptOps::UPCAST, 1, 2}, {OptOps::UPCAST, 0, 8}});
    codegen_options().erase("VECACC");
    QCOMPARE(count(scalar, Ops::DEFINE_VACC), 0);
    QCOMPARE(count(scalar, Ops::DEFINE_ACC), 256);
    // a row sum read as 16 rows: a PREFETCH each iteration; 4 rows of 4: one TRANSPOSED_ACC
    ProgramSpec rows = to_program(k::row_sum(64, 256), clang_renderer());
    QVERIFY(count(rows, Ops::PREFETCH) > 0);
    QCOMPARE(line_op(rows, "__builtin_prefetch("), Ops::PREFETCH);
    ProgramSpec tr = to_program(k::row_sum(512, 1024), clang_renderer(), cpu_opt_target(), {{OptOps::UPCAST, 0, 4}, {OptOps::UNROLL, 0, 4}});
    QCOMPARE(count(tr, Ops::TRANSPOSED_ACC), 1);
    QCOMPARE(line_op(tr, "tacc0 = tacc0+tcol0"), Ops::TRANSPOSED_ACC);
  }

  // Every candidate BEAM's first two rounds build for small kernels (a matmul 16x24 @ 24x8, a row sum) with 8 CPU
  // threads, compiled as C and run on buffers with canaries past their ends: each writes only inside its output, and
  // computes what the interpreter computes
  void beam_candidates_write_only_their_outputs() {
    codegen_options()["NUM_CPU_THREADS"] = "8";
    for (const UOpRef& ast : {k::matmul(16, 24, 8), k::row_sum(64, 256)}) {
      const OptTarget t = cpu_opt_target();
      auto init = make_buffers(ast);
      const auto want = run(to_program(ast, interp_renderer()), nullptr, init, {});
      std::vector<Scheduler> round{opt_scheduler(ast, t)}, all;
      for (int r = 0; r < 2; ++r) {
        std::vector<Scheduler> next;
        for (const Scheduler& s : round)
          for (Scheduler& a : kernel_actions(s, 256, 1024)) next.push_back(std::move(a));
        all.insert(all.end(), next.begin(), next.end());
        if (next.size() > 40) next.erase(next.begin() + 40, next.end());
        round = std::move(next);
      }
      QVERIFY(all.size() > 20);
      constexpr size_t kCanary = 256;  // bytes past each buffer
      for (const Scheduler& s : all) {
        ProgramSpec p;
        try {
          p = to_program(ast, clang_renderer(), t, s.applied_opts);
        } catch (const std::exception&) {
          continue;  // (an opt list the scheduler refuses whole)
        }
        auto bufs = init;
        for (auto& b : bufs) b.resize(b.size() + kCanary, 0xA5);
        std::vector<void*> ptrs;
        for (auto& b : bufs) ptrs.push_back(b.data());
        void* fn = cpu::compile(cpu::SourceKind::C, p.src, entry_symbol(p));
        run_program(p, reinterpret_cast<KernelEntry>(fn), ptrs, {});
        for (size_t i = 0; i < bufs.size(); ++i)
          for (size_t k = bufs[i].size() - kCanary; k < bufs[i].size(); ++k)
            QVERIFY2(bufs[i][k] == 0xA5, qPrintable(QString("%1: buffer %2 written past its end\n%3").arg(p.name.c_str()).arg(i).arg(p.src.c_str())));
        bufs[0].resize(bufs[0].size() - kCanary);
        QVERIFY2(close(bufs[0], want[0], dtypes::float32), qPrintable(QString("%1\n%2").arg(p.name.c_str(), p.src.c_str())));
      }
    }
    codegen_options()["NUM_CPU_THREADS"] = "8";
  }

  void variable_kernel_is_r_n() {
    ProgramSpec p = to_program(k::var_sum(), clang_renderer());
    QCOMPARE(p.name, std::string("r_n"));
    QCOMPARE(p.vars, std::vector<std::string>{"n"});
    QVERIFY(p.applied_opts.empty());
  }
};

QTEST_GUILESS_MAIN(TestCodegenJit)
#include "test_codegen_jit.moc"
