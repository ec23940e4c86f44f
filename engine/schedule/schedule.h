#pragma once
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// One CALL of a LINEAR: a kernel (its AST) or a copy, with its buffers in PARAM slot order.
struct ScheduleItem {
  enum class Kind { Kernel, Copy };
  Kind kind = Kind::Kernel;
  UOpRef ast;   // Kernel: SINK[KernelInfo] (see engine/codegen/program.h)
  UOps bufs;    // BUFFER nodes; Copy: {dst, src}
  UOpRef computes;  // provenance: the tensor-graph node whose value this call produces (null for intermediates)
};

struct Schedule {
  std::vector<ScheduleItem> items;  // execution order
  // node -> the buffer view that now holds its value (apply to every live tensor)
  std::unordered_map<const UOp*, UOpRef> becomes;
  UOps keep_alive;  // keys of `becomes`
  std::map<std::string, int64_t> var_vals;  // bound Variables used by the calls
  UOps intermediates;  // buffers that live only inside this schedule (no tensor holds them): memory-planned
  bool cache_hit = false;  // an equal graph (other buffers, other Variable values) was scheduled before
  size_t cache_key = 0;
};

// Callify + kernel graph + create_schedule for realizing `outputs` (tensor-level UOps).
Schedule create_schedule(const UOps& outputs);

// Index expressions of the input of a movement op, given the ranges of its output (reference's
// apply_movement_op). A masked index is WHERE(valid, idx, Invalid).
UOps apply_movement_op(const UOp& mop, const UOps& out_rngs);

}  // namespace ts
