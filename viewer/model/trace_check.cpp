#include "viewer/model/trace_check.h"

#include <QHash>
#include <algorithm>
#include <array>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <QRegularExpression>
#include <climits>
#include <cmath>
#include <vector>

#include "engine/trace/schema.h"

namespace tsv {

namespace key = ts::trace::key;
namespace stamp = ts::trace::stamp;
namespace field = ts::trace::field;
using ts::trace::kConsoleChars;
using ts::trace::kSchemaVersion;

TraceLimits default_limits() {
  TraceLimits l;
  bool ok = false;
  const qint64 mb = qEnvironmentVariable("TINYSCOPE_MAX_TRACE_MB").toLongLong(&ok);
  if (ok && mb > 0) {  // up to 2 GB (the parser's offsets are ints); the value count grows with it
    l.max_bytes = std::min<qint64>(mb, 2047) << 20;
    l.max_values = std::max(l.max_values, l.max_bytes / 11);
  }
  return l;
}

QString trace_size_error(qint64 bytes, const TraceLimits& limits) {
  if (bytes <= limits.max_bytes) return {};
  auto mb = [](qint64 b) { return QString::number(double(b) / (1 << 20), 'f', 1) + QStringLiteral(" MB"); };
  return QStringLiteral("the trace is %1, the viewer reads traces up to %2 (TINYSCOPE_MAX_TRACE_MB raises the limit)")
      .arg(mb(bytes), mb(limits.max_bytes));
}

namespace {

// Step 1: the raw bytes, before a parser sees them: nesting depth (a parser recurses on it) and the spelling of the
// root's "version" value (a parser reads 1.0 as the integer 1). A linear scan that knows strings and escapes.
bool scan(const QByteArray& data, const TraceLimits& lim, QByteArray* version, QString* error) {
  const char* p = data.constData();
  const qsizetype n = data.size();
  int depth = 0;
  qint64 values = 0;  // about one a value: each ',', '[' and '{' outside strings
  qsizetype last_key_begin = -1, last_key_end = -1;  // the last string directly inside the root object
  for (qsizetype i = 0; i < n; ++i) {
    const char c = p[i];
    if (c == '"') {
      const qsizetype begin = i + 1;
      for (++i; i < n && p[i] != '"'; ++i)
        if (p[i] == '\\') ++i;
      if (depth == 1) last_key_begin = begin, last_key_end = i;
    } else if (c == '[' || c == '{') {
      ++values;
      if (++depth > lim.max_nesting) {
        *error = QStringLiteral("arrays and objects nested more than %1 deep (at byte %2)").arg(lim.max_nesting).arg(i);
        return false;
      }
      last_key_begin = -1;
    } else if (c == ']' || c == '}') {
      --depth;
      last_key_begin = -1;
    } else if (c == ':' && depth == 1 && last_key_begin >= 0) {
      if (QByteArrayView(p + last_key_begin, last_key_end - last_key_begin) == key::kVersion) {
        qsizetype b = i + 1;
        while (b < n && (p[b] == ' ' || p[b] == '\t' || p[b] == '\n' || p[b] == '\r')) ++b;
        qsizetype e = b;
        while (e < n && p[e] != ',' && p[e] != '}' && p[e] != ' ' && p[e] != '\t' && p[e] != '\n' && p[e] != '\r') ++e;
        *version = QByteArray(p + b, std::min<qsizetype>(e - b, 40));  // the last one counts, as for the parser
      }
      last_key_begin = -1;
    } else if (c == ',') {
      ++values;
      last_key_begin = -1;
    }
  }
  if (values > lim.max_values) {
    *error = QStringLiteral("some %1 JSON values (the limit is %2)").arg(values).arg(lim.max_values);
    return false;
  }
  return true;
}

// a piece of the trace in an error message: at most 40 characters, control characters written as \xNN (the
// message stays one line, and an escape sequence in a crafted trace does not reach the terminal)
QString printable(const QString& s) {
  QString out;
  for (QChar c : s.left(40)) {
    if (c.unicode() < 0x20 || c.unicode() == 0x7f) out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
    else out += c;
  }
  return s.size() > 40 ? out + QStringLiteral("…") : out;
}

// A place in the document, turned into text only when a check fails: contexts[3].passes[0].before, uops["12"].src
struct Where {
  const Where* up = nullptr;
  const char* key = nullptr;  // a field of an object
  qsizetype index = -1;       // or an element of an array
  const QString* name = nullptr;  // or a key of the uops object
  QString text() const {
    QString s = up ? up->text() : QString();
    if (key) s += (s.isEmpty() ? QString() : QStringLiteral(".")) + QLatin1StringView(key);
    else if (name) s += QStringLiteral("[\"%1\"]").arg(printable(*name));
    else if (index >= 0) s += QStringLiteral("[%1]").arg(index);
    return s;
  }
};

QString describe(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
      const double d = v.toDouble();
      return QStringLiteral("the number %1").arg(d == std::floor(d) && std::abs(d) < 9e15 ? QString::number(qint64(d)) : QString::number(d));
    }
    case QJsonValue::String: return QStringLiteral("the string \"%1\"").arg(printable(v.toString()));
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
  }
  return QStringLiteral("nothing");
}

