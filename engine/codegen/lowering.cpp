// The lowering passes' shared public helpers (substitute_traced, ranges_of); each pass's rule table lives in a file of its
// own (simplify.cpp, expander.cpp, reduce.cpp, gpudims.cpp, ...), the CPU-only whole-kernel transforms in cpu/.
#include "engine/codegen/lowering.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

UOpRef substitute_traced(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map, std::string_view name) {
  PatternMatcher pm({rule("substitute", {}, [](const UOpRef& x, const SubMap& m) -> UOpRef {
    auto it = m.find(x.get());
    return it == m.end() ? nullptr : it->second;
  })});
  return graph_rewrite(root, pm, map, name);
}

std::vector<UOpRef> ranges_of(const UOps& xs) {
  if (xs.empty()) return {};
  return UOp::make(Ops::SINK, dtypes::void_, xs)->ranges();
}

}  // namespace ts
