// Compare with…: the same script on a second device in its own child, or a saved trace, beside the trace shown (the
// Compare dock, the Values pane's diff, a saved comparison)
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QResizeEvent>
#include <QSaveFile>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include "app/gui/devices.h"
#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "viewer/model/call_pairing.h"
#include "viewer/model/compare_file.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/model/session.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/timings_model.h"
#include "viewer/panes/access_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_diff.h"
#include "viewer/panes/timings_pane.h"
#include "viewer/panes/values_pane.h"

namespace tsgui {

namespace {
// the Compare dock's pane: the summary over the tabs, the summary scrolling within a third of the pane's height (two
// lines at least), so a short dock (a 720-px screen) keeps rows of the table in view
class CompareBox : public QWidget {
 public:
  using QWidget::QWidget;
  QScrollArea* summary = nullptr;

 protected:
  void resizeEvent(QResizeEvent* e) override {
    QWidget::resizeEvent(e);
    if (summary) summary->setMaximumHeight(std::max(2 * fontMetrics().lineSpacing() + 6, height() / 3));
  }
};
}  // namespace

// the Compare dock's pane: the summary over tabs (per call, outputs, sources, the second side's schedule, timings and
// console), with the second session, selection and run controller it shows; its controls: build_compare_controls()
QWidget* MainWindow::build_compare_dock() {
  compare_session_ = new tsv::Session(this);
  compare_selection_ = new tsv::SelectionModel(compare_session_, this);
  compare_controller_ = new RunController(this);
  compare_controller_->set_repeat(repeat_spin_ ? repeat_spin_->value() : 1);
  auto* box = new CompareBox(this);
  compare_label_ = new QLabel(tr("Choose a device under \"Compare with\" and run"), box);
  compare_label_->setWordWrap(true);
  compare_label_->setObjectName(QStringLiteral("compare_summary"));
  compare_label_->setContentsMargins(4, 2, 4, 2);
  divergence_label_ = new QLabel(box);
  divergence_label_->setObjectName(QStringLiteral("compare_divergence"));
  divergence_label_->setWordWrap(true);
  divergence_label_->setContentsMargins(4, 0, 4, 2);
  divergence_label_->setTextFormat(Qt::RichText);
  divergence_label_->hide();
  connect(divergence_label_, &QLabel::linkActivated, this, [this](const QString& link) {
    // "call:A:B": A the first run's call (-1: none), B the second's
    const QStringList parts = link.split(QLatin1Char(':'));
    if (parts.size() != 3) return;
    if (const int a = parts[1].toInt(); a >= 0) selection_->select_call(a);
    else if (const int b = parts[2].toInt(); b >= 0) compare_selection_->select_call(b);
  });
  // per call: both devices' times and their ratio; the selected kernel's two sources, diffed; the second device's
  // own schedule and timings
  auto* tabs = new QTabWidget(box);
  tabs->setObjectName(QStringLiteral("compare_tabs"));
  compare_model_ = new tsv::CompareModel(session_, compare_session_, this);
  compare_table_ = new QTableView(tabs);
  compare_table_->setModel(compare_model_);
  compare_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  compare_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  compare_table_->verticalHeader()->hide();
  compare_table_->horizontalHeader()->setStretchLastSection(true);
  connect(compare_model_, &QAbstractItemModel::modelReset, compare_table_, &QTableView::resizeColumnsToContents);
  // a row selects its call of the first run (a row of the second run only selects that call on its side)
  connect(compare_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid() || cur.row() >= compare_model_->rowCount()) return;
    const tsv::CallPair& p = compare_model_->pairing().rows()[cur.row()];
    if (p.a >= 0 && p.a != selection_->current().call) selection_->select_call(p.a);
    else if (p.a < 0 && p.b >= 0) compare_selection_->select_call(p.b);
  });
  tabs->addTab(compare_table_, tr("Per call"));
  // every value the script read back, element by element: what the two devices computed, not only how fast
  output_model_ = new tsv::OutputCompareModel(session_, compare_session_, this);
  auto* outputs = new QTableView(tabs);
  outputs->setObjectName(QStringLiteral("compare_outputs"));
  outputs->setModel(output_model_);
  outputs->setSelectionBehavior(QAbstractItemView::SelectRows);
  outputs->verticalHeader()->hide();
  outputs->horizontalHeader()->setStretchLastSection(true);
  connect(output_model_, &QAbstractItemModel::modelReset, outputs, &QTableView::resizeColumnsToContents);
  tabs->addTab(outputs, tr("Outputs"));
  // the selected kernel's two sources, or what each compiles to (host assembly, SPIR-V), diffed
  auto* sources = new QWidget(tabs);
  compare_asm_ = new QCheckBox(tr("Assembly / SPIR-V: what each source compiles to (x86-64 assembly of C and LLVM IR, "
                                  "SPIR-V of GLSL)"), sources);
  compare_asm_->setObjectName(QStringLiteral("compare_asm"));
  compare_diff_ = new tsv::SourceDiff(sources);
  auto* sources_lay = new QVBoxLayout(sources);
  sources_lay->setContentsMargins(0, 0, 0, 0);
  sources_lay->setSpacing(0);
  sources_lay->addWidget(compare_asm_);
  sources_lay->addWidget(compare_diff_, 1);
  connect(compare_asm_, &QCheckBox::toggled, this, [this] { update_compare_sources(); });
  tabs->addTab(sources, tr("Sources"));
  auto* split = new QSplitter(Qt::Horizontal, tabs);
  split->addWidget(new tsv::SchedulePane(compare_selection_, split));
  split->addWidget(new tsv::TimingsPane(compare_selection_, split));
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  tabs->addTab(split, tr("Second device's schedule and timings"));
  compare_console_ = new QPlainTextEdit(tabs);
  compare_console_->setObjectName(QStringLiteral("compare_console"));
  compare_console_->setReadOnly(true);
  compare_console_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  tabs->addTab(compare_console_, tr("Second device's console"));
  auto* lay = new QVBoxLayout(box);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  // the first divergence leads (what the two devices computed), then the totals, how they ran and how the calls paired
  auto* summary = new QWidget(box);
  auto* summary_lay = new QVBoxLayout(summary);
  summary_lay->setContentsMargins(0, 0, 0, 0);
  summary_lay->setSpacing(0);
  summary_lay->addWidget(divergence_label_);
  summary_lay->addWidget(compare_label_);
  summary_lay->addStretch(1);
  box->summary = new QScrollArea(box);
  box->summary->setObjectName(QStringLiteral("compare_summary_area"));
  box->summary->setWidget(summary);
  box->summary->setWidgetResizable(true);
  box->summary->setFrameShape(QFrame::NoFrame);
  box->summary->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  lay->addWidget(box->summary);
  lay->addWidget(tabs, 1);
  build_compare_controls();
  return box;
}

