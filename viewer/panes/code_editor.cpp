#include "viewer/panes/code_editor.h"

#include <QPainter>
#include <QTextBlock>

namespace tsv {

class LineNumberArea : public QWidget {
 public:
  explicit LineNumberArea(CodeEditor* e) : QWidget(e), editor_(e) {}
  QSize sizeHint() const override { return {editor_->line_number_width(), 0}; }

 protected:
  void paintEvent(QPaintEvent* e) override { editor_->paint_line_numbers(e); }

 private:
  CodeEditor* editor_;
};

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), margin_(new LineNumberArea(this)) {
  auto update_width = [this] { setViewportMargins(line_number_width(), 0, 0, 0); };
  connect(this, &QPlainTextEdit::blockCountChanged, this, update_width);
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& r, int dy) {
    if (dy) margin_->scroll(0, dy);
    else margin_->update(0, r.y(), margin_->width(), r.height());
  });
  update_width();
}

int CodeEditor::line_number_width() const {
  int digits = 1;
  for (int n = std::max(1, blockCount()); n >= 10; n /= 10) ++digits;
  return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(2, digits);
}

void CodeEditor::resizeEvent(QResizeEvent* e) {
  QPlainTextEdit::resizeEvent(e);
  const QRect cr = contentsRect();
  margin_->setGeometry(QRect(cr.left(), cr.top(), line_number_width(), cr.height()));
}

bool CodeEditor::viewportEvent(QEvent* e) {
  // a font change (the larger-text preset) changes the digits' width
  if (e->type() == QEvent::FontChange) setViewportMargins(line_number_width(), 0, 0, 0);
  return QPlainTextEdit::viewportEvent(e);
}

void CodeEditor::paint_line_numbers(QPaintEvent* e) {
  QPainter p(margin_);
  p.fillRect(e->rect(), palette().color(QPalette::AlternateBase));
  p.setFont(font());
  p.setPen(palette().color(QPalette::PlaceholderText));
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  const int w = margin_->width() - 5;
  while (block.isValid() && top <= e->rect().bottom()) {
    const int bottom = top + qRound(blockBoundingRect(block).height());
    if (block.isVisible() && bottom >= e->rect().top())
      p.drawText(0, top, w, fontMetrics().height(), Qt::AlignRight, QString::number(block.blockNumber() + 1));
    block = block.next();
    top = bottom;
  }
}

}  // namespace tsv
