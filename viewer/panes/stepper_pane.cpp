#include "viewer/panes/stepper_pane.h"

#include <QButtonGroup>
#include <QElapsedTimer>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "viewer/graph/graph_view.h"
#include "viewer/model/session.h"
#include "viewer/model/stepper_model.h"
#include "viewer/panes/graph_pane.h"

namespace tsv {

namespace {
const QColor kRemoved(0xd0, 0x1c, 0x1c);
const QColor kAdded(0x1a, 0x9a, 0x3a);
// below this scale a node's 10 px label is too small to read
constexpr double kReadableScale = 0.85;
}  // namespace

StepperPane::StepperPane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  model_ = new StepperModel(selection->session(), this);
  list_ = new QTableView(this);
  list_->setModel(model_);
  list_->setSelectionBehavior(QAbstractItemView::SelectRows);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  list_->setWordWrap(false);
  list_->setAlternatingRowColors(true);
  list_->verticalHeader()->hide();
  list_->verticalHeader()->setDefaultSectionSize(list_->fontMetrics().height() + 4);
  list_->horizontalHeader()->setStretchLastSection(true);
  list_->horizontalHeader()->setHighlightSections(false);
  list_->installEventFilter(this);

  scene_ = new QGraphicsScene(this);
  view_ = new GraphView(this);
  // the picture is refitted whenever the canvas resizes: scrollbars that came and went with each fit would resize it
  // again, forever (panning by drag needs none)
  view_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  view_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  view_->setScene(scene_);
  view_->installEventFilter(this);
  view_->viewport()->installEventFilter(this);
  notice_ = new QLabel(this);
  notice_->setAlignment(Qt::AlignCenter);
  notice_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(view_);
  stack_->addWidget(notice_);

  title_ = new QLabel(this);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  note_ = new QLabel(this);
  note_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  note_->setEnabled(false);  // the quieter text color
  auto button = [this](const QString& text, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    b->setFocusPolicy(Qt::NoFocus);
    return b;
  };
  auto* prev = button(tr("◀"), tr("Previous rewrite (Left)"));
  auto* next = button(tr("▶"), tr("Next rewrite (Right)"));
  auto* before = button(tr("Before"), tr("The graph the rule matched; the nodes it replaces in red (Space toggles)"));
  auto* after = button(tr("After"), tr("The graph after the rewrite; new nodes in green (Space toggles)"));
  auto* fit = button(tr("Fit"), tr("Fit the whole graph (or double-click the background)"));
  before->setCheckable(true);
  after->setCheckable(true);
  after->setChecked(true);
  mode_ = new QButtonGroup(this);
  mode_->addButton(before, 0);
  mode_->addButton(after, 1);
  connect(prev, &QToolButton::clicked, this, [this] { handle_key(Qt::Key_Left); });
  connect(next, &QToolButton::clicked, this, [this] { handle_key(Qt::Key_Right); });
  connect(mode_, &QButtonGroup::idClicked, this, [this](int id) { set_showing_after(id == 1); });
  connect(fit, &QToolButton::clicked, view_, &GraphView::fit);

  // the step on one line, the controls and what the picture shows on the next
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 0, 4, 2);
  bar->setSpacing(2);
  for (auto* b : {prev, next, before, after}) bar->addWidget(b);
  bar->addSpacing(6);
  bar->addWidget(note_, 1);
  bar->addWidget(fit);
  title_->setContentsMargins(4, 2, 4, 2);
  split_ = new QSplitter(Qt::Horizontal, this);
  split_->addWidget(list_);
  split_->addWidget(stack_);
  split_->setStretchFactor(0, 2);
  split_->setStretchFactor(1, 3);
  split_->setChildrenCollapsible(false);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(title_);
  lay->addLayout(bar);
  lay->addWidget(split_, 1);
  setFocusPolicy(Qt::StrongFocus);
  show_notice(tr("Select a context to step through its rewrites"));

  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    list_->resizeColumnToContents(StepperModel::kStep);
    list_->setColumnWidth(StepperModel::kPass, 92);
    list_->setColumnWidth(StepperModel::kRule, 150);
  });
  connect(list_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!syncing_ && cur.isValid()) set_step(cur.row());
  });
  auto* engine = LayoutEngine::instance();
  connect(engine, &LayoutEngine::finished, this, [this](const QByteArray& key, const GraphLayout& l) {
    if (key != waiting_) return;
    waiting_.clear();
    draw(l);
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
    if (items.size() != 1) return;
    int id = items.front()->data(0).toInt();
    if (!model_->is_replay_node(id)) selection_->select_node(id);
  });
  connect(selection_, &SelectionModel::changed, this, &StepperPane::on_selection);
}

