#include "viewer/graph/graph_view.h"

#include <QGraphicsItem>
#include <QKeyEvent>
#include <QWheelEvent>
#include <climits>
#include <cmath>

namespace tsv {

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  setFocusPolicy(Qt::StrongFocus);
}

void GraphView::fit() {
  if (!scene() || scene()->items().isEmpty()) return;
  QRectF r = scene()->sceneRect();
  fitInView(r, Qt::KeepAspectRatio);
  // small graphs stay at a readable size instead of being blown up
  if (transform().m11() > 1.5) {
    setTransform(QTransform::fromScale(1.5, 1.5));
    centerOn(r.center());
  }
  emit zoomed(transform().m11());
}

void GraphView::zoom(double f) {
  double s = transform().m11() * f;
  if (s < 0.02 || s > 20) return;
  scale(f, f);
  emit zoomed(transform().m11());
}

void GraphView::set_scale(double s) {
  setTransform(QTransform::fromScale(s, s));
  emit zoomed(s);
}

int GraphView::node_at(const QPoint& pos) const {
  // the topmost node there (a label floating over the graph, which takes no clicks, is looked through)
  for (QGraphicsItem* top : items(pos)) {
    if (top->acceptedMouseButtons() == Qt::NoButton) continue;
    for (QGraphicsItem* it = top; it; it = it->parentItem())
      if (it->data(0).isValid()) return it->data(0).toInt();
    break;
  }
  return INT_MIN;
}

void GraphView::wheelEvent(QWheelEvent* e) {
  zoom(std::pow(1.0015, e->angleDelta().y()));
  e->accept();
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
  const int id = node_at(e->position().toPoint());
  if (id == INT_MIN) return fit();
  emit node_activated(id);
}

void GraphView::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_F && !(e->modifiers() & (Qt::ControlModifier | Qt::AltModifier))) return fit();
  if (e->key() == Qt::Key_Plus || e->key() == Qt::Key_Equal) return zoom(1.25);
  if (e->key() == Qt::Key_Minus) return zoom(0.8);
  QGraphicsView::keyPressEvent(e);
}

}  // namespace tsv
