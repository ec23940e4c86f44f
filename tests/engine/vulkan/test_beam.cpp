// BEAM search (engine/device/search.h): the action space counted by hand, SWAP, the opts' text form, and a search on
// lavapipe whose program gives the default program's results bit for bit, with other opts, a name that follows
// them, and its answer read back from the disk cache; then BEAM=2 through `tinyscope run` against a run without it.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <set>

#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/to_program.h"
#include "engine/device/device.h"
#include "engine/device/search.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/uop/error.h"
#include "../codegen/kernels.h"
#include "test_env.h"

using namespace ts;

namespace {

// out[r0] = a[r0] * 3 + b[r0], n elements
UOpRef scale_add(int64_t n) {
  auto o = k::param(0, n), a = k::param(1, n), b = k::param(2, n);
  auto r0 = k::R(n, 0);
  auto v = alu(Ops::ADD, alu(Ops::MUL, k::idx(a, r0), uconst(dtypes::float32, 3.0)), k::idx(b, r0));
  return k::sink(k::end(k::store(o, r0, v), {r0}));
}

std::set<std::string> opt_set(const std::vector<Scheduler>& ss) {
  std::set<std::string> out;
  for (auto& s : ss) {
    if (s.applied_opts.size() != 1) return {"a scheduler with " + std::to_string(s.applied_opts.size()) + " opts"};
    out.insert(format_opts(s.applied_opts));
  }
  return out;
}

// runs `spec` on dev over inputs a, b (n floats each) and returns the output
std::vector<float> run(Device& dev, const ProgramSpec& spec, const std::vector<float>& a, const std::vector<float>& b) {
  const int64_t n = static_cast<int64_t>(a.size());
  auto o = dev.allocate(dtypes::float32, n), ba = dev.allocate(dtypes::float32, n), bb = dev.allocate(dtypes::float32, n);
  std::vector<float> zero(n, -1.0f);
  dev.copy_in(*o, zero.data(), n * 4);
  dev.copy_in(*ba, a.data(), n * 4);
  dev.copy_in(*bb, b.data(), n * 4);
  auto exe = dev.load(spec);
  std::vector<Buffer*> bufs{o.get(), ba.get(), bb.get()};
  dev.launch(spec, *exe, bufs, {});
  std::vector<float> out(n);
  dev.copy_out(out.data(), *o, n * 4);
  return out;
}

}  // namespace

