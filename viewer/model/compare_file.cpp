#include "viewer/model/compare_file.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "viewer/model/trace_check.h"

namespace tsv {

namespace {
const QByteArray kKey = QByteArrayLiteral("\"tinyscope_compare\"");

QByteArray json_string(const QString& s) {
  // a one-element array's text, less its brackets: the string quoted and escaped as JSON
  QByteArray a = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
  return a.mid(1, a.size() - 2);
}
}  // namespace

bool is_compare_file(const QByteArray& data) {
  int i = 0;
  auto skip_space = [&] {
    while (i < data.size() && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) ++i;
  };
  skip_space();
  if (i >= data.size() || data[i] != '{') return false;
  ++i;
  skip_space();
  return data.mid(i, kKey.size()) == kKey;
}

bool is_compare_file_at(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) && is_compare_file(f.read(256));
}

QByteArray write_compare_file(const CompareFile& c) {
  QByteArray out;
  out.reserve(c.first.size() + c.second.size() + 256);
  out += "{" + kKey + ":" + QByteArray::number(kCompareFileVersion);
  out += ",\"first_label\":" + json_string(c.first_label);
  out += ",\"second_label\":" + json_string(c.second_label);
  out += ",\"first\":" + c.first.trimmed();
  out += ",\"second\":" + c.second.trimmed();
  out += "}\n";
  return out;
}

bool parse_compare_file(const QByteArray& data, CompareFile* out, QString* error) {
  auto fail = [error](const QString& e) {
    if (error) *error = e;
    return false;
  };
  if (const QString big = trace_size_error(data.size() / 2); !big.isEmpty())
    return fail(QStringLiteral("a saved comparison holds two traces: ") + big);
  QJsonParseError pe;
  const QJsonDocument d = QJsonDocument::fromJson(data, &pe);
  if (d.isNull()) return fail(QStringLiteral("not valid JSON at byte %1: %2").arg(pe.offset).arg(pe.errorString()));
  if (!d.isObject()) return fail(QStringLiteral("the root is not an object"));
  const QJsonObject root = d.object();
  const QJsonValue v = root.value(QStringLiteral("tinyscope_compare"));
  if (!v.isDouble() || v.toDouble() != kCompareFileVersion)
    return fail(QStringLiteral("a saved comparison of version %1, this build reads version %2")
                    .arg(v.isDouble() ? QString::number(v.toDouble()) : QStringLiteral("(not a number)"))
                    .arg(kCompareFileVersion));
  for (const char* side : {"first", "second"})
    if (!root.value(QLatin1String(side)).isObject()) return fail(QStringLiteral("no \"%1\" trace (an object)").arg(QLatin1String(side)));
  for (const char* label : {"first_label", "second_label"})
    if (root.contains(QLatin1String(label)) && !root.value(QLatin1String(label)).isString())
      return fail(QStringLiteral("\"%1\" must be a string").arg(QLatin1String(label)));
  out->first = QJsonDocument(root.value(QStringLiteral("first")).toObject()).toJson(QJsonDocument::Compact);
  out->second = QJsonDocument(root.value(QStringLiteral("second")).toObject()).toJson(QJsonDocument::Compact);
  out->first_label = root.value(QStringLiteral("first_label")).toString().left(200);
  out->second_label = root.value(QStringLiteral("second_label")).toString().left(200);
  return true;
}

bool read_compare_file(const QString& path, CompareFile* out, QString* error) {
  QFile f(path);
  if (QFileInfo(path).exists() && !QFileInfo(path).isFile()) {
    if (error) *error = QStringLiteral("cannot open %1: not a file").arg(path);
    return false;
  }
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = QStringLiteral("cannot open %1: %2").arg(path, f.errorString());
    return false;
  }
  if (const QString big = trace_size_error(f.size() / 2); !big.isEmpty()) {
    if (error) *error = path + QStringLiteral(": a saved comparison holds two traces: ") + big;
    return false;
  }
  QString e;
  if (!parse_compare_file(f.readAll(), out, &e)) {
    if (error) *error = path + ": " + e;
    return false;
  }
  return true;
}

}  // namespace tsv
