#pragma once
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <memory>

class QTemporaryDir;

namespace tsgui {

// Runs a script in a child `tinyscope serve` process (it records the trace with every rule match) so a
// crash, a hang or Stop never touches the window's process. A spare child is kept warm: it has started
// Python and the JIT already and waits for its script on stdin, so Run starts at once. Reports output as it
// comes and the trace file when the child exits.
class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // the tinyscope executable to run (default: this process's own executable); drops a spare of another one
  void set_program(const QString& path);
  QString program() const { return program_; }
  // each kernel of a run is timed this many times (the Timings pane shows their spread)
  void set_repeat(int n) { repeat_ = n < 1 ? 1 : n; }
  int repeat() const { return repeat_; }
  // keep a spare child started between runs (default on)
  void set_keep_warm(bool on);
  // starts the spare child now if there is none
  void warm_up();
  bool has_spare() const { return spare_ != nullptr; }

  // Saves `source` as a temporary copy of `script_name` and runs it on `device`. Stops a run in progress.
  void start(const QString& script_name, const QString& source, const QString& device);
  // Runs a script file in place.
  void start_file(const QString& script_path, const QString& device);
  void stop();
  bool running() const { return process_ && process_->state() != QProcess::NotRunning; }
  QString script_path() const { return script_path_; }
  // whether the last run went to a warm child, and how long that child took from the request to its exit
  bool last_run_was_warm() const { return last_warm_; }
  qint64 last_run_ms() const { return last_run_ms_; }

  // the line of `script_path` a Python traceback in `text` points at last, or -1
  static int error_line(const QString& text, const QString& script_path);

 signals:
  void started();
  void output(const QString& text, bool is_stderr);
  // exit_code is -1 after a crash or Stop; trace_path is empty when no trace was written
  void finished(int exit_code, bool stopped, const QString& trace_path, const QString& stderr_text);

 private:
  QProcess* spawn();
  void drop_spare();
  QString program_;
  QProcess* process_ = nullptr;
  QProcess* spare_ = nullptr;
  bool keep_warm_ = true;
  int repeat_ = 1;
  std::unique_ptr<QTemporaryDir> dir_;
  QString script_path_, trace_path_, stderr_;
  bool stopping_ = false;
  bool last_warm_ = false;
  qint64 last_run_ms_ = 0;
  QElapsedTimer run_clock_;
};

}  // namespace tsgui
