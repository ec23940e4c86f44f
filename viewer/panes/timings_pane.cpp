#include "viewer/panes/timings_pane.h"

#include <QApplication>
#include <QFontDatabase>
#include <QHelpEvent>
#include <QToolTip>
#include <QMouseEvent>
#include <QPainter>

#include "viewer/model/ansi.h"
#include "viewer/model/call_color.h"
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
    colors_ = call_colors(*sel_->session());
    // as wide as the columns need (the pane scrolls sideways rather than cut the figures), as tall as the header row, the
    // calls and the legend wrapped to that width
    const Columns c = columns();
    setMinimumWidth(c.bar_x + 120 + 8 + c.stats_w);
    const int legend_h = fontMetrics().boundingRect(QRect(0, 0, std::max(width(), minimumWidth()) - 8, 10000), Qt::TextWordWrap, legend()).height();
    setMinimumHeight(row_h() * (model_->rowCount() + 1) + legend_h + 12);
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
    if (e->type() == QEvent::FontChange) relayout();  // (View > Larger text: taller rows)
    if (e->type() == QEvent::Resize) {  // the legend wraps to the width
      const QString text = legend();
      const int legend_h = fontMetrics().boundingRect(QRect(0, 0, width() - 8, 10000), Qt::TextWordWrap, text).height();
      const int want = row_h() * (model_->rowCount() + 1) + legend_h + 12;
      if (want != minimumHeight()) setMinimumHeight(want);
    }
    return QWidget::event(e);
  }
  void mousePressEvent(QMouseEvent* e) override {
    int row = int(e->position().y() - row_h()) / row_h();
    if (e->position().y() >= row_h() && row >= 0 && row < model_->rowCount()) sel_->select_call(row);
  }
  // the stats column's font: the system's fixed font, scaled as the pane's text is (View > Larger text)
  QFont mono() const {
    QFont m = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const double app_pt = QApplication::font(this).pointSizeF();
    if (app_pt > 0 && font().pointSizeF() > 0 && m.pointSizeF() > 0) m.setPointSizeF(m.pointSizeF() * font().pointSizeF() / app_pt);
    return m;
  }
  struct Columns {
    int h, name_w, stats_x, stats_w, bar_x, bar_w;
  };
  Columns columns() const {
    Columns c;
    c.h = row_h();
    c.name_w = fontMetrics().averageCharWidth() * 24;
    c.stats_w = QFontMetrics(mono()).horizontalAdvance(QString(70, QLatin1Char('0')));
    c.bar_x = c.name_w + 8;
    c.bar_w = std::max(40, width() - c.bar_x - c.stats_w - 8);
    c.stats_x = c.bar_x + c.bar_w + 8;
    return c;
  }
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const auto& calls = sel_->session()->calls();
    const Columns col = columns();
    const double scale = model_->scale_seconds();
    paint_header(p, col, scale);
    if (calls.isEmpty()) {
      p.setPen(palette().color(QPalette::Mid));
      p.drawText(rect().adjusted(0, col.h, 0, 0), Qt::AlignCenter, tr("No calls: run a script or open a trace"));
      return;
    }
    for (int r = 0; r < calls.size(); ++r) paint_row(p, col, r, scale);
  }
  // the foot: what each number measured
  QString legend() const {
    const auto& calls = sel_->session()->calls();
    const double scale = model_->scale_seconds();
    bool clipped = false;
    for (int r = 0; r < calls.size(); ++r) clipped = clipped || model_->headline(r) > scale;
    int warm = 0;
    bool any_restored = false, any_noisy = false;
    for (int r = 0; r < calls.size(); ++r) {
      warm = std::max(warm, model_->warm_runs(r));
      any_restored = any_restored || model_->restored(r);
      any_noisy = any_noisy || model_->noisy(r);
    }
    QString legend = warm >= 1 ? tr("bar, time, GFLOP/s, GB/s: the median of the warm runs after the first (a call that ran once: its one run)")
                               : tr("bar, time, GFLOP/s, GB/s: each call's one run (Timing 1×: no warm runs)");
    legend += tr(" · first run: DEBUG=2's time, * the first run of its program");
    if (warm >= 2) legend += tr(" · whisker: fastest–slowest of the %1 warm runs, ±: half their spread over the median").arg(warm);
    if (any_noisy) legend += tr(" · noisy: the warm runs spread over ±%1%").arg(50.0 * TimingsModel::kNoisySpread, 0, 'f', 0);
    if (clipped) legend += tr(" · »: beyond the axis (the axis leaves out calls that dwarf the rest)");
    if (any_restored) legend += tr(" · ↺ timed on restored inputs (the kernel writes memory it reads)");
    return legend;
  }
  void paint_header(QPainter& p, const Columns& col, double scale) {
    const auto& calls = sel_->session()->calls();
    const int h = col.h;
    p.setPen(palette().color(QPalette::Mid));
    p.drawText(QRect(4, 0, col.name_w, h), Qt::AlignVCenter, tr("call"));
    bool clipped = false;
    for (int r = 0; r < calls.size(); ++r) clipped = clipped || model_->headline(r) > scale;
    p.drawText(QRect(col.bar_x, 0, col.bar_w, h), Qt::AlignVCenter,
               scale > 0 ? tr("time (bar: 0 … %1 µs%2)").arg(scale * 1e6, 0, 'f', 1).arg(clipped ? tr("; » beyond") : QString()) : tr("time"));
    const QFont normal = p.font();
    p.setFont(mono());
    p.drawText(QRect(col.stats_x, 0, col.stats_w, h), Qt::AlignVCenter,
               QStringLiteral("%1 %2 %3 %4 %5").arg(tr("time"), 12).arg(tr("first run"), 13).arg(tr("GFLOP/s"), 10).arg(tr("GB/s"), 10).arg(tr("warm")));
    p.setFont(normal);
    // what each number measured (the tooltip of a row says it for that call), wrapped at the foot
    const QString text = legend();
    const int legend_h = fontMetrics().boundingRect(QRect(0, 0, width() - 8, 10000), Qt::TextWordWrap, text).height();
    p.drawText(QRect(4, height() - legend_h - 4, width() - 8, legend_h), Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap, text);
  }
  void paint_row(QPainter& p, const Columns& col, int r, double scale) {
    const Call& c = sel_->session()->calls()[r];
    const Selection& s = sel_->current();
    const int h = col.h, y = h + r * h;
    const QColor text = palette().color(QPalette::Text);
    // the selected call, and the other calls of its program (its key and opts: the kernel context that compiled it)
    const bool marked = r == s.call || (!s.program_key.isEmpty() && c.program_key == s.program_key &&
                                        sel_->session()->kernel_context(c) == s.context);
    if (marked) p.fillRect(QRect(0, y, width(), h), palette().color(QPalette::Highlight).lighter(r == s.call ? 100 : 130));
    // a call replayed by TinyJit: a magenta edge, as DEBUG=2 colours its header
    if (c.jit) p.fillRect(QRect(0, y + 2, 3, h - 4), QColor(0xc0, 0x3c, 0xc0));
    const QColor name_color = main_ansi_color(c.colored_name);
    p.setPen(marked ? palette().color(QPalette::HighlightedText) : (name_color.isValid() ? name_color : text));
    p.drawText(QRect(4, y, col.name_w, h), Qt::AlignVCenter | Qt::AlignLeft,
               fontMetrics().elidedText(strip_ansi(c.colored_name).trimmed(), Qt::ElideRight, col.name_w));
    // the bar in the call's one colour (viewer/model/call_color.h), clipped at the axis' end with a break and »
    const double t = model_->headline(r);
    const bool beyond = scale > 0 && t > scale * 1.0000001;
    const double frac = scale > 0 ? std::min(1.0, t / scale) : 0;
    const QRectF bar(col.bar_x, y + 3, std::max(2.0, frac * col.bar_w), h - 6);
    const QColor fill = colors_.value(r, QColor(0xf0, 0x9a, 0x3e));
    p.setPen(QPen(call_outline(fill), 1));
    p.setBrush(fill);
    p.drawRoundedRect(bar, 2, 2);
    const QColor ink = marked ? palette().color(QPalette::HighlightedText) : text;
    if (beyond) {
      p.setPen(QPen(palette().color(QPalette::Base), 2.5));
      const double bx = bar.right() - 10;
      p.drawLine(QPointF(bx - 3, bar.bottom()), QPointF(bx + 1, bar.top()));
      p.drawLine(QPointF(bx + 2, bar.bottom()), QPointF(bx + 6, bar.top()));
    }
    // a kernel timed N times: a whisker from the fastest to the slowest run (» where the slowest is beyond the axis)
    const TimingsModel::Spread sp = model_->spread(r);
    bool whisker_beyond = false;
    if (sp.n >= 2 && scale > 0) {
      auto x_of = [&](double sec) { return col.bar_x + std::min(1.0, sec / scale) * col.bar_w; };
      const double cy = y + h / 2.0;
      whisker_beyond = sp.max > scale * 1.0000001;
      p.setPen(QPen(ink, 1.2));
      p.drawLine(QPointF(x_of(sp.min), cy), QPointF(x_of(sp.max), cy));
      p.drawLine(QPointF(x_of(sp.min), cy - 3), QPointF(x_of(sp.min), cy + 3));
      if (!whisker_beyond) p.drawLine(QPointF(x_of(sp.max), cy - 3), QPointF(x_of(sp.max), cy + 3));
    }
    if (beyond || whisker_beyond) {
      p.setPen(ink);
      p.drawText(QRectF(col.bar_x + col.bar_w - 14, y, 14, h), Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("»"));
    }
    paint_stats(p, col, r, y, ink);
  }
  void paint_stats(QPainter& p, const Columns& col, int r, int y, const QColor& ink) {
    const Call& c = sel_->session()->calls()[r];
    const TimingsModel::Spread sp = model_->spread(r);
    const int warm_n = model_->warm_runs(r);
    const QString warm_text = sp.n >= 2 && sp.median > 0 ? QStringLiteral("±%1%").arg(50.0 * (sp.max - sp.min) / sp.median, 0, 'f', 1)
                              : warm_n == 1           ? tr("1 run")
                                                      : tr("once");
    const QString stats = QStringLiteral("%1 µs %2 µs%3%4 %5 %6%7")
                              .arg(model_->headline(r) * 1e6, 9, 'f', 2)
                              .arg(c.seconds * 1e6, 9, 'f', 2)
                              .arg(c.first_run && c.kind == "kernel" ? QStringLiteral("*") : QStringLiteral(" "))
                              .arg(model_->gflops(r), 10, 'f', 3)
                              .arg(model_->gbs(r), 10, 'f', 3)
                              .arg(warm_text)
                              .arg(model_->restored(r) ? QStringLiteral(" ↺") : QString());
    const QFont normal = p.font();
    const QFont m = mono();
    p.setFont(m);
    p.setPen(ink);
    const QRect box(col.stats_x, y, col.stats_w, col.h);
    p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft, stats);
    if (model_->noisy(r)) {  // the mark: these figures move from run to run
      const int x = col.stats_x + QFontMetrics(m).horizontalAdvance(stats + QLatin1Char(' '));
      p.setPen(QColor(0xc0, 0x50, 0x00));
      p.drawText(QRect(x, y, std::max(0, col.stats_x + col.stats_w - x), col.h), Qt::AlignVCenter | Qt::AlignLeft, tr("noisy"));
    }
    p.setFont(normal);
  }

 private:
  SelectionModel* sel_;
  TimingsModel* model_;
  QList<QColor> colors_;  // each call's one colour
};
}  // namespace

TimingsPane::TimingsPane(SelectionModel* selection, QWidget* parent) : QScrollArea(parent), selection_(selection) {
  model_ = new TimingsModel(selection->session(), this);
  setWidget(new Bars(selection, model_, this));
  setWidgetResizable(true);
}

}  // namespace tsv
