#include "app/gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QScreen>
#include <QHeaderView>
#include <QTabWidget>
#include <QTableView>
#include <QCloseEvent>
#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QRegularExpression>
#include <QToolButton>
#include <QJsonObject>
#include <QScrollBar>
#include <QSaveFile>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTemporaryFile>
#include <QTextBlock>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <cstdio>

#include "app/gui/devices.h"
#include "app/gui/limits_measure.h"
#include "app/gui/run_controller.h"
#include "app/gui/tour.h"
#include "app/gui/stall_probe.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/model/compare_file.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/panes/code_editor.h"
#include "viewer/panes/source_diff.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/roofline_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/source_highlighter.h"
#include "viewer/panes/stepper_pane.h"
#include "viewer/panes/timings_pane.h"
#include "viewer/panes/values_pane.h"

namespace tsgui {

namespace {
QPalette make_palette(bool dark) {
  if (!dark) return QApplication::style()->standardPalette();
  QPalette p;
  QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xdf, 0xe1, 0xe5), mid(0x5a, 0x5d, 0x63);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, QColor(0x6c, 0xa0, 0xff));
  p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, mid);
  p.setColor(QPalette::PlaceholderText, mid.lighter(130));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, mid.lighter(120));
  return p;
}

QFont fixed_font() {
  QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  f.setPointSize(std::max(9, f.pointSize()));
  return f;
}
}  // namespace

