// The graph panes and the layout engine: dot layouts, the kernel graph, the kernel split, big graphs (no UI stall,
// collapsed clusters, search and minimap), exports, the engine's timeout, cancel and cache, the overview.
#include <QComboBox>
#include <QGraphicsRectItem>

#include "viewer/model/call_color.h"
#include "viewer/panes/timings_pane.h"
#include "viewer_test_util.h"

namespace {
using ts_test::chain_of_kernels_trace;
using ts_test::fixture;
using ts_test::kernel_graph_trace;
using ts_test::source_dir;
using ts_test::tinyscope_bin;
using ts_test::trace_with_output;
}  // namespace

// the chain-of-kernels trace (viewer_test_util.h: 15 kernels of 100 nodes) with its tensor graph in a pane: over 1,000
// nodes, it opens collapsed to one node per kernel cluster
struct ChainGraph {
  tsv::Session s;
  QString error;  // why the trace did not load ("" when it did)
  bool loaded = s.load_data(chain_of_kernels_trace(), &error);
  tsv::SelectionModel sel{&s};
  tsv::GraphPane pane{tsv::GraphPane::Kind::TensorGraph, &sel};
  QSignalSpy done{&pane, &tsv::GraphPane::layout_done};
};

class TestViewerGraphs : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    ts_test::own_settings(QStringLiteral("test_viewer_graphs"));
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
  // colour by a metric: the slower call the darker (time on a log scale), FLOPs and bytes from the estimates, the
  // share of the run; a call without the metric (no FLOPs: a copy) grey; the roofline needs measured limits (this trace
  // has none): every node grey and the scale says why; the pane's menu sets it and shows the scale under its bar
  void graphs_colour_by_a_metric() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(kernel_graph_trace(), &err), qPrintable(err));
    const QList<int> calls{0, 1, 2, 3};
    using M = tsv::GraphPane::Metric;
    QString scale;
    const QList<QColor> t = tsv::GraphPane::metric_fills(s, calls, M::Time, &scale);
    QCOMPARE(t.size(), 4);
    QVERIFY2(scale.startsWith("colour: time") && scale.contains("log scale"), qPrintable(scale));
    for (int a : calls)
      for (int b : calls)
        if (s.calls()[a].times.size() < 2 && s.calls()[b].times.size() < 2 && s.calls()[a].seconds < s.calls()[b].seconds)
          QVERIFY2(t[a].lightnessF() > t[b].lightnessF(), qPrintable(QString("call %1 is faster than %2, not lighter").arg(a).arg(b)));
    const QList<QColor> f = tsv::GraphPane::metric_fills(s, calls, M::Flops, &scale);
    for (int c : calls)
      if (s.calls()[c].estimates.ops <= 0) QCOMPARE(f[c], QColor(0xe6, 0xe6, 0xe6));
    QVERIFY(!s.limits().valid());
    const QList<QColor> r = tsv::GraphPane::metric_fills(s, calls, M::Roofline, &scale);
    for (const QColor& c : r) QCOMPARE(c, QColor(0xe6, 0xe6, 0xe6));
    QVERIFY2(scale.contains("no measured limits"), qPrintable(scale));
    // the ratio to a compared run: faster here blue, slower red, equal near white, no pair grey; without a comparison
    // every node grey and the scale says so
    const tsv::GraphPane::RatioFn ratio = [](int call) { return QList<double>{0.25, 4.0, 1.0, qQNaN()}[call]; };
    const QList<QColor> q = tsv::GraphPane::metric_fills(s, calls, M::Ratio, &scale, ratio, "CPU · default");
    QVERIFY2(q[0].blueF() > q[0].redF() + 0.3 && q[1].redF() > q[1].blueF() + 0.3, qPrintable(q[0].name() + " " + q[1].name()));
    QVERIFY2(q[2].lightnessF() > 0.9 && std::fabs(q[2].redF() - q[2].blueF()) < 0.05, qPrintable(q[2].name()));
    QCOMPARE(q[3], QColor(0xe6, 0xe6, 0xe6));
    QVERIFY2(scale.contains("CPU · default") && scale.contains("4x faster"), qPrintable(scale));
    for (const QColor& c : tsv::GraphPane::metric_fills(s, calls, M::Ratio, &scale)) QCOMPARE(c, QColor(0xe6, 0xe6, 0xe6));
    QVERIFY2(scale.contains("no comparison"), qPrintable(scale));
    // the ramp's ends
    QCOMPARE(tsv::GraphPane::metric_ramp(0), QColor(0xff, 0xf5, 0xd6));
    QCOMPARE(tsv::GraphPane::metric_ramp(1), QColor(0xa5, 0x0f, 0x15));
    // the kernel graph pane drawn by time: its nodes' fills are the metric's
    tsv::SelectionModel sel(&s);
    tsv::GraphPane pane(tsv::GraphPane::Kind::KernelGraph, &sel);
    pane.resize(800, 500);
    pane.set_metric(M::Time);
    sel.select_context(0);
    QTRY_VERIFY_WITH_TIMEOUT(!pane.busy(), 20000);
    auto* legend = pane.findChild<QLabel*>("graph_metric_scale");
    QVERIFY(legend && !legend->isHidden() && legend->text().contains("colour: time"));
    QCOMPARE(pane.findChild<QComboBox*>("graph_metric")->currentIndex(), int(M::Time));
    int coloured = 0;
    for (auto* it : pane.scene()->items())
      if (auto* box = dynamic_cast<QGraphicsRectItem*>(it); box && box->data(0).isValid() && box->data(0).toInt() >= 0 && box->data(0).toInt() < 3) {
        QCOMPARE(box->brush().color(), t[box->data(0).toInt()]);
        ++coloured;
      }
    QCOMPARE(coloured, 3);
  }

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

  // Opening a cluster lays out only the cluster's nodes (one dot child of its size) and splices them into the drawing:
  // no node overlaps another, every edge of the new graph is drawn between its two nodes, the nodes ranked before the
  // cluster stay where they were
  void opening_a_cluster_lays_out_only_its_nodes() {
    ChainGraph c;
    QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
    tsv::Session& s = c.s;
    tsv::GraphPane& pane = c.pane;
    QSignalSpy& done = c.done;
    auto* engine = tsv::LayoutEngine::instance();
    c.sel.select_context(0);
    QVERIFY(done.wait(30000));
    auto rects = [&] {
      QHash<int, QRectF> out;
      for (auto* it : pane.scene()->items())
        if (it->data(0).isValid() && it->type() == QGraphicsRectItem::Type) out.insert(it->data(0).toInt(), it->sceneBoundingRect());
      return out;
    };
    const QHash<int, QRectF> before = rects();
    const QRectF cluster = before.value(-1 - 3);
    QVERIFY(!cluster.isNull());
    const int started = engine->layouts_started();
    pane.expand_cluster(3);
    QVERIFY(pane.busy());
    QVERIFY(done.wait(30000));
    QCOMPARE(engine->layouts_started(), started + 1);  // the cluster's 100 nodes, nothing else
    const QHash<int, QRectF> after = rects();
    QCOMPARE(after.size(), 114);
    const QList<int> ids = after.keys();
    for (int i = 0; i < ids.size(); ++i)
      for (int j = i + 1; j < ids.size(); ++j)
        QVERIFY2(!after[ids[i]].adjusted(1, 1, -1, -1).intersects(after[ids[j]].adjusted(1, 1, -1, -1)),
                 qPrintable(QString("nodes %1 and %2 overlap").arg(ids[i]).arg(ids[j])));
    // the clusters ranked before it (above, ranks run down) did not move; its nodes start where its node was
    for (auto it = before.constBegin(); it != before.constEnd(); ++it)
      if (it.key() != -1 - 3 && it.value().bottom() < cluster.top()) QCOMPARE(after.value(it.key()), it.value());
    double top = 1e300;
    for (int id : pane.clustering().members[3]) top = std::min(top, after.value(id).top());
    QVERIFY(std::abs(top - cluster.top()) < 1.5);
    // the new graph's edges, each drawn from one of its nodes to the other
    const tsv::GraphInput g = tsv::GraphPane::collapse(s, tsv::GraphPane::build_graph(s, {1499}, 5000), pane.clustering(), {3});
    QList<QPainterPath> paths;
    for (auto* it : pane.scene()->items())
      if (it->type() == QGraphicsPathItem::Type) paths << static_cast<QGraphicsPathItem*>(it)->path();
    QCOMPARE(paths.size(), g.edges.size());
    for (const auto& [a, b] : g.edges) {
      // (dot's routes end where their arrowheads begin)
      const QRectF ra = after.value(a).adjusted(-12, -12, 12, 12), rb = after.value(b).adjusted(-12, -12, 12, 12);
      const bool drawn = std::any_of(paths.begin(), paths.end(), [&](const QPainterPath& p) {
        const QPointF p0 = p.pointAtPercent(0), p1 = p.pointAtPercent(1);
        return (ra.contains(p0) && rb.contains(p1)) || (rb.contains(p0) && ra.contains(p1));
      });
      QVERIFY2(drawn, qPrintable(QString("edge %1 -> %2 is not drawn between its nodes").arg(a).arg(b)));
    }
  }

  // splice_layout on a hand-made layout: the sub's nodes where the replaced node began, the next rank moved on by the
  // extra length, a node beside it moved aside by half the extra breadth, an edge inside the sub kept, the rest straight
  void splice_layout_by_hand() {
    tsv::GraphLayout old, sub;
    old.nodes = {{1, QRectF(0, 0, 10, 10)}, {-1, QRectF(0, 20, 10, 10)}, {2, QRectF(0, 40, 10, 10)}, {3, QRectF(20, 20, 10, 10)}};
    sub.nodes = {{10, QRectF(100, 100, 30, 10)}, {11, QRectF(100, 120, 30, 10)}};
    QPainterPath inner(QPointF(115, 110));
    inner.lineTo(QPointF(115, 120));
    sub.edges = {inner};
    sub.edge_ends = {{10, 11}};
    tsv::GraphInput g;
    g.edges = {{1, 10}, {10, 11}, {11, 2}, {1, 3}};
    const tsv::GraphLayout l = tsv::splice_layout(old, -1, sub, g);
    QVERIFY(!l.nodes.contains(-1));
    QCOMPARE(l.nodes.value(10), QRectF(-10, 20, 30, 10));
    QCOMPARE(l.nodes.value(11), QRectF(-10, 40, 30, 10));
    QCOMPARE(l.nodes.value(1), QRectF(0, 0, 10, 10));
    QCOMPARE(l.nodes.value(2), QRectF(0, 60, 10, 10));   // 20 further: the sub is 30 long where the node was 10
    QCOMPARE(l.nodes.value(3), QRectF(30, 20, 10, 10));  // 10 aside: half of the 20 the sub is broader
    QCOMPARE(l.edges.size(), 4);
    QCOMPARE(l.edge_ends, g.edges);
    QCOMPARE(l.edges[1].pointAtPercent(0), QPointF(5, 30));  // sub's own route, moved with its nodes
    QCOMPARE(l.edges[0].pointAtPercent(0), QPointF(5, 10));  // straight: from node 1's border down to node 10's
    QCOMPARE(l.edges[0].pointAtPercent(1), QPointF(5, 20));
    QCOMPARE(l.arrows.size(), 3);  // the straight edges' (the sub's edge had none)
  }

  // Graphs over 1,000 nodes open collapsed to one node per kernel cluster and expand on demand
  void big_graphs_open_collapsed_and_expand() {
    ChainGraph chain;
    QVERIFY2(chain.error.isEmpty(), qPrintable(chain.error));
    tsv::Session& s = chain.s;
    tsv::GraphPane& pane = chain.pane;
    QSignalSpy& done = chain.done;
    auto* engine = tsv::LayoutEngine::instance();
    chain.sel.select_context(0);
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
    ChainGraph chain;
    QVERIFY2(chain.error.isEmpty(), qPrintable(chain.error));
    tsv::GraphPane& pane = chain.pane;
    QSignalSpy& done = chain.done;
    pane.resize(500, 400);
    pane.show();
    chain.sel.select_context(0);
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
    QCOMPARE(check_overview_geometry(pane), names.size());
    pane.view()->set_scale(1.0);
    QVERIFY(pane.overview_labels().isEmpty());
    // the tensor graph's names (the calls' outputs) beside their nodes too, at any zoom out
    tsv::GraphPane tensor(tsv::GraphPane::Kind::TensorGraph, &sel);
    tensor.resize(500, 400);
    tensor.show();
    QSignalSpy tensor_done(&tensor, &tsv::GraphPane::layout_done);
    sel.select_context(0);
    QVERIFY(tensor_done.count() > 0 || tensor_done.wait(30000));
    for (double scale : {0.5, 0.3, 0.2}) {
      tensor.view()->set_scale(scale);
      QVERIFY(!tensor.overview_labels().isEmpty());
      QCOMPARE(check_overview_geometry(tensor), tensor.overview_labels().size());
    }
  }

  // the overview's names: readable (12 px text whatever the zoom), never on top of one another nor of any node (view
  // pixels); how many there are
  static int check_overview_geometry(tsv::GraphPane& pane) {
    QList<QRect> boxes, nodes;
    for (QGraphicsItem* it : pane.scene()->items())
      if (it->data(0).isValid() && !it->data(1).isValid()) nodes << pane.view()->mapFromScene(it->sceneBoundingRect()).boundingRect();
    for (QGraphicsItem* it : pane.scene()->items())
      if (it->data(1).isValid()) {
        if (!(it->flags() & QGraphicsItem::ItemIgnoresTransformations)) return -1;
        const QSize size = it->boundingRect().size().toSize();  // in view pixels: the item ignores the zoom
        if (size.height() < 14) return -2;
        const QRect r(pane.view()->mapFromScene(it->pos()) - QPoint(size.width() / 2, size.height() / 2), size);
        const QRect inner = r.adjusted(1, 1, -1, -1);  // (a pixel of rounding between the scene and the view)
        for (const QRect& b : boxes + nodes)
          if (b.intersects(inner)) {
            qWarning("overview name at %d,%d %dx%d covers %d,%d %dx%d", r.x(), r.y(), r.width(), r.height(), b.x(), b.y(), b.width(), b.height());
            return -3;
          }
        boxes << r;
      }
    return int(boxes.size());
  }

  // the compare's numbers from two traces: the ratio is the second's warm median over the first's, calls that differ
  // at a position are not compared; the line diff keeps the longest common run of lines
  // ---- the rewrite stepper: per-rule hits, one layout per pass, the rule's source lines, the UOp diff

  // a call has one colour everywhere: the tensor graph's nodes it computes, its kernel-graph node, its swatch in the
  // schedule table and its Timings bar, all from viewer/model/call_color.h keyed by its schedule item
  void one_colour_per_call_everywhere() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(kernel_graph_trace(), &err), qPrintable(err));
    const QList<QColor> colors = tsv::call_colors(s);
    QCOMPARE(colors.size(), s.calls().size());
    QCOMPARE(colors, (QList<QColor>{tsv::call_color(0), tsv::call_color(1), tsv::call_color(2), tsv::call_color(0)}));
    QVERIFY(colors[0] != colors[1] && colors[1] != colors[2]);
    for (int ctx : {0, 2}) {
      QList<int> calls;
      const tsv::GraphInput g = tsv::GraphPane::build_kernel_graph(s, ctx, &calls);
      const tsv::GraphPane::Split split = tsv::GraphPane::kernel_split(s, ctx);
      QHash<int, QColor> fill;
      for (const auto& n : g.nodes) fill.insert(n.id, n.fill);
      for (int i = 0; i < calls.size(); ++i) {
        QCOMPARE(fill.value(i), colors[calls[i]]);  // the kernel graph (node i: item i)
        QCOMPARE(split.fill[i], colors[calls[i]]);     // the tensor graph
        QCOMPARE(split.calls[i], calls[i]);
      }
    }
    tsv::ScheduleModel schedule(&s);
    for (int r = 0; r < s.calls().size(); ++r)
      QCOMPARE(schedule.index(r, tsv::ScheduleModel::kName).data(Qt::DecorationRole).value<QColor>(), colors[r]);
    // the Timings pane paints each call's bar in its colour
    tsv::SelectionModel sel(&s);
    tsv::TimingsPane timings(&sel);
    timings.resize(1000, 300);
    const QImage img = timings.widget()->grab().toImage();
    const int h = timings.widget()->fontMetrics().height() + 8;
    for (int r = 0; r < s.calls().size(); ++r) {
      const int y = h + r * h + h / 2;
      bool found = false;
      for (int x = 0; x < img.width() && !found; ++x) found = img.pixelColor(x, y) == colors[r];
      QVERIFY2(found, qPrintable(QString("no %1 in the Timings row %2").arg(colors[r].name()).arg(r)));
    }
  }
};

QTEST_MAIN(TestViewerGraphs)
#include "test_viewer_graphs.moc"
