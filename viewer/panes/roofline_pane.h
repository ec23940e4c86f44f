#pragma once
#include <QPointF>
#include <QScrollArea>
#include <QString>

#include "viewer/model/roofline_model.h"
#include "viewer/model/selection_model.h"

class QBoxLayout;
class QLabel;
class QPushButton;

namespace tsv {
class RooflinePlot;

// The roofline of the run's device: each kernel call a dot placed by its arithmetic intensity (x, FLOP/byte: estimated
// ops over bytes of memory) and the GFLOP/s it achieved in its warm median time (y), on log-log axes, coloured as the
// schedule colours its name, under the roof min(peak, bandwidth x intensity) of the limits the trace carries (measured
// by `tinyscope bench`, labelled with what they measured and when). Calls that cannot be placed (copies: no ops) are
// listed under the plot. Clicking a dot selects its call everywhere; the selected call's dot is ringed. Without limits
// in the trace the dots are still placed and the pane says how to measure them.
class RooflinePane : public QScrollArea {
  Q_OBJECT
 public:
  explicit RooflinePane(SelectionModel* selection, QWidget* parent = nullptr);

  const Roofline& roofline() const { return roofline_; }
  // the painted plot (mouse events at dot_position() go to it)
  QWidget* plot() const;
  // where a point of the plot is drawn, in the plot widget's coordinates
  QPointF position(double intensity, double gflops) const;
  // where `call`'s dot is drawn, or (-1, -1) when it is not placed
  QPointF dot_position(int call) const;
  // the call whose dot is nearest `pos` within a few pixels, or -1
  int call_at(const QPointF& pos) const;
  // the selected call when its dot is placed (ringed), else -1
  int highlighted_call() const;
  // the roof in GFLOP/s at `intensity`: min(peak, bandwidth x intensity) (0 without limits)
  double roof_at(double intensity) const { return roofline_.roof(intensity); }
  // the text beside the plot (as plain text): the roof's figures and their source, or why there is no roof
  QString notice() const;
  // the text under that: what the dots are and the calls not placed
  QString footer() const;
  // limits measured after this trace was written (Run > Measure limits): shown as from the cache, not the trace,
  // with Run again, until the next trace is loaded
  void set_measured(const QString& device, const QString& summary);
  QString measured_note() const;
  // the roof's colour (the tests find its line by it)
  static QColor roof_color();

 signals:
  // Run again, offered after limits were measured
  void run_again();

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void reload();
  SelectionModel* selection_;
  Roofline roofline_;
  RooflinePlot* plot_;
  QBoxLayout* lay_;
  QScrollArea* side_;
  QLabel* notice_;
  QLabel* footer_;
  QLabel* measured_;
  QPushButton* rerun_;
};

}  // namespace tsv
