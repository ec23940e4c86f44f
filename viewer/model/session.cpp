#include "viewer/model/session.h"

#include <QSet>

#include <algorithm>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QCoreApplication>
#include <QPointer>
#include <QRegularExpression>
#include <QSaveFile>
#include <QThreadPool>
#include <bit>
#include <memory>

#include "engine/trace/schema.h"
#include "viewer/model/ansi.h"
#include "viewer/model/trace_check.h"

namespace tsv {

namespace key = ts::trace::key;
namespace stamp = ts::trace::stamp;
namespace field = ts::trace::field;

namespace {
QList<int> ints(const QJsonValue& v) {
  QList<int> out;
  for (const auto& x : v.toArray()) out.push_back(x.toInt());
  return out;
}
QList<qint64> int64s(const QJsonValue& v) {
  QList<qint64> out;
  for (const auto& x : v.toArray()) out.push_back(x.toInteger());
  return out;
}
Estimates estimates(const QJsonValue& v) {
  const QJsonObject o = v.toObject();
  return {o["ops"].toDouble(), o["lds"].toDouble(), o["mem"].toDouble()};
}
QString any_text(const QJsonValue& v) {
  if (v.isString()) return v.toString();
  if (v.isNull() || v.isUndefined()) return {};
  QJsonDocument d = v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(QJsonArray{v});
  QString s = QString::fromUtf8(d.toJson(QJsonDocument::Compact));
  return v.isArray() ? s : s.mid(1, s.size() - 2);
}
// the file's bytes, unless it is no file or over the size limit (checked before reading it)
bool read_trace(const QString& path, QByteArray* data, QString* error) {
  QFile f(path);
  const QFileInfo info(path);
  if (info.exists() && !info.isFile()) {
    *error = QStringLiteral("cannot open %1: not a file").arg(path);
    return false;
  }
  if (!f.open(QIODevice::ReadOnly)) {
    *error = QStringLiteral("cannot open %1: %2").arg(path, f.errorString());
    return false;
  }
  if (const QString big = trace_size_error(f.size()); !big.isEmpty()) {
    *error = path + ": " + big;
    return false;
  }
  *data = f.readAll();
  return true;
}
}  // namespace

QList<int> Session::snapshots_of(int call) const {
  QList<int> out;
  // in call order: the first at or after `call`, then those of that call
  auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), call, [](const Output& o, int c) { return o.call < c; });
  for (; it != snapshots_.end() && it->call == call; ++it) out << int(it - snapshots_.begin());
  return out;
}

const Uop* Session::uop(int id) const {
  auto it = uops_.constFind(id);
  return it == uops_.constEnd() ? nullptr : &it.value();
}

const RuleInfo* Session::rule_info(const QString& name, const QString& loc) const {
  auto it = rule_by_key_.constFind(loc + '\n' + name);
  return it == rule_by_key_.constEnd() ? nullptr : &rules_[*it];
}

int Session::schedule_context(int schedule_index) const {
  return schedule_index >= 0 && schedule_index < schedules_.size() ? schedules_[schedule_index] : -1;
}

int Session::kernel_context(const Call& call) const {
  if (call.program_key.isEmpty()) return -1;
  return kernel_by_key_.value(program_id(call.program_key, call.applied_opts), kernel_context(call.program_key));
}

QList<int> Session::calls_of_context(int context) const {
  QList<int> out;
  if (context < 0 || context >= contexts_.size() || !contexts_[context].has_program) return out;
  for (int i : calls_of(contexts_[context].program.program_key))
    if (kernel_context(calls_[i]) == context) out.push_back(i);
  return out;
}

QList<int> Session::calls_of(const QString& program_key) const {
  QList<int> out;
  if (program_key.isEmpty()) return out;
  for (int i = 0; i < calls_.size(); ++i)
    if (calls_[i].program_key == program_key) out.push_back(i);
  return out;
}

QString Call::display_name() const { return strip_ansi(colored_name).simplified(); }

QList<int> Session::calls_of_schedule(int schedule_context) const {
  QList<int> out;
  const int k = schedules_.indexOf(schedule_context);
  if (k < 0) return out;
  for (int i = 0; i < calls_.size(); ++i)
    if (calls_[i].schedule_index == k) out.push_back(i);
  return out;
}

const LinearItem* Session::linear_item(int call) const {
  if (call < 0 || call >= calls_.size()) return nullptr;
  const int ctx = schedule_context(calls_[call].schedule_index);
  if (ctx < 0) return nullptr;
  const int item = int(calls_of_schedule(ctx).indexOf(call));
  const auto& linear = contexts_[ctx].linear;
  return item >= 0 && item < linear.size() ? &linear[item] : nullptr;
}

