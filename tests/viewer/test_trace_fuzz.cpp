// The trace-file fuzzer: real traces (tests/viewer/data, tests/engine/trace/golden_seed.json, and three recorded now
// by `tinyscope run X.py --json --trace matches`: two examples and a corpus program with 64-bit shapes) mutated deterministically (seeded): every key
// removed and given a wrong type, truncations, byte flips, huge numbers, out-of-range and dangling ids, uops that
// are their own source or sit on a cycle, deep nesting, huge strings, wrong and float versions. Each mutant either
// loads, and then every model and pane the window builds from a session is built and exercised, or is refused with
// one clear error; where the mutation decides which (a required key removed, a wrong type, a dangling id) the test
// says which, and the error must name the mutated place. A watchdog ends the test (naming the mutant) if one takes
// too long or memory grows past a bound. A handful of mutants also go through the command line: a clear error on
// stderr (the same the viewer gives) and a non-zero exit.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <algorithm>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <climits>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

#include "viewer/model/contexts_model.h"
#include "viewer/model/rule_counts_model.h"
#include "viewer/model/schedule_model.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/stepper_model.h"
#include "viewer/model/timings_model.h"
#include "viewer/model/uop_text.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/roofline_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/timeline_pane.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/timings_pane.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;

// ---- a place in a JSON document, and edits there
struct Step {
  QString key;            // an object's member
  qsizetype index = -1;   // or an array's element
};
using Path = QList<Step>;

// the validator's way of naming a place: contexts[3].passes[0].before, uops["12"].src
QString path_text(const Path& p) {
  QString s;
  for (int i = 0; i < p.size(); ++i) {
    if (p[i].index >= 0) s += QStringLiteral("[%1]").arg(p[i].index);
    else if (i == 1 && p[0].key == QLatin1String("uops")) s += QStringLiteral("[\"%1\"]").arg(p[i].key);
    else s += (s.isEmpty() ? QString() : QStringLiteral(".")) + p[i].key;
  }
  return s;
}
// the same place with every index and uop id as *: one schema position
QString shape_text(const Path& p) {
  QString s;
  for (int i = 0; i < p.size(); ++i) {
    if (p[i].index >= 0 || (i == 1 && p[0].key == QLatin1String("uops"))) s += QStringLiteral("[*]");
    else s += QLatin1Char('.') + p[i].key;
  }
  return s;
}

QJsonValue value_at(const QJsonValue& v, const Path& p) {
  QJsonValue cur = v;
  for (const Step& s : p) cur = s.index >= 0 ? cur.toArray().at(s.index) : cur.toObject().value(s.key);
  return cur;
}
// v with the value at p replaced (or removed, with no replacement)
QJsonValue edited(const QJsonValue& v, const Path& p, const std::optional<QJsonValue>& repl, int i = 0) {
  if (i == p.size()) return *repl;
  const bool last = i + 1 == p.size();
  if (p[i].index >= 0) {
    QJsonArray a = v.toArray();
    if (last && !repl) a.removeAt(p[i].index);
    else a[p[i].index] = edited(a.at(p[i].index), p, repl, i + 1);
    return a;
  }
  QJsonObject o = v.toObject();
  if (last && !repl) o.remove(p[i].key);
  else o[p[i].key] = edited(o.value(p[i].key), p, repl, i + 1);
  return o;
}
QByteArray bytes_of(const QJsonValue& v) { return QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact); }

// every member of every object (not inside "result", which holds whatever the script returned)
void collect_keys(const QJsonValue& v, Path& at, QList<Path>* out) {
  if (v.isObject()) {
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
      at.push_back({it.key()});
      out->push_back(at);
      if (!(at.size() == 1 && it.key() == QLatin1String("result"))) collect_keys(it.value(), at, out);
      at.pop_back();
    }
  } else if (v.isArray()) {
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < a.size(); ++i) {
      at.push_back({QString(), i});
      collect_keys(a.at(i), at, out);
      at.pop_back();
    }
  }
}

// The schema's contract, as engine/trace/recorder.cpp writes it: the members it may leave out (a pass cut short by
// an error has no "after"; the trace test's golden file has no timings; traces written before programs said where
// their opts came from have no "opts_source", nor older ones a call's "members"; a script that read nothing back has no
// "outputs"; a run whose device has no entry in the limits cache no "limits", though a "limits" has all its members),
// every other member is required.
bool optional_member(const QString& shape) {
  static const QSet<QString> optional = {
      ".script", ".device", ".result", ".error", ".uops[*].shape", ".uops[*].tag", ".uops[*].device",
      ".contexts[*].tensor_graph", ".contexts[*].linear", ".contexts[*].program", ".contexts[*].passes[*].after",
      ".contexts[*].passes[*].match_count", ".contexts[*].linear[*].ast", ".contexts[*].linear[*].computes",
      ".contexts[*].linear[*].members", ".contexts[*].program.opts_source", ".calls[*].seconds", ".calls[*].times", ".calls[*].repeat_mode", ".partial",
      ".outputs",  // a run that read nothing back has none
      ".snapshots",  // nor a run that kept no buffers
      ".contexts[*].program.lines",  // nor an older trace which uop each source line renders
      ".limits",
      // nor one recorded before traces carried timestamps, the buffers a call writes and reads, and the memory events
      ".calls[*].launched", ".calls[*].start", ".calls[*].writes", ".calls[*].reads", ".contexts[*].begin", ".contexts[*].end",
      ".contexts[*].compile", ".memory",
      ".console",  // nor one recorded before traces kept what the script printed
      ".rules"};   // nor one recorded at --trace passes, or before traces carried the rules' sources  // nor a run whose device has no measured limits
  return optional.contains(shape);
}
// the members that name uops
bool id_member(const QString& shape) {
  static const QSet<QString> ids = {
      ".uops[*].src[*]", ".contexts[*].tensor_graph[*]", ".contexts[*].passes[*].before", ".contexts[*].passes[*].after",
      ".contexts[*].passes[*].matches[*].before", ".contexts[*].passes[*].matches[*].after",
      ".contexts[*].linear[*].bufs[*]", ".contexts[*].linear[*].ast", ".contexts[*].linear[*].computes",
      ".contexts[*].linear[*].members[*]", ".contexts[*].program.ast"};
  return ids.contains(shape);
}

