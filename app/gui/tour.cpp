#include "app/gui/tour.h"

#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSet>
#include <QVBoxLayout>

#include "app/gui/main_window.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"

namespace tsgui {

QStringList lesson_resources() {
  QStringList out;
  for (const QString& f : QDir(QStringLiteral(":/lessons")).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name))
    out << QStringLiteral(":/lessons/") + f;
  return out;
}

namespace {
// the pane each stop shows (dock object names; "" is the tensor graph in the centre)
QString pane_for(const QString& id) {
  if (id == "realize") return QStringLiteral("contexts");
  if (id == "kernel-graph") return QStringLiteral("kernel_graph");
  if (id == "schedule") return QStringLiteral("schedule");
  if (id == "run-linear") return QStringLiteral("timings");
  if (id == "to-program") return QStringLiteral("stepper");
  if (id == "source") return QStringLiteral("source");
  if (id == "execution") return QStringLiteral("values");
  if (id == "jit-replay") return QStringLiteral("timings");
  return {};
}
}  // namespace

Tour::Tour(MainWindow* window) : QWidget(window), w_(window) {
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("tour_title"));
  QFont big = title_->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.2);
  title_->setFont(big);
  where_ = new QLabel(this);
  where_->setStyleSheet(QStringLiteral("QLabel { color: #1050e0; }"));
  // a question: asked before the step's text is shown
  ask_ = new QLabel(this);
  ask_->setObjectName(QStringLiteral("tour_question"));
  ask_->setWordWrap(true);
  QFont bold = ask_->font();
  bold.setBold(true);
  ask_->setFont(bold);
  answer_ = new QLineEdit(this);
  answer_->setObjectName(QStringLiteral("tour_answer"));
  answer_->setPlaceholderText(tr("Your answer"));
  check_ = new QPushButton(tr("Check"), this);
  show_ = new QPushButton(tr("Show answer"), this);
  verdict_ = new QLabel(this);
  verdict_->setObjectName(QStringLiteral("tour_verdict"));
  verdict_->setWordWrap(true);
  connect(check_, &QPushButton::clicked, this, [this] { check(answer_->text()); });
  connect(answer_, &QLineEdit::returnPressed, this, [this] { check(answer_->text()); });
  connect(show_, &QPushButton::clicked, this, &Tour::reveal);
  auto* answer_row = new QHBoxLayout;
  answer_row->addWidget(answer_, 1);
  answer_row->addWidget(check_);
  answer_row->addWidget(show_);
  body_ = new QLabel(this);
  body_->setObjectName(QStringLiteral("tour_text"));
  body_->setWordWrap(true);
  body_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  body_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  back_ = new QPushButton(tr("← Back"), this);
  next_ = new QPushButton(tr("Next →"), this);
  connect(back_, &QPushButton::clicked, this, &Tour::back);
  connect(next_, &QPushButton::clicked, this, &Tour::next);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(back_);
  buttons->addStretch(1);
  buttons->addWidget(next_);
  auto* lay = new QVBoxLayout(this);
  lay->addWidget(title_);
  lay->addWidget(where_);
  // the question, the verdict and the text scroll together (never clipped or overlapping in a short dock); the answer
  // box stays in view above the buttons
  auto* content = new QWidget(this);
  auto* inner = new QVBoxLayout(content);
  inner->setContentsMargins(0, 0, 0, 0);
  inner->addWidget(ask_);
  inner->addWidget(verdict_);
  inner->addWidget(body_, 1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  lay->addWidget(scroll, 1);
  lay->addLayout(answer_row);
  lay->addLayout(buttons);
  QString error;
  if (!load(QStringLiteral(":/lessons/01-tour.md"), &error)) body_->setText(tr("The tour (resources/lessons/01-tour.md): %1").arg(error));
}

bool Tour::load(const QString& path, QString* error) {
  QFile f(path);
  QString err;
  tsv::Lesson l;
  if (!f.open(QIODevice::ReadOnly)) err = tr("cannot open %1: %2").arg(path, f.errorString());
  else l = tsv::parse_lesson(QString::fromUtf8(f.readAll()), &err);
  if (error) *error = err;
  if (!err.isEmpty()) return false;
  lesson_ = l;
  path_ = path;
  revealed_.clear();
  step_ = -1;
  return true;
}

QString Tour::pane_of(int i) const {
  if (i < 0 || i >= stops()) return {};
  return lesson_.steps[i].pane.isEmpty() ? pane_for(lesson_.steps[i].id) : lesson_.steps[i].pane;
}

