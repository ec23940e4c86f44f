#include "viewer/panes/roofline_pane.h"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QTextDocumentFragment>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

#include "viewer/model/ansi.h"
#include "viewer/model/call_color.h"

namespace tsv {

namespace {
// 10^k as an axis label: 0.001 … 1 … 100, then 1k, 10k, 1M, …; far out 1e-7, 1e+12
QString decade_text(int k) {
  if (k >= 0 && k <= 2) return QString::number(qint64(std::pow(10.0, k)));
  if (k >= 3 && k <= 11) {
    static const char* suffix[] = {"k", "M", "G"};
    return QString::number(qint64(std::pow(10.0, k % 3))) + QLatin1String(suffix[k / 3 - 1]);
  }
  if (k < 0 && k >= -4) return QString::number(std::pow(10.0, k), 'f', -k);
  return QStringLiteral("1e%1").arg(k);
}

QString rate(double v, const char* unit) {
  const int digits = v >= 100 ? 1 : v >= 1 ? 2 : 3;
  return QStringLiteral("%1 %2").arg(v, 0, 'f', v > 0 && v < 0.001 ? 6 : digits).arg(QLatin1String(unit));
}

QString bytes_text(double b) {
  if (b >= 1 << 30) return QStringLiteral("%1 GiB").arg(b / (1 << 30), 0, 'f', 2);
  if (b >= 1 << 20) return QStringLiteral("%1 MiB").arg(b / (1 << 20), 0, 'f', 2);
  if (b >= 1 << 10) return QStringLiteral("%1 KiB").arg(b / (1 << 10), 0, 'f', 2);
  return QStringLiteral("%1 B").arg(b, 0, 'f', 0);
}
}  // namespace

// The log-log plot: axes, the roof and a dot per placed call.
class RooflinePlot : public QWidget {
 public:
  RooflinePlot(SelectionModel* sel, const Roofline* r, QWidget* parent) : QWidget(parent), sel_(sel), r_(r) {
    setMinimumSize(360, 170);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    connect(sel, &SelectionModel::changed, this, [this] { update(); });
  }

  // the decades the axes span (log10), from the dots and the roof's corner
  void relayout() {
    QList<double> xs, ys;
    for (const RooflinePoint& p : r_->points) xs << p.intensity, ys << p.gflops;
    if (r_->has_roof()) xs << r_->ridge(), ys << r_->limits.peak_gflops;
    auto span = [](const QList<double>& v, double* lo, double* hi, double dlo, double dhi) {
      if (v.isEmpty()) return *lo = dlo, *hi = dhi, void();
      const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
      // (in logs: half the smallest of 5e-324 is no number, twice the largest of 1e308 none either)
      *lo = std::floor(std::log10(*mn) - std::log10(2.0));
      *hi = std::ceil(std::log10(*mx) + std::log10(2.0));
      if (*hi - *lo < 2) *lo = *hi - 2;
    };
    span(xs, &lx0_, &lx1_, -2, 2);
    span(ys, &ly0_, &ly1_, -2, 2);
    update();
  }