// ---- mutants
enum class Expect { Either, Loads, Fails };
struct Mutant {
  QString name;
  QByteArray bytes;
  Expect expect = Expect::Either;
  QString error_has = {};  // when it fails: a part of the error (the place it names)
};

// one value of every JSON type but `not_like`'s
QList<QJsonValue> other_types(const QJsonValue& not_like) {
  QList<QJsonValue> out;
  for (const QJsonValue& v : {QJsonValue(QStringLiteral("x")), QJsonValue(7), QJsonValue(true), QJsonValue(QJsonValue::Null),
                              QJsonValue(QJsonArray{1}), QJsonValue(QJsonObject{{"a", 1}})})
    if (v.type() != not_like.type()) out.push_back(v);
  return out;
}

struct Seed {
  QString name;
  QJsonObject doc;
  QList<Path> keys;
  QList<int> uop_ids;
};

Seed make_seed(const QString& name, const QByteArray& bytes) {
  Seed s;
  s.name = name;
  s.doc = QJsonDocument::fromJson(bytes).object();
  Path at;
  collect_keys(s.doc, at, &s.keys);
  for (const QString& k : s.doc.value("uops").toObject().keys()) s.uop_ids.push_back(k.toInt());
  std::sort(s.uop_ids.begin(), s.uop_ids.end());
  return s;
}

// Every schema position of the seed, once: removed (an error naming its object unless the member is optional) and
// given each wrong type in turn (an error naming it; "result" may be anything).
void key_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out) {
  QHash<QString, QList<Path>> by_shape;
  QStringList shapes;
  for (const Path& p : s.keys) {
    const QString sh = shape_text(p);
    if (!by_shape.contains(sh)) shapes << sh;
    by_shape[sh].push_back(p);
  }
  for (const QString& sh : shapes) {
    const QList<Path>& all = by_shape[sh];
    const Path p = all[rng.bounded(int(all.size()))];
    const QString place = path_text(p);
    Path parent = p.mid(0, p.size() - 1);
    Mutant m{s.name + ": without " + place, bytes_of(edited(s.doc, p, std::nullopt))};
    if (optional_member(sh)) m.expect = Expect::Loads;
    else {
      m.expect = Expect::Fails;
      m.error_has = p.size() == 1 && p[0].key == QLatin1String("version")
                        ? QStringLiteral("no schema version")
                        : (parent.isEmpty() ? QString() : path_text(parent) + ": ") + QStringLiteral("the key \"%1\" is missing").arg(p.last().key);
    }
    if (p.size() == 2 && p[0].key == QLatin1String("uops")) {  // a uop removed: its users' sources dangle
      m.expect = Expect::Fails;
      m.error_has = QStringLiteral("is not in the trace");
    }
    out->push_back(m);
    if (sh == QLatin1String(".result")) continue;
    if (p.size() == 2 && p[0].key == QLatin1String("uops") && rng.bounded(3) != 0) continue;  // a few uops will do
    for (const QJsonValue& wrong : other_types(value_at(s.doc, p)))
      out->push_back({s.name + ": " + place + " = " + QString::fromUtf8(QJsonDocument(QJsonArray{wrong}).toJson(QJsonDocument::Compact)),
                      bytes_of(edited(s.doc, p, wrong)), Expect::Fails, place + ": "});
  }
}

// uop ids that are negative, out of range, or name no uop: every one an error naming the place
void id_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out, int n) {
  QList<Path> refs;
  for (const Path& p : s.keys)
    if (id_member(shape_text(p))) refs.push_back(p);
  // array elements are no members: add the elements of the id arrays
  QList<Path> elems;
  for (const Path& p : s.keys) {
    const QString sh = shape_text(p);
    if (sh.endsWith(".src") || sh.endsWith(".tensor_graph") || sh.endsWith(".bufs")) {
      const QJsonArray a = value_at(s.doc, p).toArray();
      for (qsizetype i = 0; i < a.size(); ++i) elems.push_back(p + Path{{QString(), i}});
    }
  }
  refs += elems;
  if (refs.isEmpty()) return;
  const int missing = s.uop_ids.isEmpty() ? 5 : s.uop_ids.last() + 1000;
  const QList<qint64> bad = {-1, -5, qint64(INT_MAX) + 1, qint64(1) << 40, missing, INT_MAX, (1 << 30)};
  for (int i = 0; i < n; ++i) {
    const Path p = refs[rng.bounded(int(refs.size()))];
    const qint64 id = bad[rng.bounded(int(bad.size()))];
    out->push_back({s.name + ": " + path_text(p) + " = " + QString::number(id), bytes_of(edited(s.doc, p, QJsonValue(id))),
                    Expect::Fails, path_text(p) + ": "});
  }
  // uop ids (the keys) that are no ids
  for (const char* key : {"-3", "01", "abc", "2147483648", "1073741824", ""}) {
    if (s.uop_ids.isEmpty()) break;
    QJsonObject uops = s.doc.value("uops").toObject();
    const QString old = QString::number(s.uop_ids[rng.bounded(int(s.uop_ids.size()))]);
    const QJsonValue u = uops.value(old);
    uops.remove(old);
    uops.insert(QString::fromLatin1(key), u);
    QJsonObject doc = s.doc;
    doc["uops"] = uops;
    out->push_back({s.name + ": uop " + old + " renamed \"" + key + "\"", bytes_of(doc), Expect::Fails,
                    QStringLiteral("uops[\"%1\"]: a uop id must be").arg(QLatin1String(key))});
  }
}

