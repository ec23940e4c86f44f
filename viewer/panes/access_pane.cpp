#include "viewer/panes/access_pane.h"

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSet>
#include <QSlider>
#include <QSplitter>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>

#include "viewer/model/session.h"
#include "viewer/panes/values_pane.h"

namespace tsv {

AccessPane::AccessPane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  title_ = new QLabel(tr("Select a kernel to see what it reads and writes"), this);
  title_->setWordWrap(false);  // (one line, clipped: the height is for the grids; the tooltip holds it whole)
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  play_ = new QToolButton(this);
  play_->setText(tr("Play"));
  play_->setCheckable(true);
  play_->setToolTip(tr("Walk the innermost loop that is not a lane, one iteration at a time"));
  timer_ = new QTimer(this);
  timer_->setInterval(350);
  connect(timer_, &QTimer::timeout, this, &AccessPane::step);
  connect(play_, &QToolButton::toggled, this, [this](bool on) { on ? timer_->start() : timer_->stop(); });
  // Export: the frames of the loop Play walks, or of any loop the menu names (built when it opens: the loops change
  // with the kernel)
  export_ = new QToolButton(this);
  export_->setText(tr("Export"));
  export_->setToolTip(tr("Write the pane as Play steps it, a PNG per iteration, for slides"));
  export_->setPopupMode(QToolButton::MenuButtonPopup);
  auto* menu = new QMenu(export_);
  export_->setMenu(menu);
  connect(export_, &QToolButton::clicked, this, [this] { export_dialog(-1); });
  connect(menu, &QMenu::aboutToShow, this, [this, menu] {
    menu->clear();
    for (int d = 0; d < model_.ranges().size(); ++d) {
      const AccessModel::Range& r = model_.ranges()[d];
      QAction* a = menu->addAction(tr("PNG frames of r%1 %2 (%3)...").arg(r.id).arg(r.type.toLower()).arg(r.size), this, [this, d] { export_dialog(d); });
      a->setEnabled(r.size > 1 && !is_lane(d));  // (a lane's values are drawn at once: its frames would not differ)
    }
  });
  auto* top = header_ = new QHBoxLayout;
  top->addWidget(title_, 1);
  top->addWidget(play_);
  top->addWidget(export_);
  sliders_ = new QWidget(this);
  slider_lay_ = new QGridLayout(sliders_);
  slider_lay_->setContentsMargins(0, 0, 0, 0);
  slider_lay_->setHorizontalSpacing(12);
  slider_lay_->setVerticalSpacing(0);
  auto* lay = body_ = new QVBoxLayout(this);
  lay->setContentsMargins(4, 2, 4, 2);
  lay->addLayout(top);
  lay->addWidget(sliders_);
  lay->addStretch(1);
  connect(selection_, &SelectionModel::changed, this, &AccessPane::on_selection);
  if (selection_->current().call >= 0 || selection_->current().context >= 0) on_selection(selection_->current());
}

QString AccessPane::title() const { return title_->text(); }

void AccessPane::set_title(const QString& text) {
  title_->setText(text);
  title_->setToolTip(text);
}

void AccessPane::set_label(const QString& label) {
  label_ = label;
  if (!kernel_title_.isEmpty()) set_title(label_.isEmpty() ? kernel_title_ : QStringLiteral("%1 · %2").arg(label_, kernel_title_));
}

void AccessPane::set_focus(int slot, qint64 element) {
  if (slot == focus_slot_ && element == focus_element_) return;
  focus_slot_ = slot, focus_element_ = element;
  update();
}

QPair<int, qint64> AccessPane::written() const {
  if (point_.size() != model_.ranges().size() || point_.isEmpty()) return {-1, -1};
  const QList<qint64> e = model_.at(point_);
  for (int k = 0; k < model_.accesses().size(); ++k)
    if (model_.accesses()[k].write && model_.accesses()[k].slot >= 0 && e[k] >= 0) return {model_.accesses()[k].slot, e[k]};
  return {-1, -1};
}

void AccessPane::add_to_header(QWidget* w) { header_->insertWidget(1, w); }

