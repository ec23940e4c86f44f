// The viewer over a checked-in trace (tests/viewer/data/seed_add.trace.json: tests/corpus/00_seed_add.py run with
// --trace passes) and the window's run controller running the real executable.
#include <algorithm>
#include <bit>
#include <cmath>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QMap>
#include <QFile>
#include <QFileInfo>
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
#include <climits>
#include "viewer/graph/graph_view.h"
#include "viewer/graph/minimap.h"
#include <QTextBlock>
#include <QProcess>
#include <QSvgRenderer>
#include <QLineEdit>
#include <QLabel>
#include <QAction>
#include <QCheckBox>
#include <QImage>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "app/gui/tour.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/ansi.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/model/rule_counts_model.h"
#include "viewer/model/stepper_model.h"
#include "viewer/model/contexts_model.h"
#include "viewer/model/schedule_model.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/model/uop_text.h"
#include "viewer/panes/values_pane.h"
#include "viewer/panes/code_editor.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_diff.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/stepper_pane.h"
#include <QTabWidget>
#include <QTableView>

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;
QString fixture() { return source_dir() + "/tests/viewer/data/seed_add.trace.json"; }

// A synthetic trace with one 1,500-node tensor graph: 15 kernels of 100 nodes in a chain. Kernel k holds uops
// 100k..100k+99; 100k+99 is its stored result (CONTIGUOUS with arg "k<k>", the last one a SINK), the 99 below
// it cycle ADD, MUL, RESHAPE and read the one below (the first reads the previous kernel's result).
QByteArray chain_of_kernels_trace() {
  QJsonObject uops;
  for (int k = 0; k < 15; ++k)
    for (int j = 0; j < 100; ++j) {
      const int id = k * 100 + j;
      QJsonArray src;
      if (j > 0) src = {id - 1};
      else if (k > 0) src = {id - 1};
      QString op = j == 99 ? (k == 14 ? "SINK" : "CONTIGUOUS") : (j % 3 == 0 ? "ADD" : (j % 3 == 1 ? "MUL" : "RESHAPE"));
      if (k == 0 && j == 0) op = "BUFFER";
      uops[QString::number(id)] = QJsonObject{{"op", op}, {"dtype", "dtypes.float"}, {"src", src},
                                              {"arg", j == 99 ? QString("k%1").arg(k) : QString("None")},
                                              {"shape", QJsonArray{4}}, {"device", "CPU"}};
    }
  QJsonObject ctx{{"id", 0}, {"kind", "schedule"}, {"name", "chain"}, {"passes", QJsonArray{}},
                  {"tensor_graph", QJsonArray{1499}}};
  QJsonObject root{{"version", 1}, {"contexts", QJsonArray{ctx}}, {"calls", QJsonArray{}}, {"uops", uops}};
  return QJsonDocument(root).toJson();
}
// A synthetic trace of one schedule: a copy from PYTHON into buffer 11, E_4 writes 12 from 11, r_4 writes 13 from
// 12 and 11; a Gradient scope; a second schedule's kernel reads 13 (written by the first schedule) and writes 14.
QByteArray kernel_graph_trace() {
  QJsonObject uops;
  auto buffer = [&](int id, const QString& dev, int n) {
    uops[QString::number(id)] = QJsonObject{{"op", "BUFFER"}, {"dtype", "dtypes.float"}, {"src", QJsonArray{}},
                                            {"arg", QString("ParamArg(%1, device='%2')").arg(id).arg(dev)},
                                            {"shape", QJsonArray{n}}, {"device", dev}};
  };
  buffer(10, "PYTHON", 4), buffer(11, "CPU", 4), buffer(12, "CPU", 4), buffer(13, "CPU", 1), buffer(14, "CPU", 1);
  auto item = [](const QString& kind, QJsonArray bufs) { return QJsonObject{{"kind", kind}, {"bufs", bufs}}; };
  QJsonObject s0{{"id", 0}, {"kind", "schedule"}, {"name", "Schedule 2 Kernels"}, {"passes", QJsonArray{}},
                 {"linear", QJsonArray{item("copy", {11, 10}), item("kernel", {12, 11}), item("kernel", {13, 12, 11})}}};
  QJsonObject s1{{"id", 1}, {"kind", "schedule"}, {"name", "Schedule 1 Kernel"}, {"passes", QJsonArray{}},
                 {"linear", QJsonArray{item("kernel", {14, 13})}}};
  auto call = [](const QString& kind, const QString& colored, const QString& key, int counter, int sched) {
    return QJsonObject{{"kind", kind}, {"name", tsv::strip_ansi(colored)}, {"colored_name", colored}, {"device", "CPU"},
                       {"counter", counter}, {"num_args", 2}, {"arg_sizes", QJsonArray{QJsonArray{4, "float"}, QJsonArray{4, "float"}}},
                       {"global_size", QJsonArray{1, 1, 1}}, {"applied_opts", QJsonArray{}}, {"first_run", true},
                       {"program_key", key}, {"seconds", 1e-6}, {"estimates", QJsonObject{{"ops", 0}, {"lds", 0}, {"mem", 0}}},
                       {"schedule_index", sched}};
  };
  QJsonArray calls{call("copy", "copy 16 B, CPU <- PYTHON", "", 1, 0), call("kernel", "E\x1b[90m_\x1b[0m\x1b[33m4\x1b[0m", "ka", 2, 0),
                   call("kernel", "r\x1b[90m_\x1b[0m\x1b[35m4\x1b[0m", "kb", 3, 0), call("kernel", "r_1", "kc", 4, 1)};
  // a scope the script opened (a Gradient one) is a schedule-kind context that ran nothing
  QJsonObject grad{{"id", 2}, {"kind", "schedule"}, {"name", "Gradient"}, {"passes", QJsonArray{}}};
  QJsonObject root{{"version", 1}, {"contexts", QJsonArray{s0, grad, s1}}, {"calls", calls}, {"uops", uops}};
  return QJsonDocument(root).toJson();
}

// the kernel graph trace with one read-back value (an output) of this dtype, shape and values
QByteArray trace_with_output(const QString& dtype, int bits, const QList<qint64>& shape, const QList<double>& values) {
  QJsonDocument d = QJsonDocument::fromJson(kernel_graph_trace());
  QJsonObject root = d.object();
  QByteArray bytes;
  for (double v : values) {
    quint64 w = dtype == "float" ? std::bit_cast<quint64>(v) : quint64(qint64(v));
    for (int b = 0; b < 8; ++b) bytes.append(char(w >> (8 * b) & 0xff));
  }
  QJsonArray dims;
  for (qint64 x : shape) dims.append(x);
  root["outputs"] = QJsonArray{QJsonObject{{"where", "t.py:3"}, {"after_call", 2}, {"dtype", dtype}, {"bits", bits},
                                           {"shape", dims}, {"count", values.size()}, {"stored", values.size()},
                                           {"values", QString::fromLatin1(bytes.toBase64())}}};
  return QJsonDocument(root).toJson();
}
}  // namespace

