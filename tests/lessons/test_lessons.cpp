// Every lesson of resources/lessons played by `tinyscope lesson LESSON.md --json --trace-out T.json`: each step that asks
// has an answer, and it is the one this test computes from the trace JSON itself (its calls, contexts and uops read
// here, independently of the viewer's Session); the right answers given back with --answers are all accepted, and
// wrong ones are not.
#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>

#include "test_env.h"
#include "viewer/model/glossary.h"

using namespace ts_test;

namespace {

// kind -> the answer, from the trace alone
QString expected(const QJsonObject& t, const QString& kind) {
  const QJsonArray calls = t["calls"].toArray();
  QJsonObject last;
  for (const auto& c : calls)
    if (c.toObject()["kind"].toString() == "kernel") last = c.toObject();
  auto program = [&](const QString& key) {
    for (const auto& c : t["contexts"].toArray())
      if (c.toObject()["kind"].toString() == "kernel" && c.toObject()["program"].toObject()["program_key"].toString() == key) return c.toObject();
    return QJsonObject();
  };
  const QJsonObject uops = t["uops"].toObject();
  auto ast_nodes = [&](int root) {  // every uop of a kernel AST
    QList<QJsonObject> out;
    QList<int> todo{root};
    QSet<int> seen;
    while (!todo.isEmpty()) {
      const int id = todo.takeLast();
      if (seen.contains(id)) continue;
      seen.insert(id);
      const QJsonObject u = uops[QString::number(id)].toObject();
      out << u;
      for (const auto& s : u["src"].toArray()) todo << s.toInt();
    }
    return out;
  };
  int kernels = 0, copies = 0, in_last = 0, reduces_in_last = 0;
  QSet<int> schedules, runs, graphs;
  int jit_calls = 0;
  for (const auto& v : calls) {
    const QJsonObject c = v.toObject();
    schedules.insert(c["schedule_index"].toInt());
    if (c["kind"].toString() == "copy") ++copies;
    if (c["kind"].toString() != "kernel") continue;
    ++kernels;
    if (c["schedule_index"].toInt() == last["schedule_index"].toInt()) ++in_last, reduces_in_last += c["name"].toString().startsWith("r_");
    if (c["jit"].toBool()) {
      ++jit_calls;
      runs.insert(c["run"].toInt());
      if (c["graph"].toInt() > 0) graphs.insert(c["graph"].toInt());
    }
  }
  if (kind == "kernels") return QString::number(kernels);
  if (kind == "copies") return QString::number(copies);
  if (kind == "schedules") return QString::number(schedules.size());
  if (kind == "kernels_last") return QString::number(in_last);
  if (kind == "reduce_kernels_last") return QString::number(reduces_in_last);
  if (kind == "jit_calls") return QString::number(jit_calls);
  if (kind == "jit_replays") return QString::number(runs.size());
  if (kind == "graph_calls") return QString::number(graphs.size());
  if (kind == "device") return t["device"].toString();
  if (kind == "outputs") return QString::number(t["outputs"].toArray().size());
  if (kind == "last_kernel") return last["name"].toString();
  if (kind == "first_kernel")
    for (const auto& c : calls)
      if (c.toObject()["kind"].toString() == "kernel") return c.toObject()["name"].toString();
  const QJsonObject ctx = program(last["program_key"].toString());
  const QJsonObject prog = ctx["program"].toObject();
  if (kind == "opts_last") return QString::number(last["applied_opts"].toArray().size());  // (the call's own copy of them)
  if (kind == "first_opt_last") return QRegularExpression("OptOps\\.([A-Z_]+)").match(last["applied_opts"].toArray().at(0).toString()).captured(1);
  if (kind == "passes_last") return QString::number(ctx["passes"].toArray().size());
  if (kind == "lang_last") return prog["lang"].toString().toUpper();
  if (kind == "stores_last") {
    int n = 0;
    for (const QJsonObject& u : ast_nodes(prog["ast"].toInt())) n += u["op"].toString() == "STORE";
    return QString::number(n);
  }
  if (kind == "reduce_size")
    for (qsizetype i = calls.size(); i-- > 0;) {
      const QJsonObject c = calls[i].toObject();
      if (c["kind"].toString() != "kernel") continue;
      qint64 n = 1;
      bool any = false;
      for (const QJsonObject& u : ast_nodes(program(c["program_key"].toString())["program"].toObject()["ast"].toInt()))
        if (u["op"].toString() == "RANGE" && u["arg"].toString().contains("REDUCE")) {
          n *= uops[QString::number(u["src"].toArray().at(0).toInt())].toObject()["arg"].toString().toLongLong();
          any = true;
        }
      if (any) return QString::number(n);
    }
  return QStringLiteral("(no answer for %1)").arg(kind);
}

}  // namespace

