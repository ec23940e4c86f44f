// `tinyscope trace TRACE.json`: a recorded run read on the command line, each answer checked against the trace file
// itself: the contexts and passes --list names, a pass's rewrites, a kernel's linearized uops on CPU and on VULKAN
// (the LINEAR the last pass made, every uop its source's lines render among them), the top calls by time and their
// shares, every call; bad input (a missing or corrupt trace, an unknown context or option) is a clear error.
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>

#include "test_env.h"

using namespace ts_test;

namespace {
QJsonObject read_json(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}
// `tinyscope trace ARGS --json`: one object per line
QList<QJsonObject> objects(const Result& r) {
  QList<QJsonObject> out;
  for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) out << QJsonDocument::fromJson(line.toUtf8()).object();
  return out;
}
}  // namespace

class TestTraceCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString cpu_, vk_;

  Result trace(const QStringList& args) { return run_process(tinyscope_bin(), QStringList{"trace"} + args); }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    cpu_ = dir_.filePath("cpu.json");
    vk_ = dir_.filePath("vk.json");
    const QString script = source_dir() + "/resources/examples/softmax.py";
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("DEV", "CPU");
    QString why = run_to_trace(script, cpu_, {"--trace", "matches"}, env);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    env.insert("DEV", "VULKAN");
    vulkan_test_env(env, dir_.path());
    why = run_to_trace(script, vk_, {}, env);
    QVERIFY2(why.isEmpty(), qPrintable(why));
  }

  void summary_counts_the_trace() {
    const QJsonObject t = read_json(cpu_);
    const Result r = trace({cpu_, "--json"});
    QVERIFY2(r.code == 0, why(r).constData());
    const QList<QJsonObject> o = objects(r);
    QCOMPARE(o.size(), 1);
    QCOMPARE(o[0]["calls"].toInt(), t["calls"].toArray().size());
    QCOMPARE(o[0]["contexts"].toInt(), t["contexts"].toArray().size());
    QCOMPARE(o[0]["uops"].toInt(), t["uops"].toObject().size());
    QCOMPARE(o[0]["device"].toString(), QStringLiteral("CPU"));
  }

  // --list: every context and, under it, every pass in order with its match count
  void list_names_contexts_and_passes() {
    const QJsonArray contexts = read_json(cpu_)["contexts"].toArray();
    const Result r = trace({cpu_, "--list", "--json"});
    QVERIFY2(r.code == 0, why(r).constData());
    QList<QJsonObject> o = objects(r);
    int k = 0;
    for (int c = 0; c < contexts.size(); ++c) {
      QVERIFY(k < o.size());
      QCOMPARE(o[k]["context"].toInt(), c);
      QVERIFY(!o[k].contains("pass"));
      ++k;
      const QJsonArray passes = contexts[c].toObject()["passes"].toArray();
      for (int p = 0; p < passes.size(); ++p, ++k) {
        QCOMPARE(o[k]["pass"].toInt(), p);
        QCOMPARE(o[k]["name"].toString(), passes[p].toObject()["name"].toString());
        QCOMPARE(o[k]["matches"].toInt(), passes[p].toObject()["match_count"].toInt());
      }
    }
    QCOMPARE(k, o.size());
  }

  // -c -p --rewrites: the pass's recorded matches, each rule with its before and after
  void rewrites_of_a_pass() {
    const QJsonArray contexts = read_json(cpu_)["contexts"].toArray();
    int ctx = -1, pass = -1;
    for (int c = 0; c < contexts.size() && ctx < 0; ++c) {
      const QJsonArray passes = contexts[c].toObject()["passes"].toArray();
      for (int p = 0; p < passes.size(); ++p)
        if (passes[p].toObject()["matches"].toArray().size() >= 2) {
          ctx = c, pass = p;
          break;
        }
    }
    QVERIFY(ctx >= 0);
    const QJsonArray matches = contexts[ctx].toObject()["passes"].toArray()[pass].toObject()["matches"].toArray();
    const Result r = trace({cpu_, "-c", QString::number(ctx), "-p", QString::number(pass), "--rewrites", "--json"});
    QVERIFY2(r.code == 0, why(r).constData());
    const QList<QJsonObject> o = objects(r);
    QCOMPARE(o.size(), matches.size());
    for (int m = 0; m < matches.size(); ++m) {
      QCOMPARE(o[m]["rule"].toString(), matches[m].toObject()["rule"].toString());
      QCOMPARE(o[m]["before"].toInt(), matches[m].toObject()["before"].toInt());
      QCOMPARE(o[m]["after"].toInt(), matches[m].toObject()["after"].toInt());
    }
    // the pass's graph as text: its root is the pass's result
    const Result g = trace({cpu_, "-c", QString::number(ctx), "-p", QString::number(pass)});
    QVERIFY2(g.code == 0 && g.out.contains("UOp(Ops."), why(g).constData());
  }

  void uops_of_a_kernel_on_every_device_data() {
    QTest::addColumn<bool>("vulkan");
    QTest::newRow("CPU") << false;
    QTest::newRow("VULKAN") << true;
  }
  // --uops: the sources of the last LINEAR the kernel's passes made, in order; every uop a line of the source renders
  // is one of them
  void uops_of_a_kernel_on_every_device() {
    QFETCH(bool, vulkan);
    const QJsonObject t = read_json(vulkan ? vk_ : cpu_);
    const QJsonObject uops = t["uops"].toObject();
    const QJsonArray contexts = t["contexts"].toArray();
    int ctx = -1;
    for (int c = 0; c < contexts.size(); ++c)
      if (contexts[c].toObject()["kind"] == "kernel") ctx = c;
    QVERIFY(ctx >= 0);
    QJsonArray linear;
    const QJsonArray passes = contexts[ctx].toObject()["passes"].toArray();
    for (const auto& p : passes) {
      const QJsonObject after = uops[QString::number(p.toObject()["after"].toInt())].toObject();
      if (after["op"] == "LINEAR") linear = after["src"].toArray();
    }
    QVERIFY(linear.size() > 5);
    const Result r = trace({vulkan ? vk_ : cpu_, "-c", QString::number(ctx), "--uops", "--json"});
    QVERIFY2(r.code == 0, why(r).constData());
    const QList<QJsonObject> o = objects(r);
    QCOMPARE(o.size(), 1);
    QCOMPARE(o[0]["uops"].toArray(), linear);
    const QStringList lines = o[0]["listing"].toString().split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), linear.size());
    for (int i = 0; i < lines.size(); ++i) {
      const QJsonObject u = uops[QString::number(linear[i].toInt())].toObject();
      QVERIFY2(lines[i].startsWith(QStringLiteral("%1 %2").arg(i, 4).arg(u["op"].toString())), qPrintable(lines[i]));
    }
    QSet<int> in_linear;
    for (const auto& v : linear) in_linear.insert(v.toInt());
    const QJsonValue lv = contexts[ctx].toObject()["program"].toObject()["lines"];
    const QJsonArray src_lines = lv.isString() ? QJsonDocument::fromJson(lv.toString().toUtf8()).array() : lv.toArray();
    QVERIFY(!src_lines.isEmpty());
    for (const auto& l : src_lines) QVERIFY(in_linear.contains(l.toArray()[1].toInt()));
    // --program: the source as the trace has it
    const Result p = trace({vulkan ? vk_ : cpu_, "-c", QString::number(ctx), "--program", "--json"});
    QCOMPARE(objects(p)[0]["src"].toString(), contexts[ctx].toObject()["program"].toObject()["src"].toString());
    QCOMPARE(objects(p)[0]["program_key"].toString(), contexts[ctx].toObject()["program"].toObject()["program_key"].toString());
    QCOMPARE(objects(p)[0]["program_key"].toString().size(), 16);
  }

  // -t: calls by name, their total and count, shares summing to 100%; --calls: every call in order
  void top_and_every_call() {
    const QJsonArray calls = read_json(cpu_)["calls"].toArray();
    QMap<QString, double> want;
    double total = 0;
    for (const auto& c : calls) {
      const double s = c.toObject()["seconds"].toDouble();
      want[c.toObject()["name"].toString().simplified()] += s;
      total += s;
    }
    const Result r = trace({cpu_, "-t", "--json"});
    QVERIFY2(r.code == 0, why(r).constData());
    const QList<QJsonObject> o = objects(r);
    QCOMPARE(o.size(), want.size());
    double pct = 0;
    for (int i = 0; i < o.size(); ++i) {
      QVERIFY(std::fabs(o[i]["seconds"].toDouble() - want.value(o[i]["name"].toString())) <= 1e-12);
      if (i) QVERIFY(o[i]["seconds"].toDouble() <= o[i - 1]["seconds"].toDouble());
      pct += o[i]["pct"].toDouble();
    }
    QVERIFY(std::fabs(pct - 100) < 1e-6);
    QCOMPARE(objects(trace({cpu_, "-t", "1", "--json"})).size(), 1);
    const QList<QJsonObject> every = objects(trace({cpu_, "--calls", "--json"}));
    QCOMPARE(every.size(), calls.size());
    for (int i = 0; i < calls.size(); ++i) QCOMPARE(every[i]["name"].toString(), calls[i].toObject()["name"].toString().simplified());
  }

  void bad_input_is_a_clear_error() {
    Result r = trace({dir_.filePath("missing.json")});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("cannot read"), why(r).constData());
    QVERIFY(ts_test::write_file(dir_.filePath("bad.json"), "{\"version\": 1, \"uops\": {\"1\": {\"op\": \"ADD\""));
    r = trace({dir_.filePath("bad.json")});
    QCOMPARE(r.code, 1);
    r = trace({cpu_, "-c", "no such context"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no context is 'no such context'"), why(r).constData());
    r = trace({cpu_, "--frobnicate"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("unknown option '--frobnicate'"), why(r).constData());
    r = trace({cpu_, "--uops"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("need a context"), why(r).constData());
  }
};

QTEST_MAIN(TestTraceCli)
#include "test_trace_cli.moc"