// the toolbar's Compare with… and what follows the second run, its trace and the main selection
void MainWindow::build_compare_controls() {
  compare_combo_ = new QComboBox(this);
  compare_combo_->addItem(tr("none"));
  compare_combo_->addItems(device_names());
  compare_combo_->setToolTip(tr("Compare with…: also run the script on this device, side by side"));
  if (auto* tb = findChild<QToolBar*>(QStringLiteral("run_toolbar"))) {
    QAction* before = run_act_;
    tb->insertWidget(before, new QLabel(tr("  Compare with "), this));
    tb->insertWidget(before, compare_combo_);
    tb->insertSeparator(before);
  }
  connect(compare_combo_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i != 0 || !compare_from_trace_.isEmpty()) return;  // (a comparison with a saved trace stays)
    compare_dock_->hide();
    values_->set_compare(nullptr, {});
    if (access_) access_->set_compare(nullptr, {}, {});
  });
  connect(compare_controller_, &RunController::finished, this, &MainWindow::on_compare_finished);
  connect(compare_controller_, &RunController::progress, this, [this] {
    if (!compare_controller_->running()) return;
    const TraceStream& st = compare_controller_->stream();
    compare_label_->setText(tr("Running on %1 (after %2 finished)… %3 s · %4 calls so far")
                                .arg(compare_device(), first_device())
                                .arg(compare_controller_->elapsed_ms() / 1000.0, 0, 'f', 1)
                                .arg(st.calls()));
  });
  connect(compare_session_, &tsv::Session::load_finished, this, &MainWindow::on_compare_loaded);
  connect(compare_controller_, &RunController::output, this, [this](const QString& text, bool is_err) {
    compare_console_->moveCursor(QTextCursor::End);
    compare_console_->insertPlainText(text);
    if (is_err) append_console(QStringLiteral("[%1] %2").arg(compare_device(), text), true);
  });
  // the main window's selected call selects the call of the other run paired with it (the same computation)
  connect(selection_, &tsv::SelectionModel::changed, this, [this](const tsv::Selection& sel) {
    if (const int theirs = compare_model_->pairing().b_of_a(sel.call); theirs >= 0) compare_selection_->select_call(theirs);
    update_compare_sources();
  });
}

