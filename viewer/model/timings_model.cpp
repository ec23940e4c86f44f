#include "viewer/model/timings_model.h"

#include <algorithm>

#include "viewer/model/ansi.h"
#include "viewer/model/session.h"

namespace tsv {

TimingsModel::TimingsModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  connect(session, &Session::loaded, this, [this] {
    beginResetModel();
    endResetModel();
  });
}

int TimingsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : session_->calls().size(); }
int TimingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

double TimingsModel::seconds(int row) const { return session_->calls().value(row).seconds; }
double TimingsModel::gflops(int row) const {
  const auto& c = session_->calls().value(row);
  return c.seconds > 0 ? c.estimates.ops / c.seconds / 1e9 : 0.0;
}
double TimingsModel::gbs(int row) const {
  const auto& c = session_->calls().value(row);
  return c.seconds > 0 ? c.estimates.mem / c.seconds / 1e9 : 0.0;
}
TimingsModel::Spread TimingsModel::spread(int row) const {
  QList<double> t = session_->calls().value(row).times;
  Spread s;
  if (t.size() < 3) return s;
  t.removeFirst();  // the first run pays one-off costs (caches, waking the threads): the spread is of the warm runs
  std::sort(t.begin(), t.end());
  s.n = t.size();
  s.min = t.front();
  s.max = t.back();
  s.median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
  return s;
}
QString TimingsModel::spread_text(const Spread& s) {
  if (s.n < 2) return {};
  return tr("%1–%2 µs, median %3 (%4 warm runs)").arg(s.min * 1e6, 0, 'f', 2).arg(s.max * 1e6, 0, 'f', 2).arg(s.median * 1e6, 0, 'f', 2).arg(s.n);
}
double TimingsModel::max_seconds() const {
  double m = 0;
  for (const auto& c : session_->calls()) m = std::max(m, c.seconds);
  return m;
}

QVariant TimingsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= session_->calls().size()) return {};
  int r = index.row();
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kTime: return seconds(r);
      case kGflops: return gflops(r);
      case kGbs: return gbs(r);
      case kSpread: {
        Spread s = spread(r);
        return s.n < 2 || s.median <= 0 ? QVariant() : QVariant((s.max - s.min) / s.median);
      }
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole && session_->calls()[r].first_run)
    return tr("first run of this program: its time may include one-off costs");
  if (role == Qt::TextAlignmentRole && index.column() != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName: return strip_ansi(session_->calls()[r].colored_name).trimmed();
    case kTime: return QString::number(seconds(r) * 1e6, 'f', 2) + " µs";
    case kGflops: return QString::number(gflops(r), 'f', 3);
    case kGbs: return QString::number(gbs(r), 'f', 3);
    case kSpread: return spread_text(spread(r));
  }
  return {};
}

QVariant TimingsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Name", "Time", "GFLOP/s", "GB/s", "Spread"};
  return section >= 0 && section < kColumns ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace tsv
