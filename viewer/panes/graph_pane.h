#pragma once
#include <climits>
#include <functional>
#include <QHash>
#include <QSet>
#include <QWidget>

#include "viewer/graph/graph_layout.h"
#include "viewer/model/selection_model.h"

class QGraphicsRectItem;
class QGraphicsScene;
class QGraphicsItem;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QToolButton;

namespace tsv {
class GraphView;
class Minimap;

// A pane drawing a uop graph (the tensor graph of a schedule, or a kernel's AST) laid out by Graphviz.
// Graphs with more than kCollapseAbove nodes open collapsed: one node per kernel cluster, expanded by a
// double-click. A search field highlights matching nodes (Enter cycles through them); a minimap shows where
// the view is. Clicking a node selects it; the graph exports as SVG, PNG or DOT.
class GraphPane : public QWidget {
  Q_OBJECT
 public:
  // KernelGraph: the reference's "View Kernel Graph": one node per call of a schedule's LINEAR, buffers as edges
  enum class Kind { TensorGraph, KernelAst, KernelGraph };
  static constexpr int kCollapseAbove = 1000;  // larger graphs open collapsed to kernel clusters
  static constexpr int kMaxNodes = 2000;       // the most nodes handed to dot at once
  static constexpr int kMaxBuild = 200000;     // larger graphs are not drawn at all
  GraphPane(Kind kind, SelectionModel* selection, QWidget* parent = nullptr);

  // true while a layout for this pane is running
  bool busy() const { return !waiting_.isEmpty() || !sub_waiting_.isEmpty(); }
  // the whole graph's node count (before collapsing)
  int node_count() const { return node_count_; }
  // the nodes in the drawn graph (a collapsed cluster counts once)
  int shown_node_count() const { return input_.nodes.size(); }
  QGraphicsScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  Minimap* minimap() const { return minimap_; }
  QLineEdit* search_field() const { return search_; }

  // Which call computes each tensor node of a schedule: item i's members (the trace's), a fill per item, the nodes
  // the items realize (their boundaries), and each node's items in order (a node some calls recompute has several)
  struct Split {
    QHash<int, QList<int>> items_of;  // node -> the LINEAR items computing it
    QSet<int> realized;               // the items' computes nodes
    QList<QColor> fill;               // per item
    QList<int> calls;                 // per item, -1 where none ran
  };
  // ---- collapsing (graphs over kCollapseAbove nodes)
  // A partition of a graph into kernel clusters: each cluster has a head (a root, or a node where a kernel's
  // output is stored: SINK, KERNEL, STORE, CONTIGUOUS, COPY, ...) and the nodes first reached from it.
  struct Clustering {
    QList<int> heads;
    QList<QList<int>> members;  // per cluster, the head first
    QHash<int, int> of;         // node id -> cluster index
    QStringList labels;         // per cluster, the call it is (empty: named by its head's op)
  };
  // without a recorded split: by op (a head is a node where a kernel's result is stored or a new kernel starts)
  static Clustering cluster_by_kernel(const Session& s, const GraphInput& g, const QList<int>& roots);
  // with one: a cluster per call, its nodes those the call computes (a node several compute goes to the first), named
  // by the call; the nodes no call computes (inputs) clustered as cluster_by_kernel would
  static Clustering cluster_by_split(const Session& s, const GraphInput& g, const QList<int>& roots, const Split& split);
  // the graph with every cluster not in `expanded` replaced by one node (id -1 - cluster index)
  static GraphInput collapse(const Session& s, const GraphInput& g, const Clustering& c, const QSet<int>& expanded);
  bool collapsed() const { return !clusters_.heads.isEmpty(); }
  const Clustering& clustering() const { return clusters_; }
  void expand_cluster(int cluster);
  void collapse_cluster(int cluster);
  void collapse_all();

