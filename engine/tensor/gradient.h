#pragma once
#include <unordered_map>
#include <unordered_set>

#include "engine/tensor/tensor.h"

namespace ts {

// Reverse-mode differentiation on the tensor graph, as the reference's compute_gradient: walk the nodes that
// lie on a path from `root` to a target in reverse topological order, and for each one apply its op's gradient
// rule to the gradient flowing into it. A source that was broadcast into its consumer gets that gradient summed
// back to its own shape. DETACH stops the flow. Returns the gradient of every node reached (targets included);
// a node's gradient is a lazy tensor graph built from the forward graph and `root_grad`.
std::unordered_map<const UOp*, Tensor> compute_gradient(const UOpRef& root, const Tensor& root_grad,
                                                        const std::unordered_set<const UOp*>& targets);

}  // namespace ts
