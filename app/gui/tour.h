#pragma once
#include <QList>
#include <QMap>
#include <QString>
#include <QWidget>

#include "viewer/model/lesson.h"

class QLabel;
class QLineEdit;
class QPushButton;

namespace tsgui {
class MainWindow;

// The lessons shipped in the window's resources (":/lessons/NN-name.md"), in order: the tour of the pipeline first
QStringList lesson_resources();

// A lesson (viewer/model/lesson.h) played on the run on screen; the tour of the pipeline is the first one. Each step
// that asks a question shows it first, with a box for the answer: Check says whether it is the run's (computed from
// the trace), Show answer skips; then the step raises the pane that shows its stage, selects the item it talks about
// (the first schedule, the first kernel, the last kernel, ...) and explains it, with the run's own names and counts.
class Tour : public QWidget {
  Q_OBJECT
 public:
  explicit Tour(MainWindow* window);
  // plays a lesson from a file or a resource (":/lessons/..."); false with *error when it cannot be read or parsed
  bool load(const QString& path, QString* error = nullptr);
  const tsv::Lesson& lesson() const { return lesson_; }
  QString lesson_path() const { return path_; }
  int stops() const { return int(lesson_.steps.size()); }
  int step() const { return step_; }
  const tsv::LessonStep& stop(int i) const { return lesson_.steps[i]; }
  // step i's question is answered (checked right) or its answer shown: its text and pane are shown
  bool revealed(int i) const { return revealed_.value(i, false); }
  // the answer box and its buttons (tests type into it)
  QLineEdit* answer_box() const { return answer_; }
  // checks `given` against step i's answer from the run (reveals the step when right); the verdict's text
  QString check(const QString& given);
  void reveal();
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
  QString fill(QString text) const;  // the {placeholders} of the lesson's text, from the run on screen
  void show_step();                  // the current step as far as it is revealed
  MainWindow* w_;
  tsv::Lesson lesson_;
  QString path_;
  QMap<int, bool> revealed_;
  int step_ = -1;
  QLabel* title_;
  QLabel* where_;
  QLabel* ask_;
  QLineEdit* answer_;
  QPushButton* check_;
  QPushButton* show_;
  QLabel* verdict_;
  QLabel* body_;
  QPushButton* back_;
  QPushButton* next_;
};

}  // namespace tsgui
