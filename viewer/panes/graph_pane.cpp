#include "viewer/panes/graph_pane.h"

#include <QComboBox>
#include <cmath>

#include "viewer/model/glossary.h"
#include "viewer/model/timings_model.h"

#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QEvent>
#include <algorithm>
#include <utility>
#include <climits>
#include <QRegularExpression>
#include <QSet>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "viewer/graph/graph_view.h"
#include "viewer/graph/minimap.h"
#include "viewer/model/ansi.h"
#include "viewer/model/session.h"

namespace tsv {

GraphPane::GraphPane(Kind kind, SelectionModel* selection, QWidget* parent)
    : QWidget(parent), kind_(kind), selection_(selection) {
  scene_ = new QGraphicsScene(this);
  view_ = new GraphView(this);
  view_->setScene(scene_);
  minimap_ = new Minimap(view_, view_);
  minimap_->hide();
  view_->installEventFilter(this);
  title_ = new QLabel(this);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  notice_ = new QLabel(this);
  notice_->setAlignment(Qt::AlignCenter);
  notice_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(view_);
  stack_->addWidget(notice_);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Search op / arg"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(170);
  search_->setToolTip(tr("Highlights the nodes whose op, argument or dtype contains the text; Enter moves to the next"));
  match_label_ = new QLabel(this);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) { search(t); });
  connect(search_, &QLineEdit::returnPressed, this, [this] { next_match(); });
  auto button = [this](const QString& text, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
  };
  auto* fit = button(tr("Fit"), tr("Fit the whole graph (F, or double-click the background)"));
  connect(fit, &QToolButton::clicked, view_, &GraphView::fit);
  collapse_btn_ = button(tr("Collapse"), tr("Collapse every kernel cluster again"));
  collapse_btn_->hide();
  connect(collapse_btn_, &QToolButton::clicked, this, &GraphPane::collapse_all);
  cancel_btn_ = button(tr("Cancel"), tr("Stop laying out this graph"));
  cancel_btn_->hide();
  connect(cancel_btn_, &QToolButton::clicked, this, [this] {
    cancel_layout();
    show_notice(tr("Layout cancelled."));
    emit layout_done();
  });
  map_btn_ = button(tr("Map"), tr("Show the overview map while the graph does not fit the view"));
  map_btn_->setCheckable(true);
  map_btn_->setChecked(true);
  connect(map_btn_, &QToolButton::toggled, this, [this](bool on) { minimap_->set_enabled(on && has_graph()); });
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addWidget(title_, 1);
  if (kind_ != Kind::KernelAst) {  // colour by: each call, or a metric of it
    auto* colour = new QComboBox(this);
    colour->setObjectName(QStringLiteral("graph_metric"));
    colour->addItems({tr("call"), tr("time"), tr("share"), tr("FLOPs"), tr("bytes"), tr("roofline"), tr("ratio")});
    colour->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    colour->setToolTip(tr("Colour the nodes by the call computing them, or by a metric of that call on a scale from light to dark red: "
                          "its time (the warm median), its share of the run's time, its FLOPs, its bytes, how far it is from "
                          "the device's measured roofline, or its time over the compared run's (blue: faster here, red: slower)"));
    connect(colour, &QComboBox::currentIndexChanged, this, [this](int i) { set_metric(static_cast<Metric>(i)); });
    bar->addWidget(colour);
  }
  bar->addWidget(match_label_);
  bar->addWidget(search_);
  bar->addWidget(collapse_btn_);
  bar->addWidget(cancel_btn_);
  bar->addWidget(map_btn_);
  bar->addWidget(fit);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addLayout(bar);
  // the metric's scale, under the bar while the nodes are coloured by one
  legend_ = new QLabel(this);
  legend_->setObjectName(QStringLiteral("graph_metric_scale"));
  legend_->setContentsMargins(6, 0, 6, 2);
  legend_->hide();
  lay->addWidget(legend_);
  lay->addWidget(stack_, 1);
  show_notice(kind_ == Kind::TensorGraph   ? tr("Select a schedule to see its tensor graph")
              : kind_ == Kind::KernelGraph ? tr("Select a schedule or a call to see its kernel graph")
                                           : tr("Select a kernel to see its AST"));

  auto* engine = LayoutEngine::instance();
  connect(engine, &LayoutEngine::finished, this, [this](const QByteArray& key, const GraphLayout& l) {
    if (!sub_waiting_.isEmpty() && key == sub_waiting_) {
      sub_waiting_.clear();
      return splice_cluster(l);
    }
    if (key != waiting_) return;
    waiting_.clear();
    cancel_btn_->hide();
    draw(l);
    shown_ = key;
    emit layout_done();
  });
  connect(engine, &LayoutEngine::failed, this, [this](const QByteArray& key, const QString& err) {
    if (!sub_waiting_.isEmpty() && key == sub_waiting_) {  // the whole graph laid out instead
      sub_waiting_.clear();
      return show_input();
    }
    if (key != waiting_) return;
    waiting_.clear();
    cancel_btn_->hide();
    show_notice(tr("Graph layout failed: %1").arg(err));
    emit layout_done();
  });
  connect(scene_, &QGraphicsScene::selectionChanged, this, [this] {
    auto items = scene_->selectedItems();
    if (items.size() != 1 || items.front()->data(0).toInt() < 0) return;
    const int id = items.front()->data(0).toInt();
    if (kind_ != Kind::KernelGraph) {
      own_click_ = true;  // (a node clicked here stays where it is: no zoom, no scroll)
      selection_->select_node(id);
      own_click_ = false;
      return;
    }
    // a call's node selects that call everywhere (a buffer's node selects nothing)
    if (id < item_calls_.size() && item_calls_[id] >= 0 && item_calls_[id] != selection_->current().call) selection_->select_call(item_calls_[id]);
  });
  connect(view_, &GraphView::zoomed, this, [this] { update_overview(); });
  connect(view_, &GraphView::node_activated, this, [this](int id) {
    if (id < 0) return expand_cluster(-1 - id);
    if (collapsed() && clusters_.of.contains(id)) collapse_cluster(clusters_.of.value(id));
  });
  connect(selection_, &SelectionModel::changed, this, &GraphPane::on_selection);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_, &QWidget::customContextMenuRequested, this, &GraphPane::context_menu);
}