QPair<QString, int> Session::script_line_of(int context) const {
  if (context < 0 || context >= contexts_.size()) return {};
  static const QRegularExpression kWhere(QStringLiteral(" · ([^ ]+):(\\d+)$"));
  const QRegularExpressionMatch m = kWhere.match(contexts_[context].plain_name);
  if (!m.hasMatch()) return {};
  return {m.captured(1), m.captured(2).toInt()};
}

QMap<int, QList<int>> Session::schedules_by_line(const QString& file) const {
  QMap<int, QList<int>> out;
  for (int i = 0; i < contexts_.size(); ++i) {
    if (!contexts_[i].is_schedule()) continue;
    const auto [f, line] = script_line_of(i);
    if (line > 0 && f == file) out[line].push_back(i);
  }
  return out;
}

void Session::clear() {
  path_.clear(), script_.clear(), device_.clear(), result_.clear(), partial_.clear(), raw_.clear();
  console_.clear();
  contexts_.clear(), calls_.clear(), uops_.clear(), outputs_.clear(), snapshots_.clear(), memory_.clear(), kernel_by_key_.clear(), schedules_.clear();
  limits_ = MeasuredLimits{};
  rules_.clear(), rule_by_key_.clear();
  emit loaded();
}

bool Session::load(const QString& path, QString* error) {
  QByteArray data;
  QString e;
  if (!read_trace(path, &data, &e)) {
    if (error) *error = e;
    return false;
  }
  if (!load_data(data, &e, path)) {
    if (error) *error = path + ": " + e;
    return false;
  }
  return true;
}

bool Session::save(const QString& path, QString* error) const {
  if (raw_.isEmpty()) {
    if (error) *error = QStringLiteral("no trace is loaded");
    return false;
  }
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(raw_) != raw_.size() || !f.commit()) {
    if (error) *error = QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  return true;
}