// a uop that lists itself, two uops that list each other, a chain closed into a cycle
void cycle_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out) {
  if (s.uop_ids.size() < 2) return;
  const QJsonObject uops = s.doc.value("uops").toObject();
  auto with_src = [&](QJsonObject u, const QHash<int, QJsonArray>& srcs) {
    for (auto it = srcs.begin(); it != srcs.end(); ++it) {
      QJsonObject o = u.value(QString::number(it.key())).toObject();
      o["src"] = it.value();
      u[QString::number(it.key())] = o;
    }
    QJsonObject doc = s.doc;
    doc["uops"] = u;
    return bytes_of(doc);
  };
  const int a = s.uop_ids[rng.bounded(int(s.uop_ids.size()))];
  QJsonArray self = uops.value(QString::number(a)).toObject().value("src").toArray();
  self.append(a);
  out->push_back({s.name + ": uop " + QString::number(a) + " is its own source", with_src(uops, {{a, self}}),
                  Expect::Fails, QStringLiteral("uop %1 lists itself as a source").arg(a)});
  const int b = s.uop_ids[(s.uop_ids.indexOf(a) + 1) % s.uop_ids.size()];
  out->push_back({s.name + ": uops " + QString::number(a) + " and " + QString::number(b) + " are each other's source",
                  with_src(uops, {{a, QJsonArray{b}}, {b, QJsonArray{a}}}), Expect::Fails, QStringLiteral("cycle")});
  // the longest chain of first sources from the uop with the most sources, closed at its leaf
  int top = s.uop_ids.front();
  for (int id : s.uop_ids)
    if (uops.value(QString::number(id)).toObject().value("src").toArray().size() >
        uops.value(QString::number(top)).toObject().value("src").toArray().size())
      top = id;
  int leaf = top, length = 0;
  for (QJsonArray src; !(src = uops.value(QString::number(leaf)).toObject().value("src").toArray()).isEmpty(); ++length)
    leaf = src.first().toInt();
  if (length > 0)
    out->push_back({s.name + QStringLiteral(": a cycle of %1 uops through %2").arg(length + 1).arg(top),
                    with_src(uops, {{leaf, QJsonArray{top}}}), Expect::Fails, QStringLiteral("cycle")});
}

// numbers where numbers are: huge, negative, fractional, past 64 bits. Loads or fails, and a failure names the place.
void number_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out, int n) {
  QList<Path> nums;
  for (const Path& p : s.keys)
    if (value_at(s.doc, p).isDouble()) nums.push_back(p);
  if (nums.isEmpty()) return;
  const QList<double> huge = {1e300, -1e300, 1e20, -1.0, 0.5, 9007199254740993.0, -9.3e18, 2147483648.0, 4294967296.0};
  for (int i = 0; i < n; ++i) {
    const Path p = nums[rng.bounded(int(nums.size()))];
    const double v = huge[rng.bounded(int(huge.size()))];
    out->push_back({s.name + ": " + path_text(p) + " = " + QString::number(v, 'g', 17), bytes_of(edited(s.doc, p, v)),
                    Expect::Either, path_text(p) + ": "});
  }
}

// the bytes themselves: cut short, flipped, a value swapped for an arbitrary one
void byte_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out, int cuts, int flips, int swaps) {
  const QByteArray bytes = bytes_of(s.doc);
  for (int i = 0; i < cuts; ++i) {
    const int at = i == 0 ? 0 : int(rng.bounded(qint64(bytes.size() - 1)));
    out->push_back({s.name + QStringLiteral(": cut at byte %1").arg(at), bytes.left(at), Expect::Fails});
  }
  for (int i = 0; i < flips; ++i) {
    QByteArray b = bytes;
    const int k = 1 + rng.bounded(8);
    for (int j = 0; j < k; ++j) b[rng.bounded(int(b.size()))] ^= char(1 + rng.bounded(255));
    out->push_back({s.name + QStringLiteral(": %1 bytes flipped (%2)").arg(k).arg(i), b});
  }
  const QList<QJsonValue> pool = {-1, 0, INT_MAX, qint64(INT_MAX) + 1, 1e308, 0.5, "", "x", QJsonArray{}, QJsonObject{},
                                  QJsonValue::Null, true, QJsonArray{1, 2, 3}, QJsonObject{{"a", 1}}};
  for (int i = 0; i < swaps; ++i) {
    const Path p = s.keys[rng.bounded(int(s.keys.size()))];
    const QJsonValue v = pool[rng.bounded(int(pool.size()))];
    out->push_back({s.name + ": " + path_text(p) + " = " + QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact)),
                    bytes_of(edited(s.doc, p, v))});
  }
}