QString GraphPane::kind_name() const {
  return kind_ == Kind::TensorGraph ? tr("Tensor graph") : kind_ == Kind::KernelGraph ? tr("Kernel graph") : tr("Kernel AST");
}

void GraphPane::context_menu(const QPoint& pos) {
  QMenu menu(this);
  menu.addAction(tr("Fit"), view_, &GraphView::fit);
  menu.addSeparator();
  for (const char* fmt : {"SVG", "PNG", "DOT"}) {
    auto* a = menu.addAction(tr("Export as %1…").arg(fmt), this, [this, fmt] { export_dialog(fmt); });
    a->setEnabled(has_graph());
  }
  menu.exec(view_->viewport()->mapToGlobal(pos));
}

void GraphPane::export_dialog(const QString& format) {
  const QString ext = format.toLower();
  QString base = title_->text().section(':', -1).trimmed();
  base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("_"));
  if (base.isEmpty()) base = kind_name().toLower().replace(' ', '_');
  QString path = QFileDialog::getSaveFileName(this, tr("Export %1 as %2").arg(kind_name(), format), base + "." + ext,
                                              tr("%1 files (*.%2)").arg(format, ext));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += "." + ext;
  QString err;
  if (!export_file(path, &err)) QMessageBox::warning(this, tr("Export"), err);
}

bool GraphPane::export_file(const QString& path, QString* error) const {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "svg") return export_svg(path, error);
  if (suffix == "png") return export_png(path, 2.0, error);
  if (suffix == "dot" || suffix == "gv") return export_dot(path, error);
  if (error) *error = tr("unknown export format '%1' (svg, png or dot)").arg(suffix);
  return false;
}

namespace {
bool fail(QString* error, const QString& msg) {
  if (error) *error = msg;
  return false;
}
// the colour f of the way from x to y
QColor mix(const QColor& x, const QColor& y, double f) {
  return QColor::fromRgbF(x.redF() + (y.redF() - x.redF()) * f, x.greenF() + (y.greenF() - x.greenF()) * f, x.blueF() + (y.blueF() - x.blueF()) * f);
}
const QColor kNoMetric(0xe6, 0xe6, 0xe6);  // a node whose call has no figure for the metric
}  // namespace

bool GraphPane::export_svg(const QString& path, QString* error) const {
  if (!has_graph()) return fail(error, tr("no graph is shown"));
  const QRectF src = scene_->sceneRect();
  QSvgGenerator gen;
  gen.setFileName(path);
  gen.setSize(src.size().toSize());
  gen.setViewBox(QRectF(QPointF(0, 0), src.size()));
  gen.setTitle(title_->text());
  QPainter p;
  if (!p.begin(&gen)) return fail(error, tr("cannot write %1").arg(path));
  p.fillRect(QRectF(QPointF(0, 0), src.size()), palette().color(QPalette::Base));  // edges use the text color
  for (QGraphicsItem* it : overview_) it->hide();  // (the overview's names are the view's, not the graph's)
  scene_->render(&p, QRectF(QPointF(0, 0), src.size()), src);
  for (QGraphicsItem* it : overview_) it->show();
  p.end();
  return QFileInfo(path).size() > 0 || fail(error, tr("cannot write %1").arg(path));
}

