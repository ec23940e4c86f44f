// The window's runs keep what they recorded and say what happened: the child streams its trace as it records it, so
// a Stop or a crash leaves a partial trace in the panes (labelled with how the run ended), the status line counts the
// calls while the script runs, an unknown device is an error naming the devices that exist (never another device in
// its place), and the timings say what each number measured.
//
// TS_VIEWER_SHOT_DIR=DIR also saves the window during a run, after a crash and with a device error, to look at.
#include <QCheckBox>
#include <QDockWidget>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMap>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QComboBox>
#include <QProgressBar>
#include <QCheckBox>
#include <QSpinBox>
#include <QToolButton>

#include "app/gui/devices.h"
#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "app/gui/trace_stream.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/panes/timings_pane.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;

// three realizes of a 4-float kernel (one copy in, then E_4 three times), each printed once it is realized
const char* kSteps =
    "import os, sys, time\n"
    "from tinygrad import Tensor\n"
    "a = Tensor([1.0, 2.0, 3.0, 4.0])\n"
    "for i in range(3):\n"
    "  a = (a * 2 + 1).realize()\n"
    "  print('step', i, a.tolist(), flush=True)\n";

void shot(QWidget* w, const QString& name) {
  if (!qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) return;
  QVERIFY(w->grab().save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/" + name));
}

// the same trace, as far as the panes show it: contexts (kind, name, passes and their match counts) and calls (a
// schedule's name ends with the script's line: the file's name is left out)
QStringList outline(const tsv::Session& s) {
  static const QRegularExpression script_name(QStringLiteral("\\w+\\.py:"));
  QStringList out;
  for (const auto& c : s.contexts()) {
    QStringList passes;
    for (const auto& p : c.passes) passes << QStringLiteral("%1:%2").arg(p.name).arg(p.match_count);
    out << QStringLiteral("%1 %2 [%3] program=%4").arg(c.kind, QString(c.plain_name).replace(script_name, "SCRIPT:"), passes.join(", ")).arg(c.has_program);
  }
  for (const auto& c : s.calls()) out << QStringLiteral("call %1 %2 #%3 sched %4").arg(c.kind, c.name).arg(c.counter).arg(c.schedule_index);
  return out;
}

int calls_in(const QString& label) {
  static const QRegularExpression re(QStringLiteral("(\\d+) calls so far"));
  auto m = re.match(label);
  return m.hasMatch() ? m.captured(1).toInt() : -1;
}

struct Finished {
  int code = 0;
  bool stopped = false;
  QString trace, stderr_text;
};
Finished run_controller(tsgui::RunController& rc, const QString& name, const QString& source, const QString& dev = "CPU") {
  QSignalSpy finished(&rc, &tsgui::RunController::finished);
  rc.start(name, source, dev);
  if (!(finished.count() == 1 || finished.wait(90000))) return {-99, false, {}, {}};
  const auto a = finished.front();
  return {a.at(0).toInt(), a.at(1).toBool(), a.at(2).toString(), a.at(3).toString()};
}
}  // namespace

