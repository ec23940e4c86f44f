// The tinyscope command line and its embedded Python: exit codes, tracebacks naming the script's lines, engine
// errors surfacing as Python exceptions, the tutorial example, and the tinygrad API's object identities.
#include <QtCore/QFile>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include "test_env.h"

namespace {

using ts_test::source_dir;
using ts_test::tinyscope_bin;

using ts_test::Result;
using ts_test::why;

// runs tinyscope with `input` on its stdin (then closed)
Result run(const QStringList& args, const QMap<QString, QString>& extra_env = {}, const QByteArray& input = {}) {
  return ts_test::run_process(tinyscope_bin(), args, ts_test::env_of(extra_env), input, 60000);
}

QString write_script(QTemporaryDir& dir, const QString& name, const QString& text) {
  QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Text)) f.write(text.toUtf8());
  return path;
}


}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  void help_lists_subcommands() {
    Result r = run({"--help"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("run SCRIPT.py") && r.out.contains("bench"), why(r).constData());
  }

  void unknown_command_fails() { QCOMPARE(run({"frobnicate"}).code, 2); }

  // `tinyscope devices` describes the devices as run and bench open them: under the codegen options set in the
  // environment (NUM_CPU_THREADS: the CPU's threads; TC_KHR, TC_WG, USE_TC: a GPU's tensor cores)
  void devices_follow_the_codegen_options() {
    Result r = run({"devices"}, {{"NUM_CPU_THREADS", "3"}});
    QVERIFY2(r.code == 0 && r.out.contains("CPU         renderer CLANG, memory CPU, has_local no, has_threads yes, threads 3\n"), why(r).constData());
    r = run({"devices"}, {{"NUM_CPU_THREADS", "5"}});
    QVERIFY2(r.code == 0 && r.out.contains("has_threads yes, threads 5\n"), why(r).constData());
  }

  void python_error_shows_the_script_line() {
    QTemporaryDir dir;
    QString path = write_script(dir, "err.py", "x = 1\ny = 2\nraise ValueError('boom on purpose')\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 1, why(r).constData());
    QVERIFY2(r.err.contains("Traceback (most recent call last)"), why(r).constData());
    QVERIFY2(r.err.contains(QStringLiteral("File \"%1\", line 3").arg(path)), why(r).constData());
    QVERIFY2(r.err.contains("ValueError: boom on purpose"), why(r).constData());
  }

  void syntax_error_names_the_line() {
    QTemporaryDir dir;
    QString path = write_script(dir, "syn.py", "a = 1\nx = (1,\nprint(x)\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 1, why(r).constData());
    QVERIFY2(r.err.contains(QStringLiteral("File \"%1\", line 2").arg(path)), why(r).constData());
    QVERIFY2(r.err.contains("SyntaxError"), why(r).constData());
  }

  void engine_error_is_a_python_exception() {
    QTemporaryDir dir;
    QString path = write_script(dir, "shape.py",
                                "from tinygrad import Tensor\n"
                                "a = Tensor([1.0, 2.0])\n"
                                "b = Tensor([1.0, 2.0, 3.0])\n"
                                "c = a + b\n"
                                "print('not reached')\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 1, why(r).constData());
    QVERIFY2(r.err.contains(QStringLiteral("File \"%1\", line 4").arg(path)), why(r).constData());
    // the engine's message names both shapes
    QString last = r.err.trimmed().section('\n', -1);
    // (the reference's class for shapes that do not broadcast, IndexError, under the engine's common base)
    QVERIFY2(last.startsWith("tinyscope.EngineIndexError: "), why(r).constData());
    QVERIFY2(last.contains("2") && last.contains("3"), why(r).constData());
    QVERIFY2(!r.out.contains("not reached"), why(r).constData());
  }

  void engine_error_can_be_caught() {
    QTemporaryDir dir;
    QString path = write_script(dir, "catch.py",
                                "from tinygrad import Tensor\n"
                                "import tinyscope\n"
                                "try:\n"
                                "  Tensor([1.0, 2.0]) + Tensor([1.0, 2.0, 3.0])\n"
                                "except IndexError as e:\n"
                                "  print('caught', isinstance(e, tinyscope.EngineError), isinstance(e, RuntimeError))\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 0, why(r).constData());
    // the reference's class (IndexError) catches it, and so do the engine's common base and RuntimeError
    QVERIFY2(r.out.contains("caught True True"), why(r).constData());
  }

  // misuse of autograd and optimizers: each error names the problem (the shape, the dtype, the missing setting)
  void autograd_misuse_errors_name_the_problem() {
    QTemporaryDir dir;
    QString path = write_script(dir, "grad_errors.py",
                                "from tinygrad import Tensor\n"
                                "from tinygrad.nn.optim import SGD\n"
                                "def err(f):\n"
                                "  try: f(); return 'no error'\n"
                                "  except Exception as e: return f'{type(e).__name__}: {e}'\n"
                                "x = Tensor([[1.0, 2.0], [3.0, 4.0]])\n"
                                "print('A', err(lambda: (x * 2).backward()))\n"
                                "print('B', err(lambda: x.sum().gradient(Tensor([1, 2]))))\n"
                                "print('C', err(lambda: (x * 2).backward(Tensor([1.0, 2.0]))))\n"
                                "print('D', err(lambda: (x.cast('int32') // 2).cast('float32').sum().backward()))\n"
                                "w = Tensor([1.0, 2.0])\n"
                                "(w * w).sum().backward()\n"
                                "print('E', err(lambda: SGD([w], lr=0.1).step()))\n"
                                "print('F', err(lambda: SGD([w], lr=-1)))\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 0, why(r).constData());
    auto line = [&](const char* tag) { return r.out.section(QString("\n%1 ").arg(tag), 1, 1).section('\n', 0, 0); };
    QString out = "\n" + r.out;
    r.out = out;
    QVERIFY2(line("A").contains("scalar") && line("A").contains("(2, 2)"), why(r).constData());
    QVERIFY2(line("B").contains("only float") && line("B").contains("int"), why(r).constData());
    QVERIFY2(line("C").contains("(2,)") && line("C").contains("(2, 2)"), why(r).constData());
    QVERIFY2(line("D").contains("FLOORDIV") && line("D").contains("no gradient"), why(r).constData());
    QVERIFY2(line("E").contains("TRAINING"), why(r).constData());
    QVERIFY2(line("F").contains("learning rate"), why(r).constData());
  }

  // the training-step example prints tinygrad's losses (tinygrad a9069c1 printed these three lines)
  void train_step_example_matches_tinygrad() {
    Result r = run({"run", source_dir() + "/resources/examples/train_step.py"});
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(r.out.contains("step 0: loss 1.2236\nstep 1: loss 1.0792\nstep 2: loss 0.9578"), why(r).constData());
  }

  // the TinyJit training loop: two steps run and capture, four replay; the losses are the ones tinygrad a9069c1 printed
  void train_jit_example_matches_tinygrad() {
    Result r = run({"run", source_dir() + "/resources/examples/train_jit.py"});
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(r.out.contains("step 0: loss 1.1506\nstep 1: loss 0.8962\nstep 2: loss 0.7518\nstep 3: loss 0.9091\nstep 4: loss 0.7212\n"
                            "step 5: loss 0.6303"),
             why(r).constData());
  }

  void tutorial_example_prints_the_sum() {
    Result r = run({"run", source_dir() + "/resources/examples/tutorial.py"});
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(r.out.contains("[11.0, 22.0, 33.0, 44.0]"), why(r).constData());
  }

  void run_flag_is_run_with_debug2() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QProcess p;
    env.remove("DEBUG");
    p.setProcessEnvironment(env);
    p.start(tinyscope_bin(), {source_dir() + "/resources/examples/tutorial.py", "--run"});
    QVERIFY(p.waitForFinished(60000));
    QString out = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY2(out.contains("[11.0, 22.0, 33.0, 44.0]"), qPrintable(out));
    QVERIFY2(out.contains("***"), qPrintable(out));  // DEBUG=2 lines
  }

  void api_identities() {
    QTemporaryDir dir;
    QString path = write_script(dir, "ids.py",
                                "from tinygrad import Tensor, dtypes\n"
                                "from tinygrad.dtype import dtypes as dt2\n"
                                "from tinygrad.uop.ops import Ops, UOp\n"
                                "from tinygrad.helpers import getenv, DEBUG\n"
                                "from tinygrad.engine.realize import run_linear\n"
                                "import tinygrad.nn\n"
                                "a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()\n"
                                "b = Tensor([10.0, 20.0, 30.0, 40.0]).realize()\n"
                                "c = a + b\n"
                                "print(c.uop.op is Ops.ADD, str(Ops.ADD), dtypes.float32 is dtypes.float, dt2 is dtypes,\n"
                                "      str(c.dtype), c.shape, (a > b).dtype is dtypes.bool, isinstance(c.uop, UOp))\n");
    Result r = run({"run", path});
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(r.out.contains("True Ops.ADD True True dtypes.float (4,) True True"), why(r).constData());
  }

  // tests/app/python_api.py checks indexing, dtypes, operators, setitem, ... against tinygrad's values
  void python_api_matches_tinygrad_data() {
    QTest::addColumn<QString>("device");
    for (const char* d : {"CPU", "CPU:LLVM", "INTERP"}) QTest::newRow(d) << QString(d);
  }
  void python_api_matches_tinygrad() {
    QFETCH(QString, device);
    Result r = run({"run", source_dir() + "/tests/app/python_api.py"}, {{"DEV", device}});
    QVERIFY2(r.code == 0 && r.out.contains("python api ok"), why(r).constData());
  }

  // tests/app/python_compat.py: numpy interop and the reference's behaviour its own tests check, on every device
  void python_compat_matches_tinygrad_data() {
    QTest::addColumn<QString>("device");
    for (const char* d : {"CPU", "CPU:LLVM", "INTERP", "VULKAN"}) QTest::newRow(d) << QString(d);
  }
  // `tinyscope run tests/app/<script>` with DEV=device (lavapipe for VULKAN)
  static Result run_on(const QString& device, const QString& script) {
    QProcessEnvironment env;
    env.insert("DEV", device);
    if (device == "VULKAN") ts_test::vulkan_test_env(env, QDir::tempPath());
    return ts_test::run_process(tinyscope_bin(), {"run", source_dir() + "/tests/app/" + script}, env);
  }
  void python_compat_matches_tinygrad() {
    QFETCH(QString, device);
    Result r = run_on(device, "python_compat.py");
    QVERIFY2(r.code == 0 && r.out.contains("python compat ok"), why(r).constData());
  }

  // TinyJit replays give the values a run without the JIT gives, on every device: tests/app/jit_replay.py (programs of
  // the corpora's kinds, graph calls, a result fed back, an optimizer step; numpy beside) and tests/app/jit_corpus.py
  // (every corpus program wrapped in TinyJit, its constants the inputs, new values each call: the values and the
  // inputs after each call as the same function's without the JIT)
  void jit_replays_match_plain_runs_data() {
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("ok");
    for (const char* d : {"CPU", "INTERP", "VULKAN"}) {
      QTest::newRow(qPrintable(QString("%1 jit_replay").arg(d))) << QString(d) << QString("jit_replay.py") << QString("jit replay ok");
      QTest::newRow(qPrintable(QString("%1 jit_corpus").arg(d))) << QString(d) << QString("jit_corpus.py") << QString("jit corpus ok");
    }
  }
  void jit_replays_match_plain_runs() {
    QFETCH(QString, device);
    QFETCH(QString, script);
    QFETCH(QString, ok);
    Result r = run_on(device, script);
    QVERIFY2(r.code == 0 && r.out.contains(ok), why(r).constData());
  }

  // scripts and the files they open are UTF-8 whatever the locale says (Python's UTF-8 mode, as a tinygrad user's
  // python3 under a UTF-8 locale): a C locale must not turn a non-ASCII string into an error or mojibake
  void scripts_and_files_are_utf8_in_any_locale() {
    QTemporaryDir dir;
    QVERIFY(ts_test::write_file(dir.filePath("names.txt"), QStringLiteral("gr\u00f6\u00dfe \u2713").toUtf8()));
    QString path = write_script(dir, "u8.py",
                                "s = 'h\u00e9llo \u2713'  # a comment with \u00fc\n"
                                "t = open(__file__.replace('u8.py', 'names.txt')).read()\n"
                                "print(len(s), len(t), t.encode('utf-8').hex())\n");
    QProcessEnvironment env;
    env.insert("LC_ALL", "C");
    env.insert("LANG", "C");
    Result r = ts_test::run_process(tinyscope_bin(), {"run", path}, env);
    QVERIFY2(r.code == 0, why(r).constData());
    // 7 characters, 7 characters, the file's bytes read back exactly
    QVERIFY2(r.out.contains("7 7 6772c3b6c39f6520e29c93"), why(r).constData());
  }

  // Context sets the ContextVars the engine reads for its block and restores them after: DEBUG=2 prints the calls
  // inside only, NOOPT=1 compiles the same matmul without opts (the names the reference prints for this script)
  void context_sets_engine_vars_for_its_block() {
    QTemporaryDir dir;
    QString path = write_script(dir, "ctx.py",
                                "from tinygrad import Tensor\n"
                                "from tinygrad.helpers import Context\n"
                                "a = Tensor.ones(64, 64).contiguous().realize()\n"
                                "with Context(DEBUG=2):\n"
                                "  (a @ a).realize()\n"
                                "print('--- noopt')\n"
                                "with Context(NOOPT=1, DEBUG=2):\n"
                                "  (a @ a).realize()\n"
                                "print('--- after')\n"
                                "(a @ a).realize()\n"
                                "(a @ a + 1).realize()\n");
    QProcessEnvironment env;
    env.insert("DEV", "CPU");
    Result r = ts_test::run_process(tinyscope_bin(), {"run", path}, env);
    QVERIFY2(r.code == 0, why(r).constData());
    const QString out = QString(r.out).remove(QRegularExpression("\x1b\\[[0-9;]*m"));
    const int noopt = out.indexOf("--- noopt"), after = out.indexOf("--- after");
    QVERIFY2(noopt > 0 && after > noopt, qPrintable(out));
    QVERIFY2(out.left(noopt).contains("r_8_16_2_4_4_16_4"), qPrintable(out));
    QVERIFY2(out.mid(noopt, after - noopt).contains("r_64_64_64"), qPrintable(out));
    QVERIFY2(!out.mid(after).contains("***"), qPrintable(out));  // DEBUG is 0 again
  }

  void json_trace_holds_result_and_calls() {
    QTemporaryDir dir;
    QString path = write_script(dir, "res.py",
                                "import sys\n"
                                "from tinygrad import Tensor\n"
                                "RESULT = {'v': (Tensor([1.0, 2.0]) * 2).tolist(), 'argv': sys.argv[1:], 'n': float('nan')}\n");
    QString trace = dir.filePath("trace.json");
    Result r = run({"run", path, "--json", trace, "--", "x", "y"});
    QVERIFY2(r.code == 0, why(r).constData());
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    QJsonObject res = o["result"].toObject();
    QCOMPARE(res["v"].toArray().size(), 2);
    QCOMPARE(res["v"].toArray()[1].toDouble(), 4.0);
    QCOMPARE(res["argv"].toArray().size(), 2);
    QCOMPARE(res["n"].toString(), QStringLiteral("NaN"));
    QCOMPARE(o["script"].toString(), path);
    QVERIFY(o["calls"].isArray());
    QVERIFY(!o["calls"].toArray().isEmpty());
    QVERIFY2(!o["contexts"].toArray().isEmpty(), "--json records the rewrite passes by default");
  }

  void trace_level_off_records_no_passes() {
    QTemporaryDir dir;
    QString path = write_script(dir, "res.py", "from tinygrad import Tensor\nRESULT = (Tensor([1.0, 2.0]) * 2).tolist()\n");
    QString trace = dir.filePath("trace.json");
    Result r = run({"run", path, "--json", trace, "--trace", "off"});
    QVERIFY2(r.code == 0, why(r).constData());
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(o["contexts"].toArray().isEmpty());
    QCOMPARE(o["result"].toArray().size(), 2);
    QCOMPARE(run({"run", path, "--trace", "sideways"}).code, 2);
  }

  void sys_exit_code_is_kept() {
    QTemporaryDir dir;
    QString path = write_script(dir, "exit.py", "import sys\nsys.exit(3)\n");
    QCOMPARE(run({"run", path}).code, 3);
  }

  // ---- bad command lines, bad requests and traces without a display: a clear error naming the problem and a
  // non-zero exit, never Qt's abort or a silent success
 private:
  static QMap<QString, QString> no_display() {
    return {{"QT_QPA_PLATFORM", "offscreen"}, {"DISPLAY", ""}, {"WAYLAND_DISPLAY", ""}};
  }
  // `tinyscope serve` with one request line on stdin (none when `request` is empty)
  static Result serve(const QByteArray& request) { return run({"serve"}, {}, request.isEmpty() ? request : request + "\n"); }

 private slots:
  void trace_without_display_is_an_error_not_an_abort() {
    const QString trace = source_dir() + "/tests/viewer/data/seed_add.trace.json";
    Result r = run({trace}, no_display());
    QVERIFY2(r.code == 2, why(r).constData());  // exit() with a message, not Qt's abort (-1 here)
    QVERIFY2(r.err.contains("no display") && r.err.contains("--screenshot") && r.err.contains("usage:"), why(r).constData());
    // a corrupt trace says what is wrong with it, display or not
    QTemporaryDir dir;
    QString bad = write_script(dir, "bad.json", R"({"version": 1.0, "contexts": [], "calls": [], "uops": {}})");
    r = run({bad}, no_display());
    QVERIFY2(r.code == 1, why(r).constData());
    QVERIFY2(r.err.contains("cannot open the trace " + bad + ": version: expected the integer 1, found 1.0"), why(r).constData());
    // a script without --run: the same message (it used to print the usage and exit 0)
    r = run({source_dir() + "/resources/examples/tutorial.py"}, no_display());
    QVERIFY2(r.code == 2 && r.err.contains("no display") && r.err.contains("--run"), why(r).constData());
  }

  void serve_rejects_bad_requests() {
    const QString ok = source_dir() + "/resources/examples/tutorial.py";
    auto req = [&](const QString& rest) { return QStringLiteral("{\"script\": \"%1\"%2}").arg(ok, rest).toUtf8(); };
    const QList<QPair<QByteArray, QString>> bad = {
        {R"({"script": "ok.py", "trace": 5})", "\"trace\" must be"},  // the reproducer: an uncaught type_error aborted
        {req(", \"trace\": 5"), "\"trace\" must be \"off\", \"passes\" or \"matches\", not 5"},
        {req(", \"trace\": \"sideways\""), "\"trace\" must be"},
        {req(", \"repeat\": \"abc\""), "\"repeat\" must be a whole number from 1 to 10000, not \"abc\""},
        {req(", \"repeat\": 0"), "\"repeat\" must be"},
        {req(", \"repeat\": 2.5"), "\"repeat\" must be"},
        {req(", \"opts\": \"wide\""), "\"opts\" must be \"reference\" or \"extended\" (the opt space BEAM searches), not \"wide\""},
        {req(", \"opts\": 1"), "\"opts\" must be"},
        {req(", \"dev\": 3"), "\"dev\" must be a string"},
        {req(", \"json\": []"), "\"json\" must be a string"},
        {req(", \"args\": [1]"), "\"args\" must be an array of strings"},
        {req(", \"args\": \"x\""), "\"args\" must be an array"},
        {R"({"script": 5})", "\"script\" must be a string"},
        {R"({"json": "x.json"})", "no \"script\""},
        {R"({"script": "/no/such/script.py"})", "no such script: '/no/such/script.py'"},
        {"[1, 2]", "not a JSON object"},
        {"{not json", "bad request"}};
    for (const auto& [request, message] : bad) {
      Result r = serve(request);
      const QByteArray what = "request " + request + "\n" + why(r);
      QVERIFY2(r.code == 2, what.constData());
      QVERIFY2(r.err.contains("tinyscope serve: bad request: ") && r.err.contains(message), what.constData());
    }
    // a good request still runs, with its repeat and trace level
    QTemporaryDir dir;
    const QString trace = dir.filePath("t.json");
    Result r = serve(req(QStringLiteral(", \"json\": \"%1\", \"trace\": \"matches\", \"repeat\": 3").arg(trace)));
    QVERIFY2(r.code == 0 && r.out.contains("[11.0, 22.0, 33.0, 44.0]"), why(r).constData());
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject t = QJsonDocument::fromJson(f.readAll()).object();
    bool timed_three = false;
    for (const auto& c : t["calls"].toArray()) timed_three |= c.toObject()["times"].toArray().size() == 3;
    QVERIFY2(timed_three, "repeat 3 times a kernel three times");
    // stdin closed without a request: the window's spare child ends normally
    QCOMPARE(serve("").code, 0);
  }

  void run_needs_a_script_file() {
    QTemporaryDir dir;
    Result r = run({"run", dir.path()});
    QVERIFY2(r.code == 2 && r.err.contains("'" + dir.path() + "' is a directory, not a script"), why(r).constData());
    r = run({"run", dir.filePath("missing.py")});
    QVERIFY2(r.code == 2 && r.err.contains("no such script"), why(r).constData());
    r = run({dir.path() + "/missing.py", "--run"});
    QVERIFY2(r.code == 2 && r.err.contains("no such script"), why(r).constData());
  }

  void repeat_must_be_a_count() {
    const QString script = source_dir() + "/resources/examples/tutorial.py";
    for (const char* bad : {"abc", "0", "-3", "2.5", "10001", "3x", ""}) {
      Result r = run({"run", script, "--repeat", bad});
      QVERIFY2(r.code == 2, why(r).constData());
      QVERIFY2(r.err.contains(QStringLiteral("--repeat must be a whole number from 1 to 10000, not '%1'").arg(bad)), why(r).constData());
      QVERIFY2(!r.out.contains("[11.0"), "nothing ran");
    }
    Result r = run({"run", script, "--repeat"});
    QVERIFY2(r.code == 2 && r.err.contains("--repeat needs a value"), why(r).constData());
    QTemporaryDir dir;
    const QString trace = dir.filePath("t.json");
    r = run({"run", script, "--repeat", "4", "--json", trace});
    QVERIFY2(r.code == 0 && r.out.contains("[11.0, 22.0, 33.0, 44.0]"), why(r).constData());
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    bool timed_four = false;
    for (const auto& c : QJsonDocument::fromJson(f.readAll()).object()["calls"].toArray())
      timed_four |= c.toObject()["times"].toArray().size() == 4;
    QVERIFY(timed_four);
    // the window's --runs too
    r = run({script, "--runs", "abc", "--screenshot", dir.filePath("x.png")}, no_display());
    QVERIFY2(r.code == 2 && r.err.contains("--runs needs a number of runs from 1 to 10000, not 'abc'"), why(r).constData());
    for (const char* bad : {"0", "x", "-2"}) {
      r = run({script, "--step", bad, "--screenshot", dir.filePath("x.png")}, no_display());
      QVERIFY2(r.code == 2 && r.err.contains(QStringLiteral("--step needs a step of the rewrite stepper from 1, not '%1'").arg(bad)),
               why(r).constData());
    }
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