// once, on one seed: versions, deep nesting, huge strings
void document_mutants(const Seed& s, QList<Mutant>* out) {
  const QByteArray bytes = bytes_of(s.doc);
  const qsizetype v = bytes.lastIndexOf("\"version\":1");
  QVERIFY(v >= 0);
  for (const char* version : {"1.0", "1e0", "10e-1", "\"1\"", "2", "0", "-1", "null", "true", "[1]", "1.5"}) {
    QByteArray b = bytes;
    b.replace(v, 11, QByteArray("\"version\":") + version);
    out->push_back({s.name + ": version " + version, b, Expect::Fails, QStringLiteral("version: ")});
  }
  auto appended = [&](const QByteArray& member) { return bytes.left(bytes.size() - 1) + "," + member + "}"; };
  const QByteArray deep = QByteArray(100000, '[') + QByteArray(100000, ']');
  out->push_back({s.name + ": 100,000 nested arrays", appended("\"result\":" + deep), Expect::Fails, QStringLiteral("nested more than")});
  QByteArray objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  objects += "1" + QByteArray(100000, '}');
  out->push_back({s.name + ": 100,000 nested objects", appended("\"result\":" + objects), Expect::Fails, QStringLiteral("nested more than")});
  out->push_back({s.name + ": 100,000 unclosed arrays", appended("\"result\":" + QByteArray(100000, '[')), Expect::Fails});
  // a result as deep as the limit allows still loads
  out->push_back({s.name + ": a result nested 60 deep", appended("\"result\":" + QByteArray(60, '[') + QByteArray(60, ']')), Expect::Loads});

  // huge strings: a kernel source loads (the Source pane shows a part), a name or an argument is refused
  QJsonArray ctxs = s.doc.value("contexts").toArray();
  int k = 0;
  while (k < ctxs.size() && !ctxs.at(k).toObject().contains("program")) ++k;
  QVERIFY(k < ctxs.size());
  Path src{{"contexts"}, {QString(), k}, {"program"}, {"src"}};
  out->push_back({s.name + ": a 70 MB one-line kernel source", bytes_of(edited(s.doc, src, QString(70'000'000, 'x'))), Expect::Loads});
  QString lines;
  for (int i = 0; i < 300000; ++i) lines += QStringLiteral("  acc%1 = acc%1 + 1.0f;\n").arg(i);
  out->push_back({s.name + ": a 300,000-line kernel source", bytes_of(edited(s.doc, src, lines)), Expect::Loads});
  Path name{{"contexts"}, {QString(), k}, {"name"}};
  out->push_back({s.name + ": an 8 MB context name", bytes_of(edited(s.doc, name, QString(8'000'000, 'n'))), Expect::Fails,
                  path_text(name) + ": a string of 8000000 characters"});
  const QString uop = QString::number(s.uop_ids.first());
  Path arg{{"uops"}, {uop}, {"arg"}};
  out->push_back({s.name + ": a 2 MB uop argument", bytes_of(edited(s.doc, arg, QString(2'000'000, 'a'))), Expect::Fails,
                  path_text(arg) + ": a string of"});
  Path script{{"script"}};
  out->push_back({s.name + ": a 10,000-character script path", bytes_of(edited(s.doc, script, QString(10000, '/'))), Expect::Fails,
                  QStringLiteral("script: a string of 10000 characters")});
  Path kind{{"contexts"}, {QString(), k}, {"kind"}};
  out->push_back({s.name + ": a kind with terminal escapes", bytes_of(edited(s.doc, kind, QStringLiteral("\x1b]0;x\x07\r\n"))),
                  Expect::Fails, path_text(kind) + ": expected"});
  out->push_back({s.name + ": an empty file", QByteArray(), Expect::Fails, QStringLiteral("empty")});
  out->push_back({s.name + ": not an object", QByteArray("[1, 2, 3]"), Expect::Fails, QStringLiteral("not an object")});
  out->push_back({s.name + ": NUL bytes", QByteArray(64, '\0'), Expect::Fails});
}

