#include "viewer/panes/stepper_pane.h"

#include <QButtonGroup>
#include <QElapsedTimer>
#include <QFontDatabase>
#include <QGraphicsLineItem>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>
#include <utility>

#include "viewer/graph/graph_view.h"
#include "viewer/model/rule_counts_model.h"
#include "viewer/model/session.h"
#include "viewer/model/stepper_model.h"
#include "viewer/model/uop_text.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/source_diff.h"

namespace tsv {

namespace {
const QColor kRemoved(0xd0, 0x1c, 0x1c);
const QColor kAdded(0x1a, 0x9a, 0x3a);
const QColor kRebuilt(0xe0, 0x8e, 0x00);  // amber
const QColor kRuleLine(0xff, 0xec, 0x9e);
// below this scale a node's 10 px label is too small to read
constexpr double kReadableScale = 0.85;
// faded: a node the step takes away (After) or brings (Before), and edges of the other side
constexpr double kFaded = 0.3;

// a node's outline for its mark ("added", "removed", "rebuilt", "gone", "coming", "" for none)
QPen mark_pen(const QString& mark) {
  if (mark == QLatin1String("added")) return QPen(kAdded, 3.5);
  if (mark == QLatin1String("removed")) return QPen(kRemoved, 3.5);
  if (mark == QLatin1String("rebuilt")) return QPen(kRebuilt, 2.2, Qt::DashLine);
  if (mark == QLatin1String("gone")) return QPen(kRemoved, 2.0);
  if (mark == QLatin1String("coming")) return QPen(kAdded, 2.0, Qt::DashLine);
  return QPen(Qt::black, 0.8);
}
}  // namespace

StepperPane::StepperPane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  model_ = new StepperModel(selection->session(), this);
  QWidget* left = build_step_lists();
  build_canvas();
  build_details();
  QHBoxLayout* bar = build_controls();
  title_->setContentsMargins(4, 2, 4, 2);
  // the steps beside the graph, the rule's source and the UOp diff under both (source lines are long)
  split_ = new QSplitter(Qt::Horizontal, this);
  split_->addWidget(left);
  split_->addWidget(stack_);
  split_->setStretchFactor(0, 2);
  split_->setStretchFactor(1, 3);
  split_->setChildrenCollapsible(false);
  outer_ = new QSplitter(Qt::Vertical, this);
  outer_->addWidget(split_);
  outer_->addWidget(details_);
  outer_->setStretchFactor(0, 3);
  outer_->setStretchFactor(1, 2);
  outer_->setChildrenCollapsible(false);
  // a short dock (a 1280 x 720 screen) still fits: the parts may shrink below their size hints
  split_->setMinimumHeight(20);
  details_->setMinimumHeight(26);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(title_);
  lay->addLayout(bar);
  lay->addWidget(outer_, 1);
  setFocusPolicy(Qt::StrongFocus);
  show_notice(tr("Select a context to step through its rewrites"));

  connect_signals();
}

