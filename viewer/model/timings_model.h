#pragma once
#include <QAbstractTableModel>

namespace tsv {
class Session;

// Per call: name, time (its first run: the time DEBUG=2 prints), GFLOP/s and GB/s of that first run (estimated ops
// or memory / seconds), and the spread of its timings when the kernel was run N >= 3 times (min, median, max of the
// N - 1 warm runs after the first). Qt::UserRole gives the raw number of a numeric column (Spread: (max - min) /
// median); Qt::ToolTipRole says what each number measured (describe()).
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
  // the spread of one call's timings: of the warm runs after the first (n = 0 with fewer than 3 timings)
  static Spread spread_of(QList<double> times);
  static QString spread_text(const Spread& s);  // "33.9–34.2 µs, median 34.1 (4 warm runs)"
  // what each number of the row measured: the first run, the warm runs, and whether the repeats ran on restored inputs
  QString describe(int row) const;
  // the call's repeats ran on a copy of its inputs restored before each one (it writes memory it reads)
  bool restored(int row) const;

 private:
  Session* session_;
};

}  // namespace tsv
