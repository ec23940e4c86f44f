#include "viewer/panes/timeline_pane.h"

#include <QElapsedTimer>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "viewer/model/session.h"

namespace tsv {

namespace {
constexpr int kGutter = 84;       // lane names
constexpr int kAxis = 18;         // the time axis
constexpr int kMarks = 16;        // the script's lines
constexpr int kHostRow = 18;
constexpr int kDeviceRow = 28;
constexpr int kMemoryRow = 140;  // the most a memory lane takes
constexpr int kMemoryMin = 30;
constexpr int kGap = 3;

QString time_text(double s) {
  const double a = std::abs(s);
  if (a >= 1) return QString::number(s, 'f', 3) + QStringLiteral(" s");
  if (a >= 1e-3) return QString::number(s * 1e3, 'f', 3) + QStringLiteral(" ms");
  return QString::number(s * 1e6, 'f', 2) + QStringLiteral(" µs");
}
QString bytes_text(qint64 b) {
  if (b >= (qint64(1) << 30)) return QString::number(double(b) / (1 << 30), 'f', 2) + QStringLiteral(" GB");
  if (b >= (1 << 20)) return QString::number(double(b) / (1 << 20), 'f', 2) + QStringLiteral(" MB");
  if (b >= (1 << 10)) return QString::number(double(b) / (1 << 10), 'f', 2) + QStringLiteral(" KB");
  return QString::number(b) + QStringLiteral(" B");
}
// a tick's time with as many digits as the step between ticks needs
QString tick_text(double t, double step) {
  // (ms from a millisecond on: "994.030 ms" reads better than "994030 µs")
  const double unit = step >= 1 ? 1 : step >= 1e-3 || std::abs(t) >= 1e-3 ? 1e-3 : 1e-6;
  const char* name = unit == 1 ? " s" : unit == 1e-3 ? " ms" : " µs";
  const int digits = std::clamp(int(std::ceil(-std::log10(step / unit) - 1e-9)), 0, 6);
  return QString::number(t / unit, 'f', digits) + QString::fromUtf8(name);
}
}  // namespace

QColor TimelinePane::kind_color(TimelineSpan::Kind k) {
  switch (k) {
    case TimelineSpan::Kind::Schedule: return QColor(0x59, 0xa1, 0x4f);
    case TimelineSpan::Kind::Codegen: return QColor(0x76, 0xb7, 0xb2);
    case TimelineSpan::Kind::Compile: return QColor(0x9c, 0x75, 0x5f);
    case TimelineSpan::Kind::Kernel: return QColor(0x4e, 0x79, 0xa7);
    case TimelineSpan::Kind::Copy: return QColor(0xf2, 0x8e, 0x2b);
    case TimelineSpan::Kind::Graph: return QColor(0xb0, 0x7a, 0xa1, 70);
  }
  return Qt::gray;
}

namespace {
QColor band_color(qint64 buffer) {
  return QColor::fromHsv(int((buffer * 47) % 360), 70, 225);
}
// the first of `ids` (sorted by begin) that could reach time t, given the lane's longest span
qsizetype first_reaching(const QList<int>& ids, const QList<TimelineSpan>& spans, double t, double longest) {
  auto it = std::lower_bound(ids.begin(), ids.end(), t - longest, [&spans](int i, double x) { return spans[i].begin < x; });
  return it - ids.begin();
}
}  // namespace

// ---- the pane

TimelinePane::TimelinePane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(2);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("timeline_status"));
  status_->setTextFormat(Qt::PlainText);
  status_->setContentsMargins(6, 2, 6, 0);
  canvas_ = new TimelineCanvas(&model_, selection, this);
  lay->addWidget(status_);
  lay->addWidget(canvas_, 1);
  connect(selection->session(), &Session::loaded, this, &TimelinePane::rebuild);
  connect(selection, &SelectionModel::changed, canvas_, &TimelineCanvas::follow_selection);
  rebuild();
}

