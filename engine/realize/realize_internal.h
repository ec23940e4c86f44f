#pragma once
// What realize.cpp, realize_jit.cpp and realize_beam.cpp share (private to them): the lock, compiled kernels, BEAM's
// search, one run of a schedule
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/device/device.h"
#include "engine/device/search.h"
#include "engine/schedule/schedule.h"

namespace ts {

// a kernel compiled for its device (schedule.h names it for Schedule::programs)
struct Compiled {
  ProgramSpec spec;
  Device* device = nullptr;
  std::shared_ptr<Executable> exe;
  std::string key;
  UOpRef ast;  // keeps the cache key alive
};

// the lock over the run state (realize.cpp): the call log, the compiled programs, the capture
extern std::mutex g_mu;

// every kernel of a schedule compiled for its device (one program an item, null for a copy); under g_mu
std::vector<std::shared_ptr<Compiled>> compile_all(const Schedule& sched);

// What a TinyJit replay changes of a captured schedule without copying it: its buffers (the inputs), its Variable
// values, and that it is a replay
struct RunOverrides {
  const std::unordered_map<const UOp*, UOpRef>* sub = nullptr;
  const std::map<std::string, int64_t>* var_vals = nullptr;
  bool jit = false;
  int trace_schedule = -1;  // the captured LINEAR's number among the trace's schedules
};

// BEAM=N (realize_beam.cpp): the opts a search finds for a kernel on its device (its progress streamed to the trace and
// handed to RealizeConfig::beam_progress), BEAM's line for it on stderr, and what searched ("BEAM=2 TS_OPTS=extended")
BeamResult search_opts(const UOpRef& ast, Device& dev);
void print_beam_line(const BeamProgress& p, const ProgramSpec& spec);
std::string beam_label();

// one run of a schedule's calls, in order on their devices (realize.cpp); under g_mu
void run_schedule(const Schedule& sched, bool update_stats, const RunOverrides& over = {});

}  // namespace ts
