#include "app/gui/run_controller.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTimer>
#include <cstring>

namespace tsgui {

RunController::RunController(QObject* parent) : QObject(parent), program_(QCoreApplication::applicationFilePath()) {
  poll_ = new QTimer(this);
  poll_->setInterval(250);
  connect(poll_, &QTimer::timeout, this, [this] {
    stream_.poll();
    emit progress();
  });
}

RunController::~RunController() {
  drop_spare();
  if (process_) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(2000);
  }
}

void RunController::set_program(const QString& path) {
  if (path == program_) return;
  program_ = path;
  drop_spare();
}

void RunController::set_keep_warm(bool on) {
  keep_warm_ = on;
  if (!on) drop_spare();
}

int RunController::error_line(const QString& text, const QString& script_path) {
  static const QRegularExpression re(QStringLiteral(R"re(File "([^"]+)", line (\d+))re"));
  const QString want = QFileInfo(script_path).fileName();
  int line = -1;
  auto it = re.globalMatch(text);
  while (it.hasNext()) {
    auto m = it.next();
    if (m.captured(1) == script_path || QFileInfo(m.captured(1)).fileName() == want) line = m.captured(2).toInt();
  }
  return line;
}

// a `tinyscope serve` child: it starts Python and the JIT, then waits for one request line on stdin
QProcess* RunController::spawn() {
  auto* p = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove(QStringLiteral("DEBUG"));
  p->setProcessEnvironment(env);
  p->start(program_, {QStringLiteral("serve")});
  return p;
}

void RunController::warm_up() {
  if (spare_ || !keep_warm_) return;
  spare_ = spawn();
  QProcess* p = spare_;
  // a spare that dies (or cannot start) is simply replaced at the next run
  connect(p, &QProcess::finished, this, [this, p] {
    if (p != spare_) return;
    spare_ = nullptr;
    p->deleteLater();
  });
  connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || p != spare_) return;
    spare_ = nullptr;
    p->deleteLater();
  });
}

void RunController::drop_spare() {
  if (!spare_) return;
  QProcess* p = spare_;
  spare_ = nullptr;
  p->disconnect(this);
  p->kill();
  p->waitForFinished(2000);
  delete p;
}

void RunController::start(const QString& script_name, const QString& source, const QString& device) {
  stop();
  dir_ = std::make_unique<QTemporaryDir>();
  QString path = dir_->filePath(QFileInfo(script_name).fileName());
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(source.toUtf8()) < 0) {
    emit output(tr("cannot write %1: %2\n").arg(path, f.errorString()), true);
    emit finished(-1, false, {}, {});
    return;
  }
  f.close();
  start_file(path, device);
}

void RunController::start_file(const QString& script_path, const QString& device) {
  stop();
  if (!dir_) dir_ = std::make_unique<QTemporaryDir>();
  script_path_ = script_path;
  trace_path_ = dir_->filePath(QStringLiteral("trace.json"));
  stream_path_ = dir_->filePath(QStringLiteral("trace.stream.jsonl"));
  for (const QString& f : {trace_path_, stream_path_, dir_->filePath(QStringLiteral("partial.json"))}) QFile::remove(f);
  stream_.reset(stream_path_);
  end_ = End{};
  end_.device = device;
  stderr_.clear();
  stopping_ = false;
  QProcess* p = spare_ && spare_->state() != QProcess::NotRunning ? spare_ : nullptr;
  last_warm_ = p && p->state() == QProcess::Running;
  if (p) {
    spare_ = nullptr;
    p->disconnect(this);
  } else {
    drop_spare();
    p = spawn();
  }
  process_ = p;
  auto read_out = [this, p] {
    QByteArray out = p->readAllStandardOutput();
    if (!out.isEmpty()) emit output(QString::fromUtf8(out), false);
  };
  auto read_err = [this, p] {
    QString s = QString::fromUtf8(p->readAllStandardError());
    if (s.isEmpty()) return;
    stderr_ += s;
    emit output(s, true);
  };
  connect(p, &QProcess::readyReadStandardOutput, this, read_out);
  connect(p, &QProcess::readyReadStandardError, this, read_err);
  connect(p, &QProcess::finished, this, [this, p, read_out, read_err](int code, QProcess::ExitStatus status) {
    if (p != process_) return;
    read_out();
    read_err();
    on_exit(p, code, status);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart && p == process_) fail_to_start(p);
  });
  if (p->state() == QProcess::NotRunning) return fail_to_start(p);  // it failed before the handlers were connected
  QJsonObject req{{"script", script_path}, {"json", trace_path_}, {"stream", stream_path_}, {"trace", "matches"},
                  {"dev", device},    {"repeat", repeat_},  {"beam", beam_}, {"opts", extended_ ? "extended" : "reference"},
                  {"snapshots", snapshots_}};
  if (!codegen_env_.isEmpty()) {
    QJsonObject env;
    for (auto it = codegen_env_.begin(); it != codegen_env_.end(); ++it) env[it.key()] = it.value();
    req["env"] = env;
  }
  run_clock_.start();
  poll_->start();
  p->write(QJsonDocument(req).toJson(QJsonDocument::Compact) + "\n");
  p->closeWriteChannel();
  read_out();  // what the spare printed while it waited (nothing, normally)
  read_err();
  emit started();
}

