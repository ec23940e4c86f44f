#pragma once
#include <QAbstractTableModel>
#include <QList>
#include <QString>

namespace tsv {
class Session;
struct Output;

// What one read-back value holds: the buffer viewer's summary line.
struct OutputStats {
  qint64 values = 0;  // stored values summarised (the trace may keep fewer than the value has)
  qint64 nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0;  // over the finite values (0 when there are none)
};
OutputStats output_stats(const Output& o);

// The distance between two floats in units in the last place of a `bits`-wide float (32: float32, 64: float64): how
// many representable values lie between them. 0 for equal values (+0 and -0 too) and for two NaNs; infinite when
// exactly one is NaN.
double ulp_distance(double a, double b, int bits);
// a shape as python prints a tuple: "(2, 3)", "(4,)", "()"
QString shape_text(const QList<qint64>& shape);
// a flat index as the index of each axis, "[1, 2]"
QString index_text(qint64 flat, const QList<qint64>& shape);

// Two devices' reads of one value, element by element.
struct OutputDiff {
  enum class Verdict { Equal, Differ, Mismatch, Missing };
  Verdict verdict = Verdict::Missing;
  QString problem;          // Mismatch / Missing: what differs (the shapes, the dtypes) or which run lacks it
  qint64 compared = 0;      // elements compared (both stored)
  qint64 differing = 0;     // of them, how many differ (two NaNs are equal)
  double max_abs = 0;       // the largest |a - b| (infinite when one side is NaN or they are different infinities)
  double max_ulp = -1;      // the largest ulp_distance, for float dtypes (-1 for int and bool)
  qint64 first = -1;        // the first differing element's flat index
  double first_a = 0, first_b = 0;
};
OutputDiff compare_outputs(const Output& a, const Output& b);

// Every value the script read back on one device beside the same read on the other (the n-th beside the n-th):
// where the script read it, its shape, and the element-wise difference.
class OutputCompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kIndex, kWhere, kShape, kVerdict, kMaxAbs, kMaxUlp, kFirst, kColumns };
  OutputCompareModel(Session* a, Session* b, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  const OutputDiff& diff(int row) const { return diffs_[row]; }
  // rows whose values differ, or cannot be compared
  int differing_rows() const;

 private:
  void rebuild();
  Session* a_;
  Session* b_;
  QList<OutputDiff> diffs_;
};

}  // namespace tsv
