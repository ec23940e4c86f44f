#pragma once
#include <QPlainTextEdit>

namespace tsv {

// The script pane's editor: a plain text editor with the line numbers in a margin on its left (the lines a script
// error names, and the lines a trace's contexts point at, read off at a glance).
class CodeEditor : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit CodeEditor(QWidget* parent = nullptr);
  // the margin's width: room for the largest line number's digits
  int line_number_width() const;

 protected:
  void resizeEvent(QResizeEvent* e) override;
  bool viewportEvent(QEvent* e) override;

 private:
  friend class LineNumberArea;
  void paint_line_numbers(QPaintEvent* e);
  QWidget* margin_;
};

}  // namespace tsv
