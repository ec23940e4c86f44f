#include "viewer/panes/source_pane.h"

#include "viewer/model/glossary.h"

#include <QFontDatabase>
#include <QRegularExpression>
#include <algorithm>
#include <QLabel>
#include <QHBoxLayout>
#include <QPlainTextEdit>
#include <QStringList>
#include <QToolButton>
#include <QTextBlock>
#include <QVBoxLayout>

#include "viewer/model/session.h"
#include "viewer/model/uop_text.h"
#include "viewer/panes/source_highlighter.h"

namespace tsv {

SourcePane::Shown SourcePane::displayed(const QString& src) {
  Shown out;
  const qsizetype n = src.size();
  bool fits = n <= kMaxShownChars;
  for (qsizetype start = 0, lines = 0; fits && start < n; ++lines) {  // the usual case: shown as it is
    qsizetype end = src.indexOf(QLatin1Char('\n'), start);
    if (end < 0) end = n;
    fits = end - start <= kMaxLineChars && lines < kMaxShownLines;
    start = end + 1;
  }
  if (fits) {
    out.text = src;
    return out;
  }
  // a QPlainTextEdit lays out a line as one block: a line of millions of characters takes seconds to lay out
  // (and crashed it). Show each line up to kMaxLineChars, up to kMaxShownChars in all; line numbers stay.
  out.text.reserve(std::min<qsizetype>(n, kMaxShownChars) + 64);
  qsizetype start = 0;
  int lines = 0;
  while (start < n && out.text.size() < kMaxShownChars && lines < kMaxShownLines) {
    qsizetype end = src.indexOf(QLatin1Char('\n'), start);
    if (end < 0) end = n;
    const qsizetype len = end - start;
    const qsizetype room = std::max<qsizetype>(0, kMaxShownChars - out.text.size());
    const qsizetype keep = std::min({len, qsizetype(kMaxLineChars), room});
    out.text += QStringView(src).mid(start, keep);
    if (keep < len) {
      ++out.cut_lines;
      out.text += QStringLiteral(" …");
    }
    ++lines;
    start = end + 1;
    if (start <= n && end < n) out.text += QLatin1Char('\n');
  }
  out.cut_tail = start < n;
  if (out.cut_tail) out.text += QStringLiteral("…");
  QStringList why;
  if (out.cut_lines)
    why << (out.cut_lines == 1 ? tr("1 line cut at %1 characters").arg(kMaxLineChars)
                               : tr("%1 lines cut at %2 characters").arg(out.cut_lines).arg(kMaxLineChars));
  if (out.cut_tail) why << tr("shown up to line %1 of a %2-character source").arg(lines).arg(n);
  out.note = tr("source cut for display: %1").arg(why.join(QStringLiteral(", ")));
  return out;
}

SourcePane::SourcePane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  title_ = new QLabel(tr("Select a kernel to see its source"), this);
  title_->setContentsMargins(4, 2, 4, 2);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long opts line must not widen the dock
  edit_ = new QPlainTextEdit(this);
  edit_->setReadOnly(true);
  edit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  edit_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  highlighter_ = new SourceHighlighter(edit_->document());
  asm_btn_ = new QToolButton(this);
  asm_btn_->setText(tr("Assembly"));
  asm_btn_->setCheckable(true);
  asm_btn_->setAutoRaise(true);
  asm_btn_->setToolTip(tr("Show the host assembly the CPU JIT makes of this kernel"));
  connect(asm_btn_, &QToolButton::toggled, this, &SourcePane::show_assembly);
  uops_btn_ = new QToolButton(this);
  uops_btn_->setText(tr("UOps"));
  uops_btn_->setObjectName(QStringLiteral("source_uops"));
  uops_btn_->setCheckable(true);
  uops_btn_->setAutoRaise(true);
  uops_btn_->setToolTip(tr("Show the linearized program this source renders, one uop a line (position, op, dtype, sources, arg)"));
  connect(uops_btn_, &QToolButton::toggled, this, &SourcePane::show_uops);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 4, 0);
  bar->addWidget(title_, 1);
  bar->addWidget(uops_btn_);
  bar->addWidget(asm_btn_);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addLayout(bar);
  lay->addWidget(edit_, 1);
  connect(selection_, &SelectionModel::changed, this, &SourcePane::on_selection);
  connect(edit_, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (!shown_key_.isEmpty() && source_shown()) selection_->select_source_line(edit_->textCursor().blockNumber() + 1);
  });
  connect(selection_->session(), &Session::loaded, this, [this] { assembly_.clear(); });
}

void SourcePane::show_assembly(bool on) {
  if (asm_btn_->isChecked() != on) return asm_btn_->setChecked(on);  // comes back through toggled()
  asm_mode_ = on;
  if (on && uops_mode_) return uops_btn_->setChecked(false);  // (that shows the text)
  shown_key_.clear();
  show_text();
}

void SourcePane::show_uops(bool on) {
  if (uops_btn_->isChecked() != on) return uops_btn_->setChecked(on);
  uops_mode_ = on;
  if (on && asm_mode_) return asm_btn_->setChecked(false);
  shown_key_.clear();
  show_text();
}

