#pragma once
#include <QObject>
#include <QProcess>
#include <QString>
#include <memory>

class QTemporaryDir;

namespace tsgui {

// Runs a script as a child `tinyscope run SCRIPT --json TRACE --trace matches` so a crash, a hang or Stop
// never touches the window's process. Reports output as it comes and the trace file when the child exits.
class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // the tinyscope executable to run (default: this process's own executable)
  void set_program(const QString& path) { program_ = path; }
  QString program() const { return program_; }

  // Saves `source` as a temporary copy of `script_name` and runs it on `device`. Stops a run in progress.
  void start(const QString& script_name, const QString& source, const QString& device);
  // Runs a script file in place.
  void start_file(const QString& script_path, const QString& device);
  void stop();
  bool running() const { return process_ && process_->state() != QProcess::NotRunning; }
  QString script_path() const { return script_path_; }

  // the line of `script_path` a Python traceback in `text` points at last, or -1
  static int error_line(const QString& text, const QString& script_path);

 signals:
  void started();
  void output(const QString& text, bool is_stderr);
  // exit_code is -1 after a crash or Stop; trace_path is empty when no trace was written
  void finished(int exit_code, bool stopped, const QString& trace_path, const QString& stderr_text);

 private:
  QString program_;
  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> dir_;
  QString script_path_, trace_path_, stderr_;
  bool stopping_ = false;
};

}  // namespace tsgui
