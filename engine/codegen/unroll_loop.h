#pragma once
// GPU (the GLSL renderer's linear passes): a kernel of few lanes whose innermost reduce loop reads buffers along it
// waits on each trip's loads before the next trip's are issued, and so reads memory at a fraction of its bandwidth
// (the reference's sum of 2^28 floats: 16384 lanes, a trip of four 16-byte loads each). The loop's body is written
// several times a trip (4: copy j at the index 4r + j), so that the GPU compiler issues the copies' loads together. Every
// output is computed by the same operations in the same order, and the kernel keeps its name (its opts). Only when the
// launch has at most max_lanes lanes, the trip count is a constant that 4 (or 2) divides, and the copies stay under
// 1024 nodes. LOOP_UNROLL=N writes it up to N times (a power of two; default 4), LOOP_UNROLL=0 leaves every loop.
#include <cstdint>

#include "engine/uop/uop.h"

namespace ts {

UOpRef unroll_reduce_loop(const UOpRef& linear, int64_t max_lanes);

}  // namespace ts
