// tinyscope report: the page it writes for an example, opened in headless Chromium. The DOM Chromium built has every
// section, graphs with a node per call (kernel graph) and per tensor node (tensor graph), and each call's times equal
// to the ones computed here from the saved trace, read with QJsonDocument alone (not through the viewer's models); the
// screenshot is a picture, not a blank page. Failing runs exit non-zero, say why, and leave no report behind.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtCore/QSet>
#include <QtCore/QStandardPaths>
#include <QtCore/QTemporaryDir>
#include <QtGui/QImage>
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>

#include "test_env.h"

namespace {

using ts_test::source_dir;
using ts_test::tinyscope_bin;

using ts_test::Result;
using ts_test::why;

Result run_process(const QString& program, const QStringList& args, const QMap<QString, QString>& extra_env = {}) {
  return ts_test::run_process(program, args, ts_test::env_of(extra_env));
}

Result report(const QStringList& args) { return run_process(tinyscope_bin(), QStringList{"report"} + args, {{"DEV", "CPU"}}); }

QString chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (const QString p = QStandardPaths::findExecutable(name); !p.isEmpty()) return p;
  return {};
}

// ---- the trace, read here on its own -------------------------------------------------------------------------------

QJsonObject read_json(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

// the headline time: the median of the runs after the first when there are two or more timings, else the one run
double warm_median(const QJsonObject& call) {
  QList<double> t;
  for (const auto& v : call["times"].toArray()) t << v.toDouble();
  if (t.size() < 2) return call["seconds"].toDouble();
  t.removeFirst();
  std::sort(t.begin(), t.end());
  const qsizetype n = t.size();
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

QString plain(QString s) { return s.remove(QRegularExpression("\x1b\\[[0-9;]*m")).simplified(); }

// the schedule contexts calls are numbered by (schedule_index): those with a "linear"
QJsonArray schedules(const QJsonObject& trace) {
  QJsonArray out;
  for (const auto& v : trace["contexts"].toArray())
    if (v.toObject()["kind"].toString() == "schedule" && v.toObject().contains("linear")) out << v;
  return out;
}

// the tensor nodes under a schedule's roots (each uop's src, the ones the trace has)
QSet<int> reachable(const QJsonObject& trace, const QJsonArray& roots) {
  const QJsonObject uops = trace["uops"].toObject();
  QSet<int> seen;
  QList<int> todo;
  for (const auto& r : roots) todo << r.toInt();
  while (!todo.isEmpty()) {
    const int id = todo.takeLast();
    if (seen.contains(id) || !uops.contains(QString::number(id))) continue;
    seen.insert(id);
    for (const auto& s : uops[QString::number(id)].toObject()["src"].toArray()) todo << s.toInt();
  }
  return seen;
}

// the buffers a schedule's items read before an earlier item of it wrote them (a kernel or copy writes bufs[0])
int input_buffers(const QJsonArray& linear) {
  QSet<int> written, inputs;
  for (const auto& iv : linear) {
    const QJsonArray bufs = iv.toObject()["bufs"].toArray();
    for (qsizetype k = 1; k < bufs.size(); ++k)
      if (!written.contains(bufs[k].toInt())) inputs.insert(bufs[k].toInt());
    if (!bufs.isEmpty()) written.insert(bufs[0].toInt());
  }
  return inputs.size();
}

bool same(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)) + 1e-18; }

// ---- the DOM Chromium made of the page -------------------------------------------------------------------------------

QString unescape(QString s) {
  s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&nbsp;", " ");
  return s.replace("&amp;", "&");
}
QString text_of(QString html) { return unescape(html.remove(QRegularExpression("<[^>]*>"))); }

QString section(const QString& dom, const QString& id) {
  const qsizetype at = dom.indexOf(QStringLiteral("<section id=\"%1\"").arg(id));
  if (at < 0) return {};
  const qsizetype end = dom.indexOf("</section>", at);
  return dom.mid(at, end < 0 ? -1 : end - at);
}

struct Row {
  int call = -1;
  QString html;
  QString attrs;  // the row's other attributes
};
QList<Row> rows(const QString& html) {
  QList<Row> out;
  static const QRegularExpression re("<tr data-call=\"(\\d+)\"([^>]*)>(.*?)</tr>", QRegularExpression::DotMatchesEverythingOption);
  for (auto it = re.globalMatch(html); it.hasNext();) {
    const auto m = it.next();
    out.push_back({m.captured(1).toInt(), m.captured(3), m.captured(2)});
  }
  return out;
}
QList<double> seconds_in(const QString& html) {
  QList<double> out;
  static const QRegularExpression re("data-seconds=\"([^\"]+)\"");
  for (auto it = re.globalMatch(html); it.hasNext();) out << it.next().captured(1).toDouble();
  return out;
}
QString first_name_cell(const QString& row) {
  static const QRegularExpression re("<td class=\"name\">(.*?)</td>", QRegularExpression::DotMatchesEverythingOption);
  return text_of(re.match(row).captured(1)).simplified();
}

