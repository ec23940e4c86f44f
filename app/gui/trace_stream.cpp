#include "app/gui/trace_stream.h"

#include <QFile>
#include <QJsonDocument>

#include "engine/trace/schema.h"

namespace tsgui {

namespace {
// the three kinds of line (the writer's keys, in nlohmann's sorted order: each line is one key)
constexpr char kCall[] = "{\"call\":";
constexpr char kContext[] = "{\"context\":";
constexpr char kUops[] = "{\"uops\":";
constexpr char kBeam[] = "{\"beam\":";
constexpr char kOutput[] = "{\"output\":";
constexpr char kSnapshot[] = "{\"snapshot\":";
constexpr char kRule[] = "{\"rule\":";
constexpr char kMemory[] = "{\"memory\":";

// the value of a one-key line `{"key":VALUE}`, or an empty view when the line is not of that kind
QByteArrayView value_of(QByteArrayView line, QByteArrayView prefix) {
  if (!line.startsWith(prefix) || !line.endsWith('}') || line.size() < prefix.size() + 3) return {};
  return line.sliced(prefix.size(), line.size() - prefix.size() - 1);
}
}  // namespace

void TraceStream::reset(const QString& path) {
  path_ = path;
  offset_ = 0;
  tail_.clear();
  calls_ = contexts_ = 0;
  seconds_ = 0;
  last_call_.clear();
  beam_ = {};
}

bool TraceStream::poll() {
  if (path_.isEmpty()) return false;
  QFile f(path_);
  if (!f.open(QIODevice::ReadOnly)) return false;
  if (f.size() <= offset_ || !f.seek(offset_)) return false;
  const QByteArray fresh = f.read(f.size() - offset_);
  offset_ += fresh.size();
  bool got = false;
  qsizetype from = 0;
  for (qsizetype nl; (nl = fresh.indexOf('\n', from)) >= 0; from = nl + 1) {
    const QByteArrayView line = QByteArrayView(fresh).sliced(from, nl - from);
    if (tail_.isEmpty()) {
      take_line(line);
    } else {
      tail_.append(line);
      take_line(tail_);
      tail_.clear();
    }
    got = true;
  }
  tail_.append(QByteArrayView(fresh).sliced(from));
  // only a call line is read whole: of the others (a context can be megabytes) the kind is enough
  if (tail_.size() > 64 && !tail_.startsWith(kCall) && !tail_.startsWith(kBeam)) tail_.truncate(16);
  return got;
}

void TraceStream::take_line(QByteArrayView line) {
  if (line.startsWith(kContext)) {
    ++contexts_;
    return;
  }
  if (const QByteArrayView b = value_of(line, kBeam); !b.isEmpty()) {
    beam_ = QJsonDocument::fromJson(b.toByteArray()).object();
    return;
  }
  const QByteArrayView v = value_of(line, kCall);
  if (v.isEmpty()) return;
  ++calls_;
  const QJsonObject c = QJsonDocument::fromJson(v.toByteArray()).object();
  seconds_ += c.value("seconds").toDouble();
  last_call_ = c.value("name").toString().simplified();
}

QByteArray TraceStream::rebuild(const QString& path, const QJsonObject& fields, int* records, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = QStringLiteral("cannot read the trace stream %1: %2").arg(path, f.errorString());
    return {};
  }
  const QByteArray data = f.readAll();
  QByteArray calls = "[", contexts = "[", uops = "{", outputs = "[", snapshots = "[", rules = "[", memory = "[";
  int n = 0;
  qsizetype from = 0;
  for (qsizetype nl; (nl = data.indexOf('\n', from)) >= 0; from = nl + 1) {
    const QByteArrayView line = QByteArrayView(data).sliced(from, nl - from);
    auto add = [&n](QByteArray& to, QByteArrayView v) {
      if (to.size() > 1) to += ',';
      to += v;
      ++n;
    };
    if (QByteArrayView v = value_of(line, kCall); !v.isEmpty()) add(calls, v);
    else if (QByteArrayView v = value_of(line, kContext); !v.isEmpty()) add(contexts, v);
    else if (QByteArrayView v = value_of(line, kUops); v.size() > 2) add(uops, v.sliced(1, v.size() - 2));  // {"ID":..}
    else if (QByteArrayView v = value_of(line, kOutput); !v.isEmpty()) add(outputs, v);
    else if (QByteArrayView v = value_of(line, kSnapshot); !v.isEmpty()) add(snapshots, v);
    else if (QByteArrayView v = value_of(line, kRule); !v.isEmpty()) add(rules, v);
    else if (QByteArrayView v = value_of(line, kMemory); !v.isEmpty()) add(memory, v);
  }
  if (records) *records = n;
  QByteArray doc = "{\"version\":" + QByteArray::number(ts::trace::kSchemaVersion) + ",\"calls\":" + calls + "],\"contexts\":" + contexts +
                   "],\"uops\":" + uops + "},\"outputs\":" + outputs + "]";
  if (snapshots.size() > 1) doc += ",\"snapshots\":" + snapshots + "]";
  if (rules.size() > 1) doc += ",\"rules\":" + rules + "]";
  if (memory.size() > 1) doc += ",\"" + QByteArray(ts::trace::key::kMemory) + "\":" + memory + "]";
  const QByteArray extra = QJsonDocument(fields).toJson(QJsonDocument::Compact);  // {"k":v,...}
  if (extra.size() > 2) doc += ',' + extra.sliced(1, extra.size() - 2);
  return doc + "}";
}

}  // namespace tsgui
