#include "viewer/graph/graph_view.h"

#include <QWheelEvent>
#include <cmath>

namespace tsv {

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
}

void GraphView::fit() {
  if (!scene() || scene()->items().isEmpty()) return;
  QRectF r = scene()->itemsBoundingRect().adjusted(-10, -10, 10, 10);
  fitInView(r, Qt::KeepAspectRatio);
  // small graphs stay at a readable size instead of being blown up
  if (transform().m11() > 1.5) {
    setTransform(QTransform::fromScale(1.5, 1.5));
    centerOn(r.center());
  }
}

void GraphView::zoom(double f) {
  double s = transform().m11() * f;
  if (s < 0.02 || s > 20) return;
  scale(f, f);
}

void GraphView::wheelEvent(QWheelEvent* e) {
  zoom(std::pow(1.0015, e->angleDelta().y()));
  e->accept();
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (!itemAt(e->pos())) return fit();
  QGraphicsView::mouseDoubleClickEvent(e);
}

}  // namespace tsv