// the steps (filtered by a rule) and every rule's hits, as two tabs under the filter bar
QWidget* StepperPane::build_step_lists() {
  steps_ = new QSortFilterProxyModel(this);
  steps_->setSourceModel(model_);
  steps_->setFilterRole(StepperModel::kRuleKeyRole);
  list_ = new QTableView(this);
  list_->setModel(steps_);
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

  // every rule's hits, sortable; a click shows only that rule's steps
  rule_counts_ = new RuleCountsModel(selection_->session(), this);
  rules_sorted_ = new QSortFilterProxyModel(this);
  rules_sorted_->setSourceModel(rule_counts_);
  rules_sorted_->setSortRole(RuleCountsModel::kSortRole);
  rules_view_ = new QTableView(this);
  rules_view_->setModel(rules_sorted_);
  rules_view_->setSortingEnabled(true);
  rules_view_->sortByColumn(RuleCountsModel::kRun, Qt::DescendingOrder);
  rules_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  rules_view_->setSelectionMode(QAbstractItemView::SingleSelection);
  rules_view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  rules_view_->setWordWrap(false);
  rules_view_->setAlternatingRowColors(true);
  rules_view_->verticalHeader()->hide();
  rules_view_->verticalHeader()->setDefaultSectionSize(rules_view_->fontMetrics().height() + 4);
  rules_view_->horizontalHeader()->setHighlightSections(false);
  rules_view_->setToolTip(tr("Every rule that fired: its hits in the whole run and in the selected context. Click one to "
                             "step through its matches only."));
  auto rule_clicked = [this](const QModelIndex& i) {
    if (i.isValid()) filter_rule(i.data(RuleCountsModel::kKeyRole).toString());
  };
  connect(rules_view_, &QTableView::clicked, this, rule_clicked);
  connect(rules_view_, &QTableView::activated, this, rule_clicked);

  // the filter, over both tabs: which rule's steps the list shows
  filter_bar_ = new QWidget(this);
  filter_label_ = new QLabel(filter_bar_);
  filter_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* show_all = new QToolButton(filter_bar_);
  show_all->setText(tr("All steps"));
  show_all->setToolTip(tr("Show every rule's steps again"));
  show_all->setFocusPolicy(Qt::NoFocus);
  connect(show_all, &QToolButton::clicked, this, [this] { filter_rule({}); });
  auto* fl = new QHBoxLayout(filter_bar_);
  fl->setContentsMargins(4, 1, 2, 1);
  fl->addWidget(filter_label_, 1);
  fl->addWidget(show_all);
  filter_bar_->hide();
  side_ = new QTabWidget(this);
  side_->setDocumentMode(true);
  side_->addTab(list_, tr("Steps"));
  side_->addTab(rules_view_, tr("Rules"));
  auto* left = new QWidget(this);
  auto* left_lay = new QVBoxLayout(left);
  left_lay->setContentsMargins(0, 0, 0, 0);
  left_lay->setSpacing(0);
  left_lay->addWidget(filter_bar_);
  left_lay->addWidget(side_, 1);
  return left;
}

// the graph's canvas, and the notice shown in its place
void StepperPane::build_canvas() {
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
}

// under the graph: the rule's source lines, and the matched UOp before and after
void StepperPane::build_details() {
  rule_where_ = new QLabel(this);
  rule_where_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  rule_where_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rule_where_->setContentsMargins(4, 1, 4, 1);
  rule_text_ = new QPlainTextEdit(this);
  rule_text_->setReadOnly(true);
  rule_text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  rule_text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  rule_text_->setFocusPolicy(Qt::ClickFocus);
  rule_text_->viewport()->installEventFilter(this);  // the rule's line stays in view as the box resizes
  auto* rule_box = new QWidget(this);
  auto* rule_lay = new QVBoxLayout(rule_box);
  rule_lay->setContentsMargins(0, 0, 0, 0);
  rule_lay->setSpacing(0);
  rule_lay->addWidget(rule_where_);
  rule_lay->addWidget(rule_text_, 1);
  diff_ = new SourceDiff(this);
  diff_->clear(tr("No step"));
  details_ = new QTabWidget(this);
  details_->setDocumentMode(true);
  details_->addTab(rule_box, tr("Rule source"));
  details_->addTab(diff_, tr("UOp diff"));
  details_->setTabToolTip(0, tr("The rule's row of its rule table in the engine's source, its line highlighted"));
  details_->setTabToolTip(1, tr("The matched UOp and what the rule returned, printed as UOp(Ops.…), the lines only one "
                                "side has marked"));
}

// the step's title, and its controls on one line: previous, next, Before / After, what the picture shows, Fit
QHBoxLayout* StepperPane::build_controls() {
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
  auto* before = button(tr("Before"), tr("The graph the rule matched; the nodes it replaces in red, what it brings faded (Space toggles)"));
  auto* after = button(tr("After"), tr("The graph after the rewrite; new nodes in green, what it took away faded and struck (Space toggles)"));
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

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 0, 4, 2);
  bar->setSpacing(2);
  for (auto* b : {prev, next, before, after}) bar->addWidget(b);
  bar->addSpacing(6);
  bar->addWidget(note_, 1);
  bar->addWidget(fit);
  return bar;
}