void SourcePane::set_assembly(const QString& key, const QString& text) {
  assembly_.insert(key, text);
  if (asm_mode_ && key == program_key_) {
    shown_key_.clear();
    show_text();
  }
}

void SourcePane::show_text() {
  const Session& s = *selection_->session();
  const int ctx = context_;
  if (ctx < 0 || ctx >= s.contexts().size() || program_key_ == shown_key_) return;
  const Program& p = s.contexts()[ctx].program;
  shown_key_.clear();  // no line selection while the text is replaced
  if (asm_mode_) {
    highlighter_->set_language(QStringLiteral("asm"));
    auto it = assembly_.constFind(program_key_);
    if (it == assembly_.constEnd()) {
      edit_->setPlainText(tr("; disassembling %1…").arg(s.contexts()[ctx].plain_name));
      emit assembly_wanted(program_key_, p.lang, p.src);
      return;  // set_assembly() shows it
    }
    // what the device's compiler made of it, as it reported (the assembly is what it was given)
    QString head;
    for (const auto& [name, value] : s.contexts()[ctx].statistics) head += QStringLiteral("; %1: %2\n").arg(name, value);
    if (!head.isEmpty()) head = tr("; the device's compiler reported of its machine code:\n") + head + QStringLiteral(";\n");
    edit_->setPlainText(head + *it);
  } else if (uops_mode_) {
    highlighter_->set_language(QStringLiteral("interp"));
    const QString listing = linear_listing(s, ctx);
    edit_->setPlainText(listing.isEmpty() ? tr("; the trace keeps no linearized program of %1").arg(s.contexts()[ctx].plain_name) : listing);
  } else {
    highlighter_->set_language(p.lang);
    shown_ = displayed(p.src);
    edit_->setPlainText(shown_.text);
  }
  shown_key_ = program_key_;
  QString opts = p.applied_opts.isEmpty() ? tr("no opts") : p.applied_opts.join(", ");
  // opts BEAM found say so first (the whole story is in the tooltip)
  if (p.opts_source.startsWith("BEAM")) opts = tr("opts from %1: %2").arg(p.opts_source.section(QRegularExpression("[:,]"), 0, 0), opts);
  QString title = QStringLiteral("%1  [%2]  %3").arg(s.contexts()[ctx].plain_name, asm_mode_ ? tr("assembly") : uops_mode_ ? tr("uops") : p.lang, opts);
  if (source_shown() && !shown_.note.isEmpty()) title = QStringLiteral("(%1)  ").arg(shown_.note) + title;
  title_->setText(title);
  QString tip = p.program_key;
  if (!p.opts_source.isEmpty()) tip += tr("\nopts: %1").arg(p.opts_source);
  QStringList compiled;
  for (const auto& [name, value] : s.contexts()[ctx].statistics) compiled << QStringLiteral("%1 %2").arg(name, value);
  if (!compiled.isEmpty()) tip += tr("\ncompiled: %1").arg(compiled.join(QStringLiteral(", ")));
  QStringList seen;  // each opt's meaning once (viewer/model/glossary.h)
  for (const QString& o : p.applied_opts)
    if (const QString g = glossary_text(o); !g.isEmpty() && !seen.contains(g)) seen << g;
  if (!seen.isEmpty()) tip += QStringLiteral("\n\n") + seen.join(QLatin1Char('\n'));
  title_->setToolTip(!source_shown() || shown_.note.isEmpty() ? tip : tip + "\n" + shown_.note);
}

QString SourcePane::text() const { return edit_->toPlainText(); }
QString SourcePane::title() const { return title_->text(); }
QString SourcePane::title_tip() const { return title_->toolTip(); }
void SourcePane::set_dark(bool dark) { highlighter_->set_dark(dark); }

void SourcePane::on_selection(const Selection& sel) {
  const Session& s = *selection_->session();
  const int ctx = selection_->kernel_context();
  context_ = ctx;
  program_key_ = ctx < 0 ? QString() : program_id(s.contexts()[ctx].program.program_key, s.contexts()[ctx].program.applied_opts);
  if (ctx < 0) {
    shown_key_.clear();
    shown_ = {};
    edit_->clear();
    title_->setText(sel.call >= 0 ? tr("This call runs no generated code") : tr("Select a kernel to see its source"));
    return;
  }
  show_text();
  if (source_shown() && sel.source_line > 0 && edit_->textCursor().blockNumber() + 1 != sel.source_line) {
    QTextCursor c(edit_->document()->findBlockByNumber(sel.source_line - 1));
    edit_->setTextCursor(c);
    edit_->ensureCursorVisible();
  }
  // the selected line (a click here, or the line rendering the uop selected in a graph), lit across the pane
  QList<QTextEdit::ExtraSelection> band;
  if (source_shown() && sel.source_line > 0 && sel.source_line <= edit_->document()->blockCount()) {
    QTextEdit::ExtraSelection x;
    x.cursor = QTextCursor(edit_->document()->findBlockByNumber(sel.source_line - 1));
    x.format.setBackground(QColor(0x21, 0x6e, 0xd0, 45));
    x.format.setProperty(QTextFormat::FullWidthSelection, true);
    band.push_back(x);
  }
  edit_->setExtraSelections(band);
}

}  // namespace tsv