void AccessPane::on_selection(const Selection& s) {
  const Session& ses = *selection_->session();
  int ctx = s.context, call = s.call;
  if (call >= 0 && call < ses.calls().size()) ctx = ses.kernel_context(ses.calls()[call]);
  else call = -1;
  QString err;
  if (ctx < 0 || !model_.load(ses, ctx, call, &err)) {
    kernel_title_.clear();
    set_title(ctx < 0 ? tr("Select a kernel to see what it reads and writes") : err);
    model_ = AccessModel();
    grids_.clear();
    setToolTip(QString());
    point_.clear();
    rebuild_sliders();
    update();
    emit loaded();
    return;
  }
  kernel_title_ = tr("%1: what one point of its loops reads and writes").arg(ses.contexts()[ctx].plain_name);
  set_label(label_);
  // (a kernel context without a call: its first call's buffers)
  if (call < 0 && ses.contexts()[ctx].has_program)
    if (const QList<int> cs = ses.calls_of_context(ctx); !cs.isEmpty()) call = cs.front();
  build_grids(call);
  // how each grid is laid out and what its colours are, said once
  QStringList tips;
  for (const Grid& gr : grids_) {
    QStringList dims;
    for (qint64 d : gr.shape) dims << QString::number(d);
    const QString shape = dims.join(QLatin1Char('x'));
    QString t = tr("buf%1: %2 elements row by row (no tensor shape in the trace)").arg(gr.slot).arg(gr.size);
    if (gr.slices == 1 && !gr.shape.isEmpty()) t = tr("buf%1: a %2 tensor, rows down and its last axis across").arg(gr.slot).arg(shape);
    else if (!gr.shape.isEmpty())
      t = tr("buf%1: a %2 tensor, %3 slices of its last two axes (%4 rows, %5 across) side by side in index order")
              .arg(gr.slot)
              .arg(shape)
              .arg(gr.slices)
              .arg(gr.rows)
              .arg(gr.cols);
    if (!gr.values.isEmpty()) t += tr("; base colour its values %1 (faint heat map: blue %2, white middle, red %3)").arg(gr.values_from).arg(gr.lo).arg(gr.hi);
    tips << t;
  }
  setToolTip(tips.join(QLatin1Char('\n')));
  point_ = QList<qint64>(model_.ranges().size(), 0);
  rebuild_sliders();
  update();
  emit loaded();
}

namespace {
// a call's LINEAR item: the BUFFER uops it passes, in argument order (empty where the trace does not tell)
QList<int> bufs_of(const Session& s, int call) {
  const LinearItem* it = s.linear_item(call);
  return it ? it->bufs : QList<int>{};
}
// the shape of the tensor BUFFER uop `buf` (`size` elements) holds: the node its call computes (its first buffer), else
// the first view (a RESHAPE) of the buffer, or of the node a call computed into it (a copy's COPY), among the call's
// tensor nodes, then in the whole trace
QList<qint64> tensor_shape(const Session& s, int call, int buf, qint64 size, bool written) {
  if (call < 0) return {};
  const LinearItem* it = s.linear_item(call);
  if (written && it && !it->bufs.isEmpty() && it->bufs.front() == buf)
    if (const Uop* u = s.uop(it->computes); u && u->shape.size() >= 2 && element_count(u->shape) == size) return u->shape;
  QSet<int> names{buf};  // the uops that stand for the buffer's value
  for (const Context& c : s.contexts())
    for (const LinearItem& li : c.linear)
      if (!li.bufs.isEmpty() && li.bufs.front() == buf && li.computes >= 0) names.insert(li.computes);
  auto view = [&](int id) -> QList<qint64> {
    const Uop* u = s.uop(id);
    if (!u || u->op != QStringLiteral("RESHAPE") || u->src.isEmpty() || !names.contains(u->src.front()) || element_count(u->shape) != size) return {};
    return u->shape;
  };
  if (it)
    for (int m : it->members)
      if (QList<qint64> sh = view(m); !sh.isEmpty()) return sh;
  QList<int> ids = s.uops().keys();
  std::sort(ids.begin(), ids.end());
  for (int id : ids)
    if (QList<qint64> sh = view(id); !sh.isEmpty()) return sh;
  return {};
}
}  // namespace

void AccessPane::build_grids(int call) {
  grids_.clear();
  const Session& s = *selection_->session();
  const QList<int> bufs = bufs_of(s, call);
  QList<int> buf_slots;
  for (const auto& a : model_.accesses())
    if (!buf_slots.contains(a.slot)) buf_slots << a.slot;
  std::sort(buf_slots.begin(), buf_slots.end());
  for (int slot : buf_slots) {
    Grid g;
    g.slot = slot;
    bool written = false;
    for (const auto& a : model_.accesses())
      if (a.slot == slot) g.size = std::max(g.size, a.size), written |= a.write;
    const int buf = slot >= 0 && slot < bufs.size() ? bufs[slot] : -1;
    // the shape: its axes of 1 dropped (a batch of one, a keepdim axis); two axes or more laid out as a grid
    if (buf >= 0) {
      for (qint64 d : tensor_shape(s, call, buf, g.size, written))
        if (d != 1) g.shape << d;
      if (g.shape.size() >= 2) {
        g.cols = g.shape.back();
        g.rows = g.shape[g.shape.size() - 2];
        g.slices = g.size / (g.rows * g.cols);
      } else {
        g.shape.clear();
      }
    }
    // the values: what this call wrote into it, else the last snapshot of it before this call
    if (buf >= 0) {
      const Output* o = nullptr;
      for (int c = call; c >= 0 && !o; --c) {
        if (c < call && !s.calls()[c].writes.isEmpty() && !s.calls()[c].writes.contains(buf)) continue;
        const QList<int> snaps = s.snapshots_of(c);
        if (snaps.isEmpty()) continue;
        const QList<int> cb = c == call ? bufs : bufs_of(s, c);
        for (int k : snaps)
          if (const Output& x = s.snapshots()[k]; x.arg >= 0 && x.arg < cb.size() && cb[x.arg] == buf && x.count == g.size && x.stored() > 0) {
            o = &x;
            g.values_from = c == call ? tr("after this call") : tr("after call %1 (%2)").arg(c + 1).arg(s.calls()[c].display_name());
          }
      }
      if (o) {
        g.values.resize(o->stored());
        g.lo = INFINITY, g.hi = -INFINITY;
        for (qint64 k = 0; k < o->stored(); ++k) {
          g.values[k] = o->value(k);
          if (std::isfinite(g.values[k])) g.lo = std::min(g.lo, g.values[k]), g.hi = std::max(g.hi, g.values[k]);
        }
      }
    }
    grids_ << g;
  }
}