class TestLessons : public QObject {
  Q_OBJECT
 private slots:
  void lessons_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(source_dir() + "/resources/lessons");
    const QStringList files = dir.entryList({"*.md"}, QDir::Files, QDir::Name);
    QVERIFY2(files.size() >= 7, "at least seven lessons");
    QVERIFY(files.front().startsWith("01-tour"));  // the tour is the first lesson
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << dir.filePath(f);
  }
  void lessons() {
    QFETCH(QString, path);
    QTemporaryDir tmp;
    const QString trace = tmp.filePath("t.json");
    QProcessEnvironment env;
    env.insert("DEV", "CPU");
    const Result r = run_process(tinyscope_bin(), {"lesson", path, "--json", "--trace-out", trace}, env, {}, 300000);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject t = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(!t.isEmpty());
    QStringList right, wrong;
    int asked = 0;
    for (const auto& v : out["steps"].toArray()) {
      const QJsonObject s = v.toObject();
      if (!s.contains("ask")) continue;
      ++asked;
      QVERIFY2(s["ok"].toBool(), qPrintable(s["id"].toString() + ": " + s["why"].toString()));
      const QString want = expected(t, s["kind"].toString());
      QVERIFY2(s["answer"].toString() == want, qPrintable(QString("%1 (%2): the lesson says %3, the trace %4").arg(s["id"].toString(), s["kind"].toString(), s["answer"].toString(), want)));
      right << want;
      wrong << want + "x";
    }
    QVERIFY2(asked >= 2, "every lesson asks at least two questions");
    // the glossary names every op, pass and opt the run shows (the panes' tooltips), each with a lesson that teaches it
    QStringList missing;
    for (const auto& u : t["uops"].toObject()) {
      const QString op = u.toObject()["op"].toString();
      if (!tsv::glossary_lookup(op) && !missing.contains(op)) missing << op;
    }
    for (const auto& c : t["contexts"].toArray()) {
      for (const auto& p : c.toObject()["passes"].toArray()) {
        const QString name = p.toObject()["name"].toString();
        if (name.startsWith("View ")) continue;  // (the trace's views of a graph, not passes)
        if (!tsv::glossary_lookup(name) && !missing.contains(name)) missing << name;
      }
      for (const auto& o : c.toObject()["program"].toObject()["applied_opts"].toArray())
        if (!tsv::glossary_lookup(o.toString()) && !missing.contains(o.toString())) missing << o.toString();
    }
    QVERIFY2(missing.isEmpty(), qPrintable("not in the glossary: " + missing.join(", ")));
    for (const auto& e : tsv::glossary()) QVERIFY2(e.lesson >= 1 && e.lesson <= 8 && !e.meaning.isEmpty(), qPrintable(e.term));
    // answering: the run's answers are all right, altered ones all wrong
    const Result good = run_process(tinyscope_bin(), {"lesson", path, "--answers", right.join(',')}, env, {}, 300000);
    QVERIFY2(good.code == 0 && good.out.contains(QString("%1 of %1 right").arg(asked)), qPrintable(good.out + good.err));
    const Result bad = run_process(tinyscope_bin(), {"lesson", path, "--answers", wrong.join(',')}, env, {}, 300000);
    QVERIFY2(bad.out.contains(QString("0 of %1 right").arg(asked)), qPrintable(bad.out + bad.err));
  }
};

QTEST_GUILESS_MAIN(TestLessons)
#include "test_lessons.moc"