  QRectF area() const {
    const int lh = fontMetrics().height();
    const double left = fontMetrics().horizontalAdvance(QStringLiteral("0.0001")) + lh + 14;
    return QRectF(left, lh + 4, std::max(10.0, width() - left - 14), std::max(10.0, double(height() - (lh + 4) - (2 * lh + 10))));
  }
  QPointF position(double x, double y) const { return at_log(std::log10(x), std::log10(y)); }
  // the point of (10^lx, 10^ly)
  QPointF at_log(double lx, double ly) const {
    const QRectF a = area();
    const double fx = (lx - lx0_) / (lx1_ - lx0_), fy = (ly - ly0_) / (ly1_ - ly0_);
    return {a.left() + fx * a.width(), a.bottom() - fy * a.height()};
  }
  int call_at(const QPointF& pos) const {
    int best = -1;
    double best_d = 8.0 * 8.0;  // within 8 px
    for (const RooflinePoint& p : r_->points) {
      const QPointF d = position(p.intensity, p.gflops) - pos;
      const double dd = d.x() * d.x() + d.y() * d.y();
      if (dd < best_d) best_d = dd, best = p.call;
    }
    return best;
  }
  QString describe(int call) const {
    const RooflinePoint* p = r_->point_of(call);
    if (!p) return {};
    const Call& c = sel_->session()->calls()[call];
    QStringList lines;
    lines << c.display_name();
    lines << RooflinePane::tr("Intensity %1 FLOP/byte: %2 ops over %3 of memory")
                 .arg(p->intensity, 0, 'g', 4)
                 .arg(c.estimates.ops, 0, 'g', 6)
                 .arg(bytes_text(c.estimates.mem));
    lines << RooflinePane::tr("%1 · %2 in %3 µs (%4)")
                 .arg(rate(p->gflops, "GFLOP/s"), rate(p->gbs, "GB/s"))
                 .arg(p->seconds * 1e6, 0, 'f', 2)
                 .arg(p->warm_runs >= 1 ? RooflinePane::tr("the median of its %1 warm runs").arg(p->warm_runs)
                                        : RooflinePane::tr("its one run: no warm runs"));
    if (r_->has_roof()) {
      const double roof = r_->roof(p->intensity);
      lines << RooflinePane::tr("%1% of the roof here: %2 (%3)")
                   .arg(100.0 * p->gflops / roof, 0, 'f', 1)
                   .arg(rate(roof, "GFLOP/s"))
                   .arg(p->intensity < r_->ridge() ? RooflinePane::tr("memory-bound: %1 × intensity").arg(rate(r_->limits.bandwidth_gbs, "GB/s"))
                                                   : RooflinePane::tr("compute-bound: the peak"));
    } else {
      lines << RooflinePane::tr("No roof: the trace has no measured limits");
    }
    return lines.join('\n');
  }

