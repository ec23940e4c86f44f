#pragma once
// The schedule's passes, in the order build_schedule runs them (engine/schedule only): callify (callify.cpp), earliest
// rewrites, rangeify (rangeify.cpp), stage to store and split kernels (kernel_graph.cpp), order calls (order_calls.cpp).
// Each pass makes its decision and the next one reads what it made; a tracer only listens.
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/schedule/schedule.h"
#include "engine/uop/rewrite.h"

namespace ts::sched {

// the schedule of one (normalized) graph: the passes below, in order (schedule.cpp)
Schedule build_schedule(const UOps& outputs);

UOpRef reshape_to(const UOpRef& x, const Shape& s);
// a pass with nothing to rewrite: a snapshot of the graph for the trace (the reference's "View ..." steps)
void snapshot(const char* name, const UOpRef& sink);

// ---- callify ------------------------------------------------------------------------------------
// A call callify decided: a kernel storing a value into a buffer, or a copy between devices.
struct Item {
  ScheduleItem::Kind kind;
  UOpRef value_store;     // Kernel: STORE(RESHAPE(buf), value) (tensor graph)
  UOpRef dst, src;        // Copy buffers; Kernel: dst = output buffer
  std::vector<int> deps;  // items this one reads from (effects on one buffer keep program order)
  UOpRef computes = nullptr;  // the tensor node realized by this item
  // which state of each buffer the value reads: the item that wrote that state, or -1 for the state before this schedule
  std::unordered_map<const UOp*, int> reads = {};
  int overwrites = -1;  // the writer of the state this item replaces (-1: the state before the schedule, or a new buffer)
};

struct Callified {
  std::vector<Item> items;  // the calls, in the order the walk decided them
  UOps stores;              // per item: the kernel's STORE as the "callify" pass wrote it (null for a copy)
  std::unordered_map<const UOp*, UOpRef> becomes;     // tensor node -> the buffer view holding its value
  std::unordered_map<const UOp*, const UOp*> origin;  // a node of a kernel's value -> the tensor node it stands for
  std::map<std::string, int64_t> var_vals;
  UOps keep;  // the nodes the walk made that `becomes` is keyed by
};
// Which tensor nodes get buffers (a walk over the tensor graph, sources first), then the "callify" pass that rewrites
// each of them to what it became; the kernel stores are read from that pass's graph.
Callified callify(const UOps& outputs);

// ---- kernel graph -------------------------------------------------------------------------------
const PatternMatcher& earliest_rewrites();

// The "stage to store" pass: each STAGE rangeify left gets a buffer and a kernel storing the staged value.
struct StageToStore {
  struct Kernel {
    UOpRef end, buffer, computes;
    const UOp* after;  // AFTER(buffer, end): how the graph reads it
  };
  std::vector<Kernel> kernels;                      // in discovery order
  std::unordered_map<const UOp*, UOpRef> after_of;  // STAGE -> AFTER(its buffer, its kernel)
  std::function<UOpRef(const UOpRef&)> computes_of;  // the tensor node a STAGE stands for (null: none)
};
const PatternMatcher& pm_stage_to_store();

// The "split kernels" pass: each kernel store -> CALL(its AST, its buffers).
struct SplitKernels {
  std::unordered_map<const UOp*, size_t> kernel;  // a kernel's store (END or STORE) -> its index in `asts`
  std::vector<UOpRef> asts;                        // per kernel: SINK[KernelInfo]
  std::vector<UOps> bufs;                          // per kernel: its BUFFERs in PARAM order
  std::vector<UOpRef> calls;                       // per kernel: its CALL
};
const PatternMatcher& pm_split_kernels();

// ---- order calls --------------------------------------------------------------------------------
// The calls of one schedule and what orders them.
struct CallGraph {
  UOps calls;                                 // per call: its CALL (a kernel's, or CALL(COPY(dst, src), dst, src))
  std::vector<std::vector<int>> deps;         // per call: the calls it depends on, in the order the edges were made
  std::vector<int> roots;                     // where the discovery walk starts (callify's items, in order)
  std::vector<const UOp*> writes;             // per call: the buffer it writes
  std::vector<char> own;                      // per call: a tensor-level store (its write makes a new state)
  std::vector<int> replaces;                  // per call: the call whose state of `writes` it replaces (-1: none)
  std::vector<std::vector<std::pair<const UOp*, int>>> read_states;  // per call: (buffer, the call that wrote the state it reads)
};
// The execution order: Kahn's algorithm over the dependencies and the write-after-read edges, FIFO in discovery order.
// Throws on a cycle.
std::vector<int> kahn_order(const CallGraph& g);
// The "order calls" pass: the calls -> one LINEAR in execution order; returns, per LINEAR position, the call it holds.
std::vector<int> order_calls(const CallGraph& g);

}  // namespace ts::sched
