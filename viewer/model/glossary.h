#pragma once
// The glossary: a one-line meaning for each UOp op, rewrite pass, opt and kernel-name part the panes show, and the
// lesson (resources/lessons) that teaches it. The panes put it in the tooltip of an op's node, a pass's row, an opt
// and a kernel's name; Help > Glossary lists it whole.
#include <QList>
#include <QString>

namespace tsv {

struct GlossaryEntry {
  QString term, kind, meaning;  // kind: "op", "pass", "opt", "name"
  int lesson = 0;               // the lesson that teaches it (its number in Help > Lessons), 0: none
};

// every entry, ops first, then passes, opts and name parts, each group in alphabetical order
const QList<GlossaryEntry>& glossary();
// the entry for an op ("REDUCE_AXIS", "Ops.ADD"), a pass ("expander"; an opt's pass "shift (0,) 4 upcast" is its
// opt's), an opt ("UPCAST", "Opt(op=OptOps.UPCAST, ...)") or a kernel-name prefix ("E_", "r_..."); nullptr: none
const GlossaryEntry* glossary_lookup(const QString& word);
// "UPCAST (opt): ... — lesson 6" (plain text, for a tooltip); empty for a word the glossary lacks
QString glossary_text(const QString& word);
// an applied opt's op: "Opt(op=OptOps.UPCAST, axis=0, arg=4)" -> "UPCAST" (the text itself when it names none)
QString opt_op(const QString& opt);
// the whole glossary as an HTML table (Help > Glossary)
QString glossary_html();

}  // namespace tsv