MainWindow::MainWindow(const QString& examples_dir, bool restore_layout, QWidget* parent)
    : QMainWindow(parent), examples_dir_(examples_dir), restore_layout_(restore_layout) {
  setWindowTitle(QStringLiteral("tinyscope"));
  setDockNestingEnabled(true);
  session_ = new tsv::Session(this);
  selection_ = new tsv::SelectionModel(session_, this);
  controller_ = new RunController(this);

  // ---- toolbar
  auto* tb = addToolBar(tr("Run"));
  tb->setObjectName(QStringLiteral("run_toolbar"));
  tb->setMovable(false);
  script_combo_ = new QComboBox(this);
  script_combo_->setMinimumContentsLength(18);
  script_combo_->setToolTip(tr("Example script"));
  QDir ex(examples_dir_);
  for (const auto& f : ex.entryList({QStringLiteral("*.py")}, QDir::Files, QDir::Name))
    script_combo_->addItem(f, ex.filePath(f));
  device_combo_ = new QComboBox(this);
  device_combo_->addItems(device_names());  // the engine's own list
  device_combo_->setToolTip(tr("Device (DEV)"));
  tb->addWidget(new QLabel(tr(" Script "), this));
  tb->addWidget(script_combo_);
  tb->addWidget(new QLabel(tr("  Device "), this));
  tb->addWidget(device_combo_);
  // each kernel runs this many times so the Timings pane can show the spread of its timings
  repeat_spin_ = new QSpinBox(this);
  repeat_spin_->setRange(1, 100);
  repeat_spin_->setValue(QSettings().value(QStringLiteral("run/repeat"), 5).toInt());
  repeat_spin_->setSuffix(tr(" ×"));
  repeat_spin_->setToolTip(tr("Timing runs per kernel: the Timings pane shows their spread (a kernel that writes memory it reads is re-run on its restored inputs, so results never change)"));
  controller_->set_repeat(repeat_spin_->value());
  connect(repeat_spin_, &QSpinBox::valueChanged, this, [this](int n) {
    controller_->set_repeat(n);
    if (compare_controller_) compare_controller_->set_repeat(n);
    QSettings().setValue(QStringLiteral("run/repeat"), n);
  });
  tb->addWidget(new QLabel(tr("  Timing "), this));
  tb->addWidget(repeat_spin_);
  // BEAM=N: each kernel's opts searched by timing candidates on the device (0: the hand-coded opts)
  beam_spin_ = new QSpinBox(this);
  beam_spin_->setObjectName(QStringLiteral("beam"));
  beam_spin_->setRange(0, 8);
  beam_spin_->setSpecialValueText(tr("off"));
  beam_spin_->setValue(QSettings().value(QStringLiteral("run/beam"), 0).toInt());
  beam_spin_->setToolTip(tr("BEAM=N: search each kernel's opts by timing candidates on the device, keeping the N best each round "
                            "(the found opts are cached on disk, so a second run only compiles them); off: the hand-coded opts"));
  controller_->set_beam(beam_spin_->value());
  connect(beam_spin_, &QSpinBox::valueChanged, this, [this](int n) {
    controller_->set_beam(n);
    QSettings().setValue(QStringLiteral("run/beam"), n);
  });
  tb->addWidget(new QLabel(tr("  BEAM "), this));
  tb->addWidget(beam_spin_);
  // TS_OPTS=extended: the search also tries what the reference's opts cannot reach (register tiles in one step)
  extended_box_ = new QCheckBox(tr("extended"), this);
  extended_box_->setObjectName(QStringLiteral("beam_extended"));
  extended_box_->setChecked(QSettings().value(QStringLiteral("run/extended"), false).toBool());
  extended_box_->setToolTip(tr("TS_OPTS=extended: BEAM also searches beyond the reference's opts (register tiles of 16 or 32 columns "
                               "by 4 or 8 rows in one step); the kernel names still follow the opts. Only with BEAM on"));
  extended_box_->setEnabled(beam_spin_->value() > 0);
  controller_->set_extended(extended_box_->isChecked());
  connect(extended_box_, &QCheckBox::toggled, this, [this](bool on) {
    controller_->set_extended(on);
    QSettings().setValue(QStringLiteral("run/extended"), on);
  });
  connect(beam_spin_, &QSpinBox::valueChanged, extended_box_, [this](int n) { extended_box_->setEnabled(n > 0); });
  tb->addWidget(extended_box_);
  tb->addSeparator();
  run_act_ = tb->addAction(QIcon(QStringLiteral(":/icons/run.svg")), tr("Run"), this, &MainWindow::run);
  run_act_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  run_act_->setToolTip(tr("Run the script (Ctrl+R)"));
  stop_act_ = tb->addAction(QIcon(QStringLiteral(":/icons/stop.svg")), tr("Stop"), this, &MainWindow::stop);
  stop_act_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
  stop_act_->setToolTip(tr("Stop the run: kills its process (Ctrl+.)"));
  stop_act_->setEnabled(false);
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

  // ---- panes
  editor_ = new tsv::CodeEditor(this);
  editor_->setFont(fixed_font());
  editor_->setLineWrapMode(QPlainTextEdit::NoWrap);
  console_ = new QPlainTextEdit(this);
  console_->setReadOnly(true);
  console_->setFont(fixed_font());
  console_->setMaximumBlockCount(5000);
  contexts_ = new tsv::ContextsPane(selection_, this);
  schedule_ = new tsv::SchedulePane(selection_, this);
  source_ = new tsv::SourcePane(selection_, this);
  timings_ = new tsv::TimingsPane(selection_, this);
  tensor_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::TensorGraph, selection_, this);
  kernel_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::KernelAst, selection_, this);
  calls_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::KernelGraph, selection_, this);

  // the centre: the tensor graph, under a banner that says why a trace could not be opened (hidden otherwise)
  auto* central = new QWidget(this);
  auto* central_lay = new QVBoxLayout(central);
  central_lay->setContentsMargins(0, 0, 0, 0);
  central_lay->setSpacing(0);
  trace_error_ = new QLabel(central);
  trace_error_->setObjectName(QStringLiteral("trace_error"));
  trace_error_->setWordWrap(true);
  trace_error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  trace_error_->setStyleSheet(QStringLiteral("QLabel { background: #fbe3e4; color: #8a1f24; border: 1px solid #e8a3a8; padding: 8px; }"));
  trace_error_->hide();
  central_lay->addWidget(trace_error_);
  central_lay->addWidget(tensor_graph_, 1);
  setCentralWidget(central);
  auto* d_script = add_dock(tr("Script"), QStringLiteral("script"), editor_, Qt::LeftDockWidgetArea);
  auto* d_ctx = add_dock(tr("Contexts"), QStringLiteral("contexts"), contexts_, Qt::LeftDockWidgetArea);
  auto* d_console = add_dock(tr("Console"), QStringLiteral("console"), console_, Qt::LeftDockWidgetArea);
  auto* d_ast = add_dock(tr("Kernel AST"), QStringLiteral("kernel_ast"), kernel_graph_, Qt::RightDockWidgetArea);
  auto* d_src = add_dock(tr("Source"), QStringLiteral("source"), source_, Qt::RightDockWidgetArea);
  auto* d_sched = add_dock(tr("Schedule"), QStringLiteral("schedule"), schedule_, Qt::BottomDockWidgetArea);
  auto* d_time = add_dock(tr("Timings"), QStringLiteral("timings"), timings_, Qt::BottomDockWidgetArea);
  splitDockWidget(d_sched, d_time, Qt::Horizontal);
  // the kernel split drawn: a tab over the schedule's table, shown first
  auto* d_kgraph = add_dock(tr("Kernel graph"), QStringLiteral("kernel_graph"), calls_graph_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(d_sched, d_kgraph);
  // the buffer viewer: the values the script read back, a tab beside the timings
  values_ = new tsv::ValuesPane(selection_, this);
  auto* d_values = add_dock(tr("Values"), QStringLiteral("values"), values_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(d_time, d_values);
  // the roofline of the run's device: a tab beside the timings
  roofline_ = new tsv::RooflinePane(selection_, this);
  tabifyDockWidget(d_time, add_dock(tr("Roofline"), QStringLiteral("roofline"), roofline_, Qt::BottomDockWidgetArea));
  default_docks_ = {d_script, d_ctx, d_console, d_ast, d_src, d_sched, d_time};
  build_compare_dock();
  default_layout();
  // the rewrite stepper under the kernel AST (both in view: the AST a kernel's rewrites produce, and the steps)
  auto* d_step = add_dock(tr("Rewrite stepper"), QStringLiteral("stepper"), new tsv::StepperPane(selection_, this), Qt::RightDockWidgetArea);
  splitDockWidget(d_ast, d_step, Qt::Vertical);
  default_docks_.push_back(d_step);
  default_layout();
  d_kgraph->raise();
  d_time->raise();
  // the tour: a tab beside the console, shown when Help > Tour starts it
  tour_ = new Tour(this);
  tour_dock_ = add_dock(tr("Tour"), QStringLiteral("tour"), tour_, Qt::LeftDockWidgetArea);
  tabifyDockWidget(d_console, tour_dock_);
  tour_dock_->hide();

  // ---- menus
  build_file_menu();
  auto* view = menuBar()->addMenu(tr("&View"));
  dark_act_ = view->addAction(tr("Dark theme"));
  dark_act_->setCheckable(true);
  connect(dark_act_, &QAction::toggled, this, &MainWindow::set_dark);
  view->addSeparator();
  for (auto* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  large_act_ = view->addAction(tr("Larger text (projector)"));
  large_act_->setCheckable(true);
  large_act_->setToolTip(tr("Every pane's text 1.4 times as large, for a projector or a talk"));
  connect(large_act_, &QAction::toggled, this, &MainWindow::set_large_text);
  auto* run_menu = menuBar()->addMenu(tr("&Run"));
  run_menu->addAction(run_act_);
  run_menu->addAction(stop_act_);
  run_menu->addSeparator();
  snapshots_act_ = run_menu->addAction(tr("Record every call's buffers"));
  snapshots_act_->setCheckable(true);
  snapshots_act_->setToolTip(tr("Keep each call's output buffer in the trace, read back right after the call ran, so the Values "
                                "pane shows any buffer after any call (calls then run one at a time: slower)"));
  connect(snapshots_act_, &QAction::toggled, this, [this](bool on) {
    controller_->set_snapshots(on);
    if (restore_layout_) QSettings().setValue("run/snapshots", on);
  });
  snapshots_act_->setChecked(restore_layout_ && QSettings().value("run/snapshots", false).toBool());
  run_menu->addAction(tr("Measure limits for this device"), this, &MainWindow::measure_limits)
      ->setToolTip(tr("tinyscope bench --limits: the device's memory bandwidth and peak, for the Roofline pane's roof"));
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("Keyboard shortcuts…"), QKeySequence::HelpContents, this,
                  [this] { QMessageBox::information(this, tr("Keyboard shortcuts"), shortcuts_text()); });
  help->addAction(tr("Legend…"), this, [this] { QMessageBox::information(this, tr("Legend"), legend_text()); });
  help->addAction(tr("Tour of the pipeline"), QKeySequence(Qt::Key_F2), this, &MainWindow::start_tour);

  status_ = new QLabel(tr("Ready"), this);
  statusBar()->addWidget(status_, 1);
  // a run in progress (elapsed time, calls so far), then a partial trace's label
  run_label_ = new QLabel(this);
  run_label_->setObjectName(QStringLiteral("run_progress"));
  run_label_->setContentsMargins(6, 0, 6, 0);
  run_label_->hide();
  statusBar()->addPermanentWidget(run_label_);
  // a BEAM search in progress: the candidates of its round, and Cancel (stops the run; what it recorded is kept)
  beam_bar_ = new QProgressBar(this);
  beam_bar_->setObjectName(QStringLiteral("beam_progress"));
  beam_bar_->setMaximumWidth(420);
  beam_bar_->setMinimumWidth(260);
  beam_bar_->hide();
  beam_cancel_ = new QToolButton(this);
  beam_cancel_->setObjectName(QStringLiteral("beam_cancel"));
  beam_cancel_->setText(tr("Cancel"));
  beam_cancel_->setToolTip(tr("Cancel the search: stops the run (Ctrl+.)"));
  beam_cancel_->hide();
  connect(beam_cancel_, &QToolButton::clicked, this, &MainWindow::stop);
  statusBar()->addPermanentWidget(beam_bar_);
  statusBar()->addPermanentWidget(beam_cancel_);
  // Run > Measure limits for this device, while it measures: a busy bar and Cancel
  limits_measure_ = new LimitsMeasure(this);
  statusBar()->addPermanentWidget(limits_measure_);
  connect(limits_measure_, &LimitsMeasure::finished, this, [this](bool ok, const QString& dev, const QString& summary) {
    append_console(tr("\n$ tinyscope bench --limits --dev %1\n%2").arg(dev, limits_measure_->output()), !ok);
    status_->setText(ok ? tr("Limits of %1 measured: %2. Run again: the trace carries them.").arg(dev, summary)
                        : tr("Measuring the limits of %1: %2").arg(dev, summary));
    if (ok) roofline_->set_measured(dev, summary);
  });
  connect(roofline_, &tsv::RooflinePane::run_again, this, &MainWindow::run);

  // ---- wiring
  connect(script_combo_, &QComboBox::activated, this, [this](int i) { open_script(script_combo_->itemData(i).toString()); });
  connect(selection_, &tsv::SelectionModel::changed, this, [this](const tsv::Selection& sel) {
    const tsv::Uop* u = sel.node >= 0 ? session_->uop(sel.node) : nullptr;
    if (!u) return;
    QStringList shape;
    for (qint64 d : u->shape) shape << QString::number(d);
    status_->setText(tr("uop %1: %2 %3 shape (%4) arg %5 on %6, %7 source(s)")
                         .arg(sel.node)
                         .arg(u->op, QString(u->dtype).remove("dtypes."), shape.join(", "),
                              u->arg.size() > 200 ? u->arg.left(200) + QStringLiteral("…") : u->arg,
                              u->device.isEmpty() ? QStringLiteral("-") : u->device)
                         .arg(u->src.size()));
  });
  // the script's lines that ran schedules: a dot in the margin (click: select the schedule's first call; again: the
  // line's next schedule), and the line of the selected call's schedule lit
  connect(session_, &tsv::Session::loaded, this, &MainWindow::update_script_marks);
  connect(editor_, &tsv::CodeEditor::margin_clicked, this, &MainWindow::select_script_line);
  connect(selection_, &tsv::SelectionModel::changed, this, [this] { update_editor_selections(); });
  connect(controller_, &RunController::output, this, &MainWindow::append_console);
  connect(controller_, &RunController::finished, this, &MainWindow::on_run_finished);
  connect(controller_, &RunController::progress, this, &MainWindow::show_progress);
  connect(session_, &tsv::Session::load_finished, this, &MainWindow::on_trace_loaded);
  connect(session_, &tsv::Session::loaded, trace_error_, &QLabel::hide);
  connect(source_, &tsv::SourcePane::assembly_wanted, this, &MainWindow::disassemble);
  if (qEnvironmentVariableIntValue("TINYSCOPE_PERF") > 0) set_measuring(true, true);
  connect(tsv::LayoutEngine::instance(), &tsv::LayoutEngine::idle, this, &MainWindow::check_settled);
  for (auto* g : {tensor_graph_, kernel_graph_, calls_graph_}) connect(g, &tsv::GraphPane::layout_done, this, &MainWindow::check_settled);

  QSettings settings;
  if (!restore_layout_ || !restoreGeometry(settings.value("window/geometry").toByteArray())) {
    // 1500 x 950, or the screen's available area where that is smaller (a 1280 x 720 projector)
    QSize size(1500, 950);
    if (const QScreen* sc = screen() ? screen() : QGuiApplication::primaryScreen()) size = size.boundedTo(sc->availableGeometry().size());
    resize(size);
  }
  default_layout();
  if (restore_layout_) {
    restoreState(settings.value("window/state").toByteArray());
    // a saved device this build does not have (any more) is said so, never swapped silently
    const QString saved = settings.value("run/device").toString();
    QString err;
    if (!saved.isEmpty() && !set_device(saved, &err)) {
      device_combo_->setCurrentIndex(0);
      report_device_error(tr("The saved device is unknown (%1): using %2.").arg(err, device_combo_->currentText()),
                          tr("saved device %1 unknown: using %2").arg(saved, device_combo_->currentText()));
    }
    const QString saved_compare = settings.value("run/compare").toString();
    if (!set_compare_device(saved_compare, &err)) {
      set_compare_device({});
      report_device_error(tr("The saved compare device is unknown (%1): no comparison.").arg(err),
                          tr("saved compare device %1 unknown").arg(saved_compare));
    }
  }
  bool dark = restore_layout_ && settings.value("view/dark", false).toBool();
  dark_act_->setChecked(dark);
  set_dark(dark);
  if (restore_layout_ && settings.value("view/large_text", false).toBool()) large_act_->setChecked(true);

  int tut = script_combo_->findText(QStringLiteral("tutorial.py"));
  if (tut >= 0) {
    script_combo_->setCurrentIndex(tut);
    open_script(script_combo_->itemData(tut).toString());
  }
}

MainWindow::~MainWindow() = default;

void MainWindow::build_file_menu() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* open_act = file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open script or trace…"), QKeySequence::Open, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, tr("Open"), examples_dir_, tr("Scripts and traces (*.py *.json)"));
    if (f.endsWith(".json")) open_trace(f);
    else if (!f.isEmpty()) open_script(f);
  });
  save_act_ = file->addAction(QIcon(QStringLiteral(":/icons/save.svg")), tr("Save trace…"), QKeySequence::Save, this, [this] {
    QString base = QFileInfo(script_path_).completeBaseName();
    QString f = QFileDialog::getSaveFileName(this, tr("Save trace"), (base.isEmpty() ? QStringLiteral("trace") : base) + ".trace.json",
                                             tr("Traces (*.json)"));
    if (!f.isEmpty()) save_trace(f);
  });
  save_act_->setEnabled(false);
  connect(session_, &tsv::Session::loaded, this, [this] { save_act_->setEnabled(!session_->raw().isEmpty()); });
  file->addSeparator();
  auto* cmp_act = file->addAction(tr("Compare with a saved trace…"), this, [this] {
    QString f = QFileDialog::getOpenFileName(this, tr("Compare with a saved trace"), QFileInfo(session_->path()).path(), tr("Traces (*.json)"));
    if (!f.isEmpty()) compare_with_trace(f);
  });
  cmp_act->setToolTip(tr("Put a saved trace beside the one shown, call by call and output by output (two machines, or before and after an edit)"));
  save_compare_act_ = file->addAction(tr("Save comparison…"), this, [this] {
    QString base = QFileInfo(script_path_).completeBaseName();
    QString f = QFileDialog::getSaveFileName(this, tr("Save comparison"), (base.isEmpty() ? QStringLiteral("comparison") : base) + ".compare.json",
                                             tr("Saved comparisons (*.json)"));
    if (!f.isEmpty()) save_compare(f);
  });
  save_compare_act_->setEnabled(false);
  save_compare_act_->setToolTip(tr("Save both traces of the comparison in one file; File > Open reopens it"));
  open_act->setToolTip(tr("Open a script, or a saved trace without running it (Ctrl+O)"));
  save_act_->setToolTip(tr("Save this run's trace as JSON (Ctrl+S)"));
  if (auto* tb = findChild<QToolBar*>(QStringLiteral("run_toolbar"))) {
    QAction* first = tb->actions().value(0);
    tb->insertAction(first, open_act);
    tb->insertAction(first, save_act_);
    tb->insertSeparator(first);
  }
  auto* exp = file->addMenu(QIcon(QStringLiteral(":/icons/export.svg")), tr("Export graph"));
  for (auto* pane : {tensor_graph_, calls_graph_, kernel_graph_}) {
    for (const char* fmt : {"SVG", "PNG", "DOT"}) {
      auto* a = exp->addAction(tr("%1 as %2…").arg(pane->kind_name(), fmt), pane, [pane, fmt] { pane->export_dialog(fmt); });
      connect(exp, &QMenu::aboutToShow, a, [a, pane] { a->setEnabled(pane->has_graph()); });
    }
    if (pane != kernel_graph_) exp->addSeparator();
  }
  file->addSeparator();
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);
}

