// simplify: the range passes around the opts (the reference's codegen/simplify.py): pm_flatten_range ("flatten
// range"), pm_split_ranges ("split ranges"), pm_simplify_ranges ("simplify ranges"), pm_reduce_mul_chain (with the empty
// reduces: the reference's reduce_mul_chain of uop/symbolic.py) and pm_postopt's extras ("postopt symbolic": size-1
// ranges, pm_reduce_unparented, pm_move_where_on_load).
#include "engine/codegen/lowering.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/codegen/lowering_internal.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace lowering;

namespace {

// rewrite without reporting to the trace listener (helper rewrites inside a rule)
UOpRef quiet_rewrite(const UOpRef& x, const PatternMatcher& pm) {
  RewriteListener* saved = rewrite_listener();
  rewrite_listener() = nullptr;
  UOpRef out;
  try {
    out = graph_rewrite(x, pm, "quiet");
  } catch (...) {
    rewrite_listener() = saved;
    throw;
  }
  rewrite_listener() = saved;
  return out;
}

// divisions and modulos in x's math, x itself included (or not)
size_t count_divmod(const UOpRef& x, bool with_x = false) {
  size_t n = 0;
  for (auto& u : x->toposort())
    if ((with_x || u.get() != x.get()) && (u->op == Ops::FLOORDIV || u->op == Ops::FLOORMOD || u->op == Ops::CDIV || u->op == Ops::CMOD)) ++n;
  return n;
}

// ---- flatten range ------------------------------------------------------------------------------
// what an END's or REDUCE's range list holds besides RANGEs in id order, once each: a range expression (r0*n + r1:
// its RANGEs take its place), else a constant (a range that became one: it goes), else nothing (order, repeats)
enum class RangeList { expr, constant, order };
RangeList range_list(const UOpRef& r) {
  bool constant = false;
  for (size_t i = 1; i < r->src.size(); ++i) {
    if (r->src[i]->op == Ops::CONST) constant = true;
    else if (!is_range(r->src[i])) return RangeList::expr;
  }
  return constant ? RangeList::constant : RangeList::order;
}
UOpRef flatten_range(const UOpRef& r, RangeList kind) {
  if (r->src.size() < 2 || range_list(r) != kind) return nullptr;
  UOps rs(r->src.begin() + 1, r->src.end());
  auto flat = ranges_of(rs);
  UOps ns{r->src[0]};
  ns.insert(ns.end(), flat.begin(), flat.end());
  return r->replace_src(std::move(ns));
}
UOpRef end_without_ranges(const UOpRef& x) { return x->src.size() == 1 ? x->src[0] : nullptr; }

}  // namespace

const PatternMatcher& pm_flatten_range() {
  static const PatternMatcher pm({
      rule("END(x, r0*n + r1) -> END(x, r0, r1)", {Ops::END}, [](const UOpRef& x) { return flatten_range(x, RangeList::expr); }),
      rule("END(x, r, c) -> END(x, r) (a range that became a constant)", {Ops::END},
           [](const UOpRef& x) { return flatten_range(x, RangeList::constant); }),
      rule("END(x, r1, r0) -> END(x, r0, r1) (ranges in id order, once each)", {Ops::END},
           [](const UOpRef& x) { return flatten_range(x, RangeList::order); }),
      rule("REDUCE(x, r0*n + r1) -> REDUCE(x, r0, r1)", {Ops::REDUCE}, [](const UOpRef& x) { return flatten_range(x, RangeList::expr); }),
      rule("REDUCE(x, r, c) -> REDUCE(x, r) (a range that became a constant)", {Ops::REDUCE},
           [](const UOpRef& x) { return flatten_range(x, RangeList::constant); }),
      rule("REDUCE(x, r1, r0) -> REDUCE(x, r0, r1) (ranges in id order, once each)", {Ops::REDUCE},
           [](const UOpRef& x) { return flatten_range(x, RangeList::order); }),
      rule("END without ranges -> body", {Ops::END}, [](const UOpRef& x) { return end_without_ranges(x); }),
  });
  return pm;
}

