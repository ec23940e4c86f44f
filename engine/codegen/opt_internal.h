#pragma once
// Small helpers the optimizer's files share (postrange.cpp, heuristic.cpp); private to engine/codegen.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/uop/uop.h"

namespace ts::opt_detail {

inline int64_t range_id(const UOpRef& r) { return r->as<RangeArg>().id; }
inline bool contains(const std::vector<UOpRef>& v, const UOpRef& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace ts::opt_detail
