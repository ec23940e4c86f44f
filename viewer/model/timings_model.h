#pragma once
#include <QAbstractTableModel>

namespace tsv {
class Session;

// Per call: name; time, the headline: the median of the warm runs after the first when the call was timed more than
// once (Timing N×), else its one run; the first run beside it (the time DEBUG=2 prints, which pays one-off costs:
// cold caches, waking threads); GFLOP/s and GB/s of the headline time (estimated ops or memory / seconds); and the
// spread of the warm runs when there are two or more (min, median, max). Qt::UserRole gives the raw number of a
// numeric column (Spread: (max - min) / median); Qt::ToolTipRole says what each number measured (describe()).
class TimingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kTime, kFirst, kGflops, kGbs, kSpread, kColumns };
  struct Spread {
    int n = 0;  // timings (0: the call ran once)
    double min = 0, median = 0, max = 0;
  };
  explicit TimingsModel(Session* session, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // the headline time: the warm median (headline_is_warm), else the call's one run
  double headline(int row) const;
  static double headline_of(const struct Call& c);
  bool headline_is_warm(int row) const;
  int warm_runs(int row) const;  // timings after the first
  double seconds(int row) const;  // the first run
  double gflops(int row) const;   // of the headline time
  double gbs(int row) const;
  double max_seconds() const;  // the longest headline or warm run
  // the bars' scale: the longest headline, unless a few calls dwarf the rest (beyond a far-out fence over the calls'
  // headlines: the third quartile plus three times the interquartile range, and over four times the longest within
  // it); then the longest within the fence, and those bars are clipped and marked. A slow warm run never sets it (its
  // whisker is clipped and marked instead).
  double scale_seconds() const;
  static double robust_scale(QList<double> headlines);
  // a call whose warm runs spread widely: the fastest to the slowest over half the median (±25%), with 2 or more
  static constexpr double kNoisySpread = 0.5;
  bool noisy(int row) const;
  static bool noisy_spread(const Spread& s) { return s.n >= 2 && s.median > 0 && (s.max - s.min) / s.median > kNoisySpread; }
  Spread spread(int row) const;
  // the spread of one call's timings: of the warm runs after the first (n = 0 with fewer than 3 timings)
  static Spread spread_of(QList<double> times);
  // min, median, max of the timings after the first (n = 0 with fewer than 2 timings)
  static Spread warm_runs_of(QList<double> times);
  static QString spread_text(const Spread& s);  // "33.9–34.2 µs, median 34.1 (4 warm runs)"
  // what each number of the row measured: the first run, the warm runs, and whether the repeats ran on restored inputs
  QString describe(int row) const;
  // the call's repeats ran on a copy of its inputs restored before each one (it writes memory it reads)
  bool restored(int row) const;

 private:
  Session* session_;
};

}  // namespace tsv
