#include "viewer/panes/values_pane.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "viewer/model/output_compare.h"

namespace tsv {

namespace {
// C-contiguous strides, in elements
QList<qint64> strides_of(const QList<qint64>& shape) {
  QList<qint64> st(shape.size(), 1);
  for (qsizetype d = shape.size() - 2; d >= 0; --d) st[d] = st[d + 1] * std::max<qint64>(shape[d + 1], 1);
  return st;
}
QString num(double v) {
  if (std::isnan(v)) return QStringLiteral("nan");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
  return QString::number(v, 'g', 7);
}
QVector<double> as_doubles(const Output& o) {
  if (o.is_float()) return o.f;
  QVector<double> v(o.i.size());
  for (qsizetype k = 0; k < o.i.size(); ++k) v[k] = double(o.i[k]);
  return v;
}
// the shape of the tensor a call's output buffer holds, from the tensor graph (the node its LINEAR item computes),
// when its elements are the buffer's; else the buffer's flat shape
QList<qint64> snapshot_shape(const Session& s, const Output& o) {
  const LinearItem* item = o.arg == 0 ? s.linear_item(o.call) : nullptr;
  const Uop* u = item ? s.uop(item->computes) : nullptr;
  if (!u || u->shape.isEmpty()) return o.shape;
  return element_count(u->shape) == o.count ? u->shape : o.shape;
}

}  // namespace

// ---- ValuesModel
void ValuesModel::set(const QList<qint64>& shape, const QVector<double>& values, bool integers) {
  beginResetModel();
  shape_ = shape;
  values_ = values;
  integers_ = integers;
  columns_ = shape.isEmpty() ? 1 : std::max<qint64>(shape.back(), 1);
  endResetModel();
}

int ValuesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(std::min<qint64>((values_.size() + columns_ - 1) / columns_, INT_MAX));
}
int ValuesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() || values_.isEmpty() ? 0 : int(std::min<qint64>(columns_, 100000)); }

double ValuesModel::value(int row, int column) const {
  const qint64 k = qint64(row) * columns_ + column;
  return k < values_.size() ? values_[k] : NAN;
}

QVariant ValuesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const qint64 k = qint64(index.row()) * columns_ + index.column();
  if (k >= values_.size()) return {};
  const double v = values_[k];
  if (role == Qt::DisplayRole) return integers_ && std::isfinite(v) ? QString::number(qint64(v)) : num(v);
  if (role == Qt::UserRole) return v;
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && !std::isfinite(v)) return QColor(0xc0392b);
  return {};
}

QVariant ValuesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (o == Qt::Horizontal) return section;
  // the leading axes' indices of this row
  if (shape_.size() <= 1) return section;
  QList<qint64> lead(shape_.begin(), shape_.end() - 1);
  const QString t = index_text(section, lead);
  return t.mid(1, t.size() - 2);
}

QColor heat_map_color(double v, double lo, double hi) {
  static const QColor low(0x2c, 0x7b, 0xb6), mid(0xf7, 0xf7, 0xf7), high(0xd7, 0x19, 0x1c);
  auto mix = [](const QColor& a, const QColor& b, double t) {
    return QColor(int(a.red() + (b.red() - a.red()) * t), int(a.green() + (b.green() - a.green()) * t), int(a.blue() + (b.blue() - a.blue()) * t));
  };
  if (std::isnan(v)) return QColor(0xff, 0x00, 0xff);
  if (std::isinf(v)) return v > 0 ? high : low;
  const double t = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.5;
  return t < 0.5 ? mix(low, mid, t * 2) : mix(mid, high, (t - 0.5) * 2);
}

QImage heat_map_image(const QVector<double>& values, qint64 rows, qint64 columns) {
  if (rows <= 0 || columns <= 0 || rows * columns > values.size() || rows > 4096 || columns > 4096) return {};
  double lo = INFINITY, hi = -INFINITY;
  for (qint64 k = 0; k < rows * columns; ++k)
    if (std::isfinite(values[k])) lo = std::min(lo, values[k]), hi = std::max(hi, values[k]);
  QImage img(int(columns), int(rows), QImage::Format_RGB32);
  for (qint64 r = 0; r < rows; ++r)
    for (qint64 c = 0; c < columns; ++c) img.setPixel(int(c), int(r), heat_map_color(values[r * columns + c], lo, hi).rgb());
  return img;
}

