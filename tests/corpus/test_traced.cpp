// What the window shows is what ran: every corpus program runs twice on CPU with DEBUG=4, once untraced (`tinyscope
// run`) and once traced (`tinyscope run --json`, every pass recorded), and the two outputs must be the same: the same
// kernels (their generated source), names, execution order (the DEBUG=2 lines) and printed values. Only what varies
// from run to run is masked: timings (and their padding), the process id and the schedule cache's hash. The traced run's trace must show
// the schedule's deciding passes (callify, order calls) as steps of their own.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonObject>
#include <QtCore/QRegularExpression>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include "corpus/corpus_json.h"
#include "test_env.h"

namespace {

constexpr int kTimeoutMs = 120000;

QString corpus_dir() { return ts_test::source_dir() + QStringLiteral("/tests/corpus"); }

// the output with what differs between two runs of one program masked
QString normalized(const QString& out) {
  static const QRegularExpression timing(QStringLiteral(" tm .*$"), QRegularExpression::MultilineOption);
  static const QRegularExpression seconds(QStringLiteral("[0-9]+\\.[0-9]+ *(us|ms|s|GB)\\b"));
  static const QRegularExpression pid(QStringLiteral("pid:[0-9]+"));
  static const QRegularExpression cache_key(QStringLiteral("(MISS|hit) [0-9a-f]+"));
  static const QRegularExpression spaces(QStringLiteral(" +"));  // the padding of a number masked above
  QString s = out;
  s.replace(timing, QStringLiteral(" tm"));
  s.replace(seconds, QStringLiteral("#"));
  s.replace(pid, QStringLiteral("pid"));
  s.replace(cache_key, QStringLiteral("\\1 H"));
  s.replace(spaces, QStringLiteral(" "));
  return s;
}

QProcess* start(const QString& program, const QStringList& extra_args) {
  auto* p = new QProcess;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", "CPU");
  env.insert("DEBUG", "4");
  env.insert("NUM_CPU_THREADS", "8");
  p->setProcessEnvironment(env);
  p->setWorkingDirectory(corpus_dir());
  p->setProcessChannelMode(QProcess::MergedChannels);
  p->setStandardInputFile(QProcess::nullDevice());
  p->start(ts_test::tinyscope_bin(), QStringList{"run", program + ".py"} + extra_args);
  return p;
}

// the child's merged output, or an error naming how it ended
QString finish(QProcess* p, QString* error) {
  std::unique_ptr<QProcess> owned(p);
  if (!p->waitForFinished(kTimeoutMs)) {
    p->kill();
    p->waitForFinished();
    *error = QStringLiteral("did not finish in %1 s").arg(kTimeoutMs / 1000);
    return {};
  }
  const QString out = QString::fromUtf8(p->readAll());
  if (p->exitStatus() != QProcess::NormalExit || p->exitCode() != 0)
    *error = QStringLiteral("exit %1: %2").arg(p->exitCode()).arg(out.right(600));
  return out;
}

// the first line where two outputs differ, both versions
QString first_difference(const QString& a, const QString& b) {
  const QStringList la = a.split('\n'), lb = b.split('\n');
  for (qsizetype i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const QString x = i < la.size() ? la[i] : QStringLiteral("<end>"), y = i < lb.size() ? lb[i] : QStringLiteral("<end>");
    if (x != y) return QStringLiteral("line %1\n  untraced: %2\n  traced:   %3").arg(i + 1).arg(x, y);
  }
  return {};
}

}  // namespace

class TestTraced : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY2(QFileInfo(ts_test::tinyscope_bin()).isExecutable(), "TINYSCOPE_BIN is not executable"); }

  void traced_equals_untraced_data() { ts_corpus::add_program_rows(corpus_dir(), {"CPU"}); }

  void traced_equals_untraced() {
    QFETCH(QString, program);
    QTemporaryDir tmp;
    const QString trace_file = tmp.filePath(QStringLiteral("trace.json"));
    // both runs at once: each is one process on its own core
    QProcess* plain = start(program, {});
    QProcess* traced = start(program, {"--json", trace_file});
    QString plain_error, traced_error;
    const QString a = finish(plain, &plain_error), b = finish(traced, &traced_error);
    QVERIFY2(plain_error.isEmpty(), qPrintable("untraced run: " + plain_error));
    QVERIFY2(traced_error.isEmpty(), qPrintable("traced run: " + traced_error));
    const QString na = normalized(a), nb = normalized(b);
    QVERIFY2(na.contains(QStringLiteral("*** CPU")), "the untraced run printed no executed call");
    QVERIFY2(na == nb, qPrintable(first_difference(na, nb)));

    // the schedule's decisions are steps of the trace: callify and order calls for every schedule that made a kernel
    QJsonObject trace;
    QString error;
    QVERIFY2(ts_corpus::read_json(trace_file, trace, error), qPrintable(error));
    QStringList passes;
    for (const QJsonValue& c : trace["contexts"].toArray()) {
      const QJsonObject ctx = c.toObject();
      if (ctx["kind"].toString() != QStringLiteral("schedule")) continue;
      for (const QJsonValue& s : ctx["passes"].toArray()) passes << s.toObject()["name"].toString();
    }
    if (!passes.isEmpty()) {
      QVERIFY2(passes.contains(QStringLiteral("callify")), qPrintable("no callify step among " + passes.join(", ")));
      QVERIFY2(passes.contains(QStringLiteral("order calls")), qPrintable("no order calls step among " + passes.join(", ")));
    }
  }
};

QTEST_GUILESS_MAIN(TestTraced)
#include "test_traced.moc"
