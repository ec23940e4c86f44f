// The Roofline pane over real runs of resources/examples/softmax.py (Timing 5×), with the limits `tinyscope bench
// --limits` measured on this machine in the trace and without them: each dot where the trace's estimates and timings
// put it (computed here from the JSON: intensity = ops / mem, GFLOP/s = ops / the median of the warm runs), painted
// there in its schedule colour; a click on a dot selects its call, a call selected elsewhere is ringed; the roof is
// min(peak, bandwidth x intensity) and is painted there; the trace's "limits" is checked like every other member; and
// the window's Roofline tab beside Timings, with Run > Measure limits for this device (a child, cancellable) and Run
// again bringing the limits into the trace.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

#include "app/gui/limits_measure.h"
#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "viewer/model/ansi.h"
#include "viewer/model/call_color.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/panes/roofline_pane.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;

// what the trace says of one kernel call, computed here from its JSON
struct Expected {
  int call = -1;
  double intensity = 0, gflops = 0;
  QString colored_name;
};

double warm_median(QJsonArray times) {
  QList<double> t;
  for (int i = 1; i < times.size(); ++i) t << times[i].toDouble();  // the runs after the first
  std::sort(t.begin(), t.end());
  const qsizetype n = t.size();
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

QList<Expected> expected_dots(const QJsonObject& trace, QList<int>* copies) {
  QList<Expected> out;
  const QJsonArray calls = trace["calls"].toArray();
  for (int i = 0; i < calls.size(); ++i) {
    const QJsonObject c = calls[i].toObject();
    const QJsonObject e = c["estimates"].toObject();
    if (c["kind"].toString() != "kernel") {
      copies->push_back(i);
      continue;
    }
    const double ops = e["ops"].toDouble(), mem = e["mem"].toDouble();
    if (ops <= 0 || mem <= 0) continue;
    out.push_back({i, ops / mem, ops / warm_median(c["times"].toArray()) / 1e9, c["colored_name"].toString()});
  }
  return out;
}

// a pixel within `r` of `at` whose colour is within `tol` of `want` in each channel
bool near_colour(const QImage& img, QPointF at, const QColor& want, int r = 2, int tol = 40) {
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) {
      const QPoint p(int(std::lround(at.x())) + dx, int(std::lround(at.y())) + dy);
      if (!img.rect().contains(p)) continue;
      const QColor c = img.pixelColor(p);
      if (std::abs(c.red() - want.red()) <= tol && std::abs(c.green() - want.green()) <= tol && std::abs(c.blue() - want.blue()) <= tol)
        return true;
    }
  return false;
}

// the digits the pane writes a rate with
int digits(double v) { return v >= 100 ? 1 : v >= 1 ? 2 : 3; }

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

