#pragma once
// The CPU-only whole-kernel transforms: jam_loops (jam.cpp; to_program runs it after the opts) and pack_panels /
// pack_spread_lanes (panels.cpp; the C renderer runs them). No counterpart in the reference.
#include <cstdint>

#include "engine/uop/uop.h"

namespace ts {

// CPU: a reduce loop over few accumulators is a few dependent chains of adds, bound by the add's latency, not by the
// machine. The innermost loop over outputs is split so that 2 or 4 of its iterations run together (an UPCAST the opts
// did not ask for): more independent chains in the same reduce loop, and iterations that read neighbouring elements
// (a matmul's next columns) use each cache line they load whole. At most max_accumulators accumulators in all when
// the iterations' reads are at most 16 elements apart (they become vector lanes), max_strided when farther. Every
// output is computed by the same operations in the same order, and the kernel keeps its name (its opts). An
// elementwise kernel (no reduce) over contiguous elements gets up to one 16-wide vector of iterations at a time.
// *vector_jam: the id of the loop jammed when its iterations became vector lanes of a reduce's accumulators (else -1).
// below_id >= 0: the innermost loop over outputs of an id below it instead, whatever its stride (a second jam after
// such a first one: more independent vector accumulators, up to max_accumulators in all; conv2d's next output row).
UOpRef jam_loops(const UOpRef& sink, int64_t max_accumulators, int64_t max_strided, int64_t below_id = -1, int64_t* vector_jam = nullptr);
// CPU (C programs): a read in a reduce whose index walks memory far apart along the reduce (at least 1 KiB a step: a
// matmul's B down its columns) and does not use one of the loops over outputs is a strided walk repeated in every
// iteration of that loop. Such reads ("a panel": one buffer, the same loops) are copied once into a contiguous stack
// array before that loop and read from there; the loops over outputs are reordered so the panel's own loops are
// outside the ones it is reused across. Only when the panel fits in max_bytes and is used at least twice. Every
// output is computed from the same values by the same operations in the same order, and the kernel keeps its name.
UOpRef pack_panels(const UOpRef& sink, int64_t max_bytes);
// CPU (C programs): reads in a reduce whose addresses form a grid of C rows S apart (S at least `lanes`, C a multiple of
// `lanes`: the upcast lanes of a conv2d's weights, 576 floats apart) of the same columns t (its 3x3 taps) are copied,
// once before all the loops over outputs, into a stack panel that holds each column's C rows side by side: the lanes
// are then adjacent, one vector read. Also over the loops over outputs the reads use, when it all fits in max_bytes.
UOpRef pack_spread_lanes(const UOpRef& sink, int64_t max_bytes, int64_t lanes);

}  // namespace ts