namespace {

// pm_split_ranges: a range read as `r % c`, with c dividing its size, becomes (r_hi*c + r_lo) so both parts are
// loops of their own (why x.repeat(2, 3) of a 2x2 is E_2_2_3_2). New ids keep the order (id, hi) < (id, lo).
UOpRef mark_range_mod(const UOpRef& x, SplitRangesContext& ctx) {
  const UOpRef &r = x->src[0], &c = x->src[1];
  if (r->op != Ops::RANGE || c->op != Ops::CONST || r->src[0]->op != Ops::CONST) return nullptr;
  AxisType t = r->as<RangeArg>().type;
  if (t == AxisType::WARP || t == AxisType::DEVICE) return nullptr;
  int64_t size = r->src[0]->const_int(), cv = c->const_int();
  if (cv <= 0 || size % cv != 0) return nullptr;
  ctx.split.emplace(r.get(), std::make_pair(r, cv));
  return nullptr;
}
UOpRef split_marked_ranges(const UOpRef& sink, SplitRangesContext& ctx) {
  auto& split = ctx.split;
  if (split.empty()) return nullptr;
  // every range gets a dense new id in (old id, part) order
  std::vector<std::tuple<int64_t, int, const UOp*>> order;
  for (auto& u : sink->toposort())
    if (u->op == Ops::RANGE) {
      order.push_back({u->as<RangeArg>().id, 0, u.get()});
      if (split.count(u.get())) order.push_back({u->as<RangeArg>().id, 1, u.get()});
    }
  std::sort(order.begin(), order.end());
  std::map<std::pair<const UOp*, int>, int64_t> new_id;
  for (size_t i = 0; i < order.size(); ++i) new_id[{std::get<2>(order[i]), std::get<1>(order[i])}] = static_cast<int64_t>(i);
  SubMap map;
  for (auto& [u, part, r] : order) {
    if (part == 1) continue;
    RangeArg ra = r->as<RangeArg>();
    auto it = split.find(r);
    if (it == split.end()) {
      ra.id = new_id[{r, 0}];
      map[r] = UOp::make(Ops::RANGE, r->dtype, r->src, ra);
      continue;
    }
    int64_t c = it->second.second, size = r->src[0]->const_int();
    RangeArg hi = ra, lo = ra;
    hi.id = new_id[{r, 0}];
    lo.id = new_id[{r, 1}];
    UOpRef rhi = urange(size / c, hi.id, hi.type), rlo = urange(c, lo.id, lo.type);
    map[r] = alu(Ops::ADD, alu(Ops::MUL, rhi, iconst(c)), rlo);
  }
  split.clear();
  // END/REDUCE now list (r_hi*c + r_lo): make them list the ranges themselves again
  UOpRef out = graph_rewrite(substitute(sink, map), pm_flatten_range(), "flatten range");
  return simplify(out);
}

}  // namespace

const PatternMatcher& pm_split_ranges() {
  static const PatternMatcher pm({
      rule("mark ranges used as r % c", {Ops::FLOORMOD}, mark_range_mod),
      rule("split marked ranges into (r//c, r%c)", {Ops::SINK}, split_marked_ranges),
  });
  return pm;
}