QString MainWindow::compare_device() const {
  return compare_combo_->currentIndex() > 0 ? compare_combo_->currentText() : QString();
}

bool MainWindow::set_compare_device(const QString& dev, QString* error) {
  if (dev.isEmpty() || dev == "none") {
    compare_combo_->setCurrentIndex(0);
    return true;
  }
  QString err;
  const QString name = require_device(dev, &err);
  const int i = name.isEmpty() ? -1 : compare_combo_->findText(name);
  if (i <= 0) {
    if (error) *error = err.isEmpty() ? tr("unknown device '%1'").arg(dev) : err;
    return false;
  }
  compare_combo_->setCurrentIndex(i);
  return true;
}

QString MainWindow::first_label() const { return first_label_.isEmpty() ? first_device() : first_label_; }

QString MainWindow::second_label() const { return compare_from_trace_.isEmpty() ? compare_device() : compare_from_trace_; }

bool MainWindow::compare_with_trace(const QString& path, QString* error) {
  QString err;
  const QString name = QFileInfo(path).fileName();
  auto fail = [&](const QString& e) {
    append_console(tr("Cannot compare with %1\n%2\n").arg(name, e), true);
    status_->setText(tr("Cannot compare with %1: %2").arg(name, e));
    if (error) *error = e;
    return false;
  };
  if (session_->raw().isEmpty()) return fail(tr("run a script or open a trace first: there is nothing to compare it with"));
  if (controller_->running() || compare_controller_->running()) return fail(tr("a run is in progress (stop it first)"));
  if (tsv::is_compare_file_at(path)) return fail(tr("it is a saved comparison, not a trace: open it with File > Open"));
  // (a Session keeps what it holds when a load fails: the comparison shown stays)
  if (!compare_session_->load(path, &err)) return fail(err);
  auto side = [](const tsv::Session& s, const QString& what) { return QStringLiteral("%1 · %2").arg(s.device(), what); };
  const QString mine = opened_trace_.isEmpty() ? tr("this run") : QFileInfo(opened_trace_).fileName();
  first_label_ = side(*session_, mine);
  compare_from_trace_ = side(*compare_session_, name);
  if (first_label_ == compare_from_trace_) compare_from_trace_ += tr(" (saved)");
  if (!whatif_compare_labels_.first.isEmpty()) {  // a what-if step: its variables name each side
    first_label_ = whatif_compare_labels_.first;
    compare_from_trace_ = whatif_compare_labels_.second;
    whatif_compare_labels_ = {};
  }
  show_loaded_compare();
  status_->setText(tr("Comparing with %1: %2 calls beside %3").arg(name).arg(compare_session_->calls().size()).arg(session_->calls().size()));
  return true;
}

bool MainWindow::open_compare_file(const QString& path, QString* error) {
  tsv::CompareFile c;
  QString err;
  const QString name = QFileInfo(path).fileName();
  auto fail = [&](const QString& e) {
    append_console(tr("Cannot open the saved comparison %1\n%2\n").arg(name, e), true);
    status_->setText(tr("Cannot open the saved comparison: %1").arg(e));
    show_trace_error(tr("Cannot open the saved comparison %1 (nothing of it is shown):").arg(name), e);
    if (error) *error = e;
    return false;
  };
  if (!tsv::read_compare_file(path, &c, &err)) return fail(err);
  // both sides are checked before either replaces what the panes show
  tsv::Session probe;
  if (!probe.load_data(c.second, &err, path)) return fail(tr("its second trace: %1").arg(err));
  superseding_ = true;
  stop();
  superseding_ = false;
  if (!session_->load_data(c.first, &err, path)) return fail(tr("its first trace: %1").arg(err));
  clear_compare();
  trace_error_->hide();
  compare_session_->load_data(c.second, &err, path);
  opened_trace_ = path;
  first_label_ = c.first_label.isEmpty() ? session_->device() : c.first_label;
  compare_from_trace_ = c.second_label.isEmpty() ? compare_session_->device() : c.second_label;
  status_->setText(tr("%1: a saved comparison, %2 (%3 calls) beside %4 (%5 calls)")
                       .arg(name, first_label_).arg(session_->calls().size()).arg(compare_from_trace_).arg(compare_session_->calls().size()));
  setWindowTitle(tr("tinyscope — %1 (a saved comparison)").arg(name));
  select_first_kernel();
  show_trace_label();
  show_loaded_compare();
  return true;
}

