#pragma once
#include <QAbstractTableModel>
#include <QStringList>

namespace tsv {
class Session;
struct Call;

// Two runs of one script side by side, call by call (the n-th call of one beside the n-th of the other): each call's
// name and time on either device, and the second's time over the first's. The time is the headline the Timings pane
// shows: the warm median (TimingsModel::headline_of). Kernels that differ in name at the same position are not
// compared (the row says so); two copies at one position are (their names differ by the device).
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
  // the second device's time over the first's for row r (0 when the calls differ or one is missing)
  double ratio(int row) const;
  bool matched(int row) const;

 private:
  Session* a_;
  Session* b_;
  QString dev_a_, dev_b_;
};

// A line diff (longest common subsequence): for each line of `a` and of `b`, whether it is in both (in order)
struct LineDiff {
  QList<bool> a_kept, b_kept;
  int removed = 0, added = 0;
};
LineDiff diff_lines(const QStringList& a, const QStringList& b);

}  // namespace tsv