 protected:
  bool event(QEvent* e) override {
    if (e->type() == QEvent::ToolTip) {
      auto* he = static_cast<QHelpEvent*>(e);
      const int call = call_at(he->pos());
      if (call >= 0) QToolTip::showText(he->globalPos(), describe(call), this);
      else QToolTip::hideText();
      return true;
    }
    return QWidget::event(e);
  }
  void mousePressEvent(QMouseEvent* e) override {
    const int call = call_at(e->position());
    if (call >= 0) sel_->select_call(call);
  }
  void mouseReleaseEvent(QMouseEvent* e) override { e->accept(); }
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF a = area();
    const QColor text = palette().color(QPalette::Text), mid = palette().color(QPalette::Mid);
    QColor grid = mid;
    grid.setAlpha(90);
    p.fillRect(a, palette().color(QPalette::Base));
    const int lh = fontMetrics().height();
    // decades: a grid line and a label each (every k-th when the axis spans many)
    auto each_decade = [](double lo, double hi, const std::function<void(int, bool)>& f) {
      const int n = int(hi - lo), step = std::max(1, n / 10);
      for (int k = int(lo); k <= int(hi); ++k) f(k, (k - int(lo)) % step == 0);
    };
    p.setFont(font());
    each_decade(lx0_, lx1_, [&](int k, bool label) {
      const double x = at_log(k, 0).x();
      p.setPen(QPen(grid, 1));
      p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
      if (!label) return;
      p.setPen(text);
      // the first label starts at the corner, clear of the y axis' last one
      if (k == int(lx0_)) p.drawText(QRectF(x + 2, a.bottom() + 2, 80, lh), Qt::AlignLeft | Qt::AlignTop, decade_text(k));
      else p.drawText(QRectF(x - 40, a.bottom() + 2, 80, lh), Qt::AlignHCenter | Qt::AlignTop, decade_text(k));
    });
    each_decade(ly0_, ly1_, [&](int k, bool label) {
      const double y = at_log(0, k).y();
      p.setPen(QPen(grid, 1));
      p.drawLine(QPointF(a.left(), y), QPointF(a.right(), y));
      if (!label) return;
      p.setPen(text);
      // the last label sits above the corner, clear of the x axis' first one
      if (k == int(ly0_)) p.drawText(QRectF(0, y - lh, a.left() - 4, lh), Qt::AlignRight | Qt::AlignBottom, decade_text(k));
      else p.drawText(QRectF(0, y - lh / 2.0, a.left() - 4, lh), Qt::AlignRight | Qt::AlignVCenter, decade_text(k));
    });
    p.setPen(QPen(mid, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(a);
    p.setPen(text);
    p.drawText(QRectF(a.left(), a.bottom() + lh + 2, a.width(), lh), Qt::AlignHCenter | Qt::AlignTop,
               RooflinePane::tr("arithmetic intensity, FLOP/byte (ops / bytes)"));
    p.save();
    p.translate(2, a.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-a.height() / 2, 0, a.height(), lh), Qt::AlignCenter, RooflinePane::tr("GFLOP/s"));
    p.restore();

    // the roof: the bandwidth slope up to the ridge, then the peak
    p.save();
    p.setClipRect(a);
    if (r_->has_roof()) {
      // in logs: log roof(x) = min(log peak, log bandwidth + log x)
      const double lbw = std::log10(r_->limits.bandwidth_gbs), lpeak = std::log10(r_->limits.peak_gflops), lridge = lpeak - lbw;
      auto lroof = [&](double lx) { return std::min(lpeak, lbw + lx); };
      QPainterPath roof;
      roof.moveTo(at_log(lx0_, lroof(lx0_)));
      if (lridge > lx0_ && lridge < lx1_) roof.lineTo(at_log(lridge, lpeak));
      roof.lineTo(at_log(lx1_, lroof(lx1_)));
      p.setPen(QPen(RooflinePane::roof_color(), 2));
      p.drawPath(roof);
      // the figures beside their lines
      QFont small = font();
      small.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.9));
      p.setFont(small);
      p.setPen(RooflinePane::roof_color());
      const QPointF peak_end = at_log(lx1_, lpeak);
      p.drawText(QRectF(a.right() - 260, peak_end.y() - lh - 1, 256, lh), Qt::AlignRight | Qt::AlignBottom,
                 RooflinePane::tr("peak %1").arg(rate(r_->limits.peak_gflops, "GFLOP/s")));
      // the slope's label along it, at the middle of its visible part
      const double sx0 = std::max(lx0_, ly0_ - lbw), sx1 = std::min(lridge, lx1_);
      if (sx1 > sx0) {
        const double xm = (sx0 + sx1) / 2;
        const QPointF m = at_log(xm, lroof(xm)), d = at_log(sx1, lroof(sx1)) - at_log(sx0, lroof(sx0));
        p.translate(m);
        p.rotate(std::atan2(d.y(), d.x()) * 180 / std::numbers::pi);
        p.drawText(QRectF(-150, -lh - 1, 300, lh), Qt::AlignHCenter | Qt::AlignBottom,
                   RooflinePane::tr("%1 × intensity").arg(rate(r_->limits.bandwidth_gbs, "GB/s")));
      }
    }
    p.restore();

    const auto& calls = sel_->session()->calls();
    const QList<QColor> colors = call_colors(*sel_->session());  // each call's one colour (viewer/model/call_color.h)
    if (r_->points.isEmpty()) {
      p.setPen(mid);
      p.drawText(a, Qt::AlignCenter | Qt::TextWordWrap,
                 calls.isEmpty() ? RooflinePane::tr("No calls: run a script or open a trace")
                                 : RooflinePane::tr("No kernel call has ops, memory and a time to place"));
      return;
    }
    // the selected call's name (under the dots: it never hides one), the dots, the selected kernel's other calls
    // ringed thinly and the selected call boldly
    const Selection& s = sel_->current();
    const RooflinePoint* selected = r_->point_of(s.call);
    if (selected) {
      const QPointF at = position(selected->intensity, selected->gflops);
      const QString name = calls[selected->call].display_name();
      const int w = fontMetrics().horizontalAdvance(name) + 8;
      QRectF box(at.x() + 10, at.y() - 10 - lh, w, lh);  // above and right of the dot
      if (box.right() > a.right()) box.moveRight(at.x() - 10);
      if (box.top() < a.top()) box.moveTop(at.y() + 10);
      QColor back = palette().color(QPalette::Base);
      back.setAlpha(200);
      p.fillRect(box, back);
      p.setPen(text);
      p.drawText(box, Qt::AlignCenter, name);
    }
    for (const RooflinePoint& pt : r_->points) {
      const Call& c = calls[pt.call];
      const QPointF at = position(pt.intensity, pt.gflops);
      const QColor fill = colors.value(pt.call);
      p.setPen(QPen(call_outline(fill), 1));
      p.setBrush(fill);
      p.drawEllipse(at, 5, 5);
      if (pt.call != s.call && !s.program_key.isEmpty() && c.program_key == s.program_key) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(at, 8, 8);
      }
    }
    if (selected) {
      p.setPen(QPen(palette().color(QPalette::Highlight), 3));
      p.setBrush(Qt::NoBrush);
      p.drawEllipse(position(selected->intensity, selected->gflops), 9, 9);
    }
  }
  void resizeEvent(QResizeEvent*) override { update(); }

 private:
  SelectionModel* sel_;
  const Roofline* r_;
  double lx0_ = -2, lx1_ = 2, ly0_ = -2, ly1_ = 2;
};

