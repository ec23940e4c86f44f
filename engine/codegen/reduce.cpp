// remove reduces: GROUP_REDUCE's two-phase reduce through LOCAL memory, REDUCE -> accumulator loops and the merge of
// their ENDs ("remove reduces"; the reference's pm_reduce_local in codegen/__init__.py: fix_group_for_reduce,
// reduce_ranges_to_acc, merge_reduce_ends), and the reduce identities.
#include "engine/codegen/lowering.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/codegen/lowering_internal.h"
#include "engine/uop/error.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace lowering;

UOpRef reduce_identity(Ops op, DType dt) {
  if (op == Ops::ADD) return uconst(dt, 0);
  if (op == Ops::MUL) return uconst(dt, 1);
  // MAX
  if (is_bool(dt)) return uconst_bool(false);
  if (is_float(dt)) return uconst(dt, -std::numeric_limits<double>::infinity());
  if (is_unsigned(dt)) return uconst_int(dt, 0);
  if (dt->bitsize >= 64) return uconst_int(dt, std::numeric_limits<int64_t>::min());
  return uconst_int(dt, -(int64_t{1} << (dt->bitsize - 1)));
}

namespace {

// ---- remove reduces -----------------------------------------------------------------------------
// row-major linear index of `rs` (each a RANGE of constant size)
UOpRef linear_index(const UOps& rs) {
  UOpRef idx = iconst(0);
  int64_t stride = 1;
  for (auto it = rs.rbegin(); it != rs.rend(); ++it) {
    idx = iadd(idx, imul(*it, iconst(stride)));
    stride *= (*it)->src[0]->const_int();
  }
  return simplify(idx);
}
UOpRef group_reduce(const UOpRef& red, ReduceContext& ctx) {
  UOps gfr, rest;
  for (size_t i = 1; i < red->src.size(); ++i) {
    const UOpRef& r = red->src[i];
    (is_range(r) && rtype(r) == AxisType::GROUP_REDUCE ? gfr : rest).push_back(r);
  }
  if (gfr.empty()) return nullptr;
  // other locals of the kernel (below this reduce) index the buffer too: each lane keeps its own partial
  UOps upstream_locals;
  for (auto& u : red->toposort())
    if (u->op == Ops::RANGE && rtype(u) == AxisType::LOCAL) upstream_locals.push_back(u);
  UOps stored = upstream_locals;
  stored.insert(stored.end(), gfr.begin(), gfr.end());
  int64_t size = 1;
  for (auto& r : stored) {
    if (r->src[0]->op != Ops::CONST) throw Error("group reduce: a LOCAL/GROUP_REDUCE range of symbolic size " + r->src[0]->render());
    size *= r->src[0]->const_int();
  }
  // the reduce over the other ranges first (each lane's partial)
  UOpRef partial;
  if (rest.empty()) {
    partial = ucast(red->src[0], red->dtype);
  } else {
    UOps ns{red->src[0]};
    ns.insert(ns.end(), rest.begin(), rest.end());
    partial = UOp::make(Ops::REDUCE, red->dtype, ns, red->arg);
  }
  ParamArg pa;
  pa.slot = ctx.local_num++;
  pa.size = size;
  pa.addrspace = AddrSpace::LOCAL;
  UOpRef buf = UOp::make(Ops::BUFFER, red->dtype, {}, pa);
  UOpRef st = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, red->dtype, {buf, linear_index(stored)}), partial});
  UOps end_src{st};
  end_src.insert(end_src.end(), stored.begin(), stored.end());
  UOpRef end = UOp::make(Ops::END, dtypes::void_, end_src);
  // then the reduce over the group, reading every lane's partial back
  UOps reduce_loop;
  for (auto& g : gfr) reduce_loop.push_back(urange(g->src[0], rid(g) + 100, AxisType::REDUCE));
  UOps loaded = upstream_locals;
  loaded.insert(loaded.end(), reduce_loop.begin(), reduce_loop.end());
  UOpRef rd = UOp::make(Ops::INDEX, red->dtype, {UOp::make(Ops::AFTER, red->dtype, {buf, end}), linear_index(loaded)});
  UOps ns{rd};
  ns.insert(ns.end(), reduce_loop.begin(), reduce_loop.end());
  return UOp::make(Ops::REDUCE, red->dtype, ns, red->arg);
}
UOpRef reduce_to_acc(const UOpRef& red, ReduceContext& ctx) {
  UOps rngs(red->src.begin() + 1, red->src.end());
  if (rngs.empty()) return red->src[0];
  if (!std::all_of(rngs.begin(), rngs.end(), is_range)) return nullptr;
  Ops op = red->as<ReduceArg>().op;
  DType dt = red->dtype;
  UOps acc_src{reduce_identity(op, dt)};
  for (auto& r : red->ranges()) acc_src.push_back(r);  // the accumulator lives inside the outer loops
  UOpRef acc = UOp::make(Ops::DEFINE_ACC, dt, acc_src, int64_t{ctx.acc_num++});
  UOps after_in{acc};
  after_in.insert(after_in.end(), rngs.begin(), rngs.end());
  UOpRef cur = UOp::make(Ops::LOAD, dt, {UOp::make(Ops::AFTER, dt, after_in)});
  UOpRef upd = UOp::make(Ops::STORE, dtypes::void_, {acc, alu(op, cur, ucast(red->src[0], dt))});
  UOps end_src{upd};
  end_src.insert(end_src.end(), rngs.begin(), rngs.end());
  UOpRef end = UOp::make(Ops::END, dtypes::void_, end_src);
  return UOp::make(Ops::LOAD, dt, {UOp::make(Ops::AFTER, dt, {acc, end})});
}
bool is_acc_end(const UOpRef& e) {
  if (e->op != Ops::END) return false;
  const UOpRef& b = e->src[0];
  if (b->op == Ops::STORE) return b->src[0]->op == Ops::DEFINE_ACC;
  if (b->op == Ops::GROUP)
    return std::all_of(b->src.begin(), b->src.end(), [](auto& s) { return s->op == Ops::STORE && s->src[0]->op == Ops::DEFINE_ACC; });
  return false;
}