const AccessPane::Grid* AccessPane::grid(int slot) const {
  for (const Grid& g : grids_)
    if (g.slot == slot) return &g;
  return nullptr;
}

QColor AccessPane::faint(const QColor& c) {
  // 45% of the heat map's colour over the plain cell's (0xf4 grey): the read and write marks stay the strongest
  auto f = [](int v) { return int(std::lround(0xf4 + (v - 0xf4) * 0.45)); };
  return QColor(f(c.red()), f(c.green()), f(c.blue()));
}

QColor AccessPane::base_color(int slot, qint64 element) const {
  const Grid* g = grid(slot);
  if (!g || element < 0 || element >= g->values.size()) return QColor(0xf4, 0xf4, 0xf4);
  return faint(heat_map_color(g->values[element], g->lo, g->hi));
}

void AccessPane::rebuild_sliders() {
  qDeleteAll(sliders_->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  slider_list_.clear(), slider_rows_.clear(), value_list_.clear();
  lanes_label_ = nullptr;
  slider_cols_ = 0;
  reduce_key_.clear();
  group_key_ = {-1};  // (no thread or work-group has it: computed afresh)
  // each slider's name and value ("r0 reduce 3/64") as wide as this kernel's longest, the slider the rest (at least
  // 40 pixels)
  const QFontMetrics fm = fontMetrics();
  int name_w = 0;
  for (const AccessModel::Range& r : model_.ranges())
    name_w = std::max(name_w, fm.horizontalAdvance(QStringLiteral("r%1 %2 %3/%3").arg(r.id).arg(r.type.toLower()).arg(r.size)) + 6);
  slider_row_w_ = name_w + 40 + 20;  // (and the spacing)
  // the lanes (UPCAST, UNROLL) have no slider: every value of theirs is drawn at once; one line names them
  QStringList lanes;
  for (int i = 0; i < model_.ranges().size(); ++i) {
    const AccessModel::Range& r = model_.ranges()[i];
    if (is_lane(i)) {
      lanes << QStringLiteral("r%1 %2 %3").arg(r.id).arg(r.type.toLower()).arg(r.size);
      slider_list_ << nullptr;
      value_list_ << nullptr;
      continue;
    }
    auto* row = new QWidget(sliders_);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    const QString name = QStringLiteral("r%1 %2").arg(r.id).arg(r.type.toLower());
    auto* value = new QLabel(QStringLiteral("%1 0/%2").arg(name).arg(r.size), row);
    value->setFixedWidth(name_w);
    auto* s = new QSlider(Qt::Horizontal, row);
    s->setRange(0, int(std::max<qint64>(r.size - 1, 0)));
    s->setMinimumWidth(40);
    connect(s, &QSlider::valueChanged, this, [this, i, value, name, n = r.size](int v) {
      value->setText(QStringLiteral("%1 %2/%3").arg(name).arg(v).arg(n));
      if (i < point_.size() && point_[i] != v) {
        point_[i] = v;
        update();
        emit point_changed();
      }
    });
    h->addWidget(value);
    h->addWidget(s, 1);
    slider_rows_ << row;
    slider_list_ << s;
    value_list_ << value;
  }
  if (!lanes.isEmpty()) {
    lanes_label_ = new QLabel(tr("lanes, all drawn at once: %1").arg(lanes.join(QStringLiteral(" · "))), sliders_);
    lanes_label_->setToolTip(tr("UPCAST and UNROLL loops, the values one thread computes together: %1").arg(lanes.join(QStringLiteral(" · "))));
    lanes_label_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    lanes_label_->setWordWrap(side_sliders_);
  }
  place_sliders();
}

// as many columns of slider rows as fit, filled down first, the lanes' line under them; where that leaves the grids
// too little height and the pane is wide, one column on the left, the grids beside it
void AccessPane::place_sliders() {
  const int n = int(slider_rows_.size());
  int cols = std::clamp(width() / std::max(1, slider_row_w_), 1, std::max(1, n));
  const int row_h = fontMetrics().height() + 2, header_h = title_->sizeHint().height() + 8;
  const int rows = (n + cols - 1) / cols + (lanes_label_ ? 1 : 0);
  const bool side = height() - header_h - rows * row_h < 100 && width() >= slider_row_w_ + 160;
  if (side) cols = 1;
  if (side != side_sliders_) {
    side_sliders_ = side;
    if (side) sliders_->setFixedWidth(slider_row_w_);
    else sliders_->setMinimumWidth(0), sliders_->setMaximumWidth(QWIDGETSIZE_MAX);
    if (lanes_label_) lanes_label_->setWordWrap(side);
    body_->setAlignment(sliders_, side ? Qt::AlignLeft : Qt::Alignment());
    slider_cols_ = 0;  // (placed again)
  } else if (side) {
    sliders_->setFixedWidth(slider_row_w_);
  }
  // (a wrapped line's height: the grid layout asks for one line's)
  if (lanes_label_) lanes_label_->setMinimumHeight(side ? lanes_label_->heightForWidth(slider_row_w_) : 0);
  if (cols == slider_cols_) return;
  const int before = slider_cols_;
  slider_cols_ = cols;
  const int per_col = (n + cols - 1) / cols;
  for (QWidget* row : slider_rows_) slider_lay_->removeWidget(row);
  for (int i = 0; i < n; ++i) slider_lay_->addWidget(slider_rows_[i], i % per_col, i / per_col);
  if (lanes_label_) slider_lay_->removeWidget(lanes_label_), slider_lay_->addWidget(lanes_label_, per_col, 0, 1, cols);
  for (int c = 0; c < std::max(before, cols); ++c) slider_lay_->setColumnStretch(c, c < cols ? 1 : 0);
}

void AccessPane::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  place_sliders();
}

