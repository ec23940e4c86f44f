#include "viewer/model/timings_model.h"

#include <algorithm>

#include "viewer/model/ansi.h"
#include "viewer/model/session.h"

namespace tsv {

TimingsModel::TimingsModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  connect(session, &Session::loaded, this, [this] {
    beginResetModel();
    endResetModel();
  });
}

int TimingsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : session_->calls().size(); }
int TimingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

double TimingsModel::seconds(int row) const { return session_->calls().value(row).seconds; }
int TimingsModel::warm_runs(int row) const { return std::max<int>(0, session_->calls().value(row).times.size() - 1); }
bool TimingsModel::headline_is_warm(int row) const { return warm_runs(row) >= 1; }
double TimingsModel::headline(int row) const { return headline_of(session_->calls().value(row)); }
double TimingsModel::headline_of(const Call& c) {
  return c.times.size() < 2 ? c.seconds : warm_runs_of(c.times).median;
}
double TimingsModel::gflops(int row) const {
  const double t = headline(row);
  return t > 0 ? session_->calls().value(row).estimates.ops / t / 1e9 : 0.0;
}
double TimingsModel::gbs(int row) const {
  const double t = headline(row);
  return t > 0 ? session_->calls().value(row).estimates.mem / t / 1e9 : 0.0;
}
TimingsModel::Spread TimingsModel::spread(int row) const { return spread_of(session_->calls().value(row).times); }

TimingsModel::Spread TimingsModel::warm_runs_of(QList<double> t) {
  Spread s;
  if (t.size() < 2) return s;
  t.removeFirst();  // the first run pays one-off costs (caches, waking the threads): these are the warm runs
  std::sort(t.begin(), t.end());
  s.n = t.size();
  s.min = t.front();
  s.max = t.back();
  s.median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
  return s;
}
TimingsModel::Spread TimingsModel::spread_of(QList<double> t) { return t.size() < 3 ? Spread{} : warm_runs_of(std::move(t)); }
QString TimingsModel::spread_text(const Spread& s) {
  if (s.n < 2) return {};
  return tr("%1–%2 µs, median %3 (%4 warm runs)").arg(s.min * 1e6, 0, 'f', 2).arg(s.max * 1e6, 0, 'f', 2).arg(s.median * 1e6, 0, 'f', 2).arg(s.n);
}
bool TimingsModel::restored(int row) const { return session_->calls().value(row).repeat_mode == "restored"; }

QString TimingsModel::describe(int row) const {
  if (row < 0 || row >= session_->calls().size()) return {};
  const Call& c = session_->calls()[row];
  QStringList lines;
  lines << strip_ansi(c.colored_name).trimmed();
  const int warm = warm_runs(row);
  if (warm >= 1)
    lines << (warm == 1 ? tr("Time: %1 µs (the bar), the one warm run after the first").arg(headline(row) * 1e6, 0, 'f', 2)
                        : tr("Time: %1 µs (the bar), the median of the %2 warm runs after the first").arg(headline(row) * 1e6, 0, 'f', 2).arg(warm));
  else
    lines << tr("Time: %1 µs (the bar), its only run: Timing 1× gives no warm runs").arg(headline(row) * 1e6, 0, 'f', 2);
  QString first = tr("First run: %1 µs (the time DEBUG=2 prints; it pays one-off costs such as cold caches)").arg(c.seconds * 1e6, 0, 'f', 2);
  if (c.first_run && c.kind == "kernel") first += tr(", the first run of its program (*)");
  lines << first;
  lines << tr("GFLOP/s %1, GB/s %2: of the time").arg(gflops(row), 0, 'f', 3).arg(gbs(row), 0, 'f', 3);
  const Spread sp = spread(row);
  if (sp.n >= 2)
    lines << tr("Warm runs: the %1 after the first, %2–%3 µs (the whisker), median %4 µs (the tick); ±%5% is half "
                "their spread over the median")
                 .arg(sp.n)
                 .arg(sp.min * 1e6, 0, 'f', 2)
                 .arg(sp.max * 1e6, 0, 'f', 2)
                 .arg(sp.median * 1e6, 0, 'f', 2)
                 .arg(50.0 * (sp.max - sp.min) / sp.median, 0, 'f', 1);
  else if (c.times.size() == 2)
    lines << tr("Timed twice: one warm run, %1 µs (no spread)").arg(c.times[1] * 1e6, 0, 'f', 2);
  else
    lines << tr("Ran once (no warm runs)");
  if (noisy_spread(sp))
    lines << tr("Noisy: the warm runs spread over ±%1% of their median; the figures of this call are not to be trusted to "
                "that precision (run again, or with more Timing runs)").arg(50.0 * kNoisySpread, 0, 'f', 0);
  if (c.jit) {
    lines << tr("Replayed by TinyJit (the magenta edge): a call of the captured schedule run again with this call's inputs, "
                "no scheduling, no codegen (DEBUG=2 prints its header in magenta)");
    // the replay it belongs to: its number among the runs of the captured LINEAR, its calls and their total time
    const auto& calls = session_->calls();
    QList<int> runs;
    int first = -1, last = -1, n = 0;
    double total = 0;
    for (int r = 0; r < calls.size(); ++r) {
      if (!calls[r].jit || calls[r].schedule_index != c.schedule_index) continue;
      if (!runs.contains(calls[r].run)) runs.push_back(calls[r].run);
      if (calls[r].run != c.run) continue;
      if (first < 0) first = r;
      last = r;
      ++n;
      total += calls[r].seconds;
    }
    if (c.run >= 0 && n > 0)
      lines << tr("Replay %1 of %2 of this capture: calls %3–%4 (%5), %6 µs in all")
                   .arg(runs.indexOf(c.run) + 1)
                   .arg(runs.size())
                   .arg(first + 1)
                   .arg(last + 1)
                   .arg(n)
                   .arg(total * 1e6, 0, 'f', 1);
  }
  if (c.graph > 0) {
    int n = 0, first = -1;
    for (int r = 0; r < session_->calls().size(); ++r)
      if (session_->calls()[r].graph == c.graph) {
        if (first < 0) first = r;
        ++n;
      }
    lines << tr("Graph call %1: kernel %2 of %3 run as one call by the device's graph handler (the reference's "
                "\"batched %3\"; on Vulkan one command buffer recorded once and submitted again)")
                 .arg(c.graph)
                 .arg(row - first + 1)
                 .arg(n);
  }
  if (const int k = session_->kernel_context(c); k >= 0 && !session_->contexts()[k].statistics.isEmpty()) {
    QStringList figures;  // what the device's compiler reported of the program (Source pane: above its assembly)
    for (const auto& [name, value] : session_->contexts()[k].statistics) figures << QStringLiteral("%1 %2").arg(name, value);
    lines << tr("Compiled: %1 (the device's compiler's report)").arg(figures.join(QStringLiteral(", ")));
  }
  if (restored(row))
    lines << tr("↺ timed on restored inputs: this kernel writes memory it also reads, so each repeat ran on a copy "
                "of its inputs as the first run saw them (no result changes)");
  return lines.join('\n');
}

