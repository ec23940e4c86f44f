#pragma once
#include <QGraphicsView>

namespace tsv {

// An overview of another view's scene: the whole graph scaled to fit, the main view's visible area drawn as
// a rectangle; a click or drag centres the main view there.
class Minimap : public QGraphicsView {
  Q_OBJECT
 public:
  explicit Minimap(QGraphicsView* main, QWidget* parent = nullptr);
  // refits the overview to the scene (after a new layout) and redraws the rectangle
  void refit();
  // the main view's visible area in scene coordinates
  QRectF visible_area() const;
  // shown only while enabled and the main view does not show the whole scene
  void set_enabled(bool on);

 protected:
  void drawForeground(QPainter* p, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

 private:
  void move_to(const QPoint& pos);
  void update_visibility();
  QGraphicsView* main_;
  bool enabled_ = false;
};

}  // namespace tsv