void RunController::fail_to_start(QProcess* p) {
  process_ = nullptr;
  poll_->stop();
  p->deleteLater();
  emit output(tr("cannot start %1: %2\n").arg(program_, p->errorString()), true);
  emit finished(-1, false, {}, {});
}

// the child is gone: its whole trace when it wrote one, else the trace rebuilt from what it streamed
void RunController::on_exit(QProcess* p, int code, QProcess::ExitStatus status) {
  process_ = nullptr;
  p->deleteLater();
  poll_->stop();
  stream_.poll();
  last_run_ms_ = run_clock_.elapsed();
  end_.ms = last_run_ms_;
  end_.stopped = stopping_;
  end_.crashed = status != QProcess::NormalExit;
  end_.code = code;  // after a crash, the signal
  end_.calls = stream_.calls();
  end_.contexts = stream_.contexts();
  QString trace = !end_.crashed && QFileInfo::exists(trace_path_) ? trace_path_ : QString();
  if (trace.isEmpty() && stream_.bytes() > 0) {
    int records = 0;
    QString err;
    const QJsonObject fields{{"script", script_path_}, {"device", end_.device}, {"partial", describe(end_)}};
    const QByteArray doc = TraceStream::rebuild(stream_path_, fields, &records, &err);
    QFile out(dir_->filePath(QStringLiteral("partial.json")));
    if (records > 0 && out.open(QIODevice::WriteOnly) && out.write(doc) == doc.size()) {
      out.close();
      trace = out.fileName();
      end_.partial = true;
    } else if (!err.isEmpty()) {
      emit output(err + "\n", true);
    }
  }
  emit progress();
  emit finished(end_.crashed ? -1 : code, stopping_, trace, stderr_);
  // the next run's child starts now, while the window reads this trace
  if (keep_warm_) QTimer::singleShot(0, this, [this] {
    if (hold_warm_) warm_wanted_ = true;
    else warm_up();
  });
}

void RunController::hold_warm_up(bool hold) {
  hold_warm_ = hold;
  if (!hold && warm_wanted_) {
    warm_wanted_ = false;
    warm_up();
  }
}

qint64 RunController::elapsed_ms() const { return running() ? run_clock_.elapsed() : end_.ms; }

QString RunController::signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  return abbrev ? tr("signal %1 (SIG%2, %3)").arg(sig).arg(QString::fromLatin1(abbrev), QString::fromLocal8Bit(what))
                : tr("signal %1").arg(sig);
}

QString RunController::describe(const End& e) {
  const QString after = tr("after %1 s").arg(e.ms / 1000.0, 0, 'f', 1);
  if (e.stopped) return tr("stopped %1").arg(after);
  if (e.crashed) return tr("crashed: %1 %2").arg(signal_text(e.code), after);
  if (e.code != 0) return tr("exit code %1 %2").arg(e.code).arg(after);
  return tr("finished %1").arg(after);
}

void RunController::stop() {
  if (!running()) return;
  stopping_ = true;
  QProcess* p = process_;
  p->kill();
  // deliver finished() now so a following start() sees a clean state; waiting on a killed child is short
  p->waitForFinished(3000);
}

}  // namespace tsgui
