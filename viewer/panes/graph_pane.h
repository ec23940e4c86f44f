#pragma once
#include <QSet>
#include <QWidget>

#include "viewer/graph/graph_layout.h"
#include "viewer/model/selection_model.h"

class QGraphicsScene;
class QLabel;
class QStackedWidget;

namespace tsv {
class GraphView;

// A pane drawing a uop graph (the tensor graph of a schedule, or a kernel's AST) laid out by Graphviz.
// Graphs with more than kMaxNodes nodes show a notice instead. Clicking a node selects it.
class GraphPane : public QWidget {
  Q_OBJECT
 public:
  enum class Kind { TensorGraph, KernelAst };
  static constexpr int kMaxNodes = 300;
  GraphPane(Kind kind, SelectionModel* selection, QWidget* parent = nullptr);

  // true while a layout for this pane is running
  bool busy() const { return !waiting_.isEmpty(); }
  int node_count() const { return node_count_; }
  QGraphicsScene* scene() const { return scene_; }

  // the graph under roots (uop ids), colored by op family; at most max_nodes + 1 nodes
  static GraphInput build_graph(const class Session& s, const QList<int>& roots, int max_nodes);
  static QColor op_color(const QString& op);

 signals:
  void layout_done();

 private:
  void on_selection(const Selection& s);
  void show_roots(const QList<int>& roots, const QString& title);
  void draw(const GraphLayout& l);
  void show_notice(const QString& text);
  Kind kind_;
  SelectionModel* selection_;
  QGraphicsScene* scene_;
  GraphView* view_;
  QLabel* title_;
  QLabel* notice_;
  QStackedWidget* stack_;
  QByteArray waiting_, shown_;
  GraphInput input_;
  int node_count_ = 0;
  int highlighted_ = -1;
  QSet<int> marked_;  // nodes a selected pass's rules produced
};

}  // namespace tsv