bool MainWindow::save_compare(const QString& path, QString* error) {
  auto fail = [&](const QString& e) {
    append_console(e + "\n", true);
    status_->setText(e);
    if (error) *error = e;
    return false;
  };
  if (!compare_loaded_ || session_->raw().isEmpty() || compare_session_->raw().isEmpty())
    return fail(tr("No comparison to save: choose a device under \"Compare with\" and run, or compare with a saved trace"));
  QSaveFile f(path);
  const QByteArray data = tsv::write_compare_file({session_->raw(), compare_session_->raw(), first_label(), second_label()});
  if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size() || !f.commit())
    return fail(tr("cannot write %1: %2").arg(path, f.errorString()));
  status_->setText(tr("Comparison saved to %1").arg(path));
  return true;
}

void MainWindow::clear_compare(const QString& why) {
  compare_loaded_ = false;
  for (auto* g : {tensor_graph_, calls_graph_})
    if (g) g->set_ratio_source({}, {});
  save_compare_act_->setEnabled(false);
  first_label_.clear();
  compare_from_trace_.clear();
  if (!compare_session_->raw().isEmpty() || !compare_session_->calls().isEmpty()) compare_session_->clear();
  values_->set_compare(nullptr, {});
  if (access_) access_->set_compare(nullptr, {}, {});
  compare_console_->clear();
  divergence_label_->hide();
  update_compare_sources();
  if (!why.isEmpty()) {
    compare_label_->setText(why);
    compare_dock_->hide();
  }
}

void MainWindow::start_compare() {
  compare_pending_ = false;
  first_label_.clear();  // (the second side is this device's run, not a saved trace)
  compare_from_trace_.clear();
  const QString other = compare_device();
  if (other.isEmpty()) return;
  compare_label_->setText(tr("Running on %1 (after %2 finished)…").arg(other, device_combo_->currentText()));
  compare_controller_->set_program(controller_->program());
  compare_controller_->set_repeat(controller_->repeat());  // the same warm repeats for both
  compare_controller_->set_snapshots(controller_->snapshots());  // and the same buffers kept
  compare_controller_->set_beam(controller_->beam());
  compare_console_->clear();
  controller_->hold_warm_up(true);  // the first device's next child starts once this run is over
  compare_controller_->start(compare_name_, compare_source_, other);
}

void MainWindow::on_compare_finished(int code, bool stopped, const QString& trace, const QString&) {
  controller_->hold_warm_up(false);
  const QString dev = compare_device().isEmpty() ? tr("the other device") : compare_device();
  if (trace.isEmpty() || superseding_) {
    compare_session_->clear();
    const QString how = RunController::describe(compare_controller_->last_end());
    compare_label_->setText(stopped ? tr("%1: %2.").arg(dev, how) : tr("%1: the run failed (%2).").arg(dev, how));
    emit compare_finished(false);
    return check_settled();
  }
  compare_session_->load_async(trace);  // goes on in the load_finished handler
}

void MainWindow::on_compare_loaded(bool ok, const QString& err) {
  if (!ok) compare_label_->setText(tr("%1: %2").arg(compare_device(), err));
  else show_loaded_compare();
  emit compare_finished(ok);
  check_settled();
}