QString StepperPane::title() const { return plain_title_; }
QString StepperPane::note() const { return note_->text(); }

void StepperPane::show_notice(const QString& text) {
  notice_->setText(text);
  stack_->setCurrentWidget(notice_);
}

void StepperPane::on_selection(const Selection& sel) {
  const int old_context = model_->context();
  model_->set_context(sel.context);
  if (model_->context() != old_context) {
    step_ = -1;
    last_pass_ = sel.pass;
    int first = sel.pass >= 0 ? model_->first_step_of_pass(sel.pass) : -1;
    move_to(first >= 0 ? first : 0);
    return;
  }
  // a newly selected pass moves the stepper to its first rewrite
  if (sel.pass == last_pass_) return;
  last_pass_ = sel.pass;
  int first = sel.pass >= 0 ? model_->first_step_of_pass(sel.pass) : -1;
  if (first >= 0 && (step_ < 0 || model_->step(step_).pass != sel.pass)) move_to(first);
}

void StepperPane::set_step(int step) {
  move_to(step);
  // stepping into another pass selects it everywhere (the contexts tree, the graphs showing a pass's result)
  if (step_ < 0) return;
  const int pass = model_->step(step_).pass;
  const Selection& cur = selection_->current();
  if (cur.context != model_->context() || cur.pass == pass) return;
  last_pass_ = pass;
  selection_->select_pass(model_->context(), pass);
}

void StepperPane::move_to(int step) {
  const int n = model_->step_count();
  step = n == 0 ? -1 : std::clamp(step, 0, n - 1);
  if (step == step_ && step >= 0) return;
  step_ = step;
  syncing_ = true;
  if (step_ >= 0) {
    QModelIndex idx = model_->index(step_, 0);
    list_->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    list_->scrollTo(idx);
  } else {
    list_->selectionModel()->clearSelection();
  }
  syncing_ = false;
  show_step();
  emit step_changed(step_);
}

void StepperPane::set_showing_after(bool after) {
  if (after_ == after) return;
  after_ = after;
  mode_->button(after ? 1 : 0)->setChecked(true);
  show_step();
}

bool StepperPane::handle_key(int key) {
  switch (key) {
    case Qt::Key_Left: set_step(step_ - 1); return true;
    case Qt::Key_Right: set_step(step_ + 1); return true;
    case Qt::Key_Home: set_step(0); return true;
    case Qt::Key_End: set_step(model_->step_count() - 1); return true;
    case Qt::Key_Space: set_showing_after(!after_); return true;
  }
  return false;
}

bool StepperPane::eventFilter(QObject* watched, QEvent* e) {
  // the picture follows the canvas's size until the user zooms or pans it
  if (watched == view_->viewport()) {
    if (e->type() == QEvent::Resize && auto_view_ && stack_->currentWidget() == view_) place_view();
    if (e->type() == QEvent::Wheel || e->type() == QEvent::MouseButtonPress) auto_view_ = false;
    return QWidget::eventFilter(watched, e);
  }
  if (e->type() == QEvent::KeyPress) {
    auto* k = static_cast<QKeyEvent*>(e);
    if (k->modifiers() == Qt::NoModifier || k->modifiers() == Qt::KeypadModifier)
      if (handle_key(k->key())) return true;
  }
  return QWidget::eventFilter(watched, e);
}

void StepperPane::place_view() {
  view_->fit();
  // a graph too big to read whole in the pane: zoom in on the change (Fit shows all again)
  const double whole = view_->transform().m11();
  if (change_.isNull() || whole >= kReadableScale) return;
  // readable if the change fits at that scale, else as large as shows all of the change
  view_->fitInView(change_.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
  const double s = std::max(whole, std::min(kReadableScale, view_->transform().m11()));
  view_->setTransform(QTransform::fromScale(s, s));
  view_->centerOn(change_.center());
}

void StepperPane::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (split_sized_ || width() < 100) return;
  split_sized_ = true;  // the list's size hint is wide: give the canvas the larger part once
  split_->setSizes({width() * 9 / 20, width() * 11 / 20});
}

