#include "viewer/model/access_model.h"

#include <QRegularExpression>
#include <functional>

#include "viewer/model/session.h"

namespace tsv {

namespace {
// the integer ops an index or a gate is made of
enum class Op { Const, Range, Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Shl, Shr, And, Or, Xor, Max, Lt, Ne, Eq, Where, Neg, Cast };

bool op_of(const QString& name, Op* op) {
  static const QHash<QString, Op> ops = {{"ADD", Op::Add},   {"SUB", Op::Sub},        {"MUL", Op::Mul},         {"CDIV", Op::Div},
                                         {"IDIV", Op::Div},  {"CMOD", Op::Mod},       {"MOD", Op::Mod},         {"FLOORDIV", Op::FloorDiv},
                                         {"FLOORMOD", Op::FloorMod}, {"SHL", Op::Shl}, {"SHR", Op::Shr},        {"AND", Op::And},
                                         {"OR", Op::Or},     {"XOR", Op::Xor},        {"MAX", Op::Max},         {"CMPLT", Op::Lt},
                                         {"CMPNE", Op::Ne},  {"CMPEQ", Op::Eq},       {"WHERE", Op::Where},     {"NEG", Op::Neg},
                                         {"CAST", Op::Cast}};
  auto it = ops.find(name);
  if (it == ops.end()) return false;
  *op = it.value();
  return true;
}

qint64 apply(Op op, qint64 a, qint64 b, qint64 c) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return b ? a / b : 0;
    case Op::Mod: return b ? a % b : 0;
    case Op::FloorDiv: return b ? (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0;
    case Op::FloorMod: return b ? ((a % b) + b) % b : 0;
    case Op::Shl: return a << b;
    case Op::Shr: return a >> b;
    case Op::And: return a & b;
    case Op::Or: return a | b;
    case Op::Xor: return a ^ b;
    case Op::Max: return std::max(a, b);
    case Op::Lt: return a < b;
    case Op::Ne: return a != b;
    case Op::Eq: return a == b;
    case Op::Where: return a ? b : c;
    case Op::Neg: return -a;
    case Op::Cast: return a;
    default: return 0;
  }
}
}  // namespace

