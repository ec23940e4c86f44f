#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/trace/records.h"
#include "engine/uop/uop.h"

namespace ts {

// One CALL of a LINEAR: a kernel or a copy (engine/trace/records.h)
using ScheduleItem = trace::ScheduleItem;

struct Compiled;  // a kernel compiled for its device (engine/realize)
class Graph;      // a device's graph call (engine/device)

// Items [begin, end) of a schedule, kernels of one device, that run as one graph call (a TinyJit capture's batch)
struct GraphCall {
  size_t begin = 0, end = 0;
  std::shared_ptr<Graph> graph;  // made by the device at the first run, kept for every replay
};

struct Schedule {
  std::vector<ScheduleItem> items;  // execution order
  // node -> the buffer view that now holds its value (apply to every live tensor)
  std::unordered_map<const UOp*, UOpRef> becomes;
  UOps keep_alive;  // keys of `becomes`
  std::map<std::string, int64_t> var_vals;  // bound Variables used by the calls
  UOps intermediates;  // buffers that live only inside this schedule (no tensor holds them): memory-planned
  // the kernels compiled once for these items (a captured TinyJit's, compiled at capture), else empty: compiled when
  // the schedule runs
  std::vector<std::shared_ptr<Compiled>> programs;
  bool jit = false;  // a TinyJit replay's calls
  int trace_schedule = -1;  // its number among the trace's schedules (the calls' schedule_index), -1: not recorded
  std::vector<GraphCall> graphs;  // in item order, disjoint (a captured TinyJit's batches; empty elsewhere)
  bool cache_hit = false;  // an equal graph (other buffers, other Variable values) was scheduled before
  size_t cache_key = 0;
};

// the BUFFER a value is, behind RESHAPEs (nullptr: it is no whole buffer)
const UOp* buffer_base(const UOp* u);

// Callify + kernel graph + create_schedule for realizing `outputs` (tensor-level UOps).
Schedule create_schedule(const UOps& outputs);

// Index expressions of the input of a movement op, given the ranges of its output (reference's
// apply_movement_op). A masked index is WHERE(valid, idx, Invalid).
UOps apply_movement_op(const UOp& mop, const UOps& out_rngs);

}  // namespace ts