bool AccessPane::is_lane(int d) const {
  const QString& t = model_.ranges()[d].type;
  return t == QStringLiteral("UPCAST") || t == QStringLiteral("UNROLL");
}

void AccessPane::set_point(const QList<qint64>& p) {
  if (p.size() != point_.size()) return;
  point_ = p;
  for (int i = 0; i < slider_list_.size(); ++i) {
    if (!slider_list_[i]) continue;  // (a lane)
    const QSignalBlocker b(slider_list_[i]);
    slider_list_[i]->setValue(int(p[i]));
    const AccessModel::Range& r = model_.ranges()[i];
    value_list_[i]->setText(QStringLiteral("r%1 %2 %3/%4").arg(r.id).arg(r.type.toLower()).arg(p[i]).arg(r.size));
  }
  update();
  emit point_changed();
}

void AccessPane::step() {
  if (point_.isEmpty()) return;
  QList<qint64> p = point_;
  for (int d = int(p.size()) - 1; d >= 0; --d) {
    if (is_lane(d)) continue;
    if (++p[d] < model_.ranges()[d].size) break;
    p[d] = 0;
  }
  set_point(p);
}

int AccessPane::play_loop() const {
  for (int d = int(model_.ranges().size()) - 1; d >= 0; --d)
    if (!is_lane(d) && model_.ranges()[d].size > 1) return d;
  return -1;
}

bool AccessPane::export_frames(const QString& dir, int loop, QString* message, int limit, QSize size) {
  if (loop < 0) loop = play_loop();
  if (point_.isEmpty() || loop < 0 || loop >= model_.ranges().size()) {
    *message = point_.isEmpty() ? tr("no kernel selected") : tr("no loop of more than one value to walk");
    return false;
  }
  if (!QDir().mkpath(dir)) {
    *message = tr("cannot make the folder %1").arg(dir);
    return false;
  }
  const AccessModel::Range& r = model_.ranges()[loop];
  const qint64 n = std::min<qint64>(r.size, limit);
  const int digits = std::max(3, int(QString::number(n - 1).size()));
  // the copy: this kernel and point, its own sliders at the frames' size
  AccessPane copy(selection_);
  copy.setPalette(palette());
  copy.setFont(font());
  copy.model_ = model_;
  copy.grids_ = grids_;
  copy.point_ = point_;
  copy.title_->setText(title_->text());
  copy.resize(size);
  copy.rebuild_sliders();
  copy.set_point(point_);
  if (copy.layout()) copy.layout()->activate();
  QList<qint64> p = point_;
  for (qint64 v = 0; v < n; ++v) {
    p[loop] = v;
    copy.set_point(p);
    const QString file = QDir(dir).filePath(QStringLiteral("access_%1.png").arg(v, digits, 10, QLatin1Char('0')));
    if (!copy.grab().save(file)) {
      *message = tr("cannot write %1").arg(file);
      return false;
    }
  }
  *message = tr("%n frame(s) of r%1 %2 written to %3", nullptr, int(n)).arg(r.id).arg(r.type.toLower(), dir);
  if (n < r.size) *message += tr(" (it has %1 values: only the first %2, the most one export writes)").arg(r.size).arg(limit);
  return true;
}