// the models' resets, the step list's clicks, the layout engine's answers, a clicked node, the window's selection
void StepperPane::connect_signals() {
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    list_->resizeColumnToContents(StepperModel::kStep);
    list_->setColumnWidth(StepperModel::kPass, 92);
    list_->setColumnWidth(StepperModel::kRule, 150);
    drawn_ = pending_window_ = StepperModel::Window{};  // the model's replay (and its node ids) start again
    update_filter_bar();
  });
  connect(rule_counts_, &QAbstractItemModel::modelReset, this, [this] {
    rules_view_->setColumnWidth(RuleCountsModel::kRule, 190);
    rules_view_->setColumnWidth(RuleCountsModel::kLocation, 150);
    rules_view_->resizeColumnToContents(RuleCountsModel::kRun);
  });
  connect(list_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!syncing_ && cur.isValid()) set_step(steps_->mapToSource(cur).row());
  });
  auto* engine = LayoutEngine::instance();
  connect(engine, &LayoutEngine::finished, this, [this](const QByteArray& key, const GraphLayout& l) {
    if (key != waiting_) return;
    waiting_.clear();
    if (pending_window_.pass >= 0) draw_union(l);
    else draw(l);
    emit layout_done();
  });
  connect(engine, &LayoutEngine::failed, this, [this](const QByteArray& key, const QString& err) {
    if (key != waiting_) return;
    waiting_.clear();
    pending_window_ = drawn_ = StepperModel::Window{};
    place_items_.clear(), edge_items_.clear();
    scene_->clear();
    show_notice(tr("Graph layout failed: %1").arg(err));
    emit layout_done();
  });
  connect(scene_, &QGraphicsScene::selectionChanged, this, [this] {
    auto items = scene_->selectedItems();
    if (items.size() != 1 || !items.front()->data(0).isValid()) return;
    int id = items.front()->data(0).toInt();
    if (!model_->is_replay_node(id)) selection_->select_node(id);
  });
  connect(selection_, &SelectionModel::changed, this, &StepperPane::on_selection);
}

QString StepperPane::title() const { return plain_title_; }
QString StepperPane::note() const { return note_->text(); }
bool StepperPane::linear_step(const Match& m) const {
  const Uop *before = model_->node(m.before), *after = model_->node(m.after);
  return before && after && before->op == QLatin1String("LINEAR") && after->op == QLatin1String("LINEAR");
}
// the graph's and the details' heights as they were before a linear pass's step took them (nothing when not on one)
void StepperPane::restore_heights() {
  if (!sizes_off_linear_.isEmpty()) outer_->setSizes(std::exchange(sizes_off_linear_, {}));
}
QString StepperPane::notice() const { return stack_->currentWidget() == notice_ ? notice_->text() : QString(); }

void StepperPane::show_notice(const QString& text) {
  notice_->setText(text);
  stack_->setCurrentWidget(notice_);
}

void StepperPane::set_union_limit(int places) {
  if (union_limit_ == places) return;
  union_limit_ = places;
  drawn_ = pending_window_ = StepperModel::Window{};
  show_step();
}

