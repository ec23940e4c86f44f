#include "viewer/graph/minimap.h"

#include <QMouseEvent>
#include <QScrollBar>

namespace tsv {

Minimap::Minimap(QGraphicsView* main, QWidget* parent) : QGraphicsView(main->scene(), parent), main_(main) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setInteractive(false);
  setFrameShape(QFrame::Box);
  setRenderHints({});  // an overview: no antialiasing, cheap to repaint
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  auto redraw = [this] { viewport()->update(); };
  connect(main_->horizontalScrollBar(), &QScrollBar::valueChanged, this, redraw);
  connect(main_->verticalScrollBar(), &QScrollBar::valueChanged, this, redraw);
  connect(main_->horizontalScrollBar(), &QScrollBar::rangeChanged, this, &Minimap::update_visibility);
  connect(main_->verticalScrollBar(), &QScrollBar::rangeChanged, this, &Minimap::update_visibility);
}

void Minimap::set_enabled(bool on) {
  enabled_ = on;
  update_visibility();
}

void Minimap::update_visibility() {
  auto scrolls = [](QScrollBar* b) { return b->maximum() - b->minimum() > 4; };  // not a rounding pixel or two
  setVisible(enabled_ && (scrolls(main_->horizontalScrollBar()) || scrolls(main_->verticalScrollBar())));
  viewport()->update();
}

void Minimap::refit() {
  if (scene() != main_->scene()) setScene(main_->scene());
  if (scene()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  viewport()->update();
}

QRectF Minimap::visible_area() const { return main_->mapToScene(main_->viewport()->rect()).boundingRect(); }

void Minimap::drawForeground(QPainter* p, const QRectF&) {
  QRectF r = visible_area().intersected(sceneRect());
  if (r.isEmpty()) return;
  QPen pen(QColor(0xe0, 0x30, 0x30), 0);  // cosmetic: one pixel at any scale
  pen.setWidth(2);
  p->setPen(pen);
  p->setBrush(QColor(0xe0, 0x30, 0x30, 30));
  p->drawRect(r);
}

void Minimap::move_to(const QPoint& pos) {
  main_->centerOn(mapToScene(pos));
  viewport()->update();
}

void Minimap::mousePressEvent(QMouseEvent* e) { move_to(e->position().toPoint()); }
void Minimap::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) move_to(e->position().toPoint());
}
void Minimap::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  refit();
}
void Minimap::wheelEvent(QWheelEvent* e) { e->ignore(); }

}  // namespace tsv
