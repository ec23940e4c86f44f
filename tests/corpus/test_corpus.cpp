// Runs every corpus program (tests/corpus/NN_name.py) through `tinyscope run --json` on each device and compares
// the trace with the oracle tinygrad produced (NN_name.expected.json): the RESULT value, the kernel count, the
// kernel names in execution order and the full executed-call order (kernels and copies). On VULKAN (lavapipe, with
// the validation layer on) the results and the kernel count are compared: its kernel names follow the GPU path
// (tests/corpus-gpu). Any validation message fails the run.
//
// known_failures.txt lists "DEVICE PROGRAM  # reason" lines: a listed row is expected to fail, an unlisted one to
// pass. Both surprises fail the test. Set TS_CORPUS_WRITE_FAILURES=FILE to write the list a run observed.
#include <QtCore/QCborValue>
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>

#include "test_env.h"

namespace {

constexpr int kTimeoutMs = 60000;
const QStringList kDevices = {"CPU", "CPU:LLVM", "INTERP", "VULKAN"};
bool gpu_path(const QString& device) { return device.startsWith(QStringLiteral("VULKAN")); }

using ts_test::tinyscope_bin;
QString corpus_dir() { return ts_test::source_dir() + QStringLiteral("/tests/corpus"); }

// python's json writes NaN/Infinity tokens that QJsonDocument rejects: make them the strings the trace uses
QByteArray quote_non_finite(QByteArray text) {
  static const QRegularExpression re(QStringLiteral(R"((?<!["\w])(NaN|-Infinity|Infinity)(?![\w"]))"));
  return QString::fromUtf8(text).replace(re, QStringLiteral("\"\\1\"")).toUtf8();
}

bool read_json(const QString& path, QJsonObject& out, QString& error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    error = QStringLiteral("cannot read %1").arg(path);
    return false;
  }
  QJsonParseError pe;
  QJsonDocument doc = QJsonDocument::fromJson(quote_non_finite(f.readAll()), &pe);
  if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
    error = QStringLiteral("bad JSON in %1: %2").arg(path, pe.errorString());
    return false;
  }
  out = doc.object();
  return true;
}

QString show(const QJsonValue& v) {
  if (v.isString()) return QStringLiteral("\"%1\"").arg(v.toString());
  if (v.isArray()) return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact)).left(200);
  if (v.isObject()) return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact)).left(200);
  if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  if (v.isNull() || v.isUndefined()) return QStringLiteral("null");
  return QString::number(v.toDouble(), 'g', 17);
}

// an integer literal in the JSON text ("2"), as opposed to a float ("2.0"): python ints vs floats
bool is_integer(const QJsonValue& v) { return QCborValue::fromJsonValue(v).isInteger(); }

bool close(double e, double a) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (e == a) return true;
  double diff = std::fabs(e - a);
  return diff <= 1e-6 || diff <= 1e-5 * std::max(std::fabs(e), std::fabs(a));
}

bool is_nan_string(const QJsonValue& v) { return v.isString() && v.toString() == QStringLiteral("NaN"); }

// recursive comparison; returns an empty string when equal, else where and how they differ
QString compare(const QJsonValue& e, const QJsonValue& a, const QString& path) {
  if (is_nan_string(e) || is_nan_string(a)) {
    bool both = (is_nan_string(e) || (e.isDouble() && std::isnan(e.toDouble()))) &&
                (is_nan_string(a) || (a.isDouble() && std::isnan(a.toDouble())));
    return both ? QString() : QStringLiteral("%1: expected %2, got %3").arg(path, show(e), show(a));
  }
  if (e.type() != a.type()) return QStringLiteral("%1: expected %2, got %3").arg(path, show(e), show(a));
  switch (e.type()) {
    case QJsonValue::Array: {
      QJsonArray ea = e.toArray(), aa = a.toArray();
      if (ea.size() != aa.size())
        return QStringLiteral("%1: expected %2 elements, got %3 (%4)").arg(path).arg(ea.size()).arg(aa.size()).arg(show(a));
      for (qsizetype i = 0; i < ea.size(); ++i)
        if (QString d = compare(ea[i], aa[i], QStringLiteral("%1[%2]").arg(path).arg(i)); !d.isEmpty()) return d;
      return {};
    }
    case QJsonValue::Object: {
      QJsonObject eo = e.toObject(), ao = a.toObject();
      if (eo.keys() != ao.keys())
        return QStringLiteral("%1: expected keys %2, got %3").arg(path, eo.keys().join(','), ao.keys().join(','));
      for (const QString& k : eo.keys())
        if (QString d = compare(eo[k], ao[k], path + "." + k); !d.isEmpty()) return d;
      return {};
    }
    case QJsonValue::Double: {
      // QJsonDocument reads 1.0 as an integer, so python ints and integral floats cannot be told apart here:
      // integers compare exactly, anything else with the float tolerance
      bool ei = is_integer(e), ai = is_integer(a);
      if (ei && ai ? e.toInteger() == a.toInteger() : close(e.toDouble(), a.toDouble())) return {};
      return QStringLiteral("%1: expected %2, got %3").arg(path, show(e), show(a));
    }
    default:
      return e == a ? QString() : QStringLiteral("%1: expected %2, got %3").arg(path, show(e), show(a));
  }
}

