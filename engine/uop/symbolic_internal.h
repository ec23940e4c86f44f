#pragma once
// What the symbolic*.cpp files share (private to them): two tests of a node
#include "engine/uop/uop.h"

namespace ts {

inline bool is_c(const UOpRef& x) { return x->op == Ops::CONST && !x->is<Invalid>(); }
inline bool int_math(const UOpRef& x) { return is_int(x->dtype); }

}  // namespace ts
