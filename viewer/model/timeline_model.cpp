#include "viewer/model/timeline_model.h"

#include <QHash>
#include <QMap>
#include <algorithm>
#include <cmath>
#include <limits>

#include "viewer/model/session.h"

namespace tsv {

namespace {
// spans by begin (and the longer first: a container before what it holds)
void sort_by_begin(QList<int>& ids, const QList<TimelineSpan>& spans) {
  std::stable_sort(ids.begin(), ids.end(), [&spans](int a, int b) {
    return spans[a].begin < spans[b].begin || (spans[a].begin == spans[b].begin && spans[a].end > spans[b].end);
  });
}
}  // namespace

int TimelineModel::lane_of(const QString& name, bool host) {
  for (int i = 0; i < lanes_.size(); ++i)
    if (lanes_[i].name == name && lanes_[i].host == host) return i;
  lanes_.push_back({name, host, {}, {}, 0});
  return int(lanes_.size()) - 1;
}

void TimelineModel::build(const Session& s) {
  *this = TimelineModel();
  session_ = &s;
  call_span_.fill(-1, s.calls().size());
  context_span_.fill(-1, s.contexts().size());
  compile_span_.fill(-1, s.contexts().size());
  // the host's three lanes first, in this order, then the devices in the order the calls name them
  for (const char* host : {"schedule", "codegen", "compile"}) lane_of(QString::fromLatin1(host), true);
  add_host_spans(s);
  add_call_spans(s);
  if (spans_.isEmpty()) {
    *this = TimelineModel();
    session_ = &s;
    return;
  }
  t0_ = std::numeric_limits<double>::max();
  t1_ = 0;
  for (const TimelineSpan& sp : spans_) {
    t0_ = std::min(t0_, sp.begin);
    t1_ = std::max(t1_, sp.end);
  }
  for (int i = 0; i < spans_.size(); ++i) {
    TimelineLane& l = lanes_[spans_[i].lane];
    (spans_[i].kind == TimelineSpan::Kind::Graph ? l.groups : l.spans).push_back(i);
    l.longest = std::max(l.longest, spans_[i].end - spans_[i].begin);
  }
  for (TimelineLane& l : lanes_) {
    sort_by_begin(l.spans, spans_);
    sort_by_begin(l.groups, spans_);
  }
  add_markers(s);
  add_memory(s);
}

void TimelineModel::add_host_spans(const Session& s) {
  const auto& contexts = s.contexts();
  for (int i = 0; i < contexts.size(); ++i) {
    const Context& c = contexts[i];
    if (c.begin < 0 || c.end < c.begin) continue;
    if (c.is_schedule()) {
      context_span_[i] = int(spans_.size());
      spans_.push_back({TimelineSpan::Kind::Schedule, 0, c.begin, c.end, i});
      continue;
    }
    const bool compiled = c.compile_begin >= 0 && c.compile_end >= c.compile_begin;
    context_span_[i] = int(spans_.size());
    spans_.push_back({TimelineSpan::Kind::Codegen, 1, c.begin, compiled ? c.compile_begin : c.end, i});
    if (!compiled) continue;
    compile_span_[i] = int(spans_.size());
    spans_.push_back({TimelineSpan::Kind::Compile, 2, c.compile_begin, c.compile_end, i});
  }
}

void TimelineModel::add_call_spans(const Session& s) {
  const auto& calls = s.calls();
  QMap<int, int> graph_span;  // graph number -> its span
  for (int i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    if (!c.stamped() || !std::isfinite(c.start + c.seconds)) continue;  // (an untrusted trace's sum may overflow)
    const int lane = lane_of(c.device, false);
    const bool copy = c.kind == QLatin1String("copy");
    call_span_[i] = int(spans_.size());
    spans_.push_back({copy ? TimelineSpan::Kind::Copy : TimelineSpan::Kind::Kernel, lane, c.start, c.start + c.seconds, i, c.graph});
    if (c.graph <= 0) continue;
    auto g = graph_span.find(c.graph);
    if (g == graph_span.end()) {
      graph_span.insert(c.graph, int(spans_.size()));
      spans_.push_back({TimelineSpan::Kind::Graph, lane, c.start, c.start + c.seconds, i, c.graph, 1});
      continue;
    }
    TimelineSpan& gs = spans_[g.value()];
    gs.begin = std::min(gs.begin, c.start);
    gs.end = std::max(gs.end, c.start + c.seconds);
    ++gs.count;
  }
}

void TimelineModel::add_markers(const Session& s) {
  for (int i = 0; i < s.contexts().size(); ++i) {
    const Context& c = s.contexts()[i];
    if (!c.is_schedule() || c.begin < 0) continue;
    const auto [file, line] = s.script_line_of(i);
    if (line <= 0) continue;
    const QString label = file + ':' + QString::number(line);
    markers_.push_back({c.begin, label, i});
  }
}

// per device: the bytes allocated after each event, the peak, and the buffers packed first-fit as bands
void TimelineModel::add_memory(const Session& s) {
  QHash<QString, int> series;
  QHash<QPair<QString, qint64>, int> open;  // (device, buffer) -> its band in its series
  QList<QList<int>> live;                   // per series: its open bands, by offset
  for (const MemoryEvent& e : s.memory()) {
    if (!std::isfinite(e.t)) continue;
    auto it = series.find(e.device);
    if (it == series.end()) {
      it = series.insert(e.device, int(memory_.size()));
      memory_.push_back({e.device, {}, {}, 0, 0, 0, {}});
      live.push_back({});
    }
    MemorySeries& m = memory_[it.value()];
    QList<int>& alive = live[it.value()];
    const qint64 before = m.bytes.isEmpty() ? 0 : m.bytes.last();
    if (e.alloc) {
      // the lowest offset where the band fits between the bands alive now
      qint64 offset = 0;
      int at = 0;
      for (; at < alive.size(); ++at) {
        const MemoryBand& b = m.bands[alive[at]];
        if (b.offset - offset >= e.bytes) break;
        offset = std::max(offset, b.offset + b.bytes);
      }
      open.insert({e.device, e.buffer}, int(m.bands.size()));
      alive.insert(at, int(m.bands.size()));
      m.bands.push_back({e.buffer, e.bytes, offset, e.t, -1, e.after_call, -1});
      m.packed = std::max(m.packed, offset + e.bytes);
    } else if (auto b = open.find({e.device, e.buffer}); b != open.end()) {
      m.bands[b.value()].free = e.t;
      m.bands[b.value()].free_call = e.after_call;
      alive.removeOne(b.value());
      open.erase(b);
    }
    m.t.push_back(e.t);
    m.bytes.push_back(before + (e.alloc ? e.bytes : -e.bytes));
    if (m.bytes.last() > m.peak) {
      m.peak = m.bytes.last();
      m.peak_t = e.t;
    }
  }
  for (MemorySeries& m : memory_) {
    for (MemoryBand& b : m.bands)
      if (b.free < 0) b.free = t1_;
    if (!m.t.isEmpty()) t1_ = std::max(t1_, m.t.last()), t0_ = std::min(t0_, m.t.first());
  }
}

QList<int> TimelineModel::writers_of(int call) const {
  QList<int> out;
  if (!session_ || call < 0 || call >= session_->calls().size()) return out;
  const auto& calls = session_->calls();
  QList<qint64> todo = calls[call].reads;
  for (int k = call - 1; k >= 0 && !todo.isEmpty(); --k) {
    bool wrote = false;
    for (qint64 b : calls[k].writes) wrote |= todo.removeAll(b) > 0;
    if (wrote) out.prepend(k);
  }
  return out;
}

int TimelineModel::span_at(int lane, double t, double slack) const {
  if (lane < 0 || lane >= lanes_.size()) return -1;
  const TimelineLane& l = lanes_[lane];
  for (const QList<int>* ids : {&l.spans, &l.groups}) {
    // the spans beginning before t + slack, back to those that could still reach t - slack; the innermost (shortest) wins
    auto after = std::upper_bound(ids->begin(), ids->end(), t + slack, [this](double x, int i) { return x < spans_[i].begin; });
    int best = -1;
    for (auto it = after; it != ids->begin();) {
      --it;
      const TimelineSpan& sp = spans_[*it];
      if (sp.begin < t - slack - l.longest) break;
      if (sp.end + slack < t) continue;
      if (best < 0 || sp.end - sp.begin < spans_[best].end - spans_[best].begin) best = *it;
    }
    if (best >= 0) return best;
  }
  return -1;
}

qint64 TimelineModel::bytes_at(int m, double t) const {
  if (m < 0 || m >= memory_.size()) return 0;
  const MemorySeries& s = memory_[m];
  auto it = std::upper_bound(s.t.begin(), s.t.end(), t);
  return it == s.t.begin() ? 0 : s.bytes[int(it - s.t.begin()) - 1];
}

int TimelineModel::band_at(int m, double t, qint64 offset) const {
  if (m < 0 || m >= memory_.size()) return -1;
  const auto& bands = memory_[m].bands;
  for (int i = 0; i < bands.size(); ++i) {
    const MemoryBand& b = bands[i];
    if (b.alloc > t) break;
    if (b.free >= t && offset >= b.offset && offset < b.offset + b.bytes) return i;
  }
  return -1;
}

}  // namespace tsv