namespace {

// ---- simplify ranges ----------------------------------------------------------------------------
UOpRef merge_adjacent(const UOpRef& u0) {
  UOpRef u = u0;
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    UOps ended(u->src.begin() + 1, u->src.end());
    if (ended.size() < 2 || !std::all_of(ended.begin(), ended.end(), is_range)) break;
    std::vector<std::pair<UOpRef, UOpRef>> pairs;
    if (u->op == Ops::END) {
      for (size_t i = 0; i + 1 < ended.size(); ++i) pairs.push_back({ended[i], ended[i + 1]});
    } else {
      for (auto& a : ended)
        for (auto& b : ended)
          if (a != b) pairs.push_back({a, b});
    }
    std::vector<std::vector<UOpRef>> reduce_ranges;
    for (auto& x : u->toposort())
      if (x->op == Ops::REDUCE) reduce_ranges.push_back(x->ranges());
    for (auto& [r0, r1] : pairs) {
      if (rtype(r0) != rtype(r1)) continue;
      bool same = std::all_of(reduce_ranges.begin(), reduce_ranges.end(), [&](const std::vector<UOpRef>& rr) {
        bool a = std::find(rr.begin(), rr.end(), r0) != rr.end(), b = std::find(rr.begin(), rr.end(), r1) != rr.end();
        return a == b;
      });
      if (!same) continue;
      const UOpRef &s0 = r0->src[0], &s1 = r1->src[0];
      // symbolic sizes merge too (a shrink to a Variable over a contiguous axis: r_(m*4))
      UOpRef size = s0->op == Ops::CONST && s1->op == Ops::CONST ? uconst_int(s0->dtype, s0->const_int() * s1->const_int())
                                                                 : quiet_rewrite(alu(Ops::MUL, s0, s1), symbolic());
      UOpRef nr = UOp::make(Ops::RANGE, r0->dtype, {size}, r0->arg);
      UOpRef nidx = substitute(u, {{r0.get(), alu(Ops::FLOORDIV, nr, s1)}, {r1.get(), alu(Ops::FLOORMOD, nr, s1)}});
      static const PatternMatcher symbolic_and_flatten = symbolic() + pm_flatten_range();
      nidx = quiet_rewrite(nidx, symbolic_and_flatten);
      if (count_divmod(nidx) <= count_divmod(u)) {
        u = nidx;
        changed = true;
        again = u->op == Ops::END || u->op == Ops::REDUCE;
        break;
      }
    }
  }
  return changed ? u : nullptr;
}

}  // namespace

const PatternMatcher& pm_simplify_ranges() {
  static const PatternMatcher pm({
      rule("END(x, r0, r1) -> END(x[r0 := r//n1, r1 := r%n1], r) (adjacent, no more div/mod)", {Ops::END},
           [](const UOpRef& x) { return merge_adjacent(x); }),
      rule("REDUCE(x, r0, r1) -> REDUCE(x[r0 := r//n1, r1 := r%n1], r) (no more div/mod)", {Ops::REDUCE},
           [](const UOpRef& x) { return merge_adjacent(x); }),
  });
  return pm;
}

namespace {

// ---- empty reduces -----------------------------------------------------------------------------
// a REDUCE over a range of size 0 is its identity (what the reference's scheduler makes of a size-0 reduce); its
// body may index empty buffers by x % 0
UOpRef empty_reduce(const UOpRef& red) {
  for (size_t i = 1; i < red->src.size(); ++i) {
    const UOpRef& r = red->src[i];
    if (is_range(r) && r->src[0]->op == Ops::CONST && r->src[0]->const_int() == 0) return reduce_identity(red->as<ReduceArg>().op, red->dtype);
  }
  return nullptr;
}

// ---- reduce mul chain ---------------------------------------------------------------------------
void split_mul(const UOpRef& x, UOps& out) {
  if (x->op == Ops::MUL) {
    for (auto& s : x->src) split_mul(s, out);
  } else {
    out.push_back(x);
  }
}
// factors of a reduced product that do not depend on the reduce ranges move after the REDUCE
UOpRef reduce_mul_chain(const UOpRef& red) {
  Ops op = red->as<ReduceArg>().op;
  if ((op != Ops::ADD && op != Ops::MAX) || red->src[0]->op != Ops::MUL || red->dtype != red->src[0]->dtype) return nullptr;
  UOps factors, inside, outside;
  split_mul(red->src[0], factors);
  UOps rngs(red->src.begin() + 1, red->src.end());
  for (auto& m : factors) {
    bool depends = false;
    for (auto& u : m->toposort())
      if (std::find(rngs.begin(), rngs.end(), u) != rngs.end()) depends = true;
    bool nonneg = m->op == Ops::CONST && !m->is<Invalid>() && m->const_float() >= 0;
    (!depends && (op != Ops::MAX || nonneg) ? outside : inside).push_back(m);
  }
  if (outside.empty()) return nullptr;
  UOpRef in = inside.empty() ? uconst(red->dtype, 1) : inside[0];
  for (size_t i = 1; i < inside.size(); ++i) in = alu(Ops::MUL, in, inside[i]);
  UOps ns{in};
  ns.insert(ns.end(), rngs.begin(), rngs.end());
  UOpRef out = UOp::make(Ops::REDUCE, red->dtype, ns, red->arg);
  for (auto& m : outside) out = alu(Ops::MUL, out, m);
  return out;
}

}  // namespace

