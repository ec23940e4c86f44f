#pragma once
#include <QGraphicsView>

namespace tsv {

// A QGraphicsView for laid-out graphs: the wheel zooms around the cursor, dragging pans, fit() (or the F key,
// or a double-click on the background) shows all. Items carrying a node id in data(0) are nodes.
class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  void fit();
  void zoom(double factor);
  // the node id of the item at a viewport position (or of its parent item), INT_MIN if none
  int node_at(const QPoint& pos) const;

 signals:
  // a node was double-clicked
  void node_activated(int id);
  // the zoom changed (fit, the wheel, the keys, or setTransform through set_scale)
  void zoomed(double scale);

 public:
  void set_scale(double s);

 protected:
  void wheelEvent(QWheelEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
};

}  // namespace tsv