class TestViewer : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString softmax_;  // resources/examples/softmax.py's trace at --trace matches, recorded once

  // `tinyscope run SCRIPT --json JSON --trace matches`; the trace's path, or "" with the failure logged
  QString record_matches(const QString& script, const QString& name) {
    const QString out = dir_.filePath(name);
    QProcess p;
    p.start(tinyscope_bin(), {"run", script, "--json", out, "--trace", "matches"});
    if (!p.waitForFinished(90000) || p.exitCode() != 0) {
      qWarning("%s: %s", qPrintable(script), p.readAllStandardError().constData());
      return {};
    }
    return out;
  }
  QString softmax_trace() {
    if (softmax_.isEmpty()) softmax_ = record_matches(source_dir() + "/resources/examples/softmax.py", "softmax.json");
    return softmax_;
  }
  // the (context, pass) with the most recorded matches, kernel contexts first (the biggest codegen pass)
  static QPair<int, int> biggest_pass(const tsv::Session& s, bool kernels_only) {
    QPair<int, int> best{-1, -1};
    qsizetype most = 0;
    for (int c = 0; c < s.contexts().size(); ++c)
      for (int p = 0; p < s.contexts()[c].passes.size(); ++p)
        if ((!kernels_only || !s.contexts()[c].is_schedule()) && s.contexts()[c].passes[p].matches.size() > most)
          most = s.contexts()[c].passes[p].matches.size(), best = {c, p};
    return best;
  }

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

  // the window reads a run's trace off the UI thread: the same data as a plain load, only the newest load counts
  void session_loads_asynchronously() {
    tsv::Session sync, s;
    QVERIFY(sync.load(fixture()));
    QSignalSpy finished(&s, &tsv::Session::load_finished);
    QSignalSpy loaded(&s, &tsv::Session::loaded);
    s.load_async(source_dir() + "/no/such/trace.json");
    s.load_async(fixture());  // supersedes the first
    QVERIFY(s.loading());
    QCOMPARE(s.calls().size(), 0);
    QVERIFY(finished.wait(10000));
    QTest::qWait(100);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(loaded.count(), 1);
    QVERIFY(finished.front().at(0).toBool());
    QVERIFY(!s.loading());
    QVERIFY(s.contexts() == sync.contexts());
    QVERIFY(s.calls() == sync.calls());
    QVERIFY(s.uops() == sync.uops());
    QCOMPARE(s.raw(), sync.raw());
    finished.clear();
    s.load_async(source_dir() + "/no/such/trace.json");
    QVERIFY(finished.wait(10000));
    QVERIFY(!finished.front().at(0).toBool());
    QVERIFY(finished.front().at(1).toString().contains("cannot open"));
    QCOMPARE(s.calls().size(), 3);  // the old data stays
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
    // timings: a call that ran once has its one run as the time; GFLOP/s = ops / seconds, GB/s = mem / seconds
    const auto& c = s.calls()[2];
    QVERIFY(c.seconds > 0);
    QVERIFY(!timings.headline_is_warm(2));
    QCOMPARE(timings.headline(2), c.seconds);
    QCOMPARE(timings.gflops(2), c.estimates.ops / c.seconds / 1e9);
    QCOMPARE(timings.gbs(2), c.estimates.mem / c.seconds / 1e9);
    QCOMPARE(timings.index(2, tsv::TimingsModel::kGbs).data(Qt::UserRole).toDouble(), timings.gbs(2));
  }

  // `run --repeat N` times every kernel N times; the timings model reports their spread (copies run once)
  void repeated_runs_give_the_spread() {
    QTemporaryDir dir;
    const QString out = dir.filePath("repeat.json");
    QProcess p;
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/tutorial.py", "--json", out, "--repeat", "4"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QVERIFY(p.readAllStandardOutput().contains("[11.0, 22.0, 33.0, 44.0]"));  // repeats change no result
    tsv::Session s;
    QVERIFY(s.load(out));
    tsv::TimingsModel timings(&s);
    QAbstractItemModelTester t(&timings, QAbstractItemModelTester::FailureReportingMode::QtTest);
    int kernels = 0;
    for (int r = 0; r < s.calls().size(); ++r) {
      const auto& c = s.calls()[r];
      const auto sp = timings.spread(r);
      if (c.kind == "copy") {
        QCOMPARE(sp.n, 0);
        QVERIFY(!timings.index(r, tsv::TimingsModel::kSpread).data(Qt::UserRole).isValid());
        continue;
      }
      ++kernels;
      QCOMPARE(c.times.size(), 4);
      QCOMPARE(c.times.first(), c.seconds);  // the first run, as DEBUG=2 prints it
      QCOMPARE(sp.n, 3);  // the warm runs: the first pays one-off costs
      QVERIFY(sp.min <= sp.median && sp.median <= sp.max);
      QCOMPARE(sp.min, *std::min_element(c.times.begin() + 1, c.times.end()));
      QCOMPARE(sp.max, *std::max_element(c.times.begin() + 1, c.times.end()));
      QList<double> warm = c.times.mid(1);
      std::sort(warm.begin(), warm.end());
      QCOMPARE(sp.median, warm[1]);
      // the headline is the warm median (the bar, GFLOP/s, GB/s), the first run beside it
      QVERIFY(timings.headline_is_warm(r));
      QCOMPARE(timings.headline(r), warm[1]);
      QCOMPARE(timings.index(r, tsv::TimingsModel::kTime).data(Qt::UserRole).toDouble(), warm[1]);
      QCOMPARE(timings.index(r, tsv::TimingsModel::kFirst).data(Qt::UserRole).toDouble(), c.seconds);
      QCOMPARE(timings.gbs(r), c.estimates.mem / warm[1] / 1e9);
      QVERIFY(timings.index(r, tsv::TimingsModel::kTime).data(Qt::ToolTipRole).toString().contains("the median of the 3 warm runs after the first"));
      QCOMPARE(timings.index(r, tsv::TimingsModel::kSpread).data(Qt::UserRole).toDouble(), (sp.max - sp.min) / sp.median);
      QVERIFY(timings.index(r, tsv::TimingsModel::kSpread).data().toString().contains("3 warm runs"));
    }
    QCOMPARE(kernels, 2);  // the tutorial's E_4 runs twice
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

  // The kernel graph: a node per call of the selected schedule, an edge from the call that last wrote a buffer to
  // each later reader (labelled with its elements and dtype), buffers read before the schedule wrote them as nodes
  // of their own (named by the earlier schedule's call that wrote them); clicking a call's node selects the call,
  // selecting a call outlines its node and draws its own schedule's graph.
  void kernel_graph_draws_calls_and_buffers() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(kernel_graph_trace(), &err), qPrintable(err));
    QCOMPARE(s.calls_of_schedule(0), (QList<int>{0, 1, 2}));
    QCOMPARE(s.calls_of_schedule(1), QList<int>{});  // the Gradient scope
    QCOMPARE(s.calls_of_schedule(2), (QList<int>{3}));
    QCOMPARE(s.schedule_context(1), 2);
    QList<int> calls;
    tsv::GraphInput g = tsv::GraphPane::build_kernel_graph(s, 0, &calls);
    QCOMPARE(calls, (QList<int>{0, 1, 2}));
    QMap<int, QString> label;
    for (const auto& n : g.nodes) label.insert(n.id, n.label);
    const int py = tsv::GraphPane::kBufferNode;
    QCOMPARE(label, (QMap<int, QString>{{0, "copy 16 B, CPU <- PYTHON\ncopy #1"}, {1, "E_4\nkernel #2"}, {2, "r_4\nkernel #3"},
                                        {py, "buffer 4×float"}}));  // three calls and the PYTHON buffer
    QMap<QPair<int, int>, QString> edges;
    for (int i = 0; i < g.edges.size(); ++i) edges.insert(g.edges[i], g.edge_labels.value(i));
    const QMap<QPair<int, int>, QString> want{{{py, 0}, ""}, {{0, 1}, "4×float"}, {{1, 2}, "4×float"}, {{0, 2}, "4×float"}};
    QCOMPARE(edges, want);
    QCOMPARE(g.edges.size(), 4);
    // the second schedule reads buffer 13, which r_4 (call 3) of the first wrote
    tsv::GraphInput g1 = tsv::GraphPane::build_kernel_graph(s, 2);
    QCOMPARE(g1.nodes.size(), 2);
    QCOMPARE(g1.nodes[1].id, py);
    QCOMPARE(g1.nodes[1].label, QStringLiteral("buffer 1×float\nfrom r_4"));
    QCOMPARE(g1.edges, (QList<QPair<int, int>>{{py, 0}}));
    // the pane: selecting a call draws its schedule, outlines its node; clicking another node selects that call
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::KernelGraph, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    sel.select_call(1);
    QVERIFY(done.count() > 0 || done.wait(20000));
    QGraphicsItem* e4 = nullptr;
    QGraphicsItem* r4 = nullptr;
    int labels = 0;
    for (auto* it : pane.scene()->items()) {
      if (it->data(0).isValid() && it->data(0).toInt() == 1) e4 = it;
      if (it->data(0).isValid() && it->data(0).toInt() == 2) r4 = it;
      if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(it); t && !t->parentItem() && t->text() == QStringLiteral("4×float")) ++labels;
    }
    QVERIFY(e4 && r4);
    QCOMPARE(labels, 3);
    QCOMPARE(static_cast<QAbstractGraphicsShapeItem*>(e4)->pen().color(), QColor(0xe0, 0x20, 0x20));
    r4->setSelected(true);
    QCOMPARE(sel.current().call, 2);
    QCOMPARE(sel.current().program_key, QStringLiteral("kb"));
    QCOMPARE(static_cast<QAbstractGraphicsShapeItem*>(r4)->pen().color(), QColor(0xe0, 0x20, 0x20));
    done.clear();
    sel.select_call(3);
    QVERIFY(done.count() > 0 || done.wait(20000));
    QCOMPARE(pane.shown_node_count(), 2);
  }

  // The tensor graph shows the kernel split the engine recorded: softmax is a max reduce, a sum of exps and the
  // normalising elementwise kernel (the reference's r_3_4, r_3_4, E_3_4). Each call's members are the tensor nodes it
  // computes: the max REDUCE only in the first kernel, the EXP2 recomputed in the second and third; every node is
  // tinted by the first call computing it, a kernel's stored node outlined, and selecting a call lights its nodes.
  void tensor_graph_shows_the_kernel_split() {
    QTemporaryDir dir;
    const QString out = dir.filePath("softmax.json");
    QProcess p;
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/softmax.py", "--json", out});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    tsv::Session s;
    QVERIFY(s.load(out));
    int sc = -1;
    for (int c = 0; c < s.contexts().size(); ++c)
      if (s.contexts()[c].linear.size() == 4) sc = c;
    QVERIFY(sc >= 0);
    const auto& items = s.contexts()[sc].linear;
    QCOMPARE(items[0].kind, QStringLiteral("copy"));
    auto op_of = [&](int id) { return s.uop(id) ? s.uop(id)->op : QString(); };
    auto members_with = [&](int item, const QString& op) {
      QList<int> out;
      for (int m : items[item].members)
        if (op_of(m) == op) out << m;
      return out;
    };
    for (int i = 0; i < 4; ++i) {
      QVERIFY(items[i].computes >= 0);
      QCOMPARE(items[i].members.value(0), items[i].computes);
    }
    QCOMPARE(op_of(items[1].computes), QStringLiteral("REDUCE"));
    QVERIFY(s.uop(items[1].computes)->arg.contains("MAX"));
    QCOMPARE(op_of(items[2].computes), QStringLiteral("REDUCE"));
    QVERIFY(s.uop(items[2].computes)->arg.contains("ADD"));
    QCOMPARE(op_of(items[3].computes), QStringLiteral("CONTIGUOUS"));
    QVERIFY(members_with(1, "EXP2").isEmpty());
    QCOMPARE(members_with(2, "EXP2").size(), 1);
    QCOMPARE(members_with(3, "EXP2"), members_with(2, "EXP2"));  // recomputed by the last kernel
    QVERIFY(!items[3].members.contains(items[1].computes));      // it reads the max from its buffer
    QVERIFY(members_with(3, "RECIPROCAL").size() == 1 && members_with(2, "RECIPROCAL").isEmpty());
    const int exp2 = members_with(2, "EXP2").front(), max = items[1].computes;
    // the pane
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::TensorGraph, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    const QList<int> calls = s.calls_of_schedule(sc);
    QCOMPARE(calls.size(), 4);
    sel.select_call(calls[1]);
    QVERIFY(done.count() > 0 || done.wait(20000));
    auto box = [&](int id) -> QAbstractGraphicsShapeItem* {
      for (auto* it : pane.scene()->items())
        if (it->data(0).isValid() && it->data(0).toInt() == id) return static_cast<QAbstractGraphicsShapeItem*>(it);
      return nullptr;
    };
    QVERIFY(box(max) && box(exp2));
    QCOMPARE(box(max)->brush().color(), tsv::GraphPane::kernel_tint(1));
    QCOMPARE(box(exp2)->brush().color(), tsv::GraphPane::kernel_tint(2));
    const QColor lit(0x10, 0x50, 0xe0);
    QCOMPARE(box(max)->pen().color(), lit);
    QVERIFY(box(exp2)->pen().color() != lit);
    QVERIFY(box(max)->toolTip().contains("computed by r_3_4 (#2)"));
    sel.select_call(calls[3]);
    QCOMPARE(box(exp2)->pen().color(), lit);
    QVERIFY(box(max)->pen().color() != lit);
    QCOMPARE(box(items[3].computes)->pen().color(), lit);
    sel.select_call(calls[0]);
    QCOMPARE(box(items[3].computes)->pen().widthF(), 2.2);  // a kernel's output, outlined
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

  // File > Export: the shown graph as SVG (parses), PNG (loads, holds the node colors) and DOT (Graphviz input)
  void graphs_export_as_svg_png_dot() {
    tsv::Session s;
    QVERIFY(s.load(fixture()));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::KernelAst, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    QVERIFY(!pane.has_graph());
    QTemporaryDir dir;
    QString err;
    QVERIFY(!pane.export_file(dir.filePath("none.svg"), &err));
    sel.select_context(3);
    QVERIFY(done.count() > 0 || done.wait(20000));
    QVERIFY(pane.has_graph());
    const int ast = s.contexts()[3].program.ast;
    auto g = tsv::GraphPane::build_graph(s, {ast}, 1000);

    const QString svg = dir.filePath("g.svg");
    QVERIFY2(pane.export_file(svg, &err), qPrintable(err));
    QSvgRenderer r(svg);
    QVERIFY(r.isValid());
    QVERIFY(r.defaultSize().width() > 50 && r.defaultSize().height() > 50);
    QFile sf(svg);
    QVERIFY(sf.open(QIODevice::ReadOnly));
    const QByteArray svg_text = sf.readAll();
    QVERIFY(svg_text.contains("STORE"));  // node labels are text

    const QString png = dir.filePath("g.png");
    QVERIFY2(pane.export_file(png, &err), qPrintable(err));
    QImage img(png);
    QVERIFY(!img.isNull());
    QCOMPARE(img.width(), qRound(pane.scene()->sceneRect().width() * 2));
    // the fill color of the STORE node is somewhere in the picture
    const QRgb store = tsv::GraphPane::op_color("STORE").rgb();
    bool found = false;
    for (int y = 0; y < img.height() && !found; ++y)
      for (int x = 0; x < img.width() && !found; ++x) found = (img.pixel(x, y) & 0xffffff) == (store & 0xffffff);
    QVERIFY(found);

    const QString dot = dir.filePath("g.dot");
    QVERIFY2(pane.export_file(dot, &err), qPrintable(err));
    QFile df(dot);
    QVERIFY(df.open(QIODevice::ReadOnly));
    const QByteArray dot_text = df.readAll();
    QVERIFY(dot_text.startsWith("digraph"));
    QCOMPARE(dot_text.count("->"), g.edges.size());
    QVERIFY(dot_text.contains("n" + QByteArray::number(ast) + "\" [label="));
    QVERIFY(!pane.export_file(dir.filePath("g.bmp"), &err));
    QVERIFY(err.contains("svg"));
  }

  // File > Save trace writes the session's trace; opening it gives the same models
  void saved_trace_reopens_with_equal_models() {
    QTemporaryDir dir;
    const QString path = dir.filePath("saved.trace.json");
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QVERIFY(!w.save_trace(path));  // nothing loaded yet
    QVERIFY(w.open_trace(fixture()));
    QVERIFY(w.save_trace(path));
    tsgui::MainWindow w2(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QVERIFY(w2.open_trace(path));
    const tsv::Session& a = *w.session();
    const tsv::Session& b = *w2.session();
    QVERIFY(a.contexts() == b.contexts());
    QVERIFY(a.calls() == b.calls());
    QVERIFY(a.uops() == b.uops());
    QCOMPARE(a.device(), b.device());
    QCOMPARE(a.result(), b.result());
    tsv::ScheduleModel ma(const_cast<tsv::Session*>(&a)), mb(const_cast<tsv::Session*>(&b));
    QCOMPARE(ma.rowCount(), 3);
    QCOMPARE(mb.rowCount(), ma.rowCount());
    for (int r = 0; r < ma.rowCount(); ++r)
      for (int c = 0; c < ma.columnCount(); ++c) QCOMPARE(mb.index(r, c).data(), ma.index(r, c).data());
    QCOMPARE(w2.selection()->current().call, w.selection()->current().call);
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

  // Graphs over 1,000 nodes open collapsed to one node per kernel cluster and expand on demand
  void big_graphs_open_collapsed_and_expand() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(chain_of_kernels_trace(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::TensorGraph, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    auto* engine = tsv::LayoutEngine::instance();
    sel.select_context(0);
    QCOMPARE(pane.node_count(), 1500);
    QVERIFY(pane.collapsed());
    QCOMPARE(pane.shown_node_count(), 15);
    const auto& c = pane.clustering();
    QCOMPARE(c.heads.size(), 15);
    for (int k = 0; k < 15; ++k) {
      QCOMPARE(c.members[k].size(), 100);
      // cluster k (breadth first from the SINK) is kernel 14-k: its head is 100(14-k)+99
      QCOMPARE(c.heads[k], 100 * (14 - k) + 99);
      for (int id : c.members[k]) QCOMPARE(id / 100, 14 - k);
    }
    QVERIFY(done.wait(30000));
    auto node_items = [&] {
      int n = 0;
      for (auto* it : pane.scene()->items()) n += it->data(0).isValid();
      return n;
    };
    QCOMPARE(node_items(), 15);
    // 14 edges between the 15 clusters
    QCOMPARE(tsv::GraphPane::collapse(s, tsv::GraphPane::build_graph(s, {1499}, 5000), c, {}).edges.size(), 14);

    pane.expand_cluster(3);
    QCOMPARE(pane.shown_node_count(), 14 + 100);
    QVERIFY(done.wait(30000));
    QCOMPARE(node_items(), 114);
    emit pane.view()->node_activated(-1 - 5);  // a double-click on cluster 5
    QCOMPARE(pane.shown_node_count(), 13 + 200);
    QVERIFY(done.wait(30000));
    QCOMPARE(node_items(), 213);
    emit pane.view()->node_activated(100 * (14 - 5) + 40);  // a double-click on one of its nodes collapses it
    QCOMPARE(pane.shown_node_count(), 114);

    // search: MUL is j % 3 == 1 for j < 99, 33 per kernel: 33 in the expanded kernel, 14 matching clusters
    QCOMPARE(pane.search("mul").size(), 33 + 14);
    QCOMPARE(pane.search("k7").size(), 1);  // the CONTIGUOUS head of kernel 7 (cluster 7, collapsed)
    QCOMPARE(pane.search("k7").front(), -1 - 7);
    QVERIFY(pane.search("nothing-like-this").isEmpty());
    QCOMPARE(pane.next_match(), INT_MIN);

    // the collapsed layout comes back from the cache
    done.clear();
    const int started = engine->layouts_started(), hits = engine->cache_hits();
    pane.collapse_all();
    QCOMPARE(pane.shown_node_count(), 15);
    QVERIFY(done.wait(5000));
    QCOMPARE(engine->layouts_started(), started);
    QCOMPARE(engine->cache_hits(), hits + 1);
  }

  // With the split recorded, a big graph collapses by call: the chain's kernels 0-13 are calls E_k whose members are
  // their 100 nodes (kernel 0's less its BUFFER), each cluster named by its call and filled with its colour; the rest
  // (the input BUFFER, kernel 14 under the SINK, which no call computes) clusters as the op heuristic has it
  void big_graphs_collapse_by_call() {
    QJsonDocument doc = QJsonDocument::fromJson(chain_of_kernels_trace());
    QJsonObject root = doc.object();
    QJsonArray linear, calls;
    for (int k = 0; k < 14; ++k) {
      QJsonArray members{100 * k + 99};
      for (int j = k == 0 ? 1 : 0; j < 99; ++j) members.push_back(100 * k + j);
      linear.push_back(QJsonObject{{"kind", "kernel"}, {"bufs", QJsonArray{0}}, {"computes", 100 * k + 99}, {"members", members}});
      calls.push_back(QJsonObject{{"kind", "kernel"}, {"name", QString("E_%1").arg(k)}, {"colored_name", QString("E_%1").arg(k)},
                                  {"device", "CPU"}, {"counter", k + 1}, {"num_args", 1}, {"arg_sizes", QJsonArray{QJsonArray{4, "float"}}},
                                  {"global_size", QJsonArray{1, 1, 1}}, {"applied_opts", QJsonArray{}}, {"first_run", true},
                                  {"program_key", QString("k%1").arg(k)}, {"estimates", QJsonObject{{"ops", 0}, {"lds", 0}, {"mem", 0}}},
                                  {"schedule_index", 0}});
    }
    QJsonArray ctxs = root["contexts"].toArray();
    QJsonObject ctx = ctxs[0].toObject();
    ctx["linear"] = linear;
    ctxs[0] = ctx;
    root["contexts"] = ctxs;
    root["calls"] = calls;
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(QJsonDocument(root).toJson(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::TensorGraph, &sel);
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    sel.select_context(0);
    QVERIFY(pane.collapsed());
    const auto& c = pane.clustering();
    QCOMPARE(c.heads.size(), 16);
    for (int k = 0; k < 14; ++k) {
      QCOMPARE(c.labels[k], QStringLiteral("E_%1 #%2").arg(k).arg(k + 1));
      QCOMPARE(c.heads[k], 100 * k + 99);  // the node it stores
      QCOMPARE(c.members[k].size(), k == 0 ? 99 : 100);
      for (int id : c.members[k]) QCOMPARE(id / 100, k);
    }
    QVERIFY(c.labels[14].isEmpty() && c.labels[15].isEmpty());
    QCOMPARE(c.members[c.of.value(0)], QList<int>{0});  // the input buffer
    QCOMPARE(c.members[c.of.value(1499)].size(), 100);  // kernel 14, under the SINK
    QVERIFY(done.wait(30000));
    bool named = false;
    for (auto* it : pane.scene()->items())
      if (it->data(0).isValid() && it->data(0).toInt() == -1 - 3) {
        named = it->toolTip().contains("E_3 #4");
        QCOMPARE(static_cast<QAbstractGraphicsShapeItem*>(it)->brush().color(), tsv::GraphPane::kernel_tint(3));
      }
    QVERIFY(named);
    // opening a cluster keeps the zoom and centres the view on it (no refit)
    pane.resize(600, 400);
    pane.view()->setTransform(QTransform::fromScale(1.7, 1.7));
    pane.expand_cluster(3);
    QVERIFY(done.wait(30000));
    QCOMPARE(pane.view()->transform().m11(), 1.7);
    QGraphicsItem* head = nullptr;
    for (auto* it : pane.scene()->items())
      if (it->data(0).isValid() && it->data(0).toInt() == 399) head = it;
    QVERIFY(head);
    const QPoint at = pane.view()->mapFromScene(head->sceneBoundingRect().center());
    QVERIFY2(pane.view()->viewport()->rect().contains(at), qPrintable(QString("%1,%2").arg(at.x()).arg(at.y())));
  }

  // the search field highlights nodes by op; Enter cycles through them and centres each; the minimap moves the view
  void graph_search_cycles_and_minimap_moves() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(chain_of_kernels_trace(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::TensorGraph, &sel);
    pane.resize(500, 400);
    pane.show();
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    sel.select_context(0);
    QVERIFY(done.count() > 0 || done.wait(30000));
    // a double-click on a cluster opens it: cluster 0 is the SINK's kernel, uops 1400..1499
    QGraphicsItem* cluster = nullptr;
    for (auto* it : pane.scene()->items())
      if (it->data(0).isValid() && it->data(0).toInt() == -1) cluster = it;
    QVERIFY(cluster);
    const QPoint at = pane.view()->mapFromScene(cluster->sceneBoundingRect().center());
    QTest::mouseDClick(pane.view()->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(pane.shown_node_count(), 14 + 100);
    QVERIFY(done.wait(30000));
    // typed into the field: the CONTIGUOUS nodes are heads of collapsed clusters, RESHAPE nodes of the open one
    QTest::keyClicks(pane.search_field(), "reshape");
    QCOMPARE(pane.matches().size(), 33 + 14);
    QList<int> seen;
    for (int i = 0; i < pane.matches().size(); ++i) {
      QTest::keyClick(pane.search_field(), Qt::Key_Return);
      QCoreApplication::processEvents();
      seen.push_back(pane.matches().indexOf(pane.matches().at(i)));
      // the current match is inside the visible area
      QGraphicsItem* item = nullptr;
      for (auto* it : pane.scene()->items())
        if (it->data(0).isValid() && it->data(0).toInt() == pane.matches().at(i)) item = it;
      QVERIFY(item);
      const QRectF visible = pane.view()->mapToScene(pane.view()->viewport()->rect()).boundingRect();
      QVERIFY2(visible.contains(item->sceneBoundingRect().center()), qPrintable(QString::number(i)));
    }
    QCOMPARE(pane.next_match(), pane.matches().front());  // wraps around
    // the minimap: a click near the top of the overview brings the top of the graph (the first kernels) into view;
    // the current match (next to the SINK, drawn last) is at the bottom
    QVERIFY(pane.minimap()->isVisible());
    const QRectF scene = pane.scene()->sceneRect();
    const QPointF target(scene.center().x(), scene.top() + 40);
    QVERIFY(!pane.view()->mapToScene(pane.view()->viewport()->rect()).boundingRect().contains(target) ||
            pane.view()->transform().m11() < 0.2);
    QTest::mouseClick(pane.minimap()->viewport(), Qt::LeftButton, {}, pane.minimap()->mapFromScene(target));
    QVERIFY(pane.view()->mapToScene(pane.view()->viewport()->rect()).boundingRect().contains(target));
    QVERIFY(pane.minimap()->visible_area().contains(target));
    // F fits the whole graph; then there is nothing to navigate and the map hides
    pane.view()->setFocus();
    QTest::keyClick(pane.view(), Qt::Key_F);
    QVERIFY(pane.view()->mapToScene(pane.view()->viewport()->rect()).boundingRect().adjusted(-3, -3, 3, 3).contains(
        pane.scene()->itemsBoundingRect()));
    QVERIFY(!pane.minimap()->isVisible());
  }

  // dot runs under a timeout and can be cancelled; equal graphs are answered from the cache
  void layout_engine_times_out_cancels_and_caches() {
    tsv::Session s;
    QVERIFY(s.load_data(chain_of_kernels_trace()));
    auto* engine = tsv::LayoutEngine::instance();
    auto g = tsv::GraphPane::build_graph(s, {1499}, 5000);
    g.nodes.resize(1200);  // a graph nobody laid out before (edges to dropped nodes are fine for dot)
    QSignalSpy finished(engine, &tsv::LayoutEngine::finished);
    QSignalSpy failed(engine, &tsv::LayoutEngine::failed);
    QSignalSpy idle(engine, &tsv::LayoutEngine::idle);
    // cancel: no answer, nothing pending
    const int started = engine->layouts_started();
    QByteArray key = engine->request(g);
    QCOMPARE(engine->layouts_started(), started + 1);
    QCOMPARE(engine->pending(), 1);
    engine->cancel(key);
    QCOMPARE(engine->pending(), 0);
    QCOMPARE(idle.count(), 1);
    QTest::qWait(300);
    QCOMPARE(finished.count(), 0);
    QCOMPARE(failed.count(), 0);
    QVERIFY(!engine->cached(key));
    // timeout: dot is killed and the request fails
    engine->set_timeout_ms(1);
    QCOMPARE(engine->request(g), key);
    QVERIFY(failed.wait(10000));
    engine->set_timeout_ms(20000);
    QCOMPARE(failed.front().at(0).toByteArray(), key);
    QVERIFY2(failed.front().at(1).toString().contains("timeout"), qPrintable(failed.front().at(1).toString()));
    // two requests for one running layout start one dot; the second asks the cache
    auto small = tsv::GraphPane::build_graph(s, {250}, 5000);
    const int before = engine->layouts_started(), hits = engine->cache_hits();
    QByteArray k1 = engine->request(small);
    QCOMPARE(engine->request(small), k1);
    QCOMPARE(engine->layouts_started(), before + 1);
    QVERIFY(finished.wait(20000));
    QCOMPARE(engine->cache_hits(), hits);
    QVERIFY(engine->cached(k1));
    finished.clear();
    QCOMPARE(engine->request(small), k1);
    QCOMPARE(engine->cache_hits(), hits + 1);
    QCOMPARE(engine->layouts_started(), before + 1);
    QVERIFY(finished.wait(5000));
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

  // two runs' read-back values, element by element: ULPs counted in the value's own float width, NaN equal to NaN,
  // the first difference's index per axis; values that cannot be compared say why
  void output_compare_counts_ulps() {
    QCOMPARE(tsv::ulp_distance(1.0, double(std::nextafter(1.0f, 2.0f)), 32), 1.0);
    QCOMPARE(tsv::ulp_distance(-0.0, 0.0, 32), 0.0);
    QCOMPARE(tsv::ulp_distance(double(std::nextafter(0.0f, -1.0f)), double(std::nextafter(0.0f, 1.0f)), 32), 2.0);  // across zero
    QCOMPARE(tsv::ulp_distance(1.0, std::nextafter(std::nextafter(1.0, 2.0), 2.0), 64), 2.0);
    QCOMPARE(tsv::ulp_distance(NAN, NAN, 32), 0.0);
    QVERIFY(std::isinf(tsv::ulp_distance(1.0, NAN, 32)));
    QCOMPARE(tsv::index_text(5, {2, 3}), QStringLiteral("[1, 2]"));
    QCOMPARE(tsv::index_text(0, {}), QStringLiteral("[]"));
    auto trace_with = [](const QString& dtype, int bits, const QList<double>& values) { return trace_with_output(dtype, bits, {2, 2}, values); };
    tsv::Session a, b;
    QString err;
    const float next = std::nextafter(3.0f, 4.0f);  // with the next one: 2 ULPs of float32 above 3
    QVERIFY2(a.load_data(trace_with("float", 32, {1.0, 2.0, 3.0, NAN}), &err), qPrintable(err));
    tsv::OutputCompareModel m(&a, &b);
    QCOMPARE(m.rowCount(), 0);  // one run alone compares with nothing
    QVERIFY2(b.load_data(trace_with("float", 32, {1.0, 2.5, double(std::nextafter(next, 4.0f)), NAN}), &err), qPrintable(err));
    QCOMPARE(m.rowCount(), 1);
    const tsv::OutputDiff& d = m.diff(0);
    QCOMPARE(int(d.verdict), int(tsv::OutputDiff::Verdict::Differ));
    QCOMPARE(d.compared, 4);
    QCOMPARE(d.differing, 2);
    QCOMPARE(d.max_abs, 0.5);
    QCOMPARE(d.max_ulp, double(1 << 21));  // 2.0 -> 2.5: a quarter of the binade [2, 4), 2^23 / 4 steps
    QCOMPARE(d.first, 1);
    QCOMPARE(m.index(0, tsv::OutputCompareModel::kFirst).data().toString(), QStringLiteral("[0, 1]: 2 vs 2.5"));
    QCOMPARE(m.index(0, tsv::OutputCompareModel::kVerdict).data().toString(), QStringLiteral("2 of 4 differ"));
    QCOMPARE(m.index(0, tsv::OutputCompareModel::kWhere).data().toString(), QStringLiteral("t.py:3"));
    // the same values as ints, and a dtype that differs
    QVERIFY(a.load_data(trace_with("int", 32, {1, 2, 3, 4}), &err));
    QVERIFY(b.load_data(trace_with("int", 32, {1, 2, 3, 4}), &err));
    QCOMPARE(int(m.diff(0).verdict), int(tsv::OutputDiff::Verdict::Equal));
    QCOMPARE(m.diff(0).max_ulp, -1.0);
    QCOMPARE(m.differing_rows(), 0);
    QVERIFY(b.load_data(trace_with("float", 32, {1, 2, 3, 4}), &err));
    QCOMPARE(int(m.diff(0).verdict), int(tsv::OutputDiff::Verdict::Mismatch));
    QVERIFY2(m.diff(0).problem.contains("(2, 2) int against (2, 2) float"), qPrintable(m.diff(0).problem));
    // stats for the buffer viewer: NaN and inf counted, min/max/mean over the finite values
    QVERIFY(a.load_data(trace_with("float", 32, {1.0, NAN, INFINITY, 3.0}), &err));
    const tsv::OutputStats st = tsv::output_stats(a.outputs()[0]);
    QCOMPARE(st.nan, 1);
    QCOMPARE(st.inf, 1);
    QCOMPARE(st.min, 1.0);
    QCOMPARE(st.max, 3.0);
    QCOMPARE(st.mean, 2.0);
    // the checker refuses values that are not what "stored" says
    QJsonObject bad = QJsonDocument::fromJson(trace_with("float", 32, {1, 2, 3, 4})).object();
    QJsonArray outs = bad["outputs"].toArray();
    QJsonObject o = outs[0].toObject();
    o["stored"] = 5;
    o["count"] = 5;
    outs[0] = o;
    bad["outputs"] = outs;
    QVERIFY(!a.load_data(QJsonDocument(bad).toJson(), &err));
    QVERIFY2(err.contains("base64 of 5 8-byte values"), qPrintable(err));
  }

  // Help > Tour on a real run: eight stops in the tutorial's order, each raising the pane of its stage with the item it
  // talks about selected, its text from resources/ with the run's own names and counts filled in
  void tour_follows_the_pipeline() {
    const QList<tsgui::TourStop> parsed = tsgui::parse_tour("# comment\n## a-b | One {x}\nfirst line\nsecond\n\n## c | Two\ntext\n");
    QCOMPARE(parsed.size(), 2);
    QCOMPARE(parsed[0].id, QStringLiteral("a-b"));
    QCOMPARE(parsed[0].title, QStringLiteral("One {x}"));
    QCOMPARE(parsed[0].text, QStringLiteral("first line second"));
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
      const QString text = tour->text_of(i);
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

  // the buffer viewer: a read-back value's shape, strides and stats, its table (last axis across), a heat map of a
  // 2-D value, and the element-wise difference to a second device's read of it
  void values_pane_shows_a_read_back_value() {
    tsv::Session a, b;
    QString err;
    QVERIFY2(a.load_data(trace_with_output("float", 32, {2, 3}, {1, 2, 3, 4, 5, NAN}), &err), qPrintable(err));
    tsv::SelectionModel sel(&a);
    tsv::ValuesPane pane(&sel);
    QCOMPARE(pane.entries(), 1);
    QCOMPARE(pane.current(), 0);
    QVERIFY2(pane.summary().contains("(2, 3) float · strides (3, 1) · 6 elements · after call 2"), qPrintable(pane.summary()));
    QVERIFY2(pane.summary().contains("min 1 · max 5 · mean 3 · NaN 1 · inf 0"), qPrintable(pane.summary()));
    tsv::ValuesModel* m = pane.values_model();
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->columnCount(), 3);
    QCOMPARE(m->index(1, 0).data().toString(), QStringLiteral("4"));
    QCOMPARE(m->index(1, 2).data().toString(), QStringLiteral("nan"));
    QCOMPARE(m->headerData(1, Qt::Vertical).toString(), QStringLiteral("1"));
    const QImage& h = pane.heat_map();
    QCOMPARE(h.size(), QSize(3, 2));
    QColor lo = h.pixelColor(0, 0), hi = h.pixelColor(1, 1), nan = h.pixelColor(2, 1);
    QVERIFY(lo.blue() > lo.red());   // the lowest value is blue
    QVERIFY(hi.red() > hi.blue());   // the highest red
    QCOMPARE(nan, QColor(0xff, 0x00, 0xff));
    // a second device read 1 2 3 4 6 nan: one element differs by 1
    QVERIFY(b.load_data(trace_with_output("float", 32, {2, 3}, {1, 2, 3, 4, 6, NAN}), &err));
    pane.set_compare(&b, "INTERP");
    QVERIFY2(pane.summary().contains("against INTERP: 1 of 6 differ · max abs 1"), qPrintable(pane.summary()));
    pane.set_difference(true);
    QCOMPARE(m->index(1, 1).data(Qt::UserRole).toDouble(), -1.0);
    QCOMPARE(m->index(0, 0).data(Qt::UserRole).toDouble(), 0.0);
    // a script that read nothing says so
    QVERIFY(a.load_data(kernel_graph_trace(), &err));
    QCOMPARE(pane.entries(), 0);
    QVERIFY(pane.summary().contains("read no value back"));
  }

  // `run --snapshots` keeps each call's output buffer as it was right after the call: softmax's input copy, its row
  // maxima, its sums of exp(x - max) (computed here by hand) and the result the script read; timing repeats change
  // none of them; the Values pane shows a selected call's buffer in the shape of its tensor, against a second device
  void snapshots_keep_every_calls_buffer() {
    QTemporaryDir dir;
    auto run = [&](const QString& dev, const QString& out, const QString& repeat) {
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("DEV", dev);
      ts_test::vulkan_test_env(env, dir.path());  // VULKAN: lavapipe
      const QString why = ts_test::run_to_trace(source_dir() + "/resources/examples/softmax.py", out, {"--snapshots", "--repeat", repeat}, env);
      QVERIFY2(why.isEmpty(), qPrintable(why));
    };
    run("CPU", dir.filePath("cpu.json"), "4");
    run("INTERP", dir.filePath("interp.json"), "1");
    run("VULKAN", dir.filePath("vulkan.json"), "1");  // a device that batches: each call's buffer read on its own
    tsv::Session cpu, interp, vulkan;
    QString err;
    QVERIFY2(cpu.load(dir.filePath("cpu.json"), &err), qPrintable(err));
    QVERIFY2(interp.load(dir.filePath("interp.json"), &err), qPrintable(err));
    QVERIFY2(vulkan.load(dir.filePath("vulkan.json"), &err), qPrintable(err));
    const QList<QList<double>> x = {{1, 2, 3, 4}, {1, 1, 1, 1}, {-1, 0, 1, 100}};
    QList<double> flat, maxes, sums;
    for (const auto& row : x) {
      flat << row;
      const double m = *std::max_element(row.begin(), row.end());
      double e = 0;
      for (double v : row) e += std::exp(v - m);
      maxes << m;
      sums << e;
    }
    for (const tsv::Session* s : {&cpu, &interp, &vulkan}) {
      // one output buffer a call: the copy, the two reductions, the normalizing kernel
      QCOMPARE(s->calls().size(), 4);
      QCOMPARE(s->snapshots().size(), 4);
      for (int k = 0; k < 4; ++k) {
        QCOMPARE(s->snapshots()[k].call, k);
        QCOMPARE(s->snapshots()[k].arg, 0);
        QCOMPARE(s->snapshots_of(k), QList<int>{k});
      }
      QCOMPARE(s->snapshots()[0].f, QVector<double>(flat.begin(), flat.end()));
      QCOMPARE(s->snapshots()[1].f, QVector<double>(maxes.begin(), maxes.end()));
      QCOMPARE(s->snapshots()[2].count, 3);
      for (int r = 0; r < 3; ++r) QVERIFY(std::abs(s->snapshots()[2].f[r] - sums[r]) < 1e-6 * sums[r]);
      QCOMPARE(s->snapshots()[3].f, s->outputs()[0].f);  // the buffer the script then read
    }
    // the Values pane: selecting call 2 shows its buffer (3 row maxima), equal on both devices
    tsv::SelectionModel sel(&cpu);
    tsv::ValuesPane pane(&sel);
    QCOMPARE(pane.entries(), 1 + 4);  // the value read, then the four buffers
    sel.select_call(1);
    QCOMPARE(pane.current(), 1 + 1);
    QVERIFY2(pane.summary().contains("3 elements · buffer 0 of call 2, right after it ran"), qPrintable(pane.summary()));
    QVERIFY2(pane.summary().contains("min 1 · max 100"), qPrintable(pane.summary()));
    pane.set_compare(&interp, "INTERP");
    QVERIFY2(pane.summary().contains("equal to INTERP, element by element"), qPrintable(pane.summary()));
    // the last call's buffer has the shape of the tensor it holds (3, 4), as the value the script read
    sel.select_call(3);
    QCOMPARE(pane.values_model()->rowCount(), 3);
    QCOMPARE(pane.values_model()->columnCount(), 4);
    QVERIFY2(pane.summary().startsWith("(3, 4) float · strides (4, 1) · 12 elements"), qPrintable(pane.summary()));
    // a snapshot naming a call the trace lacks is refused whole
    QFile f(dir.filePath("cpu.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    QJsonArray snaps = root["snapshots"].toArray();
    QJsonObject bad = snaps[0].toObject();
    bad["call"] = 4;
    snaps[0] = bad;
    root["snapshots"] = snaps;
    tsv::Session broken;
    QVERIFY(!broken.load_data(QJsonDocument(root).toJson(), &err));
    QVERIFY2(err.contains("snapshots[0]") && err.contains("names call 4 of a trace with 4 calls"), qPrintable(err));
  }

  // each line of a kernel's source names the uop it renders (a loop its RANGE, a closing brace its END, a store its
  // STORE); a source line selects that uop in the program's graph and a uop selects its line, an inlined expression
  // the line of its user; a click on a script line's number selects the schedule that line realized
  void source_lines_link_uops_and_script_lines() {
    QTemporaryDir dir;
    const QString out = dir.filePath("softmax.json");
    const QString why = ts_test::run_to_trace("resources/examples/softmax.py", out, {}, QProcessEnvironment::systemEnvironment(), source_dir());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(out, &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    int kernels = 0;
    for (int k = 0; k < s.contexts().size(); ++k) {
      const tsv::Context& c = s.contexts()[k];
      if (!c.has_program) continue;
      ++kernels;
      const QStringList src = c.program.src.split('\n');
      QVERIFY2(!c.program.lines.isEmpty(), qPrintable(c.plain_name));
      const int pass = sel.output_pass(k);
      QVERIFY(pass >= 0);
      QCOMPARE(c.passes[pass].name, QStringLiteral("View Output AST"));
      QSet<int> graph;
      QList<int> todo{c.passes[pass].after};
      while (!todo.isEmpty()) {
        const int id = todo.takeLast();
        if (graph.contains(id)) continue;
        graph.insert(id);
        todo += s.uop(id)->src;
      }
      int stores = 0, prev = 0;
      for (const auto& [line, uop] : c.program.lines) {
        QVERIFY(line > prev && line <= src.size());  // in line order, inside the source
        prev = line;
        QVERIFY2(graph.contains(uop), qPrintable(QString("line %1 names uop %2, not in the program's graph").arg(line).arg(uop)));
        const QString text = src[line - 1].trimmed(), op = s.uop(uop)->op;
        QCOMPARE(text.startsWith("for ("), op == "RANGE");
        QCOMPARE(text == "}", op == "END");
        if (op == "STORE" && text.contains("data0_") && text.contains(" = ")) ++stores;
      }
      QVERIFY2(stores >= 1, qPrintable(c.program.src));  // each kernel stores its output
      // a source line selects its uop in the program's graph, and back
      sel.select_context(k);
      const auto [line, uop] = c.program.lines.front();
      sel.select_source_line(line);
      QCOMPARE(sel.current().node, uop);
      QCOMPARE(sel.current().pass, pass);
      sel.select_node(c.program.lines.back().second);
      QCOMPARE(sel.current().source_line, sel.source_line_of(k, c.program.lines.back().second));
      // an inlined uop (no line of its own) selects the line of the first user that reaches it
      QSet<int> own;
      for (const auto& l : c.program.lines) own.insert(l.second);
      for (int id : graph) {
        if (own.contains(id) || s.uop(id)->op == "SINK") continue;
        const int at = sel.source_line_of(k, id);
        if (at < 0) continue;
        int user = -1;
        for (const auto& l : c.program.lines)
          if (l.first == at) user = l.second;
        QVERIFY(user >= 0);
        QSet<int> below;
        QList<int> walk{user};
        while (!walk.isEmpty()) {
          const int x = walk.takeLast();
          for (int y : s.uop(x)->src)
            if (!below.contains(y)) below.insert(y), walk.push_back(y);
        }
        QVERIFY2(below.contains(id), qPrintable(QString("uop %1 is not under line %2's uop").arg(id).arg(at)));
      }
    }
    QCOMPARE(kernels, 3);
    // the window: softmax.py's line 4 (the print of the softmax) realized the one schedule
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QDir::setCurrent(source_dir());
    QVERIFY2(w.open_trace(out, &err), qPrintable(err));
    QCOMPARE(w.editor()->marks().keys(), QList<int>{4});
    QVERIFY(!w.select_script_line(3));
    QVERIFY(w.select_script_line(4));
    const int sc = s.schedule_context(0);
    QCOMPARE(w.selection()->current().call, s.calls_of_schedule(sc).front());
    bool lit = false;
    for (const auto& x : w.editor()->extraSelections()) lit |= x.cursor.blockNumber() == 3;
    QVERIFY(lit);
    // the source pane's line selects the uop the same way in the window
    w.selection()->select_call(1);  // the first kernel (after the input's copy)
    const int kc = w.selection()->current().context;
    QVERIFY(w.session()->contexts()[kc].has_program);
    w.selection()->select_source_line(w.session()->contexts()[kc].program.lines.front().first);
    QCOMPARE(w.selection()->current().node, w.session()->contexts()[kc].program.lines.front().second);
  }

  // zoomed out below reading size, the kernel graph names its calls over the drawing at a readable size, the slowest
  // first and none covering another; zoomed back in, the names go (the boxes' own text is readable again)
  void overview_names_the_slowest_calls() {
    QTemporaryDir dir;
    const QString out = dir.filePath("softmax.json");
    const QString why = ts_test::run_to_trace(source_dir() + "/resources/examples/softmax.py", out, {"--repeat", "3"});
    QVERIFY2(why.isEmpty(), qPrintable(why));
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(out, &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::KernelGraph, &sel);
    pane.resize(500, 300);
    pane.show();
    QSignalSpy done(&pane, &tsv::GraphPane::layout_done);
    sel.select_call(0);
    QVERIFY(done.count() > 0 || done.wait(30000));
    pane.view()->set_scale(1.0);
    QVERIFY(pane.overview_labels().isEmpty());
    pane.view()->set_scale(0.1);
    const QStringList names = pane.overview_labels();
    QVERIFY(!names.isEmpty());
    // the slowest call (by the Timings pane's headline) is named first
    int slowest = 0;
    for (int c = 1; c < s.calls().size(); ++c)
      if (tsv::TimingsModel::headline_of(s.calls()[c]) > tsv::TimingsModel::headline_of(s.calls()[slowest])) slowest = c;
    QVERIFY2(names.front() == s.calls()[slowest].display_name(), qPrintable(names.join(" | ")));
    // readable (12 px text whatever the zoom) and never on top of one another
    QList<QRect> boxes;
    for (QGraphicsItem* it : pane.scene()->items())
      if (it->data(1).isValid()) {
        QVERIFY(it->flags() & QGraphicsItem::ItemIgnoresTransformations);
        const QSize size = it->boundingRect().size().toSize();  // in view pixels: the item ignores the zoom
        QVERIFY(size.height() >= 14);
        const QRect r(pane.view()->mapFromScene(it->pos()) - QPoint(size.width() / 2, size.height() / 2), size);
        for (const QRect& b : boxes) QVERIFY(!b.intersects(r));
        boxes << r;
      }
    QCOMPARE(boxes.size(), names.size());
    pane.view()->set_scale(1.0);
    QVERIFY(pane.overview_labels().isEmpty());
  }

  // the compare's numbers from two traces: the ratio is the second's warm median over the first's, calls that differ
  // at a position are not compared; the line diff keeps the longest common run of lines
  // ---- the rewrite stepper: per-rule hits, one layout per pass, the rule's source lines, the UOp diff

  // the Rules tab: every rule's hits in the run and in the selected context, as counted here from the trace's JSON
  void stepper_rule_hits_equal_the_trace_json() {
    const QString path = softmax_trace();
    QVERIFY(!path.isEmpty());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    QHash<QString, int> run;
    QList<QHash<QString, int>> here;  // per context
    QList<QStringList> order;         // per context: each match's rule key, in step order
    for (const auto& cv : root["contexts"].toArray()) {
      here.push_back({});
      order.push_back({});
      for (const auto& pv : cv.toObject()["passes"].toArray())
        for (const auto& mv : pv.toObject()["matches"].toArray()) {
          const QString key = mv.toObject()["loc"].toString() + '\n' + mv.toObject()["rule"].toString();
          ++run[key], ++here.back()[key];
          order.back().push_back(key);
        }
    }
    QVERIFY(run.size() >= 5);
    tsv::Session s;
    QVERIFY(s.load(path));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1000, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.sides()->setCurrentWidget(pane.rules());
    QAbstractItemModel* table = pane.rules()->model();
    QAbstractItemModelTester tester(pane.rule_counts(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(table->rowCount(), run.size());
    using C = tsv::RuleCountsModel;
    for (int c = 0; c < s.contexts().size(); ++c) {
      sel.select_context(c);
      for (int r = 0; r < table->rowCount(); ++r) {
        const QString key = table->index(r, 0).data(C::kKeyRole).toString();
        QCOMPARE(table->index(r, C::kRule).data().toString(), key.section('\n', 1));
        QCOMPARE(table->index(r, C::kLocation).data().toString(), key.section('\n', 0, 0));
        QCOMPARE(table->index(r, C::kRun).data().toInt(), run.value(key));
        QCOMPARE(table->index(r, C::kContext).data(C::kSortRole).toInt(), here[c].value(key));
      }
    }
    // sorted by the run's hits, most first; by the context's when asked
    for (int r = 1; r < table->rowCount(); ++r)
      QVERIFY(table->index(r - 1, C::kRun).data().toInt() >= table->index(r, C::kRun).data().toInt());
    int c = 0;
    for (int i = 0; i < here.size(); ++i)
      if (order[i].size() > order[c].size()) c = i;
    sel.select_context(c);
    pane.rules()->sortByColumn(C::kContext, Qt::DescendingOrder);
    for (int r = 1; r < table->rowCount(); ++r)
      QVERIFY(table->index(r - 1, C::kContext).data(C::kSortRole).toInt() >= table->index(r, C::kContext).data(C::kSortRole).toInt());
    // a click on a rule that fired twice or more here: only its steps, from its first
    QString twice;
    for (const QString& k : order[c])
      if (here[c].value(k) >= 2) twice = k;
    QVERIFY(!twice.isEmpty());
    auto click = [&](const QString& key) {
      for (int r = 0; r < table->rowCount(); ++r)
        if (table->index(r, 0).data(C::kKeyRole).toString() == key) {
          pane.rules()->scrollTo(table->index(r, 0));
          QTest::mouseClick(pane.rules()->viewport(), Qt::LeftButton, {}, pane.rules()->visualRect(table->index(r, 0)).center());
          return true;
        }
      return false;
    };
    QVERIFY(click(twice));
    QCOMPARE(pane.rule_filter(), twice);
    // TS_VIEWER_SHOT_DIR=DIR: also save the pane (the Rules tab, one rule's steps) to look at
    if (qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) {
      if (pane.busy()) QSignalSpy(&pane, &tsv::StepperPane::layout_done).wait(20000);
      QTest::qWait(100);
      QVERIFY(pane.grab().save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/stepper_rules.png"));
    }
    QCOMPARE(pane.list()->model()->rowCount(), here[c].value(twice));
    QCOMPARE(pane.current_step(), int(order[c].indexOf(twice)));
    QTest::keyClick(pane.list(), Qt::Key_Right);  // the rule's next step, past the others
    QCOMPARE(pane.current_step(), int(order[c].indexOf(twice, order[c].indexOf(twice) + 1)));
    QCOMPARE(pane.model()->match(pane.current_step()).rule, twice.section('\n', 1));
    // a rule that did not fire here: the first context where it did, at its first step there
    QString elsewhere;
    for (auto it = run.begin(); it != run.end() && elsewhere.isEmpty(); ++it)
      if (here[c].value(it.key()) == 0) elsewhere = it.key();
    QVERIFY(!elsewhere.isEmpty());
    int first_context = 0;
    while (!here[first_context].contains(elsewhere)) ++first_context;
    QVERIFY(click(elsewhere));
    QCOMPARE(sel.current().context, first_context);
    QCOMPARE(pane.current_step(), int(order[first_context].indexOf(elsewhere)));
    QCOMPARE(pane.list()->model()->rowCount(), here[first_context].value(elsewhere));
    pane.filter_rule({});
    QCOMPARE(pane.list()->model()->rowCount(), pane.model()->step_count());
  }

  // a pass's steps share one layout: stepping through them asks for none and moves no node; the same steps laid out
  // one by one ask for one each. Prints both times per step (TS_STEPPER_TRACE=JSON measures that trace's biggest pass).
  void stepper_lays_out_each_pass_once() {
    const QString path = qEnvironmentVariableIsSet("TS_STEPPER_TRACE") ? qEnvironmentVariable("TS_STEPPER_TRACE") : softmax_trace();
    QVERIFY(!path.isEmpty());
    tsv::Session s;
    QVERIFY(s.load(path));
    const auto [c, p] = biggest_pass(s, /*kernels_only=*/!qEnvironmentVariableIsSet("TS_STEPPER_TRACE"));
    QVERIFY(c >= 0);
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1100, 700);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QSignalSpy done(&pane, &tsv::StepperPane::layout_done);
    auto settle = [&] {
      if (pane.busy()) QVERIFY(done.wait(60000));
      QCoreApplication::processEvents();
    };
    QElapsedTimer t;
    t.start();
    sel.select_pass(c, p);
    settle();
    const double first_ms = t.nsecsElapsed() / 1e6;
    const int first = pane.model()->first_step_of_pass(p), steps = s.contexts()[c].passes[p].matches.size();
    QCOMPARE(pane.current_step(), first);
    const tsv::StepperModel::Window w = pane.drawn_window();
    QCOMPARE(w.pass, p);
    QCOMPARE(w.first, first);
    // the whole pass in one window, unless its graphs hold more than the union's limit together
    int windows = 1;
    for (int k = w.last + 1; k < first + steps; k = pane.model()->window(k, tsv::StepperPane::kMaxUnion).last + 1) ++windows;
    if (!qEnvironmentVariableIsSet("TS_STEPPER_TRACE")) QCOMPARE(w.last, first + steps - 1);
    const int requests = pane.layout_requests();
    // every place's box, where dot put it, whether it shows now or not
    auto boxes = [&] {
      QList<QRectF> rects;
      for (auto* it : pane.scene()->items())
        if (auto* box = qgraphicsitem_cast<QGraphicsRectItem*>(it); box && box->flags() & QGraphicsItem::ItemIsSelectable)
          rects.push_back(box->mapRectToScene(box->rect()));  // the box without its outline, whose width is the mark's
      std::sort(rects.begin(), rects.end(), [](const QRectF& a, const QRectF& b) { return a.x() != b.x() ? a.x() < b.x() : a.y() < b.y(); });
      return rects;
    };
    const QList<QRectF> placed = boxes();
    QCOMPARE(placed.size(), int(w.places.size()));
    const QTransform zoom = pane.view()->transform();
    t.restart();
    for (int k = first; k < first + steps; ++k) {
      pane.set_step(k);
      if (k <= w.last) QVERIFY(!pane.busy());
      settle();
    }
    const double union_ms = t.nsecsElapsed() / 1e6 / steps;
    QCOMPARE(pane.layout_requests(), requests + windows - 1);  // no layout while stepping in a window
    if (windows == 1) {
      QCOMPARE(boxes(), placed);                 // no node moved
      QCOMPARE(pane.view()->transform(), zoom);  // nor the zoom
    }
    // each step's nodes are those of its graphs, marked as its frame says
    for (int k = first; k < first + steps; ++k) {
      pane.set_step(k);
      settle();
      for (bool after : {true, false}) {
        pane.set_showing_after(after);
        settle();
        const tsv::StepperModel::Frame f = pane.model()->frame(k);
        QSet<int> shown, marked;
        for (auto* it : pane.scene()->items())
          if (it->data(0).isValid() && it->isVisible()) {
            const QString mark = it->data(1).toString();
            if (mark != "gone" && mark != "coming") shown.insert(it->data(0).toInt());
            if (mark == (after ? "added" : "removed")) marked.insert(it->data(0).toInt());
          }
        QCOMPARE(shown, pane.model()->nodes_under(after ? f.after : f.before));
        QCOMPARE(marked, after ? f.added : f.removed);
      }
    }
    pane.set_showing_after(true);
    // the same steps laid out one by one: one layout each
    pane.set_union_limit(0);
    settle();
    const int before_steps = pane.layout_requests();
    t.restart();
    for (int k = first; k < first + steps; ++k) {
      pane.set_step(k);
      settle();
    }
    const double per_step_ms = t.nsecsElapsed() / 1e6 / steps;
    QVERIFY(pane.layout_requests() - before_steps >= steps - 1);  // the first step's layout came with the limit
    qInfo("stepper: %s, pass \"%s\" of %s: %d steps in %d layout(s) (the first of %d nodes, %.0f ms); per step %.2f ms "
          "(recoloured within a layout) vs %.1f ms laid out each",
          qPrintable(QFileInfo(path).fileName()), qPrintable(s.contexts()[c].passes[p].name), qPrintable(s.contexts()[c].plain_name),
          steps, windows, int(w.places.size()), first_ms, union_ms, per_step_ms);
  }

  // the rule's source box: the lines of the engine's own source at the step's location, read here from disk
  void stepper_shows_each_rule_source_from_the_engine() {
    const QString path = softmax_trace();
    QVERIFY(!path.isEmpty());
    tsv::Session s;
    QVERIFY(s.load(path));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1000, 700);
    pane.show();
    QSet<QString> seen;
    for (int c = 0; c < s.contexts().size(); ++c) {
      sel.select_context(c);
      for (int k = 0; k < pane.model()->step_count(); ++k) {
        const tsv::Match& m = pane.model()->match(k);
        if (seen.contains(m.loc + '\n' + m.rule)) continue;
        seen.insert(m.loc + '\n' + m.rule);
        pane.set_step(k);
        const QString file = m.loc.section(':', 0, 0);
        const int line = m.loc.section(':', 1).toInt();
        QFile src(source_dir() + "/" + file);
        QVERIFY2(src.open(QIODevice::ReadOnly), qPrintable(file));
        const QStringList lines = QString::fromUtf8(src.readAll()).split('\n');
        QVERIFY(line >= 1 && line <= lines.size());
        const QString at = lines[line - 1];
        // the rule table's row names the rule: rule("NAME", ...) or rule<Context>("NAME", ...)
        QVERIFY2(at.contains(QRegularExpression("rule(<[^>]+>)?\\(\"" + QRegularExpression::escape(m.rule) + "\"")), qPrintable(at));
        QCOMPARE(pane.rule_source_line(), at);
        // highlighted: the block with the line's number and text; the two lines above it shown too
        const auto sels = pane.rule_source()->extraSelections();
        QCOMPARE(sels.size(), 1);
        const QString block = sels[0].cursor.block().text();
        QVERIFY2(block.trimmed().startsWith(QString::number(line) + "  ") && block.endsWith(at), qPrintable(block));
        const QString box = pane.rule_source()->toPlainText();
        for (int l = std::max(1, line - 2); l <= line; ++l) QVERIFY2(box.contains(lines[l - 1]), qPrintable(lines[l - 1]));
        QVERIFY(pane.rule_where()->text().contains(m.loc));
      }
    }
    QVERIFY(seen.size() >= 5);
    // a trace recorded before traces carried the rules' sources says so, with the location
    QVERIFY(s.load(source_dir() + "/tests/viewer/data/tutorial_matches.trace.json"));
    sel.select_context(3);
    QVERIFY(pane.current_step() >= 0);
    QVERIFY(pane.rule_source()->toPlainText().contains("carries no rule sources"));
    QVERIFY(pane.rule_source()->toPlainText().contains(pane.model()->match(pane.current_step()).loc));
  }

  // x * 1 -> x: the matched UOp and the rule's result printed as the engine prints UOps, the MUL's own lines marked
  void stepper_uop_diff_of_x_times_one() {
    const QString script = dir_.filePath("times_one.py");
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("from tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0])\nprint((a * 1).tolist())\n");
    f.close();
    const QString path = record_matches(script, "times_one.json");
    QVERIFY(!path.isEmpty());
    tsv::Session s;
    QVERIFY(s.load(path));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1000, 700);
    int context = -1, step = -1;
    for (int c = 0; c < s.contexts().size() && step < 0; ++c) {
      sel.select_context(c);
      for (int k = 0; k < pane.model()->step_count() && step < 0; ++k) {
        const tsv::Match& m = pane.model()->match(k);
        if (m.rule == "x*1 -> x" && s.uop(m.before)->op == "MUL") context = c, step = k;
      }
    }
    QVERIFY(step >= 0);
    sel.select_context(context);
    pane.set_step(step);
    const QString before =
        "UOp(Ops.MUL, dtypes.float, arg=None, src=(\n"
        "  UOp(Ops.INDEX, dtypes.float, arg=None, src=(\n"
        "    UOp(Ops.BUFFER, dtypes.float, arg=ParamArg(1, device='CPU'), src=()),\n"
        "    UOp(Ops.RANGE, dtypes.weakint, arg=(0, AxisType.WEAK), src=(\n"
        "      UOp(Ops.CONST, dtypes.weakint, arg=4, src=()),\n"
        "    )),\n"
        "  )),\n"
        "  UOp(Ops.CONST, dtypes.weakfloat, arg=1.0, src=()),\n"
        "))";
    const QString after =
        "UOp(Ops.INDEX, dtypes.float, arg=None, src=(\n"
        "  UOp(Ops.BUFFER, dtypes.float, arg=ParamArg(1, device='CPU'), src=()),\n"
        "  UOp(Ops.RANGE, dtypes.weakint, arg=(0, AxisType.WEAK), src=(\n"
        "    UOp(Ops.CONST, dtypes.weakint, arg=4, src=()),\n"
        "  )),\n"
        "))";
    QCOMPARE(pane.uop_diff()->left()->toPlainText(), before);
    QCOMPARE(pane.uop_diff()->right()->toPlainText(), after);
    // the subtree that moved up a level is the same text: only the MUL, its CONST 1.0 and one closing line differ
    QSet<int> marked;
    for (const auto& e : pane.uop_diff()->left()->extraSelections()) marked.insert(e.cursor.blockNumber());
    QCOMPARE(marked, (QSet<int>{0, 6, 7}));
    QVERIFY(pane.uop_diff()->right()->extraSelections().isEmpty());
    QVERIFY2(pane.uop_diff()->summary().startsWith("3 line(s) only on the left"), qPrintable(pane.uop_diff()->summary()));
    if (qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) {
      pane.show();
      pane.details()->setCurrentWidget(pane.uop_diff());
      pane.set_showing_after(false);
      if (pane.busy()) QSignalSpy(&pane, &tsv::StepperPane::layout_done).wait(20000);
      QTest::qWait(100);
      QVERIFY(pane.grab().save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/stepper_uop_diff.png"));
    }
    // the same print as the engine's Python binding: uop_repr over the trace's nodes
    QCOMPARE(tsv::uop_repr(pane.model()->match(step).before, [&s](int id) { return s.uop(id); }), before);
  }

  void compare_model_and_line_diff() {
    QJsonDocument da = QJsonDocument::fromJson(kernel_graph_trace()), db = da;
    QJsonObject rb = db.object();
    QJsonArray calls = rb["calls"].toArray();
    for (int i = 0; i < calls.size(); ++i) {
      QJsonObject c = calls[i].toObject();
      c["times"] = QJsonArray{9e-6, 3e-6, 5e-6, 4e-6};  // warm median 4 us
      if (i == 3) c["name"] = "r_2", c["colored_name"] = "r_2";
      calls[i] = c;
    }
    rb["calls"] = calls;
    tsv::Session a, b;
    QVERIFY(a.load_data(da.toJson()));
    QVERIFY(b.load_data(QJsonDocument(rb).toJson()));
    tsv::CompareModel m(&a, &b);
    QAbstractItemModelTester t(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    m.set_devices("CPU", "VULKAN");
    QCOMPARE(m.rowCount(), 4);
    QCOMPARE(m.ratio(1), 4.0);  // 4 us over the 1 us the first trace's one run took
    QCOMPARE(m.index(1, tsv::CompareModel::kRatio).data().toString(), QStringLiteral("4.00×"));
    QVERIFY(!m.matched(3));
    QCOMPARE(m.index(3, tsv::CompareModel::kRatio).data().toString(), QStringLiteral("differs"));
    QCOMPARE(m.headerData(tsv::CompareModel::kTimeB, Qt::Horizontal).toString(), QStringLiteral("Time on VULKAN"));
    const tsv::LineDiff d = tsv::diff_lines({"a", "b", "c", "d"}, {"a", "x", "c", "d", "e"});
    QCOMPARE(d.a_kept, (QList<bool>{true, false, true, true}));
    QCOMPARE(d.b_kept, (QList<bool>{true, false, true, true, false}));
    QCOMPARE(d.removed, 1);
    QCOMPARE(d.added, 2);
  }

  // Source > Assembly: the kernel's host assembly from `tinyscope asm`, a click away
  void source_pane_shows_assembly() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    QVERIFY(w.open_trace(fixture()));
    QVERIFY(w.source_pane()->text().contains("void E_4"));
    w.source_pane()->show_assembly(true);
    QTRY_VERIFY_WITH_TIMEOUT(w.source_pane()->text().contains("ret"), 30000);
    const QString text = w.source_pane()->text();
    QVERIFY2(text.contains("E_4:") || text.contains("E_4>:"), qPrintable(text.left(400)));  // the function's label
    QVERIFY(!text.contains("void E_4"));
    w.source_pane()->show_assembly(false);
    QVERIFY(w.source_pane()->text().contains("void E_4"));
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
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(root).toJson());
    out.close();
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.set_initial_context(QStringLiteral("r_8"));
    QVERIFY(w.open_trace(path));
    QCOMPARE(w.selection()->current().context, 4);
  }
};

QTEST_MAIN(TestViewer)
#include "test_viewer.moc"
