#include "app/gui/limits_measure.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProcess>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>

namespace tsgui {

LimitsMeasure::LimitsMeasure(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("limits_measure"));
  auto* lay = new QHBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  label_ = new QLabel(this);
  bar_ = new QProgressBar(this);
  bar_->setRange(0, 0);  // busy: the bench says nothing of how far it is
  bar_->setMaximumWidth(120);
  bar_->setTextVisible(false);
  cancel_ = new QToolButton(this);
  cancel_->setText(tr("Cancel"));
  cancel_->setToolTip(tr("Stop measuring: the limits cache is left as it was"));
  connect(cancel_, &QToolButton::clicked, this, &LimitsMeasure::cancel);
  lay->addWidget(label_);
  lay->addWidget(bar_);
  lay->addWidget(cancel_);
  tick_ = new QTimer(this);
  tick_->setInterval(250);
  connect(tick_, &QTimer::timeout, this, &LimitsMeasure::show_progress);
  hide();
}

LimitsMeasure::~LimitsMeasure() {
  if (!process_) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(2000);
}

bool LimitsMeasure::start(const QString& program, const QString& device) {
  if (process_) return false;
  device_ = device;
  output_.clear();
  last_line_.clear();
  cancelled_ = false;
  auto* p = new QProcess(this);
  process_ = p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove(QStringLiteral("DEBUG"));
  p->setProcessEnvironment(env);
  p->setProcessChannelMode(QProcess::MergedChannels);
  connect(p, &QProcess::readyReadStandardOutput, this, &LimitsMeasure::read);
  connect(p, &QProcess::finished, this, [this](int code, QProcess::ExitStatus st) { on_exit(code, st != QProcess::NormalExit); });
  connect(p, &QProcess::errorOccurred, this, [this, p, program](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || p != process_) return;
    output_ += tr("cannot start %1: %2\n").arg(program, p->errorString());
    on_exit(-1, true);
  });
  clock_.start();
  tick_->start();
  show_progress();
  show();
  p->start(program, {QStringLiteral("bench"), QStringLiteral("--limits"), QStringLiteral("--dev"), device});
  return true;
}

void LimitsMeasure::show_progress() {
  const QString text = tr("Measuring the limits of %1… %2 s%3")
                           .arg(device_)
                           .arg(clock_.elapsed() / 1000.0, 0, 'f', 1)
                           .arg(last_line_.isEmpty() ? QString() : QStringLiteral(": ") + last_line_);
  label_->setText(label_->fontMetrics().elidedText(text, Qt::ElideRight, 460));  // the status bar stays narrower than the window
  label_->setToolTip(text);
}

void LimitsMeasure::read() {
  if (!process_) return;
  const QString s = QString::fromUtf8(process_->readAllStandardOutput());
  output_ += s;
  for (const QString& line : s.split('\n', Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) last_line_ = line.trimmed();
}

void LimitsMeasure::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();
}

void LimitsMeasure::on_exit(int code, bool crashed) {
  if (!process_) return;
  read();
  process_->deleteLater();
  process_ = nullptr;
  tick_->stop();
  hide();
  // the bench's last line says what it measured ("limits: CPU (...): bandwidth ... GB/s, peak ... GFLOP/s, measured ...")
  QString summary;
  for (const QString& line : output_.split('\n'))
    if (line.startsWith(QLatin1String("limits: "))) summary = line.mid(8).trimmed();
  const bool ok = !cancelled_ && !crashed && code == 0 && !summary.isEmpty();
  if (!ok) {
    if (cancelled_) summary = tr("cancelled after %1 s; the limits cache is as it was").arg(clock_.elapsed() / 1000.0, 0, 'f', 1);
    else summary = last_line_.isEmpty() ? tr("the bench failed (exit code %1)").arg(code) : last_line_;
  }
  emit finished(ok, device_, summary);
}

}  // namespace tsgui