class TestBeam : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  // a script in the test's directory (empty when it cannot be written)
  QString write_script(const QString& name, const char* text) {
    const QString path = tmp_.filePath(name);
    return ts_test::write_file(path, text) ? path : QString();
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("XDG_RUNTIME_DIR", tmp_.filePath("xdg").toLocal8Bit());
    QDir().mkpath(tmp_.filePath("xdg"));
    register_host_devices();
    vk::DeviceOptions o;
    o.validation = true;
    std::string why;
    QVERIFY2(vk::register_vulkan_devices(o, &why) > 0, why.c_str());
  }

  // a 64-element elementwise kernel: on the GPU target UPCAST by 2 and 4 (0 = all 64 is over 16; 3, 5, 7 do not
  // divide), LOCAL by 2, 4, 8, 16 and 32; no reduce (no UNROLL, GROUP), one axis (no SWAP), no threads.
  // On the CPU target: the two upcasts and THREAD by 2, 4 and 8 (NUM_CPU_THREADS=8 caps it).
  void actions_by_hand() {
    const UOpRef ast = scale_add(64);
    auto gpu = opt_set(kernel_actions(opt_scheduler(ast, gpu_opt_target())));
    std::set<std::string> want_gpu{"UPCAST 0 2\n", "UPCAST 0 4\n", "LOCAL 0 2\n", "LOCAL 0 4\n", "LOCAL 0 8\n", "LOCAL 0 16\n", "LOCAL 0 32\n"};
    QCOMPARE(gpu, want_gpu);
    codegen_options()["NUM_CPU_THREADS"] = "8";
    auto cpu = opt_set(kernel_actions(opt_scheduler(ast, cpu_opt_target())));
    codegen_options().erase("NUM_CPU_THREADS");
    std::set<std::string> want_cpu{"UPCAST 0 2\n", "UPCAST 0 4\n", "THREAD 0 2\n", "THREAD 0 4\n", "THREAD 0 8\n"};
    QCOMPARE(cpu, want_cpu);
    // the upcast limit: with at most 2 elements upcast, UPCAST 0 4 goes
    auto capped = opt_set(kernel_actions(opt_scheduler(ast, gpu_opt_target()), 2));
    QVERIFY(!capped.count("UPCAST 0 4\n"));
    QVERIFY(capped.count("UPCAST 0 2\n"));
  }

  // TS_OPTS=extended: every reference action and register-wide upcasts and unrolls besides; the 64-element kernel
  // gets UPCAST 0 8 and 16 on the CPU target (6 does not divide it)
  void extended_actions() {
    const auto& ref = beam_actions(OptSpace::reference);
    const auto& ext = beam_actions(OptSpace::extended);
    QVERIFY(ext.size() > ref.size());
    QVERIFY(std::equal(ref.begin(), ref.end(), ext.begin(), [](const Opt& a, const Opt& b) { return a.str() == b.str(); }));
    const UOpRef ast = scale_add(64);
    codegen_options()["NUM_CPU_THREADS"] = "8";
    auto cpu = opt_set(kernel_actions(opt_scheduler(ast, cpu_opt_target()), 256, 1024, OptSpace::extended));
    codegen_options().erase("NUM_CPU_THREADS");
    std::set<std::string> want{"UPCAST 0 2\n", "UPCAST 0 4\n", "UPCAST 0 8\n", "UPCAST 0 16\n",
                               "THREAD 0 2\n", "THREAD 0 4\n", "THREAD 0 8\n"};
    QCOMPARE(cpu, want);
    QCOMPARE(std::string(opt_space_name(OptSpace::extended)), std::string("extended"));
  }

  // the extended space's register tiles: a matmul's 8 rows x 32 columns in one step (its threads after), not with the
  // heuristics' unroll of part of its k; a conv2d's rows along two loops, with and without its taps unrolled whole;
  // never more than 256 lanes
  void register_tiles_in_one_step() {
    codegen_options()["NUM_CPU_THREADS"] = "2";
    const Scheduler mm = opt_scheduler(k::matmul(256, 256, 256), cpu_opt_target());
    std::vector<Opt> unroll;
    Scheduler dflt = mm;
    hand_coded_optimizations(dflt);
    for (const Opt& o : dflt.applied_opts)
      if (o.op == OptOps::UNROLL) unroll.push_back(o);
    std::set<std::string> got;
    for (const Scheduler& t : register_tiles(mm, 256)) {
      got.insert(format_opts(t.applied_opts));
      int64_t lanes = 1;
      for (const Opt& o : t.applied_opts)
        if (o.op == OptOps::UPCAST) lanes *= o.arg;
      QVERIFY2(lanes <= 256, format_opts(t.applied_opts).c_str());
    }
    QVERIFY2(got.count("UPCAST 1 16\nUPCAST 1 2\nUPCAST 0 8\nTHREAD 0 2\n"), [&] { std::string s; for (auto& g : got) s += g + "--\n"; return s; }().c_str());
    QVERIFY(!unroll.empty() && unroll[0].arg != 0);
    QVERIFY(!got.count("UPCAST 1 16\nUPCAST 1 2\nUPCAST 0 8\n" + format_opts(unroll) + "THREAD 0 2\n"));
    QVERIFY(register_tiles(mm, 64).size() < register_tiles(mm, 256).size());  // (the cap)
    got.clear();
    const Scheduler conv = opt_scheduler(k::conv2d_3x3(64, 8, 18, 18), cpu_opt_target());
    Scheduler conv_dflt = conv;
    hand_coded_optimizations(conv_dflt);
    std::vector<Opt> taps;
    for (const Opt& o : conv_dflt.applied_opts)
      if (o.op == OptOps::UNROLL) taps.push_back(o);
    QVERIFY(!taps.empty() && taps[0].arg == 0);
    for (const Scheduler& t : register_tiles(conv, 256)) got.insert(format_opts(t.applied_opts));
    QVERIFY(got.count("UPCAST 0 16\nUPCAST 1 4\nUPCAST 2 4\nTHREAD 0 2\n"));
    QVERIFY(got.count("UPCAST 0 16\nUPCAST 1 4\nUPCAST 2 4\n" + format_opts(taps) + "THREAD 0 2\n"));
    codegen_options().erase("NUM_CPU_THREADS");
  }

  // SWAP exchanges two GLOBAL axes' places: a 4x8 transposed copy is named E_4_8, swapped E_8_4, and its program
  // launches the swapped grid; swapping a reduce axis is refused
  void swap_reorders_axes() {
    auto o = k::param(0, 32), x = k::param(1, 32);
    auto r0 = k::R(4, 0), r1 = k::R(8, 1);
    const UOpRef ast = k::sink(k::end(k::store(o, iadd(imul(r0, k::c(8)), r1), k::idx(x, iadd(imul(r1, k::c(4)), r0))), {r0, r1}));
    const ProgramSpec plain = to_program(ast, interp_renderer(), gpu_opt_target(), {});
    const ProgramSpec swapped = to_program(ast, interp_renderer(), gpu_opt_target(), {Opt{OptOps::SWAP, 0, 1}});
    QCOMPARE(QString::fromStdString(plain.name), QString("E_4_8"));
    QCOMPARE(QString::fromStdString(swapped.name), QString("E_8_4"));
    QCOMPARE(plain.global_size[0] * plain.global_size[1], int64_t{32});
    QCOMPARE(swapped.global_size[0], plain.global_size[1]);
    QCOMPARE(swapped.global_size[1], plain.global_size[0]);
    QVERIFY_THROWS_EXCEPTION(KernelOptError, to_program(k::row_sum_2x3(), interp_renderer(), gpu_opt_target(), {Opt{OptOps::SWAP, 0, 1}}));
  }

  void opts_text_round_trip() {
    const std::vector<Opt> opts{{OptOps::UPCAST, 1, 4}, {OptOps::LOCAL, 0, 16}, {OptOps::GROUPTOP, 0, 256}, {OptOps::SWAP, 0, 2}};
    const std::string text = format_opts(opts);
    QCOMPARE(QString::fromStdString(text), QString("UPCAST 1 4\nLOCAL 0 16\nGROUPTOP 0 256\nSWAP 0 2\n"));
    QCOMPARE(QString::fromStdString(format_opts(parse_opts(text))), QString::fromStdString(text));
    try {
      parse_opts("UPCAST 1 4\nWIDEN 0 2\n");
      QFAIL("a line that is not an opt was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::strstr(e.what(), "WIDEN 0 2"), e.what());
    }
  }

  // KERNEL_OPTS's text: kernels by program key, their opts in order; Opt::str() read back for every op
  void kernel_opts_text() {
    const std::string text = "0123456789abcdef:UPCAST,1,4;LOCAL,0,16|fedcba9876543210:";
    const auto all = parse_kernel_opts(text);
    QCOMPARE(all.size(), size_t{2});
    QCOMPARE(QString::fromStdString(format_opts(all.at("0123456789abcdef"))), QString("UPCAST 1 4\nLOCAL 0 16\n"));
    QVERIFY(all.at("fedcba9876543210").empty());
    QCOMPARE(QString::fromStdString(format_kernel_opts(all)), QString::fromStdString(text));
    QVERIFY(parse_kernel_opts("").empty());
    for (const char* bad : {"0123456789abcdef", "0123:UPCAST,0,4", "0123456789abcdef:UPCAST,0", "0123456789abcdef:WIDEN,0,2",
                            "0123456789abcdef:UPCAST,x,4", "0123456789ABCDEF:UPCAST,0,4"}) {
      try {
        parse_kernel_opts(bad);
        QFAIL(qPrintable(QString("accepted: ") + bad));
      } catch (const Error& e) {
        QVERIFY2(std::strstr(e.what(), "KERNEL_OPTS"), e.what());
      }
    }
    for (const Opt& o : {Opt{OptOps::TC, 0, 2}, Opt{OptOps::UPCAST, 1, 4}, Opt{OptOps::UNROLL, 0, 0}, Opt{OptOps::LOCAL, 2, 8},
                         Opt{OptOps::THREAD, 0, 8}, Opt{OptOps::GROUP, 1, 16}, Opt{OptOps::GROUPTOP, 0, 256}, Opt{OptOps::NOLOCALS, 0, 0},
                         Opt{OptOps::PADTO, 1, 32}, Opt{OptOps::SWAP, 0, 2}}) {
      const std::optional<Opt> back = opt_from_str(o.str());
      QVERIFY2(back && back->str() == o.str(), o.str().c_str());
    }
    QVERIFY(!opt_from_str("Opt(op=OptOps.UPCAST, axis=0, arg=4) "));
    QVERIFY(!opt_from_str("Opt(op=OptOps.WIDEN, axis=0, arg=4)"));
    QVERIFY(!opt_from_str("UPCAST 0 4"));
  }

  // KERNEL_OPTS through `tinyscope run`: the matmul kernel, named by the program key its trace gives, gets exactly the
  // opts set (its name follows them; none: the NOOPT name), computes the same values, and an opt that does not apply is
  // the run's error naming the kernel; the other kernels keep their own opts
  void kernel_opts_through_the_cli() {
    const QString script = write_script("kopts.py", "from tinygrad import Tensor\n"
                                                    "a = Tensor([[float((i * 64 + k) % 7 - 3) for k in range(64)] for i in range(32)]).realize()\n"
                                                    "b = Tensor([[float((k * 16 + j) % 5 - 2) for j in range(16)] for k in range(64)]).realize()\n"
                                                    "print((a @ b).tolist())\n");
    QVERIFY(!script.isEmpty());
    auto run_cli = [&](const QString& kernel_opts, QString* err, const QString& json = {}) {
      QMap<QString, QString> vars{{"DEV", "CPU"}, {"DEBUG", "2"}, {"XDG_CACHE_HOME", tmp_.filePath("kopts-cache")}};
      if (!kernel_opts.isEmpty()) vars.insert("KERNEL_OPTS", kernel_opts);
      QStringList args{"run"};
      if (!json.isEmpty()) args << "--json" << json;
      const ts_test::Result r = ts_test::run_process(ts_test::tinyscope_bin(), args << script, ts_test::env_of(vars));
      *err = r.err;
      const QString out = QString(r.out).remove(QRegularExpression("\x1b\\[[0-9;]*m"));  // (DEBUG=2's colours)
      return r.code == 0 ? out : "exit " + QString::number(r.code) + ": " + *err + out;
    };
    // the matmul's program key and default opts, from the trace
    QString err;
    const QString json = tmp_.filePath("kopts.json");
    const QString plain = run_cli({}, &err, json);
    QVERIFY2(plain.contains("[["), qPrintable(plain));
    QFile jf(json);
    QVERIFY(jf.open(QIODevice::ReadOnly));
    QString key, name;
    QStringList dflt;
    for (const QJsonValue c : QJsonDocument::fromJson(jf.readAll()).object().value("contexts").toArray()) {
      const QJsonObject p = c.toObject().value("program").toObject();
      if (!p.value("name").toString().startsWith("r_")) continue;
      key = p.value("program_key").toString();
      name = p.value("name").toString();
      for (const QJsonValue o : p.value("applied_opts").toArray()) dflt << o.toString();
    }
    QVERIFY2(key.size() == 16 && !dflt.isEmpty(), qPrintable(key + " " + dflt.join(", ")));
    // the printed values are the last line: the output, without the DEBUG=2 lines
    auto values = [](const QString& out) { return out.trimmed().split('\n').last(); };
    const QString set = run_cli(key + ":UPCAST,0,4;UNROLL,0,4", &err);
    QCOMPARE(values(set), values(plain));
    QVERIFY2(set.contains(QRegularExpression("r_8_16_4_16_4\\b")) && !set.contains(name + " "), qPrintable(set));
    const QString none = run_cli(key + ":", &err);
    QCOMPARE(values(none), values(plain));
    QVERIFY2(none.contains(QRegularExpression("r_32_16_64\\b")), qPrintable(none));
    // UPCAST by 7 does not divide 32
    const QString bad = run_cli(key + ":UPCAST,0,7", &err);
    QVERIFY2(bad.startsWith("exit ") && bad.contains("KERNEL_OPTS for kernel " + key), qPrintable(bad));
    const QString malformed = run_cli(key + ":UPCAST", &err);
    QVERIFY2(malformed.startsWith("exit ") && malformed.contains("KERNEL_OPTS"), qPrintable(malformed));
  }

  // NOOPT=1 makes the default 1,048,576 work-groups of one lane each, which LOCAL and UPCAST beat by 2-4x on lavapipe,
  // so the search must end with opts; their program computes what the default one does, bit for bit
  void search_on_lavapipe() {
    Device& dev = get_device("VULKAN");
    const int64_t n = int64_t{1} << 20;
    const UOpRef ast = scale_add(n);
    codegen_options()["NOOPT"] = "1";
    BeamConfig cfg;
    cfg.width = 2;
    cfg.cache_dir = tmp_.filePath("cache").toStdString();
    std::vector<BeamProgress> reports;
    BeamResult r = beam_search(ast, dev, cfg, [&](const BeamProgress& p) { reports.push_back(p); });
    if (r.opts.empty()) {  // lavapipe's timings are CPU time on a shared machine: one search more before failing
      BeamConfig again = cfg;
      again.ignore_cache = true;
      r = beam_search(ast, dev, again);
    }
    const ProgramSpec dflt = to_program(ast, dev.renderer(), dev.opt_target());
    codegen_options().erase("NOOPT");
    QVERIFY(!reports.empty() && reports.back().finished && !reports.back().cached);
    qInfo("searched: %zu timed in %d rounds, default %.1f us, best %.1f us", r.final.timed, r.final.round, r.final.default_s * 1e6, r.final.best_s * 1e6);
    QVERIFY2(!r.opts.empty(), "the search kept the unoptimized kernel");
    QVERIFY(dflt.applied_opts.empty());
    QCOMPARE(QString::fromStdString(dflt.name), QString("E_1048576"));
    QVERIFY(r.final.timed > 1);
    QVERIFY(r.final.best_s > 0 && r.final.best_s <= r.final.default_s);

    const ProgramSpec found = to_program(ast, dev.renderer(), dev.opt_target(), r.opts);
    QCOMPARE(found.applied_opts.size(), r.opts.size());
    QVERIFY2(found.name != dflt.name, found.name.c_str());
    // the name follows the opts: its axes multiply to the kernel's 2^20 elements, one axis per split
    int64_t prod = 1, axes = 0;
    for (size_t p = 2; p <= found.name.size(); ++p) {
      size_t q = found.name.find('_', p);
      prod *= std::stoll(found.name.substr(p, q - p));
      ++axes;
      if (q == std::string::npos) break;
      p = q;
    }
    QCOMPARE(prod, n);
    QVERIFY(axes >= 2);

    std::vector<float> a(n), b(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 97) * 0.37f - 11.0f;
      b[i] = static_cast<float>((i * 31) % 89) * 0.11f;
    }
    const std::vector<float> want = run(dev, dflt, a, b), got = run(dev, found, a, b);
    QCOMPARE(got.size(), want.size());
    QVERIFY(std::memcmp(got.data(), want.data(), n * 4) == 0);
    QCOMPARE(want[5], a[5] * 3.0f + b[5]);

    // the second search reads the answer from the disk cache and times nothing
    codegen_options()["NOOPT"] = "1";
    const BeamResult again = beam_search(ast, dev, cfg);
    cfg.ignore_cache = true;
    const BeamResult fresh = beam_search(ast, dev, cfg);
    codegen_options().erase("NOOPT");
    QVERIFY(again.final.cached);
    QCOMPARE(again.final.timed, size_t{0});
    QCOMPARE(QString::fromStdString(format_opts(again.opts)), QString::fromStdString(format_opts(r.opts)));
    QVERIFY(!fresh.final.cached && fresh.final.timed > 1);
    // opts found under other codegen options are not taken from the cache (the kernel renders differently)
    cfg.ignore_cache = false;
    codegen_options()["NOOPT"] = "1";
    codegen_options()["GLSL_LANES_SWAP"] = "0";
    const BeamResult other = beam_search(ast, dev, cfg);
    codegen_options().erase("GLSL_LANES_SWAP");
    codegen_options().erase("NOOPT");
    QVERIFY(!other.final.cached && other.final.timed > 1);

    std::string last;
    QVERIFY2(vk::validation_message_count(&last) == 0, last.c_str());
  }

  // BEAM=2 through the command line, on VULKAN and on CPU: the script prints the same values as without BEAM, and
  // each searched kernel gets its line on stderr
  void beam_through_the_cli() {
    const QString script = write_script("beam.py", "from tinygrad import Tensor\n"
                                                   "x = Tensor([[float((i * 7 + j) % 13) - 6 for j in range(48)] for i in range(32)])\n"
                                                   "print(x.sum(axis=1).tolist())\n"
                                                   "print((x * 2 + 1).max(axis=0).tolist())\n");
    QVERIFY(!script.isEmpty());
    auto run_cli = [&](bool beam, QString* err, const QString& dev = "VULKAN") {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      ts_test::vulkan_test_env(env, tmp_.filePath("xdg"));
      env.insert("DEV", dev);
      env.insert("XDG_CACHE_HOME", tmp_.filePath("cli-cache"));
      if (beam) env.insert("BEAM", "2");
      p.setProcessEnvironment(env);
      p.start(ts_test::tinyscope_bin(), {"run", script});
      // a sanitized build runs the searches several times slower
      if (!p.waitForFinished(qEnvironmentVariableIsSet("TS_SANITIZED") ? 900000 : 120000)) return QString("timeout");
      *err = QString::fromUtf8(p.readAllStandardError());
      return p.exitCode() == 0 ? QString::fromUtf8(p.readAllStandardOutput()) : "exit " + QString::number(p.exitCode()) + ": " + *err;
    };
    QString err0, err2;
    const QString plain = run_cli(false, &err0), beamed = run_cli(true, &err2);
    QVERIFY2(plain.startsWith("["), qPrintable(plain));
    QCOMPARE(beamed, plain);
    QVERIFY2(err2.count(QRegularExpression("^BEAM 2: \\S+ .* -> \\S+ ", QRegularExpression::MultilineOption)) >= 2, qPrintable(err2));
    QVERIFY2(!err0.contains("BEAM"), qPrintable(err0));
    // the search runs on the host devices too (candidates timed by the CPU JIT's launches)
    QString err_cpu;
    QCOMPARE(run_cli(true, &err_cpu, "CPU"), plain);
    QVERIFY2(err_cpu.count(QRegularExpression("^BEAM 2: ", QRegularExpression::MultilineOption)) >= 2, qPrintable(err_cpu));
  }
};

QTEST_GUILESS_MAIN(TestBeam)
#include "test_beam.moc"