struct Figure {
  int schedule = -1, calls = -1;
  QString html;
};
QList<Figure> figures(const QString& sec) {
  QList<Figure> out;
  static const QRegularExpression re("<figure data-schedule=\"(\\d+)\"(?: data-calls=\"(\\d+)\")?>(.*?)</figure>",
                                     QRegularExpression::DotMatchesEverythingOption);
  for (auto it = re.globalMatch(sec); it.hasNext();) {
    const auto m = it.next();
    out.push_back({m.captured(1).toInt(), m.captured(2).isEmpty() ? -1 : m.captured(2).toInt(), m.captured(3)});
  }
  return out;
}
// the drawn nodes of a Graphviz SVG: their names (n<id>, as GraphInput::to_dot names them) and fills
struct Node {
  int id;
  QString fill;
};
QList<Node> svg_nodes(const QString& html) {
  QList<Node> out;
  static const QRegularExpression re("<g [^>]*class=\"node\"[^>]*>\\s*<title>n(-?\\d+)</title>\\s*<path fill=\"([^\"]*)\"",
                                     QRegularExpression::DotMatchesEverythingOption);
  for (auto it = re.globalMatch(html); it.hasNext();) {
    const auto m = it.next();
    out.push_back({m.captured(1).toInt(), m.captured(2)});
  }
  return out;
}

}  // namespace

class TestReport : public QObject {
  Q_OBJECT

  QString browser_;
  QTemporaryDir dir_;