bool Session::parse(const QByteArray& data, Parsed* out, QString* error) {
  // everything below reads a document that matches the schema: check_trace() refused anything else
  QJsonDocument doc;
  if (!check_trace(data, &doc, error)) return false;
  const QJsonObject root = doc.object();
  QList<Context>& contexts = out->contexts;
  QList<Call>& calls = out->calls;
  QHash<int, Uop>& uops = out->uops;
  QHash<QString, int>& by_key = out->by_key;
  QList<int>& schedules = out->schedules;

  const QJsonObject uo = root[key::kUops].toObject();
  uops.reserve(uo.size());
  // a trace names a few ops, dtypes and devices hundreds of thousands of times: each uop shares one copy of each
  QSet<QString> pool;
  auto shared = [&pool](const QString& s) { return *pool.insert(s); };
  for (auto it = uo.constBegin(); it != uo.constEnd(); ++it) {
    // one pass over the uop's members (a lookup per key scans them each time)
    const QJsonObject o = it.value().toObject();
    Uop u;
    for (auto m = o.constBegin(); m != o.constEnd(); ++m) {
      const QString k = m.key();
      if (k == QLatin1String("op")) u.op = shared(m.value().toString());
      else if (k == QLatin1String("dtype")) u.dtype = shared(m.value().toString());
      else if (k == QLatin1String("arg")) u.arg = any_text(m.value());
      else if (k == QLatin1String("device")) u.device = shared(m.value().toString());
      else if (k == QLatin1String("src")) u.src = ints(m.value());
      else if (k == QLatin1String("shape")) u.shape = int64s(m.value());
      else if (k == QLatin1String("tag")) u.tag = m.value().toInt(-1);
    }
    uops.emplace(it.key().toInt(), std::move(u));
  }
  for (const auto& cv : root[key::kContexts].toArray()) {
    const QJsonObject o = cv.toObject();
    Context c;
    c.id = o["id"].toInt();
    c.kind = o["kind"].toString();
    c.name = o["name"].toString();
    c.plain_name = strip_ansi(c.name);
    for (const auto& pv : o["passes"].toArray()) {
      const QJsonObject po = pv.toObject();
      Pass p{po["name"].toString(), po["depth"].toInt(), po["before"].toInt(-1), po["after"].toInt(-1),
             po["match_count"].toInt(), {}};
      for (const auto& mv : po["matches"].toArray()) {
        const QJsonObject mo = mv.toObject();
        p.matches.push_back({mo["rule"].toString(), any_text(mo["loc"]), mo["before"].toInt(-1), mo["after"].toInt(-1)});
      }
      c.passes.push_back(p);
    }
    c.tensor_graph = ints(o["tensor_graph"]);
    for (const auto& lv : o["linear"].toArray()) {
      const QJsonObject lo = lv.toObject();
      c.linear.push_back({lo["kind"].toString(), ints(lo["bufs"]), lo["ast"].toInt(-1), lo["computes"].toInt(-1), ints(lo["members"])});
    }
    c.begin = o[stamp::kBegin].toDouble(-1);
    c.end = o[stamp::kEnd].toDouble(-1);
    if (const QJsonArray cc = o[stamp::kCompile].toArray(); cc.size() == 2) {
      c.compile_begin = cc.at(0).toDouble(-1);
      c.compile_end = cc.at(1).toDouble(-1);
    }
    for (const auto& f : o[field::kStatistics].toArray()) c.statistics.push_back({f.toArray().at(0).toString(), f.toArray().at(1).toString()});
    if (o.contains("program")) {
      const QJsonObject po = o["program"].toObject();
      c.has_program = true;
      Program& p = c.program;
      p.name = po["name"].toString();
      p.colored_name = po["colored_name"].toString();
      p.src = po["src"].toString();
      p.lang = po["lang"].toString();
      p.program_key = po["program_key"].toString();
      for (const auto& a : po["applied_opts"].toArray()) p.applied_opts.push_back(a.toString());
      p.opts_source = po["opts_source"].toString();
      for (const auto& l : po["lines"].toArray()) p.lines.push_back({l.toArray().at(0).toInt(), l.toArray().at(1).toInt()});
      p.global_size = int64s(po["global_size"]);
      p.estimates = estimates(po["estimates"]);
      p.ast = po["ast"].toInt(-1);
    }
    // the n-th schedule that ran (calls' schedule_index): a schedule context with a LINEAR; a context the script
    // opened for a scope of its own (a "Gradient" one) has none and ran nothing
    if (c.is_schedule() && o.contains("linear")) schedules.push_back(contexts.size());
    else if (!c.is_schedule()) c.schedule = schedules.isEmpty() ? -1 : schedules.back();
    if (c.has_program && !c.program.program_key.isEmpty()) {
      if (!by_key.contains(c.program.program_key)) by_key.insert(c.program.program_key, contexts.size());
      const QString with_opts = program_id(c.program.program_key, c.program.applied_opts);
      if (!by_key.contains(with_opts)) by_key.insert(with_opts, contexts.size());
    }
    contexts.push_back(c);
  }
  for (const auto& cv : root[key::kCalls].toArray()) {
    const QJsonObject o = cv.toObject();
    Call c;
    c.kind = o["kind"].toString();
    c.name = o["name"].toString();
    c.colored_name = o["colored_name"].toString();
    c.device = o["device"].toString();
    c.program_key = o["program_key"].toString();
    for (const auto& a : o["applied_opts"].toArray()) c.applied_opts.push_back(a.toString());
    c.counter = o["counter"].toInt();
    c.num_args = o["num_args"].toInt();
    c.schedule_index = o["schedule_index"].toInt();
    for (const auto& a : o["arg_sizes"].toArray()) {
      const QJsonArray arr = a.toArray();
      c.arg_sizes.push_back({arr.at(0).toInteger(), arr.at(1).toString()});
    }
    c.global_size = int64s(o["global_size"]);
    c.seconds = o["seconds"].toDouble();
    for (const auto& t : o["times"].toArray()) c.times.push_back(t.toDouble());
    c.first_run = o["first_run"].toBool();
    c.jit = o["jit"].toBool();
    c.graph = o["graph"].toInt();
    c.run = o["run"].toInt(-1);
    c.repeat_mode = o["repeat_mode"].toString();
    c.estimates = estimates(o["estimates"]);
    c.launched = o[stamp::kLaunched].toDouble(-1);
    c.start = o[stamp::kStart].toDouble(-1);
    c.writes = int64s(o[stamp::kWrites]);
    c.reads = int64s(o[stamp::kReads]);
    calls.push_back(c);
  }
  // a value's dtype, shape and stored values: little-endian 8-byte words (check_trace has checked the length)
  auto values = [](const QJsonObject& o) {
    Output v;
    v.dtype = o["dtype"].toString();
    v.bits = o["bits"].toInt();
    v.shape = int64s(o["shape"]);
    v.count = o["count"].toInteger();
    const QByteArray bytes = QByteArray::fromBase64(o["values"].toString().toLatin1());
    const qsizetype n = bytes.size() / 8;
    auto word = [&bytes](qsizetype k) {
      quint64 w = 0;
      for (int b = 7; b >= 0; --b) w = w << 8 | quint8(bytes[k * 8 + b]);
      return w;
    };
    if (v.is_float()) {
      v.f.resize(n);
      for (qsizetype k = 0; k < n; ++k) v.f[k] = std::bit_cast<double>(word(k));
    } else {
      v.i.resize(n);
      for (qsizetype k = 0; k < n; ++k) v.i[k] = qint64(word(k));
    }
    return v;
  };
  for (const auto& ov : root[key::kOutputs].toArray()) {
    const QJsonObject o = ov.toObject();
    Output v = values(o);
    v.where = o["where"].toString();
    v.after_call = o["after_call"].toInt();
    out->outputs.push_back(std::move(v));
  }
  for (const auto& sv : root[key::kSnapshots].toArray()) {
    const QJsonObject o = sv.toObject();
    Output v = values(o);
    v.call = o["call"].toInt();
    v.arg = o["arg"].toInt();
    v.after_call = v.call + 1;
    out->snapshots.push_back(std::move(v));
  }
  for (const auto& rv : root[key::kRules].toArray()) {
    const QJsonObject o = rv.toObject();
    out->rules.push_back({o["name"].toString(), o["file"].toString(), o["text"].toString(), o["line"].toInt(), o["first_line"].toInt()});
  }
  for (const auto& mv : root[key::kMemory].toArray()) {
    const QJsonObject o = mv.toObject();
    out->memory.push_back({o["alloc"].toBool(), o["device"].toString(), o["bytes"].toInteger(), o["buffer"].toInteger(), o["t"].toDouble(),
                           o["after_call"].toInt()});
  }
  out->script = root[key::kScript].toString();
  out->device = root[key::kDevice].toString();
  out->result = any_text(root[key::kResult]);
  out->partial = root[key::kPartial].toString();
  for (const auto& part : root[key::kConsole].toArray()) {
    const QJsonObject o = part.toObject();
    out->console.push_back({o["stream"].toString() == QLatin1String("stderr"), o["text"].toString()});
  }
  if (root.contains(QLatin1StringView(key::kLimits))) {
    const QJsonObject l = root[key::kLimits].toObject();
    out->limits = {l["device"].toString(),        l["machine"].toString(),         l["measured_at"].toString(),
                   l["bandwidth_gbs"].toDouble(), l["peak_gflops"].toDouble(),     l["bandwidth_label"].toString(),
                   l["peak_label"].toString()};
  }
  out->raw = data;
  return true;
}

