#pragma once
// The CPU's vectorization and prefetch schemes, each a pass over the linearized program (the LINEAR), run by the C
// renderer's Renderer::linear_passes (GLSL runs the vector accesses only). Each is traced by its name, so the stepper
// shows why a CPU kernel is fast. Their UOps (engine/uop/ops.h), which the C-style walk (engine/renderer/cstyle.cpp)
// renders:
//   VLOAD(buf[, idx])                arg {w, lane, offset}: the w floats at buf+idx-lane (no idx: at buf+offset)
//   GEP(v)                           arg k (int64): lane k of a VLOAD or of a DEFINE_VACC
//   VSTORE(buf[, idx], x0..xw-1)     arg {w, lane, offset}: the w values stored there
//   DEFINE_VACC(c0..cw-1)            a vector of w float accumulators, lane k starting at the constant ck
//   VACC_UPDATE(vacc, s1, v1, ...)   arg {s1 first, ...}: vacc = vacc + s1*v1 + s2*v2 + ... (vi a VLOAD of width w)
//   TRANSPOSED_ACC(rows, accs, root, leaves)  16 accumulators updated from 16 4-wide loads at once (layout below)
//   PREFETCH(buf, range, t1..tn)     arg {c1..cn, step, constant}: a hint that buf+(t1*c1+..+range*step+constant) is
//                                    read soon
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// "prefetch the next block": a reduce loop reading a dense block as several rows gets PREFETCHes of the next block
UOpRef cpu_prefetch(const UOpRef& linear);
// "vector loads of grouped lanes": w adjacent float accesses of a buffer in one block become one VLOAD (the lanes read
// GEPs of it) or one VSTORE, for each width of `widths` (widest first)
UOpRef vector_accesses(const UOpRef& linear, const std::vector<int>& widths);
// "transposed accumulation": 16 accumulators each updated with the 4 lanes of a 4-wide load become one TRANSPOSED_ACC
UOpRef transposed_accumulation(const UOpRef& linear);
// "vector accumulators": w accumulators taking the lanes of the same VLOADs times the same scalars become one
// DEFINE_VACC updated by one VACC_UPDATE
UOpRef vector_accumulators(const UOpRef& linear);


// TRANSPOSED_ACC's sources: the 16 rows' VLOADs, the 16 accumulators (DEFINE_ACC), the terms' expression (row 0's
// term 0), then its leaves: arg {max, lanes, commons, per_rows} counts them (max: 1 for a running max, 0 for a sum).
// A lane leaf is column j's element of each row; a common leaf the same scalar in every term; a per-row leaf is listed
// as its 16 rows' values (row 0's the leaf itself).
struct TransposedAccView {
  std::vector<const UOp*> rows, accs, lanes, commons;
  std::vector<std::vector<const UOp*>> per_rows;
  const UOp* root = nullptr;
  bool max = false;
};
TransposedAccView transposed_acc_view(const UOp& u);

}  // namespace ts