// Which of `ends` each of them reaches through its sources: one walk over the graph in `topo` (sources first), each
// node's set of ends below it as a bitset, instead of a walk of the graph below each pair of ends
class EndReach {
 public:
  EndReach(const std::vector<UOpRef>& topo, const UOps& ends) : words_((ends.size() + 63) / 64), end_row_(ends.size()) {
    PtrMap<size_t> end_index(ends.size());
    for (size_t i = 0; i < ends.size(); ++i) *end_index.try_emplace(ends[i].get()).first = i;
    PtrMap<size_t> row(topo.size());
    std::vector<uint64_t> bits;
    for (const UOpRef& u : topo) {
      const size_t r = bits.size() / words_;
      bits.resize(bits.size() + words_, 0);
      for (const UOpRef& s : u->src) {
        const size_t* sr = row.find(s.get());
        if (!sr) continue;
        for (size_t w = 0; w < words_; ++w) bits[r * words_ + w] |= bits[*sr * words_ + w];
        if (const size_t* e = end_index.find(s.get())) bits[r * words_ + *e / 64] |= uint64_t{1} << (*e % 64);
      }
      *row.try_emplace(u.get()).first = r;
      if (const size_t* e = end_index.find(u.get())) end_row_[*e] = r;
    }
    bits_ = std::move(bits);
  }
  // whether end a depends on end b (b is among a's sources, transitively)
  bool depends(size_t a, size_t b) const { return (bits_[end_row_[a] * words_ + b / 64] >> (b % 64)) & 1; }

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
  std::vector<size_t> end_row_;
};
}  // namespace

// ranges of `x` renamed by `map`, without entering loops that close one of the renamed ranges (those are complete
// loops of their own whose results this body reads)
UOpRef lowering::rename_ranges(const UOpRef& x, const SubMap& map, std::unordered_map<const UOp*, UOpRef>& memo) {
  if (auto it = map.find(x.get()); it != map.end()) return it->second;
  if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
  UOpRef out = x;
  bool closes = x->op == Ops::END && std::any_of(x->src.begin() + 1, x->src.end(), [&](auto& r) { return map.count(r.get()); });
  if (!closes) {
    UOps ns;
    bool changed = false;
    for (auto& s : x->src) {
      ns.push_back(rename_ranges(s, map, memo));
      changed = changed || ns.back() != s;
    }
    if (changed) out = x->replace_src(std::move(ns));
  }
  return memo[x.get()] = out;
}

