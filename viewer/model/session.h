#pragma once
#include <QHash>
#include <QList>
#include <QMap>
#include <QPair>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

namespace tsv {

// A trace file's data (schema: engine/trace/trace.h, read here with QJsonDocument only).
// the elements of a shape (1 for a scalar's)
inline qint64 element_count(const QList<qint64>& shape) {
  qint64 n = 1;
  for (qint64 d : shape) n *= d;
  return n;
}

struct Uop {
  QString op, dtype, arg, device;
  QList<int> src;
  QList<qint64> shape;  // 64-bit, as the engine's (a reduce over 2^33 elements has such a shape)
  int tag = -1;
  bool operator==(const Uop&) const = default;
};
struct Match {
  QString rule, loc;
  int before = -1, after = -1;
  bool operator==(const Match&) const = default;
};
struct Pass {
  QString name;
  int depth = 0, before = -1, after = -1, match_count = 0;
  QList<Match> matches;
  bool operator==(const Pass&) const = default;
};
struct Estimates {
  double ops = 0, lds = 0, mem = 0;
  bool operator==(const Estimates&) const = default;
};
struct LinearItem {
  QString kind;
  QList<int> bufs;
  int ast = -1, computes = -1;
  QList<int> members;  // the tensor nodes the call computes (computes first); empty in older traces
  bool operator==(const LinearItem&) const = default;
};
struct Program {
  QString name, colored_name, src, lang, program_key;
  QStringList applied_opts;
  QString opts_source;  // where the opts came from (heuristics, BEAM's search, its cache); empty in older traces
  QList<QPair<int, int>> lines;  // {1-based source line, the uop it renders}, in line order; empty in older traces
  QList<qint64> global_size;
  Estimates estimates;
  int ast = -1;
  bool operator==(const Program&) const = default;
};
struct Context {
  int id = 0;
  QString kind;  // "schedule" | "kernel"
  QString name, plain_name;
  QList<Pass> passes;
  QList<int> tensor_graph;  // root uop ids (schedule contexts)
  QList<LinearItem> linear;
  bool has_program = false;
  Program program;
  int schedule = -1;  // kernel contexts: the index of the schedule context they follow
  // when its scope opened and closed, and (kernel contexts) when its program compiled, in seconds since the run's clock
  // origin (engine/trace/schema.h: stamp); -1 in older traces
  double begin = -1, end = -1, compile_begin = -1, compile_end = -1;
  // (kernel contexts) what the device's compiler reported of the program's machine code, (name, value) in its words
  // (engine/trace/schema.h: field::kStatistics); empty where it reported nothing
  QList<QPair<QString, QString>> statistics;
  bool is_schedule() const { return kind == "schedule"; }
  bool operator==(const Context&) const = default;
};
// A compiled program's identity in a trace: its key (the kernel AST's hash) and its opts; one AST compiled under two
// opts (a NOOPT scope, then the default) is two programs of one key
inline QString program_id(const QString& program_key, const QStringList& applied_opts) {
  return program_key + QLatin1Char('\n') + applied_opts.join(QLatin1Char('\n'));
}

struct Call {
  QString kind, name, colored_name, device, program_key;
  QStringList applied_opts;  // the opts of the program it ran (a kernel)
  int counter = 0, num_args = 0, schedule_index = 0;
  QList<QPair<qint64, QString>> arg_sizes;
  QList<qint64> global_size;
  double seconds = 0;
  QList<double> times;     // every timing when the kernel was run several times (tinyscope run --repeat N)
  bool first_run = false;  // the first run of a program (its time may include one-off costs)
  bool jit = false;        // run by a TinyJit replay
  int graph = 0;           // > 0: run inside graph call number `graph` (a TinyJit replay's batch) with those that share it
  int run = -1;            // a TinyJit replay's calls: which run of the captured LINEAR (the calls of one replay share it)
  QString repeat_mode;     // "rerun", or "restored": each repeat ran on a restored copy of its inputs; "" ran once
  Estimates estimates;
  // when the host launched it and when its device began it (seconds since the run's clock origin), and the BUFFER uop
  // ids it writes and reads; -1 and none in older traces
  double launched = -1, start = -1;
  QList<qint64> writes, reads;
  bool stamped() const { return start >= 0; }
  // the name as the schedule prints it, without colours and runs of spaces ("copy 16 B, CPU <- PYTHON")
  QString display_name() const;
  bool operator==(const Call&) const = default;
};

// A value the script read back to the host (tolist, numpy, item, print), in the order it read them; or a snapshot: a
// buffer a call wrote, read back right after it ran (`tinyscope run --snapshots`), flat (shape: [elements]).
struct Output {
  QString where;  // the script line that read it ("softmax.py:12"; empty when no script line was running)
  QString dtype;  // as the engine names it ("float", "int", "bool"); float values are doubles, the others integers
  int bits = 0;   // the dtype's width: a float's ULPs are counted in it
  int after_call = 0;  // calls the run had made when the script read it
  int call = -1, arg = -1;  // a snapshot: the call that wrote it and which of its buffers (-1: a value the script read)
  QList<qint64> shape;
  qint64 count = 0;       // elements of the value
  QVector<double> f;      // the first stored elements (float dtypes)
  QVector<qint64> i;      // the first stored elements (int and bool dtypes)
  bool is_float() const { return dtype == "float" || dtype == "double" || dtype == "half" || dtype == "bfloat16"; }
  qint64 stored() const { return is_float() ? f.size() : i.size(); }  // fewer than count when the trace's cap was reached
  double value(qint64 k) const { return is_float() ? f[k] : double(i[k]); }
  bool operator==(const Output&) const = default;
};

// A buffer of a call allocated or freed by the runtime (the trace's "memory", engine/trace/recorder.h: record_memory).
struct MemoryEvent {
  bool alloc = true;
  QString device;
  qint64 bytes = 0, buffer = 0;  // buffer: the BUFFER uop id
  double t = 0;                  // seconds since the run's clock origin
  int after_call = 0;            // calls recorded before it
  bool operator==(const MemoryEvent&) const = default;
};

// The limits `tinyscope bench` measured on the run's device, copied into the trace from the limits cache (the trace's
// "limits"; app/cli/limits_cache.h): the roof of the Roofline pane. valid() is false when the trace has none.
struct MeasuredLimits {
  QString device;       // "CPU" or "VULKAN"
  QString machine;      // the CPU model, or the Vulkan device and its driver
  QString measured_at;  // UTC, ISO 8601
  double bandwidth_gbs = 0, peak_gflops = 0;
  QString bandwidth_label, peak_label;  // what each figure measured
  bool valid() const { return bandwidth_gbs > 0 && peak_gflops > 0; }
  bool operator==(const MeasuredLimits&) const = default;
};
// A rewrite rule that fired, as the trace's "rules" table records it (engine/trace/recorder.h): where it is written and
// its row of its rule table with the lines around it (lines first_line.. of the file; no text in older traces).
struct RuleInfo {
  QString name, file, text;
  int line = 0, first_line = 0;
  QString loc() const { return file + ':' + QString::number(line); }  // as a match's "loc" names it
  bool operator==(const RuleInfo&) const = default;
};

// One loaded trace: what a run produced. Emits loaded() after load() replaced the data.
class Session : public QObject {
  Q_OBJECT
 public:
  explicit Session(QObject* parent = nullptr) : QObject(parent) {}

