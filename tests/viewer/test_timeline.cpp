// The Timeline pane over real runs (softmax, a TinyJit loop, the training step): its spans are the trace's calls and
// contexts at their recorded times, a graph span holds exactly its kernels, the memory lane's peak is the one the
// trace's allocations and frees add up to, a click selects the call, selecting a call elsewhere outlines it here (and
// brings it into view), the wheel zooms and a drag pans, a trace without timestamps says so, and the training step
// draws in well under a second.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QElapsedTimer>
#include <QHash>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <algorithm>

#include "app/gui/main_window.h"
#include "test_env.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/timeline_model.h"
#include "viewer/panes/timeline_pane.h"

using tsv::TimelineSpan;

class TestTimeline : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  QString trace_of(const QString& example) {
    const QString t = dir_.filePath(example + ".json");
    if (QFile::exists(t)) return t;
    const ts_test::Result r =
        ts_test::run_process(ts_test::tinyscope_bin(), {"run", ts_test::source_dir() + "/resources/examples/" + example, "--json", t});
    if (r.code != 0) qWarning("%s", ts_test::why(r).constData());
    return t;
  }

 private slots:
  void spans_are_the_calls_and_contexts() {
    tsv::Session s;
    QVERIFY(s.load(trace_of("softmax.py")));
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    const tsv::TimelineModel& m = pane.model();
    QVERIFY(m.has_timestamps());
    int expected = 0;
    for (int i = 0; i < s.calls().size(); ++i) {
      const tsv::Call& c = s.calls()[i];
      QVERIFY(c.stamped());
      const int k = m.span_of_call(i);
      QVERIFY(k >= 0);
      const TimelineSpan& sp = m.spans()[k];
      QCOMPARE(sp.index, i);
      QCOMPARE(sp.begin, c.start);
      QCOMPARE(sp.end, c.start + c.seconds);
      QCOMPARE(m.lanes()[sp.lane].name, c.device);
      QCOMPARE(sp.kind, c.kind == "copy" ? TimelineSpan::Kind::Copy : TimelineSpan::Kind::Kernel);
      ++expected;
    }
    for (int i = 0; i < s.contexts().size(); ++i) {
      const tsv::Context& c = s.contexts()[i];
      QVERIFY(c.begin > 0 && c.end >= c.begin);
      const TimelineSpan& sp = m.spans()[m.span_of_context(i)];
      QCOMPARE(sp.begin, c.begin);
      ++expected;
      if (c.is_schedule()) {
        QCOMPARE(sp.kind, TimelineSpan::Kind::Schedule);
        QCOMPARE(sp.end, c.end);
        continue;
      }
      // a kernel's codegen runs up to its compile, and its compile is a span of its own
      QCOMPARE(sp.kind, TimelineSpan::Kind::Codegen);
      QCOMPARE(sp.end, c.compile_begin);
      const TimelineSpan& k = m.spans()[m.compile_span_of_context(i)];
      QCOMPARE(k.kind, TimelineSpan::Kind::Compile);
      QCOMPARE(k.begin, c.compile_begin);
      QCOMPARE(k.end, c.compile_end);
      ++expected;
    }
    QCOMPARE(m.spans().size(), expected);  // nothing else (softmax has no graph call)
    // a call's inputs come from the last call before it that wrote each buffer it reads
    int linked = 0;
    for (int i = 0; i < s.calls().size(); ++i) {
      QList<int> want;
      for (qint64 b : s.calls()[i].reads) {
        int last = -1;
        for (int j = 0; j < i; ++j)
          if (s.calls()[j].writes.contains(b)) last = j;
        if (last >= 0 && !want.contains(last)) want.push_back(last);
      }
      std::sort(want.begin(), want.end());
      QCOMPARE(m.writers_of(i), want);
      linked += !want.isEmpty();
    }
    QVERIFY(linked > 0);
    // the script's lines: a mark where each schedule a line asked for began
    QVERIFY(!m.markers().isEmpty());
    for (const tsv::TimelineMarker& mk : m.markers()) {
      QCOMPARE(mk.t, s.contexts()[mk.context].begin);
      QVERIFY(mk.label.startsWith("softmax.py:"));
    }
  }

  void graph_spans_hold_their_kernels() {
    tsv::Session s;
    QVERIFY(s.load(trace_of("train_jit.py")));
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    QHash<int, QList<int>> kernels;  // graph -> its calls
    for (int i = 0; i < s.calls().size(); ++i)
      if (s.calls()[i].graph > 0) kernels[s.calls()[i].graph].push_back(i);
    QVERIFY(!kernels.isEmpty());
    int graphs = 0;
    for (const TimelineSpan& g : pane.model().spans()) {
      if (g.kind != TimelineSpan::Kind::Graph) continue;
      ++graphs;
      const QList<int>& calls = kernels.value(g.graph);
      QCOMPARE(g.count, calls.size());
      double b = 1e300, e = 0;
      for (int i : calls) b = std::min(b, s.calls()[i].start), e = std::max(e, s.calls()[i].start + s.calls()[i].seconds);
      QCOMPARE(g.begin, b);
      QCOMPARE(g.end, e);
    }
    QCOMPARE(graphs, kernels.size());
  }

  void memory_peak_is_what_the_events_add_up_to() {
    tsv::Session s;
    QVERIFY(s.load(trace_of("train_jit.py")));
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    QVERIFY(!s.memory().isEmpty());
    QHash<QString, qint64> now, peak;
    QHash<QString, int> allocs;
    for (const tsv::MemoryEvent& e : s.memory()) {
      now[e.device] += e.alloc ? e.bytes : -e.bytes;
      QVERIFY(now[e.device] >= 0);
      peak[e.device] = std::max(peak[e.device], now[e.device]);
      allocs[e.device] += e.alloc;
    }
    QCOMPARE(pane.model().memory().size(), peak.size());
    for (const tsv::MemorySeries& m : pane.model().memory()) {
      QCOMPARE(m.peak, peak.value(m.device));
      QCOMPARE(m.bands.size(), allocs.value(m.device));
      QVERIFY(m.packed >= m.peak);
      // bands alive at once never overlap
      for (int a = 0; a < m.bands.size(); ++a)
        for (int b = a + 1; b < m.bands.size(); ++b) {
          const tsv::MemoryBand &x = m.bands[a], &y = m.bands[b];
          const bool together = x.alloc < y.free && y.alloc < x.free;
          const bool apart = x.offset + x.bytes <= y.offset || y.offset + y.bytes <= x.offset;
          QVERIFY2(!together || apart || x.bytes == 0 || y.bytes == 0, qPrintable(QStringLiteral("bands %1 and %2 overlap").arg(a).arg(b)));
        }
    }
  }

  void click_selects_and_selection_is_outlined() {
    tsv::Session s;
    QVERIFY(s.load(trace_of("softmax.py")));
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    pane.resize(1200, 420);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    const tsv::TimelineModel& m = pane.model();
    tsv::TimelineCanvas* canvas = pane.canvas();
    // the longest kernel, zoomed in so it is wide, then clicked
    int call = -1;
    for (int i = 0; i < s.calls().size(); ++i)
      if (s.calls()[i].kind == "kernel" && (call < 0 || s.calls()[i].seconds > s.calls()[call].seconds)) call = i;
    QVERIFY(call >= 0);
    const TimelineSpan& sp = m.spans()[m.span_of_call(call)];
    const double d = std::max(sp.end - sp.begin, 1e-7);
    canvas->set_range(sp.begin - d, sp.end + d);
    const QPoint at = canvas->point_of_span(m.span_of_call(call));
    QVERIFY(canvas->rect().contains(at));
    QVERIFY(canvas->tooltip_at(at).contains(s.calls()[call].display_name().toHtmlEscaped()));
    QTest::mouseClick(canvas, Qt::LeftButton, {}, at);
    QCOMPARE(sel.current().call, call);
    QCOMPARE(canvas->highlighted_span(), m.span_of_call(call));
    // another call selected elsewhere (far out of view): outlined here and brought into view
    const int last = int(s.calls().size()) - 1;
    QVERIFY(last != call);
    canvas->set_range(m.begin(), m.begin() + 1e-6);
    sel.select_call(last);
    const TimelineSpan& ls = m.spans()[m.span_of_call(last)];
    QCOMPARE(canvas->highlighted_span(), m.span_of_call(last));
    QVERIFY(ls.end >= canvas->range_begin() && ls.begin <= canvas->range_end());
    // selecting a kernel's context (the Contexts pane) outlines its first call
    const int ctx = s.kernel_context(s.calls()[call].program_key);
    QVERIFY(ctx >= 0);
    sel.select_context(ctx);
    QCOMPARE(canvas->highlighted_span(), m.span_of_call(s.calls_of(s.calls()[call].program_key).first()));
  }

  void wheel_zooms_and_drag_pans() {
    tsv::Session s;
    QVERIFY(s.load(trace_of("softmax.py")));
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    pane.resize(1000, 400);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    tsv::TimelineCanvas* c = pane.canvas();
    c->reset_view();
    const double w0 = c->range_end() - c->range_begin();
    const QPointF mid(c->width() * 0.6, 40);
    QWheelEvent wheel(mid, c->mapToGlobal(mid), {}, {0, 120}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(c, &wheel);
    const double w1 = c->range_end() - c->range_begin();
    QVERIFY(std::abs(w1 / w0 - 0.8) < 1e-9);  // one notch: 80% of the span, about the pointer
    // a drag of 100 px to the right moves the view back by 100 px of time
    const double v0 = c->range_begin(), per_px = w1 / (c->width() - 84);
    QTest::mousePress(c, Qt::LeftButton, {}, QPoint(400, 40));
    QMouseEvent move(QEvent::MouseMove, QPointF(500, 40), c->mapToGlobal(QPointF(500, 40)), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(c, &move);
    QTest::mouseRelease(c, Qt::LeftButton, {}, QPoint(500, 40));
    QVERIFY(std::abs(c->range_begin() - (v0 - 100 * per_px)) < per_px * 1e-6);
    QCOMPARE(sel.current().call, -1);  // a drag selects nothing
  }

  void older_trace_says_it_has_no_timestamps() {
    tsv::Session s;
    QVERIFY(s.load(ts_test::source_dir() + "/tests/viewer/data/seed_add.trace.json"));
    QVERIFY(!s.calls().isEmpty());
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    QVERIFY(!pane.model().has_timestamps());
    QVERIFY(pane.status_text().contains("no timestamps"));
  }

  // the window: the dock a tab beside Timings, File > Export timeline writing the Chrome trace of the trace shown
  void window_dock_and_export() {
    QCoreApplication::setApplicationName(QStringLiteral("test_timeline"));
    tsgui::MainWindow w(ts_test::source_dir() + "/resources/examples", /*restore_layout=*/false);
    QString err;
    QVERIFY2(w.open_trace(trace_of("softmax.py"), &err), qPrintable(err));
    QTRY_VERIFY(!w.session()->calls().isEmpty());
    auto* dock = w.findChild<QDockWidget*>(QStringLiteral("timeline"));
    QVERIFY(dock && dock->widget() && qobject_cast<tsv::TimelinePane*>(dock->widget()));
    QVERIFY(w.tabifiedDockWidgets(w.findChild<QDockWidget*>(QStringLiteral("timings"))).contains(dock));
    QVERIFY(qobject_cast<tsv::TimelinePane*>(dock->widget())->model().has_timestamps());
    QVERIFY(w.findChild<QAction*>(QStringLiteral("export_timeline")));
    const QString out = dir_.filePath("window.chrome.json");
    QVERIFY(w.export_timeline(out));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    int calls = 0;
    for (const QJsonValue& e : QJsonDocument::fromJson(f.readAll()).object().value("traceEvents").toArray())
      calls += e.toObject().value("ph") == "X" && (e.toObject().value("cat") == "kernel" || e.toObject().value("cat") == "copy");
    QCOMPARE(calls, w.session()->calls().size());
    QVERIFY(!w.export_timeline(dir_.filePath("no/such/dir/t.json")));
    // an older trace has no timestamps: the export says so and writes nothing
    QVERIFY(w.open_trace(ts_test::source_dir() + "/tests/viewer/data/seed_add.trace.json", &err));
    QTRY_VERIFY(!w.session()->calls().isEmpty() && !w.session()->calls().front().stamped());
    QVERIFY(!w.export_timeline(dir_.filePath("old.chrome.json")));
    QVERIFY(!QFile::exists(dir_.filePath("old.chrome.json")));
  }

  void training_step_draws_within_a_second() {
    tsv::Session s;
    const QString t = trace_of("train_step.py");
    tsv::SelectionModel sel(&s);
    tsv::TimelinePane pane(&sel);
    pane.resize(1400, 500);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(s.load(t));  // the pane rebuilds on loaded() and paints
    pane.canvas()->repaint();
    const double ms = double(clock.nsecsElapsed()) / 1e6;
    qInfo("train_step.py: %lld calls, %lld spans; load + build + paint %.1f ms (model and first paint %.1f ms, a paint %.1f ms)",
          static_cast<long long>(s.calls().size()), static_cast<long long>(pane.model().spans().size()), ms, pane.last_build_ms(),
          pane.canvas()->last_paint_ms());
    QVERIFY(pane.model().has_timestamps());
    QVERIFY(ms < 1000);
  }
};

QTEST_MAIN(TestTimeline)
#include "test_timeline.moc"