void AccessPane::export_dialog(int loop) {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export the frames into"));
  if (dir.isEmpty()) return;
  QString message;
  const bool ok = export_frames(dir, loop, &message);
  if (ok) QMessageBox::information(this, tr("Export"), message);
  else QMessageBox::warning(this, tr("Export"), message);
}

AccessPane::Lanes AccessPane::lanes() const {
  Lanes out;
  const auto& ranges = model_.ranges();
  if (point_.size() != ranges.size()) return out;
  std::function<void(int, QList<qint64>&)> walk = [&](int d, QList<qint64>& p) {
    if (d == ranges.size()) {
      QList<bool> on;
      const QList<qint64> e = model_.ungated_at(p, &on);
      for (int k = 0; k < model_.accesses().size(); ++k) {
        const auto& a = model_.accesses()[k];
        if (!on[k]) {
          ++out.gated[a.slot];
          if (e[k] >= 0 && e[k] < a.size) out.padded[a.slot].insert(e[k]);
        } else {
          (a.write ? out.writes : out.reads)[a.slot].insert(e[k]);
        }
      }
      return;
    }
    if (is_lane(d)) {
      const qint64 keep = p[d];
      for (qint64 v = 0; v < ranges[d].size; ++v) p[d] = v, walk(d + 1, p);
      p[d] = keep;
    } else {
      walk(d + 1, p);
    }
  };
  QList<qint64> p = point_;
  walk(0, p);
  return out;
}

namespace {
const QColor kIdle(0xf4, 0xf4, 0xf4), kReduce(0xc6, 0xdb, 0xef), kRead(0x21, 0x66, 0xac), kWrite(0xd6, 0x27, 0x28), kPad(0x6a, 0x3d, 0x9a),
             kGroup(0xe6, 0x55, 0x0d);

// a legend entry at (*x, *y), on the next line from `left` where it would pass `right`: a swatch (hatched for the
// padding, an outline for the thread's writes, dotted for the reduce over values, the faint heat map's low, middle and
// high for the values) and its words; *x moves past it
enum class Swatch { Fill, Hatch, Outline, Dots, Heat };
void legend(QPainter& g, int left, int right, int* x, int* y, const QColor& c, const QString& text, Swatch kind, const QColor& ink) {
  const int w = 14 + g.fontMetrics().horizontalAdvance(text);
  if (*x > left && *x + w > right) *x = left, *y += g.fontMetrics().height();
  const QRect sw(*x, *y - 9, 10, 10);
  if (kind == Swatch::Hatch) g.fillRect(sw, kIdle), g.fillRect(sw, QBrush(kPad, Qt::BDiagPattern));
  else if (kind == Swatch::Outline) g.setPen(QPen(c, 2)), g.setBrush(Qt::NoBrush), g.drawRect(sw.adjusted(1, 1, -1, -1));
  else if (kind == Swatch::Dots) g.fillRect(sw, AccessPane::faint(heat_map_color(0.5, 0, 1))), g.fillRect(sw, QBrush(c, Qt::Dense5Pattern));
  else if (kind == Swatch::Heat)
    for (int k = 0; k < 3; ++k) g.fillRect(QRect(sw.x(), sw.y() + k * 10 / 3, 10, k == 2 ? 4 : 3), AccessPane::faint(heat_map_color(2 - k, 0, 2)));
  else g.fillRect(sw, c);
  g.setPen(ink);
  g.drawText(*x + 14, *y, text);
  *x += w + 12;
}
}  // namespace

