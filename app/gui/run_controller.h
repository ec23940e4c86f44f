#pragma once
#include <QElapsedTimer>
#include <QMap>
#include <QObject>
#include <QProcess>
#include <QString>
#include <memory>

#include "app/gui/trace_stream.h"

class QTemporaryDir;
class QTimer;

namespace tsgui {

// Runs a script in a child `tinyscope serve` process (it records the trace with every rule match) so a
// crash, a hang or Stop never touches the window's process. A spare child is kept warm: it has started
// Python and the JIT already and waits for its script on stdin, so Run starts at once. Reports output as it
// comes and the trace file when the child exits. The child streams its trace as it records it (one JSON line per
// finished context, uops batch and call): while it runs, progress() reports what arrived, and when it dies before
// writing the whole trace (Stop, a crash, an exit without a trace) the trace is rebuilt from that stream, so
// nothing recorded is lost; the run is then reported partial.
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
  // every call's output buffers kept in the trace (`tinyscope run --snapshots`)
  void set_snapshots(bool on) { snapshots_ = on; }
  bool snapshots() const { return snapshots_; }
  // BEAM=n for the runs (0: the default opts)
  void set_beam(int n) { beam_ = n < 0 ? 0 : n; }
  int beam() const { return beam_; }
  // codegen variables for the runs (NOOPT, FP_CONTRACT, USE_TC, ...: engine/codegen/opt.h codegen_option_names), each
  // NAME -> VALUE; the window's What if toggles them
  void set_codegen_env(const QMap<QString, QString>& env) { codegen_env_ = env; }
  const QMap<QString, QString>& codegen_env() const { return codegen_env_; }
  // the opt space BEAM searches: the reference's actions, or the extended space (TS_OPTS=extended)
  void set_extended(bool on) { extended_ = on; }
  bool extended() const { return extended_; }
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

  // how the last run ended
  struct End {
    bool stopped = false;  // by stop()
    bool crashed = false;  // killed by a signal (a Stop is one too: SIGKILL)
    int code = 0;          // the exit code, or the signal that ended it when crashed
    bool partial = false;  // the trace was rebuilt from the stream: what was recorded up to the end
    int calls = 0, contexts = 0;  // in the stream
    qint64 ms = 0;         // from the request to the child's exit
    QString device;
  };
  const End& last_end() const { return end_; }
  // "stopped after 1.2 s", "crashed: signal 6 (SIGABRT, Aborted) after 0.4 s", "exit code 3"
  static QString describe(const End& e);
  // "signal 6 (SIGABRT, Aborted)"
  static QString signal_text(int sig);
  // while a run goes on: what its trace stream brought so far, and the time since the request
  const TraceStream& stream() const { return stream_; }
  qint64 elapsed_ms() const;
  // while held, the spare for the next run is not started after a run (it is when released): a Compare run on
  // the other device keeps the cores to itself
  void hold_warm_up(bool hold);

 signals:
  void started();
  void output(const QString& text, bool is_stderr);
  // a few times a second while a run goes on: stream() and elapsed_ms() have moved on
  void progress();
  // exit_code is -1 after a crash or Stop; trace_path is empty when no trace was written
  void finished(int exit_code, bool stopped, const QString& trace_path, const QString& stderr_text);

 private:
  QProcess* spawn();
  void drop_spare();
  void on_exit(QProcess* p, int code, QProcess::ExitStatus status);
  void fail_to_start(QProcess* p);
  QString program_;
  QProcess* process_ = nullptr;
  QProcess* spare_ = nullptr;
  bool keep_warm_ = true;
  int repeat_ = 1;
  bool snapshots_ = false;
  int beam_ = 0;
  bool extended_ = false;
  QMap<QString, QString> codegen_env_;
  std::unique_ptr<QTemporaryDir> dir_;
  QString script_path_, trace_path_, stream_path_, stderr_;
  TraceStream stream_;
  QTimer* poll_ = nullptr;
  End end_;
  bool hold_warm_ = false, warm_wanted_ = false;
  bool stopping_ = false;
  bool last_warm_ = false;
  qint64 last_run_ms_ = 0;
  QElapsedTimer run_clock_;
};

}  // namespace tsgui