int Tour::first_kernel_call() const {
  const auto& calls = w_->session()->calls();
  for (qsizetype i = 0; i < calls.size(); ++i)
    if (calls[i].kind == "kernel") return int(i);
  return calls.isEmpty() ? -1 : 0;
}

int Tour::focus_schedule() const {
  const tsv::Session& s = *w_->session();
  const int k = first_kernel_call();
  if (k >= 0 && s.calls()[k].kind == "kernel")
    if (const int c = s.schedule_context(s.calls()[k].schedule_index); c >= 0) return c;
  for (qsizetype c = 0; c < s.contexts().size(); ++c)
    if (s.contexts()[c].is_schedule() && !s.contexts()[c].linear.isEmpty()) return int(c);
  return -1;
}

QString Tour::text_of(int i) const {
  if (i < 0 || i >= stops()) return {};
  QString t = lesson_.steps[i].text;
  if (!lesson_.steps[i].answer.isEmpty()) {  // {answer}: the run's, or why it has none
    const tsv::LessonAnswer a = tsv::lesson_answer(*w_->session(), lesson_.steps[i].answer);
    t.replace(QStringLiteral("{answer}"), a.ok ? a.value : tr("(this run cannot say: %1)").arg(a.why));
  }
  return fill(t);
}
QString Tour::title_of(int i) const { return i >= 0 && i < stops() ? fill(lesson_.steps[i].title) : QString(); }

QString Tour::check(const QString& given) {
  if (step_ < 0 || lesson_.steps[step_].ask.isEmpty()) return {};
  const tsv::LessonAnswer a = tsv::lesson_answer(*w_->session(), lesson_.steps[step_].answer);
  QString v;
  if (!a.ok) v = tr("This run cannot answer it: %1").arg(a.why);
  else if (tsv::answer_accepts(a, given)) v = tr("Right: %1.").arg(a.value);
  else v = given.trimmed().isEmpty() ? tr("Type an answer, or Show answer.") : tr("Not quite: the run says otherwise. Try again, or Show answer.");
  const bool right = a.ok && tsv::answer_accepts(a, given);
  if (right || !a.ok) revealed_[step_] = true;
  show_step();
  verdict_->setText(v);
  verdict_->setStyleSheet(right ? QStringLiteral("QLabel { color: #108020; }") : QStringLiteral("QLabel { color: #b03010; }"));
  return v;
}

void Tour::reveal() {
  if (step_ < 0) return;
  revealed_[step_] = true;
  show_step();
  const tsv::LessonAnswer a = tsv::lesson_answer(*w_->session(), lesson_.steps[step_].answer);
  verdict_->setText(a.ok ? tr("The answer: %1.").arg(a.value) : tr("This run cannot answer it: %1").arg(a.why));
  verdict_->setStyleSheet(QString());
}

QString Tour::fill(QString t) const {
  const tsv::Session& s = *w_->session();
  int kernels = 0, copies = 0, schedules = 0;
  QString schedule, kernel, lang, first_call;
  int passes = 0;
  for (const auto& c : s.contexts()) schedules += c.is_schedule() && !c.linear.isEmpty();
  if (const int f = focus_schedule(); f >= 0) {  // the followed schedule's split
    schedule = s.contexts()[f].name;
    for (const auto& item : s.contexts()[f].linear) (item.kind == "kernel" ? kernels : copies) += 1;
  }
  if (const int k = first_kernel_call(); k >= 0) {
    first_call = s.calls()[k].display_name();
    if (const int ctx = s.kernel_context(s.calls()[k]); ctx >= 0) {
      kernel = s.contexts()[ctx].program.name;
      lang = s.contexts()[ctx].program.lang;
      passes = int(s.contexts()[ctx].passes.size());
    }
  }
  // TinyJit: the replayed calls, the replays (runs of a captured LINEAR) and the graph calls they ran
  int jit_calls = 0;
  QSet<int> replays, graphs;
  for (const auto& c : s.calls())
    if (c.jit) {
      ++jit_calls;
      replays.insert(c.run);
      if (c.graph > 0) graphs.insert(c.graph);
    }
  const int reads = int(s.outputs().size());
  QString outputs = reads == 0 ? tr("none in this run (the script read nothing back)")
                               : reads == 1 ? tr("one value, read at %1").arg(s.outputs()[0].where)
                                            : tr("%1 values, the first read at %2").arg(reads).arg(s.outputs()[0].where);
  const QString script = s.script().isEmpty() ? tr("the script") : s.script().section(QLatin1Char('/'), -1);
  auto counted = [](int n, const QString& one, const QString& many) { return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many); };
  const QList<QPair<QString, QString>> fills = {
      {"script", script},
      {"device", s.device().isEmpty() ? tr("the device") : s.device()},
      {"schedule", schedule.isEmpty() ? tr("(no schedule)") : schedule},
      {"schedules", counted(schedules, tr("schedule"), tr("schedules"))},
      {"calls", counted(int(s.calls().size()), tr("call"), tr("calls"))},
      {"kernels", counted(kernels, tr("kernel"), tr("kernels"))},
      {"copies", counted(copies, tr("copy"), tr("copies"))},
      {"kernel", kernel.isEmpty() ? tr("a kernel") : kernel},
      {"kernel_lang", lang.isEmpty() ? tr("device") : lang.toUpper()},
      {"first_call", first_call},
      {"passes", counted(passes, tr("pass"), tr("passes"))},
      {"outputs", outputs},
      {"jit_calls", counted(jit_calls, tr("call"), tr("calls"))},
      {"replays", jit_calls ? counted(int(replays.size()), tr("replay"), tr("replays")) : tr("no TinyJit replay")},
      {"graph_calls", counted(int(graphs.size()), tr("graph call"), tr("graph calls"))}};
  for (const auto& [key, value] : fills) t.replace(QLatin1Char('{') + key + QLatin1Char('}'), value);
  return t;
}

