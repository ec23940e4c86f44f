// Runs every corpus program (tests/corpus/NN_name.py) through `tinyscope run --json` on each device and compares
// the trace with the oracle tinygrad produced (NN_name.expected.json): the RESULT value, the kernel count, the
// kernel names in execution order and the full executed-call order (kernels and copies). On VULKAN (lavapipe, the
// validation layer on: any message fails the run) the results and the kernel count: its names follow the GPU path and
// are checked by tests/corpus-gpu.
//
// known_failures.txt lists "DEVICE PROGRAM  # reason" lines: a listed row is expected to fail, an unlisted one to
// pass. Both surprises fail the test. Set TS_CORPUS_WRITE_FAILURES=FILE to write the list a run observed.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtTest/QtTest>

#include "corpus/corpus_json.h"
#include "test_env.h"

namespace {

using ts_corpus::KnownFailures;
using ts_corpus::names_of;
using ts_corpus::read_json;
using ts_corpus::strings_of;

constexpr int kTimeoutMs = 60000;
const QStringList kDevices = {"CPU", "CPU:LLVM", "INTERP", "VULKAN"};

using ts_test::tinyscope_bin;
QString corpus_dir() { return ts_test::source_dir() + QStringLiteral("/tests/corpus"); }

// runs one program on one device; an empty result means it matched the oracle
QString run_and_compare(const QString& program, const QString& device) {
  const QString dir = corpus_dir();
  QJsonObject expected, trace;
  QString error;
  if (!read_json(QStringLiteral("%1/%2.expected.json").arg(dir, program), expected, error)) return error;
  if (!ts_corpus::run_traced(tinyscope_bin(), dir, program, device, kTimeoutMs, trace, error)) return error;
  // VULKAN takes the GPU path: its results and kernel count are compared here, its names in tests/corpus-gpu
  if (device.startsWith(QStringLiteral("VULKAN"))) {
    QStringList problems;
    if (QString d = ts_corpus::compare(expected["result"], trace["result"], "result"); !d.isEmpty()) problems << d;
    const int n = static_cast<int>(names_of(trace["calls"].toArray(), true).size());
    if (n != expected["kernel_count"].toInt())
      problems << QStringLiteral("kernel count: expected %1, got %2").arg(expected["kernel_count"].toInt()).arg(n);
    return problems.join('\n');
  }
  QStringList problems = ts_corpus::compare_results_and_kernels(expected, trace);
  QJsonArray calls = trace["calls"].toArray();
  QStringList all = names_of(calls, false), want_all = strings_of(expected["executed_calls"].toArray());
  if (all != want_all) problems << QStringLiteral("executed calls: expected [%1], got [%2]").arg(want_all.join(", "), all.join(", "));
  return problems.join('\n');
}

KnownFailures read_known_failures() { return ts_corpus::read_known_failures(corpus_dir() + QStringLiteral("/known_failures.txt")); }

}  // namespace

class TestCorpus : public QObject {
  Q_OBJECT

 private:
  KnownFailures known_;
  QMap<QString, QMap<QString, bool>> passed_;  // device -> program -> passed
  QStringList observed_failures_;

 private slots:
  void initTestCase() {
    known_ = read_known_failures();
    QVERIFY2(QFileInfo(tinyscope_bin()).isExecutable(), "TINYSCOPE_BIN is not executable");
  }

  void run_program_data() { ts_corpus::add_program_rows(corpus_dir(), kDevices); }

  void run_program() {
    QFETCH(QString, device);
    QFETCH(QString, program);
    const QString failure = run_and_compare(program, device);
    const QString key = KnownFailures::key(device, program);
    const bool listed = known_.reasons.contains(key);
    passed_[device][program] = failure.isEmpty();
    if (!failure.isEmpty()) observed_failures_ << QStringLiteral("%1  # %2").arg(key, failure.section('\n', 0, 0).left(160));
    if (failure.isEmpty() && listed)
      QFAIL(qPrintable(QStringLiteral("%1 now passes: remove it from known_failures.txt").arg(key)));
    if (!failure.isEmpty() && !listed) QFAIL(qPrintable(failure));
    if (!failure.isEmpty()) qInfo("known failure (%s): %s", qPrintable(known_.reasons[key]), qPrintable(failure.section('\n', 0, 0)));
  }

  void cleanupTestCase() {
    QString table = QStringLiteral("\ncorpus pass table\n%1").arg("program", -36);
    for (const QString& d : kDevices) table += QStringLiteral("%1").arg(d, -10);
    table += '\n';
    QStringList programs = passed_.isEmpty() ? QStringList() : passed_.first().keys();
    QMap<QString, int> totals;
    for (const QString& p : programs) {
      table += QStringLiteral("%1").arg(p, -36);
      for (const QString& d : kDevices) {
        bool ran = passed_[d].contains(p), ok = passed_[d].value(p);
        bool listed = known_.reasons.contains(KnownFailures::key(d, p));
        totals[d] += ok;
        table += QStringLiteral("%1").arg(!ran ? "-" : ok ? "pass" : listed ? "known" : "FAIL", -10);
      }
      table += '\n';
    }
    table += QStringLiteral("%1").arg("passed", -36);
    for (const QString& d : kDevices) table += QStringLiteral("%1").arg(QStringLiteral("%1/%2").arg(totals[d]).arg(passed_[d].size()), -10);
    qInfo("%s", qPrintable(table));
    QByteArray out = qgetenv("TS_CORPUS_WRITE_FAILURES");
    if (!out.isEmpty()) {
      QFile f(QString::fromLocal8Bit(out));
      if (f.open(QIODevice::WriteOnly | QIODevice::Text)) f.write((observed_failures_.join('\n') + '\n').toUtf8());
    }
  }
};

QTEST_GUILESS_MAIN(TestCorpus)
#include "test_corpus.moc"
