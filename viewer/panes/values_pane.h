#pragma once
#include <QAbstractTableModel>
#include <QImage>
#include <QWidget>

#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"

class QComboBox;
class QCheckBox;
class QLabel;
class QTableView;

namespace tsv {
class ValuesModel;

// The buffer viewer: the values the script read back (tolist, numpy, item, print) and, when the run kept them
// (`--snapshots`), every call's output buffer right after it ran, one at a time: shape and strides,
// min/max/mean over the finite values, NaN and inf counts, a table of the values (the last axis across) and, for
// a value with two or more axes, a heat map of its first 2-D slice. With a second device's run it shows the element-
// wise difference (first device minus second) instead, on demand. Selecting a call picks its output buffer, or
// without snapshots the first value the script read after it.
class ValuesPane : public QWidget {
  Q_OBJECT
 public:
  ValuesPane(SelectionModel* selection, QWidget* parent = nullptr);
  // the second device's run (its outputs in the same order), or nullptr
  void set_compare(Session* other, const QString& device);
  int entries() const;
  int current() const;
  void show_entry(int i);
  void set_difference(bool on);
  QString summary() const;
  const QImage& heat_map() const { return heat_; }
  ValuesModel* values_model() const { return model_; }

 private:
  void reload();
  void refresh();
  // entry i of this pane's run, or the matching one of `s` (the other run) for this run's entry `like`
  const Output* entry(const Session& s, int i, const Output* like = nullptr) const;
  QList<Output> shaped_;  // the run's snapshots, each with the shape of the tensor it holds
  SelectionModel* selection_;
  Session* other_ = nullptr;
  QString other_device_;
  QComboBox* entries_;
  QCheckBox* difference_;
  QLabel* info_;
  QLabel* heat_label_;
  QTableView* table_;
  ValuesModel* model_;
  QImage heat_;
};

// one value as a table: the last axis across, every other axis down (the row header names the leading indices)
class ValuesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  // `values` with `shape` (only the stored values are shown)
  void set(const QList<qint64>& shape, const QVector<double>& values, bool integers);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  double value(int row, int column) const;

 private:
  QList<qint64> shape_;
  QVector<double> values_;
  bool integers_ = false;
  qint64 columns_ = 1;
};

// a heat map of a rows x columns block of values (row-major): blue (low) through white to red (high); NaN magenta
QImage heat_map_image(const QVector<double>& values, qint64 rows, qint64 columns);
// the heat map's colour of one value where the finite values run from lo to hi
QColor heat_map_color(double v, double lo, double hi);

}  // namespace tsv
