#include "viewer/panes/access_pane.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <functional>

#include "viewer/model/session.h"

namespace tsv {

AccessPane::AccessPane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  title_ = new QLabel(tr("Select a kernel to see what it reads and writes"), this);
  title_->setWordWrap(true);
  play_ = new QToolButton(this);
  play_->setText(tr("Play"));
  play_->setCheckable(true);
  play_->setToolTip(tr("Walk the innermost loop, one iteration at a time"));
  timer_ = new QTimer(this);
  timer_->setInterval(350);
  connect(timer_, &QTimer::timeout, this, &AccessPane::step);
  connect(play_, &QToolButton::toggled, this, [this](bool on) { on ? timer_->start() : timer_->stop(); });
  auto* top = new QHBoxLayout;
  top->addWidget(title_, 1);
  top->addWidget(play_);
  sliders_ = new QWidget(this);
  slider_lay_ = new QVBoxLayout(sliders_);
  slider_lay_->setContentsMargins(0, 0, 0, 0);
  slider_lay_->setSpacing(1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 2, 4, 2);
  lay->addLayout(top);
  lay->addWidget(sliders_);
  lay->addStretch(1);
  connect(selection_, &SelectionModel::changed, this, &AccessPane::on_selection);
}

QString AccessPane::title() const { return title_->text(); }

void AccessPane::on_selection(const Selection& s) {
  const Session& ses = *selection_->session();
  int ctx = s.context, call = s.call;
  if (call >= 0 && call < ses.calls().size()) ctx = ses.kernel_context(ses.calls()[call].program_key);
  else call = -1;
  QString err;
  if (ctx < 0 || !model_.load(ses, ctx, call, &err)) {
    title_->setText(ctx < 0 ? tr("Select a kernel to see what it reads and writes") : err);
    model_ = AccessModel();
    point_.clear();
    rebuild_sliders();
    update();
    return;
  }
  title_->setText(tr("%1: what each point of its loops reads (blue) and writes (red); light blue: the whole reduce of the output written")
                      .arg(ses.contexts()[ctx].plain_name));
  point_ = QList<qint64>(model_.ranges().size(), 0);
  rebuild_sliders();
  update();
}

