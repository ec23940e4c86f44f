#include "viewer/panes/timings_pane.h"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QToolTip>
#include <QMouseEvent>
#include <QPainter>

#include "viewer/model/ansi.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"

namespace tsv {

namespace {
class Bars : public QWidget {
 public:
  Bars(SelectionModel* sel, TimingsModel* model, QWidget* parent) : QWidget(parent), sel_(sel), model_(model) {
    setMouseTracking(false);
    connect(model, &QAbstractItemModel::modelReset, this, [this] { relayout(); });
    connect(sel, &SelectionModel::changed, this, [this] { update(); });
    relayout();
  }
  int row_h() const { return fontMetrics().height() + 8; }
  void relayout() {
    setMinimumHeight(row_h() * (model_->rowCount() + 3) + 4);  // the header row, the calls, two rows of legend
    update();
  }

 protected:
  bool event(QEvent* e) override {
    if (e->type() == QEvent::ToolTip) {
      auto* he = static_cast<QHelpEvent*>(e);
      const int row = he->pos().y() >= row_h() ? (he->pos().y() - row_h()) / row_h() : -1;
      if (row >= 0 && row < model_->rowCount()) QToolTip::showText(he->globalPos(), model_->describe(row), this);
      else QToolTip::hideText();
      return true;
    }
    return QWidget::event(e);
  }
  void mousePressEvent(QMouseEvent* e) override {
    int row = int(e->position().y() - row_h()) / row_h();
    if (e->position().y() >= row_h() && row >= 0 && row < model_->rowCount()) sel_->select_call(row);
  }
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const auto& calls = sel_->session()->calls();
    const Selection& s = sel_->current();
    const int h = row_h(), name_w = 170, stats_w = 480;
    const int bar_x = name_w + 8, bar_w = std::max(40, width() - bar_x - stats_w - 8);
    QColor text = palette().color(QPalette::Text), mid = palette().color(QPalette::Mid);
    p.setPen(mid);
    p.drawText(QRect(4, 0, name_w, h), Qt::AlignVCenter, tr("call"));
    double max_s = model_->max_seconds();
    p.drawText(QRect(bar_x, 0, bar_w, h), Qt::AlignVCenter,
               max_s > 0 ? tr("time (bar: 0 … %1 µs)").arg(max_s * 1e6, 0, 'f', 1) : tr("time"));
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QFont normal = p.font();
    p.setFont(mono);
    p.drawText(QRect(bar_x + bar_w + 8, 0, stats_w, h), Qt::AlignVCenter,
               QStringLiteral("%1 %2 %3 %4 %5").arg(tr("time"), 12).arg(tr("first run"), 13).arg(tr("GFLOP/s"), 10).arg(tr("GB/s"), 10).arg(tr("warm")));
    p.setFont(normal);
    p.setPen(mid);
    // what each number measured (the tooltip of a row says it for that call)
    int warm = 0;
    bool any_restored = false;
    for (int r = 0; r < calls.size(); ++r) {
      warm = std::max(warm, model_->warm_runs(r));
      any_restored = any_restored || model_->restored(r);
    }
    QString legend = warm >= 1 ? tr("bar, time, GFLOP/s, GB/s: the median of the warm runs after the first (a call that ran once: its one run)")
                               : tr("bar, time, GFLOP/s, GB/s: each call's one run (Timing 1×: no warm runs)");
    legend += tr(" · first run: DEBUG=2's time, * the first run of its program");
    if (warm >= 2) legend += tr(" · whisker: fastest–slowest of the %1 warm runs, ±: half their spread over the median").arg(warm);
    if (any_restored) legend += tr(" · ↺ timed on restored inputs (the kernel writes memory it reads)");
    p.drawText(QRect(4, height() - 2 * h, width() - 8, 2 * h), Qt::AlignVCenter | Qt::AlignRight | Qt::TextWordWrap, legend);
    if (calls.isEmpty()) {
      p.drawText(rect().adjusted(0, h, 0, 0), Qt::AlignCenter, tr("No calls: run a script or open a trace"));
      return;
    }
    for (int r = 0; r < calls.size(); ++r) {
      const Call& c = calls[r];
      int y = h + r * h;
      bool marked = r == s.call || (!s.program_key.isEmpty() && c.program_key == s.program_key);
      if (marked) p.fillRect(QRect(0, y, width(), h), palette().color(QPalette::Highlight).lighter(r == s.call ? 100 : 130));
      // a call replayed by TinyJit: a magenta edge, as DEBUG=2 colours its header
      if (c.jit) p.fillRect(QRect(0, y + 2, 3, h - 4), QColor(0xc0, 0x3c, 0xc0));
      QColor name_color = main_ansi_color(c.colored_name);
      p.setPen(marked ? palette().color(QPalette::HighlightedText) : (name_color.isValid() ? name_color : text));
      p.drawText(QRect(4, y, name_w, h), Qt::AlignVCenter | Qt::AlignLeft,
                 fontMetrics().elidedText(strip_ansi(c.colored_name).trimmed(), Qt::ElideRight, name_w));
      double frac = max_s > 0 ? model_->headline(r) / max_s : 0;
      QRectF bar(bar_x, y + 3, std::max(2.0, frac * bar_w), h - 6);
      QColor fill = c.kind == "copy" ? QColor(0x8a, 0xb4, 0xe8) : QColor(0xf0, 0x9a, 0x3e);
      if (marked) fill = fill.darker(130);
      p.setPen(Qt::NoPen);
      p.setBrush(fill);
      p.drawRoundedRect(bar, 2, 2);
      // a kernel timed N times: a whisker from the fastest to the slowest run, a tick at the median
      const TimingsModel::Spread sp = model_->spread(r);
      if (sp.n >= 2 && max_s > 0) {
        auto x_of = [&](double sec) { return bar_x + std::min(1.0, sec / max_s) * bar_w; };
        const double cy = y + h / 2.0;
        p.setPen(QPen(marked ? palette().color(QPalette::HighlightedText) : text, 1.2));
        p.drawLine(QPointF(x_of(sp.min), cy), QPointF(x_of(sp.max), cy));
        p.drawLine(QPointF(x_of(sp.min), cy - 3), QPointF(x_of(sp.min), cy + 3));
        p.drawLine(QPointF(x_of(sp.max), cy - 3), QPointF(x_of(sp.max), cy + 3));
      }
      p.setPen(marked ? palette().color(QPalette::HighlightedText) : text);
      const int warm_n = model_->warm_runs(r);
      const QString warm_text = sp.n >= 2 && sp.median > 0 ? QStringLiteral("±%1%").arg(50.0 * (sp.max - sp.min) / sp.median, 0, 'f', 1)
                                : warm_n == 1           ? tr("1 run")
                                                        : tr("once");
      QString stats = QStringLiteral("%1 µs %2 µs%3%4 %5 %6%7")
                          .arg(model_->headline(r) * 1e6, 9, 'f', 2)
                          .arg(c.seconds * 1e6, 9, 'f', 2)
                          .arg(c.first_run && c.kind == "kernel" ? QStringLiteral("*") : QStringLiteral(" "))
                          .arg(model_->gflops(r), 10, 'f', 3)
                          .arg(model_->gbs(r), 10, 'f', 3)
                          .arg(warm_text)
                          .arg(model_->restored(r) ? QStringLiteral(" ↺") : QString());
      p.setFont(mono);
      p.drawText(QRect(bar_x + bar_w + 8, y, stats_w, h), Qt::AlignVCenter | Qt::AlignLeft, stats);
      p.setFont(normal);
    }
  }

 private:
  SelectionModel* sel_;
  TimingsModel* model_;
};
}  // namespace

TimingsPane::TimingsPane(SelectionModel* selection, QWidget* parent) : QScrollArea(parent), selection_(selection) {
  model_ = new TimingsModel(selection->session(), this);
  setWidget(new Bars(selection, model_, this));
  setWidgetResizable(true);
}

}  // namespace tsv