class TestRoofline : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString cache_;  // XDG_CACHE_HOME whose limits cache `tinyscope bench --limits` filled
  QByteArray with_, without_;

  QProcessEnvironment env_with_cache(const QString& home) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_CACHE_HOME", home);
    env.insert("DEBUG", "0");
    env.insert("DEV", "CPU");
    return env;
  }
  QByteArray record(const QString& home, const QString& name) {
    const QString out = dir_.filePath(name + ".json");
    QProcess p;
    p.setProcessEnvironment(env_with_cache(home));
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/softmax.py", "--json", out, "--repeat", "5"});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
    QFile f(out);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tinyscope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_roofline"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
    cache_ = dir_.filePath("cache");
    QProcess bench;
    bench.setProcessEnvironment(env_with_cache(cache_));
    bench.start(tinyscope_bin(), {"bench", "--limits"});
    QVERIFY(bench.waitForFinished(120000));
    QVERIFY2(bench.exitCode() == 0, bench.readAllStandardError().constData());
    with_ = record(cache_, "with");
    without_ = record(dir_.filePath("empty-cache"), "without");
    QVERIFY(!with_.isEmpty() && !without_.isEmpty());
    QVERIFY(QJsonDocument::fromJson(with_).object().contains("limits"));
    QVERIFY(!QJsonDocument::fromJson(without_).object().contains("limits"));
  }

  // each kernel call a dot at (ops / mem, ops / warm median), painted there in the colour the schedule gives its
  // name; the copy is listed as not plotted
  void dots_are_where_the_trace_puts_them() {
    const QJsonObject trace = QJsonDocument::fromJson(with_).object();
    QList<int> copies;
    const QList<Expected> want = expected_dots(trace, &copies);
    QCOMPARE(want.size(), 3);  // softmax: max, exp-sum and the normalizing kernel
    QVERIFY(!copies.isEmpty());
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(with_, &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::RooflinePane pane(&sel);
    pane.resize(900, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    const tsv::Roofline& r = pane.roofline();
    QCOMPARE(r.points.size(), want.size());
    QCOMPARE(r.skipped.size(), copies.size());
    for (int k = 0; k < copies.size(); ++k) {
      QCOMPARE(r.skipped[k].call, copies[k]);
      QVERIFY(r.skipped[k].why.contains("no ops"));
      QVERIFY2(pane.footer().contains("Not plotted: ") && pane.footer().contains(s.calls()[copies[k]].display_name() + " (a copy: no ops)"),
               qPrintable(pane.footer()));
      QCOMPARE(pane.dot_position(copies[k]), QPointF(-1, -1));
    }
    const QImage img = pane.plot()->grab().toImage();
    // the log axes: one decade is the same width everywhere
    const double decade = pane.position(10, 1).x() - pane.position(1, 1).x();
    QVERIFY(decade > 20);
    for (const Expected& e : want) {
      const tsv::RooflinePoint* p = r.point_of(e.call);
      QVERIFY(p);
      QVERIFY2(close(p->intensity, e.intensity), qPrintable(QString::number(p->intensity) + " " + QString::number(e.intensity)));
      QVERIFY2(close(p->gflops, e.gflops), qPrintable(QString::number(p->gflops) + " " + QString::number(e.gflops)));
      const QPointF at = pane.dot_position(e.call);
      QCOMPARE(at, pane.position(e.intensity, e.gflops));
      QVERIFY(pane.plot()->rect().contains(at.toPoint()));
      const QColor fill = tsv::call_colors(s).value(e.call);  // the call's one colour, as every pane gives it
      QVERIFY2(near_colour(img, at, fill, 1, 24), qPrintable(QStringLiteral("call %1 at %2,%3 is not painted %4").arg(e.call).arg(at.x()).arg(at.y()).arg(fill.name())));
      for (const Expected& o : want) {
        const QPointF d = pane.dot_position(o.call) - at;
        QVERIFY(std::abs(d.x() - decade * std::log10(o.intensity / e.intensity)) < 1e-6);
        QVERIFY(std::abs(-d.y() - (pane.position(1, 10).y() - pane.position(1, 100).y()) * std::log10(o.gflops / e.gflops)) < 1e-6);
      }
    }
  }

  // a click on a dot selects its call everywhere; a call selected elsewhere is ringed in the highlight colour
  void clicking_selects_and_selection_rings() {
    tsv::Session s;
    QVERIFY(s.load_data(with_));
    tsv::SelectionModel sel(&s);
    tsv::RooflinePane pane(&sel);
    pane.resize(900, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QList<int> copies;
    const QList<Expected> want = expected_dots(QJsonDocument::fromJson(with_).object(), &copies);
    for (const Expected& e : want) {
      sel.clear();
      const QPoint at = pane.position(e.intensity, e.gflops).toPoint();
      QTest::mouseClick(pane.plot(), Qt::LeftButton, Qt::NoModifier, at);
      QCOMPARE(sel.current().call, e.call);
      QCOMPARE(sel.current().program_key, s.calls()[e.call].program_key);
      QCOMPARE(pane.highlighted_call(), e.call);
    }
    // a click where there is no dot changes nothing
    const int before = sel.current().call;
    QTest::mouseClick(pane.plot(), Qt::LeftButton, Qt::NoModifier, QPoint(3, 3));
    QCOMPARE(sel.current().call, before);
    const QColor ring = pane.plot()->palette().color(QPalette::Highlight);
    for (const Expected& e : want) {
      sel.select_call(e.call);  // as the schedule or the timings would
      QCOMPARE(pane.highlighted_call(), e.call);
      const QImage img = pane.plot()->grab().toImage();
      const QPointF at = pane.dot_position(e.call);
      for (QPointF off : {QPointF(9, 0), QPointF(-9, 0), QPointF(0, 9), QPointF(0, -9)})
        QVERIFY2(near_colour(img, at + off, ring, 1, 30), qPrintable(QStringLiteral("no ring around call %1").arg(e.call)));
    }
    sel.select_call(copies.front());  // a copy has no dot: nothing is ringed
    QCOMPARE(pane.highlighted_call(), -1);
  }

  // the roof: min(peak, bandwidth x intensity) of the trace's limits, painted there, labelled with its source
  void roof_is_min_of_peak_and_bandwidth_times_intensity() {
    const QJsonObject lim = QJsonDocument::fromJson(with_).object()["limits"].toObject();
    const double bw = lim["bandwidth_gbs"].toDouble(), peak = lim["peak_gflops"].toDouble();
    QVERIFY(bw > 0 && peak > 0);
    tsv::Session s;
    QVERIFY(s.load_data(with_));
    tsv::SelectionModel sel(&s);
    tsv::RooflinePane pane(&sel);
    pane.resize(900, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(pane.roofline().has_roof());
    const double ridge = peak / bw;
    const QImage img = pane.plot()->grab().toImage();
    for (double x : {ridge / 8, ridge / 2, ridge, ridge * 2, ridge * 8, 0.3}) {
      QVERIFY2(close(pane.roof_at(x), std::min(peak, bw * x)), qPrintable(QString::number(x)));
      const QPointF at = pane.position(x, std::min(peak, bw * x));
      if (!pane.plot()->rect().adjusted(70, 20, -20, -40).contains(at.toPoint())) continue;  // off the axes
      QVERIFY2(near_colour(img, at, tsv::RooflinePane::roof_color(), 2, 60), qPrintable(QStringLiteral("no roof at x = %1").arg(x)));
    }
    const QString n = pane.notice();
    QVERIFY2(n.contains(QStringLiteral("measured by tinyscope bench on %1 on %2").arg(lim["measured_at"].toString().left(10), lim["machine"].toString())),
             qPrintable(n));
    QVERIFY(n.contains("bandwidth: " + lim["bandwidth_label"].toString()));
    QVERIFY(n.contains("peak: " + lim["peak_label"].toString()));
    QVERIFY(n.contains(QString::number(peak, 'f', digits(peak)) + " GFLOP/s") && n.contains(QString::number(bw, 'f', digits(bw)) + " GB/s"));
  }

  // without limits in the trace the kernels are placed all the same, and the pane says how to measure them
  void without_limits_the_kernels_are_placed_and_the_pane_says_so() {
    tsv::Session s;
    QVERIFY(s.load_data(without_));
    tsv::SelectionModel sel(&s);
    tsv::RooflinePane pane(&sel);
    pane.resize(900, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(!pane.roofline().has_roof());
    QCOMPARE(pane.roof_at(1.0), 0.0);
    QVERIFY2(pane.notice().contains("No measured limits for CPU: run tinyscope bench --limits --dev CPU (or Run > Measure limits for "
                                    "this device)"),
             qPrintable(pane.notice()));
    QList<int> copies;
    const QList<Expected> want = expected_dots(QJsonDocument::fromJson(without_).object(), &copies);
    QCOMPARE(pane.roofline().points.size(), want.size());
    const QImage img = pane.plot()->grab().toImage();
    for (const Expected& e : want) {
      QVERIFY(close(pane.roofline().point_of(e.call)->gflops, e.gflops));
      QTest::mouseClick(pane.plot(), Qt::LeftButton, Qt::NoModifier, pane.dot_position(e.call).toPoint());
      QCOMPARE(sel.current().call, e.call);
    }
    // no roof is painted anywhere
    bool red = false;
    for (int y = 0; y < img.height() && !red; ++y)
      for (int x = 0; x < img.width() && !red; ++x) {
        const QColor c = img.pixelColor(x, y);
        red = std::abs(c.red() - 0xd0) < 12 && std::abs(c.green() - 0x24) < 12 && std::abs(c.blue() - 0x24) < 12;
      }
    QVERIFY(!red);
  }

  // the trace's "limits" is checked as the rest of it: a roof of zero, a missing label, a wrong type are refused
  void trace_check_refuses_bad_limits() {
    QJsonObject doc = QJsonDocument::fromJson(with_).object();
    auto refused = [&](const QJsonValue& limits, const QString& error_has) {
      QJsonObject d = doc;
      d["limits"] = limits;
      tsv::Session s;
      QString err;
      if (s.load_data(QJsonDocument(d).toJson(QJsonDocument::Compact), &err)) return QStringLiteral("loaded");
      return err.contains(error_has) ? QString() : err;
    };
    QJsonObject l = doc["limits"].toObject();
    QJsonObject zero = l;
    zero["bandwidth_gbs"] = 0;
    QCOMPARE(refused(zero, "limits.bandwidth_gbs: 0 is not a figure above 0"), QString());
    QJsonObject no_label = l;
    no_label.remove("peak_label");
    QCOMPARE(refused(no_label, "limits: the key \"peak_label\" is missing"), QString());
    QJsonObject text = l;
    text["peak_gflops"] = "fast";
    QCOMPARE(refused(text, "limits.peak_gflops: expected a number"), QString());
    QCOMPARE(refused(QJsonArray{1, 2}, "limits: expected an object"), QString());
    tsv::Session s;
    QVERIFY(s.load_data(with_));
    QCOMPARE(s.limits().bandwidth_gbs, l["bandwidth_gbs"].toDouble());
    QCOMPARE(s.limits().peak_label, l["peak_label"].toString());
  }

  // --pane roofline puts the tab in front for a screenshot; an unknown pane is an error naming those there are
  void pane_option_raises_the_roofline_tab() {
    const QString trace = dir_.filePath("with.json"), shot = dir_.filePath("roof.png");
    QProcessEnvironment env = env_with_cache(cache_);
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir_.path());
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(tinyscope_bin(), {trace, "--pane", "nosuch", "--screenshot", shot});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains("--pane nosuch: no such pane") && err.contains("roofline"), qPrintable(err));
    QVERIFY(!QFile::exists(shot));
    p.start(tinyscope_bin(), {trace, "--pane", "Roofline", "--screenshot", shot});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QCOMPARE(QImage(shot).size(), QSize(1600, 1000));
  }

  // the window: Roofline is a tab beside Timings; Run > Measure limits for this device runs `tinyscope bench
  // --limits` in a child (Cancel leaves the cache as it was), the pane says the figures are in the cache and not in
  // the trace, and Run again brings them into the trace and the roof into the pane
  void window_measures_limits_and_runs_again() {
    const QByteArray saved = qgetenv("XDG_CACHE_HOME");
    const QString home = dir_.filePath("window-cache");
    qputenv("XDG_CACHE_HOME", home.toLocal8Bit());  // the children the window starts inherit it
    {
      tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
      w.controller()->set_program(tinyscope_bin());
      QVERIFY(w.set_device("CPU"));
      w.open_script(source_dir() + "/resources/examples/softmax.py");
      auto* timings = w.findChild<QDockWidget*>("timings");
      auto* roof = w.findChild<QDockWidget*>("roofline");
      QVERIFY(timings && roof);
      QCOMPARE(roof->widget(), static_cast<QWidget*>(w.roofline()));
      QVERIFY(w.tabifiedDockWidgets(timings).contains(roof));
      QAction* measure = nullptr;
      for (auto* a : w.findChildren<QAction*>())
        if (a->text() == "Measure limits for this device") measure = a;
      QVERIFY(measure);

      QSignalSpy measured(w.limits_measure(), &tsgui::LimitsMeasure::finished);
      // cancelled: nothing is written
      measure->trigger();
      QVERIFY(w.limits_measure()->running());
      QVERIFY(!w.limits_measure()->isHidden());  // the busy bar and Cancel in the status bar
      w.limits_measure()->cancel();
      QVERIFY(measured.count() == 1 || measured.wait(10000));
      QCOMPARE(measured.front().at(0).toBool(), false);
      QVERIFY(measured.front().at(2).toString().startsWith("cancelled"));
      QVERIFY(!QFile::exists(home + "/tinyscope/limits.json"));
      QVERIFY(w.roofline()->measured_note().isEmpty());
      measured.clear();

      measure->trigger();
      QVERIFY(measured.wait(120000));
      QCOMPARE(measured.front().at(0).toBool(), true);
      QCOMPARE(measured.front().at(1).toString(), QStringLiteral("CPU"));
      QVERIFY(QFile::exists(home + "/tinyscope/limits.json"));
      QVERIFY(w.limits_measure()->isHidden());
      const QString note = w.roofline()->measured_note();
      QVERIFY2(note.contains("not in this trace") && note.contains(measured.front().at(2).toString()), qPrintable(note));
      QVERIFY(!w.roofline()->roofline().has_roof());

      QPushButton* again = nullptr;
      for (auto* b : w.roofline()->findChildren<QPushButton*>())
        if (b->text() == "Run again") again = b;
      QVERIFY(again && !again->isHidden());
      QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
      QTest::mouseClick(again, Qt::LeftButton);
      QVERIFY(done.wait(120000));
      QVERIFY(done.front().at(0).toBool());
      QVERIFY(w.session()->limits().valid());
      QVERIFY(w.roofline()->roofline().has_roof());
      QVERIFY(w.roofline()->measured_note().isEmpty());
      QCOMPARE(w.roofline()->roofline().points.size(), 3);
    }
    if (saved.isNull()) qunsetenv("XDG_CACHE_HOME");
    else qputenv("XDG_CACHE_HOME", saved);
  }
};

QTEST_MAIN(TestRoofline)
#include "test_roofline.moc"
