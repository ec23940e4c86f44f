#pragma once
#include <QSet>
#include <QWidget>

#include "viewer/graph/graph_layout.h"
#include "viewer/model/selection_model.h"

class QButtonGroup;
class QGraphicsScene;
class QLabel;
class QSplitter;
class QStackedWidget;
class QTableView;
class QTimer;

namespace tsv {
class GraphView;
class StepperModel;

// The rewrite stepper: the selected context's rule matches as a list, and the graph around the current one.
// Before shows the graph the rule saw, the nodes it replaces outlined red; After shows the result, the new
// nodes outlined green. Left/Right step (Up/Down in the list), Home/End jump, Space toggles before/after.
// Graphs with more than kMaxNodes nodes show the part around the change.
class StepperPane : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxNodes = 200;
  explicit StepperPane(SelectionModel* selection, QWidget* parent = nullptr);

  StepperModel* model() const { return model_; }
  QTableView* list() const { return list_; }
  QGraphicsScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  int current_step() const { return step_; }
  bool showing_after() const { return after_; }
  // the line naming the current step's pass, rule and source location
  QString title() const;
  // what the canvas says about the current picture (exact replay, partial view, ...)
  QString note() const;
  // true while a layout for this pane is pending
  bool busy() const { return !waiting_.isEmpty(); }

  // moves to a step (clamped); a step in another pass selects that pass in the selection model
  void set_step(int step);
  void set_showing_after(bool after);

 signals:
  void step_changed(int step);
  void layout_done();

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  // what one layout request is for: the graph, its highlighted nodes and the note under the title
  struct Picture {
    GraphInput graph;
    QSet<int> marked;   // the rewrite's own nodes: a thick outline
    QSet<int> rebuilt;  // their users, rebuilt over new sources: a dashed outline
    QSet<int> focus;    // what the view zooms in on when the whole graph is too small to read
    bool after = true;  // marked nodes are new (green) or about to be replaced (red)
    QString note;
  };
  bool handle_key(int key);
  void on_selection(const Selection& s);
  void move_to(int step);
  void show_step();
  void show_notice(const QString& text);
  void request(const Picture& p);
  void draw(const GraphLayout& l);
  void place_view();
  Picture picture(int root, const QSet<int>& marked, const QSet<int>& rebuilt, const QSet<int>& focus) const;

  SelectionModel* selection_;
  StepperModel* model_;
  QTableView* list_;
  QLabel* title_;
  QLabel* note_;
  QLabel* notice_;
  QStackedWidget* stack_;
  QGraphicsScene* scene_;
  GraphView* view_;
  QButtonGroup* mode_;
  int step_ = -1;
  bool after_ = true;
  bool syncing_ = false;
  int last_pass_ = -1;
  QByteArray waiting_;
  Picture shown_, pending_;
  QString plain_title_;
  QSplitter* split_;
  bool split_sized_ = false;
  QRectF change_;          // the drawn change's bounds, in scene coordinates
  bool auto_view_ = true;  // the view is placed by the pane (not zoomed or panned by the user since)
};

}  // namespace tsv
