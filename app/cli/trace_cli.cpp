// `tinyscope trace TRACE.json`: a recorded run on the command line, as the reference's viz.cli reads its rewrites and
// profile: the run's summary, its contexts and their passes, a pass's graph or its rewrites, a kernel's linearized uops
// and program, the top calls by time, every call, the memory events; --json writes one JSON object per line instead.
// The trace is read through the viewer's Session, so a corrupt or hostile file is refused with the checker's error.
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <algorithm>
#include <cstdio>

#include "app/cli/report.h"
#include "viewer/model/ansi.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/model/uop_text.h"

namespace tscli {

namespace {

struct TraceOptions {
  QString path, context, pass;
  bool list = false, rewrites = false, uops = false, program = false, calls = false, memory = false, json = false;
  int top = 0;
};

QString q(const std::string& s) { return QString::fromStdString(s); }

int usage_error(const QString& why) {
  std::fprintf(stderr, "tinyscope trace: %s\n", qPrintable(why));
  return 2;
}

QString parse(const std::vector<std::string>& a, TraceOptions* o) {
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& x = a[i];
    auto value = [&](QString* into) {
      if (i + 1 >= a.size()) return false;
      *into = q(a[++i]);
      return true;
    };
    if (x == "--list" || x == "--ls") o->list = true;
    else if (x == "--rewrites") o->rewrites = true;
    else if (x == "--uops") o->uops = true;
    else if (x == "--program") o->program = true;
    else if (x == "--calls") o->calls = true;
    else if (x == "--memory") o->memory = true;
    else if (x == "--json") o->json = true;
    else if (x == "-c" || x == "--context") {
      if (!value(&o->context)) return q(x) + " needs a context (its number or a part of its name)";
    } else if (x == "-p" || x == "--pass") {
      if (!value(&o->pass)) return q(x) + " needs a pass (its number in the context or its name)";
    } else if (x == "-t" || x == "--top") {
      o->top = 20;
      if (i + 1 < a.size() && !a[i + 1].empty() && std::all_of(a[i + 1].begin(), a[i + 1].end(), ::isdigit)) o->top = std::stoi(a[++i]);
    } else if (!x.empty() && x[0] == '-') return "unknown option '" + q(x) + "'";
    else if (o->path.isEmpty()) o->path = q(x);
    else return "one trace at a time ('" + q(x) + "' is a second)";
  }
  if (o->path.isEmpty()) return QStringLiteral("which trace? tinyscope trace TRACE.json [--list] [-c CONTEXT [-p PASS [--rewrites]] [--uops] "
                                               "[--program]] [-t [N]] [--calls] [--memory] [--json]");
  if ((o->pass.size() || o->uops || o->program) && o->context.isEmpty()) return QStringLiteral("-p, --uops and --program need a context (-c)");
  if (o->rewrites && o->pass.isEmpty()) return QStringLiteral("--rewrites needs a pass (-p)");
  return {};
}

// what is printed: text lines, or one JSON object per line
class Out {
 public:
  explicit Out(bool json) : json_(json) {}
  void put(const QJsonObject& o, const QString& text) const {
    const QByteArray line = json_ ? QJsonDocument(o).toJson(QJsonDocument::Compact) : text.toUtf8();
    std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
    std::fputc('\n', stdout);
  }