void AccessPane::rebuild_sliders() {
  qDeleteAll(sliders_->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  slider_list_.clear();
  for (int i = 0; i < model_.ranges().size(); ++i) {
    const AccessModel::Range& r = model_.ranges()[i];
    auto* row = new QWidget(sliders_);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto* name = new QLabel(QStringLiteral("r%1 %2").arg(r.id).arg(r.type.toLower()), row);
    name->setMinimumWidth(110);
    auto* s = new QSlider(Qt::Horizontal, row);
    s->setRange(0, int(std::max<qint64>(r.size - 1, 0)));
    auto* value = new QLabel(QStringLiteral("0 / %1").arg(r.size), row);
    value->setMinimumWidth(70);
    connect(s, &QSlider::valueChanged, this, [this, i, value, n = r.size](int v) {
      value->setText(QStringLiteral("%1 / %2").arg(v).arg(n));
      if (i < point_.size() && point_[i] != v) {
        point_[i] = v;
        update();
      }
    });
    h->addWidget(name);
    h->addWidget(s, 1);
    h->addWidget(value);
    slider_lay_->addWidget(row);
    slider_list_ << s;
  }
}

void AccessPane::set_point(const QList<qint64>& p) {
  if (p.size() != point_.size()) return;
  point_ = p;
  for (int i = 0; i < slider_list_.size(); ++i) {
    const QSignalBlocker b(slider_list_[i]);
    slider_list_[i]->setValue(int(p[i]));
  }
  update();
}

void AccessPane::step() {
  if (point_.isEmpty()) return;
  QList<qint64> p = point_;
  for (int d = int(p.size()) - 1; d >= 0; --d) {
    if (++p[d] < model_.ranges()[d].size) break;
    p[d] = 0;
  }
  set_point(p);
}

void AccessPane::paintEvent(QPaintEvent*) {
  if (point_.isEmpty()) return;
  QPainter g(this);
  g.setRenderHint(QPainter::Antialiasing, false);
  // this point with every lane (UPCAST, UNROLL values) at once, and the reduce of the outputs it writes
  const auto& ranges = model_.ranges();
  QHash<int, QSet<qint64>> now, writes, reduce;
  QHash<int, bool> gated;
  std::function<void(int, QList<qint64>&)> lanes = [&](int d, QList<qint64>& p) {
    if (d == ranges.size()) {
      const QList<qint64> e = model_.at(p);
      for (int k = 0; k < model_.accesses().size(); ++k) {
        const auto& a = model_.accesses()[k];
        if (e[k] < 0) gated[a.slot] = true;
        else (a.write ? writes : now)[a.slot].insert(e[k]);
      }
      return;
    }
    if (ranges[d].type == QStringLiteral("UPCAST") || ranges[d].type == QStringLiteral("UNROLL")) {
      const qint64 keep = p[d];
      for (qint64 v = 0; v < ranges[d].size; ++v) p[d] = v, lanes(d + 1, p);
      p[d] = keep;
    } else {
      lanes(d + 1, p);
    }
  };
  QList<qint64> p = point_;
  lanes(0, p);
  QHash<int, qint64> fixed;
  for (int d = 0; d < ranges.size(); ++d)
    if (ranges[d].type != QStringLiteral("REDUCE") && ranges[d].type != QStringLiteral("UNROLL") && ranges[d].type != QStringLiteral("UPCAST"))
      fixed[d] = point_[d];
  for (auto [slot, els] : model_.footprint(fixed).asKeyValueRange())
    if (slot >= 0) reduce[slot] = els;
  // the buffers, side by side, each a grid of near-square shape
  QList<QPair<int, qint64>> bufs;  // slot, size
  for (const auto& a : model_.accesses())
    if (std::none_of(bufs.begin(), bufs.end(), [&](const auto& b) { return b.first == a.slot; })) bufs << qMakePair(a.slot, a.size);
  std::sort(bufs.begin(), bufs.end());
  const int top = sliders_->geometry().bottom() + 8, margin = 8;
  const int avail_w = width() - margin * (int(bufs.size()) + 1), avail_h = height() - top - 24;
  if (bufs.isEmpty() || avail_w <= 0 || avail_h <= 20) return;
  int x = margin;
  for (const auto& [slot, size] : bufs) {
    const int cols = int(std::max<qint64>(1, std::min<qint64>(size, qint64(std::ceil(std::sqrt(double(size)))))));
    const int rows = int((size + cols - 1) / cols);
    const int w = avail_w / int(bufs.size());
    const double cell = std::max(1.0, std::min(double(w) / cols, double(avail_h) / rows));
    g.setPen(palette().color(QPalette::Text));
    g.drawText(x, top + 12, QStringLiteral("buf%1 (%2)%3").arg(slot).arg(size).arg(gated.value(slot) ? tr(", a gated read") : QString()));
    for (qint64 i = 0; i < size; ++i) {
      QColor c(0xf4, 0xf4, 0xf4);
      if (reduce.value(slot).contains(i)) c = QColor(0xc6, 0xdb, 0xef);
      if (now.value(slot).contains(i)) c = QColor(0x21, 0x66, 0xac);
      if (writes.value(slot).contains(i)) c = QColor(0xd6, 0x27, 0x28);
      const QRectF r(x + (i % cols) * cell, top + 18 + (i / cols) * cell, std::max(1.0, cell - (cell > 4 ? 1 : 0)), std::max(1.0, cell - (cell > 4 ? 1 : 0)));
      g.fillRect(r, c);
    }
    x += w + margin;
  }
}

}  // namespace tsv