void TimelinePane::rebuild() {
  QElapsedTimer clock;
  clock.start();
  model_.build(*selection_->session());
  canvas_->reset_view();
  status_->setText(status_text());
  status_->setToolTip(
      tr("Every span is drawn from the timestamps the trace recorded: a call from its start on its device for its measured "
         "seconds (a device runs its calls in order: a call starts when it was launched, or when the device's previous call "
         "ended), a context from its begin to its end, a kernel's compile as timed. Memory: the bytes of the buffers the "
         "runtime allocated for the calls (each allocation and free; the script's own host data is not counted), each "
         "buffer a band packed first-fit (bands never overlap; they are not addresses), the peak named."));
  canvas_->follow_selection();
  if (canvas_->isVisible()) canvas_->repaint();
  build_ms_ = double(clock.nsecsElapsed()) / 1e6;
  if (qEnvironmentVariableIsSet("TINYSCOPE_PERF")) {
    std::fprintf(stderr, "timeline: %lld spans laid out in %.1f ms\n", static_cast<long long>(model_.spans().size()), build_ms_);
    canvas_->report_next_paint();
  }
}

QString TimelinePane::status_text() const {
  const Session* s = selection_->session();
  if (s->calls().isEmpty() && s->contexts().isEmpty()) return tr("No run yet.");
  if (!model_.has_timestamps())
    return tr("This trace has no timestamps (it was recorded before traces kept them): run the script again for its timeline.");
  QStringList names;
  for (const TimelineLane& l : model_.lanes())
    if (!l.host) names << l.name;
  QString text = tr("%1 calls on %2 over %3").arg(s->calls().size()).arg(names.join(QStringLiteral(", ")), time_text(model_.end() - model_.begin()));
  for (const MemorySeries& m : model_.memory()) text += tr(" · %1 peak %2").arg(m.device, bytes_text(m.peak));
  return text + tr(" · wheel: zoom, drag: pan, double-click: all");
}

// ---- the canvas

TimelineCanvas::TimelineCanvas(const TimelineModel* model, SelectionModel* selection, QWidget* parent)
    : QWidget(parent), model_(model), selection_(selection) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::ClickFocus);
}

QSize TimelineCanvas::sizeHint() const {
  int h = kAxis + kMarks;
  for (const TimelineLane& l : model_->lanes()) h += (l.host ? kHostRow : kDeviceRow) + kGap;
  return {800, h + int(model_->memory().size()) * (kMemoryMin * 2 + kGap)};
}
QSize TimelineCanvas::minimumSizeHint() const { return {200, 80}; }

// the lanes at their heights, narrower where the canvas is short; the memory lanes take the height left
QList<TimelineCanvas::Row> TimelineCanvas::rows() const {
  int hosts = 0, devices = 0;
  for (const TimelineLane& l : model_->lanes()) (l.host ? hosts : devices) += 1;
  const int memories = int(model_->memory().size());
  int host_h = kHostRow, device_h = kDeviceRow;
  const int top = kAxis + kMarks;
  if (top + hosts * (host_h + kGap) + devices * (device_h + kGap) + memories * (kMemoryMin + kGap) > height()) host_h = 13, device_h = 20;
  const int left = height() - top - hosts * (host_h + kGap) - devices * (device_h + kGap);
  const int memory_h = memories ? std::clamp(left / memories - kGap, kMemoryMin, kMemoryRow) : 0;
  QList<Row> out;
  int y = top;
  for (int i = 0; i < model_->lanes().size(); ++i) {
    const int h = model_->lanes()[i].host ? host_h : device_h;
    out.push_back({y, h, i, -1});
    y += h + kGap;
  }
  for (int m = 0; m < memories; ++m) {
    out.push_back({y, memory_h, -1, m});
    y += memory_h + kGap;
  }
  return out;
}

