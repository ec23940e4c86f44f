#pragma once
#include <QHash>
#include <QPlainTextEdit>

namespace tsv {

// The script pane's editor: a plain text editor with the line numbers in a margin on its left (the lines a script
// error names, and the lines a trace's contexts point at, read off at a glance).
class CodeEditor : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit CodeEditor(QWidget* parent = nullptr);
  // the margin's width: room for the largest line number's digits (and a mark)
  int line_number_width() const;
  // lines marked in the margin (a dot before the number: the lines that ran schedules), each with its tooltip
  void set_marks(const QHash<int, QString>& marks);
  const QHash<int, QString>& marks() const { return marks_; }
  // the line whose number sits at y in the margin (1-based), or -1
  int line_at(int y) const;

 signals:
  // a click on a line's number in the margin
  void margin_clicked(int line);

 protected:
  void resizeEvent(QResizeEvent* e) override;
  bool viewportEvent(QEvent* e) override;

 private:
  friend class LineNumberArea;
  void paint_line_numbers(QPaintEvent* e);
  QWidget* margin_;
  QHash<int, QString> marks_;
};

}  // namespace tsv
