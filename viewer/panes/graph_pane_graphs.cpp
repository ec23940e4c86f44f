// The graphs a GraphPane draws, built from a trace without any widget: the nodes of a set of roots, the kernel graph
// (calls and the buffers between them), the kernel split's colours, and the clusters a large graph collapses into.
#include <QSet>
#include <algorithm>
#include <climits>
#include <utility>

#include "viewer/model/ansi.h"
#include "viewer/model/call_color.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/panes/graph_pane.h"

namespace tsv {

QColor GraphPane::op_color(const QString& op) {
  static const QSet<QString> memory = {"BUFFER", "PARAM", "DEFINE_GLOBAL", "DEFINE_LOCAL", "DEFINE_REG", "LOAD",
                                       "STORE", "INDEX", "COPY", "BUFFERIZE", "AFTER", "BUFFER_VIEW", "MSTACK",
                                       "MSELECT", "ASSIGN", "DEVICE", "UNIQUE", "LUNIQUE"};
  static const QSet<QString> movement = {"RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP", "VIEW"};
  static const QSet<QString> reduce = {"REDUCE", "REDUCE_AXIS", "ALLREDUCE", "WMMA"};
  static const QSet<QString> consts = {"CONST", "VCONST", "DEFINE_VAR", "BIND", "NOOP"};
  static const QSet<QString> control = {"RANGE", "END", "ENDRANGE", "SPECIAL", "IF", "ENDIF", "BARRIER", "GEP",
                                        "VECTORIZE", "CAT", "PTRCAT", "UNROLL", "CONTRACT"};
  static const QSet<QString> kernel = {"SINK", "KERNEL", "CALL", "LINEAR", "CONTIGUOUS", "DETACH", "PROGRAM",
                                       "SOURCE", "FUNCTION", "GROUP"};
  if (memory.contains(op)) return QColor(0xb3, 0xd4, 0xf5);
  if (movement.contains(op)) return QColor(0xc5, 0xe8, 0xb7);
  if (reduce.contains(op)) return QColor(0xf8, 0xc0, 0x8a);
  if (consts.contains(op)) return QColor(0xdd, 0xdd, 0xdd);
  if (control.contains(op)) return QColor(0xd9, 0xc4, 0xf0);
  if (kernel.contains(op)) return QColor(0xf4, 0xb6, 0xc8);
  return QColor(0xf7, 0xe8, 0xa4);  // ALU and the rest
}

QString GraphPane::node_label(const Uop& u) {
  QString arg = u.arg;
  if (arg == "None") arg.clear();
  if (arg.size() > 40) arg = arg.left(38) + "…";
  QString label = u.op + (arg.isEmpty() ? QString() : "\n" + arg);
  if (!u.dtype.isEmpty()) label += "\n" + QString(u.dtype).remove("dtypes.");
  return label;
}

GraphInput GraphPane::build_graph(const Session& s, const QList<int>& roots, int max_nodes) {
  GraphInput g;
  QSet<int> seen;
  QList<int> queue;
  for (int r : roots)
    if (!seen.contains(r)) seen.insert(r), queue.push_back(r);
  for (int i = 0; i < queue.size(); ++i) {
    int id = queue[i];
    const Uop* u = s.uop(id);
    if (!u) continue;
    g.nodes.push_back({id, node_label(*u), op_color(u->op)});
    if (g.nodes.size() > max_nodes) return g;
    for (int src : u->src) {
      g.edges.push_back({src, id});
      if (!seen.contains(src)) seen.insert(src), queue.push_back(src);
    }
  }
  // edges to nodes that were never reached (missing uops) would make dot invent nodes
  QSet<int> have;
  for (const auto& n : g.nodes) have.insert(n.id);
  g.edges.erase(std::remove_if(g.edges.begin(), g.edges.end(),
                               [&](const auto& e) { return !have.contains(e.first) || !have.contains(e.second); }),
                g.edges.end());
  return g;
}

namespace {
QString buffer_text(const Uop& b) {
  return QStringLiteral("%1×%2").arg(element_count(b.shape)).arg(QString(b.dtype).remove(QStringLiteral("dtypes.")));
}
}  // namespace

GraphInput GraphPane::build_kernel_graph(const Session& s, int schedule_context, QList<int>* calls) {
  GraphInput g;
  g.left_to_right = true;
  if (calls) calls->clear();
  if (schedule_context < 0 || schedule_context >= s.contexts().size()) return g;
  const QList<LinearItem>& items = s.contexts()[schedule_context].linear;
  const QList<int> ran = s.calls_of_schedule(schedule_context);
  // a buffer an earlier schedule wrote: its item's call (the last writer before this schedule)
  auto earlier_writer = [&](int buf) -> QString {
    for (int c = schedule_context - 1; c >= 0; --c) {
      const Context& ctx = s.contexts()[c];
      if (!ctx.is_schedule()) continue;
      for (int i = ctx.linear.size() - 1; i >= 0; --i)
        if (!ctx.linear[i].bufs.isEmpty() && ctx.linear[i].bufs[0] == buf) {
          const QList<int> cr = s.calls_of_schedule(c);
          if (i < cr.size()) return s.calls()[cr[i]].display_name();
          return ctx.linear[i].kind;
        }
    }
    return {};
  };
  QHash<int, int> writer;  // buffer uop -> the item that last wrote it in this schedule
  QHash<int, int> input_node;
  for (int i = 0; i < items.size(); ++i) {
    const LinearItem& it = items[i];
    const int call = i < ran.size() ? ran[i] : -1;
    if (calls) calls->push_back(call);
    QString label;
    QColor fill;
    if (call >= 0) {
      const Call& c = s.calls()[call];
      label = c.display_name() + QStringLiteral("\n%1 #%2").arg(c.kind).arg(c.counter);
      fill = call_color(i);  // the call's one colour (viewer/model/call_color.h), as the tensor graph fills its nodes
    } else {
      label = it.kind + QStringLiteral("\n(not run)");
      fill = QColor(0xee, 0xee, 0xee);
    }
    g.nodes.push_back({i, label, fill});
    // what it reads: a kernel's inputs are bufs[1..], a copy's source is bufs[1]
    for (int k = 1; k < it.bufs.size(); ++k) {
      const int b = it.bufs[k];
      const Uop* bu = s.uop(b);
      const QString what = bu ? buffer_text(*bu) : QStringLiteral("buffer");
      if (auto w = writer.constFind(b); w != writer.constEnd()) {
        if (w.value() != i) g.edges.push_back({w.value(), i}), g.edge_labels.push_back(what);
        continue;
      }
      auto in = input_node.constFind(b);
      if (in == input_node.constEnd()) {
        const int id = kBufferNode + static_cast<int>(input_node.size());
        in = input_node.insert(b, id);
        const QString from = earlier_writer(b);
        g.nodes.push_back({id, QStringLiteral("buffer %1").arg(what) + (from.isEmpty() ? QString() : QStringLiteral("\nfrom ") + from),
                           op_color(QStringLiteral("BUFFER"))});
      }
      g.edges.push_back({in.value(), i});
      g.edge_labels.push_back(QString());
    }
    if (!it.bufs.isEmpty()) writer.insert(it.bufs[0], i);
  }
  return g;
}

QColor GraphPane::kernel_tint(int item) { return call_color(item); }

GraphPane::Split GraphPane::kernel_split(const Session& s, int schedule_context) {
  Split out;
  if (schedule_context < 0 || schedule_context >= s.contexts().size()) return out;
  const QList<LinearItem>& items = s.contexts()[schedule_context].linear;
  const QList<int> ran = s.calls_of_schedule(schedule_context);
  for (int i = 0; i < items.size(); ++i) {
    out.fill.push_back(kernel_tint(i));
    out.calls.push_back(i < ran.size() ? ran[i] : -1);
    if (items[i].computes >= 0) out.realized.insert(items[i].computes);
    for (int m : items[i].members) out.items_of[m].push_back(i);
  }
  return out;
}

GraphPane::Clustering GraphPane::cluster_by_kernel(const Session& s, const GraphInput& g, const QList<int>& roots) {
  // where a kernel's result is stored or a new kernel starts
  static const QSet<QString> heads = {"SINK", "KERNEL", "CALL", "STORE", "CONTIGUOUS", "COPY", "BUFFERIZE",
                                      "ASSIGN", "AFTER", "END", "LINEAR", "PROGRAM"};
  Clustering c;
  QHash<int, QList<int>> srcs;
  for (const auto& [a, b] : g.edges) srcs[b].push_back(a);
  auto new_cluster = [&](int id) {
    c.of.insert(id, c.heads.size());
    c.heads.push_back(id);
    c.members.push_back({id});
  };
  QSet<int> in_graph;
  for (const auto& n : g.nodes) in_graph.insert(n.id);
  for (int r : roots)
    if (in_graph.contains(r) && !c.of.contains(r)) new_cluster(r);
  // build_graph lists nodes breadth first from the roots, so a node's first user comes before it
  for (const auto& n : g.nodes) {
    if (!c.of.contains(n.id)) new_cluster(n.id);  // unreachable from the roots: its own cluster
    const int mine = c.of.value(n.id);
    for (int src : srcs.value(n.id)) {
      if (c.of.contains(src)) continue;
      const Uop* u = s.uop(src);
      if (u && heads.contains(u->op)) {
        new_cluster(src);
      } else {
        c.of.insert(src, mine);
        c.members[mine].push_back(src);
      }
    }
  }
  return c;
}

GraphPane::Clustering GraphPane::cluster_by_split(const Session& s, const GraphInput& g, const QList<int>& roots, const Split& split) {
  const Clustering by_op = cluster_by_kernel(s, g, roots);
  Clustering c;
  QSet<int> in_graph;
  for (const auto& n : g.nodes) in_graph.insert(n.id);
  // a cluster per item, in the LINEAR's order: the node it stores first, then the rest in drawing order
  QList<QList<int>> of_item(split.fill.size());
  for (const auto& n : g.nodes)
    if (auto it = split.items_of.constFind(n.id); it != split.items_of.constEnd()) of_item[it.value().front()].push_back(n.id);
  for (int i = 0; i < of_item.size(); ++i) {
    QList<int>& m = of_item[i];
    if (m.isEmpty()) continue;
    for (int k = 0; k < m.size(); ++k)
      if (split.realized.contains(m[k])) { m.move(k, 0); break; }
    const int call = split.calls.value(i, -1);
    c.labels.push_back(call >= 0 ? QStringLiteral("%1 #%2").arg(s.calls()[call].display_name()).arg(s.calls()[call].counter)
                                 : tr("item %1").arg(i));
    for (int id : m) c.of.insert(id, c.heads.size());
    c.heads.push_back(m.front());
    c.members.push_back(m);
  }
  // the rest (inputs, and nodes of calls not in this schedule) as the op heuristic groups them
  for (int k = 0; k < by_op.heads.size(); ++k) {
    QList<int> m;
    for (int id : by_op.members[k])
      if (!c.of.contains(id) && in_graph.contains(id)) m.push_back(id);
    if (m.isEmpty()) continue;
    for (int id : m) c.of.insert(id, c.heads.size());
    c.heads.push_back(m.front());
    c.members.push_back(m);
    c.labels.push_back(QString());
  }
  return c;
}

GraphInput GraphPane::collapse(const Session& s, const GraphInput& g, const Clustering& c, const QSet<int>& expanded) {
  GraphInput out;
  auto shown_id = [&](int id) {
    int k = c.of.value(id, -1);
    return k < 0 || expanded.contains(k) ? id : -1 - k;
  };
  QSet<int> added;
  for (const auto& n : g.nodes) {
    int id = shown_id(n.id);
    if (added.contains(id)) continue;
    added.insert(id);
    if (id >= 0) {
      out.nodes.push_back(n);
      continue;
    }
    const int k = -1 - id;
    const Uop* head = s.uop(c.heads[k]);
    QString what = head ? head->op : QStringLiteral("?");
    if (head && !head->arg.isEmpty() && head->arg != "None") what += " " + head->arg.left(24);
    if (!c.labels.value(k).isEmpty()) what = c.labels[k];
    // a call's cluster keeps its call's colour
    const QColor fill = c.labels.value(k).isEmpty() ? QColor(0xe6, 0xe6, 0xf2) : n.fill;
    out.nodes.push_back({id, QStringLiteral("▸ %1\n%2 nodes").arg(what).arg(c.members[k].size()), fill});
  }
  // a constant every kernel reads would tie every cluster to the one that reached it first: no such edges
  static const QSet<QString> shared_leaves = {"CONST", "VCONST", "DEVICE", "UNIQUE", "LUNIQUE", "DEFINE_VAR"};
  auto shared_leaf = [&](int id) {
    const Uop* u = s.uop(id);
    return u && u->src.isEmpty() && shared_leaves.contains(u->op);
  };
  QSet<QPair<int, int>> seen;
  for (const auto& [a, b] : g.edges) {
    QPair<int, int> e{shown_id(a), shown_id(b)};
    if (e.first == e.second || seen.contains(e)) continue;
    if (e.first < 0 && e.second != e.first && shared_leaf(a)) continue;
    seen.insert(e);
    out.edges.push_back(e);
  }
  return out;
}

}  // namespace tsv