void AccessPane::paintEvent(QPaintEvent*) {
  if (point_.isEmpty()) return;
  QPainter g(this);
  g.setRenderHint(QPainter::Antialiasing, false);
  // this point with every lane (UPCAST, UNROLL values) at once, and the reduce of the outputs it writes (cached: the
  // whole nest is walked for it)
  const auto& ranges = model_.ranges();
  const Lanes now = lanes();
  QList<qint64> key;
  for (int d = 0; d < ranges.size(); ++d) key << (ranges[d].type == QStringLiteral("REDUCE") || is_lane(d) ? -1 : point_[d]);
  if (key != reduce_key_) {
    QHash<int, qint64> fixed;
    for (int d = 0; d < ranges.size(); ++d)
      if (key[d] >= 0) fixed[d] = key[d];
    reduce_cache_.clear();
    for (auto [slot, els] : model_.footprint(fixed).asKeyValueRange())
      if (slot >= 0) reduce_cache_[slot] = els;
    reduce_key_ = key;
  }
  // what the point's thread or work-group writes (cached by its ranges' values)
  QList<qint64> gkey;
  for (int d : model_.group_ranges()) gkey << point_[d];
  if (gkey != group_key_) {
    group_cache_ = model_.group_writes(point_);
    group_key_ = gkey;
  }
  const QString kind = model_.group_kind();
  const QColor ink = palette().color(QPalette::Text);
  const int fh = g.fontMetrics().height();
  // the canvas: below the sliders, or right of them where they stand in a column (a short, wide pane)
  const QRect sl = sliders_->geometry();
  const QRect canvas = side_sliders_ ? QRect(QPoint(sl.right() + 8, sl.top()), QPoint(width() - 1, height() - 1))
                                     : QRect(QPoint(0, sl.bottom() + 4), QPoint(width() - 1, height() - 1));
  // the legend, in short words where the long ones take more than a line
  const int left = canvas.left() + 8, right = canvas.right() - 4;
  QString id;
  for (int d : model_.group_ranges()) id += QStringLiteral("%1%2").arg(id.isEmpty() ? "" : ",").arg(point_[d]);
  if (id.isEmpty()) id = QStringLiteral("0");  // (the only one)
  // with recorded values the cells' base is their heat map, the reduce dotted over it
  const bool values = std::any_of(grids_.begin(), grids_.end(), [](const Grid& gr) { return !gr.values.isEmpty(); });
  const QStringList long_words = {tr("read"), tr("written"), tr("the output's whole reduce"), tr("padding (gate off)"),
                                  kind == QStringLiteral("thread") ? tr("thread %1's writes").arg(id) : tr("work-group (%1)'s writes").arg(id),
                                  tr("base: the values' heat map (low, high)")};
  const QStringList short_words = {tr("read"), tr("written"), tr("reduce"), tr("padding"),
                                   kind == QStringLiteral("thread") ? tr("thread %1").arg(id) : tr("group %1").arg(id), tr("values")};
  int long_w = 0;
  for (int i = 0; i < 6; ++i)
    if ((i != 4 || !kind.isEmpty()) && (i != 5 || values)) long_w += 26 + g.fontMetrics().horizontalAdvance(long_words[i]);
  const QStringList& words = long_w <= right - left ? long_words : short_words;
  int y = canvas.top() + fh, x = left;
  legend(g, left, right, &x, &y, kRead, words[0], Swatch::Fill, ink);
  legend(g, left, right, &x, &y, kWrite, words[1], Swatch::Fill, ink);
  legend(g, left, right, &x, &y, values ? kRead : kReduce, words[2], values ? Swatch::Dots : Swatch::Fill, ink);
  legend(g, left, right, &x, &y, kPad, words[3], Swatch::Hatch, ink);
  if (!kind.isEmpty()) legend(g, left, right, &x, &y, kGroup, words[4], Swatch::Outline, ink);
  if (values) legend(g, left, right, &x, &y, kIdle, words[5], Swatch::Heat, ink);
  // the buffers, side by side, one cell size for all: the largest whose grids fit the width and the height below.
  // A buffer whose tensor's shape is known is laid out in it: its last two axes a 2-D slice (rows down, the last axis
  // across), one slice per index of the axes before them, the slices side by side (wrapping to another band of them
  // where the height has room) with a gap between; the others row-major at a width that fits
  const int top = y + 6, margin = 10, label_w = g.fontMetrics().horizontalAdvance(QStringLiteral("buf0 (0000)"));
  const int avail_h = canvas.bottom() - top - 2 * fh - 6;  // (the name above, the padding line below)
  if (grids_.isEmpty() || avail_h <= 8) return;
  const double min_cell = 0.25;  // (below a pixel an element shares its pixel with its neighbours: the pattern still shows)
  const double sgap = 4;         // between slices
  QList<bool> shaped;
  for (const Grid& gr : grids_) shaped << (gr.cols > 0 && gr.rows * min_cell <= avail_h);
  // a grid at a cell size: a slice's rows and columns, the slices, how many side by side
  struct Place {
    qint64 rows = 1, cols = 1, slices = 1, across = 1;
    double cell = 1, gap = 0;
    qint64 bands() const { return (slices + across - 1) / across; }
    double width() const { return across * cols * cell + (across - 1) * gap; }
    double height() const { return bands() * rows * cell + (bands() - 1) * gap; }
  };
  auto place_at = [&](int k, double cell) {
    const Grid& gr = grids_[k];
    Place pl;
    pl.cell = cell;
    if (shaped[k]) {
      pl.rows = gr.rows, pl.cols = gr.cols, pl.slices = std::max<qint64>(1, gr.size / (gr.rows * gr.cols)), pl.gap = sgap;
      const qint64 bands = std::max<qint64>(1, qint64((avail_h + sgap) / (gr.rows * cell + sgap)));
      pl.across = (pl.slices + bands - 1) / bands;
      return pl;
    }
    // its size over the rows that fit, or the next divisor of its size up to twice that (a full rectangle: a row of a
    // matrix stays in one grid row, its patterns line up)
    const qint64 rows = std::max<qint64>(1, qint64(avail_h / cell));
    const qint64 least = std::max<qint64>(1, (gr.size + rows - 1) / rows);
    pl.cols = least;
    for (qint64 d = least; d <= 2 * least && d <= gr.size; ++d)
      if (gr.size % d == 0) {
        pl.cols = d;
        break;
      }
    pl.rows = (gr.size + pl.cols - 1) / pl.cols;
    return pl;
  };
  auto fits_at = [&](double cell) {
    double w = margin;
    for (int k = 0; k < grids_.size(); ++k) {
      const Place pl = place_at(k, cell);
      w += std::max<double>(label_w, pl.width()) + margin;
      if (pl.height() > avail_h + 0.01) return false;
    }
    return w <= canvas.width();
  };
  double cell = min_cell;
  for (double c = std::min(48.0, double(avail_h)); c >= min_cell; c -= c > 8 ? 1 : c > 1 ? 0.5 : 0.25)
    if (fits_at(c)) {
      cell = c;
      break;
    }
  x = canvas.left() + margin;
  QStringList padding;
  for (int k = 0; k < grids_.size(); ++k) {
    const Grid& gr = grids_[k];
    const int slot = gr.slot;
    const qint64 size = gr.size;
    const Place pl = place_at(k, cell);
    const qint64 rows = pl.rows, cols = pl.cols;
    const int w = int(std::max<double>(label_w, pl.width()));
    const double gap = cell > 4 ? 1 : 0;
    g.setPen(ink);
    const QString name = slot >= 0 ? QStringLiteral("buf%1").arg(slot) : tr("local");
    // a gated-off read reads nothing: its buffer's name in the padding's colour with the count (and the line under
    // the grids), hatched where its index points inside the buffer
    QStringList dims;
    for (qint64 d : gr.shape) dims << QString::number(d);
    QString label = QStringLiteral("%1 (%2)").arg(name, shaped[k] ? dims.join(QLatin1Char('x')) : QString::number(size));
    if (const int n = now.gated.value(slot)) {
      label += tr(" · %1 padded").arg(n);
      g.setPen(kPad);
      padding << tr("%1: %n lane(s) read nothing", nullptr, n).arg(name);
    }
    g.drawText(QRect(x, top, w, fh), Qt::AlignLeft | Qt::AlignVCenter, g.fontMetrics().elidedText(label, Qt::ElideRight, w));
    const int gy = top + fh + 2;
    // an element's slice, and its row and column in it; a cell's top left
    const qint64 per_slice = rows * cols;
    auto cell_at = [&](qint64 i) {
      const qint64 sl = i / per_slice, r = i % per_slice / cols, c = i % cols;
      return QPointF(x + (sl % pl.across) * (cols * cell + pl.gap) + c * cell, gy + (sl / pl.across) * (rows * cell + pl.gap) + r * cell);
    };
    auto rect = [&](qint64 i) { return QRectF(cell_at(i), QSizeF(std::max(1.0, cell - gap), std::max(1.0, cell - gap))); };
    const QSet<qint64>& reduce = reduce_cache_.value(slot);
    for (qint64 i = 0; i < size; ++i) {
      const bool over = !gr.values.isEmpty();  // (the reduce dotted over the values' colour)
      QColor c = over ? base_color(slot, i) : kIdle;
      if (!over && reduce.contains(i)) c = kReduce;
      if (now.reads.value(slot).contains(i)) c = kRead;
      if (now.writes.value(slot).contains(i)) c = kWrite;
      g.fillRect(rect(i), c);
      if (over && c != kRead && c != kWrite && reduce.contains(i)) g.fillRect(rect(i), QBrush(kRead, Qt::Dense6Pattern));
    }
    for (qint64 i : now.padded.value(slot)) g.fillRect(rect(i), QBrush(kPad, cell >= 6 ? Qt::BDiagPattern : Qt::Dense4Pattern));
    // the thread's or work-group's writes outlined: each cell's sides that border a cell outside them (or its slice's
    // edge)
    if (const QSet<qint64> own = group_cache_.value(slot); !own.isEmpty()) {
      g.setPen(QPen(kGroup, cell >= 6 ? 2 : 1));
      for (qint64 i : own) {
        const qint64 r = i % per_slice / cols, c = i % cols;
        const QPointF p0 = cell_at(i);
        const double x0 = p0.x(), y0 = p0.y(), x1 = x0 + cell - gap, y1 = y0 + cell - gap;
        if (c == 0 || !own.contains(i - 1)) g.drawLine(QPointF(x0, y0), QPointF(x0, y1));
        if (c == cols - 1 || i + 1 >= size || !own.contains(i + 1)) g.drawLine(QPointF(x1, y0), QPointF(x1, y1));
        if (r == 0 || !own.contains(i - cols)) g.drawLine(QPointF(x0, y0), QPointF(x1, y0));
        if (r == rows - 1 || i + cols >= size || !own.contains(i + cols)) g.drawLine(QPointF(x0, y1), QPointF(x1, y1));
      }
    }
    // the output element both sides of a comparison show, framed
    if (slot == focus_slot_ && focus_element_ >= 0 && focus_element_ < size) {
      g.setPen(QPen(ink, 2));
      g.setBrush(Qt::NoBrush);
      g.drawRect(rect(focus_element_).adjusted(-1, -1, 1, 1));
    }
    x += w + margin;
  }
  if (!padding.isEmpty()) {
    g.setPen(kPad);
    g.drawText(QRect(canvas.left() + margin, canvas.bottom() - fh - 1, canvas.width() - 2 * margin, fh), Qt::AlignLeft | Qt::AlignVCenter,
               g.fontMetrics().elidedText(tr("Padding (a gate off at this point): %1").arg(padding.join(QStringLiteral("; "))), Qt::ElideRight, canvas.width() - 2 * margin));
  }
}

