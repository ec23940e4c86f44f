// add implicit barriers: BARRIERs for LOCAL memory hazards, RAW and WAR ("add implicit barriers"; the reference's
// pm_implicit_barriers in codegen/__init__.py).
#include "engine/codegen/lowering.h"

#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

namespace {

// ---- implicit barriers --------------------------------------------------------------------------
bool is_local_store(const UOp* x) { return x->op == Ops::STORE && is_local_buffer(buffer_uop(x)); }
UOpRef add_raw_barrier(const UOpRef& after) {
  if (!is_local_buffer(after->src[0].get())) return nullptr;
  // the stores this read is ordered after, not looking past a barrier
  std::unordered_set<const UOp*> seen;
  std::vector<const UOp*> stack;
  for (size_t i = 1; i < after->src.size(); ++i) stack.push_back(after->src[i].get());
  bool found = false;
  while (!stack.empty() && !found) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second || u->op == Ops::BARRIER) continue;
    if (is_local_store(u)) found = true;
    for (auto& x : u->src) stack.push_back(x.get());
  }
  if (!found) return nullptr;
  UOps bsrc(after->src.begin() + 1, after->src.end());
  return UOp::make(Ops::AFTER, after->dtype, {after->src[0], UOp::make(Ops::BARRIER, dtypes::void_, bsrc)}, after->arg, after->tag);
}
UOpRef add_war_barrier(const UOpRef& end) {
  UOps rngs;
  for (size_t i = 1; i < end->src.size(); ++i) {
    const UOpRef& r = end->src[i];
    if (is_range(r) && (rtype(r) == AxisType::REDUCE || rtype(r) == AxisType::WEAK || rtype(r) == AxisType::LOOP) && r->vmax() > 0) rngs.push_back(r);
  }
  if (rngs.empty() || end->src[0]->op == Ops::BARRIER) return nullptr;
  auto sl = end->src[0]->toposort();
  std::unordered_set<const UOp*> store_bufs;
  for (auto& x : sl) {
    if (!is_local_store(x.get())) continue;
    auto xr = x->ranges();
    if (std::any_of(rngs.begin(), rngs.end(), [&](const UOpRef& r) { return std::find(xr.begin(), xr.end(), r) != xr.end(); }))
      store_bufs.insert(buffer_uop(x.get()));
  }
  if (store_bufs.empty()) return nullptr;
  UOps bsrc{end->src[0]};
  for (auto& x : sl)
    if (x->op == Ops::LOAD && store_bufs.count(buffer_uop(x.get()))) bsrc.push_back(x);
  if (bsrc.size() == 1) return nullptr;
  UOps ns = end->src;
  ns[0] = UOp::make(Ops::BARRIER, dtypes::void_, bsrc);
  return end->replace_src(std::move(ns));
}

}  // namespace

const PatternMatcher& pm_implicit_barriers() {
  static const PatternMatcher pm({
      rule("read of LOCAL memory after LOCAL stores waits on a BARRIER", {Ops::AFTER}, [](const UOpRef& x) { return add_raw_barrier(x); }),
      rule("loop body storing and loading LOCAL memory ends with a BARRIER", {Ops::END}, [](const UOpRef& x) { return add_war_barrier(x); }),
  });
  return pm;
}

}  // namespace ts
