#include "viewer/model/lesson.h"

#include <QRegularExpression>
#include <QSet>

#include "viewer/model/ansi.h"
#include "viewer/model/glossary.h"
#include "viewer/model/session.h"

namespace tsv {

const QList<QPair<QString, QString>>& answer_kinds() {
  static const QList<QPair<QString, QString>> kinds = {
      {"kernels", "kernel calls in the run"},
      {"kernels_last", "kernel calls of the last realize that ran a kernel"},
      {"reduce_kernels_last", "reduce kernels (r_) of the last realize that ran a kernel"},
      {"schedules", "realizes (schedules) that made a call"},
      {"copies", "copy calls in the run"},
      {"first_kernel", "the name of the first kernel run"},
      {"last_kernel", "the name of the last kernel run"},
      {"reduce_size", "the elements one output of the last reducing kernel sums over (its reduce ranges' sizes multiplied)"},
      {"stores_last", "the stores of the last kernel (the buffers it writes)"},
      {"opts_last", "the opts applied to the last kernel"},
      {"first_opt_last", "the first opt applied to the last kernel (UPCAST, LOCAL, ...)"},
      {"passes_last", "the rewrite passes the last kernel went through"},
      {"lang_last", "the language of the last kernel's source (C, LLVM, GLSL)"},
      {"jit_replays", "TinyJit replays of a captured LINEAR"},
      {"jit_calls", "calls run by TinyJit replays"},
      {"graph_calls", "graph calls (batches of replayed kernels)"},
      {"device", "the device the run used"},
      {"outputs", "values the script read back"},
  };
  return kinds;
}

Lesson parse_lesson(const QString& text, QString* error) {
  Lesson l;
  QString err;
  static const QRegularExpression kHead(QStringLiteral("^##\\s+([a-z0-9-]+)\\s*\\|\\s*(.+)$"));
  static const QRegularExpression kKey(QStringLiteral("^(title|script|ask|answer|pane):\\s*(.*)$"));
  QSet<QString> kinds;
  for (const auto& [k, d] : answer_kinds()) kinds.insert(k);
  const QStringList lines = text.split(QLatin1Char('\n'));
  bool in_text = false;  // past a step's keys
  for (int n = 0; n < lines.size() && err.isEmpty(); ++n) {
    const QString line = lines[n].trimmed();
    const QString at = QStringLiteral("line %1: ").arg(n + 1);
    if (const auto m = kHead.match(line); m.hasMatch()) {
      l.steps.push_back({m.captured(1), m.captured(2).trimmed(), {}, {}, {}, {}});
      in_text = false;
      continue;
    }
    if (line.startsWith(QLatin1Char('#'))) continue;
    if (line.isEmpty()) continue;
    if (const auto m = kKey.match(line); m.hasMatch() && !in_text) {
      const QString key = m.captured(1), value = m.captured(2).trimmed();
      if (l.steps.isEmpty()) {
        if (key == "title") l.title = value;
        else if (key == "script") l.script = value;
        else err = at + QStringLiteral("'%1:' belongs to a step (after a \"## id | Title\" line)").arg(key);
        continue;
      }
      LessonStep& s = l.steps.back();
      if (key == "ask") s.ask = value;
      else if (key == "answer") s.answer = value;
      else if (key == "pane") s.pane = value;
      else err = at + QStringLiteral("'%1:' belongs before the first step").arg(key);
      continue;
    }
    if (l.steps.isEmpty()) {
      err = at + QStringLiteral("text before the first step (\"## id | Title\")");
      break;
    }
    in_text = true;
    QString& t = l.steps.back().text;
    t += (t.isEmpty() ? QString() : QStringLiteral(" ")) + line;
  }
  if (err.isEmpty() && l.steps.isEmpty()) err = QStringLiteral("the lesson has no steps (\"## id | Title\" lines)");
  for (const LessonStep& s : l.steps) {
    if (!err.isEmpty()) break;
    if (!s.ask.isEmpty() && s.answer.isEmpty()) err = QStringLiteral("step '%1' asks a question but names no answer: kind").arg(s.id);
    else if (!s.answer.isEmpty() && !kinds.contains(s.answer))
      err = QStringLiteral("step '%1': unknown answer kind '%2' (one of: %3)").arg(s.id, s.answer, QStringList(kinds.values()).join(QStringLiteral(", ")));
    else if (!s.answer.isEmpty() && s.ask.isEmpty()) err = QStringLiteral("step '%1' names an answer but asks nothing (ask:)").arg(s.id);
  }
  if (error) *error = err;
  return err.isEmpty() ? l : Lesson{};
}

int last_kernel_call(const Session& s) {
  for (qsizetype i = s.calls().size(); i-- > 0;)
    if (s.calls()[i].kind == "kernel") return int(i);
  return -1;
}

namespace {

const Program* program_of(const Session& s, int call) {
  if (call < 0) return nullptr;
  const int ctx = s.kernel_context(s.calls()[call]);
  return ctx >= 0 && s.contexts()[ctx].has_program ? &s.contexts()[ctx].program : nullptr;
}

// the uops of a graph (each once), from its root
QList<int> graph_of(const Session& s, int root) {
  QList<int> out, todo{root};
  QSet<int> seen;
  while (!todo.isEmpty()) {
    const int id = todo.takeLast();
    if (seen.contains(id) || !s.uops().contains(id)) continue;
    seen.insert(id);
    out.push_back(id);
    for (int x : s.uops()[id].src) todo.push_back(x);
  }
  return out;
}

// the product of the sizes of the AST's REDUCE ranges (0: none, or a size that is not a number)
qint64 reduce_size(const Session& s, int ast) {
  qint64 n = 1;
  bool any = false;
  for (int id : graph_of(s, ast)) {
    const Uop& u = s.uops()[id];
    if (u.op != "RANGE" || !u.arg.contains(QStringLiteral("REDUCE")) || u.src.isEmpty()) continue;
    const Uop& size = s.uops().value(u.src[0]);
    bool ok = false;
    const qint64 v = size.arg.toLongLong(&ok);
    if (size.op != "CONST" || !ok) return 0;
    n *= v;
    any = true;
  }
  return any ? n : 0;
}


LessonAnswer count(qint64 n) { return {true, QString::number(n), {}}; }
LessonAnswer none(const QString& why) { return {false, {}, why}; }

}  // namespace

LessonAnswer lesson_answer(const Session& s, const QString& kind) {
  const auto& calls = s.calls();
  const int last = last_kernel_call(s);
  const Program* lp = program_of(s, last);
  auto kernels_in = [&](int schedule, bool reduce_only) {
    qint64 n = 0;
    for (const Call& c : calls)
      n += c.kind == "kernel" && (schedule < 0 || c.schedule_index == schedule) && (!reduce_only || c.name.startsWith(QStringLiteral("r_")));
    return n;
  };
  if (kind == "kernels") return count(kernels_in(-1, false));
  if (kind == "copies") return count(std::count_if(calls.begin(), calls.end(), [](const Call& c) { return c.kind == "copy"; }));
  if (kind == "schedules") {
    QSet<int> sched;
    for (const Call& c : calls) sched.insert(c.schedule_index);
    return count(sched.size());
  }
  if (kind == "device") return s.device().isEmpty() ? none(QStringLiteral("the trace names no device")) : LessonAnswer{true, s.device(), {}};
  if (kind == "outputs") return count(s.outputs().size());
  if (kind == "jit_calls" || kind == "jit_replays" || kind == "graph_calls") {
    QSet<int> runs, graphs;
    qint64 n = 0;
    for (const Call& c : calls)
      if (c.jit) {
        ++n;
        runs.insert(c.run);
        if (c.graph > 0) graphs.insert(c.graph);
      }
    return count(kind == "jit_calls" ? n : kind == "jit_replays" ? runs.size() : graphs.size());
  }
  if (last < 0) return none(QStringLiteral("the run ran no kernel"));
  if (kind == "kernels_last") return count(kernels_in(calls[last].schedule_index, false));
  if (kind == "reduce_kernels_last") return count(kernels_in(calls[last].schedule_index, true));
  if (kind == "last_kernel") return {true, calls[last].name, {}};
  if (kind == "first_kernel") {
    for (const Call& c : calls)
      if (c.kind == "kernel") return {true, c.name, {}};
  }
  if (kind == "reduce_size") {
    for (qsizetype i = calls.size(); i-- > 0;)
      if (const Program* p = calls[i].kind == "kernel" ? program_of(s, int(i)) : nullptr; p && p->ast >= 0)
        if (const qint64 n = reduce_size(s, p->ast); n > 0) return count(n);
    return none(QStringLiteral("no kernel of the run reduces"));
  }
  if (!lp) return none(QStringLiteral("the trace has no program for the last kernel (run with --json to record it)"));
  if (kind == "stores_last") {
    qint64 n = 0;
    for (int id : graph_of(s, lp->ast)) n += s.uops()[id].op == "STORE";
    return count(n);
  }
  if (kind == "opts_last") return count(lp->applied_opts.size());
  if (kind == "first_opt_last")
    return lp->applied_opts.isEmpty() ? none(QStringLiteral("no opt was applied to %1").arg(calls[last].name)) : LessonAnswer{true, opt_op(lp->applied_opts[0]), {}};
  if (kind == "lang_last") return {true, lp->lang.toUpper(), {}};
  if (kind == "passes_last") {
    const int ctx = s.kernel_context(calls[last]);
    return count(s.contexts()[ctx].passes.size());
  }
  return none(QStringLiteral("unknown answer kind '%1'").arg(kind));
}

bool answer_accepts(const LessonAnswer& a, const QString& given) {
  if (!a.ok) return false;
  QString g = given.trimmed();
  bool n1 = false, n2 = false;
  const qint64 want = a.value.toLongLong(&n1), got = g.toLongLong(&n2);
  if (n1) return n2 && want == got;
  g = strip_ansi(g);
  if (g.startsWith(QStringLiteral("OptOps."), Qt::CaseInsensitive)) g = g.mid(7);
  return g.compare(a.value, Qt::CaseInsensitive) == 0;
}

}  // namespace tsv