  // ---- search
  // highlights the drawn nodes whose op, argument or dtype contains `text` (a collapsed cluster matches when
  // one of its nodes does); returns their ids in drawing order
  QList<int> search(const QString& text);
  // centres the view on the next match (wrapping); returns its id, or INT_MIN with no matches
  int next_match();
  const QList<int>& matches() const { return matches_; }

  // ---- export
  // true when a laid-out graph is shown (what the exports write)
  bool has_graph() const { return !shown_.isEmpty(); }
  // the shown graph as SVG, PNG (at `scale` pixels per point) or Graphviz DOT; false with *error set on failure
  bool export_svg(const QString& path, QString* error = nullptr) const;
  bool export_png(const QString& path, double scale = 2.0, QString* error = nullptr) const;
  bool export_dot(const QString& path, QString* error = nullptr) const;
  // by the file name's suffix: .svg, .png or .dot/.gv
  bool export_file(const QString& path, QString* error = nullptr) const;
  // asks for a file name and exports in `format` (SVG, PNG, DOT); reports failures in a message box
  void export_dialog(const QString& format);
  // what the pane shows, for menus and file names ("Tensor graph", "Kernel AST")
  QString kind_name() const;

  // ---- overview: while the graph is drawn too small to read (zoomed out, or fitted), the names of the heaviest
  // nodes (a kernel graph's calls by time, a collapsed tensor graph's clusters by size, else the kernels' outputs)
  // float beside them at a readable size, as many as fit without covering a node or one another
  static constexpr double kOverviewBelow = 0.55;  // the view's scale under which node text is too small to read
  static constexpr int kOverviewMax = 80;         // the most names shown at once
  QStringList overview_labels() const;
  // where an overview name of `size` goes beside a node's box (view pixels): right, left, above or below, the first in
  // `visible` and clear of every rect in `taken`; null when none is
  static QRectF beside(const QRectF& node, const QSizeF& size, const QRectF& visible, const QList<QRectF>& taken);
  // the labels' size over the default (View > Larger text): node and edge text and the overview's names; the graph
  // is laid out again for it
  void set_text_scale(double scale);
  double text_scale() const { return text_scale_; }

  // the graph under roots (uop ids), colored by op family; at most max_nodes + 1 nodes
  static GraphInput build_graph(const class Session& s, const QList<int>& roots, int max_nodes);
  static QColor op_color(const QString& op);
  // A schedule context's kernel graph: node i is item i of its LINEAR (a kernel or copy, named as the schedule pane
  // names its call), an edge from the item that last wrote a buffer to each later item reading it (labelled with the
  // buffer's elements and dtype), and a node per buffer read before anything in the schedule wrote it (id
  // kBufferNode + its position among them; named by the earlier call that wrote it, if one did). *calls gets the
  // call of each item (-1 where the run recorded none).
  static constexpr int kBufferNode = 1000000;
  static Split kernel_split(const Session& s, int schedule_context);
  static QColor kernel_tint(int item);
  static GraphInput build_kernel_graph(const Session& s, int schedule_context, QList<int>* calls = nullptr);
  // a node's box text: op, arg (shortened), dtype
  static QString node_label(const struct Uop& u);

  // ---- colour by a metric (the tensor graph's nodes and the kernel graph's calls): each call's colour on a scale from
  // light (least) to dark red (most); Call: each call its own colour (the default)
  // Ratio: this run's time over a compared run's for the same computation (ratio_source), on a scale diverging from
  // 1x: blue where this run is faster, red where it is slower
  enum class Metric { Call, Time, Share, Flops, Bytes, Roofline, Ratio };
  void set_metric(Metric m);
  Metric metric() const { return metric_; }
  // each metric's name on the command line (--colour), in the enum's order: "call", "time", ... "ratio"
  static const QStringList& metric_keys();
  // what Ratio reads: for a call of this pane's session, its time over the paired call's in the compared run (NaN: no
  // pair), and that run's name; an empty function: no comparison (Ratio greys every node and says why)
  using RatioFn = std::function<double(int call)>;
  void set_ratio_source(RatioFn ratio, const QString& other);
  // the fills of `calls` (indexes into the session's calls; -1: none, grey) under the metric, and the scale's words
  // ("time: 0.05 µs (light) to 0.9 µs (dark)"); time, FLOPs and bytes on a log scale, share and the roofline linear.
  // Roofline: how far each call is from the device's measured roof (dark: far), grey without measured limits.
  static QList<QColor> metric_fills(const Session& s, const QList<int>& calls, Metric m, QString* scale, const RatioFn& ratio = {},
                                    const QString& other = {});
  static QColor metric_ramp(double t);  // the scale's colour at t in [0, 1]
  static QColor ratio_ramp(double t);   // the ratio's colour at t in [-1, 1] (log2 of the ratio over the scale's span)