 private:
  bool json_;
};

QString us(double s) { return QString::number(s * 1e6, 'f', 2) + QStringLiteral(" us"); }

// the contexts `what` names: a number (the context's position, 0-based), else those whose name contains it
QList<int> find_contexts(const tsv::Session& s, const QString& what) {
  bool number = false;
  const int n = what.toInt(&number);
  if (number) return n >= 0 && n < s.contexts().size() ? QList<int>{n} : QList<int>{};
  QList<int> out;
  for (int i = 0; i < s.contexts().size(); ++i)
    if (s.contexts()[i].plain_name.contains(what)) out << i;
  return out;
}

int find_pass(const tsv::Context& c, const QString& what) {
  bool number = false;
  const int n = what.toInt(&number);
  if (number) return n >= 0 && n < c.passes.size() ? n : -1;
  for (int i = 0; i < c.passes.size(); ++i)
    if (c.passes[i].name == what) return i;
  for (int i = 0; i < c.passes.size(); ++i)
    if (c.passes[i].name.contains(what)) return i;
  return -1;
}

void summary(const tsv::Session& s, const Out& out) {
  int schedules = 0, kernels = 0;
  for (const auto& c : s.contexts()) (c.is_schedule() ? schedules : kernels)++;
  double total = 0;
  for (const auto& c : s.calls()) total += tsv::TimingsModel::headline_of(c);
  out.put({{"script", s.script()}, {"device", s.device()}, {"contexts", int(s.contexts().size())}, {"schedules", schedules},
            {"kernels", kernels}, {"calls", int(s.calls().size())}, {"uops", int(s.uops().size())}, {"seconds", total}},
           QStringLiteral("%1 on %2: %3 contexts (%4 schedule(s), %5 kernel(s)), %6 calls in %7, %8 uops")
               .arg(s.script().isEmpty() ? QStringLiteral("a run") : s.script(), s.device())
               .arg(s.contexts().size())
               .arg(schedules)
               .arg(kernels)
               .arg(s.calls().size())
               .arg(us(total))
               .arg(s.uops().size()));
}

void list(const tsv::Session& s, const QList<int>& contexts, const Out& out) {
  for (int i : contexts) {
    const tsv::Context& c = s.contexts()[i];
    out.put({{"context", i}, {"kind", c.kind}, {"name", c.plain_name}, {"passes", int(c.passes.size())}},
             QStringLiteral("[%1] %2 %3").arg(i).arg(c.kind, c.plain_name));
    for (int p = 0; p < c.passes.size(); ++p) {
      const tsv::Pass& x = c.passes[p];
      out.put({{"context", i}, {"pass", p}, {"name", x.name}, {"depth", x.depth}, {"matches", x.match_count}},
               QStringLiteral("  %1%2%3").arg(QString(2 * x.depth, QLatin1Char(' ')), x.name,
                                               x.match_count ? QStringLiteral(" - %1").arg(x.match_count) : QString()));
    }
  }
}

// a node as one line: "OP dtype arg"
QString node_line(const tsv::Session& s, int id) {
  const tsv::Uop* u = s.uop(id);
  return u ? QStringLiteral("%1 %2 %3").arg(u->op, u->dtype, u->arg) : QStringLiteral("?");
}

void pass_detail(const tsv::Session& s, int ctx, int p, bool rewrites, const Out& out) {
  const tsv::Pass& x = s.contexts()[ctx].passes[p];
  auto node = [&s](int id) { return s.uop(id); };
  if (!rewrites) {
    const QString graph = tsv::uop_repr(x.after, node, 100000);
    out.put({{"context", ctx}, {"pass", p}, {"name", x.name}, {"after", x.after}, {"graph", graph}},
             QStringLiteral("%1 (after, uop %2):\n%3").arg(x.name).arg(x.after).arg(graph));
    return;
  }
  if (x.matches.isEmpty())
    out.put({{"context", ctx}, {"pass", p}, {"matches", x.match_count}, {"recorded", 0}},
             x.match_count ? QStringLiteral("%1 rewrites, none recorded (record them with --trace matches)").arg(x.match_count)
                           : QStringLiteral("no rewrites"));
  for (int m = 0; m < x.matches.size(); ++m) {
    const tsv::Match& r = x.matches[m];
    out.put({{"context", ctx}, {"pass", p}, {"match", m}, {"rule", r.rule}, {"loc", r.loc}, {"before", r.before}, {"after", r.after}},
             QStringLiteral("%1 %2 (%3)\n  - %4\n  + %5").arg(m).arg(r.rule, r.loc, node_line(s, r.before), node_line(s, r.after)));
  }
}

void kernel_detail(const tsv::Session& s, int ctx, bool uops, bool program, const Out& out) {
  const tsv::Context& c = s.contexts()[ctx];
  if (uops) {
    const QString listing = tsv::linear_listing(s, ctx);
    QJsonArray ids;
    for (int id : tsv::linear_uops(s, ctx)) ids << id;
    out.put({{"context", ctx}, {"uops", ids}, {"listing", listing}},
             listing.isEmpty() ? QStringLiteral("%1 has no linearized program in the trace").arg(c.plain_name) : listing.chopped(1));
  }
  if (program) {
    if (!c.has_program) out.put({{"context", ctx}, {"program", QJsonValue()}}, QStringLiteral("%1 is not a kernel's context").arg(c.plain_name));
    else
      // (the key names the kernel for KERNEL_OPTS)
      out.put({{"context", ctx}, {"name", c.program.name}, {"lang", c.program.lang}, {"program_key", c.program.program_key},
               {"applied_opts", QJsonArray::fromStringList(c.program.applied_opts)}, {"src", c.program.src}},
              QStringLiteral("%1 [%2] program key %3, opts: %4\n%5").arg(c.program.name, c.program.lang, c.program.program_key,
                                                                      c.program.applied_opts.isEmpty() ? QStringLiteral("none") : c.program.applied_opts.join(", "), c.program.src));
  }
}

// the top calls by time, by name (as viz.cli -t): their total, count and share
void top(const tsv::Session& s, int n, const Out& out) {
  struct Agg {
    double seconds = 0;
    int count = 0;
  };
  QMap<QString, Agg> by;
  double total = 0;
  for (const auto& c : s.calls()) {
    const double t = tsv::TimingsModel::headline_of(c);
    Agg& a = by[c.display_name()];
    a.seconds += t, ++a.count;
    total += t;
  }
  QList<QPair<QString, Agg>> rows;
  for (auto it = by.begin(); it != by.end(); ++it) rows.push_back({it.key(), it.value()});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.seconds > y.second.seconds; });
  for (int i = 0; i < std::min<qsizetype>(n, rows.size()); ++i) {
    const auto& [name, a] = rows[i];
    const double pct = total > 0 ? 100 * a.seconds / total : 0;
    out.put({{"name", name}, {"seconds", a.seconds}, {"count", a.count}, {"pct", pct}},
             QStringLiteral("%1 %2 %3 %4%").arg(name, -38).arg(us(a.seconds), 14).arg(a.count, 7).arg(pct, 6, 'f', 2));
  }
}