void StepperPane::keyPressEvent(QKeyEvent* e) {
  if (!handle_key(e->key())) QWidget::keyPressEvent(e);
}

void StepperPane::show_step() {
  if (step_ < 0) {
    title_->clear();
    plain_title_.clear();
    note_->clear();
    if (!waiting_.isEmpty()) LayoutEngine::instance()->cancel(waiting_);
    waiting_.clear();
    scene_->clear();
    const Session& s = *selection_->session();
    const int c = model_->context();
    if (c < 0) return show_notice(s.contexts().isEmpty() ? tr("No trace loaded") : tr("Select a context to step through its rewrites"));
    if (model_->unlisted_matches() > 0)
      return show_notice(tr("%1 recorded %n rewrite(s) without their rules (the trace was written with --trace "
                            "passes); run with --trace matches to step through them", "", model_->unlisted_matches())
                             .arg(s.contexts()[c].plain_name));
    return show_notice(tr("No rule fired in %1").arg(s.contexts()[c].plain_name));
  }
  const Pass& p = model_->pass_of(step_);
  const Match& m = model_->match(step_);
  const auto& st = model_->step(step_);
  title_->setText(tr("<b>%1</b>/%2 &nbsp;%3 <span>(%4/%5)</span> &nbsp;<b>%6</b> &nbsp;<tt>%7</tt>")
                      .arg(step_ + 1)
                      .arg(model_->step_count())
                      .arg(p.name.toHtmlEscaped())
                      .arg(st.match + 1)
                      .arg(p.matches.size())
                      .arg(m.rule.toHtmlEscaped(), m.loc.toHtmlEscaped()));
  plain_title_ = tr("%1/%2 %3 (%4/%5) %6 %7")
                     .arg(step_ + 1)
                     .arg(model_->step_count())
                     .arg(p.name)
                     .arg(st.match + 1)
                     .arg(p.matches.size())
                     .arg(m.rule, m.loc);
  title_->setToolTip(tr("%1: rule \"%2\" at %3").arg(p.name, m.rule, m.loc));

  const StepperModel::Frame f = model_->frame(step_);
  const int root = after_ ? f.after : f.before;
  const QSet<int>& marked = after_ ? f.added : f.removed;
  // the change to keep in view when the graph is cut: the marked nodes and the matched node itself
  QSet<int> focus = marked;
  focus.insert(after_ ? model_->canonical(m.after) : model_->canonical(m.before));
  Picture pic = picture(root, marked, after_ ? f.rebuilt_after : f.rebuilt_before, focus);
  pic.after = after_;
  pic.focus = focus;
  QStringList note;
  if (f.repeat_of >= 0) {
    note << tr("the same rewrite as step %1, met again through another user: nothing changes").arg(f.repeat_of + 1);
  } else {
    note << (after_ ? tr("after: %n new node(s) in green", "", f.added.size())
                    : tr("before: %n node(s) replaced, in red", "", f.removed.size()));
    const int rebuilt = (after_ ? f.rebuilt_after : f.rebuilt_before).size();
    if (rebuilt > 0) note << tr("%n user(s) rebuilt over it, dashed", "", rebuilt);
  }
  if (!f.exact) note << tr("the replay could not place this match in the whole graph: the matched subgraph alone");
  if (st.match + 1 == p.matches.size() && after_ && f.exact)
    note << (model_->pass_reproduced(st.pass) ? tr("= the pass's recorded result")
                                              : tr("differs from the pass's recorded result"));
  pic.note += note.join(QStringLiteral(" · "));
  note_->setText(pic.note);
  request(pic);
}