int TimelineCanvas::row_at(int y) const {
  const QList<Row> r = rows();
  for (int i = 0; i < r.size(); ++i)
    if (y >= r[i].top && y < r[i].top + r[i].height) return i;
  return -1;
}

double TimelineCanvas::x_to_t(double x) const { return v0_ + (x - kGutter) / std::max(1, width() - kGutter) * (v1_ - v0_); }
// (kept within a few widths of the canvas: an untrusted trace's extreme times never reach an int conversion)
double TimelineCanvas::t_to_x(double t) const {
  const double x = kGutter + (t - v0_) / (v1_ - v0_) * std::max(1, width() - kGutter);
  return std::isfinite(x) ? std::clamp(x, -4.0 * width(), 5.0 * width()) : -4.0 * width();
}

void TimelineCanvas::reset_view() {
  const double pad = std::max(1e-9, (model_->end() - model_->begin()) * 0.01);
  set_range(model_->begin() - pad, model_->end() + pad);
  updateGeometry();
}

void TimelineCanvas::set_range(double begin, double end) {
  if (!(end > begin)) end = begin + 1e-6;
  v0_ = begin;
  v1_ = std::max(end, begin + 1e-9);  // a nanosecond across at the most zoomed
  update();
}

QPoint TimelineCanvas::point_of_span(int span) const {
  if (span < 0 || span >= model_->spans().size()) return {-1, -1};
  const TimelineSpan& sp = model_->spans()[span];
  for (const Row& r : rows())
    if (r.lane == sp.lane) {
      const int x = int(std::lround((t_to_x(sp.begin) + t_to_x(sp.end)) / 2));
      const bool inset = sp.kind == TimelineSpan::Kind::Kernel && sp.graph > 0;
      return {x, r.top + (sp.kind == TimelineSpan::Kind::Graph ? 2 : inset ? r.height * 2 / 3 : r.height / 2)};
    }
  return {-1, -1};
}

int TimelineCanvas::span_at(const QPoint& p) const {
  const int ri = row_at(p.y());
  if (ri < 0 || p.x() < kGutter) return -1;
  const Row r = rows()[ri];
  if (r.lane < 0) return -1;
  const double slack = 2.0 * (v1_ - v0_) / std::max(1, width() - kGutter);  // two pixels
  const double t = x_to_t(p.x());
  // a graph's strip above its kernels picks the graph
  if (!model_->lanes()[r.lane].host && p.y() < r.top + 5) {
    const int s = model_->span_at(r.lane, t, slack);
    if (s >= 0 && model_->spans()[s].graph > 0)
      for (int g : model_->lanes()[r.lane].groups)
        if (model_->spans()[g].graph == model_->spans()[s].graph) return g;
  }
  return model_->span_at(r.lane, t, slack);
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
  QElapsedTimer clock;
  clock.start();
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (!model_->has_timestamps()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No timestamps in this trace"));
    return;
  }
  const int w = width();
  paint_axis(p, w);
  for (const Row& r : rows()) {
    p.setPen(palette().color(QPalette::Text));
    const QString name = r.lane >= 0 ? model_->lanes()[r.lane].name : tr("%1 memory").arg(model_->memory()[r.memory].device);
    p.drawText(QRect(4, r.top, kGutter - 8, r.height), Qt::AlignVCenter | Qt::AlignLeft, name);
    p.fillRect(QRect(kGutter, r.top, w - kGutter, r.height), palette().color(QPalette::AlternateBase));
    p.save();
    p.setClipRect(QRect(kGutter, r.top, w - kGutter, r.height));
    if (r.lane >= 0) paint_lane(p, r, w);
    else paint_memory(p, r, w);
    p.restore();
  }
  paint_flows(p, w);
  paint_ms_ = double(clock.nsecsElapsed()) / 1e6;
  if (report_paint_) std::fprintf(stderr, "timeline: painted in %.1f ms\n", paint_ms_);
  report_paint_ = false;
}

