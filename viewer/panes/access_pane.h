#pragma once
// The Access pane: what the selected kernel reads and writes (viewer/model/access_model.h), without running it. A
// slider per loop of its optimized AST (its axis type and size); each buffer drawn as a grid, the elements the point
// reads in blue and writes in red, with every value of its UPCAST and UNROLL loops at once (the lanes one thread
// computes), and in a lighter blue what the whole reduce reads for the output written; a read whose gate is off at the
// point (padding) hatched at the element its index would have named, and counted under its buffer. Play walks the
// innermost loop that is not a lane (the lanes are drawn at once). What the point's whole thread (CPU: its THREAD
// range's value) or work-group (GPU: its GLOBAL ranges' values) writes is outlined.
#include <QList>
#include <QWidget>

#include "viewer/model/access_model.h"
#include "viewer/model/selection_model.h"

class QLabel;
class QSlider;
class QTimer;
class QToolButton;
class QGridLayout;
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
  void step();  // the innermost loop that is not a lane one on (carrying into the outer ones)
  QString title() const;
  // what the point's lanes do, per buffer slot (what the grids draw)
  struct Lanes {
    QHash<int, QSet<qint64>> reads, writes;
    QHash<int, QSet<qint64>> padded;  // the elements gated-off reads would have named (inside the buffer)
    QHash<int, int> gated;            // the gated-off reads (lanes that read nothing)
  };
  Lanes lanes() const;
  // the loop Play walks: the innermost that is not a lane and has more than one value (-1: none)
  int play_loop() const;
  // slides: the pane as Play steps it, one PNG per value of loop `loop` (-1: play_loop()) from 0, the other loops at
  // the point shown, into dir/access_000.png, ...; at most `limit` frames, each `size` (drawn by a copy of the pane
  // off screen: the docked one may be small). The point shown stays. False with *message the reason when nothing was
  // written, else *message says how many (and that the cap cut them).
  bool export_frames(const QString& dir, int loop, QString* message, int limit = 200, QSize size = QSize(1280, 720));

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  void on_selection(const Selection& s);
  void rebuild_sliders();
  void place_sliders();  // the sliders in as many columns as the width takes
  bool is_lane(int d) const;
  SelectionModel* selection_;
  AccessModel model_;
  QList<qint64> point_;
  QLabel* title_;
  QWidget* sliders_;
  QGridLayout* slider_lay_;
  QList<QSlider*> slider_list_;
  QList<QLabel*> value_list_;  // each slider's "value / size"
  QList<QWidget*> slider_rows_;
  int slider_cols_ = 0;
  QList<qint64> reduce_key_;                  // the point whose reduce footprint is cached
  QHash<int, QSet<qint64>> reduce_cache_;
  QList<qint64> group_key_;                   // the thread's or work-group's range values whose writes are cached
  QHash<int, QSet<qint64>> group_cache_;
  void export_dialog(int loop);  // asks for a folder, then export_frames
  QToolButton* play_;
  QToolButton* export_;
  QTimer* timer_;
};

}  // namespace tsv
