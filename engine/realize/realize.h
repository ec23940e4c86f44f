#pragma once
#include <functional>
#include <memory>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "engine/codegen/program.h"
#include "engine/device/search.h"
#include "engine/tensor/tensor.h"
#include "engine/trace/records.h"

namespace ts {

// One executed CALL (engine/trace/records.h): realize fills it, prints it (DEBUG=2), records it in the trace and keeps
// the latest ones (call_log).
using CallRecord = trace::CallRecord;

// How realizes run. The program's entry point fills it (from DEV, DEBUG, TINYSCOPE_REPEAT) and hands it to
// install_realize; nothing below reads the environment.
struct RealizeConfig {
  std::string device = "CPU";   // DEV: a name of device_names(), runs every kernel on host memory (and new tensors)
  int debug = 0;                // DEBUG
  int repeat = 1;               // times each kernel runs, for the spread of its timings
  // Each kernel's own time measured (GPU timestamps around every dispatch, which cost the GPU about 2.4 us a kernel
  // on an H200). DEBUG>=2, a trace that records calls, and timing repeats measure it regardless; `tinyscope run`
  // without them turns it off, as the reference times kernels only at DEBUG>=2.
  bool time_kernels = true;
  // every call's output buffers read back right after the call ran and kept in the trace (`snapshots`, when the
  // trace records calls): the buffer viewer's values after any call. Calls then run one at a time (no batching on
  // a GPU), and each read-back costs a copy, so a run with snapshots is slower than one without.
  bool snapshots = false;
  // BEAM=N: each kernel's opts are searched by timing candidates on its device (engine/device/search.h) instead of
  // the hand-coded heuristics; found opts are kept in beam_cache_dir/beam (empty: not kept) unless IGNORE_BEAM_CACHE
  int beam = 0;
  OptSpace opt_space = OptSpace::reference;  // TS_OPTS=extended: BEAM searches more than the reference's actions
  std::string beam_cache_dir;
  bool beam_ignore_cache = false;
  // what a search reports while it runs (the trace stream gets it too), and whether each searched kernel gets a
  // line on stderr when its search ends
  BeamProgressFn beam_progress;
  bool beam_lines = true;
};
RealizeConfig& realize_config();

// The devices this engine runs (the values DEV takes), in the order a user is shown them (engine/device registry).
std::vector<std::string> device_names();
// `name` canonicalized as the reference does ("cpu" -> "CPU", "CPU:0" -> "CPU"), or an Error that names it and the
// devices that exist: an unknown device never runs as another one.
std::string require_device(const std::string& name);

struct Schedule;
// The reference's Tensor.schedule_linear: bufferizes and schedules `tensors` and re-points every live tensor at its
// buffer (before anything runs); the returned LINEAR runs with run_linear.
std::shared_ptr<Schedule> schedule_linear(const std::vector<Tensor>& tensors);
void run_linear(const Schedule& linear);


// TinyJit's capture. While one is open (and not paused: the reference's CAPTURING=0), a realize schedules its tensors
// and re-points them at their buffers as always, but keeps the schedule instead of running it; reading a tensor's
// data is then an Error of kind Jit (the value would be baked into the capture).
void begin_capture();
// the schedules kept since begin_capture, in order, as one (empty items: nothing was captured), and how many there
// were; closes the capture
std::pair<std::shared_ptr<Schedule>, size_t> end_capture();
bool capturing();
bool& capture_paused();
// compiles a captured schedule's kernels once, under this moment's options (BEAM: JITBEAM at capture), for all its
// replays, and splits it into graph calls (Schedule::graphs): consecutive kernels of one device with a graph handler,
// at most graph_batch in the first (0: no limit), twice as many in each next one (the reference's JIT_BATCH_SIZE);
// a single kernel stays a plain call unless graph_one_kernel. graph_batch < 0: no graph calls (JIT=2).
void compile_captured(Schedule& captured, int graph_batch = -1, bool graph_one_kernel = false);
// a captured schedule run again with other buffers where it had `from` (the inputs), and these Variable values
void replay(const Schedule& captured, const UOps& from, const UOps& to, const std::map<std::string, int64_t>& var_vals);
// the inputs (of `inputs`) that the captured calls write (an assign to an input)
UOps written_inputs(const Schedule& captured, const UOps& inputs);
// frees the memory of the buffers the captured calls only write (none of `keep`); the next replay allocates them
// again. Returns the bytes freed.
size_t free_intermediates(const Schedule& captured, const UOps& keep);
// the calls of `captured` that read none of `needed`'s buffers, nor any buffer such a call writes first (run once:
// the reference's prune), and the rest
std::pair<std::shared_ptr<Schedule>, std::shared_ptr<Schedule>> prune_schedule(const Schedule& captured, const UOps& needed);

// "file:line" of the user's code that asked for a realize (set by the Python host; empty when unknown)
std::function<std::string()>& caller_location_hook();

// Installs the Tensor realize/read hooks with `config` (call once at start-up, before any Tensor is realized; the host
// devices are registered if no device is). Throws an Error when config.device names no device (see require_device).
void install_realize(RealizeConfig config = {});
// The latest kCallLogSize executed, counted calls of this process, in order (older ones are dropped, so a loop of
// a million realizes does not keep a million records), and how many there were in all.
constexpr size_t kCallLogSize = 10000;
const std::deque<CallRecord>& call_log();
uint64_t call_count();
// the work of every executed call so far (the reference's GlobalCounters.global_ops and global_mem): estimated
// operations and bytes moved
struct WorkTotals {
  double ops = 0, mem = 0;
};
WorkTotals work_totals();
// compiles every kernel of a schedule for its device without running any (the reference's compile_linear)
void compile_schedule(const Schedule& linear);

}  // namespace ts
