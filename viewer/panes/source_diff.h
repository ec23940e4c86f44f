#pragma once
#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace tsv {

// Two kernels' sources side by side (the same call on two devices): lines only the left one has on red, lines only
// the right one has on green, from a line diff; a line above says how many differ.
class SourceDiff : public QWidget {
  Q_OBJECT
 public:
  explicit SourceDiff(QWidget* parent = nullptr);
  // ignore_indentation: lines that differ only in their leading spaces are the same (a printed tree whose subtree
  // moved up a level)
  void set_sources(const QString& title_a, const QString& a, const QString& title_b, const QString& b, bool ignore_indentation = false);
  void clear(const QString& why);
  QPlainTextEdit* left() const { return left_; }
  QPlainTextEdit* right() const { return right_; }
  QString summary() const;

 private:
  QLabel* summary_;
  QLabel* title_a_;
  QLabel* title_b_;
  QPlainTextEdit* left_;
  QPlainTextEdit* right_;
};

}  // namespace tsv
