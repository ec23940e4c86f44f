#pragma once
#include <QAbstractTableModel>
#include <QStringList>

#include "viewer/model/call_pairing.h"

namespace tsv {
class Session;
struct Call;

// Two runs of one script side by side, call by call, each row a pairing of calls (CallPairing: by what they compute,
// so one computation under two kernel names is one row, and a call only one run made shifts nothing after it): each
// call's name and time on either side, and the second's time over the first's. The time is the headline the Timings
// pane shows: the warm median (TimingsModel::headline_of); with warm runs on both sides the ratio carries its spread
// (the lowest and highest ratio the warm runs allow).
class CompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kIndex, kNameA, kTimeA, kNameB, kTimeB, kRatio, kColumns };
  CompareModel(Session* a, Session* b, QObject* parent = nullptr);
  void set_devices(const QString& a, const QString& b);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  // the second device's time over the first's for row r (0 when the row has one side only)
  double ratio(int row) const;
  // the ratio's range over the warm runs: {min over the second's warm runs / max over the first's, max / min}; {0, 0}
  // unless both calls ran at least twice warm
  QPair<double, double> ratio_range(int row) const;
  // both runs made a call at this row (paired by what they compute, or by their kind and buffers)
  bool matched(int row) const;
  bool same_computation(int row) const;
  const CallPairing& pairing() const { return pairing_; }
  // the row of a call of the first run / of the second, or -1
  int row_of_a(int call) const { return pairing_.row_of_a(call); }
  int row_of_b(int call) const { return pairing_.row_of_b(call); }
  const Call* call_a(int row) const;
  const Call* call_b(int row) const;

 private:
  void rebuild();
  Session* a_;
  Session* b_;
  QString dev_a_, dev_b_;
  CallPairing pairing_;
};

// A line diff (longest common subsequence): for each line of `a` and of `b`, whether it is in both (in order)
struct LineDiff {
  QList<bool> a_kept, b_kept;
  int removed = 0, added = 0;
};
LineDiff diff_lines(const QStringList& a, const QStringList& b);

}  // namespace tsv
