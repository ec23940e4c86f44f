#include "viewer/model/call_pairing.h"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <vector>

#include "viewer/model/session.h"

namespace tsv {

namespace {

quint64 mix(quint64 h, quint64 v) {
  // splitmix64's finalizer over the running hash and the next value
  quint64 z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
quint64 mix(quint64 h, const QString& s) { return mix(h, quint64(qHash(s, 0x5ca1ab1e))); }

// a uop's argument without what only the device decides: every quoted name ('CPU', device='VULKAN', KernelInfo's
// name='r_8_16_2_4_4_16_4', a SPECIAL's 'lidx0') becomes '*'
QString device_free(const QString& arg) {
  if (!arg.contains(QLatin1Char('\''))) return arg;
  static const QRegularExpression kQuoted(QStringLiteral("'[^']*'"));
  QString out = arg;
  return out.replace(kQuoted, QStringLiteral("'*'"));
}

// structural hashes of uops (op, dtype, shape, device-free arg, sources), memoised; iterative, so a deep graph cannot
// overflow the stack
class UopHasher {
 public:
  // a BUFFER written by a call hashes as that call's key (`written`), whatever number the run gave it; any other
  // BUFFER by its dtype and shape
  UopHasher(const QHash<int, Uop>& uops, const QHash<int, quint64>& written) : uops_(uops), written_(written) {}
  void forget() { memo_.clear(); }
  quint64 operator()(int root) {
    if (auto it = memo_.constFind(root); it != memo_.constEnd()) return *it;
    std::vector<std::pair<int, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [id, expanded] = stack.back();
      stack.pop_back();
      if (memo_.contains(id)) continue;
      const auto u = uops_.constFind(id);
      if (u == uops_.constEnd()) {
        memo_.insert(id, 0x6d697373696e67ULL);  // a node the trace lacks: one fixed value
        continue;
      }
      if (!expanded) {
        stack.push_back({id, true});
        for (int s : u->src)
          if (!memo_.contains(s)) stack.push_back({s, false});
        continue;
      }
      const bool buffer = u->op == QLatin1String("BUFFER");
      if (buffer && written_.contains(id)) {
        memo_.insert(id, mix(0xb0f, written_.value(id)));
        continue;
      }
      quint64 h = mix(mix(mix(0, u->op), u->dtype), buffer ? QString() : device_free(u->arg));
      for (qint64 d : u->shape) h = mix(h, quint64(d));
      h = mix(h, quint64(u->src.size()));
      for (int s : u->src) h = mix(h, memo_.value(s));
      memo_.insert(id, h);
    }
    return memo_.value(root);
  }

 private:
  const QHash<int, Uop>& uops_;
  const QHash<int, quint64>& written_;
  QHash<int, quint64> memo_;
};

// each call's LINEAR item: the n-th call of schedule k is item n of its linear (a TinyJit replay runs the captured
// LINEAR again: item n modulo its length)
QList<const LinearItem*> items_of_calls(const Session& s) {
  QList<const LinearItem*> out(s.calls().size(), nullptr);
  QHash<int, int> seen;  // schedule index -> calls of it so far
  for (int i = 0; i < s.calls().size(); ++i) {
    const int k = s.calls()[i].schedule_index;
    const int ctx = s.schedule_context(k);
    const int n = seen[k]++;
    if (ctx < 0) continue;
    const auto& linear = s.contexts()[ctx].linear;
    if (!linear.isEmpty()) out[i] = &linear[n % linear.size()];
  }
  return out;
}

}  // namespace

CallKeys call_keys(const Session& s) {
  CallKeys k;
  QHash<int, quint64> written;  // BUFFER uop -> the key of the last call that wrote it
  UopHasher hash(s.uops(), written);
  QHash<const LinearItem*, quint64> of_item;  // (a TinyJit replay runs the captured items again: one key each)
  const auto items = items_of_calls(s);
  int schedule = -1;
  for (int i = 0; i < s.calls().size(); ++i) {
    const Call& c = s.calls()[i];
    quint64 shape = mix(0, c.kind);
    for (const auto& [n, dtype] : c.arg_sizes) shape = mix(mix(shape, quint64(n)), dtype);
    k.shape.push_back(shape);
    const LinearItem* it = items[i];
    if (c.schedule_index != schedule) hash.forget(), schedule = c.schedule_index;  // (buffers written since then)
    // (a copy and a kernel are never one computation: the kind leads every key)
    quint64 comp = mix(1, c.kind);
    if (it && of_item.contains(it)) comp = of_item.value(it);
    else if (it && it->kind == c.kind && it->computes >= 0) comp = mix(comp, hash(it->computes));
    else if (it && it->kind == c.kind && it->ast >= 0) comp = mix(mix(comp, 2), hash(it->ast));
    else comp = mix(mix(mix(comp, 3), shape), c.kind == "copy" ? QString() : c.name);  // (no item: a kernel by its name)
    if (it) {
      of_item.insert(it, comp);
      if (!it->bufs.isEmpty()) written.insert(it->bufs.front(), comp);
    }
    k.computation.push_back(comp);
  }
  return k;
}

QList<QPair<int, int>> align_keys(const QList<quint64>& a, const QList<quint64>& b, qint64 max_cells) {
  QList<QPair<int, int>> out;
  const int n = int(a.size()), m = int(b.size());
  int lo = 0;
  while (lo < n && lo < m && a[lo] == b[lo]) out.push_back({lo, lo}), ++lo;
  int hi_a = n, hi_b = m;
  while (hi_a > lo && hi_b > lo && a[hi_a - 1] == b[hi_b - 1]) --hi_a, --hi_b;
  const int na = hi_a - lo, nb = hi_b - lo;
  if (na > 0 && nb > 0) {
    if (qint64(na) * nb <= max_cells) {
      // lcs[i][j]: the longest common subsequence of a[lo+i..hi_a) and b[lo+j..hi_b)
      std::vector<int> lcs(size_t(na + 1) * (nb + 1), 0);
      auto at = [&](int i, int j) -> int& { return lcs[size_t(i) * (nb + 1) + j]; };
      for (int i = na - 1; i >= 0; --i)
        for (int j = nb - 1; j >= 0; --j)
          at(i, j) = a[lo + i] == b[lo + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
      for (int i = 0, j = 0; i < na && j < nb;) {
        if (a[lo + i] == b[lo + j]) out.push_back({lo + i++, lo + j++});
        else if (at(i + 1, j) >= at(i, j + 1)) ++i;
        else ++j;
      }
    } else {
      // too long for the table: each key of a against the next equal key of b within a window ahead
      constexpr int kWindow = 256;
      for (int i = lo, j = lo; i < hi_a && j < hi_b; ++i) {
        for (int k = j; k < std::min(hi_b, j + kWindow); ++k)
          if (a[i] == b[k]) {
            out.push_back({i, k});
            j = k + 1;
            break;
          }
      }
    }
  }
  for (int i = hi_a, j = hi_b; i < n; ++i, ++j) out.push_back({i, j});
  return out;
}

void CallPairing::clear() {
  rows_.clear();
  row_a_.clear();
  row_b_.clear();
}

void CallPairing::build(const Session& a, const Session& b) {
  clear();
  const CallKeys ka = call_keys(a), kb = call_keys(b);
  const auto strong = align_keys(ka.computation, kb.computation);
  int i = 0, j = 0;
  // the stretch a[i..ea) beside b[j..eb) between two matches: paired by shape where they can be, else one side each
  auto gap = [&](int ea, int eb) {
    const auto weak = align_keys(ka.shape.mid(i, ea - i), kb.shape.mid(j, eb - j));
    const int bi = i, bj = j;  // (weak's indices count from here)
    for (const auto& [x, y] : weak) {
      while (i < bi + x) rows_.push_back({i++, -1, CallPair::By::None});
      while (j < bj + y) rows_.push_back({-1, j++, CallPair::By::None});
      rows_.push_back({i++, j++, CallPair::By::Shape});
    }
    while (i < ea) rows_.push_back({i++, -1, CallPair::By::None});
    while (j < eb) rows_.push_back({-1, j++, CallPair::By::None});
  };
  for (const auto& [x, y] : strong) {
    gap(x, y);
    rows_.push_back({i++, j++, CallPair::By::Computation});
  }
  gap(int(ka.computation.size()), int(kb.computation.size()));
  for (int r = 0; r < rows_.size(); ++r) {
    if (rows_[r].a >= 0) row_a_.insert(rows_[r].a, r);
    if (rows_[r].b >= 0) row_b_.insert(rows_[r].b, r);
  }
}

int CallPairing::b_of_a(int call) const {
  const int r = row_of_a(call);
  return r < 0 ? -1 : rows_[r].b;
}
int CallPairing::a_of_b(int call) const {
  const int r = row_of_b(call);
  return r < 0 ? -1 : rows_[r].a;
}
int CallPairing::paired_rows() const {
  return int(std::count_if(rows_.begin(), rows_.end(), [](const CallPair& p) { return p.a >= 0 && p.b >= 0; }));
}
int CallPairing::computation_rows() const {
  return int(std::count_if(rows_.begin(), rows_.end(), [](const CallPair& p) { return p.by == CallPair::By::Computation; }));
}

double ulp_tolerance(const QString& dtype) {
  if (dtype == "double" || dtype == "float") return 16;
  if (dtype == "half") return 4;
  if (dtype == "bfloat16") return 2;
  return 0;
}

namespace {
// a dtype's significand bits (after the point) and smallest normal magnitude
struct FloatFormat {
  int mantissa = 23;
  double min_normal = 1.17549435082228751e-38;
};
FloatFormat format_of(const QString& dtype) {
  if (dtype == "double") return {52, 2.2250738585072014e-308};
  if (dtype == "half") return {10, 6.103515625e-05};
  if (dtype == "bfloat16") return {7, 1.17549435082228751e-38};
  return {};
}
}  // namespace

ToleranceCheck check_tolerance(const Output& a, const Output& b) {
  ToleranceCheck t;
  t.tolerance = ulp_tolerance(a.dtype);
  t.compared = std::min(a.stored(), b.stored());
  const bool floats = a.is_float();
  auto mark = [&](qint64 k) {
    if (t.first < 0) t.first = k, t.first_a = a.value(k), t.first_b = b.value(k);
  };
  if (!floats) {
    for (qint64 k = 0; k < t.compared; ++k)
      if (a.i[k] != b.i[k]) ++t.beyond, mark(k);
    return t;
  }
  for (qint64 k = 0; k < t.compared; ++k)
    for (double v : {a.f[k], b.f[k]})
      if (std::isfinite(v)) t.scale = std::max(t.scale, std::fabs(v));
  const FloatFormat f = format_of(a.dtype);
  // one ULP at the scale: 2^(exponent - mantissa bits), the smallest normal's where the scale is below it
  int e = 0;
  std::frexp(std::max(t.scale, f.min_normal), &e);
  const double ulp = std::ldexp(1.0, e - 1 - f.mantissa);
  for (qint64 k = 0; k < t.compared; ++k) {
    const double x = a.f[k], y = b.f[k];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const bool flushed = (x == 0 && std::fabs(y) < f.min_normal) || (y == 0 && std::fabs(x) < f.min_normal);
    const double d = std::fabs(x - y);
    const bool beyond = std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y) || d > t.tolerance * ulp;
    if (!std::isnan(d)) t.worst = std::max(t.worst, d / ulp);
    t.flushed += flushed;
    t.beyond += beyond;
    if (flushed || beyond) mark(k);
  }
  return t;
}

namespace {
using SnapshotIndex = QHash<int, QHash<int, int>>;  // call -> its buffer (arg) -> the snapshot
SnapshotIndex snapshot_index(const Session& s) {
  SnapshotIndex out;
  for (int k = 0; k < s.snapshots().size(); ++k) out[s.snapshots()[k].call].insert(s.snapshots()[k].arg, k);
  return out;
}

// how the divergent call's inputs compare: each buffer its LINEAR item reads that an earlier call of the first run
// wrote last, that writer's output against its counterpart's in the second run
void compare_inputs(const Session& a, const Session& b, const CallPairing& p, const SnapshotIndex& sa, const SnapshotIndex& sb,
                    Divergence* d) {
  const auto items = items_of_calls(a);
  const LinearItem* item = items.value(d->a);
  if (!item) return;
  for (qsizetype k = 1; k < item->bufs.size(); ++k) {
    int writer = -1;
    for (int c = d->a - 1; c >= 0 && writer < 0; --c)
      if (items[c] && !items[c]->bufs.isEmpty() && items[c]->bufs.front() == item->bufs[k]) writer = c;
    const int other = writer < 0 ? -1 : p.b_of_a(writer);
    const int xa = other < 0 ? -1 : sa.value(writer).value(0, -1), xb = other < 0 ? -1 : sb.value(other).value(0, -1);
    if (xa < 0 || xb < 0 || a.snapshots()[xa].shape != b.snapshots()[xb].shape || a.snapshots()[xa].dtype != b.snapshots()[xb].dtype) continue;
    const ToleranceCheck t = check_tolerance(a.snapshots()[xa], b.snapshots()[xb]);
    ++d->inputs;
    d->inputs_worst = std::max(d->inputs_worst, t.worst);
    d->inputs_diverge = d->inputs_diverge || t.diverges();
  }
}
}  // namespace

Divergence first_divergence(const Session& a, const Session& b, const CallPairing& p) {
  Divergence d;
  d.snapshots = !a.snapshots().isEmpty() && !b.snapshots().isEmpty();
  if (!d.snapshots) return d;
  const SnapshotIndex sa = snapshot_index(a), sb = snapshot_index(b);
  for (int r = 0; r < p.rows().size(); ++r) {
    const CallPair& row = p.rows()[r];
    if (row.by != CallPair::By::Computation || !sa.contains(row.a) || !sb.contains(row.b)) continue;
    bool counted = false;
    for (auto it = sa[row.a].constBegin(); it != sa[row.a].constEnd(); ++it) {
      const int kb = sb[row.b].value(it.key(), -1);
      if (kb < 0) continue;
      const Output& oa = a.snapshots()[*it];
      const Output& ob = b.snapshots()[kb];
      if (oa.dtype != ob.dtype || oa.shape != ob.shape) continue;  // (not one buffer: nothing to compare)
      if (!counted) ++d.compared, counted = true;
      const ToleranceCheck t = check_tolerance(oa, ob);
      if (!t.diverges()) continue;
      d.row = r, d.a = row.a, d.b = row.b, d.arg = it.key();
      d.check = t;
      d.dtype = oa.dtype;
      d.shape = oa.shape;
      compare_inputs(a, b, p, sa, sb, &d);
      return d;
    }
  }
  return d;
}


namespace {
// the kernel argument a memory op addresses: the number of the PARAM (or DEFINE_GLOBAL) below it, -1 if none
int param_of(const Session& s, int id) {
  for (int depth = 0; depth < 6; ++depth) {
    const Uop* u = s.uop(id);
    if (!u) return -1;
    if (u->op == "PARAM" || u->op == "DEFINE_GLOBAL") {
      static const QRegularExpression kNumber(QStringLiteral("(\\d+)"));
      const auto m = kNumber.match(u->arg);
      return m.hasMatch() ? m.captured(1).toInt() : -1;
    }
    if (u->src.isEmpty()) return -1;
    id = u->src.front();
  }
  return -1;
}
QString scalar_dtype(QString d) {
  if (d.startsWith(QLatin1String("dtypes."))) d = d.mid(7);
  if (const int dot = int(d.indexOf(QLatin1Char('.'))); dot > 0) d.truncate(dot);  // float.vec(4) -> float
  if (const int paren = int(d.indexOf(QLatin1Char('('))); paren > 0) d.truncate(paren);
  return d;
}
}  // namespace

QStringList statement_keys(const Session& s, const Program& p) {
  if (p.lines.isEmpty()) return {};  // (a trace without them: no alignment)
  QStringList keys = p.src.split(QLatin1Char('\n'));
  for (QString& k : keys) k = QStringLiteral("text|") + k.trimmed();
  for (const auto& [line, id] : p.lines) {
    const Uop* u = s.uop(id);
    if (!u || line < 1 || line > keys.size()) continue;
    QString op = u->op;
    if (op == "VLOAD") op = "LOAD";
    else if (op == "VSTORE") op = "STORE";
    else if (op == "DEFINE_VACC") op = "DEFINE_ACC";
    QString key = op + QLatin1Char('|') + scalar_dtype(u->dtype);
    if (op == "LOAD" || op == "STORE" || op == "INDEX") key += QLatin1Char('|') + QString::number(param_of(s, id));
    keys[line - 1] = key;
  }
  return keys;
}



QString pairing_text(const CallPairing& p, const QString& a, const QString& b) {
  int only_a = 0, only_b = 0;
  for (const CallPair& r : p.rows()) only_a += r.b < 0, only_b += r.a < 0;
  const int shape = p.paired_rows() - p.computation_rows();
  QString t = QObject::tr("%1 rows: %2 paired by what they compute").arg(p.rows().size()).arg(p.computation_rows());
  if (shape) t += QObject::tr(", %1 by kind and buffer sizes only (different computations)").arg(shape);
  t += QObject::tr("; %1 only on %2, %3 only on %4").arg(only_a).arg(a).arg(only_b).arg(b);
  return t;
}

QString divergence_text(const Divergence& d, const Session& a, const Session& b, const QString& la, const QString& lb) {
  if (!d.snapshots)
    return QObject::tr("First divergence: unknown: the runs kept no call's buffers (Run > Record every call's buffers, or "
                       "--snapshots, finds the first call whose output differs)");
  if (d.row < 0)
    return QObject::tr("No divergence: the outputs of the %1 calls paired by computation agree within their dtypes' "
                       "tolerance (16 ULP of a float buffer's largest magnitude, half 4, bfloat16 2; integers exact)")
        .arg(d.compared);
  const Call& ca = a.calls()[d.a];
  const Call& cb = b.calls()[d.b];
  const ToleranceCheck& t = d.check;
  QString t_ = QObject::tr("First divergence: call %1, %2 on %3 (call %4, %5 on %6): ")
                   .arg(d.a + 1)
                   .arg(ca.display_name(), la)
                   .arg(d.b + 1)
                   .arg(cb.display_name(), lb);
  QStringList what;
  const bool floats = d.dtype == "float" || d.dtype == "double" || d.dtype == "half" || d.dtype == "bfloat16";
  if (t.beyond && floats)
    what << QObject::tr("%1 of %2 elements differ by more than %3 ULP of the buffer's largest magnitude %4 (the most %5)")
                .arg(t.beyond)
                .arg(t.compared)
                .arg(t.tolerance)
                .arg(t.scale, 0, 'g', 6)
                .arg(t.worst, 0, 'g', 4);
  else if (t.beyond)
    what << QObject::tr("%1 of %2 elements differ").arg(t.beyond).arg(t.compared);
  if (t.flushed)
    what << QObject::tr("%1 of %2 elements are denormals on one side and 0 on the other (flushed to zero)").arg(t.flushed).arg(t.compared);
  t_ += what.join(QStringLiteral("; "));
  if (d.inputs > 0 && !d.inputs_diverge)
    t_ += QObject::tr("; its %1 input buffer(s) written by earlier calls agree within the tolerance (at most %2 ULP of their "
                      "scale): the difference arises, or is amplified, in this call")
              .arg(d.inputs)
              .arg(d.inputs_worst, 0, 'g', 3);
  else if (d.inputs > 0)
    t_ += QObject::tr("; its inputs already differ beyond the tolerance (a call not compared wrote them)");
  if (t.first >= 0)
    t_ += QObject::tr("; first at %1: %2 vs %3").arg(index_text(t.first, d.shape)).arg(t.first_a, 0, 'g', 8).arg(t.first_b, 0, 'g', 8);
  return t_;
}

StatementRows align_statements(const QStringList& lines_a, const QStringList& keys_a, const QStringList& lines_b,
                               const QStringList& keys_b) {
  StatementRows out;
  QList<quint64> ha, hb;
  for (const QString& k : keys_a) ha.push_back(quint64(qHash(k, 0x51a7e)));
  for (const QString& k : keys_b) hb.push_back(quint64(qHash(k, 0x51a7e)));
  auto pairs = align_keys(ha, hb);
  const int na = int(lines_a.size()), nb = int(lines_b.size());
  pairs.push_back({na, nb});  // (the end)
  int i = 0, j = 0;
  for (const auto& [x, y] : pairs) {
    while (i < x && i < na) out.rows.push_back({i++, -1}), ++out.only_a;
    while (j < y && j < nb) out.rows.push_back({-1, j++}), ++out.only_b;
    if (x < na && y < nb) {
      out.reworded += lines_a[x].trimmed() != lines_b[y].trimmed();
      out.rows.push_back({i++, j++});
    }
  }
  return out;
}

}  // namespace tsv