bool GraphPane::export_png(const QString& path, double scale, QString* error) const {
  if (!has_graph()) return fail(error, tr("no graph is shown"));
  const QRectF src = scene_->sceneRect();
  // a huge graph is scaled down to a size an image viewer still opens
  const double s = std::min(scale, 16000.0 / std::max(src.width(), src.height()));
  QImage img((src.size() * s).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
  img.fill(palette().color(QPalette::Base));
  QPainter p(&img);
  p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  for (QGraphicsItem* it : overview_) it->hide();
  scene_->render(&p, QRectF(QPointF(0, 0), img.size()), src);
  for (QGraphicsItem* it : overview_) it->show();
  p.end();
  return img.save(path, "PNG") || fail(error, tr("cannot write %1").arg(path));
}

bool GraphPane::export_dot(const QString& path, QString* error) const {
  if (!has_graph()) return fail(error, tr("no graph is shown"));
  QSaveFile f(path);
  QByteArray dot = input_.to_dot();
  if (!f.open(QIODevice::WriteOnly) || f.write(dot) != dot.size() || !f.commit())
    return fail(error, tr("cannot write %1: %2").arg(path, f.errorString()));
  return true;
}

void GraphPane::show_notice(const QString& text) {
  notice_->setText(text);
  stack_->setCurrentWidget(notice_);
  minimap_->set_enabled(false);
}

bool GraphPane::eventFilter(QObject* o, QEvent* e) {
  if (o == view_ && e->type() == QEvent::Resize) place_minimap();
  return QWidget::eventFilter(o, e);
}

void GraphPane::place_minimap() {
  const QSize vs = view_->size();
  const int w = std::clamp(vs.width() / 5, 80, 200), h = std::clamp(vs.height() / 4, 60, 150);
  minimap_->setGeometry(vs.width() - w - 18, vs.height() - h - 18, w, h);
  minimap_->refit();
}

void GraphPane::cancel_layout() {
  if (!sub_waiting_.isEmpty()) LayoutEngine::instance()->cancel(std::exchange(sub_waiting_, QByteArray()));
  if (waiting_.isEmpty()) return;
  LayoutEngine::instance()->cancel(waiting_);
  waiting_.clear();
  cancel_btn_->hide();
}

void GraphPane::on_selection(const Selection& sel) {
  const Session& s = *selection_->session();
  if (sel.context < 0 || sel.context >= s.contexts().size()) {
    cancel_layout();
    shown_.clear(), full_key_.clear();
    title_->clear();
    clear_scene();
    items_.clear();
    clusters_ = {};
    input_ = {};
    node_count_ = 0;
    kernel_graph_of_ = -1;
    item_calls_.clear();
    return show_notice(!s.path().isEmpty() && s.contexts().isEmpty() ? tr("The run recorded no schedules")
                       : s.contexts().isEmpty()                     ? tr("No trace loaded")
                                                                    : tr("Nothing selected"));
  }
  const Context* c = &s.contexts()[sel.context];
  if (kind_ == Kind::KernelGraph) return show_kernel_graph(sel);
  const QSet<int> old_lit = std::exchange(lit_, {});
  split_ = {};
  const Pass* pass = sel.pass >= 0 && sel.pass < c->passes.size() ? &c->passes[sel.pass] : nullptr;
  marked_.clear();
  if (pass)
    for (const auto& m : pass->matches) marked_.insert(m.after);
  if (pass && (kind_ == Kind::TensorGraph) == c->is_schedule()) {
    // a pass of this pane's kind of context: show what the pass produced, the rewritten nodes outlined
    show_roots({pass->after}, tr("%1 after \"%2\" (%n rewrite(s))", "", pass->match_count).arg(c->plain_name, pass->name));
  } else if (kind_ == Kind::TensorGraph) {
    // the selected call's own schedule (a kernel's program may have been compiled under an earlier one)
    int sc = sel.context;
    if (sel.call >= 0 && sel.call < s.calls().size() && s.schedule_context(s.calls()[sel.call].schedule_index) >= 0)
      sc = s.schedule_context(s.calls()[sel.call].schedule_index);
    else if (!c->is_schedule() && c->schedule >= 0)
      sc = c->schedule;
    c = &s.contexts()[sc];
    if (c->tensor_graph.isEmpty()) return show_notice(tr("%1 has no tensor graph").arg(c->plain_name));
    split_ = kernel_split(s, sc);
    if (metric_ != Metric::Call) split_.fill = metric_fills(s, split_.calls, metric_, &metric_scale_, ratio_, ratio_other_);
    QSet<int> lit;
    if (const int item = split_.calls.indexOf(sel.call); sel.call >= 0 && item >= 0)
      for (auto it = split_.items_of.constBegin(); it != split_.items_of.constEnd(); ++it)
        if (it.value().contains(item)) lit.insert(it.key());
    lit_ = lit;
    show_roots(c->tensor_graph, tr("Tensor graph: %1").arg(c->plain_name) +
                                    (split_.items_of.isEmpty() || metric_ != Metric::Call ? QString() : tr(" · colour: the call computing each node")));
    show_legend();
  } else {
    if (!c->has_program || c->program.ast < 0) return show_notice(tr("Select a kernel to see its AST"));
    show_roots({c->program.ast}, tr("Kernel AST: %1").arg(c->plain_name));
  }
  for (int id : old_lit) restyle(id);
  for (int id : lit_) restyle(id);
  // highlight the selected node, if it is drawn here, and bring it into view
  if (highlighted_ != sel.node) {
    int old = highlighted_;
    highlighted_ = sel.node;
    restyle(old);
    restyle(sel.node);
    reveal(sel.node);
  }
}

void GraphPane::reveal(int id) {
  if (id < 0) return;  // nothing selected (a cluster's negative id is never a selection)
  QGraphicsRectItem* it = items_.value(id);
  if (!it || own_click_ || stack_->currentWidget() != view_) return;
  // a node selected elsewhere (a source line, a list): readable and in view
  if (view_->transform().m11() < 0.6) view_->set_scale(1);
  const QRectF seen = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  if (!seen.contains(it->sceneBoundingRect())) view_->centerOn(it);
}

void GraphPane::clear_scene() {
  scene_->clear();
  overview_.clear();  // (the scene deleted them)
  overview_scale_ = -1;
}

double GraphPane::overview_weight(int id) const {
  const Session& s = *selection_->session();
  if (kind_ == Kind::KernelGraph) {  // a call: its time
    const int call = id >= 0 && id < item_calls_.size() ? item_calls_[id] : -1;
    return call >= 0 && call < s.calls().size() ? 1 + TimingsModel::headline_of(s.calls()[call]) * 1e6 : 0;
  }
  if (id < 0) {  // a collapsed cluster: its size
    const int c = -1 - id;
    return c < clusters_.members.size() ? 1 + clusters_.members[c].size() : 0;
  }
  if (kind_ == Kind::TensorGraph && split_.realized.contains(id)) return 1;  // a kernel's output
  return 0;
}

void GraphPane::update_overview() {
  const double scale = view_->transform().m11();
  const bool want = scale < kOverviewBelow && !items_.isEmpty();
  if (!want && overview_.isEmpty()) return;
  if (want && std::abs(scale - overview_scale_) < 1e-9 && !overview_.isEmpty()) return;
  for (QGraphicsItem* it : overview_) {
    scene_->removeItem(it);
    delete it;
  }
  overview_.clear();
  overview_scale_ = scale;
  if (!want) return;
  // the heaviest nodes first; each name beside its node (right, left, above or below), never over a node or a name
  // placed before, and left out where no side has room
  QList<QPair<double, int>> order;
  for (auto it = items_.constBegin(); it != items_.constEnd(); ++it)
    if (const double w = overview_weight(it.key()); w > 0) order.push_back({w, it.key()});
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(qRound(12 * text_scale_));
  font.setBold(true);
  const QFontMetrics fm(font);
  QList<QRectF> taken;  // in view pixels: every node, then each name placed
  for (QGraphicsRectItem* node : std::as_const(items_)) taken.push_back(view_->mapFromScene(node->sceneBoundingRect()).boundingRect());
  const QRectF visible = view_->viewport()->rect();
  for (const auto& [w, id] : order) {
    if (overview_.size() >= kOverviewMax) break;
    QGraphicsRectItem* node = items_.value(id);
    const QString text = overview_text(id, node);
    if (text.isEmpty()) continue;
    const QSizeF size(fm.horizontalAdvance(text) + 8, fm.height() + 4);
    const QRectF box = beside(view_->mapFromScene(node->sceneBoundingRect()).boundingRect(), size, visible, taken);
    if (box.isNull()) continue;
    taken.push_back(box);
    add_overview_label(view_->mapToScene(box.center().toPoint()), size, text, font, node, id);
  }
}

// where a name of `size` (view pixels) goes beside a node's box: the first side of right, left, above, below that is in
// view and clear of every box in `taken`; a null rect when none is
QRectF GraphPane::beside(const QRectF& node, const QSizeF& size, const QRectF& visible, const QList<QRectF>& taken) {
  constexpr double gap = 3;
  const double cx = node.center().x() - size.width() / 2, cy = node.center().y() - size.height() / 2;
  const QRectF sides[] = {QRectF(QPointF(node.right() + gap, cy), size), QRectF(QPointF(node.left() - gap - size.width(), cy), size),
                          QRectF(QPointF(cx, node.top() - gap - size.height()), size), QRectF(QPointF(cx, node.bottom() + gap), size)};
  for (const QRectF& r : sides)
    if (visible.contains(r) && std::none_of(taken.begin(), taken.end(), [&](const QRectF& t) { return t.intersects(r); })) return r;
  return {};
}

// the name the overview gives a node: its box's first line; a kernel's output in a tensor graph is named by the call
// that stores it (the split is what the overview shows)
QString GraphPane::overview_text(int id, QGraphicsRectItem* node) const {
  QString text;
  for (QGraphicsItem* c : node->childItems())
    if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(c)) text = t->text().section(QLatin1Char('\n'), 0, 0);
  if (kind_ == Kind::TensorGraph && id >= 0)
    for (int item : split_.items_of.value(id)) {
      const int call = split_.calls.value(item, -1);
      if (call < 0 || call >= selection_->session()->calls().size()) continue;
      return selection_->session()->calls()[call].display_name();
    }
  return text;
}

