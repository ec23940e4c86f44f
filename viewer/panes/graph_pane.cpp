#include "viewer/panes/graph_pane.h"

#include <QElapsedTimer>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QSet>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "viewer/graph/graph_view.h"
#include "viewer/model/session.h"

namespace tsv {

QColor GraphPane::op_color(const QString& op) {
  static const QSet<QString> memory = {"BUFFER", "PARAM", "DEFINE_GLOBAL", "DEFINE_LOCAL", "DEFINE_REG", "LOAD",
                                       "STORE", "INDEX", "COPY", "BUFFERIZE", "AFTER", "BUFFER_VIEW", "MSTACK",
                                       "MSELECT", "ASSIGN", "DEVICE", "UNIQUE", "LUNIQUE"};
  static const QSet<QString> movement = {"RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP", "VIEW"};
  static const QSet<QString> reduce = {"REDUCE", "REDUCE_AXIS", "ALLREDUCE", "WMMA"};
  static const QSet<QString> consts = {"CONST", "VCONST", "DEFINE_VAR", "BIND", "NOOP"};
  static const QSet<QString> control = {"RANGE", "END", "ENDRANGE", "SPECIAL", "IF", "ENDIF", "BARRIER", "GEP",
                                        "VECTORIZE", "CAT", "PTRCAT", "UNROLL", "CONTRACT"};
  static const QSet<QString> kernel = {"SINK", "KERNEL", "CALL", "LINEAR", "CONTIGUOUS", "DETACH", "PROGRAM",
                                       "SOURCE", "FUNCTION", "GROUP"};
  if (memory.contains(op)) return QColor(0xb3, 0xd4, 0xf5);
  if (movement.contains(op)) return QColor(0xc5, 0xe8, 0xb7);
  if (reduce.contains(op)) return QColor(0xf8, 0xc0, 0x8a);
  if (consts.contains(op)) return QColor(0xdd, 0xdd, 0xdd);
  if (control.contains(op)) return QColor(0xd9, 0xc4, 0xf0);
  if (kernel.contains(op)) return QColor(0xf4, 0xb6, 0xc8);
  return QColor(0xf7, 0xe8, 0xa4);  // ALU and the rest
}

GraphInput GraphPane::build_graph(const Session& s, const QList<int>& roots, int max_nodes) {
  GraphInput g;
  QSet<int> seen;
  QList<int> queue;
  for (int r : roots)
    if (!seen.contains(r)) seen.insert(r), queue.push_back(r);
  for (int i = 0; i < queue.size(); ++i) {
    int id = queue[i];
    const Uop* u = s.uop(id);
    if (!u) continue;
    QString arg = u->arg;
    if (arg == "None") arg.clear();
    if (arg.size() > 40) arg = arg.left(38) + "…";
    QString label = u->op + (arg.isEmpty() ? QString() : "\n" + arg);
    if (!u->dtype.isEmpty()) label += "\n" + QString(u->dtype).remove("dtypes.");
    g.nodes.push_back({id, label, op_color(u->op)});
    if (g.nodes.size() > max_nodes) return g;
    for (int src : u->src) {
      g.edges.push_back({src, id});
      if (!seen.contains(src)) seen.insert(src), queue.push_back(src);
    }
  }
  // edges to nodes that were never reached (missing uops) would make dot invent nodes
  QSet<int> have;
  for (const auto& n : g.nodes) have.insert(n.id);
  g.edges.erase(std::remove_if(g.edges.begin(), g.edges.end(),
                               [&](const auto& e) { return !have.contains(e.first) || !have.contains(e.second); }),
                g.edges.end());
  return g;
}

GraphPane::GraphPane(Kind kind, SelectionModel* selection, QWidget* parent)
    : QWidget(parent), kind_(kind), selection_(selection) {
  scene_ = new QGraphicsScene(this);
  view_ = new GraphView(this);
  view_->setScene(scene_);
  title_ = new QLabel(this);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  notice_ = new QLabel(this);
  notice_->setAlignment(Qt::AlignCenter);
  notice_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(view_);
  stack_->addWidget(notice_);
  auto* fit = new QToolButton(this);
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Fit the whole graph (or double-click the background)"));
  connect(fit, &QToolButton::clicked, view_, &GraphView::fit);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addWidget(title_, 1);
  bar->addWidget(fit);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addLayout(bar);
  lay->addWidget(stack_, 1);
  show_notice(kind_ == Kind::TensorGraph ? tr("Select a schedule to see its tensor graph")
                                         : tr("Select a kernel to see its AST"));

  auto* engine = LayoutEngine::instance();
  connect(engine, &LayoutEngine::finished, this, [this](const QByteArray& key, const GraphLayout& l) {
    if (key != waiting_) return;
    waiting_.clear();
    draw(l);
    shown_ = key;
    emit layout_done();
  });
  connect(engine, &LayoutEngine::failed, this, [this](const QByteArray& key, const QString& err) {
    if (key != waiting_) return;
    waiting_.clear();
    show_notice(tr("Graph layout failed: %1").arg(err));
    emit layout_done();
  });
  connect(scene_, &QGraphicsScene::selectionChanged, this, [this] {
    auto items = scene_->selectedItems();
    if (items.size() == 1) selection_->select_node(items.front()->data(0).toInt());
  });
  connect(selection_, &SelectionModel::changed, this, &GraphPane::on_selection);
}

void GraphPane::show_notice(const QString& text) {
  notice_->setText(text);
  stack_->setCurrentWidget(notice_);
}

void GraphPane::on_selection(const Selection& sel) {
  const Session& s = *selection_->session();
  if (sel.context < 0 || sel.context >= s.contexts().size()) {
    waiting_.clear(), shown_.clear();
    title_->clear();
    scene_->clear();
    node_count_ = 0;
    return show_notice(!s.path().isEmpty() && s.contexts().isEmpty() ? tr("The run recorded no schedules")
                       : s.contexts().isEmpty()                     ? tr("No trace loaded")
                                                                    : tr("Nothing selected"));
  }
  const Context* c = &s.contexts()[sel.context];
  const Pass* pass = sel.pass >= 0 && sel.pass < c->passes.size() ? &c->passes[sel.pass] : nullptr;
  marked_.clear();
  if (pass)
    for (const auto& m : pass->matches) marked_.insert(m.after);
  if (pass && (kind_ == Kind::TensorGraph) == c->is_schedule()) {
    // a pass of this pane's kind of context: show what the pass produced, the rewritten nodes outlined
    show_roots({pass->after}, tr("%1 after \"%2\" (%n rewrite(s))", "", pass->match_count).arg(c->plain_name, pass->name));
  } else if (kind_ == Kind::TensorGraph) {
    if (!c->is_schedule() && c->schedule >= 0) c = &s.contexts()[c->schedule];
    if (c->tensor_graph.isEmpty()) return show_notice(tr("%1 has no tensor graph").arg(c->plain_name));
    show_roots(c->tensor_graph, tr("Tensor graph: %1").arg(c->plain_name));
  } else {
    if (!c->has_program || c->program.ast < 0) return show_notice(tr("Select a kernel to see its AST"));
    show_roots({c->program.ast}, tr("Kernel AST: %1").arg(c->plain_name));
  }
  // highlight the selected node, if it is drawn here
  if (highlighted_ != sel.node) {
    for (auto* it : scene_->items()) {
      auto* r = dynamic_cast<QGraphicsRectItem*>(it);
      if (!r || !r->data(0).isValid()) continue;
      int id = r->data(0).toInt();
      if (id == highlighted_ || id == sel.node) r->setPen(QPen(id == sel.node ? QColor(0xe0, 0x20, 0x20) : Qt::black, id == sel.node ? 2.5 : 0.8));
    }
    highlighted_ = sel.node;
  }
}

void GraphPane::show_roots(const QList<int>& roots, const QString& title) {
  title_->setText(title);
  GraphInput g = build_graph(*selection_->session(), roots, kMaxNodes);
  if (g.nodes.size() > kMaxNodes) {
    waiting_.clear(), shown_.clear();
    scene_->clear();
    node_count_ = g.nodes.size();
    return show_notice(tr("This graph has more than %1 nodes; it is not laid out (collapsing comes later).").arg(kMaxNodes));
  }
  // the outlined nodes are part of the picture, so part of the key
  for (auto& n : g.nodes)
    if (marked_.contains(n.id)) n.label += QStringLiteral(" ");
  QByteArray key = g.hash();
  if (key == shown_ || key == waiting_) {
    if (key == shown_) stack_->setCurrentWidget(view_);
    return;
  }
  input_ = g;
  node_count_ = g.nodes.size();
  waiting_ = LayoutEngine::instance()->request(g);
  show_notice(tr("Laying out %1 nodes…").arg(g.nodes.size()));
}

void GraphPane::draw(const GraphLayout& l) {
  QElapsedTimer t;
  t.start();
  scene_->clear();
  highlighted_ = -1;
  QPen edge_pen(palette().color(QPalette::Text), 0.9);
  for (const auto& p : l.edges) scene_->addPath(p, edge_pen)->setZValue(0);
  for (const auto& a : l.arrows) scene_->addPolygon(a, edge_pen, palette().color(QPalette::Text))->setZValue(0);
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(10);
  for (const auto& n : input_.nodes) {
    QRectF r = l.nodes.value(n.id);
    if (r.isNull()) continue;
    const bool marked = marked_.contains(n.id);
    auto* box = scene_->addRect(r, marked ? QPen(QColor(0xe0, 0x60, 0x00), 3) : QPen(Qt::black, 0.8), n.fill);
    box->setZValue(1);
    box->setData(0, n.id);
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    box->setToolTip(QStringLiteral("uop %1\n%2").arg(n.id).arg(n.label));
    auto* text = new QGraphicsSimpleTextItem(n.label.trimmed(), box);
    text->setFont(font);
    text->setBrush(Qt::black);
    QRectF tb = text->boundingRect();
    text->setPos(r.center() - QPointF(tb.width() / 2, tb.height() / 2));
  }
  scene_->setSceneRect(l.bounds.adjusted(-20, -20, 20, 20));
  stack_->setCurrentWidget(view_);
  view_->fit();
  LayoutEngine::note_ui_stall_ms(t.nsecsElapsed() / 1e6);
}

}  // namespace tsv
