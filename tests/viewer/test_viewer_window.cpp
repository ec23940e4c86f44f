// The window and its run controller driving `$TINYSCOPE_BIN run` as a child process: the command line, warm children,
// Stop and crashes, Compare with a second device or a saved trace, the tour, layout and theme, shortcuts, Help.
#include <QMenuBar>
#include <QProgressBar>
#include <QScreen>

#include "engine/codegen/opt.h"
#include "viewer/panes/timeline_pane.h"
#include "viewer_test_util.h"

namespace {
using ts_test::chain_of_kernels_trace;
using ts_test::fixture;
using ts_test::kernel_graph_trace;
using ts_test::source_dir;
using ts_test::tinyscope_bin;
using ts_test::trace_with_output;
}  // namespace

class TestViewerWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    ts_test::own_settings(QStringLiteral("test_viewer_window"));
  }

  // `tinyscope TRACE.json` opens the trace without running anything
  void command_line_opens_a_trace() {
    QTemporaryDir dir;
    const QString shot = dir.filePath("trace.png");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir.path());  // the user's saved window state stays out of it
    p.setProcessEnvironment(env);
    p.start(tinyscope_bin(), {fixture(), "--screenshot", shot});
    QVERIFY(p.waitForFinished(60000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains("3 calls on CPU"), qPrintable(err));
    QImage img(shot);
    QCOMPARE(img.size(), QSize(1600, 1000));
  }

  void run_controller_runs_a_script() {
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    QSignalSpy finished(&rc, &tsgui::RunController::finished);
    QString out;
    connect(&rc, &tsgui::RunController::output, this, [&](const QString& t, bool) { out += t; });
    rc.start_file(source_dir() + "/resources/examples/tutorial.py", "CPU");
    QVERIFY(rc.running());
    QVERIFY(finished.wait(60000));
    auto args = finished.front();
    QCOMPARE(args.at(0).toInt(), 0);
    QVERIFY(!args.at(1).toBool());
    QVERIFY2(out.contains("[11.0, 22.0, 33.0, 44.0]"), qPrintable(out));
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(args.at(2).toString(), &err), qPrintable(err));
    QVERIFY(s.calls().size() >= 3);
  }

  // a spare `tinyscope serve` child waits with Python and the JIT started; the run goes to it, on the asked device
  void run_controller_keeps_a_warm_child() {
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    QVERIFY(!rc.has_spare());
    rc.warm_up();
    QVERIFY(rc.has_spare());
    QTest::qWait(300);
    QSignalSpy finished(&rc, &tsgui::RunController::finished);
    QString out;
    connect(&rc, &tsgui::RunController::output, this, [&](const QString& t, bool) { out += t; });
    rc.start_file(source_dir() + "/resources/examples/tutorial.py", "INTERP");
    QVERIFY(rc.last_run_was_warm());
    QVERIFY(!rc.has_spare());
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.front().at(0).toInt(), 0);
    QVERIFY2(out.contains("[11.0, 22.0, 33.0, 44.0]"), qPrintable(out));
    tsv::Session s;
    QVERIFY(s.load(finished.front().at(2).toString()));
    QCOMPARE(s.device(), QStringLiteral("INTERP"));
    QTRY_VERIFY_WITH_TIMEOUT(rc.has_spare(), 5000);  // the next run's child is started after a run
    // a spare of another executable is not used
    rc.set_program(tinyscope_bin() + "-missing");
    QVERIFY(!rc.has_spare());
    finished.clear();
    rc.start_file(source_dir() + "/resources/examples/tutorial.py", "CPU");
    QVERIFY(finished.count() == 1 || finished.wait(10000));
    QCOMPARE(finished.front().at(0).toInt(), -1);
  }

  // Stop (Ctrl+.) kills a script stuck in an endless loop; the window stays and says so
  void window_stops_an_endless_loop() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.editor()->setPlainText("from tinygrad import Tensor\nprint('spinning', flush=True)\nwhile True:\n  pass\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QTRY_VERIFY_WITH_TIMEOUT(w.console()->toPlainText().contains("spinning"), 30000);
    QVERIFY(w.controller()->running());
    QAction* stop = nullptr;
    for (auto* a : w.findChildren<QAction*>())
      if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_Period)) stop = a;
    QVERIFY(stop);
    QVERIFY(stop->isEnabled());
    stop->trigger();
    QVERIFY(done.count() == 1 || done.wait(5000));
    QVERIFY(!done.front().at(0).toBool());
    QVERIFY(!w.controller()->running());
    QVERIFY2(w.console()->toPlainText().contains("[Stopped after "), qPrintable(w.console()->toPlainText()));
    QVERIFY(!stop->isEnabled());
    // the window goes on working
    w.open_script(source_dir() + "/resources/examples/tutorial.py");
    done.clear();
    w.run();
    QVERIFY(done.wait(60000));
    QVERIFY(done.front().at(0).toBool());
  }

  // Compare with…: the same script on a second device, in its own child, its calls in the Compare dock; the second
  // device runs once the first one's run is over, never beside it
  void compare_runs_a_second_device() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.set_device("CPU");
    w.set_compare_device("INTERP");
    QCOMPARE(w.compare_device(), QStringLiteral("INTERP"));
    w.open_script(source_dir() + "/resources/examples/tutorial.py");
    w.show();
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    QSignalSpy compared(&w, &tsgui::MainWindow::compare_finished);
    bool overlapped = false;
    connect(w.controller(), &tsgui::RunController::progress, this, [&] { overlapped |= w.compare_controller()->running(); });
    connect(w.compare_controller(), &tsgui::RunController::started, this, [&] { overlapped |= w.controller()->running(); });
    w.run();
    QVERIFY(w.controller()->running());
    QVERIFY(!w.compare_controller()->running());
    QVERIFY(!w.settled());
    auto* dock = w.findChild<QDockWidget*>("compare");
    QVERIFY(dock);
    auto* summary = dock->findChild<QLabel*>("compare_summary");
    QVERIFY(summary);
    QVERIFY2(summary->text().contains("INTERP runs after CPU has finished"), qPrintable(summary->text()));
    QVERIFY(done.count() == 1 || done.wait(60000));
    QVERIFY(compared.count() == 1 || compared.wait(60000));
    QVERIFY(!overlapped);
    QVERIFY(done.front().at(0).toBool());
    QVERIFY(compared.front().at(0).toBool());
    QCOMPARE(w.session()->device(), QStringLiteral("CPU"));
    QCOMPARE(w.compare_session()->device(), QStringLiteral("INTERP"));
    // one schedule, two devices: the same calls in the same order
    QStringList a, b;
    for (const auto& c : w.session()->calls()) a << c.name;
    for (const auto& c : w.compare_session()->calls()) b << c.name;
    QVERIFY(a.size() >= 3);
    QCOMPARE(b, a);
    QVERIFY(dock->isVisible());
    QVERIFY(dock->windowTitle().contains("INTERP"));
    auto* sched = dock->findChild<tsv::SchedulePane*>();
    QVERIFY(sched);
    QCOMPARE(sched->model()->rowCount(), b.size());
    // the summary counts both devices' calls and says they ran one after the other
    QVERIFY2(summary->text().contains("one device at a time"), qPrintable(summary->text()));
    QVERIFY2(summary->text().contains(QString("INTERP: %1 calls").arg(b.size())), qPrintable(summary->text()));
    QVERIFY2(summary->text().contains(QString("CPU: %1 calls").arg(a.size())), qPrintable(summary->text()));
    // per call: both times (each the warm median the Timings pane shows) and their ratio
    tsv::CompareModel* cm = w.compare_model();
    QCOMPARE(cm->rowCount(), a.size());
    QCOMPARE(cm->headerData(tsv::CompareModel::kRatio, Qt::Horizontal).toString(), QStringLiteral("INTERP / CPU"));
    int kernel = -1;
    for (int r = 0; r < a.size(); ++r) {
      QVERIFY(cm->matched(r));
      const double ta = tsv::TimingsModel::headline_of(w.session()->calls()[r]), tb = tsv::TimingsModel::headline_of(w.compare_session()->calls()[r]);
      QCOMPARE(cm->index(r, tsv::CompareModel::kTimeA).data(Qt::UserRole).toDouble(), ta);
      QCOMPARE(cm->ratio(r), tb / ta);
      if (w.session()->calls()[r].kind == "kernel") kernel = r;
    }
    // the selected kernel's two sources side by side: C on the CPU, the interpreter's listing on INTERP
    QVERIFY(kernel >= 0);
    w.selection()->select_call(kernel);
    tsv::SourceDiff* diff = w.compare_diff();
    QVERIFY2(diff->summary().contains("only on the left"), qPrintable(diff->summary()));
    QVERIFY(diff->left()->toPlainText().contains("E_4") && !diff->right()->toPlainText().isEmpty());
    QVERIFY(!diff->left()->extraSelections().isEmpty());
    // every value the script read back, on both devices, element by element: tutorial.py reads c = a + b twice
    for (const tsv::Session* s : {w.session(), w.compare_session()}) {
      QCOMPARE(s->outputs().size(), 2);
      for (const tsv::Output& o : s->outputs()) {
        QCOMPARE(o.f, (QVector<double>{11, 22, 33, 44}));
        QCOMPARE(o.shape, QList<qint64>{4});
      }
      QCOMPARE(s->outputs()[0].where, QStringLiteral("tutorial.py:7"));
      QCOMPARE(s->outputs()[1].where, QStringLiteral("tutorial.py:8"));
    }
    tsv::OutputCompareModel* om = w.output_compare_model();
    QCOMPARE(om->rowCount(), 2);
    QCOMPARE(om->differing_rows(), 0);
    QCOMPARE(om->diff(1).compared, 4);
    QCOMPARE(om->index(1, tsv::OutputCompareModel::kVerdict).data().toString(), QStringLiteral("equal"));
    QVERIFY2(summary->text().contains("the 2 values the script read are equal"), qPrintable(summary->text()));
    // the second device's console: what its run printed
    QVERIFY2(w.compare_console()->toPlainText().contains("[11.0, 22.0, 33.0, 44.0]"), qPrintable(w.compare_console()->toPlainText()));
    w.set_compare_device("none");
    QVERIFY(w.compare_device().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
  }

  // a run beside a saved trace (a script before and after an edit), the comparison saved in one file and reopened as
  // it was, and a new run dropping the comparison the moment it starts
  void compare_with_a_saved_trace() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.set_device("CPU");
    w.set_compare_device("none");
    w.show();
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    auto run_text = [&](const QString& text) {
      const int before = done.count();
      w.editor()->setPlainText(text);
      w.run();
      QVERIFY(done.count() > before || done.wait(60000));
      QVERIFY(done.back().at(0).toBool());
      QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    };
    // nothing to compare with yet: an error that says so
    QString err;
    QVERIFY(!w.compare_with_trace(dir.filePath("nothing.json"), &err));
    QVERIFY2(err.contains("nothing to compare"), qPrintable(err));
    const QString before = "from tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0])\nprint((a * 2).tolist())\n";
    const QString after = "from tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0])\nprint((a * 2 + (a > 3)).tolist())\n";
    run_text(before);
    const QString saved = dir.filePath("before.json");
    QVERIFY(w.save_trace(saved));
    run_text(after);
    QVERIFY(w.compare_with_trace(saved, &err));
    QCOMPARE(w.first_label(), QStringLiteral("CPU · this run"));
    QCOMPARE(w.second_label(), QStringLiteral("CPU · before.json"));
    auto* dock = w.findChild<QDockWidget*>("compare");
    QVERIFY(dock && dock->isVisible());
    auto* summary = dock->findChild<QLabel*>("compare_summary");
    QVERIFY2(summary->text().contains("Two saved traces"), qPrintable(summary->text()));
    // the saved run's console, as its trace kept it
    QVERIFY2(w.compare_console()->toPlainText().contains("[2.0, 4.0, 6.0, 8.0]"), qPrintable(w.compare_console()->toPlainText()));
    QCOMPARE(w.compare_model()->headerData(tsv::CompareModel::kRatio, Qt::Horizontal).toString(),
             QStringLiteral("CPU · before.json / CPU · this run"));
    // the one value each read: 2a + (a > 3) against 2a differs in its last element only, by exactly 1
    tsv::OutputCompareModel* om = w.output_compare_model();
    QCOMPARE(om->rowCount(), 1);
    QCOMPARE(om->differing_rows(), 1);
    QCOMPARE(w.session()->outputs()[0].f, (QVector<double>{2, 4, 6, 9}));
    QCOMPARE(w.compare_session()->outputs()[0].f, (QVector<double>{2, 4, 6, 8}));
    QCOMPARE(om->diff(0).differing, 1);
    QCOMPARE(om->diff(0).max_abs, 1.0);
    QVERIFY2(summary->text().contains("1 of the 1 values the script read differ"), qPrintable(summary->text()));
    // what the two kernels compile to, side by side: the x86-64 assembly `tinyscope asm` prints for each source
    int kernel = -1;
    for (int c = 0; c < w.session()->calls().size(); ++c)
      if (w.session()->calls()[c].kind == "kernel" && w.compare_model()->matched(c)) kernel = c;
    QVERIFY(kernel >= 0);
    w.selection()->select_call(kernel);
    auto* as_asm = dock->findChild<QCheckBox*>("compare_asm");
    QVERIFY(as_asm);
    as_asm->setChecked(true);
    tsv::SourceDiff* diff = w.compare_diff();
    QTRY_VERIFY_WITH_TIMEOUT(diff->left()->toPlainText().contains("ret"), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(diff->right()->toPlainText().contains("ret"), 60000);
    auto assembly = [&](const tsv::Session& s, int call) {
      const tsv::Program& p = s.contexts()[s.kernel_context(s.calls()[call].program_key)].program;
      QFile f(dir.filePath("k.c"));
      f.open(QIODevice::WriteOnly | QIODevice::Truncate);
      f.write(p.src.toUtf8());
      f.close();
      QProcess asm_;
      asm_.start(tinyscope_bin(), {"asm", "--lang", "c", f.fileName()});
      asm_.waitForFinished(60000);
      return QString::fromUtf8(asm_.readAllStandardOutput());
    };
    QCOMPARE(diff->left()->toPlainText(), assembly(*w.session(), kernel));
    QCOMPARE(diff->right()->toPlainText(), assembly(*w.compare_session(), kernel));
    QVERIFY(diff->left()->toPlainText() != diff->right()->toPlainText());  // 2a + (a > 3) is not 2a
    as_asm->setChecked(false);
    QVERIFY(diff->left()->toPlainText().contains("void "));  // the C sources again
    // saved in one file, reopened in another window as it was
    const QString both = dir.filePath("edit.compare.json");
    QVERIFY(w.save_compare(both, &err));
    {
      tsgui::MainWindow v(source_dir() + "/resources/examples", /*restore_layout=*/false);
      QVERIFY2(v.open_trace(both, &err), qPrintable(err));
      QCOMPARE(v.session()->calls(), w.session()->calls());
      QCOMPARE(v.compare_session()->calls(), w.compare_session()->calls());
      QCOMPARE(v.compare_session()->outputs(), w.compare_session()->outputs());
      QCOMPARE(v.first_label(), w.first_label());
      QCOMPARE(v.second_label(), w.second_label());
      QCOMPARE(v.output_compare_model()->differing_rows(), 1);
      QCOMPARE(v.compare_model()->rowCount(), w.compare_model()->rowCount());
      // a trace file is not a comparison, and a comparison is not a trace to compare with
      QVERIFY(!v.compare_with_trace(both, &err));
      QVERIFY2(err.contains("saved comparison"), qPrintable(err));
    }
    // broken comparisons are refused whole, with the reason
    auto refused = [&](const QByteArray& text, const QString& why) {
      QFile f(dir.filePath("bad.json"));
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(text);
      f.close();
      tsgui::MainWindow v(source_dir() + "/resources/examples", /*restore_layout=*/false);
      QString e;
      QVERIFY(!v.open_trace(f.fileName(), &e));
      QVERIFY2(e.contains(why), qPrintable(e));
      QVERIFY(v.session()->calls().isEmpty());
      QVERIFY(v.compare_session()->calls().isEmpty());
    };
    QFile tf(saved);
    QVERIFY(tf.open(QIODevice::ReadOnly));
    const QByteArray trace = tf.readAll();
    refused("{\"tinyscope_compare\": 2, \"first\": " + trace + ", \"second\": " + trace + "}", "version 2");
    refused("{\"tinyscope_compare\": 1, \"first\": " + trace + "}", "no \"second\" trace");
    refused("{\"tinyscope_compare\": 1, \"first\": " + trace + ", \"second\": {\"version\": 1}}", "second trace");
    refused("{\"tinyscope_compare\": 1, \"first\": [", "not valid JSON");
    // a new run: the comparison goes as it starts, not when the run ends
    const int runs = done.count();
    w.run();
    QVERIFY(w.compare_session()->calls().isEmpty());
    QVERIFY(!dock->isVisible());
    QCOMPARE(w.output_compare_model()->rowCount(), 0);
    QVERIFY(done.count() > runs || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
  }

  // Help > Tour on a real run (the first lesson): nine stops in the tutorial's order, each raising the pane of its stage
  // with the item it talks about selected, its text from resources/ with the run's own names and counts filled in; the
  // two that ask a question show neither pane nor text until it is answered right (or the answer shown)
  void tour_follows_the_pipeline() {
    QString err;
    const tsv::Lesson parsed = tsv::parse_lesson("# comment\ntitle: T\nscript: s.py\n## a-b | One {x}\nask: How many?\nanswer: kernels\nfirst line\nsecond\n\n## c | Two\ntext\n", &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    QCOMPARE(parsed.title, QStringLiteral("T"));
    QCOMPARE(parsed.script, QStringLiteral("s.py"));
    QCOMPARE(parsed.steps.size(), 2);
    QCOMPARE(parsed.steps[0].id, QStringLiteral("a-b"));
    QCOMPARE(parsed.steps[0].title, QStringLiteral("One {x}"));
    QCOMPARE(parsed.steps[0].ask, QStringLiteral("How many?"));
    QCOMPARE(parsed.steps[0].answer, QStringLiteral("kernels"));
    QCOMPARE(parsed.steps[0].text, QStringLiteral("first line second"));
    // a question without a known answer kind is refused, naming the step
    tsv::parse_lesson("## a | A\nask: Why?\ntext\n", &err);
    QVERIFY2(err.contains("step 'a'") && err.contains("answer"), qPrintable(err));
    tsv::parse_lesson("## a | A\nask: Why?\nanswer: colours\n", &err);
    QVERIFY2(err.contains("unknown answer kind 'colours'"), qPrintable(err));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.set_device("CPU");
    w.open_script(source_dir() + "/resources/examples/tutorial.py");
    w.show();
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.count() == 1 || done.wait(60000));
    QVERIFY(done.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    auto* tour_dock = w.findChild<QDockWidget*>("tour");
    QVERIFY(tour_dock && !tour_dock->isVisible());
    w.start_tour();
    tsgui::Tour* tour = w.tour();
    QVERIFY(tour_dock->isVisible());
    QCOMPARE(tour->stops(), 9);
    const QStringList ids = {"tensor-graph", "realize", "kernel-graph", "schedule", "run-linear", "to-program", "source", "execution", "jit-replay"};
    const auto& calls = w.session()->calls();
    int kernel = -1;
    for (int i = 0; i < calls.size() && kernel < 0; ++i)
      if (calls[i].kind == "kernel") kernel = i;
    QVERIFY(kernel >= 0);
    // the tour follows the schedule of the first kernel (tutorial.py's third realize: c = a + b alone)
    const int followed = w.session()->schedule_context(calls[kernel].schedule_index);
    QVERIFY(followed >= 0);
    int copies = 0, kernels = 0;
    for (const auto& item : w.session()->contexts()[followed].linear) (item.kind == "copy" ? copies : kernels) += 1;
    QCOMPARE(kernels, 1);
    for (int i = 0; i < tour->stops(); ++i) {
      QCOMPARE(tour->step(), i);
      QCOMPARE(tour->stop(i).id, ids[i]);
      if (!tour->stop(i).ask.isEmpty()) {  // asked first: no text yet; a wrong answer keeps asking, the run's reveals
        QVERIFY(!tour->revealed(i));
        QVERIFY(w.findChild<QLabel*>("tour_text")->text().isEmpty());
        QVERIFY(tour->check("7").startsWith("Not quite"));
        QVERIFY(!tour->revealed(i));
        // (the answers by this test's own count: one kernel; the CPU's source is C)
        const QString right = ids[i] == "kernel-graph" ? QString::number(kernels) : QStringLiteral("c");
        QVERIFY(tour->check(right).startsWith("Right"));
        QVERIFY(tour->revealed(i));
      }
      const QString text = tour->text_of(i);
      QCOMPARE(w.findChild<QLabel*>("tour_text")->text(), text);
      QVERIFY2(!text.contains('{') && text.size() > 120, qPrintable(text));
      // the stop's pane is in view: its dock shown and its tab the current one
      if (const QString pane = tour->pane_of(i); !pane.isEmpty()) {
        auto* dock = w.findChild<QDockWidget*>(pane);
        QVERIFY2(dock && dock->isVisible() && dock->widget()->isVisible(), qPrintable(pane));
      }
      const tsv::Selection& sel = w.selection()->current();
      if (i < 2) {
        QCOMPARE(sel.context, followed);
      } else {
        QCOMPARE(sel.call, kernel);
      }
      if (ids[i] == "kernel-graph")
        QVERIFY2(text.contains(QString("split into 1 kernel and %1 %2").arg(copies).arg(copies == 1 ? "copy" : "copies")), qPrintable(text));
      if (ids[i] == "to-program") QCOMPARE(tour->title_of(i), QStringLiteral("6. to_program: lowering E_4"));
      if (ids[i] == "source") QVERIFY2(text.contains("as C source"), qPrintable(text));
      if (ids[i] == "execution") {
        QVERIFY2(text.contains("2 values, the first read at tutorial.py:7"), qPrintable(text));
        QCOMPARE(w.values()->entries(), 2);
      }
      // (tutorial.py has no TinyJit: the stop says so, and keeps the kernel selected)
      if (ids[i] == "jit-replay") QVERIFY2(text.contains("In this run: no TinyJit replay, 0 calls replayed, 0 graph calls."), qPrintable(text));
      tour->next();
    }
    QCOMPARE(tour->step(), 8);  // the last stop stays
    tour->back();
    QCOMPARE(tour->step(), 7);
  }

  // Help > Lessons: every shipped lesson is in the menu; playing one runs its script, then shows its first step; a step
  // that asks shows its question, not its pane or text, until Show answer, which gives the run's answer (counted here
  // from the calls) and raises the step's pane
  void lessons_play_in_the_window() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.set_device("CPU");
    QMenu* lessons = nullptr;
    for (auto* m : w.findChildren<QMenu*>())
      if (m->title() == "Lessons") lessons = m;
    QVERIFY(lessons);
    QCOMPARE(lessons->actions().size(), tsgui::lesson_resources().size());
    QVERIFY(tsgui::lesson_resources().size() >= 7);
    QCOMPARE(lessons->actions()[0]->text(), QStringLiteral("1. Tour of the pipeline"));
    w.show();
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    QVERIFY(w.play_lesson(":/lessons/04-split.md"));
    QVERIFY(done.count() == 1 || done.wait(60000));
    QVERIFY(done.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    tsgui::Tour* tour = w.tour();
    QVERIFY(w.findChild<QDockWidget*>("tour")->isVisible());
    QCOMPARE(tour->step(), 0);
    QCOMPARE(tour->lesson().title, QStringLiteral("The kernel split"));
    QVERIFY(w.editor()->toPlainText().contains("softmax"));
    tour->next();
    QCOMPARE(tour->stop(1).ask, QStringLiteral("How many kernels does softmax along the last axis make?"));
    QVERIFY(w.findChild<QLabel*>("tour_text")->text().isEmpty());
    QVERIFY(w.findChild<QLabel*>("tour_question")->isVisible());
    int kernels = 0;
    for (const auto& c : w.session()->calls()) kernels += c.kind == "kernel";
    QCOMPARE(kernels, 3);
    tour->reveal();
    QVERIFY(tour->revealed(1));
    QCOMPARE(w.findChild<QLabel*>("tour_verdict")->text(), QStringLiteral("The answer: 3."));
    QVERIFY(w.findChild<QLabel*>("tour_text")->text().startsWith("3. A value reduced"));
    QVERIFY(w.findChild<QDockWidget*>("kernel_graph")->isVisible());
    // a missing lesson is an error that says so, and changes nothing
    QString err;
    QVERIFY(!w.play_lesson(":/lessons/none.md", &err));
    QVERIFY2(err.contains("cannot open"), qPrintable(err));
    QCOMPARE(tour->lesson().title, QStringLiteral("The kernel split"));
  }

  // Run > What if: a toggle runs the script again with its codegen variable and shows the new run beside the one
  // before (the matmul's kernel under NOOPT is r_64_64_64, the default opts' r_8_16_2_4_4_16_4); the run before is in
  // the history; toggling it off compares with the NOOPT run; an unknown variable is refused, naming it; the selected
  // kernel without its last opt, then with its own again; the device
  void whatif_toggles_compare_with_the_run_before() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.set_device("CPU");
    w.open_script(source_dir() + "/resources/examples/matmul.py");
    w.show();
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.count() == 1 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    auto kernel_names = [](const tsv::Session& s) {
      QStringList n;
      for (const auto& c : s.calls())
        if (c.kind == "kernel") n << c.name;
      return n;
    };
    QCOMPARE(kernel_names(*w.session()), QStringList{"r_8_16_2_4_4_16_4"});
    QCOMPARE(w.whatif_label(), QStringLiteral("default"));
    QVERIFY(w.set_whatif({{"NOOPT", "1"}}, 0));
    QVERIFY(done.count() == 2 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    QCOMPARE(kernel_names(*w.session()), QStringList{"r_64_64_64"});
    QCOMPARE(kernel_names(*w.compare_session()), QStringList{"r_8_16_2_4_4_16_4"});
    QCOMPARE(w.whatif_label(), QStringLiteral("NOOPT=1"));
    QCOMPARE(w.first_label(), QStringLiteral("CPU · NOOPT=1"));
    QCOMPARE(w.second_label(), QStringLiteral("CPU · default"));
    QCOMPARE(w.whatif_history().size(), 1);
    QCOMPARE(w.whatif_history()[0].first, QStringLiteral("CPU · default"));
    // the same values either way (the Compare dock pairs the outputs)
    QCOMPARE(w.session()->outputs().size(), w.compare_session()->outputs().size());
    QCOMPARE(w.session()->outputs()[0].f, w.compare_session()->outputs()[0].f);
    QVERIFY(w.set_whatif({}, 0));
    QVERIFY(done.count() == 3 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    QCOMPARE(kernel_names(*w.session()), QStringList{"r_8_16_2_4_4_16_4"});
    QCOMPARE(kernel_names(*w.compare_session()), QStringList{"r_64_64_64"});
    QCOMPARE(w.whatif_history().size(), 2);
    QString err;
    QVERIFY(!w.set_whatif_variable("COLOUR=1", &err));
    QVERIFY2(err.contains("COLOUR is no codegen variable"), qPrintable(err));
    // one opt of the selected kernel: without its last opt, the kernel is another (its name says so), its values the same
    QString key, name;
    std::vector<ts::Opt> opts;
    QVERIFY(!w.selected_kernel_opts(&key, &name, &opts) || !key.isEmpty());
    int kernel_call = -1;
    for (int i = 0; i < w.session()->calls().size() && kernel_call < 0; ++i)
      if (w.session()->calls()[i].kind == "kernel") kernel_call = i;
    w.selection()->select_call(kernel_call);
    QVERIFY(w.selected_kernel_opts(&key, &name, &opts));
    QCOMPARE(name, QStringLiteral("r_8_16_2_4_4_16_4"));
    QVERIFY2(opts.size() >= 2, qPrintable(QString::number(opts.size())));
    std::vector<ts::Opt> fewer(opts.begin(), opts.end() - 1);
    QVERIFY(w.set_whatif_kernel_opts(key, fewer));
    QVERIFY(done.count() == 4 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    const QStringList now = kernel_names(*w.session());
    QCOMPARE(now.size(), 1);
    QVERIFY2(now[0] != "r_8_16_2_4_4_16_4" && now[0].startsWith("r_"), qPrintable(now[0]));
    QCOMPARE(kernel_names(*w.compare_session()), QStringList{"r_8_16_2_4_4_16_4"});
    QVERIFY2(w.whatif_label().startsWith("opts of " + key.left(6) + ": "), qPrintable(w.whatif_label()));
    QCOMPARE(w.session()->outputs()[0].f, w.compare_session()->outputs()[0].f);
    // the kernel graph coloured by the ratio of its calls' times to the run before's
    auto* kg_dock = w.findChild<QDockWidget*>("kernel_graph");
    auto* kg = kg_dock ? kg_dock->findChild<tsv::GraphPane*>() : nullptr;
    QVERIFY(kg);
    kg->set_metric(tsv::GraphPane::Metric::Ratio);
    QTRY_VERIFY_WITH_TIMEOUT(!kg->busy(), 20000);
    auto* scale = kg->findChild<QLabel*>("graph_metric_scale");
    QVERIFY2(scale && scale->text().contains("CPU · default"), qPrintable(scale ? scale->text() : QString("no scale")));
    kg->set_metric(tsv::GraphPane::Metric::Call);
    // and back to its own opts
    QVERIFY(w.set_whatif_kernel_opts(key, std::nullopt));
    QVERIFY(done.count() == 5 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    QCOMPARE(kernel_names(*w.session()), QStringList{"r_8_16_2_4_4_16_4"});
    QCOMPARE(w.whatif_label(), QStringLiteral("default"));
    // the device: the same script on the interpreter, beside the CPU's run, the same values
    QVERIFY(!w.set_whatif_variable("DEV=NOPE", &err));
    QVERIFY2(err.contains("NOPE"), qPrintable(err));
    QVERIFY(w.set_whatif_variable("DEV=INTERP", &err));
    QVERIFY(done.count() == 6 || done.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
    QCOMPARE(w.first_label(), QStringLiteral("INTERP · default"));
    QCOMPARE(w.second_label(), QStringLiteral("CPU · default"));
    QCOMPARE(w.session()->outputs()[0].f, w.compare_session()->outputs()[0].f);
  }

  void stop_kills_a_running_script() {
    tsgui::RunController rc;
    rc.set_program(tinyscope_bin());
    QSignalSpy started(&rc, &tsgui::RunController::started);
    QSignalSpy finished(&rc, &tsgui::RunController::finished);
    rc.start("spin.py", "while True: pass\n", "CPU");
    QCOMPARE(started.count(), 1);
    QTest::qWait(500);
    QVERIFY(rc.running());
    rc.stop();
    QVERIFY(finished.count() == 1 || finished.wait(5000));
    QVERIFY(!rc.running());
    QVERIFY(finished.front().at(1).toBool());  // stopped
    QVERIFY(finished.front().at(2).toString().isEmpty());
  }

  void a_crashing_script_leaves_the_window_alive() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.editor()->setPlainText("import os\nos.abort()\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(60000));
    QVERIFY(!done.front().at(0).toBool());
    QVERIFY2(w.console()->toPlainText().contains("crashed"), qPrintable(w.console()->toPlainText()));
    // and the next run works
    w.open_script(source_dir() + "/resources/examples/tutorial.py");
    done.clear();
    w.run();
    QVERIFY(done.wait(60000));
    QVERIFY(done.front().at(0).toBool());
    QVERIFY(w.session()->calls().size() >= 3);
  }

  void dock_layout_and_theme_persist() {
    {
      tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/true);
      auto* dock = w.findChild<QDockWidget*>("timings");
      QVERIFY(dock);
      w.show();
      dock->hide();
      w.set_dark(true);
      w.close();
    }
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/true);
    w.show();
    QVERIFY(w.findChild<QDockWidget*>("timings")->isHidden());
    QVERIFY(qApp->palette().color(QPalette::Window).lightness() < 100);
    w.findChild<QDockWidget*>("timings")->show();
    w.set_dark(false);
    w.close();
    QVERIFY(qApp->palette().color(QPalette::Window).lightness() > 150);
  }

  // the keyboard: Ctrl+R runs, Ctrl+. stops, Ctrl+O opens, Ctrl+S saves the trace (enabled once one is loaded)
  void shortcuts_reach_their_actions() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    auto action = [&](const QKeySequence& k) -> QAction* {
      QAction* found = nullptr;
      for (auto* a : w.findChildren<QAction*>())
        if (a->shortcut() == k) {
          if (found && found != a) return nullptr;  // ambiguous
          found = a;
        }
      return found;
    };
    QAction* run = action(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction* stop = action(QKeySequence(Qt::CTRL | Qt::Key_Period));
    QAction* open = action(QKeySequence(Qt::CTRL | Qt::Key_O));
    QAction* save = action(QKeySequence(Qt::CTRL | Qt::Key_S));
    QVERIFY(run && stop && open && save);
    QVERIFY(run->text().contains("Run"));
    QVERIFY(open->text().contains("Open"));
    QVERIFY(save->text().contains("Save trace"));
    QVERIFY(!save->isEnabled());
    QVERIFY(w.open_trace(fixture()));
    QVERIFY(save->isEnabled());
    for (auto* a : {run, stop, open, save}) QVERIFY(!a->icon().isNull());  // from resources/tinyscope.qrc
  }

  // Help > Keyboard shortcuts lists every action's keys and the panes' own; Help > Legend every colour the panes use;
  // the script pane numbers its lines; View > Larger text scales every pane's text by 1.4 and back
  void help_legend_line_numbers_and_larger_text() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    const QString keys = w.shortcuts_text();
    for (const char* k : {"Ctrl+R", "Ctrl+O", "Ctrl+S", "Ctrl+.", "Space"}) QVERIFY2(keys.contains(k), k);
    QVERIFY(keys.contains("Run") && keys.contains("fit it in its pane"));
    const QString legend = w.legend_text();
    for (const char* op : {"BUFFER", "RESHAPE", "REDUCE", "CONST", "RANGE", "CONTIGUOUS", "ADD"})
      QVERIFY2(legend.contains(tsv::GraphPane::op_color(op).name()), op);
    QVERIFY(legend.contains(tsv::GraphPane::kernel_tint(0).name()) && legend.contains("median of the warm runs"));
    // the Timeline's colours, as its pane draws them, and what Compare's rows and marks mean
    for (auto k : {tsv::TimelineSpan::Kind::Schedule, tsv::TimelineSpan::Kind::Codegen, tsv::TimelineSpan::Kind::Compile,
                   tsv::TimelineSpan::Kind::Kernel, tsv::TimelineSpan::Kind::Copy})
      QVERIFY(legend.contains(tsv::TimelinePane::kind_color(k).name()));
    QVERIFY(legend.contains("first divergence"));
    auto* ed = qobject_cast<tsv::CodeEditor*>(w.editor());
    QVERIFY(ed);
    ed->setPlainText("a\nb\nc");
    const int narrow = ed->line_number_width();
    QVERIFY(narrow > 0);
    ed->setPlainText(QString("x\n").repeated(1200));
    QVERIFY(ed->line_number_width() > narrow);  // four digits
    const double before = ed->font().pointSizeF();
    w.set_large_text(true);
    QCOMPARE(ed->font().pointSizeF(), before * 1.4);
    w.set_large_text(false);
    QCOMPARE(ed->font().pointSizeF(), before);
  }

  // View > Larger text scales every pane's text (tables, the editor, the console, graph labels) and keeps the window's
  // size; off gives every font back exactly
  void larger_text_round_trip_keeps_the_window_size() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.show();
    QTRY_VERIFY(!w.layout_pending());
    QVERIFY(w.open_trace(fixture()));
    const QSize size = w.size();
    auto* table = w.findChild<QDockWidget*>("schedule")->findChild<QTableView*>();
    auto* contexts = w.findChild<QDockWidget*>("contexts")->widget();
    QVERIFY(table && contexts);
    QList<QWidget*> panes{w.editor(), w.console(), table, contexts, w.source_pane()};
    QList<QFont> before;
    for (QWidget* p : panes) before << p->font();
    w.large_text_action()->setChecked(true);
    QTest::qWait(50);
    QCOMPARE(w.size(), size);
    for (int i = 0; i < panes.size(); ++i) QCOMPARE(panes[i]->font().pointSizeF(), before[i].pointSizeF() * tsgui::MainWindow::kLargeText);
    for (auto* g : {w.tensor_graph(), w.kernel_graph(), w.calls_graph()}) QCOMPARE(g->text_scale(), tsgui::MainWindow::kLargeText);
    QCOMPARE(w.menuBar()->font(), QApplication::font(w.menuBar()));  // the window's own text (menus, toolbar) stays
    w.large_text_action()->setChecked(false);
    QTest::qWait(50);
    QCOMPARE(w.size(), size);
    for (int i = 0; i < panes.size(); ++i) QCOMPARE(panes[i]->font(), before[i]);
    for (auto* g : {w.tensor_graph(), w.kernel_graph(), w.calls_graph()}) QCOMPARE(g->text_scale(), 1.0);
  }

  // each visible pane (a tab in front counts, one behind does not) at least 120 px each way, the window within the
  // screen's available area
  static void check_fits(tsgui::MainWindow& w, const QRect& area, const char* when) {
    QVERIFY2(area.contains(w.frameGeometry()), qPrintable(QString("%1: window %2,%3 %4x%5 beyond the screen %6x%7").arg(when)
        .arg(w.frameGeometry().x()).arg(w.frameGeometry().y()).arg(w.frameGeometry().width()).arg(w.frameGeometry().height())
        .arg(area.width()).arg(area.height())));
    for (auto* d : w.findChildren<QDockWidget*>()) {
      if (!d->isVisible() || d->visibleRegion().isEmpty()) continue;
      QVERIFY2(d->height() >= 120 && d->width() >= 120,
               qPrintable(QString("%1: %2 is %3x%4").arg(when, d->objectName()).arg(d->width()).arg(d->height())));
    }
  }

  // the first launch (no saved layout) lays the docks out as --screenshot does; View > Reset layout gives that layout
  // back on either screen and forgets the saved one; no dock shown (Compare, the tour) nor Larger text takes the
  // window beyond the screen
  void first_launch_reset_layout_and_the_screen() {
    QSettings().clear();
    QList<QRect> shot_docks, user_docks;
    {
      tsgui::MainWindow shot(source_dir() + "/resources/examples", /*restore_layout=*/false);
      shot.show();
      QTRY_VERIFY(!shot.layout_pending());
      for (auto* d : shot.findChildren<QDockWidget*>()) shot_docks << d->geometry();
    }
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/true);
    w.show();
    QTRY_VERIFY(!w.layout_pending());
    for (auto* d : w.findChildren<QDockWidget*>()) user_docks << d->geometry();
    QCOMPARE(user_docks, shot_docks);
    QCOMPARE(w.size(), QSize(1600, 1000));
    check_fits(w, w.screen()->availableGeometry(), "first launch at 1600x1000");
    QSettings().setValue("window/state", w.saveState());
    for (QScreen* sc : QGuiApplication::screens()) {
      w.setScreen(sc);
      w.move(sc->geometry().topLeft());
      w.reset_layout();
      QTRY_VERIFY(!w.layout_pending());
      QVERIFY(!QSettings().contains("window/state"));
      const QRect area = sc->availableGeometry();
      QCOMPARE(w.size(), QSize(1600, 1000).boundedTo(area.size()));
      const QByteArray name = sc->name().toLatin1();
      check_fits(w, area, name + " reset");
      w.large_text_action()->setChecked(true);
      QTest::qWait(50);
      check_fits(w, area, name + " larger text");
      w.show_dock(w.findChild<QDockWidget*>("compare"), w.height() * 22 / 100);
      QTest::qWait(50);
      check_fits(w, area, name + " compare");
      w.show_tour(0);
      QTest::qWait(50);
      check_fits(w, area, name + " tour");
      w.large_text_action()->setChecked(false);
      w.findChild<QDockWidget*>("compare")->hide();
    }
    w.close();
  }

  void window_shows_a_script_error_with_its_line() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.editor()->setPlainText("from tinygrad import Tensor\na = Tensor([1.0, 2.0])\n"
                             "b = Tensor([1.0, 2.0, 3.0])\nprint((a + b).tolist())\n");
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(60000));
    QVERIFY(!done.front().at(0).toBool());
    QCOMPARE(w.error_line(), 4);
    QVERIFY2(w.console()->toPlainText().contains("cannot broadcast"), qPrintable(w.console()->toPlainText()));
    QCOMPARE(w.editor()->textCursor().blockNumber(), 3);
    QCOMPARE(w.editor()->extraSelections().size(), 1);
  }

  void window_opens_a_saved_trace() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QVERIFY(w.open_trace(fixture()));
    QCOMPARE(w.session()->calls().size(), 3);
    QCOMPARE(w.selection()->current().call, 2);  // the first kernel call is selected
    // TS_VIEWER_SHOT_DIR=DIR: also save the window with a rewrite pass selected, to look at
    if (qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) {
      w.resize(1600, 1000);
      w.show();
      w.default_layout();
      QTest::qWait(100);
      const auto& passes = w.session()->contexts()[3].passes;
      int busiest = 0;
      for (int i = 0; i < passes.size(); ++i)
        if (passes[i].match_count > passes[busiest].match_count) busiest = i;
      w.selection()->select_pass(3, busiest);
      QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 20000);
      QTest::qWait(200);
      QVERIFY(w.grab().save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/viewer_pass.png"));
    }
    QVERIFY(!w.open_trace(source_dir() + "/no/such.json"));
  }

  // the trace keeps what the script printed (stdout and stderr, in order, the traceback of an error): a reopened trace
  // shows it in the console; a trace from before it was kept loads with a note; the checker refuses a bad console
  void reopened_trace_keeps_the_console() {
    QTemporaryDir dir;
    const QString script = dir.filePath("talk.py");
    QVERIFY(ts_test::write_file(script, "import sys\nfrom tinygrad import Tensor\nprint('hello from the script', (Tensor([1.0, 2.0]) * 2).tolist())\n"
            "print('a warning', file=sys.stderr)\nprint('the end')\n"));
    const QString out = dir.filePath("talk.json");
    const QString why = ts_test::run_to_trace(script, out);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(out, &err), qPrintable(err));
    QCOMPARE(s.console().size(), 3);
    QCOMPARE(s.console()[0], qMakePair(false, QStringLiteral("hello from the script [2.0, 4.0]\n")));
    QCOMPARE(s.console()[1], qMakePair(true, QStringLiteral("a warning\n")));
    QCOMPARE(s.console()[2], qMakePair(false, QStringLiteral("the end\n")));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.console()->setPlainText("what was there before");
    QVERIFY(w.open_trace(out));
    const QString shown = w.console()->toPlainText();
    QVERIFY2(shown.contains("hello from the script [2.0, 4.0]") && shown.contains("a warning") && shown.contains("the end"), qPrintable(shown));
    QVERIFY(!shown.contains("what was there before"));
    QVERIFY(w.open_trace(fixture()));  // an older trace: no console, a note
    QVERIFY(w.console()->toPlainText().contains("keeps no console output"));
    // a bad console is refused whole, naming it
    QJsonObject root = QJsonDocument::fromJson(ts_test::kernel_graph_trace()).object();
    root["console"] = QJsonArray{QJsonObject{{"stream", "stdin"}, {"text", "x"}}};
    QVERIFY(!s.load_data(QJsonDocument(root).toJson(), &err));
    QVERIFY2(err.contains("console"), qPrintable(err));
  }

  // File > Open of a big trace reads it off the UI thread, a busy bar in the status bar at once; the panes show it
  // when it is in
  void a_big_trace_shows_progress_at_once() {
    QTemporaryDir dir;
    QJsonObject root = QJsonDocument::fromJson(ts_test::kernel_graph_trace()).object();
    root["result"] = QString(tsgui::MainWindow::kAsyncTraceBytes + 1000, QLatin1Char('x'));  // a big RESULT
    const QString path = dir.filePath("big.json");
    QVERIFY(ts_test::write_file(path, QJsonDocument(root).toJson(QJsonDocument::Compact)));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.show();
    QVERIFY(w.open_trace(path));
    auto* bar = w.findChild<QProgressBar*>("trace_loading");
    QVERIFY(bar);
    QVERIFY(w.session()->loading());  // (returned at once: the parse goes on on a worker thread)
    QVERIFY(bar->isVisible());
    QVERIFY(bar->format().contains("big.json"));
    QVERIFY(!w.settled());
    QTRY_VERIFY_WITH_TIMEOUT(!w.session()->loading(), 20000);
    QCOMPARE(w.session()->calls().size(), 4);
    QVERIFY(!bar->isVisible());
    QCOMPARE(w.selection()->current().call, 1);  // the first kernel selected, as for any trace opened
  }

  // --select TEXT: the context whose name, as shown (without its colour codes), holds TEXT; the kernel's name "E_4" is
  // stored as E\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m
  void select_finds_a_kernel_by_its_shown_name() {
    // the fixture with a second kernel context after E_4's, named r_8 (in colour), that no call ran
    QFile f(fixture());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    QJsonArray contexts = root["contexts"].toArray();
    QJsonObject second = contexts[3].toObject();
    second["id"] = contexts.size();
    second["name"] = QStringLiteral("r\x1b[90m_\x1b[0m\x1b[97m8\x1b[0m");
    contexts.append(second);
    root["contexts"] = contexts;
    QTemporaryDir dir;
    const QString path = dir.filePath("two_kernels.trace.json");
    QVERIFY(ts_test::write_file(path, QJsonDocument(root).toJson()));
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.set_initial_context(QStringLiteral("r_8"));
    QVERIFY(w.open_trace(path));
    QCOMPARE(w.selection()->current().context, 4);
  }
};

// the offscreen platform given two screens of its own (configfile=): 1600 x 1000 first, then a 1280 x 720 projector,
// so the window's layouts are checked against the screens users have
int main(int argc, char** argv) {
  QTemporaryDir dir;
  const QString config = dir.filePath(QStringLiteral("screens.json"));
  QFile f(config);
  if (!f.open(QIODevice::WriteOnly)) return 1;
  f.write(R"({"windowFrameMargins": false, "screens": [
    {"name": "wide", "x": 0, "y": 0, "width": 1600, "height": 1000, "logicalDpi": 96},
    {"name": "projector", "x": 1600, "y": 0, "width": 1280, "height": 720, "logicalDpi": 96}]})");
  f.close();
  qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
  QApplication app(argc, argv);
  app.setAttribute(Qt::AA_Use96Dpi, true);
  TestViewerWindow t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_viewer_window.moc"
