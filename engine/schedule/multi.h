#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/uop/rewrite.h"

namespace ts {

// Multi-device values (the reference's Tensor.shard). A value on several devices is an MSTACK: one source per device,
// its shard, and as arg the axis the shards split (none: each device holds the whole value). Tensor ops build the
// graph over it as over any value, with the whole shape; the multi pass, the first step of a schedule, rewrites that
// graph into one graph per device (the reference's multi rewrite): an op of MSTACKs becomes an MSTACK of the op on
// each device's shard, a reduce over the split axis adds the devices' partial results on every device, a copy to one
// device gathers the shards.
const PatternMatcher& pm_multi();

// the multi pass over `roots` (untouched when no multi-device value was ever made); node_map gets each walked node ->
// its rewrite
UOps lower_multi(const UOps& roots, std::unordered_map<const UOp*, UOpRef>* node_map = nullptr);

// the axis a multi-device value is split along (nullopt: a whole copy on each device, or not a multi-device value)
std::optional<int64_t> multi_axis(const UOpRef& x);

// the multi-device value of per-device shards
UOpRef mstack(UOps shards, std::optional<int64_t> axis);

// x on `devices`: copied whole to each one (no axis), or split along axis into equal parts, part i copied to device i
UOpRef shard(const UOpRef& x, const std::vector<std::string>& devices, std::optional<int64_t> axis);

}  // namespace ts
