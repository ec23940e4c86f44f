#include "app/gui/run_controller.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>

namespace tsgui {

RunController::RunController(QObject* parent) : QObject(parent), program_(QCoreApplication::applicationFilePath()) {}

RunController::~RunController() {
  if (process_) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(2000);
  }
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
  QFile::remove(trace_path_);
  stderr_.clear();
  stopping_ = false;
  auto* p = new QProcess(this);
  process_ = p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("DEV"), device);
  env.remove(QStringLiteral("DEBUG"));
  p->setProcessEnvironment(env);
  connect(p, &QProcess::readyReadStandardOutput, this, [this, p] {
    emit output(QString::fromUtf8(p->readAllStandardOutput()), false);
  });
  connect(p, &QProcess::readyReadStandardError, this, [this, p] {
    QString s = QString::fromUtf8(p->readAllStandardError());
    stderr_ += s;
    emit output(s, true);
  });
  connect(p, &QProcess::finished, this, [this, p](int code, QProcess::ExitStatus status) {
    if (p != process_) return;
    process_ = nullptr;
    p->deleteLater();
    bool crashed = status != QProcess::NormalExit;
    QString trace = !crashed && QFileInfo::exists(trace_path_) ? trace_path_ : QString();
    emit finished(crashed ? -1 : code, stopping_, trace, stderr_);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || p != process_) return;
    process_ = nullptr;
    p->deleteLater();
    emit output(tr("cannot start %1: %2\n").arg(program_, p->errorString()), true);
    emit finished(-1, false, {}, {});
  });
  p->start(program_, {QStringLiteral("run"), script_path, QStringLiteral("--json"), trace_path_,
                      QStringLiteral("--trace"), QStringLiteral("matches")});
  emit started();
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
