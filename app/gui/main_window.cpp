#include "app/gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTextBlock>
#include <QTimer>
#include <QToolBar>

#include "app/gui/run_controller.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/session.h"
#include "viewer/panes/contexts_pane.h"
#include "viewer/panes/graph_pane.h"
#include "viewer/panes/schedule_pane.h"
#include "viewer/panes/source_pane.h"
#include "viewer/panes/source_highlighter.h"
#include "viewer/panes/timings_pane.h"

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
  device_combo_->addItems({QStringLiteral("CPU"), QStringLiteral("CPU:LLVM"), QStringLiteral("INTERP")});
  device_combo_->setToolTip(tr("Device (DEV)"));
  tb->addWidget(new QLabel(tr(" Script "), this));
  tb->addWidget(script_combo_);
  tb->addWidget(new QLabel(tr("  Device "), this));
  tb->addWidget(device_combo_);
  tb->addSeparator();
  run_act_ = tb->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Run"), this, &MainWindow::run);
  run_act_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  stop_act_ = tb->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this, &MainWindow::stop);
  stop_act_->setEnabled(false);
  tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

  // ---- panes
  editor_ = new QPlainTextEdit(this);
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

  setCentralWidget(tensor_graph_);
  auto* d_script = add_dock(tr("Script"), QStringLiteral("script"), editor_, Qt::LeftDockWidgetArea);
  auto* d_ctx = add_dock(tr("Contexts"), QStringLiteral("contexts"), contexts_, Qt::LeftDockWidgetArea);
  auto* d_console = add_dock(tr("Console"), QStringLiteral("console"), console_, Qt::LeftDockWidgetArea);
  auto* d_ast = add_dock(tr("Kernel AST"), QStringLiteral("kernel_ast"), kernel_graph_, Qt::RightDockWidgetArea);
  auto* d_src = add_dock(tr("Source"), QStringLiteral("source"), source_, Qt::RightDockWidgetArea);
  auto* d_sched = add_dock(tr("Schedule"), QStringLiteral("schedule"), schedule_, Qt::BottomDockWidgetArea);
  auto* d_time = add_dock(tr("Timings"), QStringLiteral("timings"), timings_, Qt::BottomDockWidgetArea);
  splitDockWidget(d_sched, d_time, Qt::Horizontal);
  default_docks_ = {d_script, d_ctx, d_console, d_ast, d_src, d_sched, d_time};
  default_layout();

  // ---- menus
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open script or trace…"), QKeySequence::Open, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, tr("Open"), examples_dir_, tr("Scripts and traces (*.py *.json)"));
    if (f.endsWith(".json")) open_trace(f);
    else if (!f.isEmpty()) open_script(f);
  });
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);
  auto* view = menuBar()->addMenu(tr("&View"));
  dark_act_ = view->addAction(tr("Dark theme"));
  dark_act_->setCheckable(true);
  connect(dark_act_, &QAction::toggled, this, &MainWindow::set_dark);
  view->addSeparator();
  for (auto* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  auto* run_menu = menuBar()->addMenu(tr("&Run"));
  run_menu->addAction(run_act_);
  run_menu->addAction(stop_act_);

  status_ = new QLabel(tr("Ready"), this);
  statusBar()->addWidget(status_, 1);

  // ---- wiring
  connect(script_combo_, &QComboBox::activated, this, [this](int i) { open_script(script_combo_->itemData(i).toString()); });
  connect(selection_, &tsv::SelectionModel::changed, this, [this](const tsv::Selection& sel) {
    const tsv::Uop* u = sel.node >= 0 ? session_->uop(sel.node) : nullptr;
    if (!u) return;
    QStringList shape;
    for (int d : u->shape) shape << QString::number(d);
    status_->setText(tr("uop %1: %2 %3 shape (%4) arg %5 on %6, %7 source(s)")
                         .arg(sel.node)
                         .arg(u->op, QString(u->dtype).remove("dtypes."), shape.join(", "), u->arg,
                              u->device.isEmpty() ? QStringLiteral("-") : u->device)
                         .arg(u->src.size()));
  });
  connect(controller_, &RunController::output, this, &MainWindow::append_console);
  connect(controller_, &RunController::finished, this, &MainWindow::on_run_finished);
  connect(tsv::LayoutEngine::instance(), &tsv::LayoutEngine::idle, this, &MainWindow::check_settled);
  for (auto* g : {tensor_graph_, kernel_graph_}) connect(g, &tsv::GraphPane::layout_done, this, &MainWindow::check_settled);

  QSettings settings;
  if (!restore_layout_ || !restoreGeometry(settings.value("window/geometry").toByteArray())) resize(1500, 950);
  default_layout();
  if (restore_layout_) {
    restoreState(settings.value("window/state").toByteArray());
    int dev = device_combo_->findText(settings.value("run/device").toString());
    if (dev >= 0) device_combo_->setCurrentIndex(dev);
  }
  bool dark = restore_layout_ && settings.value("view/dark", false).toBool();
  dark_act_->setChecked(dark);
  set_dark(dark);

  int tut = script_combo_->findText(QStringLiteral("tutorial.py"));
  if (tut >= 0) {
    script_combo_->setCurrentIndex(tut);
    open_script(script_combo_->itemData(tut).toString());
  }
}

MainWindow::~MainWindow() = default;