class Checker {
 public:
  explicit Checker(const TraceLimits& lim) : lim_(lim) {}
  QString error;

  bool fail(const Where& w, const QString& what) {
    if (error.isEmpty()) {
      const QString at = w.text();
      error = at.isEmpty() ? what : at + QStringLiteral(": ") + what;
    }
    return false;
  }
  bool expected(const Where& w, const char* what, const QJsonValue& v) {
    return fail(w, QStringLiteral("expected %1, found %2").arg(QLatin1StringView(what), describe(v)));
  }

  bool root(const QJsonObject& o, const QByteArray& version_token) {
    const Where top;
    if (!o.contains(QLatin1StringView(key::kVersion)))
      return fail(top, QStringLiteral("no schema version (the key \"%1\" is missing)").arg(QLatin1StringView(key::kVersion)));
    const QJsonValue v = o.value(QLatin1StringView(key::kVersion));
    const Where w{&top, key::kVersion};
    bool digits = !version_token.isEmpty();
    for (char c : version_token) digits = digits && c >= '0' && c <= '9';
    if (!v.isDouble() || !digits)
      return fail(w, QStringLiteral("expected the integer %1, found %2")
                         .arg(kSchemaVersion)
                         .arg(v.isDouble() && !version_token.isEmpty() ? QString::fromLatin1(version_token) : describe(v)));
    if (v.toInteger() != kSchemaVersion)
      return fail(w, QStringLiteral("trace schema version %1, this viewer reads version %2").arg(QString::fromLatin1(version_token)).arg(kSchemaVersion));
    return uops(o, top) && contexts(o, top) && calls(o, top) && opt(o, key::kScript, top, &Checker::name) &&
           opt(o, key::kDevice, top, &Checker::name) && opt(o, key::kError, top, &Checker::text) &&
           opt(o, key::kPartial, top, &Checker::name) &&  // a trace rebuilt from a run's stream: how the run ended
           opt(o, key::kOutputs, top, &Checker::outputs) && opt(o, key::kSnapshots, top, &Checker::snapshots) &&
           snapshot_calls(o, top) && opt(o, key::kRules, top, &Checker::rules) &&
           opt(o, key::kLimits, top, &Checker::limits) &&  // the device's measured limits, when the limits cache had them
           opt(o, key::kMemory, top, &Checker::memory) &&  // allocations and frees (traces since they were recorded)
           opt(o, key::kConsole, top, &Checker::console);  // what the script printed (traces since it was kept)
    // "result" is whatever the script left in RESULT: any JSON value
  }

