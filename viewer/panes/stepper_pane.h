#pragma once
#include <QHash>
#include <QSet>
#include <QWidget>

#include "viewer/graph/graph_layout.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/stepper_model.h"

class QButtonGroup;
class QGraphicsLineItem;
class QGraphicsPathItem;
class QGraphicsPolygonItem;
class QGraphicsRectItem;
class QGraphicsScene;
class QGraphicsSimpleTextItem;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QToolButton;

namespace tsv {
class GraphView;
class RuleCountsModel;
class SourceDiff;

// The rewrite stepper: the selected context's rule matches as a list, and the graph around the current one.
// Before shows the graph the rule saw, the nodes it replaces outlined red; After shows the result, the new nodes
// outlined green; the users rebuilt over the change are outlined amber. Left/Right step (Up/Down in the list),
// Home/End jump, Space toggles before/after.
// The steps of a pass are laid out once, together (StepperModel::Window: the union of their graphs, a rebuilt node in
// the place of the node it stands for): stepping then only recolours, the nodes not in the step's graphs hidden and
// those the step takes away (After) or brings (Before) faded, and the view keeps its zoom. Steps whose graphs hold more
// than kMaxUnion nodes together are laid out one by one, those over kMaxNodes cut to the part around the change.
// Under the graph: the rule's own source lines (its row of its rule table, the trace's "rules") and the matched UOp
// before and after as text, side by side with the differing lines marked. Beside the steps: every rule's hits in the
// run and in the context; clicking one shows only its steps.
class StepperPane : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxNodes = 200;
  static constexpr int kMaxUnion = 1500;
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
  // the notice shown instead of a graph (no step; a pass over the linearized program), empty while a graph is shown
  QString notice() const;
  // true while a layout for this pane is pending
  bool busy() const { return !waiting_.isEmpty(); }

  // the rule's source box (its line numbers, then the text) and the line it highlights (without its number)
  QPlainTextEdit* rule_source() const { return rule_text_; }
  QString rule_source_line() const { return rule_line_; }
  QLabel* rule_where() const { return rule_where_; }
  SourceDiff* uop_diff() const { return diff_; }
  QTabWidget* details() const { return details_; }
  QSplitter* graph_and_details() const { return outer_; }
  // the per-rule hit counts (sorted through a proxy: rules()->model())
  RuleCountsModel* rule_counts() const { return rule_counts_; }
  QTableView* rules() const { return rules_view_; }
  QTabWidget* sides() const { return side_; }

  // layouts this pane asked for (a union layout is one request for all the steps of its window)
  int layout_requests() const { return layout_requests_; }
  // the window the canvas shows laid out together, or one with pass -1 when it shows one step's own layout
  const StepperModel::Window& drawn_window() const { return drawn_; }
  // the most nodes laid out together (kMaxUnion; 0: every step on its own, as a measure of what the union saves)
  void set_union_limit(int places);

  // moves to a step (clamped); a step in another pass selects that pass in the selection model
  void set_step(int step);
  void set_showing_after(bool after);
  // shows only the steps of one rule (RuleCountsModel::key(); "" shows all) and moves to its first step here, or
  // selects the first context where it fired
  void filter_rule(const QString& key);
  QString rule_filter() const { return rule_filter_; }

 signals:
  void step_changed(int step);
  void layout_done();

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  // the constructor's parts
  QWidget* build_step_lists();
  void build_canvas();
  void build_details();
  QHBoxLayout* build_controls();
  void connect_signals();
  // a step of a pass over the linearized program: a LINEAR rewritten into another
  bool linear_step(const Match& m) const;
  void restore_heights();
  // what one layout request is for: the graph, its highlighted nodes and the note under the title
  struct Picture {
    GraphInput graph;
    QSet<int> marked;   // the rewrite's own nodes: a thick outline
    QSet<int> rebuilt;  // their users, rebuilt over new sources: a dashed outline
    QSet<int> focus;    // what the view zooms in on when the whole graph is too small to read
    bool after = true;  // marked nodes are new (green) or about to be replaced (red)
    int rewritten = -1;  // the matched node (Before) or its replacement (After)
    QString note;
  };
  // a place of a union layout on the canvas
  struct PlaceItem {
    QGraphicsRectItem* box = nullptr;
    QGraphicsSimpleTextItem* text = nullptr;
    QGraphicsLineItem* strike = nullptr;
    QString label;
  };
  struct EdgeItem {
    int from, to;  // places
    QGraphicsPathItem* path = nullptr;
    QGraphicsPolygonItem* arrow = nullptr;
  };
  bool handle_key(int key);
  void on_selection(const Selection& s);
  void move_to(int step);
  void show_step();
  void show_rule();
  void show_rule_line();
  void show_notice(const QString& text);
  void request(const Picture& p);
  void request_union(const StepperModel::Window& w);
  void draw(const GraphLayout& l);
  void draw_union(const GraphLayout& l);
  void recolour();
  void place_view();
  void keep_change_in_view();
  Picture picture(int root, const QSet<int>& marked, const QSet<int>& rebuilt, const QSet<int>& focus) const;
  int filtered_step(int from, int direction) const;  // the next step the filter shows, from `from` on (-1: none)
  void update_filter_bar();

  SelectionModel* selection_;
  StepperModel* model_;
  QSortFilterProxyModel* steps_;  // the list's rows: the model's, or one rule's
  QTableView* list_;
  RuleCountsModel* rule_counts_;
  QSortFilterProxyModel* rules_sorted_;
  QTableView* rules_view_;
  QTabWidget* side_;
  QWidget* filter_bar_;
  QLabel* filter_label_;
  QLabel* title_;
  QLabel* note_;
  QLabel* notice_;
  QStackedWidget* stack_;
  QGraphicsScene* scene_;
  GraphView* view_ = nullptr;  // set before any event filter needs it (the list's is installed first)
  QButtonGroup* mode_;
  QTabWidget* details_;
  QLabel* rule_where_;
  QPlainTextEdit* rule_text_ = nullptr;
  QString rule_line_;
  int rule_at_ = 0;  // the rule's line in the box
  SourceDiff* diff_;
  int step_ = -1;
  bool after_ = true;
  bool syncing_ = false;
  int last_pass_ = -1;
  QByteArray waiting_;
  Picture shown_, pending_;
  QString plain_title_, base_note_;
  QSplitter* split_;
  QSplitter* outer_;
  QList<int> sizes_off_linear_;  // the graph's and the details' heights before a linear pass's step took them (none: not on one)
  bool split_sized_ = false;
  QRectF change_;          // the drawn change's bounds, in scene coordinates
  QRectF focus_;           // the rewritten node's box: what the view shows when the change is too spread to read
  bool auto_view_ = true;  // the view is placed by the pane (not zoomed or panned by the user since)
  int union_limit_ = kMaxUnion;
  int layout_requests_ = 0;
  QString rule_filter_;
  // the union layout: the one asked for (pass -1: none) and the one drawn, with its items
  StepperModel::Window pending_window_, drawn_;
  QHash<int, PlaceItem> place_items_;
  QList<EdgeItem> edge_items_;
};

}  // namespace tsv