// Traces the schema accepts but the recorder would never write: each must load, and every model and pane must
// cope (sums past an int, broken colour escapes, ids at the limit, a 200,000-deep graph, matches that name nodes
// of other graphs, a kernel before any schedule, ...).
void odd_mutants(const Seed& s, QRandomGenerator& rng, QList<Mutant>* out) {
  auto each = [](QJsonArray a, const std::function<void(QJsonObject&)>& f) {
    for (qsizetype i = 0; i < a.size(); ++i) {
      QJsonObject o = a.at(i).toObject();
      f(o);
      a[i] = o;
    }
    return a;
  };
  auto with_calls = [&](const QString& what, const std::function<void(QJsonObject&)>& f) {
    QJsonObject doc = s.doc;
    doc["calls"] = each(doc.value("calls").toArray(), f);
    out->push_back({s.name + ": every call with " + what, bytes_of(doc), Expect::Loads});
  };
  auto with_passes = [&](const QString& what, const std::function<void(QJsonObject&)>& f) {
    QJsonObject doc = s.doc;
    doc["contexts"] = each(doc.value("contexts").toArray(), [&](QJsonObject& c) { c["passes"] = each(c.value("passes").toArray(), f); });
    out->push_back({s.name + ": every pass with " + what, bytes_of(doc), Expect::Loads});
  };
  for (double sec : {1e300, 0.0, 5e-324}) with_calls(QStringLiteral("seconds %1").arg(sec), [=](QJsonObject& c) { c["seconds"] = sec; });
  with_calls("estimates of 1e308", [](QJsonObject& c) { c["estimates"] = QJsonObject{{"ops", 1e308}, {"lds", 1e308}, {"mem", 1e308}}; });
  with_calls("extreme times", [](QJsonObject& c) { c["times"] = QJsonArray{1e308, 0, 5e-324, 1e308}; });
  with_calls("1,000 times", [](QJsonObject& c) {
    QJsonArray t;
    for (int i = 0; i < 1000; ++i) t.append(1e-6 * (i % 17));
    c["times"] = t;
  });
  with_calls("the largest counts", [](QJsonObject& c) {
    c["counter"] = INT_MAX, c["num_args"] = INT_MAX, c["schedule_index"] = INT_MAX;
    c["global_size"] = QJsonArray{INT_MAX, INT_MAX, INT_MAX};
    c["arg_sizes"] = QJsonArray{QJsonArray{qint64(1) << 53, "float"}};
  });
  for (const char* name : {"\x1b[", "\x1b[38;5;999999999999m\x1b[0", "\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16m E_4 \x1b[99m",
                           "", "\xe2\x80\xae reversed \xf0\x9f\x98\x80"})
    with_calls(QStringLiteral("the coloured name \"%1\"").arg(QString::fromUtf8(name).toHtmlEscaped()),
               [=](QJsonObject& c) { c["colored_name"] = QString::fromUtf8(name), c["name"] = QString::fromUtf8(name); });
  with_calls("a program no context has", [](QJsonObject& c) { c["program_key"] = "nowhere"; });
  with_passes("the largest match count and depth", [](QJsonObject& p) { p["match_count"] = INT_MAX, p["depth"] = 255; });
  with_passes("matches naming random uops", [&](QJsonObject& p) {
    p["matches"] = each(p.value("matches").toArray(), [&](QJsonObject& m) {
      m["before"] = s.uop_ids[rng.bounded(int(s.uop_ids.size()))];
      m["after"] = s.uop_ids[rng.bounded(int(s.uop_ids.size()))];
    });
  });
  with_passes("every match rewriting a node to itself", [&each](QJsonObject& p) {
    p["matches"] = each(p.value("matches").toArray(), [](QJsonObject& m) { m["after"] = m.value("before"); });
  });
  {  // a kernel before any schedule, and every context claiming the same program
    QJsonObject doc = s.doc;
    const QJsonArray forward = doc.value("contexts").toArray();
    QJsonArray c;
    for (qsizetype i = forward.size() - 1; i >= 0; --i) c.append(forward.at(i));
    doc["contexts"] = each(c, [](QJsonObject& o) {
      if (o.contains("program")) {
        QJsonObject p = o.value("program").toObject();
        p["program_key"] = "program0";
        o["program"] = p;
      }
    });
    out->push_back({s.name + ": contexts reversed, one program key for all", bytes_of(doc), Expect::Loads});
  }
  // uops at the edges: the largest id (the stepper numbers its own nodes above it), the largest tag and shape, a
  // 10,000-way fan-in, and a 200,000-deep chain that a schedule's tensor graph starts from
  {
    QJsonObject doc = s.doc;
    QJsonObject uops = doc.value("uops").toObject();
    const int leaf = s.uop_ids.first();
    uops["1073741823"] = QJsonObject{{"op", "ADD"}, {"dtype", "dtypes.float"}, {"arg", "None"}, {"tag", INT_MAX},
                                     {"shape", QJsonArray{INT_MAX, INT_MAX, INT_MAX, INT_MAX}}, {"src", QJsonArray{leaf, leaf}}};
    QJsonArray fan;
    for (int i = 0; i < 10000; ++i) fan.append(leaf);
    uops["1073741822"] = QJsonObject{{"op", "SINK"}, {"dtype", "dtypes.void"}, {"arg", "None"}, {"src", fan}};
    const int base = 500'000'000;
    for (int i = 0; i < 200'000; ++i)
      uops[QString::number(base + i)] = QJsonObject{{"op", i % 2 ? "ADD" : "MUL"}, {"dtype", "dtypes.float"}, {"arg", "None"},
                                                     {"src", QJsonArray{i ? base + i - 1 : leaf}}};
    doc["uops"] = uops;
    QJsonArray ctxs = doc.value("contexts").toArray();
    QJsonObject first = ctxs.at(0).toObject();
    first["tensor_graph"] = QJsonArray{base + 199'999, 1073741823, 1073741822};
    QJsonArray passes = first.value("passes").toArray();
    passes.append(QJsonObject{{"name", "deep"}, {"depth", 0}, {"before", base + 199'999}, {"after", 1073741823}, {"match_count", 1},
                              {"matches", QJsonArray{QJsonObject{{"rule", "r"}, {"loc", "x.cpp:1"}, {"before", base + 5}, {"after", leaf}}}}});
    first["passes"] = passes;
    ctxs[0] = first;
    doc["contexts"] = ctxs;
    out->push_back({s.name + ": uops at the id limit, a 10,000-way fan-in, a 200,000-deep chain", bytes_of(doc), Expect::Loads});
  }
}

// ---- exercising what the window builds over a loaded session
void exercise(tsv::Session& s) {
  tsv::ContextsModel contexts(&s);
  tsv::ScheduleModel schedule(&s);
  tsv::TimingsModel timings(&s);
  tsv::StepperModel stepper(&s);
  tsv::RuleCountsModel rule_counts(&s);
  QAbstractItemModelTester t1(&contexts, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t4(&rule_counts, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(&schedule, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t3(&timings, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(schedule.rowCount(), s.calls().size());
  QCOMPARE(timings.rowCount(), s.calls().size());
  const QList<int> roles = {Qt::DisplayRole, Qt::ToolTipRole, Qt::ForegroundRole, Qt::TextAlignmentRole, Qt::UserRole,
                            Qt::UserRole + 1, Qt::UserRole + 2, Qt::UserRole + 3};
  // every row of the contexts tree, iteratively
  QList<QModelIndex> todo{QModelIndex()};
  int rows = 0;
  while (!todo.isEmpty()) {
    const QModelIndex parent = todo.takeLast();
    for (int r = 0; r < contexts.rowCount(parent); ++r) {
      ++rows;
      for (int c = 0; c < contexts.columnCount(parent); ++c)
        for (int role : roles) contexts.index(r, c, parent).data(role);
      todo.push_back(contexts.index(r, 0, parent));
    }
  }
  int passes = 0;
  for (const auto& c : s.contexts()) passes += c.passes.size();
  QCOMPARE(rows, s.contexts().size() + passes);
  for (QAbstractItemModel* m : {static_cast<QAbstractItemModel*>(&schedule), static_cast<QAbstractItemModel*>(&timings)})
    for (int r = 0; r < m->rowCount(); ++r)
      for (int c = 0; c < m->columnCount(); ++c)
        for (int role : roles) m->index(r, c).data(role);
  for (int r = 0; r < timings.rowCount(); ++r) timings.spread_text(timings.spread(r));

  // the panes over one selection, driven through calls, contexts and passes
  tsv::SelectionModel sel(&s);
  tsv::SourcePane source(&sel);
  tsv::TimingsPane timing_pane(&sel);
  tsv::RooflinePane roofline_pane(&sel);
  tsv::ContextsPane contexts_pane(&sel);
  tsv::SchedulePane schedule_pane(&sel);
  tsv::TimelinePane timeline_pane(&sel);
  for (int i = 0; i < std::min<int>(s.calls().size(), 40); ++i) sel.select_call(i);
  for (int i = 0; i < std::min<int>(s.contexts().size(), 40); ++i) {
    sel.select_context(i);
    const auto& c = s.contexts()[i];
    for (int p = 0; p < std::min<int>(c.passes.size(), 10); ++p) sel.select_pass(i, p);
    if (c.has_program) {
      QVERIFY(source.text().size() <= tsv::SourcePane::kMaxShownChars + tsv::SourcePane::kMaxShownLines * 3);
      tsv::GraphPane::build_graph(s, {c.program.ast}, 1000);
    }
    tsv::GraphPane::build_graph(s, c.tensor_graph, 1000);
    // the rewrite stepper: every step's frame and every pass's replay
    stepper.set_context(i);
    for (int k = 0; k < std::min(stepper.step_count(), 60); ++k) {
      stepper.frame(k);
      for (int col = 0; col < stepper.columnCount(); ++col) stepper.index(k, col).data();
    }
    for (int p = 0; p < std::min<int>(c.passes.size(), 30); ++p) stepper.pass_reproduced(p);
    QVERIFY(stepper.unlisted_matches() >= 0);
    // the stepper pane's union layouts, its rule source and UOp text, and the rule counts of the context
    rule_counts.set_context(i);
    for (int r = 0; r < rule_counts.rowCount(); ++r)
      for (int col = 0; col < rule_counts.columnCount(); ++col)
        for (int role : roles) rule_counts.index(r, col).data(role);
    for (int k = 0; k < std::min(stepper.step_count(), 20); ++k) {
      const auto w = stepper.window(k, 1500);
      QVERIFY(w.pass < 0 || (w.first <= k && k <= w.last && w.places.size() <= 1500));
      const tsv::Match& m = stepper.match(k);
      s.rule_info(m.rule, m.loc);
      auto node = [&stepper](int id) { return stepper.node(id); };
      QVERIFY(tsv::uop_repr(m.before, node, 50).count('\n') <= 2 * 50 + 1);
      tsv::uop_repr(m.after, node, 50);
    }
  }
  for (QWidget* w : {static_cast<QWidget*>(&source), static_cast<QWidget*>(&timing_pane), static_cast<QWidget*>(&roofline_pane),
                     static_cast<QWidget*>(&contexts_pane), static_cast<QWidget*>(&schedule_pane), static_cast<QWidget*>(&timeline_pane)}) {
    w->resize(700, 400);
    w->grab();  // paints it
  }
  // the timeline's figures wherever the pointer is
  for (int y = 0; y < timeline_pane.canvas()->height(); y += 9)
    for (int x = 0; x < timeline_pane.canvas()->width(); x += 97) timeline_pane.canvas()->tooltip_at({x, y});
  // each placed call's dot is where a click finds it (another call's dot at the same place may answer)
  for (int i = 0; i < std::min<int>(s.calls().size(), 40); ++i) {
    const QPointF at = roofline_pane.dot_position(i);
    if (at.x() < 0) continue;
    const int hit = roofline_pane.call_at(at);
    QVERIFY(hit >= 0 && roofline_pane.dot_position(hit) == at);
  }
}

// a clear error: one line, short, saying something, with no control characters from the trace in it
bool clear_error(const QString& e) {
  return !e.isEmpty() && e.size() < 1000 && std::none_of(e.begin(), e.end(), [](QChar c) { return c.unicode() < 0x20; });
}

// Ends the process, naming the mutant, when one runs too long or memory grows past a bound (a hang or a blow-up
// would otherwise show as a bare ctest timeout).
class Watchdog {
 public:
  Watchdog() : thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }
  void start(const QString& what, int limit_ms) {
    std::lock_guard lk(mu_);
    what_ = what.left(300).toStdString();
    deadline_ = now_ms() + limit_ms;
  }
  void done() { deadline_ = 0; }
  static qint64 rss_mb() {
    long pages = 0, rss = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
      std::fclose(f);
    }
    return qint64(rss) * sysconf(_SC_PAGESIZE) >> 20;
  }
  static constexpr qint64 kMaxRssMb = 3000;

 private:
  static qint64 now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void watch() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const qint64 d = deadline_;
      const qint64 rss = rss_mb();
      if ((d && now_ms() > d) || rss > kMaxRssMb) {
        std::lock_guard lk(mu_);
        std::fprintf(stderr, "FAIL: mutant '%s' %s\n", what_.c_str(),
                     rss > kMaxRssMb ? qPrintable(QStringLiteral("took %1 MB of memory").arg(rss)) : "did not finish in time");
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<qint64> deadline_{0};
  std::mutex mu_;
  std::string what_;
  std::thread thread_;
};

}  // namespace

class TestTraceFuzz : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QList<Seed> seeds_;

  // `tinyscope run SCRIPT --json --trace matches` (SCRIPT relative to the source tree); with `limits`, the trace's
  // "limits" as a run finds them in the limits cache (the run itself sees an empty cache, so the seeds are the same on
  // every machine)
  QByteArray record(const QString& script, bool limits = false) {
    const QString out = dir_.filePath(QFileInfo(script).completeBaseName() + ".json");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_CACHE_HOME", dir_.filePath("empty-cache"));
    p.setProcessEnvironment(env);
    p.start(tinyscope_bin(), {"run", source_dir() + "/" + script, "--json", out, "--trace", "matches"});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
    QFile f(out);
    if (!f.open(QIODevice::ReadOnly)) return {};
    // the timings differ from run to run: fixed ones, so the byte-level mutants are the same every run
    QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
    QJsonArray calls = doc["calls"].toArray();
    for (qsizetype i = 0; i < calls.size(); ++i) {
      QJsonObject c = calls[i].toObject();
      c["seconds"] = 1e-6 * double(i + 1);
      calls[i] = c;
    }
    doc["calls"] = calls;
    if (limits)
      doc["limits"] = QJsonObject{{"device", "CPU"}, {"machine", "a CPU, 8 logical CPUs"}, {"measured_at", "2025-02-03T04:05:06Z"},
                                  {"bandwidth_gbs", 12.5}, {"bandwidth_label", "add bandwidth GB/s (STREAM-like add)"},
                                  {"peak_gflops", 96.0}, {"peak_label", "FMA peak GFLOP/s fp32"}};
    return QJsonDocument(doc).toJson(QJsonDocument::Compact);
  }
  static QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString data = source_dir() + "/tests/viewer/data/";
    const QList<QPair<QString, QByteArray>> sources = {
        {"tutorial (recorded now)", record("resources/examples/tutorial.py", /*limits=*/true)},
        {"softmax (recorded now)", record("resources/examples/softmax.py")},
        {"seed_add.trace.json", read(data + "seed_add.trace.json")},
        {"tutorial_matches.trace.json", read(data + "tutorial_matches.trace.json")},
        {"golden_seed.json", read(source_dir() + "/tests/engine/trace/golden_seed.json")},
        // shapes past 32 bits (a reduce over 2^33 elements)
        {"32_split_reduce (recorded now)", record("tests/corpus/32_split_reduce.py")}};
    for (const auto& [name, bytes] : sources) {
      QVERIFY2(!bytes.isEmpty(), qPrintable(name));
      // every seed is a trace the viewer opens, before any mutation
      tsv::Session s;
      QString err;
      QVERIFY2(s.load_data(bytes, &err), qPrintable(name + ": " + err));
      QVERIFY2(!s.uops().isEmpty(), qPrintable(name));
      seeds_.push_back(make_seed(name, bytes));
    }
  }

  void mutants_load_or_fail_clearly() {
    QList<Mutant> mutants;
    QRandomGenerator rng(20240611);  // the same mutants every run
    for (int i = 0; i < seeds_.size(); ++i) {
      const Seed& s = seeds_[i];
      const bool full = i == 0 || i == 4;  // every key of the richest recorded trace and of the golden file
      if (full) key_mutants(s, rng, &mutants);
      id_mutants(s, rng, &mutants, full ? 12 : 6);
      cycle_mutants(s, rng, &mutants);
      number_mutants(s, rng, &mutants, full ? 12 : 6);
      byte_mutants(s, rng, &mutants, 4, 8, 10);
    }
    document_mutants(seeds_[0], &mutants);
    odd_mutants(seeds_[0], rng, &mutants);
    odd_mutants(seeds_[1], rng, &mutants);
    if (QTest::currentTestFailed()) return;

    Watchdog dog;
    QElapsedTimer clock;
    clock.start();
    int loaded = 0, refused = 0;
    qint64 slowest_ms = 0;
    QString slowest;
    // seconds one mutant may take (a sanitizer build is some 20 times slower: TS_FUZZ_MUTANT_S=600 there)
    const int limit_ms = 1000 * (qEnvironmentVariableIsSet("TS_FUZZ_MUTANT_S") ? qEnvironmentVariableIntValue("TS_FUZZ_MUTANT_S") : 20);
    for (const Mutant& m : mutants) {
      dog.start(m.name, limit_ms);
      QElapsedTimer t;
      t.start();
      tsv::Session s;
      QString err;
      const bool ok = s.load_data(m.bytes, &err);
      const QByteArray what = (m.name + (ok ? QStringLiteral(" loaded") : " was refused: " + err.left(300))).toUtf8();
      if (m.expect == Expect::Loads) QVERIFY2(ok, what.constData());
      if (m.expect == Expect::Fails) QVERIFY2(!ok, what.constData());
      if (ok) {
        ++loaded;
        exercise(s);
        if (QTest::currentTestFailed()) qWarning("while exercising %s", what.constData());
      } else {
        ++refused;
        QVERIFY2(clear_error(err), what.constData());
        if (!m.error_has.isEmpty() && m.expect == Expect::Fails) QVERIFY2(err.contains(m.error_has), (what + "\nexpected: " + m.error_has.toUtf8()).constData());
        if (!m.error_has.isEmpty() && m.expect == Expect::Either)  // a number the schema refuses: the error names it
          QVERIFY2(err.contains(m.error_has), (what + "\nexpected: " + m.error_has.toUtf8()).constData());
      }
      if (QTest::currentTestFailed()) return;
      dog.done();
      if (t.elapsed() > slowest_ms) slowest_ms = t.elapsed(), slowest = m.name;
    }
    qInfo("%lld mutants: %d loaded, %d refused with an error, in %.1f s (slowest %lld ms: %s); peak memory %lld MB now",
          static_cast<long long>(mutants.size()), loaded, refused, clock.elapsed() / 1000.0, static_cast<long long>(slowest_ms),
          qPrintable(slowest), static_cast<long long>(Watchdog::rss_mb()));
    QVERIFY(loaded > 20 && refused > 200);
  }

  // through the command line: a corrupt trace gives the viewer's error on stderr and a non-zero exit, with the window
  // (rendered offscreen for --screenshot) or without a display
  void command_line_refuses_corrupt_traces() {
    const Seed& s = seeds_[0];
    QRandomGenerator rng(7);
    QList<Mutant> mutants;
    cycle_mutants(s, rng, &mutants);
    mutants = mutants.mid(0, 1);  // a uop that is its own source
    QByteArray v10 = bytes_of(s.doc);
    v10.replace(v10.lastIndexOf("\"version\":1"), 11, "\"version\":1.0");
    mutants.push_back({"version 1.0", v10, Expect::Fails});
    mutants.push_back({"a context kind that is a number", bytes_of(edited(s.doc, {{"contexts"}, {QString(), 0}, {"kind"}}, 5)), Expect::Fails});
    mutants.push_back({"cut short", bytes_of(s.doc).left(5000), Expect::Fails});
    const QByteArray good = bytes_of(s.doc);
    mutants.push_back({"deep nesting", good.left(good.size() - 1) + ",\"result\":" + QByteArray(100000, '[') + QByteArray(100000, ']') + "}", Expect::Fails});
    for (int i = 0; i < mutants.size(); ++i) {
      const Mutant& m = mutants[i];
      const QString path = dir_.filePath(QStringLiteral("mutant%1.json").arg(i));
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(m.bytes) == m.bytes.size());
      f.close();
      QString expected;
      {
        tsv::Session session;
        QVERIFY(!session.load(path, &expected));
      }
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("QT_QPA_PLATFORM", "offscreen");
      env.insert("XDG_CONFIG_HOME", dir_.path());
      env.remove("DISPLAY");
      env.remove("WAYLAND_DISPLAY");
      QProcess p;
      p.setProcessEnvironment(env);
      const QString shot = dir_.filePath(QStringLiteral("mutant%1.png").arg(i));
      // the window for two of them, the headless check for the rest
      const bool window = i < 2;
      p.start(tinyscope_bin(), window ? QStringList{path, "--screenshot", shot} : QStringList{path});
      QVERIFY2(p.waitForFinished(60000), qPrintable(m.name));
      const QString err = QString::fromUtf8(p.readAllStandardError());
      const QByteArray why = (m.name + ": exit " + QString::number(p.exitCode()) + "\n" + err).toUtf8();
      QVERIFY2(p.exitStatus() == QProcess::NormalExit, why.constData());
      QVERIFY2(p.exitCode() == 1, why.constData());
      QVERIFY2(err.contains("tinyscope: cannot open the trace " + expected), (why + "\nexpected: " + expected.toUtf8()).constData());
      if (window) QCOMPARE(QImage(shot).size(), QSize(1600, 1000));  // the window showed the error and was drawn
    }
  }
};

QTEST_MAIN(TestTraceFuzz)
#include "test_trace_fuzz.moc"
