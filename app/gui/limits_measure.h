#pragma once
#include <QElapsedTimer>
#include <QString>
#include <QWidget>

class QLabel;
class QProcess;
class QProgressBar;
class QTimer;
class QToolButton;

namespace tsgui {

// Run > Measure limits for this device: `tinyscope bench --limits --dev DEV` in a child process (as the runs are), which
// measures the device's memory bandwidth and peak and writes them to the limits cache, where the next run's trace
// finds them. This widget sits in the status bar while it measures: a busy bar, the seconds so far and the bench's
// last line, and Cancel (a kill: the cache is written only at the end, whole, so it is left as it was).
class LimitsMeasure : public QWidget {
  Q_OBJECT
 public:
  explicit LimitsMeasure(QWidget* parent = nullptr);
  ~LimitsMeasure() override;
  // starts `program bench --limits --dev device`; false (nothing starts) while one is measuring
  bool start(const QString& program, const QString& device);
  void cancel();
  bool running() const { return process_ != nullptr; }
  // what the bench printed so far (stdout and stderr)
  QString output() const { return output_; }

 signals:
  // ok: the limits are in the cache, `summary` the bench's "limits: ..." line; else `summary` says why not
  void finished(bool ok, const QString& device, const QString& summary);

 private:
  void read();
  void show_progress();
  void on_exit(int code, bool crashed);
  QProcess* process_ = nullptr;
  QLabel* label_;
  QProgressBar* bar_;
  QToolButton* cancel_;
  QTimer* tick_;
  QElapsedTimer clock_;
  QString device_, output_, last_line_;
  bool cancelled_ = false;
};

}  // namespace tsgui
