#pragma once
// Helpers shared by the corpus tests (tests/corpus, tests/corpus-gpu): reading an oracle written by python's json
// (NaN / Infinity tokens), comparing an oracle value with a trace value (floats with a tolerance), running a program
// in a child `tinyscope run --json`, and the known-failures list.
#include <QtCore/QCborValue>
#include <QtCore/QDir>
#include <QtTest/QtTest>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QMap>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtCore/QString>

#include "test_env.h"
#include <QtCore/QStringList>
#include <QtCore/QTemporaryDir>
#include <algorithm>
#include <cmath>

namespace ts_corpus {

// python's json writes NaN/Infinity tokens that QJsonDocument rejects: make them the strings the trace uses
inline QByteArray quote_non_finite(QByteArray text) {
  static const QRegularExpression re(QStringLiteral(R"((?<!["\w])(NaN|-Infinity|Infinity)(?![\w"]))"));
  return QString::fromUtf8(text).replace(re, QStringLiteral("\"\\1\"")).toUtf8();
}

inline bool read_json(const QString& path, QJsonObject& out, QString& error) {
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

inline QString show(const QJsonValue& v) {
  if (v.isString()) return QStringLiteral("\"%1\"").arg(v.toString());
  if (v.isArray()) return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact)).left(200);
  if (v.isObject()) return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact)).left(200);
  if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  if (v.isNull() || v.isUndefined()) return QStringLiteral("null");
  return QString::number(v.toDouble(), 'g', 17);
}

// an integer literal in the JSON text ("2"), as opposed to a float ("2.0"): python ints vs floats
inline bool is_integer(const QJsonValue& v) { return QCborValue::fromJsonValue(v).isInteger(); }

inline bool close(double e, double a) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (e == a) return true;
  double diff = std::fabs(e - a);
  return diff <= 1e-6 || diff <= 1e-5 * std::max(std::fabs(e), std::fabs(a));
}

inline bool is_nan_string(const QJsonValue& v) { return v.isString() && v.toString() == QStringLiteral("NaN"); }

// recursive comparison; returns an empty string when equal, else where and how they differ
inline QString compare(const QJsonValue& e, const QJsonValue& a, const QString& path) {
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


inline QString collapse(QString s) { return s.simplified(); }

// the names of a trace's calls (kernels only, or kernels and copies), whitespace collapsed
inline QStringList names_of(const QJsonArray& calls, bool kernels_only) {
  QStringList out;
  for (const QJsonValue& c : calls) {
    QJsonObject o = c.toObject();
    if (kernels_only && o["kind"].toString() != QStringLiteral("kernel")) continue;
    out << collapse(o["name"].toString());
  }
  return out;
}

inline QStringList strings_of(const QJsonArray& a) {
  QStringList out;
  for (const QJsonValue& v : a) out << collapse(v.toString());
  return out;
}

inline QString first_lines(const QString& text, int n) {
  QStringList lines = text.trimmed().split('\n');
  if (lines.size() <= n) return lines.join('\n');
  return QStringLiteral("...\n") + lines.mid(lines.size() - n).join('\n');
}

// `BIN run DIR/PROGRAM.py --json TRACE` on DEV=device (NUM_CPU_THREADS=8, as the oracles were recorded) and its
// trace read back; false with `error` set when it does not start, times out, crashes, fails or writes no trace
inline bool run_traced(const QString& bin, const QString& dir, const QString& program, const QString& device, int timeout_ms,
                       QJsonObject& trace, QString& error) {
  QTemporaryDir tmp;
  const QString out = tmp.filePath(QStringLiteral("trace.json"));
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", device);
  env.insert("NUM_CPU_THREADS", "8");
  env.insert("DEBUG", "0");
  if (device.startsWith(QStringLiteral("VULKAN"))) ts_test::vulkan_test_env(env, tmp.path());
  p.setProcessEnvironment(env);
  p.setWorkingDirectory(dir);
  p.start(bin, {"run", QStringLiteral("%1/%2.py").arg(dir, program), "--json", out});
  if (!p.waitForStarted()) {
    error = QStringLiteral("cannot start %1: %2").arg(p.program(), p.errorString());
    return false;
  }
  if (!p.waitForFinished(timeout_ms)) {
    p.kill();
    p.waitForFinished();
    error = QStringLiteral("timeout after %1 s").arg(timeout_ms / 1000);
    return false;
  }
  QString err = QString::fromUtf8(p.readAllStandardError());
  const QString last = err.trimmed().section('\n', -1);
  if (p.exitStatus() != QProcess::NormalExit) error = QStringLiteral("crashed: %1\n%2").arg(last, first_lines(err, 8));
  else if (p.exitCode() != 0) error = QStringLiteral("exit code %1: %2\n%3").arg(p.exitCode()).arg(last, first_lines(err, 8));
  if (!error.isEmpty()) return false;
  return read_json(out, trace, error);
}

// the oracle's RESULT, kernel count and kernel names in execution order against a trace
inline QStringList compare_results_and_kernels(const QJsonObject& expected, const QJsonObject& trace) {
  QStringList problems;
  if (QString d = compare(expected["result"], trace["result"], "result"); !d.isEmpty()) problems << d;
  QStringList kernels = names_of(trace["calls"].toArray(), true);
  if (kernels.size() != expected["kernel_count"].toInt())
    problems << QStringLiteral("kernel count: expected %1, got %2").arg(expected["kernel_count"].toInt()).arg(kernels.size());
  QStringList want_kernels = strings_of(expected["kernels"].toArray());
  if (kernels != want_kernels)
    problems << QStringLiteral("kernels: expected [%1], got [%2]").arg(want_kernels.join(", "), kernels.join(", "));
  return problems;
}

// known_failures.txt: "DEVICE PROGRAM  # reason" lines ('#' starts a comment)
struct KnownFailures {
  QMap<QString, QString> reasons;  // "DEVICE PROGRAM" -> reason
  static QString key(const QString& device, const QString& program) { return device + ' ' + program; }
};

inline KnownFailures read_known_failures(const QString& path) {
  KnownFailures k;
  QFile f(path);
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

// QTest rows "DEVICE/PROGRAM" (columns device, program) for every DIR/PROGRAM.expected.json on every device
inline void add_program_rows(const QString& dir, const QStringList& devices) {
  QTest::addColumn<QString>("device");
  QTest::addColumn<QString>("program");
  QStringList programs = QDir(dir).entryList({"*.expected.json"}, QDir::Files, QDir::Name);
  QVERIFY2(!programs.isEmpty(), qPrintable(QStringLiteral("no programs in %1").arg(dir)));
  for (const QString& device : devices)
    for (QString p : programs) {
      p.chop(QStringLiteral(".expected.json").size());
      QTest::newRow(qPrintable(device + '/' + p)) << device << p;
    }
}

}  // namespace ts_corpus
