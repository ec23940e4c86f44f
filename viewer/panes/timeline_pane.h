#pragma once
#include <QWidget>

#include "viewer/model/selection_model.h"
#include "viewer/model/timeline_model.h"

class QLabel;

namespace tsv {
class TimelineCanvas;

// The run on a time axis (TimelineModel): the host's schedule, codegen and compile lanes, a lane per device with its
// calls (a graph call as one span holding its kernels), the script's lines as marks, and per device the bytes its calls'
// buffers held, each buffer a band and the peak named. The wheel zooms about the pointer, a drag pans, a double-click
// shows the whole run; hovering shows a span's figures, a click selects its call (or context) everywhere, and the call
// selected elsewhere is outlined here (and brought into view).
class TimelinePane : public QWidget {
  Q_OBJECT
 public:
  TimelinePane(SelectionModel* selection, QWidget* parent = nullptr);
  // the colour a span of this kind is drawn in (Help > Legend shows them)
  static QColor kind_color(TimelineSpan::Kind k);
  const TimelineModel& model() const { return model_; }
  TimelineCanvas* canvas() const { return canvas_; }
  QString status_text() const;
  // milliseconds the last rebuild of the model took, with its paint when the pane was shown (TINYSCOPE_PERF prints it,
  // and the next paint's time)
  double last_build_ms() const { return build_ms_; }

 private:
  void rebuild();
  SelectionModel* selection_;
  TimelineModel model_;
  TimelineCanvas* canvas_;
  QLabel* status_;
  double build_ms_ = 0;
};

// The painted lanes (TimelinePane's), with the hooks its test uses.
class TimelineCanvas : public QWidget {
  Q_OBJECT
 public:
  TimelineCanvas(const TimelineModel* model, SelectionModel* selection, QWidget* parent = nullptr);
  void reset_view();  // the whole run
  void set_range(double begin, double end);
  double range_begin() const { return v0_; }
  double range_end() const { return v1_; }
  // the middle of a span as drawn now (a point outside the canvas when it is out of view)
  QPoint point_of_span(int span) const;
  // the span, or memory band, under a point, and what hovering there shows ("" for nothing)
  int span_at(const QPoint& p) const;
  QString tooltip_at(const QPoint& p) const;
  // the span outlined as the selection (-1: none)
  int highlighted_span() const { return highlight_; }
  void follow_selection();
  double last_paint_ms() const { return paint_ms_; }
  void report_next_paint() { report_paint_ = true; }  // its time on stderr (TINYSCOPE_PERF)
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;
  bool event(QEvent*) override;

 private:
  struct Row {
    int top = 0, height = 0;
    int lane = -1;    // a lane of the model
    int memory = -1;  // or a memory series
  };
  QList<Row> rows() const;
  int row_at(int y) const;
  double x_to_t(double x) const;
  double t_to_x(double t) const;
  void paint_axis(class QPainter& p, int width) const;
  void paint_lane(QPainter& p, const Row& r, int width) const;
  void paint_memory(QPainter& p, const Row& r, int width) const;
  void paint_flows(QPainter& p, int width) const;
  QString span_text(int span) const;
  QString memory_text(const Row& r, const QPoint& p) const;
  void click(const QPoint& p);
  const TimelineModel* model_;
  SelectionModel* selection_;
  double v0_ = 0, v1_ = 1;  // the visible seconds
  int highlight_ = -1;
  QPoint press_;
  double press_v0_ = 0;
  bool dragging_ = false;
  double paint_ms_ = 0;
  bool report_paint_ = false;
};

}  // namespace tsv
