#include "viewer/model/output_compare.h"

#include <QBrush>
#include <QColor>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "viewer/model/session.h"

namespace tsv {

OutputStats output_stats(const Output& o) {
  OutputStats s;
  s.values = o.stored();
  double sum = 0;
  qint64 finite = 0;
  for (qint64 k = 0; k < s.values; ++k) {
    const double v = o.value(k);
    if (std::isnan(v)) ++s.nan;
    else if (std::isinf(v)) ++s.inf;
    else {
      s.min = finite ? std::min(s.min, v) : v;
      s.max = finite ? std::max(s.max, v) : v;
      sum += v;
      ++finite;
    }
  }
  s.mean = finite ? sum / double(finite) : 0;
  return s;
}

namespace {
// a float's bits as a signed integer that orders like the float (+0 and -0 both 0)
qint64 ordered(double v, int bits) {
  if (bits <= 32) {
    const auto i = std::bit_cast<int32_t>(static_cast<float>(v));
    return i < 0 ? -qint64(i & 0x7fffffff) : qint64(i);
  }
  const auto i = std::bit_cast<int64_t>(v);
  return i < 0 ? -(i & std::numeric_limits<int64_t>::max()) : i;
}
}  // namespace

double ulp_distance(double a, double b, int bits) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<double>::infinity();
  // in 64 bits the difference of two ordered values can overflow 64 bits (and a double would round it): 128 bits
  const __int128 d = static_cast<__int128>(ordered(a, bits)) - ordered(b, bits);
  return static_cast<double>(d < 0 ? -d : d);
}

QString shape_text(const QList<qint64>& shape) {
  QStringList dims;
  for (qint64 s : shape) dims << QString::number(s);
  return QLatin1Char('(') + dims.join(QStringLiteral(", ")) + (shape.size() == 1 ? QStringLiteral(",)") : QStringLiteral(")"));
}

QString index_text(qint64 flat, const QList<qint64>& shape) {
  QStringList parts;
  for (qsizetype d = shape.size() - 1; d >= 0; --d) {
    const qint64 n = std::max<qint64>(shape[d], 1);
    parts.prepend(QString::number(flat % n));
    flat /= n;
  }
  return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

OutputDiff compare_outputs(const Output& a, const Output& b) {
  OutputDiff d;
  if (a.dtype != b.dtype || a.shape != b.shape) {
    d.verdict = OutputDiff::Verdict::Mismatch;
    auto what = [](const Output& o) { return shape_text(o.shape) + QLatin1Char(' ') + o.dtype; };
    d.problem = QStringLiteral("%1 against %2").arg(what(a), what(b));
    return d;
  }
  d.verdict = OutputDiff::Verdict::Equal;
  d.compared = std::min(a.stored(), b.stored());
  const bool floats = a.is_float();
  if (floats) d.max_ulp = 0;
  for (qint64 k = 0; k < d.compared; ++k) {
    const double x = a.value(k), y = b.value(k);
    const bool same = floats ? (x == y || (std::isnan(x) && std::isnan(y))) : a.i[k] == b.i[k];
    if (same) continue;
    if (d.differing++ == 0) {
      d.first = k;
      d.first_a = x;
      d.first_b = y;
    }
    const double abs = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::infinity() : std::fabs(x - y);
    d.max_abs = std::max(d.max_abs, std::isnan(abs) ? std::numeric_limits<double>::infinity() : abs);
    if (floats) d.max_ulp = std::max(d.max_ulp, ulp_distance(x, y, a.bits));
  }
  if (d.differing) d.verdict = OutputDiff::Verdict::Differ;
  return d;
}

OutputCompareModel::OutputCompareModel(Session* a, Session* b, QObject* parent) : QAbstractTableModel(parent), a_(a), b_(b) {
  connect(a_, &Session::loaded, this, &OutputCompareModel::rebuild);
  connect(b_, &Session::loaded, this, &OutputCompareModel::rebuild);
  rebuild();  // (sessions loaded before the model was made)
}

void OutputCompareModel::rebuild() {
  beginResetModel();
  diffs_.clear();
  const auto& xa = a_->outputs();
  const auto& xb = b_->outputs();
  // only once both runs are in: one run alone compares with nothing
  if (!b_->calls().isEmpty() || !xb.isEmpty()) {
    for (qsizetype r = 0; r < std::max(xa.size(), xb.size()); ++r) {
      if (r < xa.size() && r < xb.size()) {
        diffs_.push_back(compare_outputs(xa[r], xb[r]));
      } else {
        OutputDiff d;
        d.problem = r < xa.size() ? tr("only the first device's run read it") : tr("only the second device's run read it");
        diffs_.push_back(d);
      }
    }
  }
  endResetModel();
}

int OutputCompareModel::differing_rows() const {
  int n = 0;
  for (const auto& d : diffs_) n += d.verdict != OutputDiff::Verdict::Equal;
  return n;
}

int OutputCompareModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(diffs_.size()); }
int OutputCompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

namespace {
QString number_text(double v) {
  if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("-∞");
  if (std::isnan(v)) return QStringLiteral("nan");
  return QString::number(v, 'g', 9);
}
}  // namespace

QVariant OutputCompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= diffs_.size()) return {};
  const int r = index.row();
  const OutputDiff& d = diffs_[r];
  const Output* o = r < a_->outputs().size() ? &a_->outputs()[r] : r < b_->outputs().size() ? &b_->outputs()[r] : nullptr;
  using V = OutputDiff::Verdict;
  if (role == Qt::ForegroundRole && index.column() == kVerdict)
    return QBrush(d.verdict == V::Equal ? QColor(0x1b7f3a) : QColor(0xc0392b));
  if (role == Qt::ToolTipRole && index.column() == kVerdict && d.verdict == V::Differ)
    return tr("%1 of %2 elements differ; two NaNs count as equal").arg(d.differing).arg(d.compared);
  if (role == Qt::TextAlignmentRole && (index.column() == kMaxAbs || index.column() == kMaxUlp))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kIndex: return r + 1;
    case kWhere: return o ? o->where : QString();
    case kShape: {
      return o ? shape_text(o->shape) + QLatin1Char(' ') + o->dtype : QVariant();
    }
    case kVerdict:
      switch (d.verdict) {
        case V::Equal: return o && d.compared < o->count ? tr("equal (first %1 of %2 kept)").arg(d.compared).arg(o->count) : tr("equal");
        case V::Differ: return tr("%1 of %2 differ").arg(d.differing).arg(d.compared);
        case V::Mismatch: return tr("not comparable: %1").arg(d.problem);
        case V::Missing: return d.problem;
      }
      return {};
    case kMaxAbs: return d.verdict == V::Differ || d.verdict == V::Equal ? number_text(d.max_abs) : QString();
    case kMaxUlp: return (d.verdict == V::Differ || d.verdict == V::Equal) && d.max_ulp >= 0 ? number_text(d.max_ulp) : QString();
    case kFirst:
      return d.first >= 0 && o ? QStringLiteral("%1: %2 vs %3").arg(index_text(d.first, o->shape), number_text(d.first_a), number_text(d.first_b))
                               : QString();
  }
  return {};
}

QVariant OutputCompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kIndex: return QStringLiteral("#");
    case kWhere: return tr("Read at");
    case kShape: return tr("Shape");
    case kVerdict: return tr("Element-wise");
    case kMaxAbs: return tr("Max abs error");
    case kMaxUlp: return tr("Max ULP");
    case kFirst: return tr("First difference (first device vs second)");
  }
  return {};
}

}  // namespace tsv