// ---- ValuesPane
ValuesPane::ValuesPane(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  entries_ = new QComboBox(this);
  entries_->setObjectName(QStringLiteral("values_entries"));
  entries_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  entries_->setMinimumContentsLength(24);
  difference_ = new QCheckBox(tr("Difference to the second device"), this);
  difference_->setEnabled(false);
  info_ = new QLabel(this);
  info_->setObjectName(QStringLiteral("values_info"));
  info_->setWordWrap(true);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  heat_label_ = new QLabel(this);
  heat_label_->setAlignment(Qt::AlignCenter);
  heat_label_->setMinimumWidth(10);
  model_ = new ValuesModel(this);
  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  table_->horizontalHeader()->setDefaultSectionSize(86);
  table_->verticalHeader()->setDefaultSectionSize(20);
  auto* top = new QHBoxLayout;
  top->addWidget(entries_, 1);
  top->addWidget(difference_);
  auto* body = new QHBoxLayout;
  body->addWidget(table_, 3);
  body->addWidget(heat_label_, 1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  lay->addLayout(top);
  lay->addWidget(info_);
  lay->addLayout(body, 1);
  connect(entries_, &QComboBox::currentIndexChanged, this, &ValuesPane::refresh);
  connect(difference_, &QCheckBox::toggled, this, &ValuesPane::refresh);
  connect(selection_->session(), &Session::loaded, this, &ValuesPane::reload);
  connect(selection_, &SelectionModel::changed, this, [this](const Selection& s) {
    if (s.call < 0) return;
    // what the selected call wrote, when the run kept its buffers; else the first value the script read after it
    if (const QList<int> mine = selection_->session()->snapshots_of(s.call); !mine.isEmpty())
      return show_entry(int(selection_->session()->outputs().size()) + mine.front());
    const auto& outs = selection_->session()->outputs();
    for (qsizetype k = 0; k < outs.size(); ++k)
      if (outs[k].after_call > s.call) return show_entry(int(k));
  });
  reload();
}

void ValuesPane::set_compare(Session* other, const QString& device) {
  if (other_) disconnect(other_, nullptr, this, nullptr);
  other_ = other;
  other_device_ = device;
  difference_->setText(device.isEmpty() ? tr("Difference to the second device") : tr("Difference to %1").arg(device));
  if (other_) connect(other_, &Session::loaded, this, &ValuesPane::refresh);
  refresh();
}

int ValuesPane::entries() const { return entries_->count(); }
int ValuesPane::current() const { return entries_->currentIndex(); }
void ValuesPane::show_entry(int i) { entries_->setCurrentIndex(i); }
void ValuesPane::set_difference(bool on) { difference_->setChecked(on); }
QString ValuesPane::summary() const { return info_->text(); }

void ValuesPane::reload() {
  const QSignalBlocker block(entries_);
  entries_->clear();
  const Session& s = *selection_->session();
  const auto& outs = s.outputs();
  for (qsizetype k = 0; k < outs.size(); ++k)
    entries_->addItem(tr("#%1 read at %2 · %3 %4").arg(k + 1).arg(outs[k].where.isEmpty() ? tr("(no script line)") : outs[k].where,
                                                             shape_text(outs[k].shape), outs[k].dtype));
  // every call's output buffers, when the run kept them, each with the shape of the tensor it holds
  shaped_.clear();
  for (const Output& o : s.snapshots()) {
    Output v = o;
    v.shape = snapshot_shape(s, o);
    const QString name = o.call < s.calls().size() ? s.calls()[o.call].display_name() : QString();
    entries_->addItem(tr("after call %1 %2 · buffer %3 · %4 %5").arg(o.call + 1).arg(name).arg(o.arg).arg(shape_text(v.shape), o.dtype));
    shaped_.push_back(std::move(v));
  }
  if (entries_->count()) entries_->setCurrentIndex(0);
  refresh();
}

const Output* ValuesPane::entry(const Session& s, int i, const Output* like) const {
  if (i < 0) return nullptr;
  if (&s == selection_->session()) {
    if (i < s.outputs().size()) return &s.outputs()[i];
    return i - s.outputs().size() < shaped_.size() ? &shaped_[i - s.outputs().size()] : nullptr;
  }
  // the other run: the same read (by position), or the same call's same buffer
  if (!like || like->call < 0) return i < s.outputs().size() ? &s.outputs()[i] : nullptr;
  for (int k : s.snapshots_of(like->call))
    if (s.snapshots()[k].arg == like->arg) return &s.snapshots()[k];
  return nullptr;
}

void ValuesPane::refresh() {
  const Session& mine = *selection_->session();
  const int i = entries_->currentIndex();
  heat_ = {};
  heat_label_->clear();
  const Output* op = entry(mine, i);
  if (!op) {
    model_->set({}, {}, false);
    difference_->setEnabled(false);
    info_->setText(entries_->count() == 0 ? tr("The script read no value back (tolist, numpy, item, print) in this run; "
                                               "Run > Record every call's buffers keeps what each call wrote")
                                          : QString());
    return;
  }
  const Output& o = *op;
  // a snapshot of the other run: flat as recorded, compared with this one's flat values (the same elements)
  Output their_copy;
  const Output* theirs = other_ ? entry(*other_, i, &o) : nullptr;
  if (theirs && o.call >= 0) {
    their_copy = *theirs;
    if (their_copy.count == o.count) their_copy.shape = o.shape;
    theirs = &their_copy;
  }
  const bool comparable = theirs && theirs->shape == o.shape && theirs->dtype == o.dtype;
  difference_->setEnabled(comparable);
  const bool diff = comparable && difference_->isChecked();
  QVector<double> values = as_doubles(o);
  QStringList lines;
  QStringList strides;
  for (qint64 s : strides_of(o.shape)) strides << QString::number(s);
  lines << tr("%1 %2 · strides (%3) · %4 elements%5 · %6")
               .arg(shape_text(o.shape), o.dtype, strides.join(QStringLiteral(", ")))
               .arg(o.count)
               .arg(o.stored() < o.count ? tr(" (the first %1 kept in the trace)").arg(o.stored()) : QString())
               .arg(o.call >= 0 ? tr("buffer %1 of call %2, right after it ran").arg(o.arg).arg(o.call + 1)
                                : tr("after call %1").arg(o.after_call));
  auto stats_line = [](const Output& x, const QString& what) {
    const OutputStats st = output_stats(x);
    return tr("%1: min %2 · max %3 · mean %4 · NaN %5 · inf %6").arg(what, num(st.min), num(st.max), num(st.mean)).arg(st.nan).arg(st.inf);
  };
  lines << stats_line(o, tr("values"));
  if (comparable) {
    const OutputDiff d = compare_outputs(o, *theirs);
    lines << (d.differing == 0 ? tr("equal to %1, element by element").arg(other_device_)
                               : tr("against %1: %2 of %3 differ · max abs %4%5 · first at %6")
                                     .arg(other_device_)
                                     .arg(d.differing)
                                     .arg(d.compared)
                                     .arg(num(d.max_abs))
                                     .arg(d.max_ulp >= 0 ? tr(" · max ULP %1").arg(num(d.max_ulp)) : QString())
                                     .arg(index_text(d.first, o.shape)));
    if (diff) {
      const QVector<double> other = as_doubles(*theirs);
      for (qsizetype k = 0; k < std::min(values.size(), other.size()); ++k) values[k] = values[k] - other[k];
      values.resize(std::min(values.size(), other.size()));
      lines << tr("showing the difference: %1 minus %2").arg(selection_->session()->device(), other_device_);
    }
  } else if (theirs) {
    lines << tr("%1 read %2 %3 here: not comparable").arg(other_device_, shape_text(theirs->shape), theirs->dtype);
  }
  info_->setText(lines.join(QLatin1Char('\n')));
  model_->set(o.shape, values, !o.is_float() && !diff);
  if (model_->columnCount() <= 64) table_->resizeColumnsToContents();
  // the first 2-D slice: the last two axes
  if (o.shape.size() >= 2) {
    const qint64 rows = o.shape[o.shape.size() - 2], cols = o.shape.back();
    heat_ = heat_map_image(values, rows, cols);
    if (!heat_.isNull()) {
      const int side = 220;
      heat_label_->setPixmap(QPixmap::fromImage(heat_.scaled(side, side, Qt::KeepAspectRatio, Qt::FastTransformation)));
      heat_label_->setToolTip(tr("Heat map of the first %1 x %2 slice: blue low, white middle, red high, magenta NaN").arg(rows).arg(cols));
    }
  }
}

}  // namespace tsv
