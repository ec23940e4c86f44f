// split ends: ENDs over several ranges nested, constant gates dropped ("final rewrite"; the reference's pm_split_ends in
// codegen/late/linearizer.py).
#include "engine/codegen/lowering.h"

#include <algorithm>

#include "engine/codegen/lowering_internal.h"
#include "engine/codegen/opt.h"

namespace ts {

using namespace lowering;

namespace {

// ---- constant gates -----------------------------------------------------------------------------
UOpRef drop_true_gate(const UOpRef& x) {
  if (x->src.size() > 2 && x->src[2]->op == Ops::CONST && x->src[2]->const_float() != 0)
    return UOp::make(Ops::INDEX, x->dtype, {x->src[0], x->src[1]}, x->arg);
  return nullptr;
}
UOpRef load_false_gate(const UOpRef& x) {
  const UOpRef& i = x->src[0];
  if (i->op != Ops::INDEX || i->src.size() <= 2 || i->src[2]->op != Ops::CONST || i->src[2]->const_float() != 0) return nullptr;
  // bfloat16 and fp8 are their bits by now (the late decompositions ran): their 0 is the bits of 0.0, as those rules
  // spell a constant (a renderer without the type, GLSL, has no literal for it)
  if (x->dtype == dtypes::bfloat16 || is_fp8(x->dtype))
    return UOp::make(Ops::BITCAST, x->dtype, {uconst_int(x->dtype == dtypes::bfloat16 ? dtypes::uint16 : dtypes::uint8, 0)});
  return uconst(x->dtype, 0);
}

// ---- split ends ---------------------------------------------------------------------------------
UOpRef split_end(const UOpRef& e) {
  if (e->src.size() <= 2) return nullptr;
  UOps rs(e->src.begin() + 1, e->src.end());
  std::sort(rs.begin(), rs.end(), [](const UOpRef& a, const UOpRef& b) {
    auto ka = is_range(a) ? std::make_pair(axis_to_pos(rtype(a)), rid(a)) : std::make_pair(99, int64_t{0});
    auto kb = is_range(b) ? std::make_pair(axis_to_pos(rtype(b)), rid(b)) : std::make_pair(99, int64_t{0});
    return ka > kb;  // innermost first
  });
  UOpRef body = e->src[0];
  for (auto& r : rs) body = UOp::make(Ops::END, dtypes::void_, {body, r});
  return body;
}

}  // namespace

const PatternMatcher& pm_split_ends() {
  static const PatternMatcher pm({
      rule("split END over several ranges", {Ops::END}, [](const UOpRef& x) { return split_end(x); }),
      rule("INDEX gated by true -> plain INDEX", {Ops::INDEX}, [](const UOpRef& x) { return drop_true_gate(x); }),
      rule("load gated by false -> 0", {Ops::LOAD}, [](const UOpRef& x) { return load_false_gate(x); }),
  });
  return pm;
}

}  // namespace ts
