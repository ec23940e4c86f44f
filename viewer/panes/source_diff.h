#pragma once
#include <QWidget>

class QCheckBox;
class QLabel;
class QPlainTextEdit;

namespace tsv {

// Two kernels' sources side by side (the same call on two devices): lines only the left one has on red, lines only
// the right one has on green, from a line diff; a line above says how many differ. Given each line's statement key
// (statement_keys: the uop it renders), the two line up statement by statement instead (the "Line up by uop" box,
// on by default; off: the text diff): blank rows fill where one side has no such statement, lines that render the
// same statement in other words are marked yellow.
class SourceDiff : public QWidget {
  Q_OBJECT
 public:
  explicit SourceDiff(QWidget* parent = nullptr);
  // ignore_indentation: lines that differ only in their leading spaces are the same (a printed tree whose subtree
  // moved up a level)
  void set_sources(const QString& title_a, const QString& a, const QString& title_b, const QString& b, bool ignore_indentation = false);
  // keys_a, keys_b: each line's statement key (statement_keys); empty for a source without them (the text diff only)
  void set_aligned_sources(const QString& title_a, const QString& a, const QStringList& keys_a, const QString& title_b,
                           const QString& b, const QStringList& keys_b);
  void clear(const QString& why);
  QCheckBox* align_box() const { return align_; }
  // rows of the aligned view: for each shown row, the line of each source it shows (-1: a filler row)
  const QList<QPair<int, int>>& aligned_rows() const { return rows_; }
  QPlainTextEdit* left() const { return left_; }
  QPlainTextEdit* right() const { return right_; }
  QString summary() const;

 private:
  void show_current();
  QLabel* summary_;
  QCheckBox* align_;
  QString title_a_text_, a_, title_b_text_, b_;
  QStringList keys_a_, keys_b_;
  bool ignore_indentation_ = false;
  QList<QPair<int, int>> rows_;
  QLabel* title_a_;
  QLabel* title_b_;
  QPlainTextEdit* left_;
  QPlainTextEdit* right_;
};

}  // namespace tsv