void Session::adopt(Parsed&& p, const QString& path) {
  script_ = std::move(p.script);
  device_ = std::move(p.device);
  result_ = std::move(p.result);
  partial_ = std::move(p.partial);
  console_ = std::move(p.console);
  contexts_ = std::move(p.contexts);
  calls_ = std::move(p.calls);
  uops_ = std::move(p.uops);
  outputs_ = std::move(p.outputs);
  snapshots_ = std::move(p.snapshots);
  limits_ = std::move(p.limits);
  rules_ = std::move(p.rules);
  memory_ = std::move(p.memory);
  rule_by_key_.clear();
  for (int i = 0; i < rules_.size(); ++i)
    if (const QString key = rules_[i].loc() + '\n' + rules_[i].name; !rule_by_key_.contains(key)) rule_by_key_.insert(key, i);
  kernel_by_key_ = std::move(p.by_key);
  schedules_ = std::move(p.schedules);
  raw_ = std::move(p.raw);
  path_ = path;
  emit loaded();
}

bool Session::load_data(const QByteArray& data, QString* error, const QString& path) {
  ++async_generation_;  // a pending load_async() is superseded
  loading_ = false;
  Parsed p;
  if (!parse(data, &p, error)) return false;
  adopt(std::move(p), path);
  return true;
}

void Session::load_async(const QString& path) {
  const int generation = ++async_generation_;
  loading_ = true;
  QPointer<Session> self(this);
  QThreadPool::globalInstance()->start([self, path, generation] {
    auto parsed = std::make_shared<Parsed>();
    QString error;
    bool ok = false;
    QByteArray data;
    if (read_trace(path, &data, &error) && !(ok = parse(data, parsed.get(), &error))) error = path + ": " + error;
    // back on the UI thread (qApp outlives every session; the QPointer is read there)
    QMetaObject::invokeMethod(QCoreApplication::instance(), [self, parsed, path, generation, ok, error] {
      if (!self || generation != self->async_generation_) return;  // gone, or a newer load was asked for
      self->loading_ = false;
      if (ok) self->adopt(std::move(*parsed), path);
      emit self->load_finished(ok, error);
    }, Qt::QueuedConnection);
  });
}

}  // namespace tsv
