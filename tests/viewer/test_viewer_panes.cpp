// The panes that follow the selection: contexts, schedule, source (script lines, assembly), values (read-back values,
// snapshots) and the rewrite stepper over real traces recorded with --trace matches.
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSlider>
#include <QSplitter>
#include <QTemporaryDir>

#include "viewer/panes/access_pane.h"
#include "viewer_test_util.h"

namespace {
using ts_test::chain_of_kernels_trace;
using ts_test::fixture;
using ts_test::kernel_graph_trace;
using ts_test::source_dir;
using ts_test::tinyscope_bin;
using ts_test::trace_with_output;
}  // namespace

class TestViewerPanes : public QObject {
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
  // the first step of any context that `want` (a step of the selected context) accepts: its context selected and the
  // pane at that step; -1 when none
  static int select_first_step(tsv::SelectionModel& sel, tsv::StepperPane& pane, const std::function<bool(int)>& want) {
    for (int c = 0; c < sel.session()->contexts().size(); ++c) {
      sel.select_context(c);
      for (int k = 0; k < pane.model()->step_count(); ++k)
        if (want(k)) {
          pane.set_step(k);
          return k;
        }
    }
    return -1;
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
    ts_test::own_settings(QStringLiteral("test_viewer_panes"));
  }

  // the Access pane follows the selected kernel: a slider per loop of its optimized AST but the lanes, the point moved
  // by them and by Play's step (the innermost loop that is not a lane first, carrying into the outer ones); nothing for
  // a copy
  void access_pane_follows_the_kernel() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(softmax_trace(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::AccessPane pane(&sel);
    int kernel = -1, copy = -1;
    for (int i = 0; i < s.calls().size(); ++i) {
      if (s.calls()[i].kind == "kernel" && kernel < 0) kernel = i;
      if (s.calls()[i].kind == "copy" && copy < 0) copy = i;
    }
    QVERIFY(kernel >= 0);
    sel.select_call(kernel);
    QVERIFY2(pane.title().startsWith(s.calls()[kernel].name), qPrintable(pane.title()));
    const int n = int(pane.model().ranges().size());
    QVERIFY(n >= 1);
    int lanes = 0;  // (drawn at once: no slider)
    for (const auto& r : pane.model().ranges()) lanes += r.type == "UPCAST" || r.type == "UNROLL";
    QCOMPARE(pane.findChildren<QSlider*>().size(), n - lanes);
    QCOMPARE(pane.point(), QList<qint64>(n, 0));
    pane.step();
    // the innermost loop of more than one value that is not a lane (the lanes are drawn at once) moved on
    QList<qint64> one(n, 0);
    for (int d = n - 1; d >= 0; --d) {
      const auto& r = pane.model().ranges()[d];
      if (r.type != "UPCAST" && r.type != "UNROLL" && r.size > 1) {
        one[d] = 1;
        break;
      }
    }
    QCOMPARE(pane.point(), one);
    pane.findChildren<QSlider*>().front()->setValue(int(pane.model().ranges().front().size - 1));
    QCOMPARE(pane.point().front(), pane.model().ranges().front().size - 1);
    pane.resize(600, 400);
    QImage img(pane.size(), QImage::Format_ARGB32);
    pane.render(&img);  // (draws the grids: the point's reads and writes)
    if (copy >= 0) {
      sel.select_call(copy);
      QVERIFY(pane.model().ranges().isEmpty());
    }
  }

  // Export's PNG frames: one per value of the loop Play walks, each different from the one before (the point moved);
  // the cap writes the first frames only and says so; the pane's own point stays
  void access_pane_exports_frames() {
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(softmax_trace(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::AccessPane pane(&sel);
    for (int i = 0; i < s.calls().size(); ++i)
      if (s.calls()[i].kind == "kernel") {
        sel.select_call(i);
        break;
      }
    const int loop = pane.play_loop();
    QVERIFY(loop >= 0);
    const qint64 n = pane.model().ranges()[loop].size;
    const QList<qint64> before = pane.point();
    QTemporaryDir dir;
    QString message;
    QVERIFY2(pane.export_frames(dir.filePath("all"), -1, &message, 200, QSize(640, 400)), qPrintable(message));
    const QStringList files = QDir(dir.filePath("all")).entryList({"access_*.png"}, QDir::Files, QDir::Name);
    QCOMPARE(qint64(files.size()), n);
    QImage last;
    for (const QString& f : files) {
      const QImage img(QDir(dir.filePath("all")).filePath(f));
      QCOMPARE(img.size(), QSize(640, 400));
      QVERIFY2(img != last, qPrintable(f + " is the frame before it"));
      last = img;
    }
    QCOMPARE(pane.point(), before);
    QVERIFY2(n > 2, "the cap needs a loop of more than two values");
    QVERIFY(pane.export_frames(dir.filePath("two"), -1, &message, 2, QSize(640, 400)));
    QCOMPARE(QDir(dir.filePath("two")).entryList({"access_*.png"}, QDir::Files).size(), 2);
    QVERIFY2(message.contains("only the first 2"), qPrintable(message));
  }

  // side by side: the matmul under NOOPT beside it under the default opts; wherever the first side's point is, the
  // second side's stores the same output element (each its own loops), and what the two read for it is the same; the
  // toggle and the end of the comparison take the second side away
  void access_panes_side_by_side() {
    auto record = [this](const QString& name, const QString& noopt) {
      const QString out = dir_.filePath(name);
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("DEV", "CPU");
      env.insert("NOOPT", noopt);
      p.setProcessEnvironment(env);
      p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/matmul.py", "--json", out});
      return p.waitForFinished(90000) && p.exitCode() == 0 ? out : QString();
    };
    tsv::Session a, b;
    QString err;
    QVERIFY2(a.load(record("mm_noopt.json", "1"), &err), qPrintable(err));
    QVERIFY2(b.load(record("mm_default.json", "0"), &err), qPrintable(err));
    tsv::SelectionModel sa(&a), sb(&b);
    tsv::AccessPanes panes(&sa);
    panes.resize(1200, 500);
    auto kernel = [](const tsv::Session& s) {
      for (int i = 0; i < s.calls().size(); ++i)
        if (s.calls()[i].kind == "kernel") return i;
      return -1;
    };
    sb.select_call(kernel(b));
    panes.set_compare(&sb, "NOOPT=1", "default");
    QVERIFY(panes.second());
    QVERIFY(panes.side_by_side());
    sa.select_call(kernel(a));
    tsv::AccessPane* one = panes.first();
    tsv::AccessPane* two = panes.second();
    QVERIFY(one->title().startsWith("NOOPT=1 · "));
    QVERIFY(two->title().startsWith("default · "));
    QVERIFY(one->model().ranges().size() != two->model().ranges().size() || one->model().ranges()[0].size != two->model().ranges()[0].size);
    // points of the first side: its first loop at a few values, the others at their ends
    const int n = int(one->model().ranges().size());
    int checked = 0;
    for (qint64 v : {qint64(0), qint64(1), one->model().ranges()[0].size - 1}) {
      QList<qint64> p(n, 0);
      p[0] = v;
      for (int d = 1; d < n; ++d) p[d] = one->model().ranges()[d].size - 1;
      one->set_point(p);
      const auto mine = one->written(), theirs = two->written();
      QVERIFY(mine.first >= 0);
      QCOMPARE(theirs, mine);
      QCOMPARE(two->point(), two->model().first_point_writing(theirs.first, theirs.second));  // (the first that does)
      QCOMPARE(one->model().reads_of_output(mine.first, mine.second), two->model().reads_of_output(theirs.first, theirs.second));
      ++checked;
    }
    QCOMPARE(checked, 3);
    panes.findChild<QCheckBox*>()->setChecked(false);
    QVERIFY(!panes.side_by_side());
    panes.set_compare(nullptr, {}, {});
    QVERIFY(!panes.second());
    QVERIFY(one->title().startsWith(a.calls()[kernel(a)].name));
  }

  // each buffer in the shape of the tensor it holds, its recorded values its cells' base: a 16x24 @ 24x8 matmul's
  // buffers are 16x8 (written), 16x24 and 24x8 grids; with --snapshots each grid holds the values a hand calculation
  // gives (the output after the kernel, the inputs as their copies wrote them), the largest value's cell the heat map's
  // high end and the smallest's its low end (faint); without snapshots the plain cells. A conv2d's 1x2x8x8 image is two
  // 8x8 slices, its 4x2x3x3 weights eight 3x3 ones, its one-element output no shape.
  void access_pane_tensor_shapes_and_values() {
    const QString py = dir_.filePath("mm_16_24_8.py");
    {
      QVERIFY(ts_test::write_file(py, "from tinygrad import Tensor\n"
              "a = Tensor([[float((i * 24 + k) % 7 - 3) for k in range(24)] for i in range(16)]).realize()\n"
              "b = Tensor([[float((k * 8 + j) % 5 - 2) for j in range(8)] for k in range(24)]).realize()\n"
              "print((a @ b).tolist()[0][:2])\n"));
    }
    auto record = [this](const QString& script, const QString& name, bool snapshots) {
      const QString out = dir_.filePath(name);
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("DEV", "CPU");
      p.setProcessEnvironment(env);
      QStringList args{"run", script, "--json", out};
      if (snapshots) args << "--snapshots";
      p.start(tinyscope_bin(), args);
      return p.waitForFinished(90000) && p.exitCode() == 0 ? out : QString();
    };
    auto kernel = [](const tsv::Session& s) {
      for (int i = 0; i < s.calls().size(); ++i)
        if (s.calls()[i].kind == "kernel") return i;
      return -1;
    };
    // the hand calculation: a, b and a @ b, row-major
    QVector<double> a(16 * 24), b(24 * 8), c(16 * 8, 0.0);
    for (int i = 0; i < 16; ++i)
      for (int k = 0; k < 24; ++k) a[i * 24 + k] = (i * 24 + k) % 7 - 3;
    for (int k = 0; k < 24; ++k)
      for (int j = 0; j < 8; ++j) b[k * 8 + j] = (k * 8 + j) % 5 - 2;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < 24; ++k) c[i * 8 + j] += a[i * 24 + k] * b[k * 8 + j];
    const QColor plain(0xf4, 0xf4, 0xf4), high(0xd7, 0x19, 0x1c), low(0x2c, 0x7b, 0xb6);
    for (const bool snapshots : {true, false}) {
      tsv::Session s;
      QString err;
      QVERIFY2(s.load(record(py, snapshots ? "mm_shapes_snap.json" : "mm_shapes.json", snapshots), &err), qPrintable(err));
      tsv::SelectionModel sel(&s);
      tsv::AccessPane pane(&sel);
      pane.resize(1000, 500);
      sel.select_call(kernel(s));
      QCOMPARE(pane.grids().size(), 3);
      const struct {
        int slot;
        qint64 rows, cols;
        const QVector<double>* values;
      } want[] = {{0, 16, 8, &c}, {1, 16, 24, &a}, {2, 24, 8, &b}};
      for (const auto& w : want) {
        const tsv::AccessPane::Grid* g = pane.grid(w.slot);
        QVERIFY(g);
        QCOMPARE(g->shape, (QList<qint64>{w.rows, w.cols}));
        QCOMPARE(g->rows, w.rows);
        QCOMPARE(g->cols, w.cols);
        QCOMPARE(g->slices, qint64(1));
        if (!snapshots) {
          QVERIFY(g->values.isEmpty());
          QCOMPARE(pane.base_color(w.slot, 0), plain);
          continue;
        }
        QCOMPARE(g->values, *w.values);
        const qint64 hi = std::max_element(w.values->begin(), w.values->end()) - w.values->begin();
        const qint64 lo = std::min_element(w.values->begin(), w.values->end()) - w.values->begin();
        QCOMPARE(pane.base_color(w.slot, hi), tsv::AccessPane::faint(high));
        QCOMPARE(pane.base_color(w.slot, lo), tsv::AccessPane::faint(low));
        QVERIFY(pane.base_color(w.slot, hi) != plain);
      }
      QImage img(pane.size(), QImage::Format_ARGB32);
      pane.render(&img);  // (draws the grids in their shapes)
    }
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(record(source_dir() + "/resources/examples/conv2d.py", "conv_shapes.json", true), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::AccessPane pane(&sel);
    sel.select_call(kernel(s));
    QCOMPARE(pane.grids().size(), 3);
    QVERIFY(pane.grid(0)->shape.isEmpty());  // (one element: drawn as today)
    QCOMPARE(pane.grid(1)->shape, (QList<qint64>{2, 8, 8}));
    QCOMPARE(pane.grid(1)->slices, qint64(2));
    QCOMPARE(pane.grid(2)->shape, (QList<qint64>{4, 2, 3, 3}));
    QCOMPARE(pane.grid(2)->slices, qint64(8));
    QCOMPARE(pane.grid(2)->rows, qint64(3));
    QVERIFY(!pane.grid(1)->values.isEmpty());
  }

  // one AST compiled twice in a run (in a NOOPT scope, then with the default opts): two kernel contexts of one program
  // key; each call selects the context that compiled what it ran, the source pane shows that program, and each
  // context selects its own call
  void one_key_two_programs() {
    QTemporaryDir dir;
    const QString script = dir.filePath("two_opts.py"), out = dir.filePath("two_opts.json");
    QVERIFY(ts_test::write_file(script, "from tinygrad import Tensor, Context\n"
            "a = Tensor.arange(64*64).reshape(64,64).float().contiguous().realize()\n"
            "with Context(NOOPT=1):\n  x = (a*2).sum(1).numpy()\n"
            "y = (a*2).sum(1).numpy()\n"));
    const ts_test::Result r = ts_test::run_process(tinyscope_bin(), {"run", script, "--json", out, "--dev", "CPU"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    tsv::Session s;
    tsv::SelectionModel sel(&s);
    tsv::SourcePane source(&sel);
    tsv::SchedulePane schedule(&sel);
    QVERIFY(s.load(out));
    QList<int> kernels;
    for (int i = 0; i < s.calls().size(); ++i)
      if (!s.calls()[i].program_key.isEmpty()) kernels << i;
    QCOMPARE(kernels.size(), 2);
    const tsv::Call &plain = s.calls()[kernels[0]], &opted = s.calls()[kernels[1]];
    QCOMPARE(plain.program_key, opted.program_key);
    QVERIFY(plain.applied_opts.isEmpty());
    QVERIFY(!opted.applied_opts.isEmpty());
    const int a = s.kernel_context(plain), b = s.kernel_context(opted);
    QVERIFY(a >= 0 && b >= 0 && a != b);
    QCOMPARE(s.contexts()[a].program.name, plain.name);
    QCOMPARE(s.contexts()[b].program.name, opted.name);
    QVERIFY(plain.name != opted.name);
    sel.select_call(kernels[1]);
    QCOMPARE(sel.current().context, b);
    QVERIFY2(source.text().contains(opted.name), qPrintable(source.text()));
    QVERIFY(source.title().contains("UNROLL"));
    sel.select_call(kernels[0]);
    QCOMPARE(sel.current().context, a);
    QVERIFY2(source.text().contains(plain.name), qPrintable(source.text()));
    QVERIFY(source.title().contains("no opts"));
    sel.select_context(b);
    QCOMPARE(sel.current().call, kernels[1]);
    sel.select_context(a);
    QCOMPARE(sel.current().call, kernels[0]);
    QCOMPARE(s.calls_of_context(a), QList<int>{kernels[0]});
    QCOMPARE(s.calls_of_context(b), QList<int>{kernels[1]});
    // the schedule marks the calls of the selected program only
    sel.select_call(kernels[1]);
    QCoreApplication::processEvents();
    QVERIFY(schedule.selectionModel()->isRowSelected(kernels[1], {}));
    QVERIFY(!schedule.selectionModel()->isRowSelected(kernels[0], {}));
  }

  // what the device's compiler reported of a kernel's machine code (a trace's "statistics", here written into the seed
  // trace's kernel context): in the source title's tooltip and above the kernel's assembly, in the compiler's words
  void compiler_statistics_in_the_source_pane() {
    QFile in(fixture());
    QVERIFY(in.open(QIODevice::ReadOnly));
    QJsonObject root = QJsonDocument::fromJson(in.readAll()).object();
    QJsonArray contexts = root["contexts"].toArray();
    int kernel_context = -1;
    for (int c = 0; c < contexts.size(); ++c)
      if (contexts[c].toObject()["kind"] == "kernel") {
        QJsonObject o = contexts[c].toObject();
        o["statistics"] = QJsonArray{QJsonArray{"Register Count", "42"}, QJsonArray{"Shared Memory Size", "0"}};
        contexts[c] = o;
        kernel_context = c;
      }
    QVERIFY(kernel_context >= 0);
    root["contexts"] = contexts;
    QTemporaryDir dir;
    const QString path = dir.filePath("stats.json");
    QVERIFY(ts_test::write_file(path, QJsonDocument(root).toJson()));
    tsv::Session s;
    QString err;
    QVERIFY2(s.load(path, &err), qPrintable(err));
    QCOMPARE(s.contexts()[kernel_context].statistics.size(), 2);
    tsv::SelectionModel sel(&s);
    tsv::SourcePane source(&sel);
    QSignalSpy wanted(&source, &tsv::SourcePane::assembly_wanted);
    sel.select_context(kernel_context);
    QVERIFY2(source.title_tip().contains("compiled: Register Count 42, Shared Memory Size 0"), qPrintable(source.title_tip()));
    QVERIFY(!source.text().contains("Register Count"));
    // the kernel's calls say so in the Timings pane's tooltip
    tsv::TimingsModel timings(&s);
    const QList<int> calls = s.calls_of_context(kernel_context);
    QVERIFY(!calls.isEmpty());
    QVERIFY2(timings.describe(calls[0]).contains("Compiled: Register Count 42, Shared Memory Size 0"), qPrintable(timings.describe(calls[0])));
    source.show_assembly(true);
    QCOMPARE(wanted.size(), 1);
    source.set_assembly(wanted[0][0].toString(), "OpCapability Shader\n");
    QCOMPARE(source.text(), QString("; the device's compiler reported of its machine code:\n; Register Count: 42\n; Shared Memory Size: 0\n;\nOpCapability Shader\n"));
    // a kernel whose compiler reported nothing: its assembly alone
    tsv::Session plain;
    QVERIFY(plain.load(fixture()));
    QVERIFY(plain.contexts()[kernel_context].statistics.isEmpty());
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
      // the program's graph: the output AST and what the renderer's own passes over the LINEAR made of it (the last pass)
      QSet<int> graph;
      QList<int> todo{c.passes[pass].after, c.passes.back().after};
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
        if ((op == "STORE" || op == "VSTORE") && text.contains("data0_") && text.contains(" = ")) ++stores;
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
    QVERIFY(ts_test::write_file(script, "from tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0])\nprint((a * 1).tolist())\n"));
    const QString path = record_matches(script, "times_one.json");
    QVERIFY(!path.isEmpty());
    tsv::Session s;
    QVERIFY(s.load(path));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1000, 700);
    const int step = select_first_step(sel, pane, [&](int k) {
      const tsv::Match& m = pane.model()->match(k);
      return m.rule == "x*1 -> x" && s.uop(m.before)->op == "MUL";
    });
    QVERIFY(step >= 0);
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

  // a linear pass (the CPU's "vector loads of grouped lanes" in the softmax): the UOp diff lists the programs it read
  // and made, a uop a line by id, so the lines both share are the uops it kept and the VLOADs are only on the right
  void stepper_uop_diff_of_a_linear_pass() {
    tsv::Session s;
    QVERIFY(!softmax_trace().isEmpty() && s.load(softmax_trace()));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(1000, 700);
    pane.show();
    const int step = select_first_step(sel, pane, [&](int k) {
      return pane.model()->pass_of(k).name == "vector loads of grouped lanes" && s.uop(pane.model()->match(k).before)->op == "LINEAR";
    });
    QVERIFY(step >= 0);
    const tsv::Match& m = pane.model()->match(step);
    const QStringList left = pane.uop_diff()->left()->toPlainText().split('\n'), right = pane.uop_diff()->right()->toPlainText().split('\n');
    QCOMPARE(left.size(), s.uop(m.before)->src.size());
    QCOMPARE(right.size(), s.uop(m.after)->src.size());
    QCOMPARE(left.first().section(' ', 0, 0, QString::SectionSkipEmpty).toInt(), s.uop(m.before)->src.first());
    QVERIFY(left.filter(" VLOAD ").isEmpty());
    QVERIFY2(!right.filter(" VLOAD ").isEmpty(), qPrintable(right.join('\n')));
    const QSet<QString> kept = QSet<QString>(left.begin(), left.end()) & QSet<QString>(right.begin(), right.end());
    QVERIFY(!kept.isEmpty() && kept.size() < left.size());
    // no graph of one LINEAR over every uop: a notice, nothing laid out, the UOp diff in front
    QVERIFY(!pane.busy());
    QCOMPARE(pane.notice(), QStringLiteral("vector loads of grouped lanes rewrote the kernel's linearized program, %1 uops into %2: the UOp "
                                           "diff below lists both, a uop a line")
                                .arg(left.size())
                                .arg(right.size()));
    QCOMPARE(pane.details()->currentWidget(), pane.uop_diff());
    const QList<int> linear_sizes = pane.graph_and_details()->sizes();
    QVERIFY2(linear_sizes.value(1) > 2 * linear_sizes.value(0), qPrintable(QString("%1 / %2").arg(linear_sizes.value(0)).arg(linear_sizes.value(1))));
    pane.set_step(step - 1);  // the step before: a graph again, in the room it had
    QTRY_VERIFY_WITH_TIMEOUT(!pane.busy(), 20000);
    QVERIFY(pane.notice().isEmpty());
    const QList<int> graph_sizes = pane.graph_and_details()->sizes();
    QVERIFY2(graph_sizes.value(0) > graph_sizes.value(1), qPrintable(QString("%1 / %2").arg(graph_sizes.value(0)).arg(graph_sizes.value(1))));
    if (qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) {
      pane.set_step(step);
      QTest::qWait(100);
      QVERIFY(pane.grab().save(qEnvironmentVariable("TS_VIEWER_SHOT_DIR") + "/stepper_linear_diff.png"));
    }
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
};

QTEST_MAIN(TestViewerPanes)
#include "test_viewer_panes.moc"