// ticks at a round step, and the script's lines as marks (a label where there is room for it)
void TimelineCanvas::paint_axis(QPainter& p, int width) const {
  const double span = v1_ - v0_;
  const double raw = span / std::max(1.0, (width - kGutter) / 110.0);
  double step = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {2.0, 5.0, 10.0})
    if (step < raw) step = std::pow(10.0, std::floor(std::log10(raw))) * m;
  const QColor mid = palette().color(QPalette::Mid), text = palette().color(QPalette::Text);
  p.setPen(text);
  for (double t = std::ceil((v0_ - model_->begin()) / step) * step; t + model_->begin() <= v1_; t += step) {
    const int x = int(t_to_x(t + model_->begin()));
    if (x < kGutter) continue;
    p.setPen(mid);
    p.drawLine(x, kAxis - 4, x, height());
    p.setPen(text);
    p.drawText(x + 3, kAxis - 5, tick_text(t, step));
  }
  const QFontMetrics fm(font());
  int free_from = kGutter;
  QColor mark = palette().color(QPalette::Highlight);
  mark.setAlpha(110);
  for (const TimelineMarker& m : model_->markers()) {
    const int x = int(t_to_x(m.t));
    if (x < kGutter || x > width) continue;
    p.setPen(QPen(mark, 1, Qt::DashLine));
    p.drawLine(x, kAxis, x, height());
    if (x < free_from) continue;
    p.setPen(text);
    p.drawText(x + 2, kAxis + kMarks - 4, m.label);
    free_from = x + fm.horizontalAdvance(m.label) + 8;
  }
}

void TimelineCanvas::paint_lane(QPainter& p, const Row& r, int width) const {
  const TimelineLane& lane = model_->lanes()[r.lane];
  const auto& spans = model_->spans();
  // graph spans behind their kernels: the lane's whole height
  for (qsizetype k = first_reaching(lane.groups, spans, v0_, lane.longest); k < lane.groups.size(); ++k) {
    const TimelineSpan& g = spans[lane.groups[k]];
    if (g.begin > v1_) break;
    const double x0 = t_to_x(g.begin), x1 = t_to_x(g.end);
    p.fillRect(QRectF(x0, r.top, std::max(1.0, x1 - x0), r.height), TimelinePane::kind_color(TimelineSpan::Kind::Graph));
  }
  // calls and contexts; spans under a pixel that share one are drawn once
  int last_px = -1;
  for (qsizetype k = first_reaching(lane.spans, spans, v0_, lane.longest); k < lane.spans.size(); ++k) {
    const TimelineSpan& sp = spans[lane.spans[k]];
    if (sp.begin > v1_) break;
    if (sp.end < v0_) continue;
    const double x0 = std::max(t_to_x(sp.begin), double(kGutter) - 2), x1 = std::min(t_to_x(sp.end), double(width) + 2);
    const bool inset = sp.graph > 0;
    const double top = r.top + (inset ? 6 : 1), h = r.height - (inset ? 7 : 2);
    if (x1 - x0 < 1) {
      const int px = int(x0);
      if (px == last_px) continue;
      last_px = px;
      p.fillRect(QRectF(px, top, 1, h), TimelinePane::kind_color(sp.kind));
      continue;
    }
    p.fillRect(QRectF(x0, top, x1 - x0, h), TimelinePane::kind_color(sp.kind));
    if (x1 - x0 > 4) {
      p.setPen(TimelinePane::kind_color(sp.kind).darker(150));
      p.drawLine(QPointF(x1 - 0.5, top), QPointF(x1 - 0.5, top + h - 1));
    }
    if (x1 - x0 > 40) {
      p.setPen(Qt::white);
      const Session* s = selection_->session();
      const QString label = sp.kind == TimelineSpan::Kind::Kernel || sp.kind == TimelineSpan::Kind::Copy
                                ? s->calls()[sp.index].display_name()
                                : s->contexts()[sp.index].plain_name;
      p.drawText(QRectF(x0 + 3, top, x1 - x0 - 6, h), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetrics(font()).elidedText(label, Qt::ElideRight, int(x1 - x0 - 6)));
    }
  }
  if (highlight_ >= 0 && spans[highlight_].lane == r.lane) {
    const TimelineSpan& sp = spans[highlight_];
    const double x0 = t_to_x(sp.begin), x1 = t_to_x(sp.end);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    const double w = std::max(4.0, x1 - x0);
    p.drawRect(QRectF((x0 + x1 - w) / 2, r.top + 1, w, r.height - 2));
  }
}