AccessPanes::AccessPanes(SelectionModel* selection, QWidget* parent) : QWidget(parent) {
  auto* lay = new QHBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setChildrenCollapsible(false);
  lay->addWidget(split);
  first_ = new AccessPane(selection, split);
  split->addWidget(first_);
  beside_ = new QCheckBox(tr("Beside"), first_);
  beside_->setToolTip(tr("The paired kernel of the compared run beside this one, at the point that stores the same output element"));
  beside_->setChecked(true);
  beside_->hide();
  first_->add_to_header(beside_);
  connect(beside_, &QCheckBox::toggled, this, [this](bool on) {
    if (second_) second_->setVisible(on);
    sync();
  });
  connect(first_, &AccessPane::point_changed, this, &AccessPanes::sync);
  connect(first_, &AccessPane::loaded, this, &AccessPanes::sync);
}

bool AccessPanes::side_by_side() const { return second_ && second_->isVisibleTo(this); }

void AccessPanes::set_compare(SelectionModel* other, const QString& label_a, const QString& label_b) {
  if (other != other_) {
    delete second_;
    second_ = nullptr;
    other_ = other;
    if (other_) {
      second_ = new AccessPane(other_, findChild<QSplitter*>());
      findChild<QSplitter*>()->addWidget(second_);
      second_->setVisible(beside_->isChecked());
      connect(second_, &AccessPane::loaded, this, [this] {
        writers_slot_ = -2, writers_.clear();
        sync();
      });
    }
  }
  beside_->setVisible(other_ != nullptr);
  beside_->setText(other_ ? tr("Beside: %1").arg(label_b) : tr("Beside"));
  first_->set_label(other_ ? label_a : QString());
  if (second_) second_->set_label(label_b);
  sync();
}

