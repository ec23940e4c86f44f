// Opening a saved trace: checked and read (a big one off the UI thread, with a busy bar at once), its script opened
// when it is a .py file, and its console (what the script printed) shown again in the console.
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QStatusBar>

#include "app/gui/main_window.h"
#include "viewer/model/compare_file.h"
#include "viewer/model/session.h"

namespace tsgui {

bool MainWindow::open_trace(const QString& path, QString* error) {
  if (tsv::is_compare_file_at(path)) return open_compare_file(path, error);
  show_loading(path);
  if (!error && QFileInfo(path).size() > kAsyncTraceBytes) {  // nobody waits for the answer: the window stays live
    opening_trace_ = path;
    session_->load_async(path);  // trace_opened() goes on from there
    return true;
  }
  QString err;
  const bool ok = session_->load(path, &err);
  show_loading({});
  if (!ok) return open_trace_failed(path, err, error);
  show_opened_trace(path);
  return true;
}

void MainWindow::trace_opened(bool ok, const QString& err) {
  const QString path = std::exchange(opening_trace_, QString());
  if (ok) show_opened_trace(path);
  else open_trace_failed(path, err, nullptr);
  check_settled();
}

void MainWindow::show_loading(const QString& path) {
  if (!load_bar_) {
    load_bar_ = new QProgressBar(this);
    load_bar_->setObjectName(QStringLiteral("trace_loading"));
    load_bar_->setRange(0, 0);  // busy: the parser says nothing until it is done
    load_bar_->setMaximumWidth(360);
    load_bar_->setTextVisible(true);
    statusBar()->addPermanentWidget(load_bar_);
  }
  if (path.isEmpty()) return load_bar_->hide();
  const QFileInfo f(path);
  load_bar_->setFormat(tr("Reading %1 (%2)…").arg(f.fileName(), QLocale().formattedDataSize(f.size())));
  load_bar_->setToolTip(load_bar_->format());
  status_->setText(tr("Reading the trace %1 (%2)…").arg(f.fileName(), QLocale().formattedDataSize(f.size())));
  load_bar_->show();
  if (isVisible()) statusBar()->repaint();  // at once, before a parse on this thread
}

bool MainWindow::open_trace_failed(const QString& path, const QString& err, QString* error) {
  append_console(tr("Cannot open the trace %1\n%2\n").arg(QFileInfo(path).fileName(), err), true);
  status_->setText(tr("Cannot open the trace: %1").arg(err));
  show_trace_error(tr("Cannot open the trace %1 (nothing of it is shown):").arg(QFileInfo(path).fileName()), err);
  setWindowTitle(tr("tinyscope — cannot open %1").arg(QFileInfo(path).fileName()));
  if (error) *error = err;
  return false;
}

void MainWindow::show_opened_trace(const QString& path) {
  status_->setText(tr("%1: %2 contexts, %3 calls on %4")
                       .arg(QFileInfo(path).fileName())
                       .arg(session_->contexts().size())
                       .arg(session_->calls().size())
                       .arg(session_->device()));
  // what the script printed when it ran, as the run showed it (a trace from before the trace kept it: a note)
  console_->clear();
  if (session_->console().isEmpty()) {
    append_console(tr("(%1 keeps no console output: it was recorded before traces kept it)\n").arg(QFileInfo(path).fileName()), false);
  } else {
    append_console(tr("$ tinyscope run %1 (DEV=%2), from the trace %3\n")
                       .arg(QFileInfo(session_->script()).fileName(), session_->device(), QFileInfo(path).fileName()),
                   false);
    for (const auto& [is_err, text] : session_->console()) append_console(text, is_err);
  }
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
}

}  // namespace tsgui
