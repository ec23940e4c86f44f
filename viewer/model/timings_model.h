#pragma once
#include <QAbstractTableModel>

namespace tsv {
class Session;

// Per call: name, time, GFLOP/s (estimated ops / seconds), GB/s (estimated memory / seconds), and the spread of its
// timings when the kernel was run N >= 3 times (min, median, max of the N - 1 warm runs after the first). Qt::UserRole gives the raw number of a numeric column
// (Spread: (max - min) / median).
class TimingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kTime, kGflops, kGbs, kSpread, kColumns };
  struct Spread {
    int n = 0;  // timings (0: the call ran once)
    double min = 0, median = 0, max = 0;
  };
  explicit TimingsModel(Session* session, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  double seconds(int row) const;
  double gflops(int row) const;
  double gbs(int row) const;
  double max_seconds() const;
  Spread spread(int row) const;
  static QString spread_text(const Spread& s);  // "34.1 µs ±0.4% (5 runs)"

 private:
  Session* session_;
};

}  // namespace tsv
