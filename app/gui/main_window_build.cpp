// The window's parts: the run toolbar, the docks (one table), the menus and the status bar, the settings they restore,
// and the default layout. app/gui/main_window.cpp wires them; main_window_compare.cpp builds the Compare dock.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
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
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyleFactory>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "app/gui/devices.h"
#include "app/gui/limits_measure.h"
#include "app/gui/main_window.h"
#include "viewer/model/glossary.h"
#include "viewer/panes/access_pane.h"
#include "app/gui/run_controller.h"
#include "app/gui/tour.h"
#include "engine/trace/chrome_trace.h"
#include "viewer/model/session.h"
#include "viewer/panes/code_editor.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/roofline_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/stepper_pane.h"
#include "viewer/panes/timeline_pane.h"
#include "viewer/panes/timings_pane.h"
#include "viewer/panes/values_pane.h"

namespace tsgui {

namespace {
// a trace (its JSON as loaded) written to `path` as Chrome's Trace Event JSON; the reason when it cannot be
QString export_chrome_trace(const QByteArray& trace, const QString& path) {
  try {
    ts::trace::write_chrome_trace(nlohmann::json::parse(trace.constData(), trace.constData() + trace.size()), path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

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

// the run toolbar: script, device, timing runs, BEAM and its extended space, Run and Stop
void MainWindow::build_toolbar() {
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
}

// the centre: the tensor graph, under a banner that says why a trace could not be opened (hidden otherwise)
void MainWindow::build_central() {
  tensor_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::TensorGraph, selection_, this);
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
}

// The docks, one row each, made in this order (the View menu lists them so; a saved layout finds them by name).
// A row's pane is made by its factory, its dock added to its area, then split from or tabbed with an earlier dock.
void MainWindow::build_docks() {
  enum class Place { Add, Under, SplitRight, SplitBelow, TabWith };
  struct Pane {
    QString name;                  // the dock's object name: `--pane NAME`, the saved layout's key
    QString title;                 // its title (`--pane` takes it too)
    std::function<QWidget*()> make;
    Qt::DockWidgetArea area;
    Place place = Place::Add;      // Under: below what the area holds; Split*, TabWith: beside the dock `beside`
    QString beside = {};
    bool sized = false;            // default_layout() gives it its size (default_docks_, in this order)
    bool hidden = false;           // shown later (the Compare dock once it compares, the tour once it starts)
    QDockWidget** keep = nullptr;  // where the window keeps the dock
  };
  const std::vector<Pane> panes = {
      {QStringLiteral("script"), tr("Script"),
       [this] {
         editor_ = new tsv::CodeEditor(this);
         editor_->setFont(fixed_font());
         editor_->setLineWrapMode(QPlainTextEdit::NoWrap);
         return editor_;
       },
       Qt::LeftDockWidgetArea, Place::Add, {}, true},
      {QStringLiteral("contexts"), tr("Contexts"), [this] { return contexts_ = new tsv::ContextsPane(selection_, this); },
       Qt::LeftDockWidgetArea, Place::Add, {}, true},
      {QStringLiteral("console"), tr("Console"),
       [this] {
         console_ = new QPlainTextEdit(this);
         console_->setReadOnly(true);
         console_->setFont(fixed_font());
         console_->setMaximumBlockCount(5000);
         return console_;
       },
       Qt::LeftDockWidgetArea, Place::Add, {}, true},
      {QStringLiteral("kernel_ast"), tr("Kernel AST"),
       [this] { return kernel_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::KernelAst, selection_, this); }, Qt::RightDockWidgetArea,
       Place::Add, {}, true},
      {QStringLiteral("source"), tr("Source"), [this] { return source_ = new tsv::SourcePane(selection_, this); }, Qt::RightDockWidgetArea,
       Place::Add, {}, true},
      {QStringLiteral("schedule"), tr("Schedule"), [this] { return schedule_ = new tsv::SchedulePane(selection_, this); },
       Qt::BottomDockWidgetArea, Place::Add, {}, true},
      {QStringLiteral("timings"), tr("Timings"), [this] { return timings_ = new tsv::TimingsPane(selection_, this); },
       Qt::BottomDockWidgetArea, Place::SplitRight, QStringLiteral("schedule"), true},
      // the kernel split drawn: a tab over the schedule's table, shown first
      {QStringLiteral("kernel_graph"), tr("Kernel graph"),
       [this] { return calls_graph_ = new tsv::GraphPane(tsv::GraphPane::Kind::KernelGraph, selection_, this); },
       Qt::BottomDockWidgetArea, Place::TabWith, QStringLiteral("schedule")},
      // the buffer viewer: the values the script read back, a tab beside the timings
      {QStringLiteral("values"), tr("Values"), [this] { return values_ = new tsv::ValuesPane(selection_, this); },
       Qt::BottomDockWidgetArea, Place::TabWith, QStringLiteral("timings")},
      // what the selected kernel reads and writes, point by point of its loops: a tab beside the timings
      {QStringLiteral("access"), tr("Access"), [this] { return access_ = new tsv::AccessPanes(selection_, this); },
       Qt::BottomDockWidgetArea, Place::TabWith, QStringLiteral("timings")},
      // the roofline of the run's device: a tab beside the timings
      {QStringLiteral("roofline"), tr("Roofline"), [this] { return roofline_ = new tsv::RooflinePane(selection_, this); },
       Qt::BottomDockWidgetArea, Place::TabWith, QStringLiteral("timings")},
      // the run on a time axis (host, devices, memory): a tab beside the timings
      {QStringLiteral("timeline"), tr("Timeline"), [this] { return new tsv::TimelinePane(selection_, this); },
       Qt::BottomDockWidgetArea, Place::TabWith, QStringLiteral("timings")},
      // Compare with…: below the Schedule and Timings row, the whole width (the two devices' rows line up)
      {QStringLiteral("compare"), tr("Compare"), [this] { return build_compare_dock(); }, Qt::BottomDockWidgetArea, Place::Under, {},
       false, true, &compare_dock_},
      // the rewrite stepper under the kernel AST (both in view: the AST a kernel's rewrites produce, and the steps)
      {QStringLiteral("stepper"), tr("Rewrite stepper"), [this] { return new tsv::StepperPane(selection_, this); },
       Qt::RightDockWidgetArea, Place::SplitBelow, QStringLiteral("kernel_ast"), true},
      // the tour: a tab beside the console, shown when Help > Tour starts it
      {QStringLiteral("tour"), tr("Tour"), [this] { return tour_ = new Tour(this); }, Qt::LeftDockWidgetArea, Place::TabWith,
       QStringLiteral("console"), false, true, &tour_dock_},
  };
  QHash<QString, QDockWidget*> made;
  for (const Pane& p : panes) {
    QDockWidget* d = nullptr;
    if (p.place == Place::Under) {
      d = new QDockWidget(p.title, this);
      d->setObjectName(p.name);
      d->setWidget(p.make());
      addDockWidget(p.area, d, Qt::Vertical);
    } else {
      d = add_dock(p.title, p.name, p.make(), p.area);
    }
    if (p.place == Place::SplitRight) splitDockWidget(made.value(p.beside), d, Qt::Horizontal);
    else if (p.place == Place::SplitBelow) splitDockWidget(made.value(p.beside), d, Qt::Vertical);
    else if (p.place == Place::TabWith) tabifyDockWidget(made.value(p.beside), d);
    // a pane's own minimum (a table's columns, a label's text, larger text) never sizes the window: each has one of its own
    d->widget()->setMinimumSize(kPaneMin);
    if (p.hidden) d->hide();
    if (p.sized) default_docks_.push_back(d);
    if (p.keep) *p.keep = d;
    made.insert(p.name, d);
  }
  made.value(QStringLiteral("kernel_graph"))->raise();
  made.value(QStringLiteral("timings"))->raise();
  centralWidget()->setMinimumSize(kPaneMin);
  default_state_ = saveState();  // where the docks are (View > Reset layout); their sizes come from default_layout()
}

// View, Run and Help (File: build_file_menu)
void MainWindow::build_menus() {
  build_file_menu();
  auto* view = menuBar()->addMenu(tr("&View"));
  dark_act_ = view->addAction(tr("Dark theme"));
  dark_act_->setCheckable(true);
  connect(dark_act_, &QAction::toggled, this, &MainWindow::set_dark);
  view->addSeparator();
  for (auto* d : findChildren<QDockWidget*>()) {
    view->addAction(d->toggleViewAction());
    // a dock shown from the menu keeps the window within the screen (a tab where it has no room)
    connect(d->toggleViewAction(), &QAction::triggered, this, [this, d](bool on) {
      if (on) show_dock(d, height() / 4);
    });
  }
  large_act_ = view->addAction(tr("Larger text (projector)"));
  large_act_->setCheckable(true);
  large_act_->setToolTip(tr("Every pane's text 1.4 times as large, for a projector or a talk (the window keeps its size)"));
  connect(large_act_, &QAction::toggled, this, &MainWindow::set_large_text);
  auto* reset = view->addAction(tr("Reset layout"), this, &MainWindow::reset_layout);
  reset->setObjectName(QStringLiteral("reset_layout"));
  reset->setToolTip(tr("The docks where the first launch puts them, the default window size; forgets the saved layout"));
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
  build_whatif_menu(run_menu);
  if (auto* tb = findChild<QToolBar*>()) tb->addWidget(whatif_history_box_);
  run_menu->addAction(tr("Measure limits for this device"), this, &MainWindow::measure_limits)
      ->setToolTip(tr("tinyscope bench --limits: the device's memory bandwidth and peak, for the Roofline pane's roof"));
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("Keyboard shortcuts…"), QKeySequence::HelpContents, this,
                  [this] { QMessageBox::information(this, tr("Keyboard shortcuts"), shortcuts_text()); });
  help->addAction(tr("Legend…"), this, [this] { QMessageBox::information(this, tr("Legend"), legend_text()); });
  help->addAction(tr("Glossary…"), this, [this] {  // (the same words are in the tooltips of ops, passes, opts and kernel names)
    QMessageBox box(QMessageBox::NoIcon, tr("Glossary"), tsv::glossary_html(), QMessageBox::Ok, this);
    box.setTextFormat(Qt::RichText);
    box.exec();
  });
  help->addAction(tr("Tour of the pipeline"), QKeySequence(Qt::Key_F2), this, &MainWindow::start_tour);
  // the lessons (resources/lessons): each runs its script, then asks before it shows
  auto* lessons = help->addMenu(tr("Lessons"));
  for (const QString& path : lesson_resources()) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) continue;
    const tsv::Lesson l = tsv::parse_lesson(QString::fromUtf8(f.readAll()));
    if (l.steps.isEmpty()) continue;
    const QString n = QFileInfo(path).fileName().section(QLatin1Char('-'), 0, 0);
    lessons->addAction(QStringLiteral("%1. %2").arg(n.toInt()).arg(l.title), this, [this, path] { play_lesson(path); });
  }
}

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
  // the timeline as Chrome's Trace Event JSON, as `tinyscope run --chrome-trace` writes it (Perfetto opens it)
  auto* timeline_act = file->addAction(tr("Export timeline…"), this, [this] {
    const QString base = QFileInfo(script_path_).completeBaseName();
    const QString f = QFileDialog::getSaveFileName(this, tr("Export timeline"), (base.isEmpty() ? QStringLiteral("timeline") : base) + ".chrome.json",
                                                   tr("Chrome trace (*.json)"));
    if (f.isEmpty()) return;
    export_timeline(f);
  });
  timeline_act->setObjectName(QStringLiteral("export_timeline"));
  timeline_act->setToolTip(tr("Write the run's timeline as Chrome's Trace Event JSON: a process per device and the host, an event per call"));
  connect(file, &QMenu::aboutToShow, timeline_act, [this, timeline_act] { timeline_act->setEnabled(!session_->raw().isEmpty()); });
  file->addSeparator();
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);
}