StepperPane::Picture StepperPane::picture(int root, const QSet<int>& marked, const QSet<int>& rebuilt,
                                          const QSet<int>& focus) const {
  Picture pic;
  QSet<int> all = model_->nodes_under(root);
  QSet<int> keep = all;
  if (all.size() > kMaxNodes) {
    // the part of the graph around the change: breadth first over sources and users from the focus nodes
    QHash<int, QList<int>> users;
    for (int id : all)
      if (const Uop* u = model_->node(id))
        for (int s : u->src) users[s].push_back(id);
    keep.clear();
    QList<int> queue;
    for (int id : focus)
      if (all.contains(id)) queue.push_back(id), keep.insert(id);
    if (queue.isEmpty()) queue.push_back(root), keep.insert(root);
    for (int i = 0; i < queue.size() && keep.size() < kMaxNodes; ++i) {
      const Uop* u = model_->node(queue[i]);
      QList<int> next = u ? u->src : QList<int>{};
      next += users.value(queue[i]);
      for (int n : next) {
        if (keep.size() >= kMaxNodes) break;
        if (!keep.contains(n)) keep.insert(n), queue.push_back(n);
      }
    }
    pic.note = tr("%1 of %2 nodes, around the change · ").arg(keep.size()).arg(all.size());
  }
  // sources before users, so the DOT text (and the layout cache key) is stable
  QList<int> ids(keep.begin(), keep.end());
  std::sort(ids.begin(), ids.end());
  for (int id : ids) {
    const Uop* u = model_->node(id);
    if (!u) continue;
    pic.graph.nodes.push_back({id, GraphPane::node_label(*u), GraphPane::op_color(u->op)});
    for (int s : u->src)
      if (keep.contains(s)) pic.graph.edges.push_back({s, id});
  }
  for (int id : marked)
    if (keep.contains(id)) pic.marked.insert(id);
  for (int id : rebuilt)
    if (keep.contains(id)) pic.rebuilt.insert(id);
  return pic;
}

void StepperPane::request(const Picture& p) {
  // one layout at a time: stepping quickly past big graphs withdraws the layouts nobody looks at any more (the
  // new request goes first, so the engine never looks idle in between)
  const QByteArray old = waiting_;
  pending_ = p;
  waiting_ = LayoutEngine::instance()->request(p.graph);
  if (!old.isEmpty()) LayoutEngine::instance()->cancel(old);  // the same key twice: one of the two waits
  if (stack_->currentWidget() == notice_) show_notice(tr("Laying out %1 nodes…").arg(p.graph.nodes.size()));
}

void StepperPane::draw(const GraphLayout& l) {
  QElapsedTimer t;
  t.start();
  shown_ = pending_;
  scene_->clear();
  QPen edge_pen(palette().color(QPalette::Text), 0.9);
  for (const auto& p : l.edges) scene_->addPath(p, edge_pen)->setZValue(0);
  for (const auto& a : l.arrows) scene_->addPolygon(a, edge_pen, palette().color(QPalette::Text))->setZValue(0);
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(10);
  const QColor mark = shown_.after ? kAdded : kRemoved;
  for (const auto& n : shown_.graph.nodes) {
    QRectF r = l.nodes.value(n.id);
    if (r.isNull()) continue;
    const bool marked = shown_.marked.contains(n.id), rebuilt = shown_.rebuilt.contains(n.id);
    QPen pen = marked ? QPen(mark, 3.5) : rebuilt ? QPen(mark, 1.6, Qt::DashLine) : QPen(Qt::black, 0.8);
    auto* box = scene_->addRect(r, pen, n.fill);
    box->setZValue(1);
    box->setData(0, n.id);
    box->setData(1, marked    ? (shown_.after ? QStringLiteral("added") : QStringLiteral("removed"))
                    : rebuilt ? QStringLiteral("rebuilt")
                              : QString());
    box->setFlag(QGraphicsItem::ItemIsSelectable);
    box->setToolTip(QStringLiteral("uop %1\n%2").arg(model_->is_replay_node(n.id) ? tr("(built by the replay)") : QString::number(n.id), n.label));
    auto* text = new QGraphicsSimpleTextItem(n.label, box);
    text->setFont(font);
    text->setBrush(Qt::black);
    QRectF tb = text->boundingRect();
    text->setPos(r.center() - QPointF(tb.width() / 2, tb.height() / 2));
  }
  scene_->setSceneRect(l.bounds.adjusted(-20, -20, 20, 20));
  stack_->setCurrentWidget(view_);
  change_ = QRectF();
  for (int id : shown_.focus)
    if (QRectF r = l.nodes.value(id); !r.isNull()) change_ = change_.isNull() ? r : change_.united(r);
  auto_view_ = true;
  place_view();
  LayoutEngine::note_ui_stall_ms(t.nsecsElapsed() / 1e6);
}

}  // namespace tsv