void StepperPane::on_selection(const Selection& sel) {
  const int old_context = model_->context();
  model_->set_context(sel.context);
  rule_counts_->set_context(model_->context());
  if (model_->context() != old_context) {
    step_ = -1;
    last_pass_ = sel.pass;
    int first = sel.pass >= 0 ? model_->first_step_of_pass(sel.pass) : -1;
    // showing one rule's steps: its first here
    if (!rule_filter_.isEmpty() && first < 0) first = filtered_step(0, +1);
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
  const QModelIndex idx = step_ >= 0 ? steps_->mapFromSource(model_->index(step_, 0)) : QModelIndex();
  if (idx.isValid()) {
    list_->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    list_->scrollTo(idx);
  } else {
    list_->selectionModel()->clearSelection();  // a step the filter hides
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

int StepperPane::filtered_step(int from, int direction) const {
  for (int k = from; k >= 0 && k < model_->step_count(); k += direction)
    if (steps_->mapFromSource(model_->index(k, 0)).isValid()) return k;
  return -1;
}

void StepperPane::filter_rule(const QString& key) {
  rule_filter_ = key;
  steps_->setFilterRegularExpression(key.isEmpty() ? QRegularExpression()
                                                   : QRegularExpression(QLatin1Char('^') + QRegularExpression::escape(key) + QLatin1Char('$')));
  update_filter_bar();
  if (key.isEmpty()) {
    move_to(step_ < 0 ? 0 : step_);
    if (step_ >= 0) list_->scrollTo(steps_->mapFromSource(model_->index(step_, 0)));
    return;
  }
  const int here = filtered_step(0, +1);
  if (here >= 0) {
    step_ = -1;  // re-selects the row in the filtered list even when it is the current step
    return set_step(here);
  }
  // not fired in this context: the first context where it did
  const Session& s = *selection_->session();
  for (int c = 0; c < s.contexts().size(); ++c)
    for (const Pass& p : s.contexts()[c].passes)
      for (const Match& m : p.matches)
        if (RuleCountsModel::key(m.rule, m.loc) == key) return selection_->select_context(c);
}

void StepperPane::update_filter_bar() {
  if (rule_filter_.isEmpty()) {
    filter_bar_->hide();
    return;
  }
  const QString name = rule_filter_.section(QLatin1Char('\n'), 1);
  filter_label_->setText(tr("Only <b>%1</b>: %n step(s) here", "", steps_->rowCount()).arg(name.toHtmlEscaped()));
  filter_label_->setToolTip(rule_filter_.section(QLatin1Char('\n'), 0, 0) + QLatin1Char(' ') + name);
  filter_bar_->show();
}

bool StepperPane::handle_key(int key) {
  const bool filtered = !rule_filter_.isEmpty();
  auto go = [this](int k) {
    if (k >= 0) set_step(k);
  };
  switch (key) {
    case Qt::Key_Left: filtered ? go(filtered_step(step_ - 1, -1)) : set_step(step_ - 1); return true;
    case Qt::Key_Right: filtered ? go(filtered_step(step_ + 1, +1)) : set_step(step_ + 1); return true;
    case Qt::Key_Home: filtered ? go(filtered_step(0, +1)) : set_step(0); return true;
    case Qt::Key_End: filtered ? go(filtered_step(model_->step_count() - 1, -1)) : set_step(model_->step_count() - 1); return true;
    case Qt::Key_Space: set_showing_after(!after_); return true;
  }
  return false;
}

bool StepperPane::eventFilter(QObject* watched, QEvent* e) {
  // the picture follows the canvas's size until the user zooms or pans it
  if (rule_text_ && watched == rule_text_->viewport()) {
    if (e->type() == QEvent::Resize && !rule_line_.isEmpty()) show_rule_line();
    return QWidget::eventFilter(watched, e);
  }
  if (view_ && watched == view_->viewport()) {
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
  // readable if the change fits at that scale, else as large as shows all of the change; a change spread too far
  // for that to be read (a replacement that is a node far off) shows the rewritten node, readable
  view_->fitInView(change_.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
  double s = std::min(kReadableScale, view_->transform().m11());
  QPointF at = change_.center();
  if (s < kReadableScale / 2 && !focus_.isNull()) s = kReadableScale, at = focus_.center();
  s = std::max(whole, s);
  view_->setTransform(QTransform::fromScale(s, s));
  view_->centerOn(at);
}

void StepperPane::keep_change_in_view() {
  // the zoom stays as it is: only pan, when the change (or, where it does not fit, the rewritten node) is out of view
  if (change_.isNull()) return;
  const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  if (visible.contains(change_)) return;
  const bool fits = change_.width() <= visible.width() && change_.height() <= visible.height();
  if (fits || focus_.isNull()) view_->centerOn(change_.center());
  else if (!visible.contains(focus_)) view_->centerOn(focus_.center());
}

void StepperPane::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (split_sized_ || width() < 100) return;
  split_sized_ = true;  // the list's size hint is wide: give the canvas the larger part once
  split_->setSizes({width() * 2 / 5, width() * 3 / 5});
  outer_->setSizes({height() * 64 / 100, height() * 36 / 100});
}

void StepperPane::keyPressEvent(QKeyEvent* e) {
  if (!handle_key(e->key())) QWidget::keyPressEvent(e);
}

void StepperPane::show_rule_line() {
  // a plain text edit scrolls by blocks: the rule's line in the middle of the lines the box shows
  const int visible = std::max(1, rule_text_->viewport()->height() / std::max(1, rule_text_->fontMetrics().lineSpacing()));
  rule_text_->verticalScrollBar()->setValue(std::max(0, rule_at_ - (visible - 1) / 2));
  rule_text_->horizontalScrollBar()->setValue(0);
}

void StepperPane::show_rule() {
  rule_text_->setExtraSelections({});
  rule_line_.clear();
  if (step_ < 0) {
    rule_where_->clear();
    rule_text_->clear();
    diff_->clear(tr("No step"));
    return;
  }
  const Session& s = *selection_->session();
  const Match& m = model_->match(step_);
  const int here_row = rule_counts_->row_of(RuleCountsModel::key(m.rule, m.loc));
  const int hits_here = here_row >= 0 ? rule_counts_->row(here_row).context : 0, hits_run = here_row >= 0 ? rule_counts_->row(here_row).run : 0;
  // one arg() call: a rule's name may hold a %1 ("x%1")
  rule_where_->setText(tr("<tt>%1</tt> &nbsp;<b>%2</b> &nbsp;<span>%n hit(s) in this context, %3 in the run</span>", "", hits_here)
                           .arg(m.loc.toHtmlEscaped(), m.rule.toHtmlEscaped(), QString::number(hits_run)));
  const RuleInfo* r = s.rule_info(m.rule, m.loc);
  if (!r || r->text.isEmpty() || r->first_line < 1) {
    rule_text_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // a sentence, not source lines
    rule_text_->setPlainText(r ? tr("The engine had no source of %1 to record.").arg(m.loc)
                               : tr("This trace carries no rule sources (it was recorded before traces held them): the "
                                    "rule is written at %1.").arg(m.loc));
  } else {
    // each line with its number; the located line highlighted and kept in view
    rule_text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    const QStringList lines = r->text.split(QLatin1Char('\n'));
    const int width = QString::number(r->first_line + lines.size() - 1).size();
    QStringList numbered;
    for (int i = 0; i < lines.size(); ++i)
      numbered << QStringLiteral("%1  %2").arg(r->first_line + i, width).arg(lines[i]);
    rule_text_->setPlainText(numbered.join(QLatin1Char('\n')));
    const int at = r->line - r->first_line;
    if (at >= 0 && at < lines.size()) {
      rule_line_ = lines[at];
      QTextEdit::ExtraSelection sel;
      sel.format.setBackground(kRuleLine);
      sel.format.setForeground(QColor(Qt::black));
      sel.format.setProperty(QTextFormat::FullWidthSelection, true);
      sel.cursor = QTextCursor(rule_text_->document()->findBlockByNumber(at));
      rule_text_->setExtraSelections({sel});
      rule_at_ = at;
      show_rule_line();
    }
  }
  // the matched UOp and the rule's result, as the engine prints UOps; a linear pass's programs as listings
  auto node = [this](int id) { return model_->node(id); };
  if (linear_step(m))
    diff_->set_sources(tr("Before: the program the pass read (uops by id)"), linear_program(m.before, node),
                       tr("After: the program it made"), linear_program(m.after, node), /*ignore_indentation=*/true);
  else
    diff_->set_sources(tr("Before: the matched UOp"), uop_repr(m.before, node), tr("After: what the rule returned"),
                       uop_repr(m.after, node), /*ignore_indentation=*/true);
}

void StepperPane::show_step() {
  show_rule();
  if (step_ < 0) {
    restore_heights();
    title_->clear();
    plain_title_.clear();
    note_->clear();
    if (!waiting_.isEmpty()) LayoutEngine::instance()->cancel(waiting_);
    waiting_.clear();
    pending_window_ = drawn_ = StepperModel::Window{};
    place_items_.clear(), edge_items_.clear();
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
  QStringList note;
  if (f.repeat_of >= 0) {
    note << tr("the same rewrite as step %1, met again through another user: nothing changes").arg(f.repeat_of + 1);
  } else {
    note << (after_ ? tr("after: %n new node(s) in green", "", f.added.size())
                    : tr("before: %n node(s) replaced, in red", "", f.removed.size()));
    const int rebuilt = (after_ ? f.rebuilt_after : f.rebuilt_before).size();
    if (rebuilt > 0) note << tr("%n user(s) rebuilt over it, amber", "", rebuilt);
  }
  if (!f.exact) note << tr("the replay could not place this match in the whole graph: the matched subgraph alone");
  if (st.match + 1 == p.matches.size() && after_ && f.exact)
    note << (model_->pass_reproduced(st.pass) ? tr("= the pass's recorded result")
                                              : tr("differs from the pass's recorded result"));

  // a pass over the linearized program rewrites one LINEAR of every uop: as a graph, hundreds of edges into one node.
  // The UOp diff lists the programs it read and made instead, and is put in front
  if (linear_step(m)) {
    if (!waiting_.isEmpty()) LayoutEngine::instance()->cancel(waiting_);
    waiting_.clear();
    pending_window_ = drawn_ = StepperModel::Window{};
    details_->setCurrentWidget(diff_);
    note_->clear();
    // the listings get most of the pane's height while the canvas holds only the notice (given back on leaving)
    if (sizes_off_linear_.isEmpty()) {
      sizes_off_linear_ = outer_->sizes();
      const int total = sizes_off_linear_.value(0) + sizes_off_linear_.value(1);
      outer_->setSizes({total / 4, total - total / 4});
      list_->scrollTo(list_->currentIndex());  // (the shorter list keeps the step in view)
    }
    return show_notice(tr("%1 rewrote the kernel's linearized program, %2 uops into %3: the UOp diff below lists both, a "
                          "uop a line")
                           .arg(p.name)
                           .arg(model_->node(m.before)->src.size())
                           .arg(model_->node(m.after)->src.size()));
  }
  restore_heights();
  // the steps of a pass share one layout: within it, a step only recolours
  const StepperModel::Window w = f.exact && union_limit_ > 0 ? model_->window(step_, union_limit_) : StepperModel::Window{};
  if (w.pass >= 0) {
    note << tr("steps %1–%2 laid out together").arg(w.first + 1).arg(w.last + 1);
    base_note_ = note.join(QStringLiteral(" · "));
    note_->setText(base_note_);
    note_->setToolTip(base_note_);
    auto same = [](const StepperModel::Window& a, const StepperModel::Window& b) {
      return a.pass == b.pass && a.first == b.first && a.last == b.last;
    };
    if (same(w, drawn_) && waiting_.isEmpty() && stack_->currentWidget() == view_) return recolour();
    if (same(w, pending_window_) && !waiting_.isEmpty()) return;  // drawn (at the current step) when it comes
    return request_union(w);
  }
  if (f.exact && w.step_places > union_limit_ && union_limit_ > 0)
    note << tr("this step's graphs hold %1 nodes, over %2: laid out on its own").arg(w.step_places).arg(union_limit_);
  const int root = after_ ? f.after : f.before;
  const QSet<int>& marked = after_ ? f.added : f.removed;
  // the change to keep in view when the graph is cut: the marked nodes and the matched node itself
  QSet<int> focus = marked;
  focus.insert(after_ ? model_->canonical(m.after) : model_->canonical(m.before));
  Picture pic = picture(root, marked, after_ ? f.rebuilt_after : f.rebuilt_before, focus);
  pic.after = after_;
  pic.focus = focus;
  pic.rewritten = after_ ? model_->canonical(m.after) : model_->canonical(m.before);
  pic.note += note.join(QStringLiteral(" · "));
  note_->setText(pic.note);
  note_->setToolTip(pic.note);
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
  pending_window_ = StepperModel::Window{};
  ++layout_requests_;
  waiting_ = LayoutEngine::instance()->request(p.graph);
  if (!old.isEmpty()) LayoutEngine::instance()->cancel(old);  // the same key twice: one of the two waits
  if (stack_->currentWidget() == notice_) show_notice(tr("Laying out %1 nodes…").arg(p.graph.nodes.size()));
}

void StepperPane::request_union(const StepperModel::Window& w) {
  GraphInput g;
  for (int place : w.places)
    if (const Uop* u = model_->node(place)) g.nodes.push_back({place, GraphPane::node_label(*u), GraphPane::op_color(u->op)});
  g.edges = w.edges;
  const QByteArray old = waiting_;
  pending_window_ = w;
  ++layout_requests_;
  waiting_ = LayoutEngine::instance()->request(g);
  if (!old.isEmpty()) LayoutEngine::instance()->cancel(old);
  if (stack_->currentWidget() == notice_) show_notice(tr("Laying out %1 nodes…").arg(g.nodes.size()));
}

void StepperPane::draw(const GraphLayout& l) {
  QElapsedTimer t;
  t.start();
  shown_ = pending_;
  drawn_ = StepperModel::Window{};
  place_items_.clear(), edge_items_.clear();
  scene_->clear();
  QPen edge_pen(palette().color(QPalette::Text), 0.9);
  for (const auto& p : l.edges) scene_->addPath(p, edge_pen)->setZValue(0);
  for (const auto& a : l.arrows) scene_->addPolygon(a, edge_pen, palette().color(QPalette::Text))->setZValue(0);
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(10);
  for (const auto& n : shown_.graph.nodes) {
    QRectF r = l.nodes.value(n.id);
    if (r.isNull()) continue;
    const bool marked = shown_.marked.contains(n.id), rebuilt = shown_.rebuilt.contains(n.id);
    const QString mark = marked    ? (shown_.after ? QStringLiteral("added") : QStringLiteral("removed"))
                         : rebuilt ? QStringLiteral("rebuilt")
                                   : QString();
    auto* box = scene_->addRect(r, mark_pen(mark), n.fill);
    box->setZValue(1);
    box->setData(0, n.id);
    box->setData(1, mark);
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
  focus_ = l.nodes.value(shown_.rewritten);
  auto_view_ = true;
  place_view();
  LayoutEngine::note_ui_stall_ms(t.nsecsElapsed() / 1e6);
}

void StepperPane::draw_union(const GraphLayout& l) {
  QElapsedTimer t;
  t.start();
  drawn_ = pending_window_;
  pending_window_ = StepperModel::Window{};
  place_items_.clear(), edge_items_.clear();
  scene_->clear();
  const QPen edge_pen(palette().color(QPalette::Text), 0.9);
  for (int i = 0; i < l.edges.size(); ++i) {
    const auto ends = l.edge_ends.value(i, {INT_MIN, INT_MIN});
    EdgeItem e{ends.first, ends.second, scene_->addPath(l.edges[i], edge_pen), nullptr};
    e.path->setZValue(0);
    edge_items_.push_back(e);
  }
  for (int i = 0; i < l.arrows.size(); ++i) {
    auto* a = scene_->addPolygon(l.arrows[i], edge_pen, palette().color(QPalette::Text));
    a->setZValue(0);
    const int e = l.arrow_edge.value(i, -1);
    if (e >= 0 && e < edge_items_.size()) edge_items_[e].arrow = a;
  }
  QFont font(QStringLiteral("DejaVu Sans"));
  font.setPixelSize(10);
  for (int place : drawn_.places) {
    const QRectF r = l.nodes.value(place);
    const Uop* u = model_->node(place);
    if (r.isNull() || !u) continue;
    PlaceItem it;
    it.label = GraphPane::node_label(*u);
    it.box = scene_->addRect(r, mark_pen({}), GraphPane::op_color(u->op));
    it.box->setZValue(1);
    it.box->setFlag(QGraphicsItem::ItemIsSelectable);
    it.text = new QGraphicsSimpleTextItem(it.label, it.box);
    it.text->setFont(font);
    it.text->setBrush(Qt::black);
    const QRectF tb = it.text->boundingRect();
    it.text->setPos(r.center() - QPointF(tb.width() / 2, tb.height() / 2));
    // struck through: taken away by the step
    it.strike = new QGraphicsLineItem(QLineF(r.bottomLeft() + QPointF(3, -3), r.topRight() + QPointF(-3, 3)), it.box);
    it.strike->setPen(QPen(kRemoved, 2.0));
    place_items_.insert(place, it);
  }
  scene_->setSceneRect(l.bounds.adjusted(-20, -20, 20, 20));
  stack_->setCurrentWidget(view_);
  recolour();
  auto_view_ = true;
  place_view();
  LayoutEngine::note_ui_stall_ms(t.nsecsElapsed() / 1e6);
}

void StepperPane::recolour() {
  if (step_ < 0 || drawn_.pass < 0) return;
  const StepperModel::Frame f = model_->frame(step_);
  const QSet<int> before = model_->nodes_under(f.before), after = model_->nodes_under(f.after);
  const QSet<int>& shown = after_ ? after : before;
  const QSet<int>& other = after_ ? before : after;
  QHash<int, int> shown_at, other_at;  // place -> the node there
  for (int id : shown) shown_at.insert(drawn_.place_of.value(id, id), id);
  for (int id : other) other_at.insert(drawn_.place_of.value(id, id), id);
  auto edges_of = [this](const QSet<int>& g) {
    QSet<QPair<int, int>> out;
    for (int id : g)
      if (const Uop* u = model_->node(id))
        for (int s : u->src) out.insert({drawn_.place_of.value(s, s), drawn_.place_of.value(id, id)});
    return out;
  };
  const QSet<QPair<int, int>> shown_edges = edges_of(shown), other_edges = edges_of(other);
  const QSet<int>& marked = after_ ? f.added : f.removed;
  const QSet<int>& rebuilt = after_ ? f.rebuilt_after : f.rebuilt_before;
  const int matched = after_ ? model_->canonical(model_->match(step_).after) : model_->canonical(model_->match(step_).before);
  const int rewritten = model_->canonical(model_->match(step_).before);
  change_ = focus_ = QRectF();
  for (auto it = place_items_.begin(); it != place_items_.end(); ++it) {
    PlaceItem& s = it.value();
    const int here = shown_at.value(it.key(), -1), there = other_at.value(it.key(), -1);
    const int id = here >= 0 ? here : there;
    if (id < 0) {  // in neither of the step's graphs
      s.box->setVisible(false);
      s.box->setData(0, QVariant());
      s.box->setData(1, QString());
      continue;
    }
    QString mark;
    if (here >= 0) mark = marked.contains(id) ? (after_ ? QStringLiteral("added") : QStringLiteral("removed"))
                        : rebuilt.contains(id) ? QStringLiteral("rebuilt")
                                               : QString();
    else mark = after_ ? QStringLiteral("gone") : QStringLiteral("coming");
    s.box->setVisible(true);
    s.box->setOpacity(here >= 0 ? 1.0 : kFaded);
    s.box->setPen(mark_pen(mark));
    s.box->setData(0, id);
    s.box->setData(1, mark);
    s.strike->setVisible(mark == QLatin1String("gone"));
    const Uop* u = model_->node(id);
    const QString label = u ? GraphPane::node_label(*u) : s.label;
    if (label != s.text->text()) {
      s.text->setText(label);
      const QRectF tb = s.text->boundingRect();
      s.text->setPos(s.box->rect().center() - QPointF(tb.width() / 2, tb.height() / 2));
    }
    s.box->setToolTip(QStringLiteral("uop %1\n%2%3")
                          .arg(model_->is_replay_node(id) ? tr("(built by the replay)") : QString::number(id), label,
                               mark == QLatin1String("gone")     ? tr("\n(taken away by this step)")
                               : mark == QLatin1String("coming") ? tr("\n(brought by this step)")
                                                                 : QString()));
    // the change the view keeps in sight: the rewrite's own nodes (its users, rebuilt up to the root, would be all)
    if ((!mark.isEmpty() && mark != QLatin1String("rebuilt")) || id == matched)
      change_ = change_.isNull() ? s.box->rect() : change_.united(s.box->rect());
    // the node the rule rewrote: where it was (struck through, After), else its replacement
    if (id == rewritten || (id == matched && focus_.isNull())) focus_ = s.box->rect();
  }
  const QColor text = palette().color(QPalette::Text);
  for (EdgeItem& e : edge_items_) {
    const bool main = shown_edges.contains({e.from, e.to});
    const bool ghost = !main && other_edges.contains({e.from, e.to}) && place_items_.value(e.from).box &&
                       place_items_.value(e.from).box->isVisible() && place_items_.value(e.to).box &&
                       place_items_.value(e.to).box->isVisible();
    for (QGraphicsItem* item : {static_cast<QGraphicsItem*>(e.path), static_cast<QGraphicsItem*>(e.arrow)}) {
      if (!item) continue;
      item->setVisible(main || ghost);
      item->setOpacity(main ? 1.0 : kFaded);
    }
    e.path->setPen(QPen(text, 0.9, main ? Qt::SolidLine : Qt::DashLine));
  }
  keep_change_in_view();
}

}  // namespace tsv