QString collapse(QString s) { return s.simplified(); }

QStringList names_of(const QJsonArray& calls, bool kernels_only) {
  QStringList out;
  for (const QJsonValue& c : calls) {
    QJsonObject o = c.toObject();
    if (kernels_only && o["kind"].toString() != QStringLiteral("kernel")) continue;
    out << collapse(o["name"].toString());
  }
  return out;
}

QStringList strings_of(const QJsonArray& a) {
  QStringList out;
  for (const QJsonValue& v : a) out << collapse(v.toString());
  return out;
}

QString first_lines(const QString& text, int n) {
  QStringList lines = text.trimmed().split('\n');
  if (lines.size() <= n) return lines.join('\n');
  return QStringLiteral("...\n") + lines.mid(lines.size() - n).join('\n');
}

// runs one program on one device; an empty result means it matched the oracle
QString run_and_compare(const QString& program, const QString& device) {
  const QString dir = corpus_dir();
  QJsonObject expected;
  QString error;
  if (!read_json(QStringLiteral("%1/%2.expected.json").arg(dir, program), expected, error)) return error;

  QTemporaryDir tmp;
  const QString out = tmp.filePath(QStringLiteral("trace.json"));
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", device);
  env.insert("NUM_CPU_THREADS", "8");
  env.insert("DEBUG", "0");
  if (gpu_path(device)) ts_test::vulkan_test_env(env, tmp.path());
  p.setProcessEnvironment(env);
  p.setWorkingDirectory(dir);
  p.start(tinyscope_bin(),
          {"run", QStringLiteral("%1/%2.py").arg(dir, program), "--json", out});
  if (!p.waitForStarted()) return QStringLiteral("cannot start %1: %2").arg(p.program(), p.errorString());
  if (!p.waitForFinished(kTimeoutMs)) {
    p.kill();
    p.waitForFinished();
    return QStringLiteral("timeout after %1 s").arg(kTimeoutMs / 1000);
  }
  QString err = QString::fromUtf8(p.readAllStandardError());
  const QString last = err.trimmed().section('\n', -1);
  if (p.exitStatus() != QProcess::NormalExit) return QStringLiteral("crashed: %1\n%2").arg(last, first_lines(err, 8));
  if (p.exitCode() != 0) return QStringLiteral("exit code %1: %2\n%3").arg(p.exitCode()).arg(last, first_lines(err, 8));

  QJsonObject trace;
  if (!read_json(out, trace, error)) return error;
  QJsonArray calls = trace["calls"].toArray();
  QStringList problems;
  if (QString d = compare(expected["result"], trace["result"], "result"); !d.isEmpty()) problems << d;
  QStringList kernels = names_of(calls, true);
  if (kernels.size() != expected["kernel_count"].toInt())
    problems << QStringLiteral("kernel count: expected %1, got %2").arg(expected["kernel_count"].toInt()).arg(kernels.size());
  if (gpu_path(device)) return problems.join('\n');
  QStringList want_kernels = strings_of(expected["kernels"].toArray());
  if (kernels != want_kernels)
    problems << QStringLiteral("kernels: expected [%1], got [%2]").arg(want_kernels.join(", "), kernels.join(", "));
  QStringList all = names_of(calls, false), want_all = strings_of(expected["executed_calls"].toArray());
  if (all != want_all) problems << QStringLiteral("executed calls: expected [%1], got [%2]").arg(want_all.join(", "), all.join(", "));
  return problems.join('\n');
}

struct KnownFailures {
  QMap<QString, QString> reasons;  // "DEVICE PROGRAM" -> reason
  static QString key(const QString& device, const QString& program) { return device + ' ' + program; }
};

KnownFailures read_known_failures() {
  KnownFailures k;
  QFile f(corpus_dir() + QStringLiteral("/known_failures.txt"));
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return k;
  for (const QString& raw : QString::fromUtf8(f.readAll()).split('\n')) {
    QString line = raw.trimmed();
    if (line.isEmpty() || line.startsWith('#')) continue;
    QString reason;
    if (int hash = line.indexOf('#'); hash >= 0) {
      reason = line.mid(hash + 1).trimmed();
      line = line.left(hash).trimmed();
    }
    QStringList parts = line.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    if (parts.size() == 2) k.reasons[KnownFailures::key(parts[0], parts[1])] = reason;
  }
  return k;
}

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

  void run_program_data() {
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("program");
    QStringList programs = QDir(corpus_dir()).entryList({"*.expected.json"}, QDir::Files, QDir::Name);
    QVERIFY2(!programs.isEmpty(), "no corpus programs found");
    for (const QString& device : kDevices)
      for (QString p : programs) {
        p.chop(QStringLiteral(".expected.json").size());
        QTest::newRow(qPrintable(device + '/' + p)) << device << p;
      }
  }

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