QString MainWindow::shortcuts_text() const {
  QString rows;
  auto row = [&](const QString& keys, const QString& what) {
    rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys.toHtmlEscaped(), what.toHtmlEscaped());
  };
  QStringList seen;
  for (auto* a : findChildren<QAction*>()) {
    const QString keys = a->shortcut().toString(QKeySequence::NativeText);
    if (keys.isEmpty() || seen.contains(keys)) continue;
    seen << keys;
    row(keys, QString(a->text()).remove('&').remove(QStringLiteral("…")));
  }
  row(tr("F, or a double-click on the background"), tr("a graph: fit it in its pane"));
  row(tr("+ / −, the wheel"), tr("a graph: zoom"));
  row(tr("Enter in a graph's search field"), tr("the next matching node, centred"));
  row(tr("double-click a cluster / one of its nodes"), tr("a collapsed graph: open the cluster / close it again"));
  row(tr("← / →, Home / End"), tr("the rewrite stepper: the previous / next rule match, the first / last"));
  row(tr("Space"), tr("the rewrite stepper: before / after the match"));
  return QStringLiteral("<table cellspacing=6>%1</table>").arg(rows);
}

QString MainWindow::legend_text() const {
  auto swatch = [](const QColor& c) {
    return QStringLiteral("<span style='background:%1'>&nbsp;&nbsp;&nbsp;&nbsp;</span>").arg(c.name());
  };
  QString t = tr("<b>Graph nodes</b> (the kernel AST, a pass's graph, a tensor graph without a recorded split) by op family:<br>");
  const std::pair<const char*, QString> families[] = {
      {"BUFFER", tr("memory: buffers, loads, stores, copies")}, {"RESHAPE", tr("movement: reshape, permute, expand, pad, shrink")},
      {"REDUCE", tr("reductions")}, {"CONST", tr("constants, variables")}, {"RANGE", tr("loops and control")},
      {"CONTIGUOUS", tr("kernels, sinks, contiguous")}, {"ADD", tr("ALU and the rest")}};
  for (const auto& [op, what] : families) t += swatch(tsv::GraphPane::op_color(QString::fromLatin1(op))) + " " + what + "<br>";
  t += tr("<br><b>Tensor graph</b>: each node in the colour of the call that computes it (");
  for (int i = 0; i < 6; ++i) t += swatch(tsv::GraphPane::kernel_tint(i));
  t += tr(" …, one per call in order); a thick outline: the node a kernel stores; blue: the selected call's nodes; "
          "orange: the nodes a selected rewrite pass produced; red: the selected node.<br>");
  t += tr("<br><b>Names</b> are coloured as the reference prints them: the letters by kind (r: reduce, E: elementwise), "
          "each dimension by its axis type (blue: global, cyan: local, red: reduce, yellow/purple: upcast/unroll).<br>");
  t += tr("<br><b>Timings</b>: the bar and <i>time</i> are the median of the warm runs after the first; the whisker spans "
          "the fastest to the slowest of them; ± is half that spread over the median; <i>first run</i> is DEBUG=2's time; "
          "* marks a program's first run; ↺ a kernel timed on restored inputs; <i>once</i> a call that ran once.");
  return t;
}

