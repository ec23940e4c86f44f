#include "viewer/panes/code_editor.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QTextBlock>
#include <QToolTip>

namespace tsv {

class LineNumberArea : public QWidget {
 public:
  explicit LineNumberArea(CodeEditor* e) : QWidget(e), editor_(e) {}
  QSize sizeHint() const override { return {editor_->line_number_width(), 0}; }

 protected:
  void paintEvent(QPaintEvent* e) override { editor_->paint_line_numbers(e); }
  void mousePressEvent(QMouseEvent* e) override {
    if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
    if (const int line = editor_->line_at(int(e->position().y())); line > 0) emit editor_->margin_clicked(line);
  }
  bool event(QEvent* e) override {
    if (e->type() == QEvent::ToolTip) {
      auto* h = static_cast<QHelpEvent*>(e);
      const QString tip = editor_->marks().value(editor_->line_at(h->pos().y()));
      if (tip.isEmpty()) QToolTip::hideText();
      else QToolTip::showText(h->globalPos(), tip, this);
      return true;
    }
    return QWidget::event(e);
  }

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
  return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(2, digits) + (marks_.isEmpty() ? 0 : 10);
}

void CodeEditor::set_marks(const QHash<int, QString>& marks) {
  marks_ = marks;
  setViewportMargins(line_number_width(), 0, 0, 0);
  margin_->setCursor(marks_.isEmpty() ? Qt::ArrowCursor : Qt::PointingHandCursor);
  margin_->update();
}

int CodeEditor::line_at(int y) const {
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  while (block.isValid()) {
    const int bottom = top + qRound(blockBoundingRect(block).height());
    if (y >= top && y < bottom) return block.blockNumber() + 1;
    if (top > y) break;
    block = block.next();
    top = bottom;
  }
  return -1;
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
    if (block.isVisible() && bottom >= e->rect().top()) {
      p.drawText(0, top, w, fontMetrics().height(), Qt::AlignRight, QString::number(block.blockNumber() + 1));
      if (marks_.contains(block.blockNumber() + 1)) {  // a line that ran schedules: a dot to click
        const int d = std::max(5, fontMetrics().height() / 3);
        p.save();
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0x21, 0x6e, 0xd0));
        p.drawEllipse(3, top + (fontMetrics().height() - d) / 2, d, d);
        p.restore();
      }
    }
    block = block.next();
    top = bottom;
  }
}

}  // namespace tsv