void calls(const tsv::Session& s, const Out& out) {
  for (int i = 0; i < s.calls().size(); ++i) {
    const tsv::Call& c = s.calls()[i];
    const double t = tsv::TimingsModel::headline_of(c);
    QJsonObject o{{"call", i}, {"kind", c.kind}, {"name", c.display_name()}, {"device", c.device}, {"seconds", t},
                  {"schedule", c.schedule_index}};
    if (c.start >= 0) o["start"] = c.start;
    out.put(o, QStringLiteral("*** %1 %2 %3 %4").arg(c.device.left(7), -7).arg(i + 1, 4).arg(c.display_name(), -46).arg(us(t), 14) +
                    (c.start >= 0 ? QStringLiteral(" at %1 ms").arg(c.start * 1e3, 9, 'f', 3) : QString()));
  }
}

void memory(const tsv::Session& s, const Out& out) {
  if (s.memory().isEmpty()) return out.put({{"memory", QJsonArray()}}, QStringLiteral("the trace has no memory events"));
  QMap<QString, qint64> now, peak;
  for (const auto& m : s.memory()) {
    qint64& v = now[m.device];
    v += m.alloc ? m.bytes : -m.bytes;
    peak[m.device] = std::max(peak[m.device], v);
    out.put({{"t", m.t}, {"event", m.alloc ? "alloc" : "free"}, {"device", m.device}, {"bytes", m.bytes}, {"buffer", m.buffer}},
             QStringLiteral("%1 ms %2 %3 %4 B buffer %5").arg(m.t * 1e3, 10, 'f', 3).arg(m.alloc ? "alloc" : "free ").arg(m.device, -8)
                 .arg(m.bytes, 12).arg(m.buffer));
  }
  for (auto it = peak.begin(); it != peak.end(); ++it)
    out.put({{"device", it.key()}, {"peak", it.value()}}, QStringLiteral("peak on %1: %2 B").arg(it.key()).arg(it.value()));
}

}  // namespace

int cmd_trace(const std::vector<std::string>& args) {
  TraceOptions o;
  if (const QString why = parse(args, &o); !why.isEmpty()) return usage_error(why);
  int argc = 1;
  char name[] = "tinyscope";
  char* argv[] = {name, nullptr};
  QCoreApplication app(argc, argv);
  tsv::Session s;
  QString error;
  if (!s.load(o.path, &error)) {
    std::fprintf(stderr, "tinyscope trace: cannot read %s: %s\n", qPrintable(o.path), qPrintable(error));
    return 1;
  }
  const Out out(o.json);
  QList<int> contexts;
  if (!o.context.isEmpty()) {
    contexts = find_contexts(s, o.context);
    if (contexts.isEmpty()) return usage_error(QStringLiteral("no context is '%1' (tinyscope trace %2 --list names them)").arg(o.context, o.path));
  }
  const bool detail = !o.pass.isEmpty() || o.uops || o.program;
  if (!o.list && !detail && !o.top && !o.calls && !o.memory) summary(s, out);
  if (o.list || (!o.context.isEmpty() && !detail)) {
    if (contexts.isEmpty())
      for (int i = 0; i < s.contexts().size(); ++i) contexts << i;
    list(s, contexts, out);
  }
  for (int ctx : detail ? contexts : QList<int>{}) {
    if (!o.pass.isEmpty()) {
      const int p = find_pass(s.contexts()[ctx], o.pass);
      if (p < 0) return usage_error(QStringLiteral("context %1 has no pass '%2'").arg(ctx).arg(o.pass));
      pass_detail(s, ctx, p, o.rewrites, out);
    }
    kernel_detail(s, ctx, o.uops, o.program, out);
  }
  if (o.top) top(s, o.top, out);
  if (o.calls) calls(s, out);
  if (o.memory) memory(s, out);
  return 0;
}

}  // namespace tscli