void MainWindow::default_layout() {
  if (default_docks_.size() != 7) return;
  auto d = default_docks_;
  const int w = std::max(width(), 1200), h = std::max(height(), 800);
  resizeDocks({d[0], d[1], d[2]}, {h * 28 / 100, h * 30 / 100, h * 20 / 100}, Qt::Vertical);
  resizeDocks({d[0], d[3]}, {w * 26 / 100, w * 36 / 100}, Qt::Horizontal);
  resizeDocks({d[3], d[4]}, {h * 38 / 100, h * 34 / 100}, Qt::Vertical);
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
  if (restore_layout_) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("view/dark", dark_act_->isChecked());
    settings.setValue("run/device", device_combo_->currentText());
  }
  QMainWindow::closeEvent(e);
}

void MainWindow::set_dark(bool dark) {
  qApp->setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  qApp->setPalette(make_palette(dark));
  source_->set_dark(dark);
  if (dark_act_->isChecked() != dark) dark_act_->setChecked(dark);
}

void MainWindow::set_device(const QString& dev) {
  int i = device_combo_->findText(dev, Qt::MatchFixedString);
  if (i < 0) {
    device_combo_->addItem(dev);
    i = device_combo_->count() - 1;
  }
  device_combo_->setCurrentIndex(i);
}

void MainWindow::open_script(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    append_console(tr("cannot open %1: %2\n").arg(path, f.errorString()), true);
    return;
  }
  script_path_ = QFileInfo(path).absoluteFilePath();
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
}

bool MainWindow::open_trace(const QString& path) {
  QString err;
  if (!session_->load(path, &err)) {
    append_console(err + "\n", true);
    status_->setText(err);
    return false;
  }
  status_->setText(tr("%1: %2 contexts, %3 calls on %4")
                       .arg(QFileInfo(path).fileName())
                       .arg(session_->contexts().size())
                       .arg(session_->calls().size())
                       .arg(session_->device()));
  // the script the trace came from, when it is still there
  if (QFileInfo(session_->script()).isFile()) open_script(session_->script());
  select_first_kernel();
  return true;
}

void MainWindow::select_first_kernel() {
  const auto& calls = session_->calls();
  for (int i = 0; i < calls.size(); ++i)
    if (calls[i].kind == "kernel") return selection_->select_call(i);
  if (!session_->contexts().isEmpty()) selection_->select_context(0);
}

void MainWindow::run() {
  console_->clear();
  mark_error_line(-1);
  QString name = script_path_.isEmpty() ? QStringLiteral("script.py") : QFileInfo(script_path_).fileName();
  append_console(tr("$ tinyscope run %1 (DEV=%2)\n").arg(name, device_combo_->currentText()), false);
  run_act_->setEnabled(false);
  stop_act_->setEnabled(true);
  status_->setText(tr("Running %1 on %2…").arg(name, device_combo_->currentText()));
  controller_->start(name, editor_->toPlainText(), device_combo_->currentText());
}

void MainWindow::stop() { controller_->stop(); }

void MainWindow::append_console(const QString& text, bool is_err) {
  QTextCharFormat fmt;
  if (is_err) fmt.setForeground(QColor(0xe0, 0x40, 0x40));
  QTextCursor c(console_->document());
  c.movePosition(QTextCursor::End);
  c.insertText(text, fmt);
  console_->verticalScrollBar()->setValue(console_->verticalScrollBar()->maximum());
}

void MainWindow::mark_error_line(int line) {
  error_line_ = line;
  QList<QTextEdit::ExtraSelection> sels;
  if (line > 0) {
    QTextEdit::ExtraSelection s;
    s.cursor = QTextCursor(editor_->document()->findBlockByNumber(line - 1));
    s.format.setBackground(QColor(0xff, 0x50, 0x50, 110));
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    sels.push_back(s);
    editor_->setTextCursor(s.cursor);
    editor_->centerCursor();
  }
  editor_->setExtraSelections(sels);
}

void MainWindow::on_run_finished(int code, bool stopped, const QString& trace, const QString& stderr_text) {
  run_act_->setEnabled(true);
  stop_act_->setEnabled(false);
  QString msg;
  if (stopped) msg = tr("Stopped.");
  else if (code < 0) msg = tr("The run crashed (the window is fine).");
  else msg = code == 0 ? tr("Finished.") : tr("Failed with exit code %1.").arg(code);
  append_console(QStringLiteral("\n[%1]\n").arg(msg), code != 0);
  int line = RunController::error_line(stderr_text, controller_->script_path());
  if (line > 0) {
    mark_error_line(line);
    msg += tr(" Error at line %1.").arg(line);
  }
  if (!trace.isEmpty()) {
    QString err;
    if (session_->load(trace, &err)) {
      select_first_kernel();
      msg += tr("  %1 contexts, %2 calls on %3").arg(session_->contexts().size()).arg(session_->calls().size()).arg(session_->device());
    } else {
      append_console(err + "\n", true);
    }
  }
  status_->setText(msg);
  emit run_finished(code == 0 && !stopped);
  check_settled();
}

bool MainWindow::settled() const {
  return !controller_->running() && !tensor_graph_->busy() && !kernel_graph_->busy() &&
         tsv::LayoutEngine::instance()->pending() == 0;
}

void MainWindow::check_settled() {
  if (settled()) emit settled_now();
}

}  // namespace tsgui
