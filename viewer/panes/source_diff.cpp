#include "viewer/panes/source_diff.h"

#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>

#include "viewer/model/compare_model.h"

namespace tsv {

namespace {
void mark(QPlainTextEdit* e, const QList<bool>& kept, const QColor& color) {
  QList<QTextEdit::ExtraSelection> sels;
  QTextBlock b = e->document()->firstBlock();
  for (int i = 0; b.isValid() && i < kept.size(); ++i, b = b.next()) {
    if (kept[i]) continue;
    QTextEdit::ExtraSelection s;
    s.format.setBackground(color);
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    s.cursor = QTextCursor(b);
    sels.push_back(s);
  }
  e->setExtraSelections(sels);
}
}  // namespace

SourceDiff::SourceDiff(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel(this);
  title_a_ = new QLabel(this);
  title_b_ = new QLabel(this);
  auto editor = [this] {
    auto* e = new QPlainTextEdit(this);
    e->setReadOnly(true);
    e->setLineWrapMode(QPlainTextEdit::NoWrap);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return e;
  };
  left_ = editor();
  right_ = editor();
  auto* g = new QGridLayout(this);
  g->setContentsMargins(2, 2, 2, 2);
  g->addWidget(summary_, 0, 0, 1, 2);
  g->addWidget(title_a_, 1, 0);
  g->addWidget(title_b_, 1, 1);
  g->addWidget(left_, 2, 0);
  g->addWidget(right_, 2, 1);
  clear(tr("Select a kernel that ran on both devices"));
}

void SourceDiff::clear(const QString& why) {
  summary_->setText(why);
  title_a_->clear(), title_b_->clear();
  left_->clear(), right_->clear();
}

QString SourceDiff::summary() const { return summary_->text(); }

void SourceDiff::set_sources(const QString& title_a, const QString& a, const QString& title_b, const QString& b,
                             bool ignore_indentation) {
  title_a_->setText(title_a);
  title_b_->setText(title_b);
  left_->setPlainText(a);
  right_->setPlainText(b);
  auto lines = [ignore_indentation](const QString& text) {
    QStringList out = text.split('\n');
    if (ignore_indentation)
      for (QString& l : out) {
        qsizetype i = 0;
        while (i < l.size() && l[i] == QLatin1Char(' ')) ++i;
        l = l.mid(i);
      }
    return out;
  };
  const LineDiff d = diff_lines(lines(a), lines(b));
  mark(left_, d.a_kept, QColor(0xff, 0xd7, 0xd5));
  mark(right_, d.b_kept, QColor(0xd4, 0xf5, 0xd4));
  summary_->setText(d.removed + d.added == 0 ? tr("The two sources are the same")
                                             : tr("%1 line(s) only on the left (red), %2 only on the right (green)").arg(d.removed).arg(d.added));
}

}  // namespace tsv