void AccessPanes::sync() {
  if (!side_by_side()) {
    first_->set_focus(-1, -1);
    return;
  }
  const auto [slot, element] = first_->written();
  first_->set_focus(slot, element);
  if (slot < 0) return second_->set_focus(-1, -1);
  // the same buffer slot where the other kernel writes it, else its (first) written buffer
  int other_slot = -1;
  const AccessModel& m = second_->model();
  for (const auto& a : m.accesses())
    if (a.write && a.slot >= 0 && (other_slot < 0 || a.slot == slot)) other_slot = a.slot;
  if (other_slot != writers_slot_) {
    writers_slot_ = other_slot, writers_.clear();
    if (other_slot >= 0)
      m.for_each_point([&](const QList<qint64>& p) {
        const QList<qint64> e = m.at(p);
        for (int k = 0; k < m.accesses().size(); ++k)
          if (m.accesses()[k].write && m.accesses()[k].slot == other_slot && e[k] >= 0 && !writers_.contains(e[k])) writers_.insert(e[k], p);
      });
  }
  const QList<qint64> p = writers_.value(element);
  if (!p.isEmpty() && p != second_->point()) {
    const QSignalBlocker b(second_);
    second_->set_point(p);
  }
  second_->set_focus(other_slot, p.isEmpty() ? -1 : element);
}

}  // namespace tsv
