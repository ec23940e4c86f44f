// The viewer's models over the checked-in trace and synthetic ones: the session (loading, async, bad input, saving),
// the models under QAbstractItemModelTester, timings' spread, the selection's links, the compare models, error lines.
#include "viewer_test_util.h"

namespace {
using ts_test::chain_of_kernels_trace;
using ts_test::fixture;
using ts_test::kernel_graph_trace;
using ts_test::source_dir;
using ts_test::tinyscope_bin;
using ts_test::trace_with_output;
}  // namespace

class TestViewerModels : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    ts_test::own_settings(QStringLiteral("test_viewer_models"));
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
    // a kernel of another name and no LINEAR item to say what it computes: paired by its kind and buffers only, and
    // marked so
    QVERIFY(m.matched(3));
    QVERIFY(!m.same_computation(3));
    QVERIFY(m.same_computation(2));
    QVERIFY2(m.index(3, tsv::CompareModel::kNameB).data(Qt::ToolTipRole).toString().contains("different things"), "");
    // warm runs on one side only: a ratio without a range
    QCOMPARE(m.ratio_range(1), (QPair<double, double>{0, 0}));
    QCOMPARE(m.headerData(tsv::CompareModel::kTimeB, Qt::Horizontal).toString(), QStringLiteral("Time on VULKAN"));
    const tsv::LineDiff d = tsv::diff_lines({"a", "b", "c", "d"}, {"a", "x", "c", "d", "e"});
    QCOMPARE(d.a_kept, (QList<bool>{true, false, true, true}));
    QCOMPARE(d.b_kept, (QList<bool>{true, false, true, true, false}));
    QCOMPARE(d.removed, 1);
    QCOMPARE(d.added, 2);
  }

  void error_line_is_parsed() {
    QString tb = "Traceback (most recent call last):\n  File \"/tmp/x/bad.py\", line 4, in <module>\n"
                 "  File \"/usr/lib/prelude.py\", line 99, in f\n";
    QCOMPARE(tsgui::RunController::error_line(tb, "/tmp/x/bad.py"), 4);
    QCOMPARE(tsgui::RunController::error_line(tb, "/tmp/other.py"), -1);
  }

  // the Timings axis: one slow warm run never sets it (the headline is a median); a call that dwarfs the rest is left
  // out of it (clipped and marked) while calls of merely different sizes are not; repeats that spread widely are noisy
  void timings_axis_is_robust_to_outliers() {
    QCOMPARE(tsv::TimingsModel::robust_scale({}), 0.0);
    QCOMPARE(tsv::TimingsModel::robust_scale({3e-6, 1e-6}), 3e-6);  // too few calls to call one an outlier
    QCOMPARE(tsv::TimingsModel::robust_scale({0.05, 0.09, 0.14, 0.68}), 0.68);
    QCOMPARE(tsv::TimingsModel::robust_scale({1, 1.2, 0.9, 1.1, 50}), 1.2);
    QCOMPARE(tsv::TimingsModel::robust_scale({1, 2, 4, 8, 16, 32}), 32.0);  // sizes that grow: no outlier
    QJsonDocument d = QJsonDocument::fromJson(ts_test::kernel_graph_trace());
    QJsonObject root = d.object();
    QJsonArray calls = root["calls"].toArray();
    auto timed = [&](int i, QJsonArray times) {
      QJsonObject c = calls[i].toObject();
      c["times"] = times;
      c["seconds"] = times[0];
      calls[i] = c;
    };
    timed(0, {2e-6, 1e-6, 1e-6, 1e-6, 1e-6});
    timed(1, {3e-6, 2e-6, 2.1e-6, 1.9e-6, 400e-6});  // one slow repeat
    timed(2, {2e-6, 1.5e-6, 1.5e-6, 1.6e-6, 1.5e-6});
    timed(3, {2e-6, 1e-6, 1.1e-6, 0.9e-6, 1e-6});
    root["calls"] = calls;
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(QJsonDocument(root).toJson(), &err), qPrintable(err));
    tsv::TimingsModel m(&s);
    QVERIFY(m.max_seconds() >= 400e-6);
    QCOMPARE(m.scale_seconds(), m.headline(1));  // the median of call 1's warm runs, not its slow one
    QVERIFY(m.noisy(1));
    QVERIFY(!m.noisy(0) && !m.noisy(2) && !m.noisy(3));
    QVERIFY(m.describe(1).contains("Noisy"));
    QVERIFY(!m.describe(0).contains("Noisy"));
  }
};

QTEST_MAIN(TestViewerModels)
#include "test_viewer_models.moc"
