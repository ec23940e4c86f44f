#pragma once
#include <QWidget>

#include "viewer/model/selection_model.h"

class QLabel;
class QPlainTextEdit;

namespace tsv {
class SourceHighlighter;

// The selected kernel's generated source (C, LLVM IR, ...), highlighted; the cursor line is the selected line.
class SourcePane : public QWidget {
  Q_OBJECT
 public:
  SourcePane(SelectionModel* selection, QWidget* parent = nullptr);
  QString text() const;
  void set_dark(bool dark);

 private:
  void on_selection(const Selection& s);
  SelectionModel* selection_;
  QLabel* title_;
  QPlainTextEdit* edit_;
  SourceHighlighter* highlighter_;
  QString shown_key_;
};

}  // namespace tsv
