#pragma once
// GPU (the GLSL renderer's linear passes): a work group whose lanes each sum (or max) rows of their own reads, each
// trip of its reduce loop, one 16-byte piece of every row, rows kilobytes apart: one load instruction of the work group
// touches as many memory lines as it has lanes, far apart. With the few lanes of such a launch (the reference's sum of
// 2^28 floats: its first kernel r_512_32_4_1024_4 has 16,384 lanes of four 16 KB rows each) the H100 read at 60% of a
// coalesced sum, and neither more loads in flight (the loop unrolled 2-16 times), nor staggered starts, nor 8 lanes a
// row helped. Here the work group reads each row together instead: per chunk of L trips (L lanes), lane l reads piece l
// of every row of the group, one row after the other (a load instruction covers L adjacent pieces of one row: 512
// bytes), writes its piece's term to work-group memory, and after a barrier each lane adds the L terms of each of its
// rows to that row's accumulator. Each accumulator gets the same terms, added (or, for a max, compared) in another
// order (a sum within float rounding of the loop's). The kernel keeps its name, opts and launch.
//
// Only for a launch of one local dimension (lidx0: 8 to 64 lanes, a power of two), at most max_lanes lanes in all, an
// innermost reduce loop of constant trip divisible by L whose body is arithmetic, buffer reads and sum or max updates
// of its accumulators (acc = acc + term; acc = acc < term ? term : acc), each buffer read along the loop contiguous
// (its index steps by its width) and at least 64 bytes from the next lane's (a read not along the loop, a softmax's
// row max, is read where its row is; one every lane reads alike, a matrix-vector product's vector, a piece a lane),
// and whose accumulators' L x (L + 1) arrays fit in shared_max bytes. `enabled` is the target's
// (OptTarget::coalesce_row_reads: Vulkan's GPUs, not a CPU's driver); ROW_READS=1 applies it on any device, ROW_READS=0
// on none.
#include <cstdint>

#include "engine/uop/uop.h"

namespace ts {

UOpRef share_row_reads(const UOpRef& linear, bool enabled, int64_t max_lanes, int64_t shared_max);

}  // namespace ts
