#pragma once
// The Access pane: what the selected kernel reads and writes (viewer/model/access_model.h), without running it. A
// slider per loop of its optimized AST (its axis type and size) but the lanes; each buffer drawn as a grid, the
// elements the point reads in blue and writes in red, with every value of its UPCAST and UNROLL loops at once (the
// lanes one thread computes, named on one line), and in a lighter blue what the whole reduce reads for the output
// written; a read whose gate is off at the point (padding) hatched at the element its index would have named, and
// counted under its buffer. Play walks the innermost loop that is not a lane. What the point's whole thread (CPU: its
// THREAD range's value) or work-group (GPU: its GLOBAL ranges' values) writes is outlined. A buffer whose tensor's
// shape the trace tells is laid out in it (a matrix rows down, its last axis across; more axes: a slice of the last
// two per index of the others, side by side), else row by row at a width that fits; where the run recorded its values
// (--snapshots), each cell's base is the Values pane's heat map of them, faint, the reduce dotted over it.
#include <QColor>
#include <QList>
#include <QVector>
#include <QWidget>

#include "viewer/model/access_model.h"
#include "viewer/model/selection_model.h"

class QLabel;
class QSlider;
class QTimer;
class QToolButton;
class QCheckBox;
class QGridLayout;
class QHBoxLayout;
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
  // the run's name before the kernel's in the title (a side of a comparison: "NOOPT=1"); "" for none
  void set_label(const QString& label);
  // an output element framed in black (the one both sides of a comparison show); slot -1: none
  void set_focus(int slot, qint64 element);
  // the element of the written buffer the point stores (its lanes at their sliders' values): {slot, element}, or
  // {-1, -1} where it stores none
  QPair<int, qint64> written() const;
  // how a buffer of the kernel is drawn: the shape of the tensor it holds (its axes of 1 left out; empty where the
  // trace tells none, or it has fewer than two axes longer than 1), its last two axes' sizes (a 2-D slice's rows and
  // columns; 0, 0: row by row at the width that fits) and the slices (the other axes' product: side by side), and its
  // values where the run recorded them (the call's own snapshot for what it writes, else the last snapshot of the
  // buffer before the call), their finite range the heat map's ends
  struct Grid {
    int slot = -1;
    qint64 size = 0;
    QList<qint64> shape;
    qint64 rows = 0, cols = 0, slices = 1;
    QVector<double> values;  // the first stored elements (none: no snapshot)
    double lo = 0, hi = 0;
    QString values_from;  // "after this call", "after call 3 (copy ...)"
  };
  const QList<Grid>& grids() const { return grids_; }
  const Grid* grid(int slot) const;
  // a cell's colour under the read and write marks: the faint heat map colour of its value, or the plain cell's
  QColor base_color(int slot, qint64 element) const;
  static QColor faint(const QColor& c);  // a heat map colour at the strength the cells use
  // a widget at the end of the title's row
  void add_to_header(QWidget* w);
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

 signals:
  void loaded();         // another kernel (or none) in the pane
  void point_changed();  // the point moved (a slider, Play, set_point)

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 private:
  void on_selection(const Selection& s);
  void rebuild_sliders();
  void place_sliders();  // the sliders in as many columns as the width takes
  void set_title(const QString& text);
  void build_grids(int call);  // grids_ for the loaded kernel, its buffers as `call` (-1: none) passed them
  bool is_lane(int d) const;
  SelectionModel* selection_;
  AccessModel model_;
  QList<Grid> grids_;
  QList<qint64> point_;
  QLabel* title_;
  QWidget* sliders_;
  QGridLayout* slider_lay_;
  QList<QSlider*> slider_list_;
  QList<QLabel*> value_list_;  // each slider's "r0 reduce 3/64" (per range: null for a lane, which has no slider)
  QLabel* lanes_label_ = nullptr;  // the lanes named
  QList<QWidget*> slider_rows_;
  int slider_cols_ = 0;
  int slider_row_w_ = 200;  // a slider row's least width (its name, the slider, its value)
  bool side_sliders_ = false;  // the sliders a column on the left, the grids beside them (a short, wide pane)
  QVBoxLayout* body_;
  QList<qint64> reduce_key_;                  // the point whose reduce footprint is cached
  QHash<int, QSet<qint64>> reduce_cache_;
  QList<qint64> group_key_;                   // the thread's or work-group's range values whose writes are cached
  QHash<int, QSet<qint64>> group_cache_;
  void export_dialog(int loop);  // asks for a folder, then export_frames
  QToolButton* play_;
  QToolButton* export_;
  QHBoxLayout* header_;
  QString label_, kernel_title_;
  int focus_slot_ = -1;
  qint64 focus_element_ = -1;
  QTimer* timer_;
};

// The Access pane of a run and, while the Compare dock holds a second run (a What-if step, Compare with), the one of
// the paired kernel there beside it: each side its own loops and sliders, the second side kept at the first point of
// its nest that stores the output element the first side's point stores (both framed), so the two nests' ways to one
// element show together (NOOPT beside the default opts, say).
class AccessPanes : public QWidget {
  Q_OBJECT
 public:
  AccessPanes(SelectionModel* selection, QWidget* parent = nullptr);
  AccessPane* first() const { return first_; }
  AccessPane* second() const { return second_; }  // null until a comparison
  // the second run (its selection follows the first's through the pairing; null: none) and the two runs' names
  void set_compare(SelectionModel* other, const QString& label_a, const QString& label_b);
  bool side_by_side() const;

 private:
  void sync();  // the second side to the first's output element
  // the second side's written buffer and, per element of it, the first point that stores it (built once per kernel:
  // a walk of the whole nest)
  int writers_slot_ = -2;
  QHash<qint64, QList<qint64>> writers_;
  AccessPane* first_;
  AccessPane* second_ = nullptr;
  SelectionModel* other_ = nullptr;
  QCheckBox* beside_;
};

}  // namespace tsv