void MainWindow::show_loaded_compare() {
  compare_loaded_ = true;
  save_compare_act_->setEnabled(true);
  compare_model_->set_devices(first_label(), second_label());
  values_->set_compare(compare_session_, second_label());
  if (access_) access_->set_compare(compare_selection_, first_label(), second_label());
  // the graphs' ratio colours: a call's warm time here over its pair's in the compared run
  for (auto* g : {tensor_graph_, calls_graph_})
    if (g) g->set_ratio_source(
        [this](int call) {
          const int theirs = compare_model_->pairing().b_of_a(call);
          if (call < 0 || call >= session_->calls().size() || theirs < 0 || theirs >= compare_session_->calls().size()) return qQNaN();
          const double mine = tsv::TimingsModel::headline_of(session_->calls()[call]), other = tsv::TimingsModel::headline_of(compare_session_->calls()[theirs]);
          return mine > 0 && other > 0 ? mine / other : qQNaN();
        },
        second_label());
  compare_dock_->setWindowTitle(tr("Compare: %1").arg(second_label()));
  compare_table_->resizeColumnsToContents();  // (the headers name the two sides)
  if (auto* tabs = compare_dock_->findChild<QTabWidget*>(QStringLiteral("compare_tabs")); tabs && tabs->count() >= 5) {
    const bool saved = !compare_from_trace_.isEmpty();
    tabs->setTabText(3, saved ? tr("Second trace's schedule and timings") : tr("Second device's schedule and timings"));
    tabs->setTabText(4, saved ? tr("Second trace's console") : tr("Second device's console"));
    if (saved) {
      // what the saved run printed, as the trace kept it (older traces kept none)
      QString text;
      for (const auto& [is_err, chunk] : compare_session_->console()) text += chunk;
      compare_console_->setPlainText(!text.isEmpty() ? text
                                                     : tr("%1 is a trace recorded before traces kept the console: what the "
                                                          "script read back is in the Outputs tab.").arg(second_label()));
    }
  }
  if (!compare_dock_->isVisible()) {
    show_dock(compare_dock_, height() * 22 / 100);  // (within the screen: a tab where it has no room below)
    if (auto* split = compare_dock_->findChild<QSplitter*>()) split->setSizes({1000, 1000});
  }
  // the Access pane in view shows the two kernels side by side: its row tall enough for their grids
  if (auto* access = findChild<QDockWidget*>(QStringLiteral("access")); access && access_ && access_->isVisible() && !access->isFloating())
    resizeDocks({access}, {std::max(access->height(), height() * 30 / 100)}, Qt::Vertical);
  update_compare_summary();
  update_compare_sources();
  if (const int theirs = compare_model_->pairing().b_of_a(selection_->current().call); theirs >= 0) compare_selection_->select_call(theirs);
}

// the two devices' totals, once both runs are in (either may finish first)
void MainWindow::update_compare_sources() {
  const int call = selection_->current().call;
  const int row = compare_model_->row_of_a(call);
  if (row >= 0 && compare_table_->currentIndex().row() != row) compare_table_->setCurrentIndex(compare_model_->index(row, 0));
  if (!compare_loaded_) return compare_diff_->clear(tr("Compare with a second device and run"));
  const auto& mine = session_->calls();
  const int other = compare_model_->pairing().b_of_a(call);
  if (call < 0 || call >= mine.size() || mine[call].kind != "kernel")
    return compare_diff_->clear(tr("Select a kernel that ran on both devices"));
  if (other < 0) return compare_diff_->clear(tr("Call %1 (%2) has no counterpart on %3: nothing there computes the same")
                                                 .arg(call + 1)
                                                 .arg(mine[call].name, second_label()));
  const tsv::Call& theirs = compare_session_->calls()[other];
  const int ka = session_->kernel_context(mine[call]), kb = compare_session_->kernel_context(theirs);
  if (ka < 0 || kb < 0) return compare_diff_->clear(tr("The trace has no source for call %1").arg(call + 1));
  const tsv::Program& pa = session_->contexts()[ka].program;
  const tsv::Program& pb = compare_session_->contexts()[kb].program;
  if (!compare_asm_->isChecked())
    return compare_diff_->set_aligned_sources(tr("%1 on %2 (%3)").arg(pa.name, first_label(), pa.lang), pa.src,
                                              tsv::statement_keys(*session_, pa), tr("%1 on %2 (%3)").arg(pb.name, second_label(), pb.lang),
                                              pb.src, tsv::statement_keys(*compare_session_, pb));
  // what each compiles to: asked of `tinyscope asm` once per source, shown once both are in
  auto what = [](const QString& lang) { return lang == "glsl" ? tr("SPIR-V") : tr("x86-64 assembly"); };
  const bool a_runs = pa.lang != "interp", b_runs = pb.lang != "interp";
  const QString a = a_runs ? cached_assembly(pa.lang, pa.src) : tr("; %1 interprets its program: no machine code").arg(first_label());
  const QString b = b_runs ? cached_assembly(pb.lang, pb.src) : tr("; %1 interprets its program: no machine code").arg(second_label());
  if (a.isEmpty() || b.isEmpty()) {
    compare_diff_->clear(tr("Compiling both sources with tinyscope asm…"));
    auto again = [this, call](const QString&) {
      if (selection_->current().call == call && compare_asm_->isChecked()) update_compare_sources();
    };
    if (a.isEmpty()) request_assembly(pa.lang, pa.src, again);
    if (b.isEmpty()) request_assembly(pb.lang, pb.src, again);
    return;
  }
  compare_diff_->set_sources(tr("%1 on %2 (%3)").arg(pa.name, first_label(), what(pa.lang)), a,
                             tr("%1 on %2 (%3)").arg(pb.name, second_label(), what(pb.lang)), b);
}

