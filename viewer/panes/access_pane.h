#pragma once
// The Access pane: what the selected kernel reads and writes (viewer/model/access_model.h), without running it. A
// slider per loop of its optimized AST (its axis type and size); each buffer drawn as a grid, the elements the point
// reads in blue and writes in red, with every value of its UPCAST and UNROLL loops at once (the lanes one thread
// computes), and in a lighter blue what the whole reduce reads for the output written; Play walks the innermost loop.
#include <QList>
#include <QWidget>

#include "viewer/model/access_model.h"
#include "viewer/model/selection_model.h"

class QLabel;
class QSlider;
class QTimer;
class QToolButton;
class QVBoxLayout;

namespace tsv {

class AccessPane : public QWidget {
  Q_OBJECT
 public:
  AccessPane(SelectionModel* selection, QWidget* parent = nullptr);
  const AccessModel& model() const { return model_; }
  // the point shown (a value per range of model().ranges())
  const QList<qint64>& point() const { return point_; }
  void set_point(const QList<qint64>& p);
  void step();  // the innermost loop one on (carrying into the outer ones)
  QString title() const;

 protected:
  void paintEvent(QPaintEvent* e) override;

 private:
  void on_selection(const Selection& s);
  void rebuild_sliders();
  SelectionModel* selection_;
  AccessModel model_;
  QList<qint64> point_;
  QLabel* title_;
  QWidget* sliders_;
  QVBoxLayout* slider_lay_;
  QList<QSlider*> slider_list_;
  QToolButton* play_;
  QTimer* timer_;
  int canvas_top_ = 0;  // where the grids start (below the sliders)
};

}  // namespace tsv
