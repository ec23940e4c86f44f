// `tinyscope run --json T.json --chrome-trace C.json`: C.json is Chrome's Trace Event JSON (every event has the keys and
// types its phase needs, every process and thread is named, flows pair up and go forward in time) and its call events
// are the trace's calls one to one (names, devices, ts = start, dur = seconds, in order); the timestamps behind it are
// sound (a device's calls do not overlap, none starts before it was launched, graph spans hold their kernels, a buffer
// is allocated before the call that writes it); an unwritable path is a clear error.
#include <QtCore/QFile>
#include <QtCore/QHash>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QSet>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include "test_env.h"

namespace {

using ts_test::Result;
using ts_test::why;

QJsonObject read_json(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

bool is_integer(const QJsonValue& v) { return v.isDouble() && v.toDouble() == std::floor(v.toDouble()); }

// the keys and types one event needs for its phase ("" when it has them)
QString event_problem(const QJsonObject& e) {
  const QString ph = e.value("ph").toString();
  if (!e.value("name").isString()) return "no name";
  if (!is_integer(e.value("pid"))) return "no integer pid";
  if (ph == "M") {
    const QString n = e.value("name").toString();
    if (n != "process_name" && n != "thread_name") return "metadata " + n;
    if (!e.value("args").toObject().value("name").isString()) return "metadata without args.name";
    if (n == "thread_name" && !is_integer(e.value("tid"))) return "thread_name without tid";
    return {};
  }
  if (!e.value("ts").isDouble() || e.value("ts").toDouble() < 0) return "no ts number";
  if (ph == "C") {  // a counter: its values in args, numbers
    const QJsonObject a = e.value("args").toObject();
    if (a.isEmpty()) return "C without args";
    for (const QJsonValue& v : a)
      if (!v.isDouble()) return "C with a value that is not a number";
    return {};
  }
  if (!is_integer(e.value("tid"))) return "no integer tid";
  if (ph == "X") {
    if (!e.value("dur").isDouble() || e.value("dur").toDouble() < 0) return "X without a dur number";
    if (!e.value("cat").isString()) return "X without cat";
    return {};
  }
  if (ph == "i") return QStringList{"g", "p", "t"}.contains(e.value("s").toString()) ? QString() : "i without scope";
  if (ph == "s" || ph == "f") {
    if (!e.value("id").isDouble() && !e.value("id").isString()) return "flow without id";
    if (!e.value("cat").isString()) return "flow without cat";
    if (ph == "f" && e.value("bp").toString() != "e") return "f without bp e";
    return {};
  }
  return "unknown phase " + ph;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestChromeTrace : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // runs an example with both outputs; the trace and the Chrome trace
  std::pair<QJsonObject, QJsonObject> run_example(const QString& name) {
    const QString t = dir_.filePath(name + ".trace.json"), c = dir_.filePath(name + ".chrome.json");
    const Result r = ts_test::run_process(ts_test::tinyscope_bin(),
                                          {"run", ts_test::source_dir() + "/resources/examples/" + name, "--json", t, "--chrome-trace", c});
    if (r.code != 0) qWarning("%s", why(r).constData());
    return {read_json(t), read_json(c)};
  }

  // the Trace Event format, and the call events equal to the trace's calls
  void check(const QJsonObject& trace, const QJsonObject& chrome) {
    QVERIFY(chrome.value("traceEvents").isArray());
    const QJsonArray events = chrome.value("traceEvents").toArray();
    QHash<int, QString> process;        // pid -> name
    QSet<QPair<int, int>> threads;      // named (pid, tid)
    for (const QJsonValue& v : events) {
      QVERIFY(v.isObject());
      const QJsonObject e = v.toObject();
      const QString problem = event_problem(e);
      QVERIFY2(problem.isEmpty(), qPrintable(problem + ": " + QJsonDocument(e).toJson(QJsonDocument::Compact)));
      if (e.value("ph") == "M" && e.value("name") == "process_name")
        process.insert(e.value("pid").toInt(), e.value("args").toObject().value("name").toString());
      if (e.value("ph") == "M" && e.value("name") == "thread_name") threads.insert({e.value("pid").toInt(), e.value("tid").toInt()});
    }
    QList<QJsonObject> calls;                    // the call events, in order
    QHash<int, QPair<QJsonObject, QJsonObject>> flows;  // id -> its s and f
    QHash<int, QList<QJsonObject>> slices;       // pid -> its X events
    for (const QJsonValue& v : events) {
      const QJsonObject e = v.toObject();
      const QString ph = e.value("ph").toString();
      if (ph == "M") continue;
      const int pid = e.value("pid").toInt();
      QVERIFY2(process.contains(pid) && (ph == "C" || threads.contains({pid, e.value("tid").toInt()})), "an event on an unnamed process or thread");
      if (ph == "X") slices[pid].push_back(e);
      if (ph == "X" && (e.value("cat") == "kernel" || e.value("cat") == "copy")) calls.push_back(e);
      const int id = e.value("id").toInt();
      if (ph == "s") {
        QVERIFY2(!flows.contains(id) || flows[id].first.isEmpty(), "two flow starts with one id");
        flows[id].first = e;
      } else if (ph == "f") {
        QVERIFY2(!flows.contains(id) || flows[id].second.isEmpty(), "two flow ends with one id");
        flows[id].second = e;
      }
    }
    // one event per call, in order, at the trace's timestamps
    const QJsonArray tc = trace.value("calls").toArray();
    QVERIFY(!tc.isEmpty());
    QCOMPARE(calls.size(), tc.size());
    for (int i = 0; i < tc.size(); ++i) {
      const QJsonObject c = tc[i].toObject(), e = calls[i];
      QCOMPARE(e.value("name").toString(), c.value("name").toString());
      QCOMPARE(process.value(e.value("pid").toInt()), c.value("device").toString());
      QCOMPARE(e.value("cat").toString(), c.value("kind").toString());
      QVERIFY2(close(e.value("dur").toDouble(), c.value("seconds").toDouble() * 1e6), qPrintable(QString::number(i)));
      QVERIFY2(close(e.value("ts").toDouble(), c.value("start").toDouble() * 1e6), qPrintable(QString::number(i)));
      QCOMPARE(e.value("args").toObject().value("call").toInt(), i);
    }
    // flows: each a pair, forward in time, each end inside a call of its process (what it binds to)
    auto inside_a_slice = [&slices](const QJsonObject& f) {
      const double ts = f.value("ts").toDouble();
      for (const QJsonObject& x : slices.value(f.value("pid").toInt()))
        if (x.value("tid") == f.value("tid") && x.value("ts").toDouble() <= ts && ts <= x.value("ts").toDouble() + x.value("dur").toDouble())
          return true;
      return false;
    };
    for (auto it = flows.begin(); it != flows.end(); ++it) {
      QVERIFY2(!it->first.isEmpty() && !it->second.isEmpty(), qPrintable(QStringLiteral("flow %1 is not a pair").arg(it.key())));
      QVERIFY(it->second.value("ts").toDouble() >= it->first.value("ts").toDouble());
      QVERIFY(inside_a_slice(it->first) && inside_a_slice(it->second));
    }
    // as many flows as reads of a buffer an earlier call wrote (counted here from the trace)
    QHash<qint64, double> written;  // buffer -> its last writer's start
    int expected = 0;
    for (const QJsonValue& v : tc) {
      const QJsonObject c = v.toObject();
      for (const QJsonValue& b : c.value("reads").toArray())
        if (written.contains(b.toInteger()) && written.value(b.toInteger()) <= c.value("start").toDouble()) ++expected;
      for (const QJsonValue& b : c.value("writes").toArray()) written.insert(b.toInteger(), c.value("start").toDouble());
    }
    QVERIFY(expected > 0);
    QCOMPARE(flows.size(), expected);
    // the memory counters: one a memory event, each device's bytes the running sum of its allocations and frees
    const QJsonArray memory = trace.value("memory").toArray();
    QList<QJsonObject> counters;
    for (const QJsonValue& v : events)
      if (v.toObject().value("ph") == "C") counters.push_back(v.toObject());
    QCOMPARE(counters.size(), memory.size());
    QHash<QString, qint64> bytes;
    for (int k = 0; k < memory.size(); ++k) {
      const QJsonObject m = memory[k].toObject();
      bytes[m.value("device").toString()] += (m.value("alloc").toBool() ? 1 : -1) * m.value("bytes").toInteger();
      QCOMPARE(process.value(counters[k].value("pid").toInt()), m.value("device").toString());
      QCOMPARE(counters[k].value("args").toObject().value("bytes").toInteger(), bytes[m.value("device").toString()]);
      QVERIFY(close(counters[k].value("ts").toDouble(), m.value("t").toDouble() * 1e6));
    }
  }

  // the timestamps themselves: in order per device, after their launch; a buffer allocated before its writer ran
  void check_timestamps(const QJsonObject& trace) {
    QHash<QString, double> device_end;
    QHash<qint64, double> allocated;
    for (const QJsonValue& v : trace.value("memory").toArray())
      if (v.toObject().value("alloc").toBool() && !allocated.contains(v.toObject().value("buffer").toInteger()))
        allocated.insert(v.toObject().value("buffer").toInteger(), v.toObject().value("t").toDouble());
    QVERIFY(!allocated.isEmpty());
    for (const QJsonValue& v : trace.value("calls").toArray()) {
      const QJsonObject c = v.toObject();
      const double start = c.value("start").toDouble(), launched = c.value("launched").toDouble(), end = start + c.value("seconds").toDouble();
      QVERIFY(launched > 0 && start >= launched);
      QVERIFY2(start >= device_end.value(c.value("device").toString()) - 1e-12, "two calls of a device overlap");
      device_end[c.value("device").toString()] = end;
      for (const QJsonValue& b : c.value("writes").toArray())
        if (allocated.contains(b.toInteger())) QVERIFY(allocated.value(b.toInteger()) <= launched);
    }
    // every schedule context that ran has a begin and an end, and kernel contexts a compile inside them
    int schedules = 0;
    for (const QJsonValue& v : trace.value("contexts").toArray()) {
      const QJsonObject c = v.toObject();
      QVERIFY(c.value("end").toDouble() >= c.value("begin").toDouble() && c.value("begin").toDouble() > 0);
      schedules += c.value("kind") == "schedule";
      if (c.value("kind") == "kernel") {
        const QJsonArray k = c.value("compile").toArray();
        QCOMPARE(k.size(), 2);
        QVERIFY(k[0].toDouble() >= c.value("begin").toDouble() && k[1].toDouble() <= c.value("end").toDouble());
      }
    }
    QVERIFY(schedules > 0);
  }

 private slots:
  void softmax() {
    auto [trace, chrome] = run_example("softmax.py");
    check(trace, chrome);
    check_timestamps(trace);
    // one schedule event per schedule context with timestamps
    int schedules = 0, events = 0;
    for (const QJsonValue& v : trace.value("contexts").toArray()) schedules += v.toObject().value("kind") == "schedule";
    for (const QJsonValue& v : chrome.value("traceEvents").toArray()) events += v.toObject().value("cat") == "schedule";
    QCOMPARE(events, schedules);
  }

  void tinyjit_graphs_hold_their_kernels() {
    auto [trace, chrome] = run_example("train_jit.py");
    check(trace, chrome);
    check_timestamps(trace);
    QHash<int, QPair<double, double>> graph;  // graph number -> its span (µs)
    for (const QJsonValue& v : chrome.value("traceEvents").toArray())
      if (v.toObject().value("cat") == "graph")
        graph.insert(v.toObject().value("args").toObject().value("graph").toInt(),
                     {v.toObject().value("ts").toDouble(), v.toObject().value("ts").toDouble() + v.toObject().value("dur").toDouble()});
    QVERIFY2(!graph.isEmpty(), "no graph call in a TinyJit replay");
    int held = 0;
    for (const QJsonValue& v : trace.value("calls").toArray()) {
      const QJsonObject c = v.toObject();
      const int g = c.value("graph").toInt();
      if (g <= 0) continue;
      QVERIFY(graph.contains(g));
      const double b = c.value("start").toDouble() * 1e6, e = b + c.value("seconds").toDouble() * 1e6;
      QVERIFY(b >= graph[g].first - 1e-6 && e <= graph[g].second + 1e-6);
      ++held;
    }
    QVERIFY(held > graph.size());
  }

  void unwritable_path_is_an_error() {
    const Result r = ts_test::run_process(
        ts_test::tinyscope_bin(), {"run", ts_test::source_dir() + "/resources/examples/softmax.py", "--chrome-trace", dir_.filePath("no/such/dir/c.json")});
    QVERIFY2(r.code != 0, why(r).constData());
    QVERIFY2(r.err.contains("cannot write the Chrome trace") && r.err.contains("no/such/dir/c.json"), why(r).constData());
    QVERIFY(!QFile::exists(dir_.filePath("no/such/dir/c.json.tmp")));
  }
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "test_chrome_trace.moc"
