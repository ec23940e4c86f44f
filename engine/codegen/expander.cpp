// expander: UPCAST and UNROLL ranges expanded into lanes ("expander"; the reference's expander in codegen/__init__.py:
// expand_reduce, unroll_axis).
#include "engine/codegen/lowering.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

namespace {

// ---- expander -----------------------------------------------------------------------------------
// every assignment of constants to `rs` (first range slowest)
std::vector<SubMap> lanes(const UOps& rs) {
  std::vector<SubMap> out{SubMap{}};
  for (auto& r : rs) {
    int64_t n = r->src[0]->const_int();
    std::vector<SubMap> next;
    for (auto& m : out)
      for (int64_t k = 0; k < n; ++k) {
        SubMap m2 = m;
        m2[r.get()] = uconst_int(r->dtype, k);
        next.push_back(std::move(m2));
      }
    out = std::move(next);
  }
  return out;
}
std::pair<UOps, UOps> split_ranges(const UOpRef& x, AxisType t) {
  UOps hit, rest;
  for (size_t i = 1; i < x->src.size(); ++i) {
    const UOpRef& r = x->src[i];
    (is_range(r) && rtype(r) == t && r->src[0]->op == Ops::CONST ? hit : rest).push_back(r);
  }
  std::sort(hit.begin(), hit.end(), [](auto& a, auto& b) { return rid(a) < rid(b); });
  return {hit, rest};
}
// with_rest: the END closes other ranges too (they stay), else only UPCAST ones (the END goes)
UOpRef expand_end(const UOpRef& e, bool with_rest) {
  auto [ups, rest] = split_ranges(e, AxisType::UPCAST);
  if (ups.empty() || rest.empty() == with_rest) return nullptr;
  UOps stores;
  for (auto& m : lanes(ups)) stores.push_back(substitute(e->src[0], m));
  UOpRef body = stores.size() == 1 ? stores[0] : UOp::make(Ops::GROUP, dtypes::void_, stores);
  if (rest.empty()) return body;
  UOps ns{body};
  ns.insert(ns.end(), rest.begin(), rest.end());
  return UOp::make(Ops::END, dtypes::void_, ns, e->arg);
}
// with_rest: the REDUCE has other ranges too (it stays over them), else only UNROLL ones (the chain replaces it)
UOpRef expand_reduce(const UOpRef& red, bool with_rest) {
  auto [unr, rest] = split_ranges(red, AxisType::UNROLL);
  if (unr.empty() || rest.empty() == with_rest) return nullptr;
  Ops op = red->as<ReduceArg>().op;
  UOpRef chain;
  for (auto& m : lanes(unr)) {
    UOpRef v = substitute(red->src[0], m);
    chain = chain ? alu(op, chain, v) : v;
  }
  if (rest.empty()) return ucast(chain, red->dtype);
  UOps ns{chain};
  ns.insert(ns.end(), rest.begin(), rest.end());
  return UOp::make(Ops::REDUCE, red->dtype, ns, red->arg);
}

}  // namespace

const PatternMatcher& pm_expander() {
  static const PatternMatcher pm = PatternMatcher({
      rule("END(x, UPCAST u) -> x once per lane of u", {Ops::END}, [](const UOpRef& x) { return expand_end(x, false); }),
      rule("END(x, UPCAST u, r) -> END(x once per lane of u, r)", {Ops::END}, [](const UOpRef& x) { return expand_end(x, true); }),
      rule("REDUCE(x, UNROLL u) -> x[u=0] op x[u=1] op ...", {Ops::REDUCE}, [](const UOpRef& x) { return expand_reduce(x, false); }),
      rule("REDUCE(x, UNROLL u, r) -> REDUCE(x[u=0] op x[u=1] op ..., r)", {Ops::REDUCE},
           [](const UOpRef& x) { return expand_reduce(x, true); }),
  }) + pm_flatten_range();
  return pm;
}

}  // namespace ts
