#pragma once
#include <QElapsedTimer>
#include <algorithm>
#include <QObject>
#include <QTimer>

namespace tsgui {

// An event-loop heartbeat: a 5 ms timer whose longest gap between ticks bounds the worst UI-thread stall
// since the last reset() (anything that blocks the event loop delays the next tick).
class StallProbe : public QObject {
  Q_OBJECT
 public:
  explicit StallProbe(QObject* parent = nullptr) : QObject(parent) {
    timer_.setInterval(kTickMs);
    timer_.setTimerType(Qt::PreciseTimer);
    connect(&timer_, &QTimer::timeout, this, [this] {
      worst_ = std::max(worst_, tick_.restart());
    });
  }
  static constexpr qint64 kTickMs = 5;
  void start() {
    tick_.start();
    timer_.start();
  }
  bool active() const { return timer_.isActive(); }
  void reset() {
    worst_ = 0;
    tick_.restart();
  }
  // the longest gap between two ticks (at least the 5 ms interval), in ms
  // (a stall still in progress, or one whose next tick has not come yet, counts too)
  qint64 worst_ms() const { return std::max(worst_, timer_.isActive() ? tick_.elapsed() : 0); }

 private:
  QTimer timer_;
  QElapsedTimer tick_;
  qint64 worst_ = 0;
};

}  // namespace tsgui