QColor RooflinePane::roof_color() { return QColor(0xd0, 0x24, 0x24); }

RooflinePane::RooflinePane(SelectionModel* selection, QWidget* parent) : QScrollArea(parent), selection_(selection) {
  // the plot beside a column of text (the roof's figures and source, the calls not placed): side by side in a wide
  // dock, the text above and below the plot in a tall one (resizeEvent)
  auto* box = new QWidget(this);
  lay_ = new QBoxLayout(QBoxLayout::LeftToRight, box);
  lay_->setContentsMargins(6, 4, 6, 4);
  lay_->setSpacing(6);
  plot_ = new RooflinePlot(selection, &roofline_, box);
  // the text scrolls on its own, so the plot keeps the pane's height
  side_ = new QScrollArea(box);
  side_->setWidgetResizable(true);
  side_->setFrameShape(QFrame::NoFrame);
  side_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* text = new QWidget(side_);
  side_->setWidget(text);
  auto* col = new QVBoxLayout(text);
  col->setContentsMargins(0, 0, 0, 0);
  col->setSpacing(4);
  notice_ = new QLabel(text);
  notice_->setObjectName(QStringLiteral("roofline_notice"));
  notice_->setWordWrap(true);
  notice_->setTextFormat(Qt::RichText);
  notice_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  col->addWidget(notice_);
  // limits measured after this trace: from the cache, not the trace, and Run again to place the kernels under them
  measured_ = new QLabel(text);
  measured_->setObjectName(QStringLiteral("roofline_measured"));
  measured_->setWordWrap(true);
  measured_->setTextFormat(Qt::RichText);
  measured_->setStyleSheet(QStringLiteral("QLabel { background: #fff4d6; color: #5c4400; border: 1px solid #e6c466; padding: 3px; }"));
  rerun_ = new QPushButton(tr("Run again"), text);
  rerun_->setToolTip(tr("Run the script again: its trace carries the limits just measured"));
  connect(rerun_, &QPushButton::clicked, this, &RooflinePane::run_again);
  col->addWidget(measured_);
  col->addWidget(rerun_, 0, Qt::AlignLeft);
  measured_->hide();
  rerun_->hide();
  footer_ = new QLabel(text);
  footer_->setObjectName(QStringLiteral("roofline_footer"));
  footer_->setWordWrap(true);
  footer_->setTextFormat(Qt::RichText);
  footer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  col->addWidget(footer_);
  col->addStretch(1);
  lay_->addWidget(plot_, 3);
  lay_->addWidget(side_, 2);
  setWidget(box);
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  connect(selection->session(), &Session::loaded, this, [this] {
    measured_->hide();  // the new trace carries the limits the cache had when it ran
    rerun_->hide();
    reload();
  });
  reload();
}

void RooflinePane::resizeEvent(QResizeEvent* e) {
  QScrollArea::resizeEvent(e);
  // side by side where the dock is wide (a bottom dock), the text above the plot where it is not
  const QSize v = viewport()->size();
  const bool wide = v.width() >= 560 && v.width() * 5 >= v.height() * 7;
  lay_->setDirection(wide ? QBoxLayout::LeftToRight : QBoxLayout::BottomToTop);
  side_->setMaximumWidth(wide ? std::max(240, v.width() * 2 / 5) : QWIDGETSIZE_MAX);
  side_->setMaximumHeight(wide ? QWIDGETSIZE_MAX : std::max(60, v.height() * 2 / 5));
}