 private:
  using Check = bool (Checker::*)(const QJsonValue&, const Where&);
  const TraceLimits& lim_;
  std::vector<int> ids_;  // every uop's id, sorted once the uops are read
  struct Edge {
    int user, src, index;  // uop `user`'s index-th source is `src`
  };
  std::vector<Edge> edges_;
  QHash<int, QList<int>> graph_;  // uop id -> its sources: built only for the walk that looks for a cycle
  bool has_uop(int id) const { return std::binary_search(ids_.begin(), ids_.end(), id); }

  // o[key] checked by `check`: req() when the recorder always writes it, opt() when it may be absent
  bool req(const QJsonObject& o, const char* key, const Where& w, Check check) {
    auto it = o.constFind(QLatin1StringView(key));
    if (it == o.constEnd()) return fail(w, QStringLiteral("the key \"%1\" is missing").arg(QLatin1StringView(key)));
    return (this->*check)(it.value(), Where{&w, key});
  }
  bool opt(const QJsonObject& o, const char* key, const Where& w, Check check) {
    auto it = o.constFind(QLatin1StringView(key));
    return it == o.constEnd() || (this->*check)(it.value(), Where{&w, key});
  }

  bool string(const QJsonValue& v, const Where& w, qsizetype max_chars) {
    if (!v.isString()) return expected(w, "a string", v);
    if (max_chars >= 0) {
      const qsizetype n = v.toString().size();
      if (n > max_chars) return fail(w, QStringLiteral("a string of %1 characters (the limit is %2)").arg(n).arg(max_chars));
    }
    return true;
  }
  bool name(const QJsonValue& v, const Where& w) { return string(v, w, lim_.max_name_chars); }
  bool text(const QJsonValue& v, const Where& w) { return string(v, w, -1); }
  bool arg(const QJsonValue& v, const Where& w) { return string(v, w, lim_.max_arg_chars); }
  bool one_of(const QJsonValue& v, const Where& w, std::initializer_list<const char*> values) {
    if (!name(v, w)) return false;
    const QString s = v.toString();
    QStringList names;
    for (const char* x : values) {
      if (s == QLatin1StringView(x)) return true;
      names << QStringLiteral("\"%1\"").arg(QLatin1StringView(x));
    }
    return fail(w, QStringLiteral("expected %1, found %2").arg(names.join(QStringLiteral(" or ")), describe(v)));
  }

