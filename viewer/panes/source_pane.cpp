#include "viewer/panes/source_pane.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QVBoxLayout>

#include "viewer/model/session.h"
#include "viewer/panes/source_highlighter.h"

namespace tsv {

SourcePane::SourcePane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  title_ = new QLabel(tr("Select a kernel to see its source"), this);
  title_->setContentsMargins(4, 2, 4, 2);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long opts line must not widen the dock
  edit_ = new QPlainTextEdit(this);
  edit_->setReadOnly(true);
  edit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  edit_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  highlighter_ = new SourceHighlighter(edit_->document());
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(title_);
  lay->addWidget(edit_, 1);
  connect(selection_, &SelectionModel::changed, this, &SourcePane::on_selection);
  connect(edit_, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (!shown_key_.isEmpty()) selection_->select_source_line(edit_->textCursor().blockNumber() + 1);
  });
}

QString SourcePane::text() const { return edit_->toPlainText(); }
void SourcePane::set_dark(bool dark) { highlighter_->set_dark(dark); }

void SourcePane::on_selection(const Selection& sel) {
  const Session& s = *selection_->session();
  int ctx = s.kernel_context(sel.program_key);
  if (ctx < 0) {
    shown_key_.clear();
    edit_->clear();
    title_->setText(sel.call >= 0 ? tr("This call runs no generated code") : tr("Select a kernel to see its source"));
    return;
  }
  const Program& p = s.contexts()[ctx].program;
  if (p.program_key != shown_key_) {
    shown_key_.clear();  // no line selection while the text is replaced
    highlighter_->set_language(p.lang);
    edit_->setPlainText(p.src);
    shown_key_ = p.program_key;
    QString opts = p.applied_opts.isEmpty() ? tr("no opts") : p.applied_opts.join(", ");
    title_->setText(QStringLiteral("%1  [%2]  %3").arg(s.contexts()[ctx].plain_name, p.lang, opts));
    title_->setToolTip(p.program_key);
  }
  if (sel.source_line > 0 && edit_->textCursor().blockNumber() + 1 != sel.source_line) {
    QTextCursor c(edit_->document()->findBlockByNumber(sel.source_line - 1));
    edit_->setTextCursor(c);
  }
}

}  // namespace tsv