namespace {

// Accumulator loops over the same ranges: those in the same loop nest that do not depend on each other become one
// loop; every other one gets ranges of its own (new ids), so each RANGE is closed by exactly one END (as the
// reference's merge_reduce_ends, which clones the ranges of ENDs at another nesting)
UOpRef merge_reduce_ends(const UOpRef& sink) {
  std::map<std::vector<const UOp*>, UOps> groups;
  std::vector<std::vector<const UOp*>> order;
  int64_t next_id = 0;
  const std::vector<UOpRef> topo = sink->toposort();
  for (auto& u : topo) {
    if (u->op == Ops::RANGE) next_id = std::max(next_id, rid(u) + 1);
    if (!is_acc_end(u)) continue;
    std::vector<const UOp*> key;
    for (size_t i = 1; i < u->src.size(); ++i) key.push_back(u->src[i].get());
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(u);
  }
  SubMap map;
  for (auto& key : order) {
    UOps& ends = groups[key];
    if (ends.size() < 2) continue;
    // loops that can share one END: same enclosing ranges, independent of each other
    std::vector<UOps> loops;
    std::vector<std::vector<size_t>> members;  // each loop's ends, as indices into `ends`
    std::vector<std::vector<UOpRef>> contexts;
    const EndReach reach(topo, ends);
    for (size_t i = 0; i < ends.size(); ++i) {
      const UOpRef& e = ends[i];
      auto ctx = e->ranges();
      size_t k = 0;
      for (; k < loops.size(); ++k) {
        if (contexts[k] != ctx) continue;
        bool independent = std::none_of(members[k].begin(), members[k].end(), [&](size_t o) { return reach.depends(i, o) || reach.depends(o, i); });
        if (independent) break;
      }
      if (k == loops.size()) {
        loops.emplace_back();
        members.emplace_back();
        contexts.push_back(ctx);
      }
      loops[k].push_back(e);
      members[k].push_back(i);
    }
    for (size_t k = 0; k < loops.size(); ++k) {
      UOps rs(loops[k][0]->src.begin() + 1, loops[k][0]->src.end());
      SubMap rename;
      if (k > 0)
        for (auto& r : rs) {
          RangeArg ra = r->as<RangeArg>();
          ra.id = next_id++;
          UOpRef nr = UOp::make(Ops::RANGE, r->dtype, r->src, ra);
          rename[r.get()] = nr;
          r = nr;
        }
      UOps stores;
      for (auto& e : loops[k]) {
        std::unordered_map<const UOp*, UOpRef> memo;
        UOpRef body = k > 0 ? rename_ranges(e->src[0], rename, memo) : e->src[0];
        if (body->op == Ops::GROUP) stores.insert(stores.end(), body->src.begin(), body->src.end());
        else stores.push_back(body);
      }
      if (k == 0 && loops[k].size() == 1) continue;
      UOps ns{stores.size() == 1 ? stores[0] : UOp::make(Ops::GROUP, dtypes::void_, stores)};
      ns.insert(ns.end(), rs.begin(), rs.end());
      UOpRef merged = UOp::make(Ops::END, dtypes::void_, ns);
      for (auto& e : loops[k]) map[e.get()] = merged;
    }
  }
  return map.empty() ? nullptr : substitute(sink, map);
}

}  // namespace

const PatternMatcher& pm_remove_reduces() {
  static const PatternMatcher pm({
      rule("GROUP_REDUCE -> partials in a LOCAL buffer, reduced over the group", {Ops::REDUCE},
           [](const UOpRef& x, ReduceContext& ctx) { return group_reduce(x, ctx); }),
      rule("REDUCE(x) without ranges -> x", {Ops::REDUCE}, [](const UOpRef& x) { return x->src.size() == 1 ? x->src[0] : nullptr; }),
      rule("REDUCE over ranges -> accumulator loop", {Ops::REDUCE},
           [](const UOpRef& x, ReduceContext& ctx) { return reduce_to_acc(x, ctx); }),
      rule("merge accumulator ENDs over the same ranges", {Ops::SINK}, [](const UOpRef& x) { return merge_reduce_ends(x); }),
  });
  return pm;
}

}  // namespace ts
