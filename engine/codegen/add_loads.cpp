// add loads: reads of an INDEX become LOAD(INDEX) ("*** expand broadcast / add loads"; the reference's pm_add_loads in
// codegen/__init__.py).
#include "engine/codegen/lowering.h"

#include <utility>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

namespace {

// an INDEX into memory: a buffer PARAM, or a LOCAL BUFFER (possibly behind the AFTER that orders it)
bool is_memory_index(const UOpRef& x) {
  return x->op == Ops::INDEX && (is_global_param(x->src[0]) || is_local_buffer(buffer_uop(x.get())));
}

// ---- add loads ----------------------------------------------------------------------------------
// which reads a rule loads: every one (a STORE's value), or the other ops' reads of LOCAL or of global memory
enum class Reads { any, local, global };
UOpRef add_loads(const UOpRef& x, Reads which) {
  if (x->op == Ops::INDEX || x->op == Ops::LOAD) return nullptr;
  if ((x->op == Ops::STORE) != (which == Reads::any)) return nullptr;
  UOps ns = x->src;
  bool changed = false;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (x->op == Ops::STORE && i == 0) continue;
    if (is_memory_index(ns[i]) && (which == Reads::any || is_local_buffer(buffer_uop(ns[i].get())) == (which == Reads::local))) {
      ns[i] = UOp::make(Ops::LOAD, buffer_uop(ns[i].get())->dtype, {ns[i]});
      changed = true;
    }
  }
  return changed ? x->replace_src(std::move(ns)) : nullptr;
}

}  // namespace

const PatternMatcher& pm_add_loads() {
  static const PatternMatcher pm({
      rule("STORE(p, INDEX) -> STORE(p, LOAD(INDEX)) (a copy)", {Ops::STORE}, [](const UOpRef& x) { return add_loads(x, Reads::any); }),
      rule("f(INDEX of LOCAL memory) -> f(LOAD(INDEX))", {}, [](const UOpRef& x) { return add_loads(x, Reads::local); }),
      rule("f(INDEX) -> f(LOAD(INDEX))", {}, [](const UOpRef& x) { return add_loads(x, Reads::global); }),
  });
  return pm;
}

}  // namespace ts