  // Chromium's DOM of the page (and its screenshot at 1280 px wide into `png`, when given)
  QString render(const QString& html, const QString& png = {}) {
    const QString profile = dir_.filePath("chromium-profile");
    QStringList base = {"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile};
    const QString url = QUrl::fromLocalFile(QFileInfo(html).absoluteFilePath()).toString();
    if (!png.isEmpty()) {
      const Result shot = run_process(browser_, base + QStringList{"--screenshot=" + png, "--window-size=1280,4000", url});
      if (shot.code != 0 || !QFileInfo::exists(png)) qWarning("%s", why(shot).constData());
    }
    const Result dom = run_process(browser_, base + QStringList{"--dump-dom", url});
    if (dom.code != 0) qWarning("%s", why(dom).constData());
    return dom.out;
  }

  // the timings section against the trace, call by call
  // one colour per call, as the window gives it (viewer/model/call_color.h): the schedule's swatch is the timings'
  // swatch and bar; calls at the same place of their schedules share it, calls at different places (fewer than twelve,
  // the palette's size) do not
  void check_call_colours(const QString& dom, const QJsonObject& trace) {
    static const QRegularExpression sw_re("class=\"sw\" style=\"background:(#[0-9a-f]{6})\"");
    const QList<Row> sched = rows(section(dom, "schedule")), times = rows(section(dom, "timings"));
    const QJsonArray calls = trace["calls"].toArray(), scheds = schedules(trace);
    QCOMPARE(sched.size(), calls.size());
    QCOMPARE(times.size(), calls.size());
    QList<int> item;
    QHash<int, int> seen;
    for (const auto& v : calls) {
      const int k = v.toObject()["schedule_index"].toInt();
      const int n = seen.value(k, 0);
      seen.insert(k, n + 1);
      const int items = k < scheds.size() ? int(scheds[k].toObject()["linear"].toArray().size()) : 0;
      item << (items > 0 ? n % items : n);
    }
    QStringList colour;
    for (qsizetype i = 0; i < calls.size(); ++i) {
      const QString a = sw_re.match(sched[i].html).captured(1), b = sw_re.match(times[i].html).captured(1);
      QVERIFY2(!a.isEmpty() && a == b, qPrintable(QStringLiteral("call %1: %2 in the schedule, %3 in the timings").arg(i).arg(a, b)));
      colour << a;
    }
    for (qsizetype i = 0; i < calls.size(); ++i)
      for (qsizetype j = 0; j < i; ++j)
        if (item[i] < 12 && item[j] < 12)
          QVERIFY2((item[i] == item[j]) == (colour[i] == colour[j]),
                   qPrintable(QStringLiteral("calls %1 and %2: items %3 and %4, colours %5 and %6").arg(i).arg(j).arg(item[i]).arg(item[j]).arg(colour[i], colour[j])));
  }

  void check_timings(const QString& dom, const QJsonObject& trace) {
    const QJsonArray calls = trace["calls"].toArray();
    const QList<Row> rs = rows(section(dom, "timings"));
    QCOMPARE(rs.size(), calls.size());
    double total = 0;
    for (qsizetype i = 0; i < rs.size(); ++i) {
      const QJsonObject c = calls[i].toObject();
      QCOMPARE(rs[i].call, int(i));
      QCOMPARE(first_name_cell(rs[i].html), plain(c["name"].toString()));
      const QList<double> t = seconds_in(rs[i].html);  // the headline, then the first run
      QCOMPARE(t.size(), 2);
      QVERIFY2(same(t[0], warm_median(c)), qPrintable(QStringLiteral("call %1: %2 on the page, %3 in the trace").arg(i).arg(t[0]).arg(warm_median(c))));
      QVERIFY2(same(t[1], c["seconds"].toDouble()), qPrintable(QStringLiteral("call %1's first run").arg(i)));
      total += warm_median(c);
    }
    static const QRegularExpression total_re("<tr class=\"total\">(.*?)</tr>", QRegularExpression::DotMatchesEverythingOption);
    const QList<double> tt = seconds_in(total_re.match(section(dom, "timings")).captured(1));
    QVERIFY(!tt.isEmpty());
    QVERIFY2(same(tt[0], total) || std::abs(tt[0] - total) < 1e-15, qPrintable(QStringLiteral("total %1 vs %2").arg(tt[0]).arg(total)));
  }

  // the graphs: a kernel-graph node per call of the schedule plus one per input buffer; a tensor-graph node per
  // tensor node under its roots, filled by the call computing it (one fill per call)
  void check_graphs(const QString& dom, const QJsonObject& trace) {
    const QJsonArray scheds = schedules(trace), calls = trace["calls"].toArray();
    const QList<Figure> kg = figures(section(dom, "kernel-graph"));
    int with_linear = 0;
    for (const auto& s : scheds) with_linear += !s.toObject()["linear"].toArray().isEmpty();
    QCOMPARE(kg.size(), std::min(with_linear, 24));
    for (const Figure& f : kg) {
      const QJsonArray linear = scheds[f.schedule].toObject()["linear"].toArray();
      int ran = 0;
      for (const auto& c : calls) ran += c.toObject()["schedule_index"].toInt() == f.schedule;
      QVERIFY2(f.html.contains("<svg"), qPrintable(QStringLiteral("kernel graph %1 has no <svg>").arg(f.schedule)));
      const QList<Node> nodes = svg_nodes(f.html);
      const auto items = std::count_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.id >= 0 && n.id < 1000000; });
      QCOMPARE(int(items), ran);
      QCOMPARE(int(items), int(linear.size()));
      QCOMPARE(int(nodes.size() - items), input_buffers(linear));
      QCOMPARE(int(f.html.count("class=\"node\"")), int(nodes.size()));
    }
    const QList<Figure> tg = figures(section(dom, "tensor-graph"));
    QVERIFY(!tg.isEmpty());
    for (const Figure& f : tg) {
      const QJsonObject sc = scheds[f.schedule].toObject();
      const QSet<int> want = reachable(trace, sc["tensor_graph"].toArray());
      QVERIFY2(f.html.contains("<svg"), qPrintable(QStringLiteral("tensor graph %1 has no <svg>").arg(f.schedule)));
      const QList<Node> nodes = svg_nodes(f.html);
      QSet<int> got;
      for (const Node& n : nodes) got.insert(n.id);
      QCOMPARE(got, want);
      QCOMPARE(int(f.html.count("class=\"node\"")), int(want.size()));
      // a node's fill is the first call computing it: one fill per call, and two calls never share one
      QHash<int, int> first_item;
      const QJsonArray linear = sc["linear"].toArray();
      for (qsizetype i = 0; i < linear.size(); ++i)
        for (const auto& m : linear[i].toObject()["members"].toArray())
          if (!first_item.contains(m.toInt())) first_item.insert(m.toInt(), int(i));
      QHash<int, QString> fill_of_item;
      for (const Node& n : nodes) {
        if (!first_item.contains(n.id)) continue;
        const int item = first_item[n.id];
        if (!fill_of_item.contains(item)) fill_of_item.insert(item, n.fill);
        QCOMPARE(n.fill, fill_of_item[item]);
      }
      if (linear.size() <= 12) QCOMPARE(int(QSet<QString>(fill_of_item.begin(), fill_of_item.end()).size()), int(fill_of_item.size()));
    }
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    browser_ = chromium();
    if (browser_.isEmpty())
      QFAIL("Chromium is not installed: this test renders the report in headless Chromium; `make deps` installs it");
  }

  void report_of_a_script_data() {
    QTest::addColumn<QString>("example");
    QTest::newRow("softmax") << "softmax.py";   // one schedule of a copy and three kernels
    QTest::newRow("tutorial") << "tutorial.py";  // three schedules, buffers from earlier ones
  }
  void report_of_a_script() {
    QFETCH(QString, example);
    const QString script = source_dir() + "/resources/examples/" + example;
    const QString html = dir_.filePath(example + ".html"), trace_path = dir_.filePath(example + ".trace.json");
    const Result r = report({script, "-o", html, "--save-trace", trace_path});
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(QFileInfo::exists(html) && QFileInfo::exists(trace_path), why(r).constData());
    const QJsonObject trace = read_json(trace_path);
    QVERIFY(!trace["calls"].toArray().isEmpty());

    const QString png = dir_.filePath(example + ".png");
    const QString dom = render(html, png);
    QVERIFY2(dom.contains("</html>"), "Chromium gave no DOM");
    for (const char* id : {"summary", "script", "tensor-graph", "kernel-graph", "schedule", "sources", "timings"})
      QVERIFY2(dom.contains(QStringLiteral("<section id=\"%1\">").arg(id)), id);
    QVERIFY(!dom.contains("<section id=\"compare\">"));
    // self-contained: nothing fetched from anywhere
    QVERIFY(!dom.contains("src=\"http") && !dom.contains("href=\"http") && !dom.contains("<script"));

    // the summary: the counts, what the script printed (the report passes it on to stdout too)
    const QString summary = section(dom, "summary");
    const QJsonArray calls = trace["calls"].toArray();
    int kernels = 0, copies = 0;
    for (const auto& c : calls) kernels += c.toObject()["kind"] == "kernel", copies += c.toObject()["kind"] == "copy";
    QVERIFY2(summary.contains(QStringLiteral("data-schedules=\"%1\" data-kernels=\"%2\" data-copies=\"%3\"")
                                  .arg(schedules(trace).size()).arg(kernels).arg(copies)),
             qPrintable(summary));
    QVERIFY(summary.contains("CPU"));
    static const QRegularExpression printed_re("<pre class=\"result\" id=\"printed\">(.*?)</pre>", QRegularExpression::DotMatchesEverythingOption);
    QVERIFY(!r.out.trimmed().isEmpty());
    QCOMPARE(text_of(printed_re.match(summary).captured(1)).trimmed(), r.out.trimmed());

    // the script's text, line by line
    QFile f(script);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString script_text = text_of(section(dom, "script"));
    for (const QString& line : QString::fromUtf8(f.readAll()).split('\n'))
      if (!line.trimmed().isEmpty()) QVERIFY2(script_text.contains(line), qPrintable(line));

    // the schedule: a row per call, in order, named as the trace names it
    const QList<Row> sched = rows(section(dom, "schedule"));
    QCOMPARE(sched.size(), calls.size());
    for (qsizetype i = 0; i < sched.size(); ++i) QCOMPARE(first_name_cell(sched[i].html), plain(calls[i].toObject()["name"].toString()));
    check_call_colours(dom, trace);

    // every kernel's program has its source
    const QString sources = section(dom, "sources");
    for (const auto& c : calls)
      if (c.toObject()["kind"] == "kernel")
        QVERIFY2(sources.contains(QStringLiteral("data-program=\"%1\"").arg(c.toObject()["program_key"].toString().toHtmlEscaped())),
                 qPrintable(c.toObject()["name"].toString()));
    QVERIFY(sources.contains("<details") && sources.contains("<pre class=\"src\">"));

    check_timings(dom, trace);
    check_graphs(dom, trace);

    // the screenshot is a picture of the page, not one colour
    QImage shot(png);
    QVERIFY2(!shot.isNull(), "Chromium wrote no screenshot");
    QCOMPARE(shot.width(), 1280);
    const QRgb bg = shot.pixel(0, 0);
    qint64 differ = 0;
    QSet<QRgb> colours;
    for (int y = 0; y < shot.height(); y += 2)
      for (int x = 0; x < shot.width(); x += 2) {
        const QRgb p = shot.pixel(x, y);
        differ += p != bg;
        if (colours.size() < 1000) colours.insert(p);
      }
    QVERIFY2(differ > qint64(shot.width()) * shot.height() / 4 / 100, "the screenshot is (nearly) blank");
    QVERIFY2(colours.size() > 16, "the screenshot has hardly any colours");

    // a report of the saved trace has the same figures
    const QString again = dir_.filePath(example + ".again.html");
    const Result r2 = report({trace_path, "-o", again});
    QVERIFY2(r2.code == 0, why(r2).constData());
    QFile a(again);
    QVERIFY(a.open(QIODevice::ReadOnly));
    const QString page = QString::fromUtf8(a.readAll());
    check_timings(page, trace);
  }

  void compare_with_another_device() {
    const QString script = source_dir() + "/resources/examples/softmax.py";
    const QString html = dir_.filePath("compare.html"), trace_path = dir_.filePath("cmp.json");
    const Result r = report({script, "-o", html, "--save-trace", trace_path, "--compare", "INTERP"});
    QVERIFY2(r.code == 0, why(r).constData());
    // the second device ran after the first one
    QVERIFY2(r.err.indexOf("on CPU") >= 0 && r.err.indexOf("on CPU") < r.err.indexOf("on INTERP"), why(r).constData());
    const QJsonObject ta = read_json(trace_path), tb = read_json(dir_.filePath("cmp.INTERP.json"));
    QCOMPARE(ta["device"].toString(), QStringLiteral("CPU"));
    QCOMPARE(tb["device"].toString(), QStringLiteral("INTERP"));

    const QString dom = render(html);
    for (const char* id : {"summary", "script", "tensor-graph", "kernel-graph", "schedule", "sources", "timings", "compare"})
      QVERIFY2(dom.contains(QStringLiteral("<section id=\"%1\">").arg(id)), id);
    check_timings(dom, ta);
    const QJsonArray ca = ta["calls"].toArray(), cb = tb["calls"].toArray();
    const QList<Row> rs = rows(section(dom, "compare"));
    // one program on two devices that compute alike: every call paired with the other run's call of the same kind, in
    // order, each row's times the two warm medians and its ratio theirs
    QCOMPARE(rs.size(), std::max(ca.size(), cb.size()));
    QSet<int> seen_b;
    for (const Row& row : rs) {
      static const QRegularExpression b_re("^ data-call-b=\"(-?\\d+)\"");
      const int call_b = b_re.match(row.attrs).captured(1).toInt();
      QVERIFY2(call_b >= 0 && call_b < cb.size() && !seen_b.contains(call_b), qPrintable(row.attrs));
      seen_b.insert(call_b);
      QCOMPARE(call_b, row.call);
      const QJsonObject a = ca[row.call].toObject(), b = cb[call_b].toObject();
      QCOMPARE(a["kind"], b["kind"]);
      const QList<double> t = seconds_in(row.html);
      QCOMPARE(t.size(), 2);
      QVERIFY(same(t[0], warm_median(a)));
      QVERIFY(same(t[1], warm_median(b)));
      static const QRegularExpression ratio_re("data-ratio=\"([^\"]+)\"");
      const auto m = ratio_re.match(row.html);
      QVERIFY(m.hasMatch());
      QVERIFY(same(m.captured(1).toDouble(), warm_median(b) / warm_median(a)));
    }
    // comparing two devices keeps every call's output: the first divergence is looked for, and the interpreter's
    // softmax is the CPU's within float's tolerance (its denormals included)
    QVERIFY(!ta["snapshots"].toArray().isEmpty() && !tb["snapshots"].toArray().isEmpty());
    static const QRegularExpression div_re("<p id=\"divergence\"[^>]*>(.*?)</p>", QRegularExpression::DotMatchesEverythingOption);
    const QString divergence = text_of(div_re.match(section(dom, "compare")).captured(1));
    QVERIFY2(divergence.startsWith(QStringLiteral("No divergence: the outputs of the %1 calls").arg(ca.size())), qPrintable(divergence));
    // the values the script read, both runs' side by side, as the window's Outputs tab
    QVERIFY(section(dom, "compare").contains("<table id=\"compare-outputs-table\">"));
    QVERIFY2(section(dom, "compare").contains("The 1 value(s) the script read are equal"), "");
    // each kernel's two sources side by side, the lines only one has marked (C beside the interpreter's listing)
    const QString cmp = section(dom, "compare");
    QVERIFY(cmp.contains("class=\"pair\""));
    QVERIFY(cmp.contains("<pre class=\"src a\">") && cmp.contains("<pre class=\"src b\">"));
    QVERIFY(cmp.contains("class=\"ln del\"") && cmp.contains("class=\"ln add\""));

    // two saved traces compare the same way
    const QString saved = dir_.filePath("compare-saved.html");
    const Result r2 = report({trace_path, "--compare", dir_.filePath("cmp.INTERP.json"), "-o", saved});
    QVERIFY2(r2.code == 0, why(r2).constData());
    QFile f(saved);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(rows(section(QString::fromUtf8(f.readAll()), "compare")).size(), rs.size());
  }

  // what comes from the script or the trace is text on the page, never markup
  void script_text_is_escaped() {
    QTemporaryDir d;
    const QString script = d.filePath("markup.py"), html = d.filePath("markup.html");
    {
      QVERIFY(ts_test::write_file(script, "from tinygrad import Tensor\n# <b>not bold</b> & <i>not italic</i>\nprint('<script>x</script> & ' + str((Tensor([1.0]) + 1).tolist()))\n"));
    }
    const Result r = report({script, "-o", html});
    QVERIFY2(r.code == 0, why(r).constData());
    const QString dom = render(html);
    QVERIFY(dom.contains("&lt;b&gt;not bold&lt;/b&gt; &amp; &lt;i&gt;not italic&lt;/i&gt;"));
    QVERIFY(dom.contains("&lt;script&gt;x&lt;/script&gt; &amp; [2.0]"));
    QVERIFY(!dom.contains("<b>not bold") && !dom.contains("<script>x"));
  }

  void errors_name_the_problem_and_write_nothing() {
    QTemporaryDir d;
    const QString out = d.filePath("out.html");
    const QString example = source_dir() + "/resources/examples/softmax.py";

    Result r = report({d.filePath("missing.py"), "-o", out});
    QVERIFY2(r.code != 0 && r.err.contains("no such script") && r.err.contains("missing.py"), why(r).constData());
    QVERIFY(!QFileInfo::exists(out));

    const QString bad = d.filePath("raises.py");
    {
      QVERIFY(ts_test::write_file(bad, "from tinygrad import Tensor\nx = Tensor([1.0, 2.0]).realize()\nraise ValueError('boom on purpose')\n"));
    }
    r = report({bad, "-o", out});
    QVERIFY2(r.code != 0, why(r).constData());
    QVERIFY2(r.err.contains(QStringLiteral("File \"%1\", line 3").arg(bad)) && r.err.contains("ValueError: boom on purpose"), why(r).constData());
    QVERIFY2(r.err.contains("no report written"), why(r).constData());
    QVERIFY(!QFileInfo::exists(out));
    // an earlier report at that path is left as it was
    {
      QVERIFY(ts_test::write_file(out, "an earlier report"));
    }
    r = report({bad, "-o", out});
    QVERIFY2(r.code != 0, why(r).constData());
    QFile kept(out);
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), QByteArray("an earlier report"));
    kept.close();
    QVERIFY(QFile::remove(out));

    r = report({example, "-o", out, "--dev", "NOSUCHDEV"});
    QVERIFY2(r.code != 0 && r.err.contains("NOSUCHDEV"), why(r).constData());
    QVERIFY(!QFileInfo::exists(out));

    r = report({example, "-o", out, "--compare", "NOSUCHDEV"});
    QVERIFY2(r.code != 0 && r.err.contains("NOSUCHDEV"), why(r).constData());
    QVERIFY(!QFileInfo::exists(out));

    r = report({example});
    QVERIFY2(r.code != 0 && r.err.contains("-o REPORT.html"), why(r).constData());

    const QString nowhere = d.filePath("no-such-folder/out.html");
    r = report({example, "-o", nowhere});
    QVERIFY2(r.code != 0 && r.err.contains("no-such-folder"), why(r).constData());
    QVERIFY(!QFileInfo::exists(nowhere));

    r = report({example, "-o", out, "--repeat", "0"});
    QVERIFY2(r.code != 0 && r.err.contains("--repeat"), why(r).constData());
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY2(QDir(d.path()).entryList(QDir::Files).size() == 1, "only the script is left in the folder");  // raises.py
  }
};

QTEST_GUILESS_MAIN(TestReport)
#include "test_report.moc"
