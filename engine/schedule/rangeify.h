#pragma once
#include <utility>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// Turns a SINK of STOREs over the tensor graph into the same SINK with movement ops replaced by index math:
// END(STORE(INDEX(buf, idx), value), ranges), values reading INDEX(BUFFER, idx), staged (realized)
// intermediates as INDEX(STAGE(value, ranges), idx). Cheap stages are already inlined by the cost model.
// staged: the realized values, indexed by the origin of the STAGE that holds each (StageArg::origin)
UOpRef rangeify(const UOpRef& sink, UOps* staged = nullptr);

class PatternMatcher;
// the rule tables of two of rangeify's passes (for their tests): "apply rangeify" (a node's sources become reads at
// its ranges, STAGEs of realized values and ENDs of stores; movement ops, PADs and REDUCEs over axes go), its context
// rangeify's own; and the cost model's "symbolic+reduce_collapse+debuf" (a cheap STAGE is recomputed where it is read)
const PatternMatcher& pm_apply_rangeify();
const PatternMatcher& pm_remove_bufferize();

bool is_invalid(const UOpRef& x);
UOpRef get_idx(const UOpRef& r);
UOpRef get_valid(const UOpRef& r);
UOpRef with_valid(const UOpRef& idx, const UOpRef& valid);
const Shape& node_shape(const UOp& x);
UOpRef node_dim(const UOp& x, size_t i);  // symbolic size of dim i (Variable expression or constant)
std::vector<size_t> broadcast_axes(const Shape& src, const Shape& out);
// row-major flat index of (maybe masked) per-dim indices over `sizes`, and the AND of their masks
std::pair<UOpRef, UOpRef> linearize_index(const UOps& idx, const std::vector<int64_t>& sizes);

}  // namespace ts
