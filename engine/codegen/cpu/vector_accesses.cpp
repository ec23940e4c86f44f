// Vector loads of grouped lanes: w loads (or stores) of one float buffer whose indexes are base+w*m+0..w-1 by value
// (however each lane's index was simplified), in one block, become one vector access, like the reference's memory
// coalescing. A load group is one VLOAD where its first lane was (the lanes read GEPs of it), a store group one VSTORE
// where its last lane was.
#include <algorithm>
#include <tuple>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/cpu/linear_edit.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {
using namespace cpu;

struct VecGroup {
  std::vector<int> lanes;  // list positions of lanes 0..w-1
  int64_t offset = 0;      // w*m: the address of lane 0 when the index is a constant
  // the address is lane `lane`'s own index expression less its lane number, or the offset alone when the index is a
  // constant
  const UOp* index = nullptr;
  int lane = 0;
  bool constant_index = false;
};

// finds groups among the LOADs (is_store false) or STOREs of float buffers. Each width of `widths` (largest first)
// groups the accesses a wider group left: w lanes at base+w*m+0..w-1 in one block, keyed by the index's value (its
// terms, each coefficient a multiple of w, and its constant).
std::vector<VecGroup> find_vec_groups(const UOps& l, bool is_store, const std::vector<int>& widths) {
  const std::vector<int> block = loop_blocks(l);
  // each access's buffer, index terms with their coefficients, and constant offset
  struct Access {
    int pos;
    const UOp* buf;
    std::vector<const UOp*> terms;
    std::vector<int64_t> coeffs;
    int64_t off;
  };
  std::vector<Access> acc;
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op != (is_store ? Ops::STORE : Ops::LOAD)) continue;
    const UOp* index = u.src[0].get();
    if (index->op != Ops::INDEX || index->src.size() != 2) continue;
    const UOp* buf = resolve(index->src[0].get());
    const bool own_array = buf->op == Ops::BUFFER && buf->as<ParamArg>().addrspace == AddrSpace::REG;
    if (!(buf->op == Ops::PARAM || own_array) || buf->dtype != dtypes::float32) continue;
    LinearForm f;
    linear_form(index->src[1].get(), 1, f);
    if (f.constant < 0) continue;
    Access a{static_cast<int>(i), buf, {}, {}, f.constant};
    for (auto& [leaf, c] : f.terms)
      if (c != 0) a.terms.push_back(leaf), a.coeffs.push_back(c);
    acc.push_back(std::move(a));
  }
  std::vector<VecGroup> out;
  std::unordered_set<int> taken;
  for (int w : widths) {
    // (buffer, index terms, their coefficients, w*m, block) -> the list positions of lanes 0..w-1
    std::map<std::tuple<const UOp*, std::vector<const UOp*>, std::vector<int64_t>, int64_t, int>, std::vector<int>> cand;
    for (const Access& a : acc) {
      if (taken.count(a.pos) || std::any_of(a.coeffs.begin(), a.coeffs.end(), [&](int64_t c) { return c % w != 0; })) continue;
      auto key = std::make_tuple(a.buf, a.terms, a.coeffs, a.off / w * w, block[a.pos]);
      auto it = cand.find(key);
      if (it == cand.end()) it = cand.emplace(key, std::vector<int>(w, -1)).first;
      if (it->second[a.off % w] >= 0) continue;  // same address twice: leave scalar
      it->second[a.off % w] = a.pos;
    }
    for (auto& [key, lanes] : cand) {
      if (std::any_of(lanes.begin(), lanes.end(), [](int x) { return x < 0; })) continue;
      int lo = *std::min_element(lanes.begin(), lanes.end()), hi = *std::max_element(lanes.begin(), lanes.end());
      // nothing in between may touch the same buffer the other way (a store between grouped loads, a load between stores)
      const UOp* buf = std::get<0>(key);
      bool clash = false;
      for (int i = lo; i <= hi && !clash; ++i) {
        const UOp& u = *l[i];
        if (u.op != (is_store ? Ops::LOAD : Ops::STORE) || u.src[0]->op != Ops::INDEX) continue;
        clash = resolve(u.src[0]->src[0].get()) == buf;
      }
      if (clash) continue;
      // loads are emitted at their first lane, stores at their last; the address is lane 0's index where that is
      // defined there (every lane's index precedes its store), else the emitting lane's less its lane number
      const int at = is_store || lanes[0] == lo ? lanes[0] : lo;
      VecGroup g;
      g.lanes = lanes;
      g.offset = std::get<3>(key);
      g.lane = static_cast<int>(std::find(lanes.begin(), lanes.end(), at) - lanes.begin());
      g.index = l[at]->src[0]->src[1].get();
      g.constant_index = std::get<1>(key).empty();
      taken.insert(lanes.begin(), lanes.end());
      out.push_back(std::move(g));
    }
  }
  return out;
}

// the vector access's buffer and address sources, and its arg
UOps vec_sources(const UOps& l, const VecGroup& g) {
  UOps src{resolve(l[static_cast<size_t>(g.lanes[0])]->src[0]->src[0].get())->ref()};
  if (!g.constant_index) src.push_back(g.index->ref());
  return src;
}
Shape vec_arg(const VecGroup& g) { return {static_cast<int64_t>(g.lanes.size()), g.lane, g.offset}; }

struct VectorAccessCtx : LinearPassCtx {
  std::vector<int> widths;
};

const PatternMatcher& pm_vector_accesses() {
  static const PatternMatcher pm({rule("adjacent float lanes of one buffer as one vector access", {Ops::LINEAR}, [](const UOpRef& x, VectorAccessCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    const UOps& l = x->src;
    LinearEdit e;
    for (const VecGroup& g : find_vec_groups(l, false, ctx.widths)) {
      const int at = *std::min_element(g.lanes.begin(), g.lanes.end());
      UOpRef v = UOp::make(Ops::VLOAD, dtypes::float32, vec_sources(l, g), vec_arg(g), at);
      e.before[at].push_back(v);
      for (size_t k = 0; k < g.lanes.size(); ++k)
        e.replace[l[static_cast<size_t>(g.lanes[k])].get()] = UOp::make(Ops::GEP, l[static_cast<size_t>(g.lanes[k])]->dtype, {v}, static_cast<int64_t>(k));
    }
    for (const VecGroup& g : find_vec_groups(l, true, ctx.widths)) {
      const int at = *std::max_element(g.lanes.begin(), g.lanes.end());
      UOps src = vec_sources(l, g);
      for (int k : g.lanes) src.push_back(l[static_cast<size_t>(k)]->src[1]);
      e.merge(l, g.lanes, at, UOp::make(Ops::VSTORE, dtypes::void_, std::move(src), vec_arg(g), at));
    }
    return e.empty() ? nullptr : apply_edit(x, e);
  })});
  return pm;
}

}  // namespace

UOpRef vector_accesses(const UOpRef& linear, const std::vector<int>& widths) {
  VectorAccessCtx ctx;
  ctx.widths = widths;
  return graph_rewrite(linear, pm_vector_accesses(), ctx, "vector loads of grouped lanes");
}

}  // namespace ts