const PatternMatcher& pm_reduce_mul_chain() {
  static const PatternMatcher pm({
      rule("reduce over an empty range -> its identity", {Ops::REDUCE}, [](const UOpRef& x) { return empty_reduce(x); }),
      rule("(x*y).reduce -> x.reduce * y (y without the reduce's ranges)", {Ops::REDUCE},
           [](const UOpRef& x) { return reduce_mul_chain(x); }),
  });
  return pm;
}

namespace {

// ---- postopt ------------------------------------------------------------------------------------
UOpRef range_size_one(const UOpRef& r) {
  if (r->src[0]->op == Ops::CONST && !r->src[0]->is<Invalid>() && r->src[0]->const_int() == 1) return uconst_int(r->dtype, 0);
  return nullptr;
}

UOpRef reduce_unparented(const UOpRef& red) {
  Ops op = red->as<ReduceArg>().op;
  if (op != Ops::ADD && op != Ops::MAX) return nullptr;
  auto used = red->src[0]->ranges();
  UOps parented, unparented;
  for (size_t i = 1; i < red->src.size(); ++i) {
    if (!is_range(red->src[i])) return nullptr;
    (std::find(used.begin(), used.end(), red->src[i]) != used.end() ? parented : unparented).push_back(red->src[i]);
  }
  if (unparented.empty()) return nullptr;
  UOpRef ret;
  if (!parented.empty() || red->dtype != red->src[0]->dtype) {
    UOps ns{red->src[0]};
    ns.insert(ns.end(), parented.begin(), parented.end());
    ret = UOp::make(Ops::REDUCE, red->dtype, ns, red->arg);
  } else {
    ret = red->src[0];
  }
  if (op == Ops::ADD)
    for (auto& r : unparented) {
      if (r->src[0]->op != Ops::CONST) return nullptr;
      ret = alu(Ops::MUL, ret, uconst(ret->dtype, static_cast<double>(r->src[0]->const_int())));
    }
  return ret;
}

UOpRef index_where_invalid(const UOpRef& x) {
  if (x->src.size() != 2) return nullptr;
  const UOpRef& i = x->src[1];
  if (i->op == Ops::WHERE && is_invalid(i->src[2])) return UOp::make(Ops::INDEX, x->dtype, {x->src[0], i->src[1], i->src[0]}, x->arg);
  return nullptr;
}

bool index_in_bounds(const UOpRef& index) {
  if (!is_global_param(index->src[0])) return true;
  UOpRef i = index->src[1];
  // a gated read only happens where its gate holds: its index math is bounded under the gate
  if (index->src.size() > 2) i = uop_given_valid(index->src[2], i);
  int64_t size = index->src[0]->as<ParamArg>().size;
  return i->vmin() >= 0 && i->vmax() < size;
}
// (lin) % size -> lin - q*size when the clauses of c keep lin in [q*size, (q+1)*size): the wrap a padded read's
// index gets, (i + size - 1) % size, is not needed under the pad's valid. lin's bound is found by taking each
// clause's expression (valid_bounds) out of lin wherever lin holds it times one factor (r4*8 + r7*8 is
// 8*(r4+r7)); what is left is bounded by its own terms. nullptr when that does not show one period.
UOpRef unwrap_given(const UOpRef& c, const UOpRef& idx) {
  if (idx->op != Ops::FLOORMOD || idx->src[1]->op != Ops::CONST || idx->src[1]->const_int() <= 0) return nullptr;
  const int64_t size = idx->src[1]->const_int();
  LinearTerms lin = linear_terms(idx->src[0]);
  std::map<const UOp*, int64_t> coeff;
  for (auto& [t, k] : lin.terms) coeff[t.get()] += k;
  int64_t lo = lin.constant, hi = lin.constant;
  for (const ValidBound& b : valid_bounds(c)) {
    LinearTerms et = linear_terms(b.expr);
    if (et.terms.empty()) continue;
    // the factor lin holds this expression's terms with (the same for all of them)
    auto first = coeff.find(et.terms[0].first.get());
    if (first == coeff.end() || first->second == 0 || first->second % et.terms[0].second != 0) continue;
    const int64_t a = first->second / et.terms[0].second;
    bool all = true;
    for (auto& [t, k] : et.terms) {
      auto f = coeff.find(t.get());
      all &= f != coeff.end() && f->second == a * k;
    }
    if (!all) continue;
    for (auto& [t, k] : et.terms) coeff[t.get()] -= a * k;
    // bounds of the terms without their constant
    const int64_t blo = b.lo.value_or(b.expr->vmin()) - et.constant, bhi = b.hi.value_or(b.expr->vmax()) - et.constant;
    lo += a > 0 ? a * blo : a * bhi;
    hi += a > 0 ? a * bhi : a * blo;
  }
  for (auto& [t, k] : lin.terms) {
    const int64_t k2 = coeff[t.get()];
    if (k2 == 0) continue;
    coeff[t.get()] = 0;  // (each term once)
    lo += k2 > 0 ? k2 * t->vmin() : k2 * t->vmax();
    hi += k2 > 0 ? k2 * t->vmax() : k2 * t->vmin();
  }
  return mod_in_one_period(idx->src[0], size, lo, hi);
}
bool has_clause(const UOps& clauses, const UOpRef& c) { return std::find(clauses.begin(), clauses.end(), c) != clauses.end(); }
// every read of x that may leave its buffer is gated by c as well: its gate becomes the conjunction of its own
// clauses and those of c it lacks (a pad over several axes nests one WHERE per axis, and each one's validity
// is needed to keep the read inside the buffer)
UOpRef gate_reads(const UOpRef& x, const UOpRef& c) {
  SubMap map;
  UOps want = split_and(c);
  // the read's gate with the clauses of c it lacks that `take` accepts added
  auto gate_with = [&](const UOpRef& u, const std::function<bool(const UOpRef&)>& take) {
    UOps have = u->src.size() > 2 ? split_and(u->src[2]) : UOps{};
    UOpRef g = u->src.size() > 2 ? u->src[2] : nullptr;
    for (auto& w : want)
      if (!has_clause(have, w) && take(w)) g = g ? alu(Ops::AND, g, w) : w;
    return g;
  };
  for (auto& u : x->toposort()) {
    if (u->op != Ops::INDEX || !is_global_param(u->src[0])) continue;
    if (index_in_bounds(u)) {
      // in bounds everywhere, often through a wrap ((i + size - 1) % size of a padded read): gated by all of c, the
      // index math c makes unneeded goes (the reference keeps a pad's valid on its read and simplifies under it)
      UOpRef simpler = unwrap_given(c, u->src[1]);
      if (!simpler) simpler = uop_given_valid(c, u->src[1]);
      if (count_divmod(simpler, true) >= count_divmod(u->src[1], true)) continue;
      map[u.get()] = UOp::make(Ops::INDEX, u->dtype, {u->src[0], simpler, gate_with(u, [](const UOpRef&) { return true; })}, u->arg);
      continue;
    }
    // as the reference's where_on_load: a clause moves when its ranges are the read's and it reads no other memory
    auto rs = u->src[1]->ranges();
    auto slice = u->src[1]->toposort();
    auto movable = [&](const UOpRef& w) {
      for (auto& r : w->ranges())
        if (std::find(rs.begin(), rs.end(), r) == rs.end()) return false;
      for (auto& t : w->toposort())
        if (t->op == Ops::INDEX && std::find(slice.begin(), slice.end(), t) == slice.end()) return false;
      return true;
    };
    const UOpRef g = gate_with(u, movable);
    if (!g) continue;
    if (u->src.size() > 2 && g == u->src[2]) continue;  // already gated by every clause of c
    map[u.get()] = UOp::make(Ops::INDEX, u->dtype, {u->src[0], u->src[1], g}, u->arg);
  }
  return map.empty() ? x : substitute(x, map);
}
// c.where(a, b): the reads of one branch gated by the condition it is taken under (c for a, !c for b)
UOpRef move_where_on_load(const UOpRef& w, size_t branch) {
  const UOpRef& c = w->src[0];
  UOps ns = w->src;
  ns[branch] = gate_reads(w->src[branch], branch == 1 ? c : alu(Ops::CMPNE, c, uconst_bool(true)));
  return ns[branch] == w->src[branch] ? nullptr : w->replace_src(std::move(ns));
}
// WHERE(c, read, 0) is the read itself when the read's gate holds only where c does (a gated-off read is 0)
UOpRef where_of_gated_read(const UOpRef& w) {
  const UOpRef &c = w->src[0], &x = w->src[2]->is_const_value(0) ? w->src[1] : nullptr;
  if (!x || w->src[2]->op != Ops::CONST) return nullptr;
  const UOpRef& idx = x->op == Ops::CAST ? x->src[0] : x;
  if (idx->op != Ops::INDEX || idx->src.size() < 3 || !is_global_param(idx->src[0])) return nullptr;
  UOps have = split_and(idx->src[2]);
  for (auto& clause : split_and(c))
    if (!has_clause(have, clause)) return nullptr;
  return x;
}

}  // namespace