// the selected call's inputs: an arc from the end of each call that wrote a buffer it reads to its start
void TimelineCanvas::paint_flows(QPainter& p, int width) const {
  if (highlight_ < 0) return;
  const auto& spans = model_->spans();
  const TimelineSpan& to = spans[highlight_];
  if (to.kind != TimelineSpan::Kind::Kernel && to.kind != TimelineSpan::Kind::Copy) return;
  const QList<Row> all = rows();
  auto top_of = [&all](int lane) {
    for (const Row& r : all)
      if (r.lane == lane) return r.top;
    return -1;
  };
  p.save();
  p.setClipRect(QRect(kGutter, kAxis, width - kGutter, height() - kAxis));
  p.setRenderHint(QPainter::Antialiasing);
  const QColor flow(0xe1, 0x57, 0x59);
  p.setPen(QPen(flow, 1.4));
  p.setBrush(flow);
  const QPointF end(t_to_x(to.begin), top_of(to.lane) + 2);
  for (int w : model_->writers_of(to.index)) {
    const int ws = model_->span_of_call(w);
    if (ws < 0) continue;
    const QPointF start(t_to_x(spans[ws].end), top_of(spans[ws].lane) + 2);
    QPainterPath arc(start);
    arc.quadTo(QPointF((start.x() + end.x()) / 2, std::min(start.y(), end.y()) - 12), end);
    p.setBrush(Qt::NoBrush);
    p.drawPath(arc);
    p.setBrush(flow);
    p.drawEllipse(end, 2.2, 2.2);
  }
  p.restore();
}

// the buffers as bands, the allocated bytes as a line over them, the peak named
void TimelineCanvas::paint_memory(QPainter& p, const Row& r, int width) const {
  const MemorySeries& m = model_->memory()[r.memory];
  const double top = std::max(m.packed, m.peak);
  if (top <= 0 || m.t.isEmpty()) return;
  const double scale = (r.height - 14) / top;
  const double bottom = r.top + r.height - 1;
  int last_px = -1;
  for (const MemoryBand& b : m.bands) {
    if (b.alloc > v1_) break;
    if (b.free < v0_) continue;
    const double x0 = std::max(t_to_x(b.alloc), double(kGutter) - 2), x1 = std::min(t_to_x(b.free), double(width) + 2);
    const double h = std::max(1.0, b.bytes * scale);
    if (x1 - x0 < 1 && int(x0) == last_px) continue;
    last_px = int(x0);
    p.fillRect(QRectF(x0, bottom - b.offset * scale - h, std::max(1.0, x1 - x0), h), band_color(b.buffer));
  }
  // the allocated bytes: a step line from event to event
  QPainterPath line;
  const auto first = std::upper_bound(m.t.begin(), m.t.end(), v0_);
  qsizetype k = std::max<qsizetype>(0, (first - m.t.begin()) - 1);
  line.moveTo(std::max(t_to_x(m.t[k]), double(kGutter)), bottom - m.bytes[k] * scale);
  int last_x = -1;
  for (++k; k < m.t.size(); ++k) {
    const double x = t_to_x(m.t[k]);
    if (int(x) == last_x && k + 1 < m.t.size() && m.t[k + 1] <= v1_) continue;  // one step a pixel
    last_x = int(x);
    line.lineTo(x, line.currentPosition().y());
    line.lineTo(x, bottom - m.bytes[k] * scale);
    if (m.t[k] > v1_) break;
  }
  line.lineTo(width, line.currentPosition().y());
  p.setPen(QPen(palette().color(QPalette::Text), 1.2));
  p.setBrush(Qt::NoBrush);
  p.drawPath(line);
  const double px = t_to_x(m.peak_t), py = bottom - m.peak * scale;
  p.setBrush(QColor(0xe1, 0x57, 0x59));
  p.drawEllipse(QPointF(px, py), 3, 3);
  p.setPen(palette().color(QPalette::Text));
  const QString label = tr("peak %1 at %2").arg(bytes_text(m.peak), time_text(m.peak_t - model_->begin()));
  const int tw = QFontMetrics(font()).horizontalAdvance(label);
  const double lx = px + 6 + tw > width ? px - 6 - tw : px + 6;
  p.drawText(QPointF(lx, r.top + 11), label);
}