void MainWindow::set_large_text(bool on) {
  // every widget's own font, from the size it had before the preset first applied (kept as a property)
  QList<QWidget*> widgets = findChildren<QWidget*>();
  widgets.push_front(this);
  for (QWidget* w : widgets) {
    QFont f = w->font();
    if (f.pointSizeF() <= 0) continue;
    if (!w->property("ts_base_pt").isValid()) w->setProperty("ts_base_pt", f.pointSizeF());
    const double base = w->property("ts_base_pt").toDouble();
    f.setPointSizeF(on ? base * 1.4 : base);
    w->setFont(f);
  }
  if (restore_layout_) QSettings().setValue("view/large_text", on);
}

bool MainWindow::save_trace(const QString& path) {
  QString err;
  if (!session_->save(path, &err)) {
    append_console(err + "\n", true);
    status_->setText(err);
    return false;
  }
  status_->setText(tr("Trace saved to %1").arg(path));
  return true;
}

void MainWindow::default_layout() {
  if (default_docks_.size() < 7) return;
  auto d = default_docks_;
  const int w = std::max(width(), 1200), h = std::max(height(), 800);
  resizeDocks({d[0], d[1], d[2]}, {h * 28 / 100, h * 30 / 100, h * 20 / 100}, Qt::Vertical);
  resizeDocks({d[0], d[3]}, {w * 26 / 100, w * 36 / 100}, Qt::Horizontal);
  // the right column: the kernel AST, the rewrite stepper under it (once added), the source
  if (d.size() > 7) resizeDocks({d[3], d[7], d[4]}, {h * 24 / 100, h * 30 / 100, h * 20 / 100}, Qt::Vertical);
  else resizeDocks({d[3], d[4]}, {h * 38 / 100, h * 34 / 100}, Qt::Vertical);
  resizeDocks({d[5]}, {h * 23 / 100}, Qt::Vertical);
  resizeDocks({d[5], d[6]}, {w / 2, w / 2}, Qt::Horizontal);
}

QDockWidget* MainWindow::add_dock(const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
  auto* d = new QDockWidget(title, this);
  d->setObjectName(name);
  d->setWidget(w);
  addDockWidget(area, d);
  return d;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  controller_->stop();
  compare_controller_->stop();
  if (restore_layout_) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("view/dark", dark_act_->isChecked());
    settings.setValue("run/device", device_combo_->currentText());
    settings.setValue("run/compare", compare_device());
  }
  QMainWindow::closeEvent(e);
}

void MainWindow::set_dark(bool dark) {
  qApp->setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  qApp->setPalette(make_palette(dark));
  source_->set_dark(dark);
  if (dark_act_->isChecked() != dark) dark_act_->setChecked(dark);
}

bool MainWindow::set_device(const QString& dev, QString* error) {
  QString err;
  const QString name = require_device(dev, &err);
  const int i = name.isEmpty() ? -1 : device_combo_->findText(name);
  if (i < 0) {
    if (error) *error = err.isEmpty() ? tr("unknown device '%1'").arg(dev) : err;
    return false;
  }
  device_combo_->setCurrentIndex(i);
  return true;
}

void MainWindow::report_device_error(const QString& text, const QString& label) {
  append_console(text + "\n", true);
  status_->setText(text);
  run_label_->setText(label.isEmpty() ? tr("DEVICE ERROR: see the console") : label.toUpper());
  run_label_->setStyleSheet(QStringLiteral("QLabel { background: #c62828; color: white; font-weight: bold; }"));
  run_label_->show();
}

