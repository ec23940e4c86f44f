#pragma once
// Lessons (resources/lessons/*.md): a script, then steps; a step may ask a question whose answer is computed from the
// run's trace (how many kernels, the reduce's size, the first opt, ...), name the pane that shows it, and explain. The
// window asks, the learner answers or skips, then the step shows its pane and its text. The first lesson is the tour of
// the pipeline. The same code answers in the window and in `tinyscope lesson` (headless).
//
// Format (lines starting with a single '#' are comments):
//   title: The kernel split            the lesson's name
//   script: lesson_split.py            its script, beside the lesson file (or a path from the repository's root)
//   ## id | Title                      a step; the lines up to the next "## " are its keys, then its text
//   ask: How many kernels ...?         (optional) the question, asked before the text is shown
//   answer: kernels_last               (with ask) what answers it: one of answer_kinds()
//   pane: kernel_graph                 (optional) the dock the step raises; without it the step id's (the tour's)
//   The text, with {answer} and the tour's {placeholders}.
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace tsv {

class Session;

struct LessonStep {
  QString id, title, ask, answer, pane, text;
  bool operator==(const LessonStep&) const = default;
};

struct Lesson {
  QString title, script;  // script: as the file names it
  QList<LessonStep> steps;
};

// parses a lesson; *error (when given) names the first problem (a step asking without an answer kind, an unknown
// kind, no steps) with its line, and the lesson is then empty
Lesson parse_lesson(const QString& text, QString* error = nullptr);

// the answer kinds a step may name, each with what it counts (for messages and Help)
const QList<QPair<QString, QString>>& answer_kinds();

// A step's answer from a run: the value as text (a count or a name), or !ok with why the run cannot answer it
struct LessonAnswer {
  bool ok = false;
  QString value, why;
};
LessonAnswer lesson_answer(const Session& s, const QString& kind);
// the run's last kernel call (what the answers about "the last kernel" read), -1: none
int last_kernel_call(const Session& s);

// whether the learner's answer is the run's: numbers by value, names case-insensitively (a kernel's name with or
// without its colours; an opt by its op, "UPCAST" or "OptOps.UPCAST")
bool answer_accepts(const LessonAnswer& a, const QString& given);

}  // namespace tsv
