#include "app/gui/tour.h"

#include <QDockWidget>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSet>
#include <QVBoxLayout>

#include "app/gui/main_window.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"

namespace tsgui {

QList<TourStop> parse_tour(const QString& text) {
  QList<TourStop> out;
  static const QRegularExpression kHead(QStringLiteral("^##\\s+([a-z-]+)\\s*\\|\\s*(.+)$"));
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    if (const auto m = kHead.match(line); m.hasMatch()) {
      out.push_back({m.captured(1), m.captured(2).trimmed(), {}});
    } else if (line.startsWith(QLatin1Char('#'))) {
      continue;
    } else if (!out.isEmpty() && !line.trimmed().isEmpty()) {
      QString& t = out.back().text;
      t += (t.isEmpty() ? QString() : QStringLiteral(" ")) + line.trimmed();
    }
  }
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
  QFile f(QStringLiteral(":/tour/tour.md"));
  if (f.open(QIODevice::ReadOnly)) stops_ = parse_tour(QString::fromUtf8(f.readAll()));
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("tour_title"));
  QFont big = title_->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.2);
  title_->setFont(big);
  where_ = new QLabel(this);
  where_->setStyleSheet(QStringLiteral("QLabel { color: #1050e0; }"));
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
  auto* scroll = new QScrollArea(this);  // never clipped: a short dock scrolls
  scroll->setWidget(body_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  lay->addWidget(scroll, 1);
  lay->addLayout(buttons);
  if (stops_.isEmpty()) body_->setText(tr("The tour's text (resources/tour/tour.md) is missing from this build."));
}

QString Tour::pane_of(int i) const { return i >= 0 && i < stops_.size() ? pane_for(stops_[i].id) : QString(); }

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

QString Tour::text_of(int i) const { return i >= 0 && i < stops_.size() ? fill(stops_[i].text) : QString(); }
QString Tour::title_of(int i) const { return i >= 0 && i < stops_.size() ? fill(stops_[i].title) : QString(); }

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
    if (const int ctx = s.kernel_context(s.calls()[k].program_key); ctx >= 0) {
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
  if (stops_.isEmpty()) return;
  step_ = std::clamp(i, 0, int(stops_.size()) - 1);
  const TourStop& st = stops_[step_];
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
  } else if (kernel >= 0) {
    w_->selection()->select_call(kernel);
  }
  const QString pane = pane_for(st.id);
  QString where = tr("Shown in the Tensor graph, the centre of the window");
  if (auto* dock = pane.isEmpty() ? nullptr : w_->findChild<QDockWidget*>(pane)) {
    dock->show();
    dock->raise();
    where = tr("Shown in the %1 pane").arg(dock->windowTitle());
  }
  if (st.id == "to-program")
    if (auto* ast = w_->findChild<QDockWidget*>(QStringLiteral("kernel_ast"))) ast->show(), ast->raise();
  title_->setText(title_of(step_));
  where_->setText(tr("Stop %1 of %2 · %3").arg(step_ + 1).arg(stops_.size()).arg(where));
  body_->setText(text_of(step_));
  back_->setEnabled(step_ > 0);
  next_->setEnabled(step_ + 1 < stops_.size());
  emit moved(step_);
}

}  // namespace tsgui
