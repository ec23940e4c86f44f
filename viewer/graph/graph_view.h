#pragma once
#include <QGraphicsView>

namespace tsv {

// A QGraphicsView for laid-out graphs: the wheel zooms around the cursor, dragging pans, fit() shows all.
class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  void fit();
  void zoom(double factor);

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
};

}  // namespace tsv