bool MainWindow::export_timeline(const QString& path) {
  const QString err = export_chrome_trace(session_->raw(), path);
  status_->setText(err.isEmpty() ? tr("Timeline written to %1 (Perfetto and chrome://tracing open it)").arg(path) : err);
  if (!err.isEmpty()) append_console(err + "\n", true);
  return err.isEmpty();
}

// the status line, a run's progress, a BEAM search's bar and Cancel, and Run > Measure limits while it measures
void MainWindow::build_status_bar() {
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
  t += tr(" …, one per call in order: the same colour as its node in the Kernel graph, its Timings bar and its Roofline dot); a thick outline: the node a kernel stores; blue: the selected call's nodes; "
          "orange: the nodes a selected rewrite pass produced; red: the selected node.<br>");
  t += tr("<br><b>Names</b> are coloured as the reference prints them: the letters by kind (r: reduce, E: elementwise), "
          "each dimension by its axis type (blue: global, cyan: local, red: reduce, yellow/purple: upcast/unroll).<br>");
  t += tr("<br><b>Timings</b>: the bar and <i>time</i> are the median of the warm runs after the first; the whisker spans "
          "the fastest to the slowest of them; ± is half that spread over the median; <i>first run</i> is DEBUG=2's time; "
          "* marks a program's first run; ↺ a kernel timed on restored inputs; <i>once</i> a call that ran once; <i>noisy</i> a "
          "call whose warm runs spread over ±25%; » a bar or whisker beyond the axis (the axis leaves out calls that dwarf the rest).");
  using K = tsv::TimelineSpan::Kind;
  t += tr("<br><br><b>Timeline</b>: ") + swatch(tsv::TimelinePane::kind_color(K::Schedule)) + tr(" scheduling, ") +
       swatch(tsv::TimelinePane::kind_color(K::Codegen)) + tr(" codegen, ") + swatch(tsv::TimelinePane::kind_color(K::Compile)) +
       tr(" compiling (host lanes); ") + swatch(tsv::TimelinePane::kind_color(K::Kernel)) + tr(" a kernel, ") +
       swatch(tsv::TimelinePane::kind_color(K::Copy)) + tr(" a copy, ") + swatch(tsv::TimelinePane::kind_color(K::Graph)) +
       tr(" a TinyJit graph holding its kernels (device lanes); dashed marks: the script's lines; arcs: from the calls that "
          "wrote the selected call's inputs; the memory lane: allocated bytes, each buffer a band, the peak named.");
  t += tr("<br><br><b>Compare</b>: a row pairs the calls that compute the same thing; names in amber: paired by kind and "
          "buffer sizes only (another computation); a ratio's range: what the warm runs allow, uncoloured when it spans 1; "
          "the first divergence: the first call whose output differs beyond its dtype's tolerance (click it).");
  return t;
}

void MainWindow::set_dark(bool dark) {
  qApp->setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  qApp->setPalette(make_palette(dark));
  source_->set_dark(dark);
  if (dark_act_->isChecked() != dark) dark_act_->setChecked(dark);
}

QDockWidget* MainWindow::add_dock(const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
  auto* d = new QDockWidget(title, this);
  d->setObjectName(name);
  d->setWidget(w);
  addDockWidget(area, d);
  return d;
}

}  // namespace tsgui