 signals:
  void layout_done();

 protected:
  bool eventFilter(QObject* o, QEvent* e) override;

 private:
  void on_selection(const Selection& s);
  void show_roots(const QList<int>& roots, const QString& title);
  void show_kernel_graph(const Selection& sel);
  void show_input();
  void draw(const GraphLayout& l);
  void show_notice(const QString& text);
  void context_menu(const QPoint& pos);
  bool own_click_ = false;  // the selection changing is a click on a node of this pane
  void reveal(int id);  // centres the view on a drawn node that is out of view
  void update_overview();
  void clear_scene();  // the scene's items, the overview's names with them
  double overview_weight(int id) const;
  QString overview_text(int id, QGraphicsRectItem* node) const;
  void add_overview_label(const QPointF& centre, const QSizeF& size, const QString& text, const QFont& font, QGraphicsRectItem* node, int id);
  QList<QGraphicsItem*> overview_;
  double overview_scale_ = -1;
  double text_scale_ = 1.0;
  void restyle(int id);
  void place_minimap();
  void cancel_layout();
  Kind kind_;
  SelectionModel* selection_;
  QGraphicsScene* scene_;
  GraphView* view_;
  Minimap* minimap_;
  QLabel* title_;
  QLabel* notice_;
  QLabel* match_label_;
  QLineEdit* search_;
  QToolButton* collapse_btn_;
  QToolButton* cancel_btn_;
  QToolButton* map_btn_;
  QStackedWidget* stack_;
  QByteArray waiting_, shown_, full_key_;
  // opening a cluster of a drawn graph: the cluster's nodes are laid out alone (sub_waiting_) and spliced into the
  // drawn layout (splice_layout), which becomes the new graph's layout: nothing else is laid out again
  void splice_cluster(const GraphLayout& sub);
  void update_input();  // input_ (collapsed or not) and the title from the graph and the clusters open
  QByteArray sub_waiting_;
  GraphLayout drawn_;        // the layout drawn now
  int splice_node_ = 0;      // the collapsed cluster's node being opened
  QString title_text_;
  Metric metric_ = Metric::Call;
  RatioFn ratio_;
  QString ratio_other_;
  QString metric_scale_;  // the scale's words, in the legend under the bar
  QLabel* legend_ = nullptr;
  void show_legend();
  // the graph drawn again, its fills made anew (the metric or the compared run changed)
  void redraw_fills();
  GraphInput full_;   // the whole graph
  GraphInput input_;  // what is drawn (collapsed or not)
  Clustering clusters_;
  QSet<int> expanded_;
  QHash<int, QGraphicsRectItem*> items_;
  QList<int> matches_;
  int current_match_ = -1;
  int node_count_ = 0;
  int highlighted_ = -1;
  QSet<int> marked_;  // nodes a selected pass's rules produced
  int kernel_graph_of_ = -1;  // KernelGraph: the schedule context drawn
  QList<int> item_calls_;     // KernelGraph: the call of each node (item)
  // TensorGraph: the kernel split of the schedule drawn, from the trace's members of each LINEAR item
  Split split_;
  QSet<int> lit_;  // the nodes the selected call computes
  int focus_ = INT_MIN;  // the node to centre on in the next drawing (a cluster just opened or closed)
};

}  // namespace tsv