QString TimelineCanvas::span_text(int span) const {
  const TimelineSpan& sp = model_->spans()[span];
  const Session* s = selection_->session();
  const double t0 = model_->begin();
  QString at = tr("%1 → %2 (%3)").arg(time_text(sp.begin - t0), time_text(sp.end - t0), time_text(sp.end - sp.begin));
  switch (sp.kind) {
    case TimelineSpan::Kind::Schedule: return tr("<b>schedule</b> %1<br>%2").arg(s->contexts()[sp.index].plain_name.toHtmlEscaped(), at);
    case TimelineSpan::Kind::Codegen: return tr("<b>codegen</b> %1<br>%2").arg(s->contexts()[sp.index].plain_name.toHtmlEscaped(), at);
    case TimelineSpan::Kind::Compile: return tr("<b>compile</b> %1<br>%2").arg(s->contexts()[sp.index].plain_name.toHtmlEscaped(), at);
    case TimelineSpan::Kind::Graph: return tr("<b>graph %1</b>: %2 kernels<br>%3").arg(sp.graph).arg(sp.count).arg(at);
    case TimelineSpan::Kind::Kernel:
    case TimelineSpan::Kind::Copy: break;
  }
  const Call& c = s->calls()[sp.index];
  QString t = tr("<b>%1</b> on %2<br>call %3 (*** %4)%5<br>device: %6<br>launched by the host at %7")
                  .arg(c.display_name().toHtmlEscaped(), c.device.toHtmlEscaped())
                  .arg(sp.index)
                  .arg(c.counter)
                  .arg(c.graph > 0 ? tr(", in graph %1").arg(c.graph) : QString())
                  .arg(at, time_text(c.launched - t0));
  if (const QList<int> w = model_->writers_of(sp.index); !w.isEmpty()) {
    QStringList names;
    for (int k : w.mid(0, 6)) names << tr("call %1 (%2)").arg(k).arg(s->calls()[k].display_name().toHtmlEscaped());
    t += tr("<br>reads what %1%2 wrote").arg(names.join(QStringLiteral(", ")), w.size() > 6 ? tr(" and %1 more").arg(w.size() - 6) : QString());
  }
  if (c.estimates.ops > 0 && c.seconds > 0) t += tr("<br>%1 GFLOP/s").arg(c.estimates.ops / c.seconds / 1e9, 0, 'f', 2);
  if (c.estimates.mem > 0 && c.seconds > 0) t += tr(", %1 GB/s").arg(c.estimates.mem / c.seconds / 1e9, 0, 'f', 2);
  return t;
}

