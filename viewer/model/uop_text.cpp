#include "viewer/model/uop_text.h"

#include <QHash>
#include <QList>
#include <QStringList>

#include "viewer/model/session.h"

namespace tsv {

QString uop_repr(int root, const std::function<const Uop*(int)>& node, int max_lines) {
  // how often each node is a source in the subtree (an iterative walk: kernel graphs run deep)
  QHash<int, int> uses;
  {
    QList<int> stack{root};
    QHash<int, bool> seen{{root, true}};
    while (!stack.isEmpty()) {
      const Uop* u = node(stack.takeLast());
      if (!u) continue;
      for (int s : u->src) {
        ++uses[s];
        if (!seen.contains(s)) seen.insert(s, true), stack.push_back(s);
      }
    }
  }
  QHash<int, int> names;
  QString out;
  int lines = 0;
  bool truncated = false;
  // the recursion of the binding's repr as an explicit stack: (node, depth) to open, or a closing ")" at a depth
  struct Item {
    int id, depth;
    bool close, last_of_parent;
  };
  QList<Item> stack{{root, 0, false, false}};
  while (!stack.isEmpty()) {
    const Item it = stack.takeLast();
    const QString pad(it.depth * 2, QLatin1Char(' '));
    const QString tail = it.depth > 0 ? QStringLiteral(",\n") : QString();
    if (it.close) {
      out += pad + QStringLiteral("))") + tail;
      continue;
    }
    // past the limit one "..." stands for every node left (the open ones still close)
    if (lines >= max_lines) {
      if (!truncated) out += pad + QStringLiteral("...") + tail;
      truncated = true;
      continue;
    }
    ++lines;
    if (auto n = names.constFind(it.id); n != names.constEnd()) {
      out += pad + QStringLiteral("x%1").arg(*n) + tail;
      continue;
    }
    out += pad;
    const Uop* u = node(it.id);
    if (!u) {
      out += QStringLiteral("?") + tail;
      continue;
    }
    if (uses.value(it.id) > 1) {
      const int x = names.size();
      names.insert(it.id, x);
      out += QStringLiteral("x%1:=").arg(x);
    }
    out += QStringLiteral("UOp(Ops.%1, %2, arg=%3").arg(u->op, u->dtype, u->arg);
    if (u->tag >= 0) out += QStringLiteral(", tag=%1").arg(u->tag);
    out += QStringLiteral(", src=(");
    if (u->src.isEmpty()) {
      out += QStringLiteral("))") + tail;
      continue;
    }
    out += QLatin1Char('\n');
    stack.push_back({it.id, it.depth, true, false});
    for (qsizetype i = u->src.size() - 1; i >= 0; --i) stack.push_back({u->src[i], it.depth + 1, false, false});
  }
  if (out.endsWith(QLatin1Char('\n'))) out.chop(1);
  return out;
}

namespace {
// one uop of a listing as print_uops writes it: its number, op, dtype, its sources' numbers, its argument
QString listing_line(int number, const Uop& u, const QStringList& src) {
  return QStringLiteral("%1 %2 %3 [%4] %5").arg(number, 4).arg(u.op, -12).arg(u.dtype, -16).arg(src.join(QStringLiteral(", ")), u.arg);
}
}  // namespace

QString linear_program(int linear, const std::function<const Uop*(int)>& node) {
  const Uop* l = node(linear);
  if (!l) return {};
  Uop unknown;
  unknown.op = QStringLiteral("?");
  QStringList lines;
  for (int id : l->src) {
    const Uop* u = node(id);
    QStringList src;
    for (int x : u ? u->src : QList<int>{}) src << QString::number(x);
    lines << listing_line(id, u ? *u : unknown, src);
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace tsv

namespace tsv {

QList<int> linear_uops(const Session& s, int kernel_context) {
  if (kernel_context < 0 || kernel_context >= s.contexts().size()) return {};
  const auto& passes = s.contexts()[kernel_context].passes;
  for (qsizetype i = passes.size() - 1; i >= 0; --i)
    if (const Uop* u = s.uop(passes[i].after); u && u->op == QLatin1String("LINEAR")) return u->src;
  return {};
}

QString linear_listing(const Session& s, int kernel_context) {
  const QList<int> order = linear_uops(s, kernel_context);
  QHash<int, int> position;
  for (int i = 0; i < order.size(); ++i) position.insert(order[i], i);
  QString out;
  for (int i = 0; i < order.size(); ++i) {
    const Uop* u = s.uop(order[i]);
    if (!u) continue;
    QStringList src;
    for (int x : u->src) src << (position.contains(x) ? QString::number(position.value(x)) : QStringLiteral("?"));
    out += listing_line(i, *u, src) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace tsv
