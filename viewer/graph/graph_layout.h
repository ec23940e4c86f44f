#pragma once
#include <QByteArray>
#include <QColor>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPainterPath>
#include <QRectF>
#include <QString>
#include <QStringList>

class QProcess;

namespace tsv {

// A graph to lay out: nodes by uop id with a label and fill color, edges from a source node to its user.
struct GraphInput {
  struct Node {
    int id;
    QString label;
    QColor fill;
  };
  QList<Node> nodes;
  QList<QPair<int, int>> edges;
  QStringList edge_labels;  // empty, or one per edge (an empty string: no label)
  static constexpr int kQuickLayoutAbove = 300;  // nodes: above this, dot gets its quick settings (to_dot)
  bool left_to_right = false;  // ranks from left to right (a wide, short pane) rather than top to bottom
  double text_scale = 1.0;     // the labels' size over the default (View > Larger text): dot sizes the nodes for it
  int node_font_px() const { return qRound(10 * text_scale); }  // the node text's pixel size the layout was made for
  QByteArray to_dot() const;
  QByteArray hash() const;  // of the DOT text: the layout cache key
};

// Positions from Graphviz, in scene coordinates (y down).
struct GraphLayout {
  QHash<int, QRectF> nodes;
  QList<QPainterPath> edges;
  QList<QPair<int, int>> edge_ends;  // per edge: its source and user node ids (INT_MIN where dot named no node)
  QList<QPolygonF> arrows;
  QList<int> arrow_edge;             // per arrow: the index of its edge
  QList<QPair<QPointF, QString>> edge_labels;  // each label's centre and text
  QRectF bounds;
};

// Parses `dot -Tjson0` output; returns false with *error set if it is not a layout.
}  // namespace tsv
Q_DECLARE_METATYPE(tsv::GraphLayout)
namespace tsv {

bool parse_dot_json(const QByteArray& json, GraphLayout* out, QString* error);

// The layout of `g` made from the layout `old` of the same graph with one node (`replaced`: a collapsed cluster) standing
// for the nodes `sub` lays out, without laying the whole graph out again (opening a cluster of a big graph): `sub` takes
// the replaced node's place (its first rank where the node's top was), the nodes ranked after it move on by the extra
// length `sub` needs, the nodes beside it move aside by half its extra breadth, each on its side; every edge `old` had
// whose two ends moved alike keeps its route (moved with them), an edge inside `sub` keeps sub's route, and the rest are
// drawn straight from border to border. Ranks run down (or right, g.left_to_right).
GraphLayout splice_layout(const GraphLayout& old, int replaced, const GraphLayout& sub, const GraphInput& g);

// Runs `dot -Tjson0` in a child process (Graphviz's library is not thread-safe), never blocking the UI thread;
// results are cached by the DOT text's hash. Each request answers once, with finished() or failed().
class LayoutEngine : public QObject {
  Q_OBJECT
 public:
  explicit LayoutEngine(QObject* parent = nullptr);
  ~LayoutEngine() override;
  static LayoutEngine* instance();

  // Starts (or answers from the cache, asynchronously) a layout; returns the request's key.
  QByteArray request(const GraphInput& g);
  // Withdraws one request for `key`; the dot child is killed once nobody waits for it. No answer follows for
  // a killed layout (idle() does, when it was the last one).
  void cancel(const QByteArray& key);
  void set_timeout_ms(int ms) { timeout_ms_ = ms; }
  // layouts answered from the cache, and dot children started, since the program began
  int cache_hits() const { return cache_hits_; }
  int layouts_started() const { return layouts_started_; }
  bool cached(const QByteArray& key) const { return cache_.contains(key); }
  // keeps a layout made here (splice_layout) as the layout of the graph whose request key (GraphInput::hash) is `key`
  void put(const QByteArray& key, const GraphLayout& layout);
  int pending() const { return running_.size() + queued_answers_; }
  // the longest time one finished() handler's parsing took on the UI thread, in ms
  static double max_ui_stall_ms();
  static void note_ui_stall_ms(double ms);

 signals:
  void finished(const QByteArray& key, const tsv::GraphLayout& layout);
  void failed(const QByteArray& key, const QString& error);
  void idle();

 private:
  void done(const QByteArray& key);
  static constexpr int kCacheSize = 256;  // layouts kept; the oldest goes first
  QHash<QByteArray, GraphLayout> cache_;
  QList<QByteArray> cache_order_;
  QHash<QByteArray, QProcess*> running_;
  QHash<QByteArray, int> waiters_;
  int queued_answers_ = 0;
  int cache_hits_ = 0, layouts_started_ = 0;
  int timeout_ms_ = 20000;
};

}  // namespace tsv
