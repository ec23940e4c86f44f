// Runs every GPU-corpus program (tests/corpus-gpu/NN_name.py, recorded with tinygrad on DEV=PYTHON: the reference's
// generic GPU renderer) through `tinyscope run --json` on INTERP:GPU (the interpreter on gpu_opt_target(), the same
// renderer properties) and on VULKAN (lavapipe, validation layer on) and compares the trace with the oracle: the RESULT value (floats with a tolerance), the kernel
// count and names in execution order, and per kernel its name with colours (kernel_details[].name_segments), its
// global_size, local_size and applied_opts.
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

constexpr int kTimeoutMs = 120000;
// INTERP:GPU (the interpreter) and VULKAN (lavapipe in CI) run the same GPU path: the same names, sizes and opts
const QStringList kDevices = {QStringLiteral("INTERP:GPU"), QStringLiteral("VULKAN")};

QString corpus_dir() { return ts_test::source_dir() + QStringLiteral("/tests/corpus-gpu"); }

// an ANSI-coloured name as the oracle's [text, colour] segments: colored(s, "blue") is ESC[34m, "BLUE" ESC[94m;
// text outside an escape has colour null
QJsonArray name_segments(const QString& colored) {
  static const char* names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  static const QRegularExpression seg(QStringLiteral("\x1b\\[(\\d+)m(.*?)\x1b\\[0m|([^\x1b]+)"));
  QJsonArray out;
  for (auto it = seg.globalMatch(colored); it.hasNext();) {
    auto m = it.next();
    if (!m.captured(3).isEmpty()) {
      out.append(QJsonArray{m.captured(3), QJsonValue::Null});
      continue;
    }
    int code = m.captured(1).toInt();
    bool bright = code >= 90;
    int idx = code - (bright ? 90 : 30);
    QString color = idx >= 0 && idx < 8 ? QString::fromLatin1(names[idx]) : QStringLiteral("code%1").arg(code);
    out.append(QJsonArray{m.captured(2), bright ? color.toUpper() : color});
  }
  return out;
}

// runs one program; an empty result means it matched the oracle
QString run_and_compare(const QString& program, const QString& kDevice) {
  const QString dir = corpus_dir();
  QJsonObject expected, trace;
  QString error;
  if (!ts_corpus::read_json(QStringLiteral("%1/%2.expected.json").arg(dir, program), expected, error)) return error;
  if (!ts_corpus::run_traced(ts_test::tinyscope_bin(), dir, program, kDevice, kTimeoutMs, trace, error)) return error;
  QStringList problems = ts_corpus::compare_results_and_kernels(expected, trace);
  // each kernel's program (its local size) by program key, from the kernel contexts
  QMap<QString, QJsonObject> programs;
  for (const QJsonValue& c : trace["contexts"].toArray()) {
    QJsonObject p = c.toObject()["program"].toObject();
    if (!p.isEmpty()) programs[p["program_key"].toString()] = p;
  }
  QJsonArray details = expected["kernel_details"].toArray();
  int k = 0;
  for (const QJsonValue& cv : trace["calls"].toArray()) {
    QJsonObject call = cv.toObject();
    if (call["kind"].toString() != QStringLiteral("kernel")) continue;
    if (k >= details.size()) break;
    QJsonObject want = details[k++].toObject();
    const QString where = QStringLiteral("kernel %1 (%2)").arg(k - 1).arg(want["name"].toString());
    QJsonObject got{{"name_segments", name_segments(call["colored_name"].toString())},
                    {"global_size", call["global_size"]},
                    {"local_size", programs.value(call["program_key"].toString())["local_size"]},
                    {"applied_opts", call["applied_opts"]}};
    for (const char* key : {"name_segments", "global_size", "local_size", "applied_opts"})
      if (QString d = ts_corpus::compare(want[key], got[key], QStringLiteral("%1 %2").arg(where, key)); !d.isEmpty()) problems << d;
  }
  return problems.join('\n');
}

}  // namespace

class TestCorpusGpu : public QObject {
  Q_OBJECT

 private:
  KnownFailures known_;
  int passed_ = 0, ran_ = 0;
  QStringList observed_failures_;

 private slots:
  void initTestCase() {
    known_ = ts_corpus::read_known_failures(corpus_dir() + QStringLiteral("/known_failures.txt"));
    QVERIFY2(QFileInfo(ts_test::tinyscope_bin()).isExecutable(), "TINYSCOPE_BIN is not executable");
  }

  void run_program_data() { ts_corpus::add_program_rows(corpus_dir(), kDevices); }

  void run_program() {
    QFETCH(QString, device);
    QFETCH(QString, program);
    const QString failure = run_and_compare(program, device);
    const QString key = KnownFailures::key(device, program);
    const bool listed = known_.reasons.contains(key);
    ++ran_;
    passed_ += failure.isEmpty();
    if (!failure.isEmpty()) observed_failures_ << QStringLiteral("%1  # %2").arg(key, failure.section('\n', 0, 0).left(160));
    if (failure.isEmpty() && listed) QFAIL(qPrintable(QStringLiteral("%1 now passes: remove it from known_failures.txt").arg(key)));
    if (!failure.isEmpty() && !listed) QFAIL(qPrintable(failure));
    if (!failure.isEmpty()) qInfo("known failure (%s): %s", qPrintable(known_.reasons[key]), qPrintable(failure.section('\n', 0, 0)));
  }

  void cleanupTestCase() {
    qInfo("corpus-gpu on %s: %d/%d passed", qPrintable(kDevices.join(", ")), passed_, ran_);
    QByteArray out = qgetenv("TS_CORPUS_WRITE_FAILURES");
    if (!out.isEmpty()) {
      QFile f(QString::fromLocal8Bit(out));
      if (f.open(QIODevice::WriteOnly | QIODevice::Text)) f.write((observed_failures_.join('\n') + '\n').toUtf8());
    }
  }
};

QTEST_GUILESS_MAIN(TestCorpusGpu)
#include "test_corpus_gpu.moc"