void MainWindow::update_compare_summary() {
  if (!compare_loaded_ || controller_->running() || compare_controller_->running()) return;
  // per device: the first runs' total (the bars, DEBUG=2's times) and, when kernels were timed several times, the
  // total of each call's warm median (a call that ran once counts its one time)
  int repeats = 1;
  auto totals = [&repeats](const tsv::Session& s) {
    double first = 0, warm = 0;
    for (const auto& c : s.calls()) {
      first += c.seconds;
      warm += tsv::TimingsModel::headline_of(c);
      repeats = std::max(repeats, int(c.times.size()));
    }
    return std::pair{first * 1e6, warm * 1e6};
  };
  const auto [mine_first, mine_warm] = totals(*session_);
  const auto [theirs_first, theirs_warm] = totals(*compare_session_);
  const QString mine = first_label();
  const QString theirs = second_label();
  auto line = [repeats](const QString& dev, qsizetype calls, double first, double warm) {
    QString t = tr("%1: %2 calls, first runs %3 µs").arg(dev).arg(calls).arg(first, 0, 'f', 1);
    if (repeats > 2) t += tr(", warm medians %1 µs").arg(warm, 0, 'f', 1);
    return t;
  };
  QString how = tr("%1, then %2 once it had finished (one device at a time)").arg(mine, theirs);
  if (!compare_from_trace_.isEmpty()) {
    how = tr("Two saved traces, each timed where it ran");
    const QString sa = QFileInfo(session_->script()).fileName(), sb = QFileInfo(compare_session_->script()).fileName();
    if (sa != sb) how += tr(" (of different scripts: %1 and %2)").arg(sa, sb);
    else if (!sa.isEmpty()) how += tr(" (both of %1)").arg(sa);
  }
  if (repeats > 2) how += tr("; Timing %1×: warm medians are of the %2 runs after the first").arg(repeats).arg(repeats - 1);
  QString text = line(mine, session_->calls().size(), mine_first, mine_warm) + "   |   " +
                 line(theirs, compare_session_->calls().size(), theirs_first, theirs_warm) + "\n" + how;
  if (const int n = output_model_->rowCount(); n > 0) {
    const int bad = output_model_->differing_rows();
    text += bad ? tr("\nOutputs: %1 of the %2 values the script read differ (the Outputs tab)").arg(bad).arg(n)
           : n == 1 ? tr("\nOutputs: the one value the script read is equal, element by element")
                    : tr("\nOutputs: the %1 values the script read are equal, element by element").arg(n);
  }
  text += QLatin1Char('\n') + tsv::pairing_text(compare_model_->pairing(), mine, theirs);
  if (!compare_session_->partial().isEmpty()) text += tr("\n%1: PARTIAL TRACE (%2)").arg(theirs, compare_session_->partial());
  compare_label_->setText(text);
  // the first call whose output differs beyond its dtype's tolerance: a link that selects it
  const tsv::Divergence d = tsv::first_divergence(*session_, *compare_session_, compare_model_->pairing());
  const QString what = tsv::divergence_text(d, *session_, *compare_session_, mine, theirs).toHtmlEscaped();
  divergence_label_->setText(d.row < 0 ? what
                                       : QStringLiteral("<a href=\"call:%1:%2\">%3</a>").arg(d.a).arg(d.b).arg(what));
  divergence_label_->setToolTip(d.row < 0 ? QString() : tr("Click to select the call in every pane"));
  divergence_label_->show();
}

}  // namespace tsgui
