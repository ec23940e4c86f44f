#pragma once
#include <QList>
#include <QString>

namespace tsv {
class Session;

// What the Timeline pane draws, made only of the timestamps a trace recorded (engine/trace/schema.h: stamp): the
// host's lanes (each schedule context, each kernel context's codegen and its compile, from their begin and end), a lane
// per device (each call from its "start" for its seconds; a graph call as one span over its kernels), the script's
// lines (where a schedule context a line asked for began), and per device the bytes of the calls' buffers allocated over
// time (the trace's "memory"). Times are seconds since the run's clock origin.
struct TimelineSpan {
  enum class Kind { Schedule, Codegen, Compile, Kernel, Copy, Graph };
  Kind kind = Kind::Kernel;
  int lane = 0;
  double begin = 0, end = 0;
  int index = -1;  // the context (Schedule, Codegen, Compile), the call (Kernel, Copy), the graph's first call (Graph)
  int graph = 0;   // Graph: the graph number; Kernel: the graph it ran in (0: none)
  int count = 1;   // Graph: its kernels
};

struct TimelineLane {
  QString name;        // "schedule", "codegen", "compile", or a device
  bool host = false;
  QList<int> spans;    // indices into spans(), by begin (a device's graph spans are in groups)
  QList<int> groups;   // a device's graph spans, by begin
  double longest = 0;  // the longest span's length (a lookup by time looks back that far)
};

struct TimelineMarker {
  double t = 0;
  QString label;  // "softmax.py:12"
  int context = -1;
};

// One device's memory: the bytes its calls' buffers held after each event, and each buffer as a band (an offset from a
// first-fit packing of the buffers alive together: bands never overlap; they are not addresses).
struct MemoryBand {
  qint64 buffer = 0, bytes = 0, offset = 0;
  double alloc = 0, free = 0;  // free: the end of the timeline for a buffer never freed
  int alloc_call = 0, free_call = -1;  // the calls recorded before its allocation and its free (-1: never freed)
};
struct MemorySeries {
  QString device;
  QList<double> t;        // event times
  QList<qint64> bytes;    // allocated bytes after each event
  qint64 peak = 0;        // the most bytes allocated at once
  double peak_t = 0;      // when the peak was first reached
  qint64 packed = 0;      // the height the bands take (>= peak)
  QList<MemoryBand> bands;  // by alloc
};

class TimelineModel {
 public:
  void build(const Session& s);
  // whether the trace recorded timestamps (older traces have none: nothing to draw)
  bool has_timestamps() const { return !spans_.isEmpty(); }
  double begin() const { return t0_; }
  double end() const { return t1_; }
  const QList<TimelineSpan>& spans() const { return spans_; }
  const QList<TimelineLane>& lanes() const { return lanes_; }
  const QList<TimelineMarker>& markers() const { return markers_; }
  const QList<MemorySeries>& memory() const { return memory_; }
  // the span of a call, of a context (its Schedule or Codegen span), -1 when none
  int span_of_call(int call) const { return call >= 0 && call < call_span_.size() ? call_span_[call] : -1; }
  int span_of_context(int context) const { return context >= 0 && context < context_span_.size() ? context_span_[context] : -1; }
  int compile_span_of_context(int context) const {
    return context >= 0 && context < compile_span_.size() ? compile_span_[context] : -1;
  }
  // the innermost span of `lane` covering time t (within `slack` seconds), -1 when none; a device lane's calls before its
  // graph spans
  int span_at(int lane, double t, double slack = 0) const;
  // the allocated bytes of memory series m at time t, and the band covering (t, byte offset), -1 when none
  qint64 bytes_at(int m, double t) const;
  int band_at(int m, double t, qint64 offset) const;
  // the calls that last wrote, before `call`, a buffer it reads (the trace's writes and reads), in call order
  QList<int> writers_of(int call) const;

 private:
  void add_host_spans(const Session& s);
  void add_call_spans(const Session& s);
  void add_markers(const Session& s);
  void add_memory(const Session& s);
  int lane_of(const QString& name, bool host);
  QList<TimelineSpan> spans_;
  QList<TimelineLane> lanes_;
  QList<TimelineMarker> markers_;
  QList<MemorySeries> memory_;
  QList<int> call_span_, context_span_, compile_span_;
  const Session* session_ = nullptr;
  double t0_ = 0, t1_ = 0;
};

}  // namespace tsv