// a name of fixed pixel size centred at `centre` (scene): ItemIgnoresTransformations keeps it readable at any zoom
void GraphPane::add_overview_label(const QPointF& centre, const QSizeF& size, const QString& text, const QFont& font,
                                   QGraphicsRectItem* node, int id) {
  auto* bg = new QGraphicsRectItem(QRectF(QPointF(-size.width() / 2, -size.height() / 2), size));
  bg->setFlag(QGraphicsItem::ItemIgnoresTransformations);
  bg->setPos(centre);
  QColor fill = node->brush().color();
  fill.setAlpha(235);
  bg->setBrush(fill);
  bg->setPen(QPen(QColor(0, 0, 0, 160), 1));
  bg->setZValue(5);
  bg->setData(1, id);
  bg->setAcceptedMouseButtons(Qt::NoButton);  // a click goes to the node under it
  bg->setToolTip(node->toolTip());
  auto* t = new QGraphicsSimpleTextItem(text, bg);
  t->setFont(font);
  t->setBrush(Qt::black);
  t->setPos(-size.width() / 2 + 4, -size.height() / 2 + 2);
  t->setAcceptedMouseButtons(Qt::NoButton);
  scene_->addItem(bg);
  overview_.push_back(bg);
}

QStringList GraphPane::overview_labels() const {
  QStringList out;
  for (QGraphicsItem* it : overview_)
    for (QGraphicsItem* c : it->childItems())
      if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(c)) out << t->text();
  return out;
}