const PatternMatcher& pm_postopt() {
  static const PatternMatcher pm = PatternMatcher({
      rule("range of size 1 -> 0", {Ops::RANGE}, [](const UOpRef& x) { return range_size_one(x); }),
      rule("max over ranges x does not use -> max without them", {Ops::REDUCE},
           [](const UOpRef& x) { return x->as<ReduceArg>().op == Ops::MAX ? reduce_unparented(x) : nullptr; }),
      rule("sum over ranges x does not use -> sum without them * their sizes", {Ops::REDUCE},
           [](const UOpRef& x) { return x->as<ReduceArg>().op == Ops::ADD ? reduce_unparented(x) : nullptr; }),
      rule("INDEX(p, valid.where(i, Invalid)) -> gated INDEX", {Ops::INDEX},
           [](const UOpRef& x) { return index_where_invalid(x); }),
      rule("c.where(a, b) -> c.where(a with its reads gated by c, b)", {Ops::WHERE}, [](const UOpRef& x) { return move_where_on_load(x, 1); }),
      rule("c.where(a, b) -> c.where(a, b with its reads gated by !c)", {Ops::WHERE}, [](const UOpRef& x) { return move_where_on_load(x, 2); }),
      rule("where(c, read gated by c, 0) -> the read", {Ops::WHERE}, [](const UOpRef& x) { return where_of_gated_read(x); }),
  }) + pm_flatten_range();
  return pm;
}

}  // namespace ts
