#include "viewer/panes/source_diff.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>

#include "viewer/model/call_pairing.h"
#include "viewer/model/compare_model.h"

namespace tsv {

namespace {
// colours each line of e that has one (an invalid colour: none)
void paint(QPlainTextEdit* e, const QList<QColor>& colors) {
  QList<QTextEdit::ExtraSelection> sels;
  QTextBlock b = e->document()->firstBlock();
  for (int i = 0; b.isValid() && i < colors.size(); ++i, b = b.next()) {
    if (!colors[i].isValid()) continue;
    QTextEdit::ExtraSelection s;
    s.format.setBackground(colors[i]);
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    s.cursor = QTextCursor(b);
    sels.push_back(s);
  }
  e->setExtraSelections(sels);
}
void mark(QPlainTextEdit* e, const QList<bool>& kept, const QColor& color) {
  QList<QColor> colors;
  for (bool k : kept) colors.push_back(k ? QColor() : color);
  paint(e, colors);
}
const QColor kOnlyLeft(0xff, 0xd7, 0xd5), kOnlyRight(0xd4, 0xf5, 0xd4), kReworded(0xff, 0xf3, 0xc4), kFiller(0xee, 0xee, 0xee);

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
  align_ = new QCheckBox(tr("Line up by uop (statement by statement; off: a text diff)"), this);
  align_->setObjectName(QStringLiteral("align_by_uop"));
  align_->setChecked(true);
  connect(align_, &QCheckBox::toggled, this, [this] { show_current(); });
  left_ = editor();
  right_ = editor();
  auto* g = new QGridLayout(this);
  g->setContentsMargins(2, 2, 2, 2);
  g->addWidget(summary_, 0, 0);
  g->addWidget(align_, 0, 1, Qt::AlignRight);
  g->addWidget(title_a_, 1, 0);
  g->addWidget(title_b_, 1, 1);
  g->addWidget(left_, 2, 0);
  g->addWidget(right_, 2, 1);
  clear(tr("Select a kernel that ran on both devices"));
}

void SourceDiff::clear(const QString& why) {
  summary_->setText(why);
  a_.clear(), b_.clear(), keys_a_.clear(), keys_b_.clear(), rows_.clear();
  title_a_->clear(), title_b_->clear();
  left_->clear(), right_->clear();
}

QString SourceDiff::summary() const { return summary_->text(); }

void SourceDiff::set_sources(const QString& title_a, const QString& a, const QString& title_b, const QString& b,
                             bool ignore_indentation) {
  title_a_text_ = title_a, a_ = a, title_b_text_ = title_b, b_ = b;
  keys_a_.clear(), keys_b_.clear();
  ignore_indentation_ = ignore_indentation;
  show_current();
}

void SourceDiff::set_aligned_sources(const QString& title_a, const QString& a, const QStringList& keys_a, const QString& title_b,
                                     const QString& b, const QStringList& keys_b) {
  title_a_text_ = title_a, a_ = a, title_b_text_ = title_b, b_ = b;
  keys_a_ = keys_a, keys_b_ = keys_b;
  ignore_indentation_ = false;
  show_current();
}

void SourceDiff::show_current() {
  title_a_->setText(title_a_text_);
  title_b_->setText(title_b_text_);
  rows_.clear();
  const bool keyed = !keys_a_.isEmpty() && !keys_b_.isEmpty();
  align_->setVisible(keyed);
  if (keyed && align_->isChecked()) {
    // statement by statement: the longest common subsequence of the two key sequences, blank rows where one side
    // has nothing to put beside the other's line
    const QStringList la = a_.split('\n'), lb = b_.split('\n');
    const StatementRows st = align_statements(la, keys_a_, lb, keys_b_);
    rows_ = st.rows;
    QStringList ta, tb;
    QList<QColor> ca, cb;
    for (const auto& [x, y] : rows_) {
      ta.push_back(x >= 0 ? la[x] : QString());
      tb.push_back(y >= 0 ? lb[y] : QString());
      const bool differ = x >= 0 && y >= 0 && la[x].trimmed() != lb[y].trimmed();
      ca.push_back(x < 0 ? kFiller : y < 0 ? kOnlyLeft : differ ? kReworded : QColor());
      cb.push_back(y < 0 ? kFiller : x < 0 ? kOnlyRight : differ ? kReworded : QColor());
    }
    left_->setPlainText(ta.join('\n'));
    right_->setPlainText(tb.join('\n'));
    paint(left_, ca);
    paint(right_, cb);
    summary_->setText(tr("Lined up by uop: %1 statement(s) on both sides (%2 worded differently, yellow), %3 only on the left "
                         "(red), %4 only on the right (green)")
                          .arg(st.both())
                          .arg(st.reworded)
                          .arg(st.only_a)
                          .arg(st.only_b));
    return;
  }
  left_->setPlainText(a_);
  right_->setPlainText(b_);
  auto lines = [this](const QString& text) {
    QStringList out = text.split('\n');
    if (ignore_indentation_)
      for (QString& l : out) {
        qsizetype i = 0;
        while (i < l.size() && l[i] == QLatin1Char(' ')) ++i;
        l = l.mid(i);
      }
    return out;
  };
  const LineDiff d = diff_lines(lines(a_), lines(b_));
  mark(left_, d.a_kept, kOnlyLeft);
  mark(right_, d.b_kept, kOnlyRight);
  summary_->setText(d.removed + d.added == 0 ? tr("The two sources are the same")
                                             : tr("%1 line(s) only on the left (red), %2 only on the right (green)").arg(d.removed).arg(d.added));
}

}  // namespace tsv