void GraphPane::show_kernel_graph(const Selection& sel) {
  const Session& s = *selection_->session();
  // the schedule of the selection: a schedule context itself, a kernel's, or the selected call's
  int sc = -1;
  if (sel.call >= 0 && sel.call < s.calls().size()) sc = s.schedule_context(s.calls()[sel.call].schedule_index);
  if (sc < 0) sc = s.contexts()[sel.context].is_schedule() ? sel.context : s.contexts()[sel.context].schedule;
  if (sc < 0) return show_notice(tr("Select a schedule or a call to see its kernel graph"));
  const Context& c = s.contexts()[sc];
  if (c.linear.isEmpty()) return show_notice(tr("%1 has no calls").arg(c.plain_name));
  QList<int> calls;
  GraphInput g = build_kernel_graph(s, sc, &calls);
  if (metric_ != Metric::Call) {  // each call's node on the metric's scale
    const QList<QColor> fills = metric_fills(s, calls, metric_, &metric_scale_, ratio_, ratio_other_);
    for (auto& n : g.nodes)
      if (n.id >= 0 && n.id < fills.size()) n.fill = fills[n.id];
  }
  if (const QByteArray key = g.hash(); key != full_key_ || sc != kernel_graph_of_) {
    kernel_graph_of_ = sc;
    full_ = std::move(g);
    item_calls_ = std::move(calls);
    full_key_ = key;
    node_count_ = full_.nodes.size();
    clusters_ = {}, expanded_.clear();
    title_text_ = c.linear.size() == 1 ? tr("Kernel graph: %1 (1 call)").arg(c.plain_name)
                                       : tr("Kernel graph: %1 (%2 calls)").arg(c.plain_name, QString::number(c.linear.size()));
    show_legend();
    show_input();
  }
  // the selected call's node is outlined
  const int node = sel.call >= 0 ? item_calls_.indexOf(sel.call) : -1;
  if (highlighted_ != node) {
    const int old = highlighted_;
    highlighted_ = node;
    restyle(old);
    restyle(node);
  }
}

void GraphPane::show_roots(const QList<int>& roots, const QString& title) {
  const Session& s = *selection_->session();
  GraphInput g = build_graph(s, roots, kMaxBuild);
  node_count_ = g.nodes.size();
  if (kind_ == Kind::TensorGraph && !split_.items_of.isEmpty())
    for (auto& n : g.nodes)
      if (auto it = split_.items_of.constFind(n.id); it != split_.items_of.constEnd()) n.fill = split_.fill.value(it.value().front());
  if (g.nodes.size() > kMaxBuild) {
    cancel_layout();
    shown_.clear(), full_key_.clear();
    clear_scene();
    items_.clear();
    title_->setText(title);
    return show_notice(tr("This graph has more than %1 nodes; it is not drawn.").arg(kMaxBuild));
  }
  // the outlined nodes are part of the picture, so part of the key
  for (auto& n : g.nodes)
    if (marked_.contains(n.id)) n.label += QStringLiteral(" ");
  QByteArray key = g.hash();
  if (key != full_key_) {
    full_key_ = key;
    full_ = std::move(g);
    expanded_.clear();
    clusters_ = full_.nodes.size() <= kCollapseAbove ? Clustering{}
                : kind_ == Kind::TensorGraph && !split_.items_of.isEmpty() ? cluster_by_split(s, full_, roots, split_)
                                                                            : cluster_by_kernel(s, full_, roots);
  }
  title_text_ = title;
  show_input();
}

void GraphPane::show_legend() {
  legend_->setVisible(metric_ != Metric::Call && !metric_scale_.isEmpty());
  QString swatches;  // the ramp, light to dark (the ratio's: faster to slower)
  for (double t : {0.0, 0.25, 0.5, 0.75, 1.0})
    swatches += QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span>")
                    .arg((metric_ == Metric::Ratio ? ratio_ramp(2 * t - 1) : metric_ramp(t)).name());
  legend_->setText(swatches + QStringLiteral("&nbsp;") + metric_scale_.toHtmlEscaped());
}

QColor GraphPane::ratio_ramp(double t) {  // blue (-1) -> near white (0) -> red (1)
  const QColor lo(0x21, 0x66, 0xac), mid(0xf7, 0xf7, 0xf7), hi(0xb2, 0x18, 0x2b);
  t = std::clamp(t, -1.0, 1.0);
  return mix(mid, t < 0 ? lo : hi, std::fabs(t));
}

void GraphPane::set_ratio_source(RatioFn ratio, const QString& other) {
  ratio_ = std::move(ratio);
  ratio_other_ = other;
  if (metric_ == Metric::Ratio) redraw_fills();
}

QColor GraphPane::metric_ramp(double t) {  // light yellow -> orange -> dark red
  const QColor a(0xff, 0xf5, 0xd6), b(0xf4, 0xa2, 0x4a), c(0xa5, 0x0f, 0x15);
  t = std::clamp(t, 0.0, 1.0);
  return t < 0.5 ? mix(a, b, t * 2) : mix(b, c, (t - 0.5) * 2);
}

