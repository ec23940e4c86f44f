#include "viewer/model/compare_model.h"

#include <QColor>
#include <algorithm>
#include <vector>

#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"

namespace tsv {

CompareModel::CompareModel(Session* a, Session* b, QObject* parent) : QAbstractTableModel(parent), a_(a), b_(b) {
  for (Session* s : {a, b}) connect(s, &Session::loaded, this, &CompareModel::rebuild);
  rebuild();
}

void CompareModel::rebuild() {
  beginResetModel();
  pairing_.build(*a_, *b_);
  endResetModel();
}

void CompareModel::set_devices(const QString& a, const QString& b) {
  dev_a_ = a, dev_b_ = b;
  emit headerDataChanged(Qt::Horizontal, 0, kColumns - 1);
}

int CompareModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(pairing_.rows().size()); }
int CompareModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

const Call* CompareModel::call_a(int row) const {
  const int c = row >= 0 && row < pairing_.rows().size() ? pairing_.rows()[row].a : -1;
  return c >= 0 && c < a_->calls().size() ? &a_->calls()[c] : nullptr;
}
const Call* CompareModel::call_b(int row) const {
  const int c = row >= 0 && row < pairing_.rows().size() ? pairing_.rows()[row].b : -1;
  return c >= 0 && c < b_->calls().size() ? &b_->calls()[c] : nullptr;
}

bool CompareModel::matched(int row) const { return call_a(row) && call_b(row); }
bool CompareModel::same_computation(int row) const {
  return matched(row) && pairing_.rows()[row].by == CallPair::By::Computation;
}

double CompareModel::ratio(int row) const {
  if (!matched(row)) return 0;
  const double ta = TimingsModel::headline_of(*call_a(row)), tb = TimingsModel::headline_of(*call_b(row));
  return ta > 0 ? tb / ta : 0;
}

QPair<double, double> CompareModel::ratio_range(int row) const {
  if (!matched(row)) return {0, 0};
  const auto sa = TimingsModel::warm_runs_of(call_a(row)->times), sb = TimingsModel::warm_runs_of(call_b(row)->times);
  if (sa.n < 2 || sb.n < 2 || sa.min <= 0 || sa.max <= 0) return {0, 0};
  return {sb.min / sa.max, sb.max / sa.min};
}

namespace {
QString ratio_text(double r) { return QStringLiteral("%1×").arg(r, 0, 'f', r < 10 ? 2 : 1); }
}  // namespace

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= pairing_.rows().size()) return {};
  const int r = index.row();
  const Call* ca = call_a(r);
  const Call* cb = call_b(r);
  const QString a = dev_a_.isEmpty() ? tr("the first run") : dev_a_, b = dev_b_.isEmpty() ? tr("the second run") : dev_b_;
  const auto [lo, hi] = ratio_range(r);
  const bool noisy = lo > 0 && lo <= 1 && hi >= 1;  // the warm runs allow either device to be the faster
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kTimeA: return ca ? QVariant(TimingsModel::headline_of(*ca)) : QVariant();
      case kTimeB: return cb ? QVariant(TimingsModel::headline_of(*cb)) : QVariant();
      case kRatio: return matched(r) ? QVariant(ratio(r)) : QVariant();
      default: return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kRatio && matched(r) && ratio(r) > 0 && !noisy)
    return ratio(r) < 1 ? QColor(0x1a, 0x7f, 0x37) : QColor(0xb0, 0x30, 0x20);  // faster / slower on the second
  if (role == Qt::ForegroundRole && (index.column() == kNameA || index.column() == kNameB) && matched(r) && !same_computation(r))
    return QColor(0xa0, 0x60, 0x00);
  if (role == Qt::TextAlignmentRole && (index.column() == kTimeA || index.column() == kTimeB || index.column() == kRatio))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) {
    if (!matched(r)) return tr("only %1 made this call: nothing of the other run computes the same here").arg(ca ? a : b);
    if (index.column() == kRatio) {
      QString t = tr("%1's time over %2's, each the median of its warm runs (its one run if it ran once)").arg(b, a);
      if (lo > 0) t += tr("; the warm runs allow %1 to %2%3").arg(ratio_text(lo), ratio_text(hi), noisy ? tr(": within the noise") : QString());
      return t;
    }
    return same_computation(r) ? tr("paired by what the two calls compute (the tensor node each realizes)")
                               : tr("paired by kind and buffer sizes only: the two runs compute different things here");
  }
  if (role != Qt::DisplayRole) return {};
  auto time = [](const Call* c) { return c ? QString::number(TimingsModel::headline_of(*c) * 1e6, 'f', 2) + " µs" : QString("—"); };
  switch (index.column()) {
    case kIndex: return r + 1;
    case kNameA: return ca ? ca->display_name() : QString("—");
    case kTimeA: return time(ca);
    case kNameB: return cb ? cb->display_name() : QString("—");
    case kTimeB: return time(cb);
    case kRatio: {
      if (!matched(r)) return tr("only on %1").arg(ca ? a : b);
      if (ratio(r) <= 0) return QStringLiteral("—");
      QString t = ratio_text(ratio(r));
      if (lo > 0) t += QStringLiteral(" (%1–%2)").arg(lo, 0, 'f', lo < 10 ? 2 : 1).arg(hi, 0, 'f', hi < 10 ? 2 : 1);
      return t;
    }
  }
  return {};
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const QString a = dev_a_.isEmpty() ? tr("first") : dev_a_, b = dev_b_.isEmpty() ? tr("second") : dev_b_;
  switch (section) {
    case kIndex: return QStringLiteral("#");
    case kNameA: return tr("Call on %1").arg(a);
    case kTimeA: return tr("Time on %1").arg(a);
    case kNameB: return tr("Call on %1").arg(b);
    case kTimeB: return tr("Time on %1").arg(b);
    case kRatio: return tr("%1 / %2").arg(b, a);
  }
  return {};
}

LineDiff diff_lines(const QStringList& a, const QStringList& b) {
  const int n = a.size(), m = b.size();
  LineDiff d;
  if (static_cast<qint64>(n) * m > 4'000'000) {  // too big for the table: line by line
    for (int i = 0; i < n; ++i) d.a_kept.push_back(i < m && a[i] == b[i]);
    for (int j = 0; j < m; ++j) d.b_kept.push_back(j < n && a[j] == b[j]);
    d.removed = static_cast<int>(std::count(d.a_kept.begin(), d.a_kept.end(), false));
    d.added = static_cast<int>(std::count(d.b_kept.begin(), d.b_kept.end(), false));
    return d;
  }
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (int i = n - 1; i >= 0; --i)
    for (int j = m - 1; j >= 0; --j) lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  d.a_kept = QList<bool>(n, false);
  d.b_kept = QList<bool>(m, false);
  for (int i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j]) d.a_kept[i++] = true, d.b_kept[j++] = true;
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) ++i;
    else ++j;
  }
  d.removed = static_cast<int>(std::count(d.a_kept.begin(), d.a_kept.end(), false));
  d.added = static_cast<int>(std::count(d.b_kept.begin(), d.b_kept.end(), false));
  return d;
}

}  // namespace tsv
