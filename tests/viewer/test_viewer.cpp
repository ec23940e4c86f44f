// The viewer over a checked-in trace (tests/viewer/data/seed_add.trace.json: tests/corpus/00_seed_add.py run with
// --trace passes) and the window's run controller running the real executable.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <QGraphicsScene>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/ansi.h"
#include "viewer/model/contexts_model.h"
#include "viewer/model/schedule_model.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_pane.h"

namespace {
QString env_or(const char* name, const QString& fallback) {
  QByteArray v = qgetenv(name);
  return v.isEmpty() ? fallback : QString::fromLocal8Bit(v);
}
QString source_dir() { return env_or("TINYSCOPE_SOURCE_DIR", QStringLiteral(TS_SOURCE_DIR)); }
QString tinyscope_bin() { return env_or("TINYSCOPE_BIN", QStringLiteral(TS_BIN)); }
QString fixture() { return source_dir() + "/tests/viewer/data/seed_add.trace.json"; }
}  // namespace

class TestViewer : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tinyscope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_viewer"));
    QSettings().clear();  // a previous run's window state must not leak into this one
  }

  void ansi_is_stripped_and_colored() {
    QString s = QStringLiteral("E\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m");
    QCOMPARE(tsv::strip_ansi(s), QStringLiteral("E_4"));
    auto segs = tsv::parse_ansi(s);
    QCOMPARE(segs.size(), 3);
    QVERIFY(!segs[0].color.isValid());
    QVERIFY(segs[2].color.isValid());
    QVERIFY(tsv::main_ansi_color(s).isValid());
  }

  void session_loads_the_fixture() {
    tsv::Session s;
    QSignalSpy loaded(&s, &tsv::Session::loaded);
    QString err;
    QVERIFY2(s.load(fixture(), &err), qPrintable(err));
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(s.contexts().size(), 4);
    QCOMPARE(s.calls().size(), 3);
    QCOMPARE(s.device(), QStringLiteral("CPU"));
    const auto& k = s.contexts()[3];
    QVERIFY(!k.is_schedule());
    QVERIFY(k.has_program);
    QCOMPARE(k.plain_name, QStringLiteral("E_4"));
    QCOMPARE(k.schedule, 2);
    QCOMPARE(s.kernel_context(k.program.program_key), 3);
    QCOMPARE(s.calls_of(k.program.program_key), QList<int>{2});
    QCOMPARE(s.schedule_context(2), 2);
    QVERIFY(!s.contexts()[2].tensor_graph.isEmpty());
    QVERIFY(s.uop(k.program.ast) != nullptr);
    QVERIFY(k.program.src.contains("E_4"));
  }

  void session_rejects_bad_input() {
    tsv::Session s;
    QVERIFY(s.load(fixture()));
    QString err;
    QVERIFY(!s.load(source_dir() + "/no/such/trace.json", &err));
    QVERIFY(err.contains("cannot open"));
    QVERIFY(!s.load_data("{not json", &err));
    QVERIFY(!s.load_data(R"({"version": 99})", &err));
    QVERIFY2(err.contains("version"), qPrintable(err));
    QCOMPARE(s.calls().size(), 3);  // the old data stays
  }

  void models_pass_the_model_tester() {
    tsv::Session s;
    tsv::ContextsModel contexts(&s);
    tsv::ScheduleModel schedule(&s);
    tsv::TimingsModel timings(&s);
    QAbstractItemModelTester t1(&contexts, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&schedule, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(&timings, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(s.load(fixture()));
    QVERIFY(s.load(fixture()));  // a reload resets every model cleanly
    // tree: 3 schedules on top, the kernel under the third after its passes
    QCOMPARE(contexts.rowCount(), 3);
    QModelIndex sched = contexts.index(2, 0);
    const int passes = s.contexts()[2].passes.size();
    QCOMPARE(contexts.rowCount(sched), passes + 1);
    QModelIndex kernel = contexts.index(passes, 0, sched);
    QCOMPARE(kernel.data(tsv::ContextsModel::kContextRole).toInt(), 3);
    QCOMPARE(contexts.rowCount(kernel), s.contexts()[3].passes.size());
    QCOMPARE(contexts.parent(kernel), sched);
    QCOMPARE(contexts.index_of_context(3), kernel);
    // schedule table: names without ANSI escapes, the colored original under a role
    QCOMPARE(schedule.rowCount(), 3);
    QModelIndex name = schedule.index(2, tsv::ScheduleModel::kName);
    QCOMPARE(name.data().toString(), QStringLiteral("E_4"));
    QVERIFY(name.data(tsv::ScheduleModel::kColoredNameRole).toString().contains('\x1b'));
    QVERIFY(name.data(Qt::ForegroundRole).isValid());
    QCOMPARE(schedule.index(2, tsv::ScheduleModel::kKind).data().toString(), QStringLiteral("kernel"));
    // timings: GFLOP/s = ops / seconds, GB/s = mem / seconds
    const auto& c = s.calls()[2];
    QVERIFY(c.seconds > 0);
    QCOMPARE(timings.gflops(2), c.estimates.ops / c.seconds / 1e9);
    QCOMPARE(timings.gbs(2), c.estimates.mem / c.seconds / 1e9);
    QCOMPARE(timings.index(2, tsv::TimingsModel::kGbs).data(Qt::UserRole).toDouble(), timings.gbs(2));
  }

  void selection_links_calls_and_kernels() {
    tsv::Session s;
    tsv::SelectionModel sel(&s);
    QVERIFY(s.load(fixture()));
    QSignalSpy changed(&sel, &tsv::SelectionModel::changed);
    sel.select_call(2);
    QCOMPARE(sel.current().context, 3);
    QCOMPARE(sel.current().program_key, s.calls()[2].program_key);
    sel.select_call(0);  // a copy selects its schedule
    QCOMPARE(sel.current().context, 0);
    QVERIFY(sel.current().program_key.isEmpty());
    sel.select_context(3);
    QCOMPARE(sel.current().call, 2);
    QCOMPARE(changed.count(), 3);
    sel.select_context(3);  // no change, no signal
    QCOMPARE(changed.count(), 3);
    sel.select_pass(3, 1);  // a pass keeps its context's links
    QCOMPARE(sel.current().pass, 1);
    QCOMPARE(sel.current().call, 2);
    QCOMPARE(changed.count(), 4);
    sel.select_pass(2, 0);  // another context's pass: one signal, fresh links
    QCOMPARE(changed.count(), 5);
    QCOMPARE(sel.current().context, 2);
    QCOMPARE(sel.current().call, -1);
    sel.select_call(2);
    QCOMPARE(sel.current().pass, -1);
  }

  void panes_follow_the_selection() {
    tsv::Session s;
    tsv::SelectionModel sel(&s);
    tsv::ContextsPane contexts(&sel);
    tsv::SchedulePane schedule(&sel);
    tsv::SourcePane source(&sel);
    QVERIFY(s.load(fixture()));
    // a click on the kernel's call row selects the kernel context and shows its source
    schedule.setCurrentIndex(schedule.model()->index(2, 1));
    QCOMPARE(sel.current().context, 3);
    QCOMPARE(contexts.currentIndex().data(tsv::ContextsModel::kContextRole).toInt(), 3);
    QVERIFY(source.text().contains("void E_4"));
    // selecting the kernel context selects its call rows
    contexts.setCurrentIndex(contexts.model()->index(0, 0));
    QCOMPARE(sel.current().context, 0);
    QVERIFY(source.text().isEmpty());
    sel.select_context(3);
    QCoreApplication::processEvents();
    QVERIFY(schedule.selectionModel()->isRowSelected(2, {}));
    QVERIFY(!schedule.selectionModel()->isRowSelected(0, {}));
  }

  void graphs_are_laid_out_by_dot() {
    tsv::Session s;
    QVERIFY(s.load(fixture()));
    auto g = tsv::GraphPane::build_graph(s, s.contexts()[3].program.ast >= 0 ? QList<int>{s.contexts()[3].program.ast}
                                                                          : QList<int>{},
                                         tsv::GraphPane::kMaxNodes);
    QVERIFY(g.nodes.size() > 3);
    QVERIFY(!g.edges.isEmpty());
    auto* engine = tsv::LayoutEngine::instance();
    QSignalSpy done(engine, &tsv::LayoutEngine::finished);
    QByteArray key = engine->request(g);
    QVERIFY(done.wait(20000));
    QCOMPARE(done.front().at(0).toByteArray(), key);
    auto layout = done.front().at(1).value<tsv::GraphLayout>();
    QCOMPARE(layout.nodes.size(), g.nodes.size());
    QCOMPARE(layout.edges.size(), g.edges.size());
    QVERIFY(layout.bounds.width() > 0);
    // the second request is answered from the cache, still asynchronously
    done.clear();
    QCOMPARE(engine->request(g), key);
    QCOMPARE(done.count(), 0);
    QVERIFY(done.wait(5000));
    // a big graph shows a notice instead of a layout
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::KernelAst, &sel);
    QSignalSpy pane_done(&pane, &tsv::GraphPane::layout_done);
    sel.select_context(3);
    QVERIFY(pane.busy() || pane_done.count() > 0);
    QVERIFY(pane_done.count() > 0 || pane_done.wait(20000));
    QVERIFY(pane.scene()->items().size() > g.nodes.size());
    // clicking (selecting) a node selects its uop
    QGraphicsItem* node = nullptr;
    for (auto* it : pane.scene()->items())
      if (it->data(0).isValid()) node = it;
    QVERIFY(node);
    node->setSelected(true);
    QCOMPARE(sel.current().node, node->data(0).toInt());
    QCOMPARE(sel.current().context, 3);
    // a codegen pass shows the AST it produced
    const auto& passes = s.contexts()[3].passes;
    int last = passes.size() - 1;
    pane_done.clear();
    sel.select_pass(3, last);
    QVERIFY(pane_done.count() > 0 || pane_done.wait(20000));
    QVERIFY(pane.scene()->items().size() > 2);
  }

  // A 290-node graph (just under the layout limit): dot runs in its child process while the event loop keeps
  // turning; prints the longest event-loop gap and the UI thread's parse+draw time.
  void big_graph_layout_does_not_stall_the_ui() {
    QJsonObject uops;
    const int n = 290;
    for (int i = 0; i < n; ++i) {
      QJsonArray src;
      if (i >= 2) src = {i - 1, i - 2};  // local edges, as in real tensor graphs
      const char* op = i < 2 ? "BUFFER" : (i % 3 == 0 ? "MUL" : (i % 3 == 1 ? "ADD" : "RESHAPE"));
      uops[QString::number(i)] = QJsonObject{{"op", op}, {"dtype", "dtypes.float"}, {"src", src}, {"arg", "None"},
                                             {"shape", QJsonArray{4}}, {"device", "CPU"}};
    }
    QJsonObject ctx{{"id", 0}, {"kind", "schedule"}, {"name", "big"}, {"passes", QJsonArray{}},
                    {"tensor_graph", QJsonArray{n - 1}}};
    QJsonObject root{{"version", 1}, {"contexts", QJsonArray{ctx}}, {"calls", QJsonArray{}}, {"uops", uops}};
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(QJsonDocument(root).toJson(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::TensorGraph, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    QElapsedTimer clock, tick;
    qint64 worst = 0;
    QTimer probe;
    probe.setInterval(5);
    connect(&probe, &QTimer::timeout, this, [&] { worst = std::max(worst, tick.restart()); });
    clock.start();
    tick.start();
    probe.start();
    sel.select_context(0);
    QCOMPARE(pane.node_count(), n);
    QVERIFY(done.wait(30000));
    probe.stop();
    qInfo("290-node layout: %lld ms in all, longest event-loop gap %lld ms, longest parse+draw %.1f ms",
          static_cast<long long>(clock.elapsed()), static_cast<long long>(worst), tsv::LayoutEngine::max_ui_stall_ms());
    QVERIFY(pane.scene()->items().size() > n);
    QVERIFY2(worst < clock.elapsed(), "the UI thread waited on dot");
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

  void error_line_is_parsed() {
    QString tb = "Traceback (most recent call last):\n  File \"/tmp/x/bad.py\", line 4, in <module>\n"
                 "  File \"/usr/lib/prelude.py\", line 99, in f\n";
    QCOMPARE(tsgui::RunController::error_line(tb, "/tmp/x/bad.py"), 4);
    QCOMPARE(tsgui::RunController::error_line(tb, "/tmp/other.py"), -1);
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
};

QTEST_MAIN(TestViewer)
#include "test_viewer.moc"