bool AccessModel::load(const Session& s, int kernel_context, int call, QString* error) {
  auto fail = [&](const QString& e) {
    if (error) *error = e;
    ranges_.clear(), accesses_.clear();
    return false;
  };
  ranges_.clear(), range_pos_.clear(), accesses_.clear(), gates_.clear(), exprs_.clear(), nodes_.clear();
  if (kernel_context < 0 || kernel_context >= s.contexts().size() || !s.contexts()[kernel_context].has_program)
    return fail(QStringLiteral("select a kernel"));
  const Context& c = s.contexts()[kernel_context];
  // the optimized AST: what the expander gets (the last graph with the opts' ranges whole)
  int root = -1;
  for (const Pass& p : c.passes)
    if (p.name == QStringLiteral("expander")) root = p.before;
  if (root < 0) return fail(QStringLiteral("%1: the trace has no optimized AST (the expander pass is not recorded)").arg(c.plain_name));
  // the graph, operands first
  QList<int> order;
  QSet<int> seen;
  std::function<void(int)> walk = [&](int id) {
    if (seen.contains(id) || !s.uops().contains(id)) return;
    seen.insert(id);
    for (int x : s.uops()[id].src) walk(x);
    order << id;
  };
  walk(root);
  static const QRegularExpression kRange(QStringLiteral("^\\((-?\\d+),.*AxisType\\.([A-Z_]+)\\)$"));
  for (int id : order) {
    const Uop& u = s.uops()[id];
    if (u.op != QStringLiteral("RANGE")) continue;
    const auto m = kRange.match(u.arg);
    const Uop* size = u.src.isEmpty() ? nullptr : s.uop(u.src[0]);
    bool ok = false;
    const qint64 n = size && size->op == QStringLiteral("CONST") ? size->arg.toLongLong(&ok) : 0;
    if (!m.hasMatch() || !ok) return fail(QStringLiteral("%1: a loop of symbolic size (uop %2)").arg(c.plain_name).arg(id));
    range_pos_.insert(id, int(ranges_.size()));
    ranges_.push_back({id, m.captured(1).toInt(), m.captured(2), n});
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.id < b.id; });
  for (int i = 0; i < ranges_.size(); ++i) range_pos_[ranges_[i].uop] = i;
  // the stores' targets: the written INDEXes
  QSet<int> written;
  for (int id : order)
    if (s.uops()[id].op == QStringLiteral("STORE") && !s.uops()[id].src.isEmpty()) written.insert(s.uops()[id].src[0]);
  // compile each access's index and gate into nodes
  QHash<int, int> node_of;
  QString bad;
  std::function<int(int)> compile = [&](int id) -> int {
    if (auto it = node_of.constFind(id); it != node_of.constEnd()) return it.value();
    const Uop& u = s.uops()[id];
    Node n;
    Op op = Op::Const;
    if (u.op == QStringLiteral("CONST")) {
      bool ok = false;
      n.value = u.arg == QStringLiteral("True") ? 1 : u.arg == QStringLiteral("False") ? 0 : u.arg.toLongLong(&ok);
      if (!ok && u.arg != QStringLiteral("True") && u.arg != QStringLiteral("False")) bad = QStringLiteral("a constant %1").arg(u.arg);
    } else if (u.op == QStringLiteral("RANGE")) {
      op = Op::Range, n.value = range_pos_.value(id);
    } else if (op_of(u.op, &op)) {
      if (u.src.size() >= 1) n.a = compile(u.src[0]);
      if (u.src.size() >= 2) n.b = compile(u.src[1]);
      if (u.src.size() >= 3) n.c = compile(u.src[2]);
    } else {
      bad = u.op;
    }
    n.op = int(op);
    nodes_.push_back(n);
    return node_of[id] = int(nodes_.size()) - 1;
  };
  static const QRegularExpression kSlot(QStringLiteral("^ParamArg\\((\\d+)"));
  for (int id : order) {
    const Uop& u = s.uops()[id];
    if (u.op != QStringLiteral("INDEX") || u.src.size() < 2) continue;
    const Uop* buf = s.uop(u.src[0]);
    Access a;
    a.index_uop = id;
    a.write = written.contains(id);
    if (buf && buf->op == QStringLiteral("PARAM")) {
      const auto m = kSlot.match(buf->arg);
      a.slot = m.hasMatch() ? m.captured(1).toInt() : -1;
    }
    a.buffer = a.slot >= 0 ? QStringLiteral("buf%1").arg(a.slot) : QStringLiteral("array");
    if (call >= 0 && call < s.calls().size() && a.slot >= 0 && a.slot < s.calls()[call].arg_sizes.size()) a.size = s.calls()[call].arg_sizes[a.slot].first;
    exprs_ << compile(u.src[1]);
    gates_ << (u.src.size() > 2 ? compile(u.src[2]) : -1);
    if (!bad.isEmpty()) return fail(QStringLiteral("%1: an index with %2, which this view cannot evaluate").arg(c.plain_name, bad));
    accesses_ << a;
  }
  // sizes the call did not give: the largest element addressed + 1
  bool unsized = false;
  for (const Access& a : accesses_) unsized = unsized || a.size <= 0;
  if (unsized)
    for_each_point([&](const QList<qint64>& p) {
      const QList<qint64> e = at(p);
      for (int k = 0; k < accesses_.size(); ++k)
        if (accesses_[k].size <= e[k]) accesses_[k].size = e[k] + 1;
    });
  return true;
}

QList<qint64> AccessModel::eval(const QList<qint64>& point) const {
  QList<qint64> v(nodes_.size());
  for (int i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const Op op = static_cast<Op>(n.op);
    if (op == Op::Const) v[i] = n.value;
    else if (op == Op::Range) v[i] = point.value(int(n.value));
    else v[i] = apply(op, n.a >= 0 ? v[n.a] : 0, n.b >= 0 ? v[n.b] : 0, n.c >= 0 ? v[n.c] : 0);
  }
  return v;
}

QList<qint64> AccessModel::at(const QList<qint64>& point) const {
  const QList<qint64> v = eval(point);
  QList<qint64> out;
  for (int k = 0; k < accesses_.size(); ++k) out << (gates_[k] >= 0 && !v[gates_[k]] ? -1 : v[exprs_[k]]);
  return out;
}

