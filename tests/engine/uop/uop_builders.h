#pragma once
// Hand-built UOp graphs for the rule tests: Variables with bounds and nodes exactly as written (no simplification).
#include <utility>

#include "engine/uop/uop.h"

namespace ts_test {

// a Variable of dtype dt in [lo, hi]
inline ts::UOpRef var(const char* name, ts::DType dt = ts::dtypes::int32, int64_t lo = 0, int64_t hi = 10) {
  ts::ParamArg a;
  a.name = name;
  a.vmin = lo, a.vmax = hi;
  a.addrspace = ts::AddrSpace::ALU;
  return ts::UOp::make(ts::Ops::PARAM, dt, {}, a);
}
// a node as written: no simplification on the way
inline ts::UOpRef node(ts::Ops op, ts::DType dt, ts::UOps src, ts::Arg arg = {}) {
  return ts::UOp::make(op, dt, std::move(src), std::move(arg));
}

}  // namespace ts_test