  // Reads a trace JSON file; on failure keeps the old data and returns false with *error set. A trace is untrusted
  // input: check_trace() (viewer/model/trace_check.h) refuses it whole, with one error naming the problem, unless it
  // is within the size limits and matches the schema, with every uop it names present and an acyclic uop graph.
  bool load(const QString& path, QString* error = nullptr);
  bool load_data(const QByteArray& json, QString* error = nullptr, const QString& path = {});
  // Reads and parses a trace on a worker thread, then (back on this object's thread) replaces the data,
  // emitting loaded() and load_finished(). A later load_async() or load() supersedes a pending one.
  void load_async(const QString& path);
  bool loading() const { return loading_; }
  void clear();
  // Writes the loaded trace, byte for byte as it was read, to `path` (File > Save trace).
  bool save(const QString& path, QString* error = nullptr) const;
  // the trace JSON as loaded (empty when nothing is loaded)
  const QByteArray& raw() const { return raw_; }

  QString path() const { return path_; }
  QString script() const { return script_; }
  QString device() const { return device_; }
  QString result() const { return result_; }
  // non-empty for a trace rebuilt from what a run streamed before it ended early: how it ended ("stopped after 2.0 s")
  QString partial() const { return partial_; }
  // what the script printed, in order: {true for stderr, the text} (the trace's "console"; none in older traces)
  const QList<QPair<bool, QString>>& console() const { return console_; }
  const QList<Context>& contexts() const { return contexts_; }
  const QList<Call>& calls() const { return calls_; }
  const QHash<int, Uop>& uops() const { return uops_; }
  const QList<Output>& outputs() const { return outputs_; }
  // every call's output buffers when the run kept them (in call order), else none
  const QList<Output>& snapshots() const { return snapshots_; }
  // the snapshots of one call (indices into snapshots())
  QList<int> snapshots_of(int call) const;
  // the device's measured limits the run found in the limits cache (invalid: none)
  const MeasuredLimits& limits() const { return limits_; }
  const QList<RuleInfo>& rules() const { return rules_; }
  // every allocation and free of a call's buffer, in the order they happened (none in older traces)
  const QList<MemoryEvent>& memory() const { return memory_; }
  // the rules-table entry of a match's rule (its name and "loc"), nullptr if the trace has none
  const RuleInfo* rule_info(const QString& name, const QString& loc) const;
  const Uop* uop(int id) const;