void Tour::go(int i) {
  if (lesson_.steps.isEmpty()) return;
  step_ = std::clamp(i, 0, stops() - 1);
  verdict_->clear();
  answer_->clear();
  show_step();
}

void Tour::show_step() {
  const tsv::LessonStep& st = lesson_.steps[step_];
  const bool asking = !st.ask.isEmpty() && !revealed(step_);
  ask_->setVisible(!st.ask.isEmpty());
  ask_->setText(st.ask);
  for (QWidget* x : {static_cast<QWidget*>(answer_), static_cast<QWidget*>(check_), static_cast<QWidget*>(show_)}) x->setVisible(!st.ask.isEmpty());
  answer_->setEnabled(asking);
  check_->setEnabled(asking);
  show_->setEnabled(asking);
  verdict_->setVisible(!st.ask.isEmpty());
  title_->setText(title_of(step_));
  back_->setEnabled(step_ > 0);
  next_->setEnabled(step_ + 1 < stops());
  if (asking) {  // the question first: the run's schedule selected, neither the step's pane nor its text raised
    if (const int f = focus_schedule(); f >= 0) w_->selection()->select_context(f);
    where_->setText(tr("Step %1 of %2 · %3").arg(step_ + 1).arg(stops()).arg(lesson_.title));
    body_->clear();
    if (isVisible()) answer_->setFocus();
    emit moved(step_);
    return;
  }
  const tsv::Session& s = *w_->session();
  // the item the stop talks about: the followed schedule, or its first kernel call (which selects its context)
  const int schedule_ctx = focus_schedule();
  const int kernel = first_kernel_call();
  int replayed = -1;  // the first call a TinyJit replay ran
  for (qsizetype i = 0; i < s.calls().size() && replayed < 0; ++i)
    if (s.calls()[i].jit) replayed = int(i);
  if (st.id == "tensor-graph" || st.id == "realize") {
    if (schedule_ctx >= 0) w_->selection()->select_context(schedule_ctx);
  } else if (st.id == "jit-replay" && replayed >= 0) {
    w_->selection()->select_call(replayed);
  } else if (const int last = tsv::last_kernel_call(s); !st.pane.isEmpty() && last >= 0) {  // a lesson's step: its answers are of the last kernel
    w_->selection()->select_call(last);
  } else if (kernel >= 0) {
    w_->selection()->select_call(kernel);
  }
  const QString pane = pane_of(step_);
  QString where = tr("Shown in the Tensor graph, the centre of the window");
  if (auto* dock = pane.isEmpty() ? nullptr : w_->findChild<QDockWidget*>(pane)) {
    dock->show();
    dock->raise();
    where = tr("Shown in the %1 pane").arg(dock->windowTitle());
  }
  if (st.id == "to-program" || pane == "stepper")
    if (auto* ast = w_->findChild<QDockWidget*>(QStringLiteral("kernel_ast"))) ast->show(), ast->raise();
  title_->setText(title_of(step_));
  where_->setText(tr("Step %1 of %2 · %3").arg(step_ + 1).arg(stops()).arg(where));
  body_->setText(text_of(step_));
  emit moved(step_);
}

}  // namespace tsgui