QList<qint64> AccessModel::ungated_at(const QList<qint64>& point, QList<bool>* on) const {
  const QList<qint64> v = eval(point);
  QList<qint64> out;
  if (on) on->clear();
  for (int k = 0; k < accesses_.size(); ++k) {
    out << v[exprs_[k]];
    if (on) *on << (gates_[k] < 0 || v[gates_[k]] != 0);
  }
  return out;
}

void AccessModel::for_each_point(const std::function<void(const QList<qint64>&)>& f, qint64 limit) const {
  qint64 total = 1;
  for (const Range& r : ranges_) total *= std::max<qint64>(r.size, 1);
  if (total > limit) return;
  QList<qint64> p(ranges_.size(), 0);
  for (qint64 i = 0; i < total; ++i) {
    f(p);
    for (int d = int(ranges_.size()) - 1; d >= 0; --d) {
      if (++p[d] < ranges_[d].size) break;
      p[d] = 0;
    }
  }
}

QHash<int, QSet<qint64>> AccessModel::reads_of_output(int slot, qint64 element, int* npoints) const {
  QHash<int, QSet<qint64>> out;
  int n = 0;
  for_each_point([&](const QList<qint64>& p) {
    const QList<qint64> e = at(p);
    bool stores = false;
    for (int k = 0; k < accesses_.size(); ++k) stores = stores || (accesses_[k].write && accesses_[k].slot == slot && e[k] == element);
    if (!stores) return;
    ++n;
    for (int k = 0; k < accesses_.size(); ++k)
      if (!accesses_[k].write && e[k] >= 0) out[accesses_[k].slot].insert(e[k]);
  });
  if (npoints) *npoints = n;
  return out;
}

QList<qint64> AccessModel::first_point_writing(int slot, qint64 element) const {
  QList<qint64> found;
  for_each_point([&](const QList<qint64>& p) {
    if (!found.isEmpty()) return;
    const QList<qint64> e = at(p);
    for (int k = 0; k < accesses_.size(); ++k)
      if (accesses_[k].write && accesses_[k].slot == slot && e[k] == element) found = p;
  });
  return found;
}

QHash<int, QSet<qint64>> AccessModel::footprint(const QHash<int, qint64>& fixed) const {
  QHash<int, QSet<qint64>> out;
  for_each_point([&](const QList<qint64>& p) {
    for (auto it = fixed.begin(); it != fixed.end(); ++it)
      if (p.value(it.key()) != it.value()) return;
    const QList<qint64> e = at(p);
    for (int k = 0; k < accesses_.size(); ++k)
      if (e[k] >= 0 && accesses_[k].slot >= 0) out[accesses_[k].write ? -1 - accesses_[k].slot : accesses_[k].slot].insert(e[k]);
  });
  return out;
}

QString AccessModel::group_kind() const {
  bool gpu = false;
  for (const Range& r : ranges_) {
    if (r.type == QStringLiteral("THREAD")) return QStringLiteral("thread");
    gpu = gpu || r.type == QStringLiteral("GLOBAL") || r.type == QStringLiteral("LOCAL") || r.type == QStringLiteral("GROUP_REDUCE");
  }
  return gpu ? QStringLiteral("work-group") : QString();
}

QList<int> AccessModel::group_ranges() const {
  const QString kind = group_kind();
  QList<int> out;
  for (int d = 0; d < ranges_.size(); ++d)
    if ((kind == QStringLiteral("thread") && ranges_[d].type == QStringLiteral("THREAD")) ||
        (kind == QStringLiteral("work-group") && ranges_[d].type == QStringLiteral("GLOBAL")))
      out << d;
  return out;
}

QHash<int, QSet<qint64>> AccessModel::group_writes(const QList<qint64>& point) const {
  const QList<int> group = group_ranges();
  QHash<int, QSet<qint64>> out;
  if (group_kind().isEmpty()) return out;  // (a GPU kernel of one work-group has no GLOBAL range: it writes everything)
  QHash<int, qint64> fixed;
  for (int d : group) fixed[d] = point.value(d);
  for (auto [slot, els] : footprint(fixed).asKeyValueRange())
    if (slot < 0) out[-1 - slot] = els;
  return out;
}

}  // namespace tsv