  // the kernel context whose program has this key (the first, where one run compiled it under several opts), or -1
  int kernel_context(const QString& program_key) const { return kernel_by_key_.value(program_key, -1); }
  // the kernel context that compiled what the call ran: its key and opts (a NOOPT scope and the default compile one
  // AST twice), else its key alone; -1 for copies and calls of traces without programs
  int kernel_context(const Call& call) const;
  // the n-th schedule context (calls' schedule_index), or -1
  int schedule_context(int schedule_index) const;
  QList<int> calls_of(const QString& program_key) const;
  // the calls that ran the program a kernel context compiled (kernel_context(call) is it), in order
  QList<int> calls_of_context(int kernel_context) const;
  // the calls a schedule context ran, in order (one per item of its linear), or none
  QList<int> calls_of_schedule(int schedule_context) const;
  // the LINEAR item a call ran (its place among its schedule's calls), or nullptr where the trace does not tell
  const LinearItem* linear_item(int call) const;
  // the schedule contexts each line of the script `file` (a file name, "softmax.py") asked for, by line: a context
  // named "… · softmax.py:4" was realized by line 4
  QMap<int, QList<int>> schedules_by_line(const QString& file) const;
  // the script line that asked for a context ("softmax.py", 4), or an empty file name
  QPair<QString, int> script_line_of(int context) const;

 signals:
  void loaded();
  void load_finished(bool ok, const QString& error);

 private:
  struct Parsed {
    QString script, device, result, partial;
    QList<QPair<bool, QString>> console;
    QByteArray raw;
    QList<Context> contexts;
    QList<Call> calls;
    QHash<int, Uop> uops;
    QList<Output> outputs, snapshots;
    MeasuredLimits limits;
    QList<RuleInfo> rules;
    QList<MemoryEvent> memory;
    QHash<QString, int> by_key;
    QList<int> schedules;
  };
  static bool parse(const QByteArray& json, Parsed* out, QString* error);
  void adopt(Parsed&& p, const QString& path);
  int async_generation_ = 0;
  bool loading_ = false;
  QString path_, script_, device_, result_, partial_;
  QList<QPair<bool, QString>> console_;
  QByteArray raw_;
  QList<Context> contexts_;
  QList<Call> calls_;
  QHash<int, Uop> uops_;
  QList<Output> outputs_, snapshots_;
  MeasuredLimits limits_;
  QList<RuleInfo> rules_;
  QList<MemoryEvent> memory_;
  QHash<QString, int> rule_by_key_;  // loc + '\n' + name -> index in rules_
  QHash<QString, int> kernel_by_key_;
  QList<int> schedules_;
};

}  // namespace tsv
