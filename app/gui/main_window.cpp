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

// the icons and the tour's text (resources/tinyscope.qrc), compiled into the window's static library: registered
// here, since nothing else would make the linker keep them (Q_INIT_RESOURCE: outside any namespace)
static void init_resources() { Q_INIT_RESOURCE(tinyscope); }

namespace tsgui {

MainWindow::MainWindow(const QString& examples_dir, bool restore_layout, QWidget* parent)
    : QMainWindow(parent), examples_dir_(examples_dir), restore_layout_(restore_layout) {
  static const bool resources = (init_resources(), true);
  Q_UNUSED(resources);
  setWindowTitle(QStringLiteral("tinyscope"));
  setDockNestingEnabled(true);
  session_ = new tsv::Session(this);
  selection_ = new tsv::SelectionModel(session_, this);
  controller_ = new RunController(this);
  // the parts (main_window_build.cpp), in this order: the menus list the docks, the status bar shows the panes' state
  build_toolbar();
  build_central();
  build_docks();
  build_menus();
  build_status_bar();

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
  connect(roofline_, &tsv::RooflinePane::run_again, this, &MainWindow::run);
  if (qEnvironmentVariableIntValue("TINYSCOPE_PERF") > 0) set_measuring(true, true);
  connect(tsv::LayoutEngine::instance(), &tsv::LayoutEngine::idle, this, &MainWindow::check_settled);
  for (auto* g : {tensor_graph_, kernel_graph_, calls_graph_}) connect(g, &tsv::GraphPane::layout_done, this, &MainWindow::check_settled);

  restore_settings();
  int tut = script_combo_->findText(QStringLiteral("tutorial.py"));
  if (tut >= 0) {
    script_combo_->setCurrentIndex(tut);
    open_script(script_combo_->itemData(tut).toString());
  }
}

MainWindow::~MainWindow() = default;

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

void MainWindow::set_beam(int n, bool extended) {
  const QSignalBlocker b1(beam_spin_), b2(extended_box_);
  beam_spin_->setValue(n);
  extended_box_->setChecked(extended);
  extended_box_->setEnabled(n > 0);
  controller_->set_beam(n);
  controller_->set_extended(extended);
}

void MainWindow::set_snapshots(bool on) { snapshots_act_->setChecked(on); }

void MainWindow::show_trace_error(const QString& what, const QString& err) {
  trace_error_->setText(QStringLiteral("<b>%1</b><br>%2").arg(what.toHtmlEscaped(), err.left(2000).toHtmlEscaped()));
  trace_error_->show();
}

QString MainWindow::trace_error() const { return !trace_error_->isHidden() ? trace_error_->text() : QString(); }

void MainWindow::select_first_kernel() {
  if (lesson_pending_) {  // a lesson's run: its first step (or --tour N's)
    lesson_pending_ = false;
    return show_tour(std::max(initial_tour_, 1) - 1);
  }
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
      show_dock(compare_dock_, height() * 22 / 100);
      if (auto* split = compare_dock_->findChild<QSplitter*>()) split->setSizes({1000, 1000});  // half each
    }
  }
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
  show_loading(trace);
  session_->load_async(trace);
}

void MainWindow::on_trace_loaded(bool ok, const QString& err) {
  show_loading({});
  if (!opening_trace_.isEmpty()) return trace_opened(ok, err);  // File > Open of a big trace, read off the UI thread
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
  if (ok) whatif_compare();  // a what-if run: beside the run before
  whatif_before_.clear();
  emit run_finished(run_ok_);
  check_settled();
}

bool MainWindow::settled() const {
  return !(layout_pending_ && isVisible()) && !compare_pending_ && main_settled() && !compare_controller_->running() && !compare_session_->loading();
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

void MainWindow::start_tour() {
  if (tour_->lesson_path() != QStringLiteral(":/lessons/01-tour.md")) tour_->load(QStringLiteral(":/lessons/01-tour.md"));
  show_tour(0);
}

bool MainWindow::play_lesson(const QString& path, QString* error) {
  if (!prepare_lesson(path, error)) return false;
  run();
  return true;
}

bool MainWindow::prepare_lesson(const QString& path, QString* error) {
  QString err;
  if (!tour_->load(path, &err)) {
    if (error) *error = err;
    status_->setText(tr("Lesson: %1").arg(err));
    return false;
  }
  // its script: beside the lesson file, or (a lesson of the resources) in the examples' sibling folder resources/lessons
  const QString lessons = path.startsWith(QStringLiteral(":/")) ? QDir(examples_dir_).filePath(QStringLiteral("../lessons")) : QFileInfo(path).absolutePath();
  const QString script = QDir::cleanPath(QDir(lessons).filePath(tour_->lesson().script));
  if (!QFileInfo(script).isFile()) {
    err = tr("the lesson's script %1 is missing").arg(script);
    if (error) *error = err;
    status_->setText(tr("Lesson: %1").arg(err));
    return false;
  }
  open_script(script);
  lesson_pending_ = true;
  return true;
}

void MainWindow::show_tour(int stop) {
  // tall enough for a stop's text (a question, its answer box and the text) at 1280 x 720, also when it was shown already
  const int extent = std::max(height() * 40 / 100, 240);
  show_dock(tour_dock_, extent);
  resizeDocks({tour_dock_}, {extent}, Qt::Vertical);
  tour_->go(stop);
}

QString MainWindow::first_device() const { return session_->device().isEmpty() ? device_combo_->currentText() : session_->device(); }

// two would share the cores and measure each other)
void MainWindow::measure_limits() {
  const QString dev = device_combo_->currentText();
  if (controller_->running() || compare_controller_->running() || compare_pending_)
    return status_->setText(tr("Measure the limits once the run has finished (both at once would share the device)"));
  if (limits_measure_->start(controller_->program(), dev))
    status_->setText(tr("Measuring the limits of %1 (tinyscope bench --limits --dev %1)…").arg(dev));
}

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