QString TimelineCanvas::memory_text(const Row& r, const QPoint& pos) const {
  const MemorySeries& m = model_->memory()[r.memory];
  const double t = x_to_t(pos.x());
  const double top = std::max(m.packed, m.peak);
  const double scale = (r.height - 14) / std::max(1.0, top);
  const qint64 offset = qint64((r.top + r.height - 1 - pos.y()) / scale);
  QString text = tr("<b>%1 memory</b> at %2: %3 allocated (peak %4)")
                     .arg(m.device.toHtmlEscaped(), time_text(t - model_->begin()), bytes_text(model_->bytes_at(r.memory, t)), bytes_text(m.peak));
  const int b = model_->band_at(r.memory, t, offset);
  if (b < 0) return text;
  const MemoryBand& band = m.bands[b];
  text += tr("<br>buffer %1: %2, allocated at %3, freed at %4").arg(band.buffer).arg(bytes_text(band.bytes), time_text(band.alloc - model_->begin()),
                                                                     time_text(band.free - model_->begin()));
  const auto& calls = selection_->session()->calls();
  auto call = [&calls](int k) {
    return k >= 0 && k < calls.size() ? tr("call %1 (%2)").arg(k).arg(calls[k].display_name().toHtmlEscaped()) : QString();
  };
  if (const QString c = call(band.alloc_call); !c.isEmpty()) text += tr("<br>allocated for %1").arg(c);
  if (const QString c = call(band.free_call - 1); !c.isEmpty()) text += tr("<br>freed after %1").arg(c);
  if (const Uop* u = selection_->session()->uop(int(band.buffer))) text += tr("<br>%1").arg(u->dtype.toHtmlEscaped());
  return text;
}

QString TimelineCanvas::tooltip_at(const QPoint& p) const {
  const int ri = row_at(p.y());
  if (ri < 0 || p.x() < kGutter || !model_->has_timestamps()) return {};
  const Row r = rows()[ri];
  if (r.memory >= 0) return memory_text(r, p);
  const int s = span_at(p);
  return s < 0 ? QString() : span_text(s);
}

bool TimelineCanvas::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    const QString t = tooltip_at(he->pos());
    if (t.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(he->globalPos(), t, this);
    return true;
  }
  return QWidget::event(e);
}

void TimelineCanvas::wheelEvent(QWheelEvent* e) {
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  const double at = x_to_t(e->position().x());
  const double f = std::pow(0.8, steps);  // forward: closer
  set_range(at - (at - v0_) * f, at + (v1_ - at) * f);
  e->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* e) {
  press_ = e->position().toPoint();
  press_v0_ = v0_;
  dragging_ = false;
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton)) return;
  const int dx = e->position().toPoint().x() - press_.x();
  if (!dragging_ && std::abs(dx) < 4) return;
  dragging_ = true;
  const double span = v1_ - v0_;
  const double v0 = press_v0_ - dx * span / std::max(1, width() - kGutter);
  set_range(v0, v0 + span);
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && !dragging_) click(e->position().toPoint());
  dragging_ = false;
}

void TimelineCanvas::mouseDoubleClickEvent(QMouseEvent*) { reset_view(); }

void TimelineCanvas::click(const QPoint& p) {
  const int s = span_at(p);
  if (s < 0) return;
  const TimelineSpan& sp = model_->spans()[s];
  switch (sp.kind) {
    case TimelineSpan::Kind::Kernel:
    case TimelineSpan::Kind::Copy:
    case TimelineSpan::Kind::Graph: selection_->select_call(sp.index); break;
    case TimelineSpan::Kind::Schedule:
    case TimelineSpan::Kind::Codegen:
    case TimelineSpan::Kind::Compile: selection_->select_context(sp.index); break;
  }
}

// the selected call outlined (else the selected context's span), brought into view when it is out of it
void TimelineCanvas::follow_selection() {
  const Selection& sel = selection_->current();
  int s = model_->span_of_call(sel.call);
  if (s < 0) s = model_->span_of_context(sel.context);
  highlight_ = s;
  if (s >= 0) {
    const TimelineSpan& sp = model_->spans()[s];
    if (sp.end < v0_ || sp.begin > v1_) {
      const double span = v1_ - v0_, mid = (sp.begin + sp.end) / 2;
      set_range(mid - span / 2, mid + span / 2);
    }
  }
  update();
}

}  // namespace tsv