QWidget* RooflinePane::plot() const { return plot_; }
QPointF RooflinePane::position(double intensity, double gflops) const { return plot_->position(intensity, gflops); }
QPointF RooflinePane::dot_position(int call) const {
  const RooflinePoint* p = roofline_.point_of(call);
  return p ? plot_->position(p->intensity, p->gflops) : QPointF(-1, -1);
}
int RooflinePane::call_at(const QPointF& pos) const { return plot_->call_at(pos); }
int RooflinePane::highlighted_call() const {
  const int call = selection_->current().call;
  return roofline_.point_of(call) ? call : -1;
}
QString RooflinePane::notice() const { return QTextDocumentFragment::fromHtml(notice_->text()).toPlainText(); }
QString RooflinePane::footer() const { return QTextDocumentFragment::fromHtml(footer_->text()).toPlainText(); }
QString RooflinePane::measured_note() const {
  return measured_->isHidden() ? QString() : QTextDocumentFragment::fromHtml(measured_->text()).toPlainText();
}

void RooflinePane::set_measured(const QString& device, const QString& summary) {
  measured_->setText(tr("Limits measured for %1 just now, in the limits cache, not in this trace: %2. Run again and the "
                        "trace carries them.")
                         .arg(device.toHtmlEscaped(), summary.toHtmlEscaped()));
  measured_->show();
  rerun_->show();
}

void RooflinePane::reload() {
  const Session& s = *selection_->session();
  roofline_ = Roofline::of(s);
  const QString dev = s.device();
  if (roofline_.has_roof()) {
    const MeasuredLimits& l = roofline_.limits;
    notice_->setText(tr("<b>Roof</b>: min(peak %1, %2 × intensity), ridge at %3 FLOP/byte · measured by <tt>tinyscope bench</tt> "
                        "on %4 on %5<br><small>bandwidth: %6<br>peak: %7</small>")
                         .arg(rate(l.peak_gflops, "GFLOP/s"), rate(l.bandwidth_gbs, "GB/s"))
                         .arg(roofline_.ridge(), 0, 'g', 3)
                         .arg(l.measured_at.left(10).toHtmlEscaped(), l.machine.toHtmlEscaped(), l.bandwidth_label.toHtmlEscaped(),
                              l.peak_label.toHtmlEscaped()));
  } else if (s.calls().isEmpty()) {
    notice_->setText(tr("The roofline of a run: run a script or open a trace"));
  } else if (!s.partial().isEmpty()) {
    notice_->setText(tr("No measured limits: a partial trace carries none (a run's whole trace does, when the limits "
                        "cache has its device's)"));
  } else if (dev.startsWith(QLatin1String("INTERP"))) {
    notice_->setText(tr("No measured limits for %1: it interprets its kernels; limits are measured for the CPU, CPU:LLVM "
                        "and VULKAN devices").arg(dev.toHtmlEscaped()));
  } else {
    const QString d = dev.isEmpty() ? QStringLiteral("DEV") : dev;
    notice_->setText(tr("<b>No measured limits for %1</b>: run <tt>tinyscope bench --limits --dev %1</tt> (or Run &gt; Measure "
                        "limits for this device)").arg(d.toHtmlEscaped()));
  }
  QString foot;
  if (!roofline_.points.isEmpty())
    foot = tr("Each dot a kernel call, in its call's colour (as in the graphs and the Timings pane); GFLOP/s of its warm median time (a call "
              "that ran once: its one run). Click a dot to select its call.");
  if (!roofline_.skipped.isEmpty()) {
    QStringList names;
    for (int i = 0; i < roofline_.skipped.size() && i < 6; ++i) {
      const RooflineSkip& k = roofline_.skipped[i];
      names << QStringLiteral("%1 (%2)").arg(s.calls()[k.call].display_name().toHtmlEscaped(), k.why);
    }
    if (roofline_.skipped.size() > 6) names << tr("and %1 more").arg(roofline_.skipped.size() - 6);
    foot += (foot.isEmpty() ? QString() : QStringLiteral(" ")) + tr("Not plotted: %1.").arg(names.join(QStringLiteral("; ")));
  }
  footer_->setText(foot);
  footer_->setVisible(!foot.isEmpty());
  plot_->relayout();
}

}  // namespace tsv