double TimingsModel::max_seconds() const {
  double m = 0;
  for (int r = 0; r < session_->calls().size(); ++r) {
    m = std::max(m, headline(r));
    const QList<double>& t = session_->calls()[r].times;
    for (int i = 1; i < t.size(); ++i) m = std::max(m, t[i]);
  }
  return m;
}

double TimingsModel::robust_scale(QList<double> h) {
  std::sort(h.begin(), h.end());
  if (h.isEmpty()) return 0;
  if (h.size() < 4) return h.back();
  auto quantile = [&](double q) {
    const double at = q * (h.size() - 1);
    const int lo = int(at);
    return h[lo] + (at - lo) * (h[std::min<int>(lo + 1, h.size() - 1)] - h[lo]);
  };
  const double q1 = quantile(0.25), q3 = quantile(0.75), fence = q3 + 3 * (q3 - q1);
  double within = 0;
  for (double x : h)
    if (x <= fence) within = std::max(within, x);
  return within > 0 && h.back() > 4 * within ? within : h.back();
}

double TimingsModel::scale_seconds() const {
  QList<double> h;
  for (int r = 0; r < session_->calls().size(); ++r) h.push_back(headline(r));
  return robust_scale(std::move(h));
}

bool TimingsModel::noisy(int row) const { return noisy_spread(spread(row)); }

QVariant TimingsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= session_->calls().size()) return {};
  int r = index.row();
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kTime: return headline(r);
      case kFirst: return seconds(r);
      case kGflops: return gflops(r);
      case kGbs: return gbs(r);
      case kSpread: {
        Spread s = spread(r);
        return s.n < 2 || s.median <= 0 ? QVariant() : QVariant((s.max - s.min) / s.median);
      }
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) return describe(r);
  if (role == Qt::TextAlignmentRole && index.column() != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName: return strip_ansi(session_->calls()[r].colored_name).trimmed();
    case kTime: return QString::number(headline(r) * 1e6, 'f', 2) + " µs";
    case kFirst: return QString::number(seconds(r) * 1e6, 'f', 2) + " µs";
    case kGflops: return QString::number(gflops(r), 'f', 3);
    case kGbs: return QString::number(gbs(r), 'f', 3);
    case kSpread: return spread_text(spread(r));
  }
  return {};
}

QVariant TimingsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Name", "Time", "First run", "GFLOP/s", "GB/s", "Warm runs"};
  return section >= 0 && section < kColumns ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace tsv
