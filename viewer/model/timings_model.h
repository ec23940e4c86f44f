#pragma once
#include <QAbstractTableModel>

namespace tsv {
class Session;

// Per call: name, time, GFLOP/s (estimated ops / seconds), GB/s (estimated memory / seconds).
// Qt::UserRole gives the raw number of a numeric column.
class TimingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kTime, kGflops, kGbs, kColumns };
  explicit TimingsModel(Session* session, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  double seconds(int row) const;
  double gflops(int row) const;
  double gbs(int row) const;
  double max_seconds() const;

 private:
  Session* session_;
};

}  // namespace tsv