class TestRuns : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  // poll() reads only what was appended, a line cut anywhere (even inside a call line) is read once it is whole,
  // and its counts are those of parsing every line of the file
  void stream_reader_reads_only_new_bytes() {
    QTemporaryDir dir;
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    Finished f = run_controller(rc, "steps.py", kSteps);
    QCOMPARE(f.code, 0);
    QFile in(rc.stream().path());
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray all = in.readAll();
    int calls = 0, contexts = 0;
    double seconds = 0;
    for (const QByteArray& line : all.split('\n')) {
      if (line.isEmpty()) continue;
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      QVERIFY2(!o.isEmpty() && o.size() == 1, line.left(80).constData());  // every line is one JSON object, one key
      if (o.contains("call")) ++calls, seconds += o["call"].toObject()["seconds"].toDouble();
      if (o.contains("context")) ++contexts;
    }
    QCOMPARE(calls, 4);  // the copy and three E_4
    QCOMPARE(contexts, 4);  // three schedules and one kernel (E_4 is compiled once)
    // replay the file into another one in random pieces
    const QString copy = dir.filePath("copy.jsonl");
    QFile out(copy);
    QVERIFY(out.open(QIODevice::WriteOnly));
    tsgui::TraceStream st;
    st.reset(copy);
    QVERIFY(!st.poll());
    auto* rng = QRandomGenerator::global();
    for (qsizetype at = 0; at < all.size();) {
      const qsizetype n = std::min<qsizetype>(all.size() - at, 1 + rng->bounded(700));
      out.write(all.mid(at, n));
      out.flush();
      at += n;
      st.poll();
      QCOMPARE(st.bytes(), at);  // all of it read, nothing twice
    }
    QVERIFY(!st.poll());
    QCOMPARE(st.calls(), calls);
    QCOMPARE(st.contexts(), contexts);
    QCOMPARE(st.call_seconds(), seconds);
    QCOMPARE(st.last_call(), QStringLiteral("E_4"));
  }

  // a run that ends normally writes its whole trace; the stream of that run, rebuilt, is the same trace
  void stream_rebuilds_the_whole_trace() {
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    rc.set_repeat(3);
    QSignalSpy finished(&rc, &tsgui::RunController::finished);
    rc.start_file(source_dir() + "/resources/examples/train_step.py", "CPU");
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.front().at(0).toInt(), 0);
    QVERIFY(!rc.last_end().partial);
    tsv::Session whole, rebuilt;
    QString err;
    QVERIFY2(whole.load(finished.front().at(2).toString(), &err), qPrintable(err));
    int records = 0;
    const QByteArray doc = tsgui::TraceStream::rebuild(rc.stream().path(), QJsonObject{{"device", "CPU"}}, &records, &err);
    QVERIFY2(rebuilt.load_data(doc, &err), qPrintable(err));
    QVERIFY(records > whole.contexts().size());
    QCOMPARE(rebuilt.contexts(), whole.contexts());
    QCOMPARE(rebuilt.calls(), whole.calls());
    QCOMPARE(rebuilt.uops(), whole.uops());
    QVERIFY(!whole.rules().isEmpty());
    QVERIFY(rebuilt.rules() == whole.rules());  // each rule streamed once, as it first fired
    QCOMPARE(rebuilt.device(), QStringLiteral("CPU"));
  }

  // os.kill(getpid(), 9) and os.abort() after three realizes: the panes show all of it, as partial, with the signal
  void a_crash_keeps_everything_recorded() {
    tsgui::RunController whole_rc;
    whole_rc.set_program(tinyscope_bin());
    Finished whole_run = run_controller(whole_rc, "steps.py", kSteps);
    QCOMPARE(whole_run.code, 0);
    tsv::Session whole;
    QVERIFY(whole.load(whole_run.trace));
    QCOMPARE(whole.calls().size(), 4);
    QCOMPARE(whole.contexts().size(), 4);

    struct Case {
      const char* last_line;
      QString label;
    } cases[] = {{"os.kill(os.getpid(), 9)\n", "crashed: signal 9 (SIGKILL, Killed)"},
                 {"os.abort()\n", "crashed: signal 6 (SIGABRT, Aborted)"},
                 {"os._exit(3)\n", "exit code 3"}};
    for (const auto& c : cases) {
      tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
      w.controller()->set_program(tinyscope_bin());
      w.resize(1600, 1000);
      w.show();
      w.editor()->setPlainText(QString(kSteps) + c.last_line);
      QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
      w.run();
      QVERIFY(done.wait(90000));
      QVERIFY(!done.front().at(0).toBool());
      const QString console = w.console()->toPlainText();
      QVERIFY2(console.contains("step 2 [15.0, 23.0, 31.0, 39.0]"), qPrintable(console));
      QVERIFY2(console.contains("The panes show the partial trace: 4 calls and 4 contexts, everything recorded before "
                                "the run ended."),
               qPrintable(console));
      const auto& end = w.controller()->last_end();
      QVERIFY(end.partial);
      QVERIFY2(w.session()->partial().startsWith(c.label), qPrintable(w.session()->partial()));
      // everything the script realized is there, as the whole run recorded it
      QCOMPARE(outline(*w.session()), outline(whole));
      QVERIFY(!w.run_label()->isHidden());
      QVERIFY2(w.run_label()->text().contains("PARTIAL TRACE: " + c.label), qPrintable(w.run_label()->text()));
      QVERIFY2(w.run_label()->text().contains("4 calls"), qPrintable(w.run_label()->text()));
      QVERIFY(w.windowTitle().contains("partial trace"));
      if (QString(c.last_line).contains("kill")) {
        QVERIFY2(console.contains("The run crashed: signal 9 (SIGKILL, Killed)"), qPrintable(console));
        QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 30000);
        QTest::qWait(200);
        shot(&w, "run_crashed_partial.png");
      }
      // a saved partial trace reopens as partial
      QTemporaryDir dir;
      QVERIFY(w.save_trace(dir.filePath("p.json")));
      tsv::Session again;
      QVERIFY(again.load(dir.filePath("p.json")));
      QCOMPARE(again.partial(), w.session()->partial());
    }
  }

  // a Python exception: the child writes its whole trace (up to the error) itself, not partial
  void a_script_error_keeps_its_whole_trace() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.editor()->setPlainText(QString(kSteps) + "raise ValueError('after three steps')\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(90000));
    QVERIFY(!done.front().at(0).toBool());
    QCOMPARE(w.error_line(), 7);
    QVERIFY(!w.controller()->last_end().partial);
    QVERIFY(w.session()->partial().isEmpty());
    QCOMPARE(w.session()->calls().size(), 4);
    QVERIFY(w.run_label()->isHidden());
  }

  // while a script runs, the status line counts its calls and the seconds; Stop keeps what was recorded
  void progress_while_running_and_stop_keeps_the_calls() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.resize(1600, 1000);
    w.show();
    w.editor()->setPlainText(
        "import time\nfrom tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0])\nfor i in range(1000):\n"
        "  a = (a * 2 + 1).realize()\n  print('step', i, flush=True)\n  time.sleep(0.15)\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QTRY_VERIFY_WITH_TIMEOUT(w.console()->toPlainText().contains("step 5\n"), 60000);
    // "step 5" follows six realizes: the copy and six E_4 are in the stream before the print
    QTRY_VERIFY_WITH_TIMEOUT(calls_in(w.run_label()->text()) >= 7, 5000);
    QVERIFY2(w.run_label()->text().contains(" s · "), qPrintable(w.run_label()->text()));
    QVERIFY2(w.run_label()->text().contains("(last: E_4)"), qPrintable(w.run_label()->text()));
    const int seen = calls_in(w.run_label()->text());
    QTRY_VERIFY_WITH_TIMEOUT(calls_in(w.run_label()->text()) > seen, 5000);  // it goes on counting
    shot(&w, "run_in_progress.png");
    QVERIFY(w.controller()->running());
    w.stop();
    QVERIFY(done.count() == 1 || done.wait(10000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 30000);
    // every step the script printed has its call in the panes (the copy, then one E_4 per step, maybe one more)
    const QString console = w.console()->toPlainText();
    const int printed = console.count(QRegularExpression("step \\d+\\n"));
    QVERIFY(printed >= 6);
    const int calls = w.session()->calls().size();
    QVERIFY2(calls == 1 + printed || calls == 2 + printed, qPrintable(QStringLiteral("%1 calls, %2 steps").arg(calls).arg(printed)));
    QCOMPARE(w.session()->calls().front().kind, QStringLiteral("copy"));
    for (int i = 1; i < calls; ++i) QCOMPARE(w.session()->calls()[i].name, QStringLiteral("E_4"));
    QVERIFY2(w.session()->partial().startsWith("stopped after "), qPrintable(w.session()->partial()));
    QVERIFY2(console.contains(QStringLiteral("[Stopped after ")), qPrintable(console));
    QVERIFY2(console.contains(QStringLiteral("partial trace: %1 calls").arg(calls)), qPrintable(console));
    QVERIFY(w.run_label()->text().startsWith("PARTIAL TRACE: stopped after "));
  }

  // Run while a run goes on: the old run ends (its partial trace is not read), the new one's trace is what shows
  void a_new_run_replaces_a_running_one() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.editor()->setPlainText(
        "import time\nfrom tinygrad import Tensor\na = Tensor([1.0, 2.0])\nfor i in range(1000):\n"
        "  a = (a + 1).realize()\n  time.sleep(0.1)\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QTRY_VERIFY_WITH_TIMEOUT(calls_in(w.run_label()->text()) >= 3, 60000);
    w.editor()->setPlainText(kSteps);
    w.run();
    QCOMPARE(done.count(), 1);  // the old run's end, at once
    QVERIFY(!done.front().at(0).toBool());
    QVERIFY(done.wait(90000));
    QVERIFY(done.at(1).at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 30000);
    QTest::qWait(300);
    QCOMPARE(done.count(), 2);
    QCOMPARE(w.session()->calls().size(), 4);
    QVERIFY(w.session()->partial().isEmpty());
    QVERIFY(w.run_label()->isHidden());
    QVERIFY(w.console()->toPlainText().contains("step 2 [15.0, 23.0, 31.0, 39.0]"));
    // a run that records nothing leaves empty panes, not the last run's
    w.editor()->setPlainText("import os\nos.abort()\n");
    done.clear();
    w.run();
    QVERIFY(done.wait(90000));
    QVERIFY(w.session()->calls().isEmpty());
    QVERIFY(w.session()->contexts().isEmpty());
    QVERIFY2(w.console()->toPlainText().contains("signal 6 (SIGABRT, Aborted)") && w.console()->toPlainText().contains("Nothing was recorded."),
             qPrintable(w.console()->toPlainText()));
  }

  // the choosers are the engine's devices; an unknown one is an error naming it and the devices that exist
  void devices_come_from_the_engine() {
    const QStringList devs = tsgui::device_names();
    QCOMPARE(devs, (QStringList{"CPU", "CPU:LLVM", "INTERP", "INTERP:GPU", "NULL"}));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QStringList combo, compare;
    auto combos = w.findChildren<QComboBox*>();
    for (auto* c : combos) {
      QStringList items;
      for (int i = 0; i < c->count(); ++i) items << c->itemText(i);
      if (c->toolTip().startsWith("Device")) combo = items;
      if (c->toolTip().startsWith("Compare")) compare = items;
    }
    QCOMPARE(combo, devs);
    QCOMPARE(compare, QStringList{"none"} + devs);
    for (const char* bad : {"METAL", "GPU", "CUDA", "CPU:LLMV"}) {
      QString err;
      QVERIFY(!w.set_device(bad, &err));
      QVERIFY2(err.contains(QStringLiteral("'%1'").arg(bad)) && err.contains("CPU, CPU:LLVM, INTERP"), qPrintable(err));
      QVERIFY(!w.set_compare_device(bad, &err));
      QVERIFY2(err.contains(QStringLiteral("'%1'").arg(bad)), qPrintable(err));
    }
    QVERIFY(w.set_device("cpu:llvm"));
    QCOMPARE(w.findChildren<QComboBox*>().size(), combos.size());  // nothing was added
    QVERIFY(w.set_compare_device("interp"));
    QCOMPARE(w.compare_device(), QStringLiteral("INTERP"));
  }

  // a saved device this build does not have falls back to CPU, and says so
  void a_saved_unknown_device_is_said() {
    QSettings().setValue("run/device", "METAL");
    QSettings().setValue("run/compare", "GPU");
    {
      tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/true);
      const QString console = w.console()->toPlainText();
      QVERIFY2(console.contains("The saved device is unknown (unknown device 'METAL': the devices are CPU, CPU:LLVM, INTERP, INTERP:GPU, NULL): using CPU."),
               qPrintable(console));
      QVERIFY2(console.contains("The saved compare device is unknown (unknown device 'GPU'"), qPrintable(console));
      QVERIFY(w.compare_device().isEmpty());
      w.close();
    }
    QCOMPARE(QSettings().value("run/device").toString(), QStringLiteral("CPU"));
    QSettings().clear();
  }

  // `tinyscope SCRIPT --dev METAL` (or --compare, or DEV=): the error on stderr and in the window, nothing runs,
  // exit status 2
  void command_line_refuses_an_unknown_device() {
    QTemporaryDir dir;
    struct Case {
      QStringList args;
      QString env_dev, flag, name;
    } cases[] = {{{"--dev", "METAL"}, {}, "--dev", "METAL"},
                 {{"--compare", "CUDA"}, {}, "--compare", "CUDA"},
                 {{}, "GPU", "DEV", "GPU"}};
    int n = 0;
    for (const auto& c : cases) {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      if (!c.env_dev.isEmpty()) env.insert("DEV", c.env_dev);
      p.setProcessEnvironment(env);
      const QString png = dir.filePath(QStringLiteral("dev%1.png").arg(n++));
      p.start(tinyscope_bin(), QStringList{source_dir() + "/resources/examples/tutorial.py", "--run"} + c.args +
                                   QStringList{"--screenshot", png});
      QVERIFY(p.waitForFinished(90000));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QCOMPARE(p.exitCode(), 2);
      QVERIFY2(err.contains(QStringLiteral("tinyscope: %1 %2: unknown device '%2': the devices are CPU, CPU:LLVM, INTERP").arg(c.flag, c.name)),
               qPrintable(err));
      QVERIFY2(err.contains(" 0 calls on"), qPrintable(err));  // nothing ran
      QVERIFY(QImage(png).width() > 0);
      if (n == 1 && qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR"))
        QVERIFY(QImage(png).save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/unknown_device.png"));
    }
    // the window says it too
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QString e;
    QVERIFY(!w.set_device("METAL", &e));
    w.report_device_error(e);
    QVERIFY(w.console()->toPlainText().contains("unknown device 'METAL'"));
  }

  // the serve child refuses an unknown dev itself: the reason reaches the console and the run ends cleanly
  void the_child_refuses_an_unknown_device() {
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    rc.warm_up();
    QString out;
    connect(&rc, &tsgui::RunController::output, this, [&](const QString& t, bool) { out += t; });
    Finished f = run_controller(rc, "steps.py", kSteps, "METAL");
    QCOMPARE(f.code, 2);
    QVERIFY(!f.stopped);
    QVERIFY(f.trace.isEmpty());
    QVERIFY2(out.contains("tinyscope serve: unknown device 'METAL': the devices are CPU, CPU:LLVM, INTERP"), qPrintable(out));
    QVERIFY(!rc.running());
    QVERIFY(!out.contains("step 0"));
    // and the next run goes on as ever
    Finished again = run_controller(rc, "steps.py", kSteps, "CPU");
    QCOMPARE(again.code, 0);
  }

  // the Timings pane says what each number measured: the first run, the warm runs, restored inputs
  void timings_say_what_they_measured() {
    QTemporaryDir dir;
    QProcess p;
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/train_step.py", "--json", dir.filePath("t.json"), "--repeat", "5"});
    QVERIFY(p.waitForFinished(90000));
    QCOMPARE(p.exitCode(), 0);
    tsv::Session s;
    QVERIFY(s.load(dir.filePath("t.json")));
    tsv::TimingsModel m(&s);
    QCOMPARE(m.headerData(tsv::TimingsModel::kTime, Qt::Horizontal).toString(), QStringLiteral("Time"));
    QCOMPARE(m.headerData(tsv::TimingsModel::kFirst, Qt::Horizontal).toString(), QStringLiteral("First run"));
    QCOMPARE(m.headerData(tsv::TimingsModel::kSpread, Qt::Horizontal).toString(), QStringLiteral("Warm runs"));
    int restored = 0, rerun = 0;
    for (int r = 0; r < s.calls().size(); ++r) {
      const auto& c = s.calls()[r];
      const QString tip = m.index(r, tsv::TimingsModel::kTime).data(Qt::ToolTipRole).toString();
      QVERIFY2(tip.contains(QStringLiteral("First run: %1 µs").arg(c.seconds * 1e6, 0, 'f', 2)), qPrintable(tip));
      if (c.kind == "copy") {
        QVERIFY(tip.contains("Ran once"));
        QVERIFY(tip.contains("its only run"));
        continue;
      }
      QVERIFY2(tip.contains(QStringLiteral("Time: %1 µs (the bar), the median of the 4 warm runs after the first").arg(m.headline(r) * 1e6, 0, 'f', 2)),
               qPrintable(tip));
      QCOMPARE(c.times.size(), 5);
      QVERIFY2(tip.contains("Warm runs: the 4 after the first"), qPrintable(tip));
      QCOMPARE(m.restored(r), c.repeat_mode == "restored");
      QCOMPARE(tip.contains("timed on restored inputs"), c.repeat_mode == "restored");
      restored += c.repeat_mode == "restored";
      rerun += c.repeat_mode == "rerun";
    }
    QVERIFY(restored > 0);  // Adam's assigns write what they read
    QVERIFY(rerun > 0);
  }

  // calls a TinyJit replay ran are marked (the trace's "jit"), and their tooltip says what ran them
  void timings_mark_jit_replays() {
    QTemporaryDir dir;
    QProcess p;
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/train_jit.py", "--json", dir.filePath("t.json")});
    QVERIFY(p.waitForFinished(90000));
    QCOMPARE(p.exitCode(), 0);
    tsv::Session s;
    QVERIFY(s.load(dir.filePath("t.json")));
    tsv::TimingsModel m(&s);
    int jit = 0, in_graphs = 0;
    QMap<int, int> graph_sizes;
    for (int r = 0; r < s.calls().size(); ++r) {
      const QString tip = m.index(r, tsv::TimingsModel::kTime).data(Qt::ToolTipRole).toString();
      QCOMPARE(tip.contains("Replayed by TinyJit"), s.calls()[r].jit);
      jit += s.calls()[r].jit;
      // the replays' kernels run in graph calls: each says which one and its place in it
      if (s.calls()[r].graph > 0) {
        ++in_graphs;
        const int k = ++graph_sizes[s.calls()[r].graph];
        QVERIFY2(tip.contains(QString("Graph call %1: kernel %2 of ").arg(s.calls()[r].graph).arg(k)), qPrintable(tip));
        QVERIFY(s.calls()[r].jit);
      }
      // a replayed call names its replay (five runs of the captured LINEAR) and the schedule is the capture's
      if (s.calls()[r].jit) {
        QVERIFY2(tip.contains(QRegularExpression("Replay [1-5] of 5 of this capture: calls \\d+–\\d+ \\(\\d+\\), [0-9.]+ µs in all")), qPrintable(tip));
        QVERIFY(s.contexts()[s.schedule_context(s.calls()[r].schedule_index)].plain_name.startsWith("TinyJit: "));
      }
    }
    QVERIFY(in_graphs > 0);
    for (int n : graph_sizes) QVERIFY(n > 1);  // a lone kernel is no graph call
    // six steps: the first runs as a script would, the second's captured calls run once, four replays: five runs of
    // the captured calls, every call of them marked
    QVERIFY(jit > 0 && jit % 5 == 0);
    QVERIFY(s.calls().size() > jit);
    QVERIFY(s.calls().last().jit);
    QVERIFY(!s.calls().first().jit);
  }

  // the toolbar's "extended" (only with BEAM on) makes the run's search TS_OPTS=extended: the console says so, and
  // every kernel's opts in the trace say they came from that search
  void beam_extended_reaches_the_run() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    qputenv("XDG_CACHE_HOME", tmp.filePath("cache").toLocal8Bit());  // a search, not opts from an earlier run's cache
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    auto* beam = w.findChild<QSpinBox*>(QStringLiteral("beam"));
    auto* extended = w.findChild<QCheckBox*>(QStringLiteral("beam_extended"));
    QVERIFY(beam && extended);
    beam->setValue(0);
    QVERIFY(!extended->isEnabled());
    beam->setValue(1);
    QVERIFY(extended->isEnabled());
    extended->setChecked(true);
    QVERIFY(w.controller()->extended());
    w.editor()->setPlainText("from tinygrad import Tensor\nprint((Tensor.ones(64, 64).contiguous() * 2).sum(axis=1).tolist()[0])\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(120000));
    QVERIFY2(done.front().at(0).toBool(), qPrintable(w.console()->toPlainText()));
    QVERIFY2(w.console()->toPlainText().contains("BEAM=1 TS_OPTS=extended)"), qPrintable(w.console()->toPlainText()));
    QVERIFY2(w.console()->toPlainText().contains("128.0"), qPrintable(w.console()->toPlainText()));
    QVERIFY2(w.session()->raw().contains("BEAM=1 TS_OPTS=extended search: "), w.session()->raw().left(2000).constData());
    extended->setChecked(false);
    beam->setValue(0);
    QVERIFY(!w.controller()->extended() && w.controller()->beam() == 0);
    qunsetenv("XDG_CACHE_HOME");
  }

  // (last: it registers the Vulkan devices in this process, which the device-list tests above must not see)
  // BEAM 2 on VULKAN (lavapipe): while a kernel's opts are searched the status bar shows the search (kernel, round,
  // candidates done of the round's, the best time so far) with a Cancel that stops the run and keeps what it recorded
  void beam_search_shows_progress_and_cancels() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    qputenv("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
    qputenv("XDG_RUNTIME_DIR", tmp.path().toLocal8Bit());
    qputenv("XDG_CACHE_HOME", tmp.filePath("cache").toLocal8Bit());  // no opts from an earlier run's cache
    std::string why;  // the window lists the engine's devices, as the app's does once it registered Vulkan's
    QVERIFY2(ts::vk::register_vulkan_devices({}, &why) > 0, why.c_str());
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.resize(1280, 720);
    w.show();
    QString err;
    QVERIFY2(w.set_device("VULKAN", &err), qPrintable(err));
    auto* beam = w.findChild<QSpinBox*>(QStringLiteral("beam"));
    auto* bar = w.findChild<QProgressBar*>(QStringLiteral("beam_progress"));
    auto* cancel = w.findChild<QToolButton*>(QStringLiteral("beam_cancel"));
    QVERIFY(beam && bar && cancel);
    QVERIFY(bar->isHidden() && cancel->isHidden());
    beam->setValue(2);
    QCOMPARE(w.controller()->beam(), 2);
    w.editor()->setPlainText("from tinygrad import Tensor\n"
                             "a = Tensor([[float((i * 3 + j) % 5) for j in range(256)] for i in range(256)])\n"
                             "print('inputs', flush=True)\n"
                             "print((a @ a).sum().item())\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 90000);
    QVERIFY2(w.console()->toPlainText().contains("BEAM=2"), qPrintable(w.console()->toPlainText()));
    QTRY_VERIFY_WITH_TIMEOUT(bar->text().contains(QRegularExpression("^BEAM r_\\S+ · round \\d+ · \\d+/\\d+")), 10000);
    QVERIFY(cancel->isVisible());
    QVERIFY(bar->maximum() > 1 && bar->value() <= bar->maximum());
    shot(&w, "beam_in_progress.png");
    QVERIFY(w.controller()->running());
    cancel->click();
    QVERIFY(done.count() == 1 || done.wait(10000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 30000);
    QVERIFY(bar->isHidden() && cancel->isHidden());
    QVERIFY2(w.console()->toPlainText().contains(QStringLiteral("[Stopped after ")), qPrintable(w.console()->toPlainText()));
    beam->setValue(0);
  }
};

QTEST_MAIN(TestRuns)
#include "test_runs.moc"