void MainWindow::open_script(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    append_console(tr("cannot open %1: %2\n").arg(path, f.errorString()), true);
    return;
  }
  script_path_ = QFileInfo(path).absoluteFilePath();
  script_trace_.clear();
  editor_->setPlainText(QString::fromUtf8(f.readAll()));
  mark_error_line(-1);
  int i = script_combo_->findData(path);
  if (i < 0) i = script_combo_->findData(script_path_);
  if (i < 0) {
    script_combo_->addItem(QFileInfo(path).fileName(), script_path_);
    i = script_combo_->count() - 1;
  }
  script_combo_->setCurrentIndex(i);
  setWindowTitle(QStringLiteral("tinyscope — %1").arg(QFileInfo(path).fileName()));
  update_script_marks();  // (the trace's lines mark this script only when it is the one the trace ran)
}

bool MainWindow::open_trace(const QString& path, QString* error) {
  QString err;
  if (tsv::is_compare_file_at(path)) return open_compare_file(path, error);
  if (!session_->load(path, &err)) {
    append_console(tr("Cannot open the trace %1\n%2\n").arg(QFileInfo(path).fileName(), err), true);
    status_->setText(tr("Cannot open the trace: %1").arg(err));
    show_trace_error(tr("Cannot open the trace %1 (nothing of it is shown):").arg(QFileInfo(path).fileName()), err);
    setWindowTitle(tr("tinyscope — cannot open %1").arg(QFileInfo(path).fileName()));
    if (error) *error = err;
    return false;
  }
  status_->setText(tr("%1: %2 contexts, %3 calls on %4")
                       .arg(QFileInfo(path).fileName())
                       .arg(session_->contexts().size())
                       .arg(session_->calls().size())
                       .arg(session_->device()));
  // the script the trace came from, when it is still there: a trace is untrusted, so only a .py file, and Run asks
  // before running what the trace (not the user) chose
  const QFileInfo script(session_->script());
  if (script.isFile() && script.suffix() == QLatin1String("py") && script.size() <= (qint64(4) << 20)) {
    open_script(script.filePath());
    script_trace_ = QFileInfo(path).absoluteFilePath();
  } else if (script.exists()) {
    append_console(tr("The trace names the script %1: not opened (only a .py file of up to 4 MB is)\n").arg(script.filePath()), true);
  }
  opened_trace_ = path;
  select_first_kernel();
  show_trace_label();
  if (script_from_trace()) setWindowTitle(windowTitle() + tr(" (the script named by the trace %1)").arg(QFileInfo(path).fileName()));
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
  show_loaded_compare();
  status_->setText(tr("Comparing with %1: %2 calls beside %3").arg(name).arg(compare_session_->calls().size()).arg(session_->calls().size()));
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

void MainWindow::set_beam(int n, bool extended) {
  const QSignalBlocker b1(beam_spin_), b2(extended_box_);
  beam_spin_->setValue(n);
  extended_box_->setChecked(extended);
  extended_box_->setEnabled(n > 0);
  controller_->set_beam(n);
  controller_->set_extended(extended);
}

void MainWindow::set_snapshots(bool on) { snapshots_act_->setChecked(on); }

QString MainWindow::first_label() const { return first_label_.isEmpty() ? first_device() : first_label_; }
QString MainWindow::second_label() const { return compare_from_trace_.isEmpty() ? compare_device() : compare_from_trace_; }

void MainWindow::show_trace_error(const QString& what, const QString& err) {
  trace_error_->setText(QStringLiteral("<b>%1</b><br>%2").arg(what.toHtmlEscaped(), err.left(2000).toHtmlEscaped()));
  trace_error_->show();
}

QString MainWindow::trace_error() const { return !trace_error_->isHidden() ? trace_error_->text() : QString(); }

void MainWindow::select_first_kernel() {
  if (initial_tour_ > 0) return show_tour(initial_tour_ - 1);  // --tour N: the tour at stop N instead
  if (!initial_context_.isEmpty())
    for (int i = 0; i < session_->contexts().size(); ++i)
      if (session_->contexts()[i].plain_name.contains(initial_context_)) return selection_->select_context(i);  // (the name without its colours)
  const auto& calls = session_->calls();
  for (int i = 0; i < calls.size(); ++i)
    if (calls[i].kind == "kernel") return selection_->select_call(i);
  if (!session_->contexts().isEmpty()) selection_->select_context(0);
}

void MainWindow::run() {
  if (limits_measure_ && limits_measure_->running()) {  // both at once would share the device and measure each other
    const QString msg = tr("Not run: the limits of %1 are being measured (wait, or Cancel it in the status bar).").arg(device_combo_->currentText());
    status_->setText(msg);
    append_console(msg + "\n", true);
    emit run_finished(false);
    check_settled();
    return;
  }
  if (script_from_trace()) {
    const QString question =
        tr("The script %1 was named by the trace %2, not opened by you. Running it executes its code on this "
           "machine.\n\nRun it?").arg(script_path_, script_trace_);
    bool yes = false;
    if (confirm_run_) yes = confirm_run_(question);
    else if (QGuiApplication::platformName() == QLatin1String("offscreen"))  // nobody to answer: no
      std::fprintf(stderr, "tinyscope: not running %s: it was named by the trace %s (open the script itself to run it)\n",
                   qPrintable(script_path_), qPrintable(script_trace_));
    else
      yes = QMessageBox::question(this, tr("Run a script named by a trace?"), question, QMessageBox::Yes | QMessageBox::No,
                                  QMessageBox::No) == QMessageBox::Yes;
    if (!yes) {
      const QString msg = tr("Not run: %1 was named by the trace %2.").arg(QFileInfo(script_path_).fileName(), QFileInfo(script_trace_).fileName());
      status_->setText(msg);
      append_console(msg + "\n", true);
      emit run_finished(false);
      check_settled();
      return;
    }
    script_trace_.clear();  // asked once
  }
  // a run in progress ends before the console is cleared for the new one (its partial trace is not read: the new
  // run's replaces it)
  superseding_ = true;
  stop();
  superseding_ = false;
  opened_trace_.clear();
  console_->clear();
  mark_error_line(-1);
  QString name = script_path_.isEmpty() ? QStringLiteral("script.py") : QFileInfo(script_path_).fileName();
  append_console(controller_->beam() ? tr("$ tinyscope run %1 (DEV=%2 BEAM=%3%4)\n")
                                           .arg(name, device_combo_->currentText())
                                           .arg(controller_->beam())
                                           .arg(controller_->extended() ? QStringLiteral(" TS_OPTS=extended") : QString())
                                      : tr("$ tinyscope run %1 (DEV=%2)\n").arg(name, device_combo_->currentText()),
                 false);
  run_act_->setEnabled(false);
  stop_act_->setEnabled(true);
  status_->setText(tr("Running %1 on %2… (Stop: Ctrl+.)").arg(name, device_combo_->currentText()));
  run_clock_.start();
  run_unsettled_ = true;
  if (probe_) probe_->reset();
  run_label_->setStyleSheet({});
  run_label_->setText(tr("running…"));
  run_label_->show();
  setWindowTitle(QStringLiteral("tinyscope — %1").arg(name));
  controller_->start(name, editor_->toPlainText(), device_combo_->currentText());
  const QString other = compare_device();
  compare_pending_ = false;
  // the last comparison was of the last run: it goes now, not when the new one arrives (a run without a second
  // device would otherwise keep showing it)
  clear_compare(other.isEmpty() ? tr("Choose a device under \"Compare with\" and run") : QString());
  if (!other.isEmpty()) {
    // the second device runs once the first one's run is over: never both at once on the same cores
    compare_pending_ = true;
    compare_name_ = name;
    compare_source_ = editor_->toPlainText();
    compare_label_->setText(tr("%1 runs after %2 has finished (one device at a time, so neither's timings share the "
                               "cores with the other's)…")
                                .arg(other, device_combo_->currentText()));
    compare_loaded_ = false;
    compare_dock_->setWindowTitle(tr("Compare: %1").arg(other));
    if (!compare_dock_->isVisible()) {
      compare_dock_->show();
      resizeDocks({compare_dock_}, {std::max(height(), 800) * 22 / 100}, Qt::Vertical);
      if (auto* split = compare_dock_->findChild<QSplitter*>()) split->setSizes({1000, 1000});  // half each
    }
  }
}

void MainWindow::clear_compare(const QString& why) {
  compare_loaded_ = false;
  save_compare_act_->setEnabled(false);
  first_label_.clear();
  compare_from_trace_.clear();
  if (!compare_session_->raw().isEmpty() || !compare_session_->calls().isEmpty()) compare_session_->clear();
  values_->set_compare(nullptr, {});
  compare_console_->clear();
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

void MainWindow::stop() {
  if (compare_pending_) {
    compare_pending_ = false;
    compare_label_->setText(tr("%1: not run (stopped)").arg(compare_device()));
  }
  controller_->stop();
  compare_controller_->stop();
}

// the run in progress, a few times a second from its trace stream
void MainWindow::show_progress() {
  if (!controller_->running()) {
    show_beam({});
    return;
  }
  const TraceStream& st = controller_->stream();
  QString text = tr("%1 s · %2 calls so far").arg(controller_->elapsed_ms() / 1000.0, 0, 'f', 1).arg(st.calls());
  if (!st.last_call().isEmpty()) text += tr(" (last: %1)").arg(st.last_call());
  run_label_->setText(text);
  show_beam(st.beam());
}

// a BEAM search's latest report in the status bar (hidden once it finished, or with none)
void MainWindow::show_beam(const QJsonObject& b) {
  if (b.isEmpty() || b.value("finished").toBool()) {
    beam_bar_->hide();
    beam_cancel_->hide();
    return;
  }
  static const QRegularExpression ansi(QStringLiteral("\x1b\\[[0-9;]*m"));
  const QString kernel = b.value("kernel").toString().remove(ansi);
  const int total = std::max(1, b.value("total").toInt()), done = std::min(total, b.value("done").toInt());
  const double best = b.value("best_s").toDouble();
  beam_bar_->setRange(0, total);
  beam_bar_->setValue(done);
  QString fmt = tr("BEAM %1 · round %2 · %3/%4").arg(kernel).arg(b.value("round").toInt()).arg(done).arg(total);
  if (best > 0) fmt += tr(" · best %1 µs").arg(best * 1e6, 0, 'f', 1);
  beam_bar_->setFormat(fmt);
  beam_bar_->setToolTip(tr("%1 candidates timed so far in %2 s").arg(b.value("timed").toInt()).arg(b.value("elapsed_s").toDouble(), 0, 'f', 1));
  beam_bar_->show();
  beam_cancel_->show();
}

void MainWindow::append_console(const QString& text, bool is_err) {
  QTextCharFormat err, info;
  err.setForeground(QColor(0xe0, 0x40, 0x40));
  info.setForeground(QColor(0x5a, 0x8c, 0xc8));  // what BEAM reports on stderr is news, not an error
  QTextCursor c(console_->document());
  c.movePosition(QTextCursor::End);
  if (!is_err) {
    c.insertText(text, {});
  } else {
    for (qsizetype from = 0; from < text.size();) {
      qsizetype nl = text.indexOf('\n', from);
      const qsizetype to = nl < 0 ? text.size() : nl + 1;
      const QString line = text.mid(from, to - from);
      c.insertText(line, line.startsWith(QLatin1String("BEAM ")) ? info : err);
      from = to;
    }
  }
  console_->verticalScrollBar()->setValue(console_->verticalScrollBar()->maximum());
}

void MainWindow::mark_error_line(int line) {
  error_line_ = line;
  if (line > 0) {
    editor_->setTextCursor(QTextCursor(editor_->document()->findBlockByNumber(line - 1)));
    editor_->centerCursor();
  }
  update_editor_selections();
}

// the script's file name as the trace's contexts name it ("softmax.py"), when the editor holds that script
QString MainWindow::script_file() const {
  const QString mine = QFileInfo(script_path_.isEmpty() ? QStringLiteral("script.py") : script_path_).fileName();
  const QString traced = QFileInfo(session_->script()).fileName();
  return traced.isEmpty() || traced == mine ? mine : QString();
}

void MainWindow::update_script_marks() {
  script_line_turn_.clear();
  QHash<int, QString> marks;
  const QString file = script_file();
  if (!file.isEmpty()) {
    const QMap<int, QList<int>> lines = session_->schedules_by_line(file);
    for (auto it = lines.begin(); it != lines.end(); ++it) {
      int calls = 0;
      for (int sc : it.value()) calls += int(session_->calls_of_schedule(sc).size());
      marks.insert(it.key(), tr("Line %1 realized %n schedule(s), %2 call(s) in all: click to select the first "
                                "(again: the next)", "", int(it.value().size())).arg(it.key()).arg(calls));
    }
  }
  editor_->set_marks(marks);
  update_editor_selections();
}

bool MainWindow::select_script_line(int line) {
  const QString file = script_file();
  const QList<int> schedules = file.isEmpty() ? QList<int>{} : session_->schedules_by_line(file).value(line);
  if (schedules.isEmpty()) {
    status_->setText(tr("%1:%2 realized nothing in this run").arg(file.isEmpty() ? tr("the script") : file).arg(line));
    return false;
  }
  const int turn = script_line_turn_.value(line, 0) % schedules.size();
  script_line_turn_[line] = turn + 1;
  const int sc = schedules[turn];
  const QList<int> calls = session_->calls_of_schedule(sc);
  if (!calls.isEmpty()) selection_->select_call(calls.front());
  else selection_->select_context(sc);
  double total = 0;
  for (int c : calls) total += tsv::TimingsModel::headline_of(session_->calls()[c]);
  status_->setText(tr("%1:%2, schedule %3 of %4 on this line: %5, %n call(s), %6 µs", "", int(calls.size()))
                       .arg(file).arg(line).arg(turn + 1).arg(schedules.size())
                       .arg(session_->contexts()[sc].plain_name).arg(total * 1e6, 0, 'f', 1));
  return true;
}

void MainWindow::update_editor_selections() {
  QList<QTextEdit::ExtraSelection> sels;
  auto band = [&](int line, const QColor& c) {
    if (line <= 0 || line > editor_->document()->blockCount()) return;
    QTextEdit::ExtraSelection s;
    s.cursor = QTextCursor(editor_->document()->findBlockByNumber(line - 1));
    s.format.setBackground(c);
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    sels.push_back(s);
  };
  // the line that asked for the selected call's schedule (or the selected schedule)
  const tsv::Selection& sel = selection_->current();
  int sc = sel.call >= 0 && sel.call < session_->calls().size() ? session_->schedule_context(session_->calls()[sel.call].schedule_index) : -1;
  if (sc < 0 && sel.context >= 0 && sel.context < session_->contexts().size())
    sc = session_->contexts()[sel.context].is_schedule() ? sel.context : session_->contexts()[sel.context].schedule;
  const auto [file, line] = session_->script_line_of(sc);
  if (line > 0 && file == script_file()) band(line, QColor(0x21, 0x6e, 0xd0, 50));
  band(error_line_, QColor(0xff, 0x50, 0x50, 110));
  editor_->setExtraSelections(sels);
}

void MainWindow::on_run_finished(int code, bool stopped, const QString& trace, const QString& stderr_text) {
  run_act_->setEnabled(true);
  stop_act_->setEnabled(false);
  const RunController::End& end = controller_->last_end();
  const QString after = tr("after %1 s").arg(end.ms / 1000.0, 0, 'f', 1);
  QString msg;
  if (stopped) msg = tr("Stopped %1.").arg(after);
  else if (code < 0 && end.crashed) msg = tr("The run crashed: %1 %2 (the window is fine).").arg(RunController::signal_text(end.code), after);
  else if (code < 0) msg = tr("The run crashed (the window is fine).");
  else msg = code == 0 ? tr("Finished %1.").arg(after) : tr("Failed with exit code %1 %2.").arg(code).arg(after);
  if (stopped) compare_pending_ = false;
  QString console_msg = msg;
  if (end.partial)
    console_msg += tr(" The panes show the partial trace: %1 calls and %2 contexts, everything recorded before the run ended.")
                       .arg(end.calls)
                       .arg(end.contexts);
  else if (trace.isEmpty() && (stopped || code != 0))
    console_msg += tr(" Nothing was recorded.");
  append_console(QStringLiteral("\n[%1]\n").arg(console_msg), code != 0);
  int line = RunController::error_line(stderr_text, controller_->script_path());
  if (line > 0) {
    mark_error_line(line);
    msg += tr(" Error at line %1.").arg(line);
  }
  run_msg_ = msg;
  run_ok_ = code == 0 && !stopped;
  if (trace.isEmpty() || superseding_) {
    session_->clear();  // the panes show this run's trace: nothing, not the last one's
    return on_trace_loaded(false, {});
  }
  // the trace is parsed off the UI thread; on_trace_loaded() goes on from there
  status_->setText(msg + tr("  Reading the trace…"));
  session_->load_async(trace);
}

void MainWindow::on_trace_loaded(bool ok, const QString& err) {
  QString msg = run_msg_;
  if (ok) {
    select_first_kernel();
    msg += tr("  %1 contexts, %2 calls on %3").arg(session_->contexts().size()).arg(session_->calls().size()).arg(session_->device());
  } else if (!err.isEmpty()) {
    append_console(err + "\n", true);
    show_trace_error(tr("Cannot read the run's trace:"), err);
  }
  status_->setText(msg);
  show_trace_label();
  if (!compare_device().isEmpty()) update_compare_summary();
  emit run_finished(run_ok_);
  check_settled();
}

bool MainWindow::settled() const {
  return !compare_pending_ && main_settled() && !compare_controller_->running() && !compare_session_->loading();
}

bool MainWindow::main_settled() const {
  return !controller_->running() && !session_->loading() && !tensor_graph_->busy() && !kernel_graph_->busy() && !calls_graph_->busy() &&
         tsv::LayoutEngine::instance()->pending() == 0;
}

// a partial trace says so, with how its run ended, where the run's progress was shown
void MainWindow::show_trace_label() {
  const QString partial = session_->partial();
  QString title = QStringLiteral("tinyscope — %1").arg(QFileInfo(session_->script()).fileName());
  if (partial.isEmpty()) {
    run_label_->hide();
  } else {
    run_label_->setText(tr("PARTIAL TRACE: %1 · %2 calls").arg(partial).arg(session_->calls().size()));
    run_label_->setStyleSheet(QStringLiteral("QLabel { background: #c62828; color: white; font-weight: bold; }"));
    run_label_->show();
    title += tr(" (partial trace: %1)").arg(partial);
  }
  if (!session_->script().isEmpty()) setWindowTitle(title);
}

void MainWindow::check_settled() {
  // the compare run starts once the first device's run is over and its panes are drawn
  if (compare_pending_ && main_settled()) return start_compare();
  if (!settled()) return;
  if (run_unsettled_) {
    run_unsettled_ = false;
    last_run_to_panes_ms_ = run_clock_.elapsed();
    if (print_perf_)
      std::fprintf(stderr,
                   "tinyscope: Run to all panes %lld ms (the %s child ran %lld ms), longest event-loop gap %lld ms, "
                   "longest graph parse+draw %.1f ms\n",
                   static_cast<long long>(last_run_to_panes_ms_), controller_->last_run_was_warm() ? "warm" : "cold",
                   static_cast<long long>(controller_->last_run_ms()), static_cast<long long>(longest_stall_ms()),
                   tsv::LayoutEngine::max_ui_stall_ms());
  }
  emit settled_now();
}

void MainWindow::set_measuring(bool on, bool print) {
  print_perf_ = on && print;
  if (!on) {
    delete probe_;
    probe_ = nullptr;
    return;
  }
  if (!probe_) {
    probe_ = new StallProbe(this);
    probe_->start();
  }
}

qint64 MainWindow::longest_stall_ms() const { return probe_ ? probe_->worst_ms() : -1; }

// ---- Compare with…: the same script on a second device, in its own child
void MainWindow::build_compare_dock() {
  compare_session_ = new tsv::Session(this);
  compare_selection_ = new tsv::SelectionModel(compare_session_, this);
  compare_controller_ = new RunController(this);
  compare_controller_->set_repeat(repeat_spin_ ? repeat_spin_->value() : 1);
  auto* box = new QWidget(this);
  compare_label_ = new QLabel(tr("Choose a device under \"Compare with\" and run"), box);
  compare_label_->setWordWrap(true);
  compare_label_->setObjectName(QStringLiteral("compare_summary"));
  compare_label_->setContentsMargins(4, 2, 4, 2);
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
  connect(compare_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (cur.isValid() && cur.row() < session_->calls().size() && cur.row() != selection_->current().call) selection_->select_call(cur.row());
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
  lay->addWidget(compare_label_);
  lay->addWidget(tabs, 1);
  // below the Schedule and Timings row, the whole width: the two devices' rows line up
  compare_dock_ = new QDockWidget(tr("Compare"), this);
  compare_dock_->setObjectName(QStringLiteral("compare"));
  compare_dock_->setWidget(box);
  addDockWidget(Qt::BottomDockWidgetArea, compare_dock_, Qt::Vertical);
  compare_dock_->hide();

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
  // the main window's selected call selects the same call on the other device (same position, same name)
  connect(selection_, &tsv::SelectionModel::changed, this, [this](const tsv::Selection& sel) {
    const auto& mine = session_->calls();
    const auto& theirs = compare_session_->calls();
    if (sel.call >= 0 && sel.call < mine.size() && sel.call < theirs.size() && mine[sel.call].name == theirs[sel.call].name)
      compare_selection_->select_call(sel.call);
    update_compare_sources();
  });
}

// the two devices' totals, once both runs are in (either may finish first)
void MainWindow::update_compare_sources() {
  const int call = selection_->current().call;
  if (call >= 0 && call < compare_model_->rowCount() && compare_table_->currentIndex().row() != call)
    compare_table_->setCurrentIndex(compare_model_->index(call, 0));
  if (!compare_loaded_) return compare_diff_->clear(tr("Compare with a second device and run"));
  const auto& mine = session_->calls();
  const auto& theirs = compare_session_->calls();
  if (call < 0 || call >= mine.size() || call >= theirs.size() || mine[call].kind != "kernel")
    return compare_diff_->clear(tr("Select a kernel that ran on both devices"));
  if (!compare_model_->matched(call))
    return compare_diff_->clear(tr("Call %1 is %2 on one device and %3 on the other: not the same kernel")
                                    .arg(call + 1)
                                    .arg(mine[call].name, theirs[call].name));
  const int ka = session_->kernel_context(mine[call].program_key), kb = compare_session_->kernel_context(theirs[call].program_key);
  if (ka < 0 || kb < 0) return compare_diff_->clear(tr("The trace has no source for call %1").arg(call + 1));
  const tsv::Program& pa = session_->contexts()[ka].program;
  const tsv::Program& pb = compare_session_->contexts()[kb].program;
  if (!compare_asm_->isChecked())
    return compare_diff_->set_sources(tr("%1 on %2 (%3)").arg(pa.name, first_label(), pa.lang), pa.src,
                                      tr("%1 on %2 (%3)").arg(pb.name, second_label(), pb.lang), pb.src);
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
  if (!compare_session_->partial().isEmpty()) text += tr("\n%1: PARTIAL TRACE (%2)").arg(theirs, compare_session_->partial());
  compare_label_->setText(text);
}

void MainWindow::start_tour() { show_tour(0); }

void MainWindow::show_tour(int stop) {
  tour_dock_->show();
  tour_dock_->raise();
  // tall enough for a stop's text at 1280 x 720
  resizeDocks({tour_dock_}, {std::max(height() * 36 / 100, 220)}, Qt::Vertical);
  tour_->go(stop);
}

QString MainWindow::first_device() const { return session_->device().isEmpty() ? device_combo_->currentText() : session_->device(); }

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
  compare_dock_->setWindowTitle(tr("Compare: %1").arg(second_label()));
  compare_table_->resizeColumnsToContents();  // (the headers name the two sides)
  if (auto* tabs = compare_dock_->findChild<QTabWidget*>(QStringLiteral("compare_tabs")); tabs && tabs->count() >= 5) {
    const bool saved = !compare_from_trace_.isEmpty();
    tabs->setTabText(3, saved ? tr("Second trace's schedule and timings") : tr("Second device's schedule and timings"));
    tabs->setTabText(4, saved ? tr("Second trace's console") : tr("Second device's console"));
    if (saved) compare_console_->setPlainText(tr("%1 is a saved trace: a trace keeps what the script read back (the Outputs "
                                                 "tab), not its console.").arg(second_label()));
  }
  if (!compare_dock_->isVisible()) {
    compare_dock_->show();
    resizeDocks({compare_dock_}, {std::max(height(), 800) * 22 / 100}, Qt::Vertical);
    if (auto* split = compare_dock_->findChild<QSplitter*>()) split->setSizes({1000, 1000});
  }
  update_compare_summary();
  update_compare_sources();
  const int call = selection_->current().call;
  if (call >= 0 && call < compare_session_->calls().size()) compare_selection_->select_call(call);
}

// ---- Run > Measure limits for this device: `tinyscope bench --limits --dev DEV` in a child, never beside a run (the
// two would share the cores and measure each other)
void MainWindow::measure_limits() {
  const QString dev = device_combo_->currentText();
  if (controller_->running() || compare_controller_->running() || compare_pending_)
    return status_->setText(tr("Measure the limits once the run has finished (both at once would share the device)"));
  if (limits_measure_->start(controller_->program(), dev))
    status_->setText(tr("Measuring the limits of %1 (tinyscope bench --limits --dev %1)…").arg(dev));
}

// ---- Source > Assembly: `tinyscope asm` compiles the kernel's source in a child and prints the host assembly (or,
// for GLSL, the SPIR-V glslang makes of it); each text is asked for once and kept
void MainWindow::disassemble(const QString& key, const QString& lang, const QString& src) {
  request_assembly(lang, src, [this, key](const QString& out) { source_->set_assembly(key, out); });
}

QString MainWindow::cached_assembly(const QString& lang, const QString& src) const {
  return asm_text_.value(QCryptographicHash::hash((lang + '\n' + src).toUtf8(), QCryptographicHash::Sha1));
}

void MainWindow::request_assembly(const QString& lang, const QString& src, std::function<void(const QString&)> done) {
  const QByteArray k = QCryptographicHash::hash((lang + '\n' + src).toUtf8(), QCryptographicHash::Sha1);
  if (auto it = asm_text_.constFind(k); it != asm_text_.constEnd()) return done(*it);
  auto& waiting = asm_waiting_[k];
  waiting.push_back(std::move(done));
  if (waiting.size() > 1) return;  // (already asked for)
  auto finish = [this, k](const QString& out) {
    asm_text_.insert(k, out);
    for (const auto& f : asm_waiting_.take(k)) f(out);
  };
  auto* file = new QTemporaryFile(this);
  if (!file->open() || file->write(src.toUtf8()) < 0) {
    const QString why = file->errorString();
    delete file;
    return finish(tr("; cannot write a temporary file: %1").arg(why));
  }
  file->flush();
  auto* p = new QProcess(this);
  connect(p, &QProcess::finished, this, [p, file, finish](int code, QProcess::ExitStatus status) {
    QString out = QString::fromUtf8(p->readAllStandardOutput());
    if (status != QProcess::NormalExit || code != 0)
      out = tr("; disassembly failed:\n") + QString::fromUtf8(p->readAllStandardError());
    p->deleteLater();
    file->deleteLater();
    finish(out);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p, file, finish](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    p->deleteLater();
    file->deleteLater();
    finish(tr("; cannot start %1").arg(controller_->program()));
  });
  p->start(controller_->program(), {QStringLiteral("asm"), QStringLiteral("--lang"), lang == "llvm" || lang == "glsl" ? lang : QStringLiteral("c"), file->fileName()});
}

}  // namespace tsgui
