#pragma once
#include <string>

#include "engine/trace/records.h"
#include "engine/trace/trace.h"
#include "engine/uop/uop.h"

namespace ts::trace {

enum class ContextKind { Schedule, Kernel };

// Seconds since the process's trace origin (one steady clock, read at its first use): the unit and origin of every
// timestamp a trace carries (schema.h: stamp).
double clock_seconds();

// At Level::Matches each match names its rule and the rule's location ("loc": "engine/uop/symbolic.cpp:345", the line
// of its rule(...) call), and the trace's "rules" holds one entry per rule that fired (by location and name), in the
// order they first fired:
//   {"name", "file": "engine/uop/symbolic.cpp", "line": 345, "first_line": 343, "text": the rule's row of its table
//    with two lines around it, lines first_line.. of the file (rule_source.h; "" and first_line 0 when the file was not
//    embedded)}
// Opens a trace context (one realize's schedule, or one kernel's codegen) for the calling thread; every
// graph_rewrite inside it is recorded as a pass (with its matches at Level::Matches).
class ContextScope {
 public:
  ContextScope(ContextKind kind, std::string name);
  ~ContextScope();
  void rename(const std::string& name);
  // a kernel context: when its program was compiled (clock_seconds(); the context's "compile"), and what the compiler
  // reported of it (null: nothing)
  void set_compile(double begin, double end, const ProgramStatistics* statistics = nullptr);
  // A kernel context whose program compiles on another thread: the scope's end stops recording its passes, but the
  // context stays open (unwritten to a stream) until finish_compile. Returns its handle (-1: nothing is recorded).
  int defer_end();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  int index_ = -1;
  bool deferred_ = false;
  void* saved_listener_ = nullptr;
};
// Ends a context defer_end() kept open (any thread): its compile [begin, end] when it compiled (compiled false: the
// compile failed, no compile is recorded); the context ends when the compile did, or when its scope did if later.
void finish_compile(int context, bool compiled, double begin, double end, const ProgramStatistics* statistics = nullptr);

void snapshot_tensor_graph(const UOps& outputs);
// a realize's LINEAR, in execution order, in the current context; returns its number among the trace's schedules (the
// calls' schedule_index), -1 when nothing is recorded
int record_schedule(const std::vector<ScheduleItem>& linear);
void record_program(const ProgramRecord& p, const std::string& program_key);  // CALL -> program via the key
// An executed call. A call the engine stamped (launched >= 0) gets "launched", "start" (its device began it when it was
// launched, or when the device's previous call ended if that was later: a device runs its calls in order), "writes" and
// "reads" (schema.h: stamp).
void record_call(const CallRecord& c);
// A buffer allocated or freed (while calls are recorded):
//   {"alloc": true|false, "device", "bytes", "buffer": the BUFFER uop id, "t": clock_seconds(), "after_call": calls
//    recorded before it}
// A trace keeps its first kMaxMemoryEvents (the rest are counted in "truncated": {"memory": N}).
constexpr size_t kMaxMemoryEvents = 1000000;  // (40 bytes each while recording)
void record_memory(const MemoryEvent& e);
// A value the script read back to the host (tolist, numpy, item, print): what a comparison of two devices compares.
//   {"where": the script line, "after_call": calls recorded before it, "dtype", "bits", "shape", "count": elements,
//    "stored": elements kept (the first ones), "values": base64 of `stored` little-endian float64 (float dtypes) or
//    int64 (int and bool dtypes)}
// A trace keeps kMaxOutputValues values in all (later outputs keep their shape and none of their values) and its first
// kMaxOutputs outputs (the rest are counted in "truncated": {"outputs": N}).
constexpr size_t kMaxOutputValues = size_t(1) << 22;
constexpr size_t kMaxOutputs = 100000;
void record_output(const HostValues& h, const std::string& where);
// A buffer a call wrote, read back right after that call ran (RealizeConfig::snapshots, `tinyscope run --snapshots`):
// the buffer viewer's values for any call, not only for what the script read.
//   {"call": the call's index in "calls" (the last call recorded), "arg": which of its buffers (a kernel's output
//    argument, a copy's destination 0), "dtype", "bits", "shape": [elements], "count", "stored", "values": as outputs}
// A trace keeps kMaxSnapshotValues values in all (later snapshots keep their size and none of their values) and its
// first kMaxSnapshots snapshots (the rest are counted in "truncated": {"snapshots": N}).
constexpr size_t kMaxSnapshotValues = size_t(1) << 22;
constexpr size_t kMaxSnapshots = 100000;
// h holds the buffer's first elements (at most snapshot_values_left() of them: a reader decodes no more than the trace
// keeps), `count` all of them
void record_snapshot(const HostValues& h, int arg, size_t count);
size_t snapshot_values_left();
// A BEAM search's progress, to the trace stream only (not kept in the trace):
//   {"beam": {"kernel", "round", "done", "total", "timed", "best_s" (-1: none yet), "default_s", "elapsed_s",
//             "opts", "finished", "cached"}}
void stream_progress(const BeamProgressRecord& p);

}  // namespace ts::trace