const QStringList& GraphPane::metric_keys() {
  static const QStringList keys = {"call", "time", "share", "flops", "bytes", "roofline", "ratio"};
  return keys;
}

void GraphPane::set_metric(Metric m) {
  if (m == metric_) return;
  metric_ = m;
  if (auto* box = findChild<QComboBox*>(QStringLiteral("graph_metric")); box && box->currentIndex() != int(m)) {
    const QSignalBlocker block(box);
    box->setCurrentIndex(int(m));
  }
  redraw_fills();
}

void GraphPane::redraw_fills() {
  full_key_.clear();  // drawn again with the new fills
  kernel_graph_of_ = -1;
  on_selection(selection_->current());
}

QList<QColor> GraphPane::metric_fills(const Session& s, const QList<int>& calls, Metric m, QString* scale, const RatioFn& ratio,
                                      const QString& other) {
  if (m == Metric::Ratio) {
    // log2 of each ratio, the scale symmetric about 1x (at least 1.25x either way, so noise stays pale)
    QList<double> v;
    double span = std::log2(1.25);
    for (int c : calls) {
      const double r = ratio && c >= 0 ? ratio(c) : qQNaN();
      v << (r > 0 && std::isfinite(r) ? std::log2(r) : qQNaN());
      if (!qIsNaN(v.back())) span = std::max(span, std::fabs(v.back()));
    }
    QList<QColor> out;
    for (double x : v) out << (qIsNaN(x) ? kNoMetric : ratio_ramp(x / span));
    if (scale)
      *scale = !ratio ? tr("colour: time over a compared run's — no comparison (Compare with…, or Run > What if)")
                      : tr("colour: time here over %1's, %2x faster (blue) to %2x slower (red), log scale; grey: no pair")
                            .arg(other, QString::number(std::exp2(span), 'g', 3));
    return out;
  }
  const auto& all = s.calls();
  // a call's time as the Timings pane shows it: the median of its warm runs after the first where it ran several times
  const auto seconds = &TimingsModel::headline_of;
  double total = 0;
  for (const Call& c : all) total += seconds(c);
  const MeasuredLimits& lim = s.limits();
  // the metric of a call (NaN: none)
  auto value = [&](int call) -> double {
    if (call < 0 || call >= all.size()) return qQNaN();
    const Call& c = all[call];
    switch (m) {
      case Metric::Time: return seconds(c) > 0 ? seconds(c) : qQNaN();
      case Metric::Share: return total > 0 ? seconds(c) / total : qQNaN();
      case Metric::Flops: return c.estimates.ops > 0 ? c.estimates.ops : qQNaN();
      case Metric::Bytes: return c.estimates.mem > 0 ? c.estimates.mem : qQNaN();
      case Metric::Roofline: {
        if (!lim.valid() || seconds(c) <= 0 || (c.estimates.ops <= 0 && c.estimates.mem <= 0)) return qQNaN();
        // the time the roof allows (the slower of its compute and its memory traffic at the limits) over the time taken
        const double roof_s = std::max(c.estimates.ops / (lim.peak_gflops * 1e9), c.estimates.mem / (lim.bandwidth_gbs * 1e9));
        return 1.0 - std::min(1.0, roof_s / seconds(c));  // 0: on the roof, 1: far below it
      }
      case Metric::Call:
      case Metric::Ratio:  // (returned above)
        break;
    }
    return qQNaN();
  };
  const bool log = m == Metric::Time || m == Metric::Flops || m == Metric::Bytes;
  QList<double> v;
  double lo = qInf(), hi = -qInf();
  for (int c : calls) {
    double x = value(c);
    if (!qIsNaN(x) && log) x = std::log10(x);
    v << x;
    if (!qIsNaN(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  if (m == Metric::Share || m == Metric::Roofline) lo = 0, hi = m == Metric::Roofline ? 1 : std::max(hi, 1e-12);
  QList<QColor> out;
  for (double x : v) out << (qIsNaN(x) ? kNoMetric : metric_ramp(hi > lo ? (x - lo) / (hi - lo) : 1.0));
  auto si = [](double x, const QString& unit) {  // 3 significant digits with an SI prefix
    const char* p[] = {"p", "n", "µ", "m", "", "k", "M", "G", "T"};
    int e = 4;
    while (std::fabs(x) >= 1000 && e < 8) x /= 1000, ++e;
    while (std::fabs(x) < 1 && x != 0 && e > 0) x *= 1000, --e;
    return QString::number(x, 'g', 3) + QStringLiteral(" ") + QString::fromUtf8(p[e]) + unit;
  };
  if (scale) {
    const QString name = m == Metric::Time ? tr("time") : m == Metric::Share ? tr("share of the run") : m == Metric::Flops ? tr("FLOPs")
                         : m == Metric::Bytes ? tr("bytes") : tr("distance from the roofline");
    if (m == Metric::Roofline && !lim.valid()) *scale = tr("colour: %1 — no measured limits for this device (Run > Measure limits)").arg(name);
    else if (lo > hi) *scale = tr("colour: %1 — no call has one").arg(name);
    else if (m == Metric::Roofline) *scale = tr("colour: %1, on the roof (light) to far below it (dark red)").arg(name);
    else if (m == Metric::Share) *scale = tr("colour: %1, 0% (light) to %2% (dark red)").arg(name).arg(hi * 100, 0, 'f', 1);
    else {
      const QString unit = m == Metric::Time ? QStringLiteral("s") : m == Metric::Flops ? QStringLiteral("FLOP") : QStringLiteral("B");
      *scale = tr("colour: %1, %2 (light) to %3 (dark red), log scale").arg(name, si(std::pow(10, lo), unit), si(std::pow(10, hi), unit));
    }
  }
  return out;
}

void GraphPane::set_text_scale(double scale) {
  if (scale == text_scale_) return;
  text_scale_ = scale;
  if (!full_.nodes.isEmpty()) show_input();  // laid out again for the new label size (a layout of its own, cached)
}

void GraphPane::update_input() {
  const Session& s = *selection_->session();
  input_ = collapsed() ? collapse(s, full_, clusters_, expanded_) : full_;
  input_.text_scale = text_scale_;
  QString title = title_text_;
  if (collapsed())
    title = tr("%1 [%2 nodes, %3 clusters, %4 open; double-click opens]")
                .arg(title_text_)
                .arg(full_.nodes.size())
                .arg(clusters_.heads.size())
                .arg(expanded_.size());
  title_->setText(title);
  title_->setToolTip(title);
  collapse_btn_->setVisible(collapsed() && !expanded_.isEmpty());
}

void GraphPane::show_input() {
  update_input();
  if (input_.nodes.size() > kMaxNodes) {
    cancel_layout();
    shown_.clear();
    clear_scene();
    items_.clear();
    return show_notice(tr("%1 nodes to draw: too many for one layout (the limit is %2). Collapse some clusters.")
                           .arg(input_.nodes.size())
                           .arg(kMaxNodes));
  }
  QByteArray key = input_.hash();
  if (key == shown_ || key == waiting_) {
    if (key == shown_) {
      stack_->setCurrentWidget(view_);
      minimap_->set_enabled(map_btn_->isChecked());
    }
    return;
  }
  cancel_layout();
  waiting_ = LayoutEngine::instance()->request(input_);
  if (!LayoutEngine::instance()->cached(waiting_)) {
    show_notice(tr("Laying out %1 nodes…").arg(input_.nodes.size()));
    cancel_btn_->show();
  }
}

void GraphPane::expand_cluster(int cluster) {
  if (!collapsed() || cluster < 0 || cluster >= clusters_.heads.size() || expanded_.contains(cluster)) return;
  const int node = -1 - cluster;
  // the drawing stays while only the cluster's own nodes are laid out, then they take its node's place
  const bool splice = !shown_.isEmpty() && shown_ == input_.hash() && waiting_.isEmpty() && sub_waiting_.isEmpty() && drawn_.nodes.contains(node);
  expanded_.insert(cluster);
  focus_ = clusters_.heads[cluster];  // the view stays at its zoom, centred on what was opened
  if (!splice) return show_input();
  update_input();  // (what is drawn once the cluster's layout is in)
  if (input_.nodes.size() > kMaxNodes) return show_input();
  const QList<int>& members = clusters_.members[cluster];
  const QSet<int> in(members.begin(), members.end());
  GraphInput sub;
  sub.left_to_right = input_.left_to_right;
  sub.text_scale = text_scale_;
  for (const auto& n : full_.nodes)
    if (in.contains(n.id)) sub.nodes.push_back(n);
  for (const auto& e : full_.edges)
    if (in.contains(e.first) && in.contains(e.second)) sub.edges.push_back(e);
  splice_node_ = node;
  sub_waiting_ = LayoutEngine::instance()->request(sub);
}

void GraphPane::splice_cluster(const GraphLayout& sub) {
  LayoutEngine::instance()->put(input_.hash(), splice_layout(drawn_, splice_node_, sub, input_));
  show_input();  // (finds the spliced layout cached)
}

void GraphPane::collapse_cluster(int cluster) {
  if (!expanded_.remove(cluster)) return;
  focus_ = -1 - cluster;
  show_input();
}

void GraphPane::collapse_all() {
  if (expanded_.isEmpty()) return;
  expanded_.clear();
  show_input();
}

QList<int> GraphPane::search(const QString& text) {
  const QList<int> old = matches_;
  matches_.clear();
  current_match_ = -1;
  const QString t = text.trimmed();
  if (!t.isEmpty()) {
    auto hit = [&](const QString& label) { return label.contains(t, Qt::CaseInsensitive); };
    QHash<int, bool> cluster_hit;
    if (collapsed())
      for (const auto& n : full_.nodes)
        if (hit(n.label)) cluster_hit[clusters_.of.value(n.id)] = true;
    for (const auto& n : input_.nodes)
      if (n.id < 0 ? cluster_hit.value(-1 - n.id) : hit(n.label)) matches_.push_back(n.id);
  }
  for (int id : old) restyle(id);
  for (int id : matches_) restyle(id);
  match_label_->setText(t.isEmpty() ? QString() : tr("%n match(es)", "", matches_.size()));
  return matches_;
}

int GraphPane::next_match() {
  if (matches_.isEmpty()) return INT_MIN;
  int old = current_match_ >= 0 ? matches_[current_match_] : INT_MIN;
  current_match_ = (current_match_ + 1) % matches_.size();
  const int id = matches_[current_match_];
  restyle(old);
  restyle(id);
  if (auto* it = items_.value(id)) {
    if (view_->transform().m11() < 0.6) view_->set_scale(1);
    view_->centerOn(it);
  }
  match_label_->setText(tr("%1 of %2").arg(current_match_ + 1).arg(matches_.size()));
  return id;
}

void GraphPane::restyle(int id) {
  QGraphicsRectItem* r = items_.value(id);
  if (!r) return;
  QPen pen(Qt::black, 0.8);
  if (kind_ == Kind::TensorGraph && split_.realized.contains(id)) pen = QPen(Qt::black, 2.2);  // a kernel's output
  if (lit_.contains(id)) pen = QPen(QColor(0x10, 0x50, 0xe0), 3);  // computed by the selected call
  if (marked_.contains(id)) pen = QPen(QColor(0xe0, 0x60, 0x00), 3);
  if (matches_.contains(id)) pen = QPen(QColor(0xff, 0xb0, 0x00), 4);
  if (current_match_ >= 0 && matches_.value(current_match_) == id) pen = QPen(QColor(0xd0, 0x00, 0xd0), 5);
  if (id == highlighted_ && highlighted_ >= 0) pen = QPen(QColor(0xe0, 0x20, 0x20), 2.5);  // (-1: none; a cluster's id is negative)
  if (id < 0) pen.setStyle(Qt::DashLine);
  r->setPen(pen);
}

void GraphPane::draw(const GraphLayout& l) {
  QElapsedTimer t;
  t.start();
  drawn_ = l;
  clear_scene();
  items_.clear();
  QPen edge_pen(palette().color(QPalette::Text), 0.9);
  for (const auto& p : l.edges) scene_->addPath(p, edge_pen)->setZValue(0);
  for (const auto& a : l.arrows) scene_->addPolygon(a, edge_pen, palette().color(QPalette::Text))->setZValue(0);
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(input_.node_font_px());
  for (const auto& n : input_.nodes) {
    QRectF r = l.nodes.value(n.id);
    if (r.isNull()) continue;
    auto* box = scene_->addRect(r, QPen(Qt::black, 0.8), n.fill);
    box->setZValue(1);
    box->setData(0, n.id);
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    QString tip = n.id < 0                     ? tr("%1\ndouble-click to expand").arg(n.label)
                  : kind_ == Kind::KernelGraph ? n.label
                                               : QStringLiteral("uop %1\n%2").arg(n.id).arg(n.label);
    if (kind_ == Kind::TensorGraph)
      if (auto it = split_.items_of.constFind(n.id); it != split_.items_of.constEnd()) {
        QStringList by;
        for (int item : it.value()) {
          const int call = split_.calls.value(item, -1);
          by << (call >= 0 ? QStringLiteral("%1 (#%2)").arg(selection_->session()->calls()[call].display_name())
                                 .arg(selection_->session()->calls()[call].counter)
                           : tr("item %1").arg(item));
        }
        tip += tr("\ncomputed by %1").arg(by.join(", ")) + (split_.realized.contains(n.id) ? tr("\n(stored: a kernel's output)") : QString());
      }
    // what the op (or the kernel's name) means, and the lesson that teaches it (viewer/model/glossary.h)
    const QString term = kind_ == Kind::KernelGraph ? n.label.section(QLatin1Char('\n'), 0, 0).trimmed()
                         : n.id >= 0               ? selection_->session()->uops().value(n.id).op
                                                   : QString();
    if (const QString g = glossary_text(term); !g.isEmpty()) tip += QStringLiteral("\n\n") + g;
    box->setToolTip(tip);
    auto* text = new QGraphicsSimpleTextItem(n.label.trimmed(), box);
    text->setFont(font);
    text->setBrush(Qt::black);
    QRectF tb = text->boundingRect();
    text->setPos(r.center() - QPointF(tb.width() / 2, tb.height() / 2));
    items_.insert(n.id, box);
  }
  font.setPixelSize(qRound(9 * input_.text_scale));
  for (const auto& [pos, text] : l.edge_labels) {
    auto* t = scene_->addSimpleText(text, font);
    t->setBrush(palette().color(QPalette::Text));
    QRectF tb = t->boundingRect();
    t->setPos(pos - QPointF(tb.width() / 2, tb.height() / 2));
    t->setZValue(2);
  }
  highlighted_ = kind_ == Kind::KernelGraph ? item_calls_.indexOf(selection_->current().call) : selection_->current().node;
  if (kind_ == Kind::KernelGraph && selection_->current().call < 0) highlighted_ = -1;
  search(search_->text());  // re-highlights the matches and the marked and selected nodes
  for (auto it = items_.begin(); it != items_.end(); ++it) restyle(it.key());
  scene_->setSceneRect(l.bounds.adjusted(-20, -20, 20, 20));
  stack_->setCurrentWidget(view_);
  // opening or closing a cluster keeps the zoom and centres on it; any other new graph is fitted
  if (focus_ != INT_MIN && items_.contains(focus_)) view_->centerOn(items_.value(focus_));
  else view_->fit();
  focus_ = INT_MIN;
  update_overview();  // (a kept zoom emits nothing)
  if (kind_ == Kind::KernelAst) reveal(highlighted_);  // (the node a source line selected, when the graph was laid out for it)
  place_minimap();
  minimap_->set_enabled(map_btn_->isChecked());
  LayoutEngine::note_ui_stall_ms(t.nsecsElapsed() / 1e6);
}

}  // namespace tsv
