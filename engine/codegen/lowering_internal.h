#pragma once
// Small helpers the lowering passes' files share (simplify.cpp, expander.cpp, reduce.cpp, gpudims.cpp, barriers.cpp,
// add_loads.cpp, split_ends.cpp, cpu/jam.cpp, cpu/panels.cpp); private to engine/codegen.
#include <cstdint>
#include <unordered_map>

#include "engine/uop/uop.h"

namespace ts::lowering {

using SubMap = std::unordered_map<const UOp*, UOpRef>;

inline bool is_range(const UOpRef& x) { return x->op == Ops::RANGE; }
inline AxisType rtype(const UOpRef& r) { return r->as<RangeArg>().type; }
inline int64_t rid(const UOpRef& r) { return r->as<RangeArg>().id; }
inline bool is_global_param(const UOpRef& x) {
  return x->op == Ops::PARAM && x->as<ParamArg>().addrspace != AddrSpace::ALU;
}
inline bool is_invalid(const UOpRef& x) { return x->op == Ops::CONST && x->is<Invalid>(); }
// the PARAM or BUFFER an INDEX / AFTER chain addresses (nullptr for anything else)
inline const UOp* buffer_uop(const UOp* x) {
  while (x->op == Ops::INDEX || x->op == Ops::AFTER || x->op == Ops::LOAD || x->op == Ops::STORE) x = x->src[0].get();
  return x->op == Ops::PARAM || x->op == Ops::BUFFER ? x : nullptr;
}
inline bool is_local_buffer(const UOp* b) { return b && b->op == Ops::BUFFER && b->as<ParamArg>().addrspace == AddrSpace::LOCAL; }
// math whose operands all take its dtype (not comparisons, whose result is a bool, nor WHERE, whose gate is one)
inline bool is_typed_math_op(Ops o) { return group::alu(o) && !group::comparison(o) && o != Ops::WHERE; }
// a uint32 constant (the bit operations of the fp8 conversions and of the transcendental polynomials)
inline UOpRef u32c(int64_t v) { return uconst_int(dtypes::uint32, v); }

// ranges of `x` renamed by `map`, without entering loops that close one of the renamed ranges (those are complete
// loops of their own whose results this body reads); reduce.cpp
UOpRef rename_ranges(const UOpRef& x, const SubMap& map, std::unordered_map<const UOp*, UOpRef>& memo);

}  // namespace ts::lowering