  bool integer(const QJsonValue& v, const Where& w, qint64 lo, qint64 hi) {
    if (!v.isDouble()) return expected(w, "an integer", v);
    const double d = v.toDouble();
    if (d != std::floor(d)) return expected(w, "an integer", v);
    const qint64 i = v.toInteger(LLONG_MIN);  // the default: a double too big for 64 bits
    if (d < double(lo) || d > double(hi) || i < lo || i > hi)
      return fail(w, QStringLiteral("%1 is out of range (%2 to %3)").arg(i == LLONG_MIN ? QString::number(d) : QString::number(i)).arg(lo).arg(hi));
    return true;
  }
  bool count(const QJsonValue& v, const Where& w) { return integer(v, w, 0, INT_MAX); }
  bool id(const QJsonValue& v, const Where& w) { return integer(v, w, 0, lim_.max_uop_id); }
  bool tag(const QJsonValue& v, const Where& w) { return integer(v, w, -1, INT_MAX); }
  bool size(const QJsonValue& v, const Where& w) { return integer(v, w, 0, LLONG_MAX); }  // 64-bit, as the engine's
  bool number(const QJsonValue& v, const Where& w) {
    if (!v.isDouble()) return expected(w, "a number", v);
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < 0) return fail(w, QStringLiteral("%1 is not a finite number >= 0").arg(d));
    return true;
  }
  bool boolean(const QJsonValue& v, const Where& w) { return v.isBool() || expected(w, "true or false", v); }
  bool ref(const QJsonValue& v, const Where& w) {
    if (!id(v, w)) return false;
    const int id = int(v.toInteger());
    return has_uop(id) || fail(w, QStringLiteral("uop %1 is not in the trace").arg(id));
  }

  bool array(const QJsonValue& v, const Where& w, Check each) {
    if (!v.isArray()) return expected(w, "an array", v);
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < a.size(); ++i)
      if (!(this->*each)(a.at(i), Where{&w, nullptr, i})) return false;
    return true;
  }
  bool names(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::name); }
  bool counts(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::count); }
  bool sizes(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::size); }
  bool numbers(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::number); }
  bool refs(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::ref); }
  bool ids(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::id); }  // checked against the uops later

  bool object(const QJsonValue& v, const Where& w) { return v.isObject() || expected(w, "an object", v); }
  bool estimates(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "ops", w, &Checker::number) && req(o, "lds", w, &Checker::number) && req(o, "mem", w, &Checker::number);
  }

  // ---- uops: {"<id>": {op, dtype, src, arg, shape?, tag?, device?}}, then their sources and cycles
  bool uops(const QJsonObject& root, const Where& top) {
    const Where w{&top, key::kUops};
    auto it = root.constFind(QLatin1StringView(key::kUops));
    if (it == root.constEnd()) return fail(top, QStringLiteral("the key \"%1\" is missing").arg(QLatin1StringView(key::kUops)));
    if (!object(it.value(), w)) return false;
    const QJsonObject uo = it.value().toObject();
    if (uo.size() > lim_.max_uops) return fail(w, QStringLiteral("%1 uops (the limit is %2)").arg(uo.size()).arg(lim_.max_uops));
    ids_.reserve(size_t(uo.size()));
    for (auto u = uo.constBegin(); u != uo.constEnd(); ++u) {
      const QString key = u.key();
      const Where here{&w, nullptr, -1, &key};
      bool ok = false;
      const qint64 id = key.toLongLong(&ok);
      if (!ok || id < 0 || id > lim_.max_uop_id || QString::number(id) != key)
        return fail(here, QStringLiteral("a uop id must be an integer from 0 to %1").arg(lim_.max_uop_id));
      if (!object(u.value(), here)) return false;
      const QJsonObject o = u.value().toObject();
      // one pass over the uop's members (a lookup per key scans them each time): each known key checked as it comes,
      // then the ones the recorder always writes required
      static const std::array<std::pair<const char*, Check>, 7> kKeys{{{"op", &Checker::name},
                                                                       {"dtype", &Checker::name},
                                                                       {"arg", &Checker::arg},
                                                                       {"src", &Checker::ids},
                                                                       {"shape", &Checker::sizes},
                                                                       {"tag", &Checker::tag},
                                                                       {"device", &Checker::name}}};
      unsigned seen = 0;
      QJsonArray src;
      for (auto m = o.constBegin(); m != o.constEnd(); ++m) {
        const QString name = m.key();
        for (size_t k = 0; k < kKeys.size(); ++k) {
          if (name != QLatin1StringView(kKeys[k].first)) continue;
          if (!(this->*kKeys[k].second)(m.value(), Where{&here, kKeys[k].first})) return false;
          seen |= 1u << k;
          if (k == 0 && m.value().toString().isEmpty()) return fail(Where{&here, "op"}, QStringLiteral("an empty op"));
          if (k == 3) src = m.value().toArray();
          break;
        }
      }
      for (size_t k = 0; k < 4; ++k)  // op, dtype, arg, src
        if (!(seen & (1u << k))) return fail(here, QStringLiteral("the key \"%1\" is missing").arg(QLatin1StringView(kKeys[k].first)));
      int i = 0;
      for (const auto& s : src) edges_.push_back({int(id), int(s.toInteger()), i++});
      ids_.push_back(int(id));
    }
    std::sort(ids_.begin(), ids_.end());
    for (const Edge& e : edges_)
      if (!has_uop(e.src)) {
        const QString key = QString::number(e.user);
        const Where uop{&w, nullptr, -1, &key}, src{&uop, "src"};
        return fail(Where{&src, nullptr, e.index}, QStringLiteral("uop %1 is not in the trace").arg(e.src));
      }
    return acyclic(w);
  }

  // an iterative depth-first walk over the sources (a trace's graph can be deeper than any stack); none is needed
  // when every source has a smaller id than its user (the engine numbers a node after its sources): ids then order the
  // graph, and a cycle cannot exist
  bool acyclic(const Where& w) {
    if (std::all_of(edges_.begin(), edges_.end(), [](const Edge& e) { return e.src < e.user; })) return true;
    graph_.reserve(qsizetype(ids_.size()));
    for (int id : ids_) graph_.insert(id, {});
    for (const Edge& e : edges_) graph_[e.user].push_back(e.src);  // (in source order: edges_ lists them so)
    enum : char { kNew, kOnPath, kDone };
    QHash<int, char> state;
    state.reserve(graph_.size());
    struct Frame {
      int id;
      qsizetype next;
    };
    QList<Frame> path;
    for (auto root = graph_.constBegin(); root != graph_.constEnd(); ++root) {
      if (state.value(root.key(), kNew) != kNew) continue;
      state.insert(root.key(), kOnPath);
      path.push_back({root.key(), 0});
      while (!path.isEmpty()) {
        const int id = path.last().id;
        const QList<int>& src = *graph_.constFind(id);
        if (path.last().next == src.size()) {
          state.insert(id, kDone);
          path.pop_back();
          continue;
        }
        const int s = src[path.last().next++];
        const char st = state.value(s, kNew);
        if (st == kDone) continue;
        if (st == kOnPath) {
          const QString key = QString::number(id);
          if (s == id) return fail(Where{&w, nullptr, -1, &key}, QStringLiteral("uop %1 lists itself as a source").arg(id));
          QStringList ids;
          qsizetype from = path.size() - 1;
          while (from > 0 && path[from].id != s) --from;
          for (qsizetype i = from; i < path.size(); ++i) ids << QString::number(path[i].id);
          if (ids.size() > 8) ids = ids.mid(0, 4) + QStringList{QStringLiteral("…")} + ids.mid(ids.size() - 3);
          ids << QString::number(s);
          return fail(w, QStringLiteral("the uop graph has a cycle: %1").arg(ids.join(QStringLiteral(" -> "))));
        }
        state.insert(s, kOnPath);
        path.push_back({s, 0});
      }
    }
    return true;
  }

  // ---- contexts: [{id, kind, name, passes, tensor_graph?, linear?, program?, begin?, end?, compile?}]
  bool contexts(const QJsonObject& root, const Where& top) { return req(root, key::kContexts, top, &Checker::context_list); }
  bool context_list(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::context); }
  bool context(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "id", w, &Checker::count) && req(o, "kind", w, &Checker::context_kind) && req(o, "name", w, &Checker::name) && req(o, "passes", w, &Checker::passes) &&
           opt(o, "tensor_graph", w, &Checker::refs) && opt(o, "linear", w, &Checker::linear) &&
           opt(o, "program", w, &Checker::program) && opt(o, stamp::kBegin, w, &Checker::number) &&
           opt(o, stamp::kEnd, w, &Checker::number) && opt(o, stamp::kCompile, w, &Checker::interval) &&
           opt(o, field::kStatistics, w, &Checker::statistics);
  }
  // [[name, value], ...]: what a compiler reported, each a pair of strings
  bool statistics(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::name_value); }
  bool name_value(const QJsonValue& v, const Where& w) {
    if (!v.isArray() || v.toArray().size() != 2) return expected(w, "an array [name, value]", v);
    const QJsonArray a = v.toArray();
    return name(a.at(0), Where{&w, nullptr, 0}) && text(a.at(1), Where{&w, nullptr, 1});
  }
  // [begin, end]: two timestamps, the second not before the first
  bool interval(const QJsonValue& v, const Where& w) {
    if (!v.isArray() || v.toArray().size() != 2) return expected(w, "an array [begin, end]", v);
    const QJsonArray a = v.toArray();
    if (!number(a.at(0), Where{&w, nullptr, 0}) || !number(a.at(1), Where{&w, nullptr, 1})) return false;
    return a.at(1).toDouble() >= a.at(0).toDouble() || fail(w, QStringLiteral("ends before it begins"));
  }
  bool context_kind(const QJsonValue& v, const Where& w) { return one_of(v, w, {"schedule", "kernel"}); }
  bool passes(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::pass); }
  bool pass(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    if (!req(o, "name", w, &Checker::name) || !req(o, "depth", w, &Checker::count) || !req(o, "before", w, &Checker::ref) ||
        !opt(o, "after", w, &Checker::ref) || !opt(o, "match_count", w, &Checker::count) ||
        !req(o, "matches", w, &Checker::matches))
      return false;
    const qint64 depth = o.value(QLatin1StringView("depth")).toInteger();
    if (depth > lim_.max_pass_depth)
      return fail(Where{&w, "depth"}, QStringLiteral("%1 is out of range (0 to %2)").arg(depth).arg(lim_.max_pass_depth));
    return true;
  }
  bool matches(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::match); }
  bool match(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "rule", w, &Checker::name) && req(o, "loc", w, &Checker::name) && req(o, "before", w, &Checker::ref) &&
           req(o, "after", w, &Checker::ref);
  }
  bool linear(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::item); }
  bool item_kind(const QJsonValue& v, const Where& w) { return one_of(v, w, {"kernel", "copy"}); }
  bool item(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "kind", w, &Checker::item_kind) && req(o, "bufs", w, &Checker::refs) &&
           opt(o, "ast", w, &Checker::ref) && opt(o, "computes", w, &Checker::ref) && opt(o, "members", w, &Checker::refs);
  }
  bool program(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "name", w, &Checker::name) && req(o, "colored_name", w, &Checker::name) &&
           req(o, "function_name", w, &Checker::name) && req(o, "lang", w, &Checker::name) &&
           req(o, "src", w, &Checker::text) && req(o, "applied_opts", w, &Checker::names) &&
           req(o, "global_size", w, &Checker::sizes) && req(o, "threads", w, &Checker::count) &&
           req(o, "outs", w, &Checker::counts) && req(o, "ins", w, &Checker::counts) &&
           req(o, "estimates", w, &Checker::estimates) && req(o, "program_key", w, &Checker::name) &&
           req(o, "ast", w, &Checker::ref) && opt(o, "opts_source", w, &Checker::text) &&
           opt(o, "lines", w, &Checker::source_lines);
  }
  // [[line, uop], ...]: which uop each source line renders
  bool source_lines(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::source_line); }
  bool source_line(const QJsonValue& v, const Where& w) {
    if (!v.isArray() || v.toArray().size() != 2) return expected(w, "an array [line, uop]", v);
    const QJsonArray a = v.toArray();
    return count(a.at(0), Where{&w, nullptr, 0}) && ref(a.at(1), Where{&w, nullptr, 1});
  }

  // ---- calls: [{kind, name, colored_name, device, counter, num_args, arg_sizes, global_size, applied_opts,
  //               first_run, program_key, seconds, estimates, schedule_index, times?, repeat_mode?, jit?, graph?, run?,
  //               launched?, start?, writes?, reads?}]
  bool calls(const QJsonObject& root, const Where& top) { return req(root, key::kCalls, top, &Checker::call_list); }
  bool call_list(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::call); }
  bool call(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    // "seconds" is absent from the trace test's golden file (timings are no part of the schema it pins)
    return req(o, "kind", w, &Checker::name) && req(o, "name", w, &Checker::name) &&
           req(o, "colored_name", w, &Checker::name) && req(o, "device", w, &Checker::name) &&
           req(o, "counter", w, &Checker::count) && req(o, "num_args", w, &Checker::count) &&
           req(o, "arg_sizes", w, &Checker::arg_sizes) && req(o, "global_size", w, &Checker::sizes) &&
           req(o, "applied_opts", w, &Checker::names) && req(o, "first_run", w, &Checker::boolean) &&
           req(o, "program_key", w, &Checker::name) && opt(o, "seconds", w, &Checker::number) &&
           req(o, "estimates", w, &Checker::estimates) && req(o, "schedule_index", w, &Checker::count) &&
           opt(o, "times", w, &Checker::numbers) && opt(o, "repeat_mode", w, &Checker::name) && opt(o, "jit", w, &Checker::boolean) &&
           opt(o, "graph", w, &Checker::count) && opt(o, "run", w, &Checker::count) &&
           opt(o, stamp::kLaunched, w, &Checker::number) && opt(o, stamp::kStart, w, &Checker::number) &&
           opt(o, stamp::kWrites, w, &Checker::sizes) && opt(o, stamp::kReads, w, &Checker::sizes);
  }
  // ---- memory: [{alloc, device, bytes, buffer, t, after_call}] (engine/trace/recorder.h: record_memory)
  bool memory(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::memory_event); }
  bool memory_event(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "alloc", w, &Checker::boolean) && req(o, "device", w, &Checker::name) && req(o, "bytes", w, &Checker::size) &&
           req(o, "buffer", w, &Checker::size) && req(o, "t", w, &Checker::number) && req(o, "after_call", w, &Checker::count);
  }
  // ---- limits: {device, machine, measured_at, bandwidth_gbs, bandwidth_label, peak_gflops, peak_label}
  // (app/cli/limits_cache.h): a roof needs both figures finite and above zero
  bool positive(const QJsonValue& v, const Where& w) {
    if (!number(v, w)) return false;
    return v.toDouble() > 0 || fail(w, QStringLiteral("%1 is not a figure above 0").arg(v.toDouble()));
  }
  bool limits(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "device", w, &Checker::name) && req(o, "machine", w, &Checker::name) && req(o, "measured_at", w, &Checker::name) &&
           req(o, "bandwidth_gbs", w, &Checker::positive) && req(o, "bandwidth_label", w, &Checker::name) &&
           req(o, "peak_gflops", w, &Checker::positive) && req(o, "peak_label", w, &Checker::name);
  }
  // ---- outputs: [{where, after_call, dtype, bits, shape, count, stored, values}] (engine/trace/recorder.h)
  bool outputs(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::output); }
  bool output(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "where", w, &Checker::name) && req(o, "after_call", w, &Checker::count) && host_values(o, w);
  }
  // ---- snapshots: [{call, arg, dtype, bits, shape, count, stored, values}]: each call an index into "calls"
  bool snapshots(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::snapshot); }
  bool snapshot(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "call", w, &Checker::count) && req(o, "arg", w, &Checker::count) && host_values(o, w);
  }
  bool snapshot_calls(const QJsonObject& root, const Where& top) {
    const qsizetype calls = root.value(QLatin1StringView(key::kCalls)).toArray().size();
    const QJsonArray snaps = root.value(QLatin1StringView(key::kSnapshots)).toArray();
    const Where w{&top, key::kSnapshots};
    for (qsizetype k = 0; k < snaps.size(); ++k) {
      const qint64 call = snaps.at(k).toObject().value(QLatin1StringView("call")).toInteger();
      if (call >= calls) return fail(Where{&w, nullptr, int(k)}, QStringLiteral("names call %1 of a trace with %2 calls").arg(call).arg(calls));
    }
    return true;
  }
  // a value's dtype, shape and stored values (outputs and snapshots)
  bool host_values(const QJsonObject& o, const Where& w) {
    if (!req(o, "dtype", w, &Checker::name) || !req(o, "bits", w, &Checker::count) || !req(o, "shape", w, &Checker::sizes) ||
        !req(o, "count", w, &Checker::size) || !req(o, "stored", w, &Checker::size) || !req(o, "values", w, &Checker::text))
      return false;
    const qint64 count = o.value(QLatin1StringView("count")).toInteger(), stored = o.value(QLatin1StringView("stored")).toInteger();
    if (stored > count) return fail(Where{&w, "stored"}, QStringLiteral("%1 values stored of a value with %2").arg(stored).arg(count));
    // base64 of `stored` 8-byte values, nothing else
    const QString values = o.value(QLatin1StringView("values")).toString();
    static const QRegularExpression kBase64(QStringLiteral("^[A-Za-z0-9+/]*={0,2}$"));
    if (values.size() != (stored * 8 + 2) / 3 * 4 || !kBase64.match(values).hasMatch())
      return fail(Where{&w, "values"}, QStringLiteral("not the base64 of %1 8-byte values").arg(stored));
    return true;
  }
  // ---- rules: [{name, file, line, first_line, text}] (engine/trace/recorder.h)
  bool rules(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::rule); }
  // ---- console: [{stream: "stdout" | "stderr", text}], the texts kConsoleChars characters in all (with the note of a cut)
  bool console(const QJsonValue& v, const Where& w) {
    if (!array(v, w, &Checker::console_part)) return false;
    qsizetype n = 0;
    for (const auto& part : v.toArray()) n += part.toObject().value(QLatin1StringView("text")).toString().size();
    return n <= kConsoleChars + 200 || fail(w, QStringLiteral("%1 characters of console output (the limit is %2)").arg(n).arg(kConsoleChars));
  }
  bool console_part(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "stream", w, &Checker::stream) && req(o, "text", w, &Checker::text);
  }
  bool stream(const QJsonValue& v, const Where& w) { return one_of(v, w, {"stdout", "stderr"}); }
  bool rule(const QJsonValue& v, const Where& w) {
    if (!object(v, w)) return false;
    const QJsonObject o = v.toObject();
    return req(o, "name", w, &Checker::name) && req(o, "file", w, &Checker::name) && req(o, "line", w, &Checker::count) &&
           req(o, "first_line", w, &Checker::count) && req(o, "text", w, &Checker::arg);
  }
  bool arg_sizes(const QJsonValue& v, const Where& w) { return array(v, w, &Checker::arg_size); }
  bool arg_size(const QJsonValue& v, const Where& w) {  // [elements, dtype]
    if (!v.isArray() || v.toArray().size() != 2) return expected(w, "an array [elements, dtype]", v);
    const QJsonArray a = v.toArray();
    return size(a.at(0), Where{&w, nullptr, 0}) && name(a.at(1), Where{&w, nullptr, 1});
  }
};

}  // namespace

bool check_trace(const QByteArray& data, QJsonDocument* doc, QString* error, const TraceLimits& limits) {
  QString err;
  auto fail = [&](const QString& e) {
    if (error) *error = e;
    return false;
  };
  if (const QString big = trace_size_error(data.size(), limits); !big.isEmpty()) return fail(big);
  if (data.trimmed().isEmpty()) return fail(QStringLiteral("the file is empty"));
  QByteArray version;
  if (!scan(data, limits, &version, &err)) return fail(err);
  QJsonParseError pe;
  QJsonDocument d = QJsonDocument::fromJson(data, &pe);
  if (pe.error != QJsonParseError::NoError)
    return fail(QStringLiteral("not valid JSON: %1 at byte %2").arg(pe.errorString()).arg(pe.offset));
  if (!d.isObject()) return fail(QStringLiteral("not a trace: the JSON is not an object"));
  Checker c(limits);
  if (!c.root(d.object(), version)) return fail(c.error);
  if (doc) *doc = std::move(d);
  return true;
}

}  // namespace tsv
