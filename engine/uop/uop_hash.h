#pragma once
// The hash-consing key of a UOp, for code that looks a node up before (or instead of) making it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/uop/uop.h"

namespace ts {

// UOp::hash of the node UOp::make would make of these (its sources given by their hashes), without making it
size_t uop_key_hash(Ops op, DType dtype, std::span<const size_t> src_hashes, const Arg& arg, int64_t tag);

}  // namespace ts
