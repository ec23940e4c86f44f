#pragma once
#include <QList>
#include <QString>
#include <QWidget>

class QLabel;
class QPushButton;

namespace tsgui {
class MainWindow;

// One stop of the tour: an id the window knows (which pane and item it shows) and the words (resources/tour/tour.md).
struct TourStop {
  QString id, title, text;
};
// "## id | title" then the text, up to the next such line; lines starting with '#' alone are comments
QList<TourStop> parse_tour(const QString& text);

// The tour of the pipeline on the run on screen: each stop raises the pane that shows its stage, selects the item it
// talks about (the first schedule, the first kernel, ...) and explains it in two or three sentences, with the run's
// own names and counts filled in.
class Tour : public QWidget {
  Q_OBJECT
 public:
  explicit Tour(MainWindow* window);
  int stops() const { return int(stops_.size()); }
  int step() const { return step_; }
  const TourStop& stop(int i) const { return stops_[i]; }
  // the dock (its object name) stop i shows
  QString pane_of(int i) const;
  // stop i's text with this run's names and counts
  QString text_of(int i) const;
  QString title_of(int i) const;
  void go(int i);
  void next() { go(step_ + 1); }
  void back() { go(step_ - 1); }

 signals:
  void moved(int step);

 private:
  int first_kernel_call() const;
  // the schedule the tour follows: the one that ran the first kernel (else the first schedule), or -1
  int focus_schedule() const;
  QString fill(QString text) const;  // the {placeholders} of tour.md, from the run on screen
  MainWindow* w_;
  QList<TourStop> stops_;
  int step_ = -1;
  QLabel* title_;
  QLabel* where_;
  QLabel* body_;
  QPushButton* back_;
  QPushButton* next_;
};

}  // namespace tsgui
