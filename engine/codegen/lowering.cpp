#include "engine/codegen/lowering.h"

#include "engine/uop/pattern.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "engine/codegen/opt.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts {

namespace {
using SubMap = std::unordered_map<const UOp*, UOpRef>;

bool is_range(const UOpRef& x) { return x->op == Ops::RANGE; }
AxisType rtype(const UOpRef& r) { return r->as<RangeArg>().type; }
int64_t rid(const UOpRef& r) { return r->as<RangeArg>().id; }
bool is_global_param(const UOpRef& x) {
  return x->op == Ops::PARAM && x->as<ParamArg>().addrspace != AddrSpace::ALU;
}
bool is_invalid(const UOpRef& x) { return x->op == Ops::CONST && x->is<Invalid>(); }
// the PARAM or BUFFER an INDEX / AFTER chain addresses (nullptr for anything else)
const UOp* buffer_uop(const UOp* x) {
  while (x->op == Ops::INDEX || x->op == Ops::AFTER || x->op == Ops::LOAD || x->op == Ops::STORE) x = x->src[0].get();
  return x->op == Ops::PARAM || x->op == Ops::BUFFER ? x : nullptr;
}
bool is_local_buffer(const UOp* b) { return b && b->op == Ops::BUFFER && b->as<ParamArg>().addrspace == AddrSpace::LOCAL; }
// an INDEX into memory: a buffer PARAM, or a LOCAL BUFFER (possibly behind the AFTER that orders it)
bool is_memory_index(const UOpRef& x) {
  return x->op == Ops::INDEX && (is_global_param(x->src[0]) || is_local_buffer(buffer_uop(x.get())));
}
bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int64_t log2i(int64_t v) {
  int64_t k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return k;
}

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
bool depends_on(const UOpRef& x, const UOp* y) {
  for (auto& u : x->toposort())
    if (u.get() == y) return true;
  return false;
}
// ranges of `x` renamed by `map`, without entering loops that close one of the renamed ranges (those are complete
// loops of their own whose results this body reads)
UOpRef rename_ranges(const UOpRef& x, const SubMap& map, std::unordered_map<const UOp*, UOpRef>& memo) {
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
// Accumulator loops over the same ranges: those in the same loop nest that do not depend on each other become one
// loop; every other one gets ranges of its own (new ids), so each RANGE is closed by exactly one END (as the
// reference's merge_reduce_ends, which clones the ranges of ENDs at another nesting)
UOpRef merge_reduce_ends(const UOpRef& sink) {
  std::map<std::vector<const UOp*>, UOps> groups;
  std::vector<std::vector<const UOp*>> order;
  int64_t next_id = 0;
  for (auto& u : sink->toposort()) {
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
    std::vector<std::vector<UOpRef>> contexts;
    for (auto& e : ends) {
      auto ctx = e->ranges();
      size_t k = 0;
      for (; k < loops.size(); ++k) {
        if (contexts[k] != ctx) continue;
        bool independent = std::none_of(loops[k].begin(), loops[k].end(), [&](const UOpRef& o) { return depends_on(e, o.get()) || depends_on(o, e.get()); });
        if (independent) break;
      }
      if (k == loops.size()) {
        loops.emplace_back();
        contexts.push_back(ctx);
      }
      loops[k].push_back(e);
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

// ---- gpudims ------------------------------------------------------------------------------------
UOpRef thread_to_core_id(const UOpRef& r, GpuDimsContext& ctx) {
  if (rtype(r) != AxisType::THREAD || r->src[0]->op != Ops::CONST) return nullptr;
  int64_t n = r->src[0]->const_int();
  ctx.threads = static_cast<int>(n);
  ParamArg pa;
  pa.slot = -1;
  pa.name = "core_id";
  pa.vmin = 0;
  pa.vmax = n - 1;
  pa.addrspace = AddrSpace::ALU;
  return ucast(UOp::make(Ops::PARAM, dtypes::int32, {}, pa), r->dtype);
}

// the reference's _dim_max: a launch dim's largest value
int64_t dim_max(const UOpRef& d) { return d->op == Ops::CONST ? d->const_int() : d->vmax(); }
bool same_dims(const UOps& a, const UOps& b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }
// (a, b, c, d) -> (ab, c, d): merge adjacent dims until they fit; nullopt when they cannot
std::optional<UOps> group_dims(UOps dims, const std::array<int64_t, 3>& max_sizes) {
  auto fits = [&] {
    if (dims.size() > max_sizes.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dim_max(dims[i]) > max_sizes[i]) return false;
    return true;
  };
  while (!fits()) {
    bool merged = false;
    for (size_t i = 0; i < max_sizes.size(); ++i) {
      if (i + 1 < dims.size() && dim_max(dims[i]) * dim_max(dims[i + 1]) <= max_sizes[i]) {
        UOpRef m = simplify(imul(dims[i], dims[i + 1]));
        dims.erase(dims.begin() + static_cast<long>(i), dims.begin() + static_cast<long>(i) + 2);
        dims.insert(dims.begin() + static_cast<long>(i), m);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}
std::string dims_str(const UOps& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i]->render();
  return s + (dims.size() == 1 ? ",)" : ")");
}
std::string max_str(const std::array<int64_t, 3>& m) {
  return "(" + std::to_string(m[0]) + ", " + std::to_string(m[1]) + ", " + std::to_string(m[2]) + ")";
}
// (a,) -> (b, c): a dim over its max gives its smallest factor to the next dim
UOps split_dims(const UOps& dims, const std::array<int64_t, 3>& max_sizes) {
  bool fits = true;
  for (size_t i = 0; i < dims.size() && i < max_sizes.size(); ++i) fits = fits && dim_max(dims[i]) <= max_sizes[i];
  if (fits) return dims;
  std::vector<int64_t> d;
  for (auto& x : dims) {
    if (x->op != Ops::CONST) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes) + ": a symbolic dim over its max");
    d.push_back(x->const_int());
  }
  while (d.size() < 3) d.push_back(1);
  for (size_t i = 0; i < d.size(); ++i) {
    while (d[i] > max_sizes[i]) {
      int64_t div = 1;
      for (int64_t f = 2; f * f <= d[i] || f == 2; ++f)
        if (d[i] % f == 0) {
          div = f;
          break;
        }
      if (div == 1 || d[i] / div == 0) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes));
      d[i] /= div;
      d[(i + 1) % d.size()] *= div;
    }
  }
  if (d[2] == 1) d.resize(2);
  UOps out;
  for (int64_t v : d) out.push_back(iconst(v));
  return out;
}

UOpRef special(const UOpRef& size, const std::string& name) { return UOp::make(Ops::SPECIAL, dtypes::weakint, {size}, name); }

bool is_gpu_global(AxisType t) { return t == AxisType::GLOBAL || t == AxisType::THREAD; }
bool is_gpu_local(AxisType t) { return t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE; }

// the launch ranges of a GPU kernel's SINK not yet given SPECIALs: false when there are none (or not a GPU)
struct LaunchRanges {
  UOps topo;
  std::map<int64_t, UOpRef> all_ranges;  // by id, as the reference's dict keyed by the range's arg minus its type
  std::vector<int64_t> global_dims, local_dims;
};
bool launch_ranges(const UOpRef& s, const GpuDimsContext& ctx, LaunchRanges& out) {
  if (!ctx.target || ctx.target->has_threads || !s->is<KernelInfo>()) return false;
  out.topo = s->toposort();
  for (auto& x : out.topo) {
    if (x->op == Ops::SPECIAL) return false;
    if (x->op == Ops::RANGE) out.all_ranges[rid(x)] = x;
  }
  for (auto& [id, r] : out.all_ranges) {
    if (is_gpu_global(rtype(r))) out.global_dims.push_back(id);
    if (is_gpu_local(rtype(r))) out.local_dims.push_back(id);
  }
  return !out.global_dims.empty() || !out.local_dims.empty();
}
// a global store that does not use every local range is done by lane 0 of the missing ones
UOpRef gate_stores_to_lane0(const UOpRef& s, GpuDimsContext& ctx) {
  LaunchRanges lr;
  if (!launch_ranges(s, ctx, lr)) return nullptr;
  SubMap gates;
  for (auto& x : lr.topo) {
    if (x->op != Ops::STORE || x->src[0]->op != Ops::INDEX || !is_global_param(x->src[0]->src[0])) continue;
    const UOpRef& idx = x->src[0];
    auto used = idx->ranges();
    UOpRef mask;
    for (int64_t id : lr.local_dims) {
      const UOpRef& r = lr.all_ranges[id];
      if (std::find(used.begin(), used.end(), r) != used.end()) continue;
      UOpRef eq = alu(Ops::CMPEQ, r, uconst_int(r->dtype, 0));
      mask = mask ? alu(Ops::AND, mask, eq) : eq;
    }
    if (!mask) continue;
    UOps ns{idx->src[0], idx->src[1], idx->src.size() > 2 ? alu(Ops::AND, idx->src[2], mask) : mask};
    gates[idx.get()] = UOp::make(Ops::INDEX, idx->dtype, ns, idx->arg, idx->tag);
  }
  return gates.empty() ? nullptr : substitute(s, gates);
}
// which SPECIALs a kernel's launch ranges become: gidx only (no local ranges), gidx and lidx, or idx (NOLOCALS)
enum class LaunchDims { global_only, with_locals, no_locals };
UOpRef add_gpudims(const UOpRef& s, GpuDimsContext& ctx, LaunchDims kind) {
  LaunchRanges lr;
  if (!launch_ranges(s, ctx, lr)) return nullptr;
  const LaunchDims have = ctx.dont_use_locals ? LaunchDims::no_locals : lr.local_dims.empty() ? LaunchDims::global_only : LaunchDims::with_locals;
  if (have != kind) return nullptr;
  UOps global_shape, local_shape;
  for (int64_t id : lr.global_dims) global_shape.push_back(simplify(lr.all_ranges[id]->src[0]));
  for (int64_t id : lr.local_dims) local_shape.push_back(simplify(lr.all_ranges[id]->src[0]));
  UOps idxs;
  if (ctx.dont_use_locals) {
    if (!lr.local_dims.empty()) throw Error("add gpudims: NOLOCALS with local dims");
    idxs = get_grouped_dims("idx", global_shape, ctx.target->global_max, true);
  } else {
    UOps local_idxs = get_grouped_dims("lidx", local_shape, ctx.target->local_max, false);
    idxs = get_grouped_dims("gidx", global_shape, ctx.target->global_max, true);
    idxs.insert(idxs.end(), local_idxs.begin(), local_idxs.end());
  }
  SubMap subs;
  std::vector<int64_t> dims = lr.global_dims;
  dims.insert(dims.end(), lr.local_dims.begin(), lr.local_dims.end());
  for (auto& x : lr.topo) {
    if (x->op != Ops::RANGE || rtype(x) == AxisType::REDUCE) continue;
    auto it = std::find(dims.begin(), dims.end(), rid(x));
    if (it != dims.end()) subs[x.get()] = idxs[static_cast<size_t>(it - dims.begin())];
  }
  return subs.empty() ? nullptr : substitute(s, subs);
}

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

// ---- dtypes -------------------------------------------------------------------------------------
UOpRef commit_to(const UOpRef& x, DType dt) {
  if (!is_weak(x->dtype) || is_weak(dt)) return x;
  if (x->op == Ops::CONST) {
    if (x->is<Invalid>()) return x;
    if (is_float(dt)) return uconst(dt, x->const_float());
    if (is_bool(dt)) return uconst_bool(x->const_float() != 0);
    return uconst_int(dt, x->const_int());
  }
  return UOp::make(Ops::CAST, dt, {x});
}
// the strong dtype a weak value takes under a BITCAST to `to`: the int (or float) of the same size
DType bitcast_source_dtype(DType weak, DType to) {
  switch (to->bitsize) {
    case 8: return dtypes::int8;
    case 16: return is_float(weak) ? dtypes::float16 : dtypes::int16;
    case 32: return is_float(weak) ? dtypes::float32 : dtypes::int32;
    default: return is_float(weak) ? dtypes::float64 : dtypes::int64;
  }
}
// a weak constant under a BITCAST (a folded pad value) has the bitcast's size
UOpRef commit_bitcast(const UOpRef& x) {
  if (!is_weak(x->src[0]->dtype) || is_weak(x->dtype)) return nullptr;
  return UOp::make(Ops::BITCAST, x->dtype, {commit_to(x->src[0], bitcast_source_dtype(x->src[0]->dtype, x->dtype))}, x->arg, x->tag);
}
// x with its weak sources from..to-1 committed to dt; nullptr when none is weak
UOpRef commit_srcs(const UOpRef& x, size_t from, size_t to, DType dt) {
  UOps ns = x->src;
  bool same = true;
  for (size_t i = from; i < to && i < ns.size(); ++i) {
    ns[i] = commit_to(ns[i], dt);
    same = same && ns[i] == x->src[i];
  }
  return same ? nullptr : UOp::make(x->op, x->dtype, ns, x->arg, x->tag);
}
// x of dtype `from` as the same node of dtype `to` (nullptr for another dtype)
UOpRef retype(const UOpRef& x, DType from, DType to) {
  return x->dtype == from ? UOp::make(x->op, to, x->src, x->arg, x->tag) : nullptr;
}
bool is_other_op(Ops o) { return o != Ops::CONST && o != Ops::RANGE; }
// math whose operands all take its dtype (not comparisons, whose result is a bool, nor WHERE, whose gate is one)
bool is_typed_math_op(Ops o) { return group::alu(o) && !group::comparison(o) && o != Ops::WHERE; }

// ---- decompositions -----------------------------------------------------------------------------
// x//c or x%c of a non-negative x by a positive constant c, a power of two or not
Pat nonneg_by(Ops op, bool pow2) {
  return Pat::op(op, {Pat::var("x").such_that([](const UOp& u) { return u.vmin() >= 0; }),
                      Pat::cvar("c").such_that([pow2](const UOp& u) { return !u.is<Invalid>() && u.const_int() > 0 && is_pow2(u.const_int()) == pow2; })})
      .such_that([](const UOp& u) { return is_int(u.dtype); });
}
// the reference's threefry2x32: THREEFRY(x, key) on uint64 runs as 20 rounds over the uint32 halves (no renderer has
// the op itself)
UOpRef threefry2x32(const UOpRef& x, const UOpRef& key) {
  DType u32 = dtypes::uint32, u64 = dtypes::uint64;
  auto c32 = [&](int64_t v) { return uconst_int(u32, v); };
  auto hi = [&](const UOpRef& v) { return ucast(alu(Ops::SHR, v, uconst_int(u64, 32)), u32); };
  UOpRef x0 = ucast(x, u32), x1 = hi(x), key0 = ucast(key, u32), key1 = hi(key);
  const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOpRef ks[3] = {key1, alu(Ops::XOR, alu(Ops::XOR, key0, key1), c32(0x1BD11BDA)), key0};
  UOpRef xr[2] = {alu(Ops::ADD, x0, ks[2]), alu(Ops::ADD, x1, ks[0])};
  for (int i = 0; i < 5; ++i) {
    for (int r : rotations[i % 2]) {
      UOpRef s = alu(Ops::ADD, xr[0], xr[1]);
      UOpRef rot = alu(Ops::ADD, alu(Ops::SHL, xr[1], c32(r)), alu(Ops::SHR, xr[1], c32(32 - r)));
      xr[0] = s;
      xr[1] = alu(Ops::XOR, s, rot);
    }
    xr[0] = alu(Ops::ADD, xr[0], ks[i % 3]);
    xr[1] = alu(Ops::ADD, alu(Ops::ADD, xr[1], ks[(i + 1) % 3]), c32(i + 1));
  }
  return alu(Ops::OR, alu(Ops::SHL, ucast(xr[1], u64), uconst_int(u64, 32)), ucast(xr[0], u64));
}

// the late decompositions into the renderers' ops, one rewrite a rule (MUL's tried in this order)
std::vector<Rule> late_decomp_rules() {
  const Pat a = Pat::var("a"), b = Pat::var("b"), x = Pat::var("x");
  return {
      rule("max(a, b) -> a<b ? b : a", Pat::op(Ops::MAX, {a, b}),
           [](const Captures& c, const UOpRef&) { return alu(Ops::WHERE, alu(Ops::CMPLT, c["a"], c["b"]), c["b"], c["a"]); }),
      // one rounding, as the reference's FDIV decomposition (15/14 is 1.0714285373687744f, 15 * (1/14) one ulp above)
      rule("a * (1/b) -> a / b (floats)",
           Pat::commute(Ops::MUL, Pat::op(Ops::RECIPROCAL, {b}), a).such_that([](const UOp& u) { return is_float(u.dtype); }),
           [](const Captures& c, const UOpRef& r) { return UOp::make(Ops::FDIV, r->dtype, {c["a"], c["b"]}); }),
      rule("x * -1 -> -x", Pat::commute(Ops::MUL, Pat::cnst(-1), x).such_that([](const UOp& u) { return !is_bool(u.dtype) && !is_unsigned(u.dtype); }),
           [](const Captures& c, const UOpRef&) { return alu(Ops::NEG, c["x"]); }),
      rule("x * 2^k -> x << k (x >= 0)",
           Pat::commute(Ops::MUL, Pat::cvar("c").such_that([](const UOp& u) { return !u.is<Invalid>() && is_pow2(u.const_int()) && u.const_int() > 1; }), x)
               .such_that([](const UOp& u) { return is_int(u.dtype) && !is_weak(u.dtype); }),
           [](const Captures& c, const UOpRef& r) -> UOpRef {
             if (c["x"]->vmin() < 0) return nullptr;
             return alu(Ops::SHL, c["x"], uconst_int(r->dtype, log2i(c["c"]->const_int())));
           }),
      rule("!(a != b) -> a == b",
           Pat::op(Ops::CMPNE, {Pat::op(Ops::CMPNE, {a, b}), Pat::cvar("t").such_that([](const UOp& u) { return is_bool(u.dtype) && u.const_float() != 0; })}),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CMPEQ, c["a"], c["b"]); }),
      rule("a + -b -> a - b", a + -b, [](const Captures& c, const UOpRef&) { return alu(Ops::SUB, c["a"], c["b"]); }),
  };
}

// ---- bfloat16 through float32 ------------------------------------------------------------------
// no CPU computes in bfloat16 (clang has no conversions for it, LLVM calls a runtime function): as the reference's
// create_non_native_float_pats + pm_manual_bf16_cast, bf16 math runs in float and the conversions are bit
// operations, so only loads, stores and bitcasts of bf16 remain
bool bf16(DType dt) { return dt == dtypes::bfloat16; }
UOpRef bf16_to_float(const UOpRef& x) {
  UOpRef bits = ucast(UOp::make(Ops::BITCAST, dtypes::uint16, {x}), dtypes::uint32);
  return UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SHL, bits, uconst_int(dtypes::uint32, 16))});
}
// round to nearest even; a NaN keeps a mantissa bit so it stays a NaN
UOpRef float_to_bf16(const UOpRef& f) {
  auto u = [](int64_t v) { return uconst_int(dtypes::uint32, v); };
  UOpRef x = UOp::make(Ops::BITCAST, dtypes::uint32, {f});
  UOpRef finite = alu(Ops::CMPNE, alu(Ops::AND, alu(Ops::NEG, x), u(0x7f800000)), u(0));
  UOpRef rounded = alu(Ops::ADD, alu(Ops::ADD, x, alu(Ops::AND, alu(Ops::SHR, x, u(16)), u(1))), u(0x7fff));
  UOpRef nan = alu(Ops::WHERE, alu(Ops::CMPNE, alu(Ops::AND, x, u(0xffff)), u(0)), alu(Ops::OR, x, u(0x10000)), x);
  UOpRef r = alu(Ops::WHERE, finite, rounded, nan);
  return UOp::make(Ops::BITCAST, dtypes::bfloat16, {ucast(alu(Ops::SHR, r, u(16)), dtypes::uint16)});
}
// ---- what bfloat16 and fp8 share: bytes in memory, math in float32 ----------------------------------------
// `x`, a value whose dtype passes `ok`
Pat dtype_var(bool (*ok)(DType)) { return Pat::var("x").such_that([ok](const UOp& u) { return ok(u.dtype); }); }
// `p` when its own dtype passes `ok`
Pat with_dtype(Pat p, bool (*ok)(DType)) { return std::move(p).such_that([ok](const UOp& u) { return ok(u.dtype); }); }
bool is_f32(DType d) { return d == dtypes::float32; }
bool not_f32(DType d) { return d != dtypes::float32; }
UOpRef f32(const UOpRef& v) { return ucast(v, dtypes::float32); }
// a cmp b of a narrow float type: compared as float32
UOpRef compare_in_float32(const UOpRef& x) { return UOp::make(x->op, x->dtype, {f32(x->src[0]), f32(x->src[1])}, x->arg); }
// f(x) of a narrow float type: computed in float32, cast back
UOpRef math_in_float32(const UOpRef& x) {
  UOps ns = x->src;
  for (auto& s : ns) s = f32(s);
  return ucast(UOp::make(x->op, dtypes::float32, ns, x->arg), x->dtype);
}

// the rules, one rewrite each (a CAST, BITCAST or ALU op is tried on its own rules in this order)
std::vector<Rule> bf16_rules() {
  const Pat x = Pat::var("x");
  auto from = dtype_var;
  auto to = with_dtype;
  return {
      rule("bf16 constant -> BITCAST of its bits (rounded as from float)",
           Pat::cvar("c").of({dtypes::bfloat16}).such_that([](const UOp& u) { return !u.is<Invalid>(); }),
           [](const Captures& c, const UOpRef&) {
             // the constant's bits, rounded as a cast from float would
             float v = static_cast<float>(c["c"]->const_float());
             uint32_t b;
             std::memcpy(&b, &v, 4);
             bool nan = std::isnan(v);
             uint32_t r = nan ? ((b & 0xffffu) ? (b | 0x10000u) : b) : b + ((b >> 16) & 1u) + 0x7fffu;
             return UOp::make(Ops::BITCAST, dtypes::bfloat16, {uconst_int(dtypes::uint16, r >> 16)});
           }),
      rule("bf16 x.cast(bf16) -> x", to(Pat::op(Ops::CAST, {from(bf16)}), bf16), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("bf16 x.cast(float32) -> BITCAST(bits << 16)", to(Pat::op(Ops::CAST, {from(bf16)}), is_f32),
           [](const Captures& c, const UOpRef&) { return bf16_to_float(c["x"]); }),
      rule("bf16 x.cast(T) -> BITCAST(bits << 16).cast(T)", to(Pat::op(Ops::CAST, {from(bf16)}), not_f32),
           [](const Captures& c, const UOpRef& r) { return ucast(bf16_to_float(c["x"]), r->dtype); }),
      rule("float32 x.cast(bf16) -> BITCAST(rounded bits >> 16)", to(Pat::op(Ops::CAST, {from(is_f32)}), bf16),
           [](const Captures& c, const UOpRef&) { return float_to_bf16(c["x"]); }),
      rule("x.cast(bf16) -> BITCAST(rounded bits of x.cast(float32) >> 16)", to(Pat::op(Ops::CAST, {from(not_f32)}), bf16),
           [](const Captures& c, const UOpRef&) { return float_to_bf16(ucast(c["x"], dtypes::float32)); }),
      // bitcasts compose (LLVM would otherwise turn half -> bf16 -> i16 into an int -> bf16 conversion x86 cannot select)
      rule("BITCAST(BITCAST(x)) to x's dtype -> x", Pat::op(Ops::BITCAST, {Pat::op(Ops::BITCAST, {x})}),
           [](const Captures& c, const UOpRef& r) { return c["x"]->dtype == r->dtype ? c["x"] : nullptr; }),
      rule("BITCAST(BITCAST(x)) -> BITCAST(x)", Pat::op(Ops::BITCAST, {Pat::op(Ops::BITCAST, {x})}),
           [](const Captures& c, const UOpRef& r) { return UOp::make(Ops::BITCAST, r->dtype, {c["x"]}); }),
      rule("a cmp b of bf16 -> a.cast(float32) cmp b.cast(float32)", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ},
           [](const UOpRef& x) { return bf16(x->src[0]->dtype) ? compare_in_float32(x) : nullptr; }),
      on_ops(group::ops_where(is_typed_math_op), rule("bf16 f(x) -> f(x.cast(float32)).cast(bf16)", {},
                                                      [](const UOpRef& x) { return bf16(x->dtype) ? math_in_float32(x) : nullptr; })),
      rule("bf16 c.where(a, b) -> c.where(a.cast(float32), b.cast(float32)).cast(bf16)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        if (!bf16(x->dtype)) return nullptr;
        return ucast(UOp::make(Ops::WHERE, dtypes::float32, {x->src[0], f32(x->src[1]), f32(x->src[2])}, x->arg), dtypes::bfloat16);
      }),
  };
}

// ---- fp8 through float32 -----------------------------------------------------------------------
// no renderer has an 8-bit float: as bfloat16, fp8 values stay bytes (loads, stores, bitcasts and selects), their
// math runs in float32 and the conversions are integer operations on the float32 bits. Both directions are exact
// to the format (subnormals included): fp8 -> float32 is exact, float32 -> fp8 rounds to nearest even, saturates
// finite values past the largest to it, and maps NaN and inf as the format has them (the host's float_to_fp8)
UOpRef u32c(int64_t v);
UOpRef fp8_bits(const UOpRef& x) { return ucast(UOp::make(Ops::BITCAST, dtypes::uint8, {x}), dtypes::uint32); }
UOpRef fp8_value(const UOpRef& x) {
  const DType dt = x->dtype;
  const Fp8Format f = fp8_format(dt);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto eq = [](const UOpRef& a, int64_t v) { return alu(Ops::CMPEQ, a, u32c(v)); };
  UOpRef b = fp8_bits(x), em = alu(Ops::AND, b, u32c(0x7f));
  UOpRef e = alu(Ops::SHR, em, u32c(f.man_bits)), m = alu(Ops::AND, em, u32c((1 << f.man_bits) - 1));
  // a normal's exponent and mantissa fields moved into float32's, the exponent rebiased
  UOpRef normal = UOp::make(Ops::BITCAST, dtypes::float32,
                            {alu(Ops::ADD, alu(Ops::SHL, em, u32c(23 - f.man_bits)), u32c(int64_t{127 - f.bias} << 23))});
  // a subnormal is its mantissa times the smallest subnormal
  UOpRef sub = alu(Ops::MUL, ucast(m, dtypes::float32), uconst(dtypes::float32, std::ldexp(1.0, 1 - f.bias - f.man_bits)));
  UOpRef mag = alu(Ops::WHERE, eq(e, 0), sub, normal);
  const int64_t exp_max = (1 << f.exp_bits) - 1;
  if (dt == dtypes::fp8e5m2) mag = alu(Ops::WHERE, eq(e, exp_max), alu(Ops::WHERE, eq(m, 0), uconst(dtypes::float32, inf), uconst(dtypes::float32, nan)), mag);
  UOpRef sign = alu(Ops::SHL, alu(Ops::AND, b, u32c(0x80)), u32c(24));
  UOpRef v = UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::OR, UOp::make(Ops::BITCAST, dtypes::uint32, {mag}), sign)});
  if (dt == dtypes::fp8e4m3) return alu(Ops::WHERE, eq(em, 0x7f), uconst(dtypes::float32, nan), v);
  if (is_fp8_fnuz(dt)) return alu(Ops::WHERE, eq(b, 0x80), uconst(dtypes::float32, nan), v);
  return v;
}
UOpRef fp8_code(const UOpRef& fv, DType dt) {
  const Fp8Format f = fp8_format(dt);
  auto lt = [](const UOpRef& a, const UOpRef& b) { return alu(Ops::CMPLT, a, b); };
  // (v + half - 1 + the kept lowest bit) >> s: v >> s rounded to nearest even
  auto rne = [](const UOpRef& v, const UOpRef& s, const UOpRef& half_minus_1) {
    UOpRef lsb = alu(Ops::AND, alu(Ops::SHR, v, s), u32c(1));
    return alu(Ops::SHR, alu(Ops::ADD, alu(Ops::ADD, v, half_minus_1), lsb), s);
  };
  UOpRef x = UOp::make(Ops::BITCAST, dtypes::uint32, {fv});
  UOpRef a = alu(Ops::AND, x, u32c(0x7fffffff)), sign = alu(Ops::AND, alu(Ops::SHR, x, u32c(24)), u32c(0x80));
  // normal in fp8: the rebiased bits, the mantissa rounded (a carry moves the exponent up, as it should)
  const int s_norm = 23 - f.man_bits;
  UOpRef normal = rne(alu(Ops::SUB, a, u32c(int64_t{127 - f.bias} << 23)), u32c(s_norm), u32c((1 << (s_norm - 1)) - 1));
  // subnormal in fp8: the float32 significand as a count of the smallest subnormal, its shift capped at 31 (a
  // smaller value than that rounds to 0 anyway)
  UOpRef sig = alu(Ops::OR, alu(Ops::AND, a, u32c(0x7fffff)), u32c(0x800000));
  UOpRef s = alu(Ops::SUB, u32c(151 - f.bias - f.man_bits), alu(Ops::SHR, a, u32c(23)));
  s = alu(Ops::WHERE, lt(s, u32c(31)), s, u32c(31));
  UOpRef sub = rne(sig, s, alu(Ops::SUB, alu(Ops::SHL, u32c(1), alu(Ops::SUB, s, u32c(1))), u32c(1)));
  UOpRef r = alu(Ops::WHERE, lt(a, u32c(int64_t{128 - f.bias} << 23)), sub, normal);
  const int64_t max_code = fp8_max_code(dt);
  r = alu(Ops::WHERE, lt(u32c(max_code), r), u32c(max_code), r);
  UOpRef finite = lt(a, u32c(0x7f800000)), code;
  if (is_fp8_fnuz(dt)) {  // NaN and inf are 0x80; no negative zero
    code = alu(Ops::WHERE, finite, alu(Ops::WHERE, alu(Ops::CMPEQ, r, u32c(0)), u32c(0), alu(Ops::OR, r, sign)), u32c(0x80));
  } else {  // e4m3: NaN and inf are NaN (0x7f); e5m2: inf 0x7c, NaN 0x7f; both signed
    UOpRef special = dt == dtypes::fp8e4m3 ? u32c(0x7f) : alu(Ops::WHERE, alu(Ops::CMPEQ, a, u32c(0x7f800000)), u32c(0x7c), u32c(0x7f));
    code = alu(Ops::OR, alu(Ops::WHERE, finite, r, special), sign);
  }
  return UOp::make(Ops::BITCAST, dt, {ucast(code, dtypes::uint8)});
}
std::vector<Rule> fp8_rules() {
  auto from = dtype_var;
  auto to = with_dtype;
  return {
      rule("fp8 constant -> BITCAST of its code", Pat::cvar("c").such_that([](const UOp& u) { return is_fp8(u.dtype) && !u.is<Invalid>(); }),
           [](const Captures& c, const UOpRef& r) {
             return UOp::make(Ops::BITCAST, r->dtype, {uconst_int(dtypes::uint8, float_to_fp8(c["c"]->const_float(), r->dtype))});
           }),
      rule("fp8 x.cast(same fp8) -> x", to(Pat::op(Ops::CAST, {from(is_fp8)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return c["x"]->dtype == r->dtype ? c["x"] : nullptr; }),
      rule("fp8 x.cast(float32) -> its value from the code's bits", to(Pat::op(Ops::CAST, {from(is_fp8)}), is_f32),
           [](const Captures& c, const UOpRef&) { return fp8_value(c["x"]); }),
      rule("fp8 x.cast(T) -> x.cast(float32).cast(T)", to(Pat::op(Ops::CAST, {from(is_fp8)}), not_f32),
           [](const Captures& c, const UOpRef& r) { return ucast(fp8_value(c["x"]), r->dtype); }),
      rule("float32 x.cast(fp8) -> the rounded code from x's bits", to(Pat::op(Ops::CAST, {from(is_f32)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return fp8_code(c["x"], r->dtype); }),
      rule("x.cast(fp8) -> x.cast(float32).cast(fp8)", to(Pat::op(Ops::CAST, {from(not_f32)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return is_fp8(c["x"]->dtype) ? nullptr : fp8_code(ucast(c["x"], dtypes::float32), r->dtype); }),
      rule("a cmp b of fp8 -> a.cast(float32) cmp b.cast(float32)", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ},
           [](const UOpRef& x) { return is_fp8(x->src[0]->dtype) ? compare_in_float32(x) : nullptr; }),
      on_ops(group::ops_where(is_typed_math_op), rule("fp8 f(x) -> f(x.cast(float32)).cast(fp8)", {},
                                                      [](const UOpRef& x) { return is_fp8(x->dtype) ? math_in_float32(x) : nullptr; })),
  };
}

// ---- EXP2 / LOG2 as polynomials ------------------------------------------------------------------
// The CPU compilers make exp2f/log2f scalar libm calls; as the reference's transcendental pass (xexp2, xlog2, the
// SLEEF algorithms) float32 EXP2 and LOG2 become plain arithmetic the vectorizer can carry. The structure and
// constants are the reference's float32 path's, so the C computes what the reference's CPU computes. Where the
// reference shifts signed ints into the sign bit (undefined in C) the shifts run on uint32, the same bits.
UOpRef f32c(double v) { return uconst(dtypes::float32, static_cast<float>(v)); }
UOpRef i32c(int64_t v) { return uconst_int(dtypes::int32, v); }
UOpRef u32c(int64_t v) { return uconst_int(dtypes::uint32, v); }
// Horner: ((c0*x + c1)*x + c2)...
UOpRef poly(const UOpRef& x, std::initializer_list<double> cs) {
  UOpRef acc;
  for (double c : cs) acc = acc ? alu(Ops::ADD, alu(Ops::MUL, acc, x), f32c(c)) : f32c(c);
  return acc;
}
// 2^e as a float for an int32 e in [-126, 127]: (e + 127) << 23 in the exponent bits
UOpRef pow2i(const UOpRef& e) {
  return UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SHL, ucast(alu(Ops::ADD, e, i32c(127)), dtypes::uint32), u32c(23))});
}
UOpRef xexp2(const UOpRef& d) {
  const double inf = std::numeric_limits<double>::infinity();
  UOpRef nan = alu(Ops::CMPNE, d, d);
  // +-inf and NaN computed as 0 (their results are set at the end)
  UOpRef x = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(-inf)), d, f32c(0));
  x = alu(Ops::WHERE, nan, f32c(0), x);
  x = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(inf)), x, f32c(0));
  // q = round(x) (halves away from 0), s = x - q in [-1/2, 1/2]
  UOpRef q = ucast(alu(Ops::ADD, x, alu(Ops::WHERE, alu(Ops::CMPLT, x, f32c(0)), f32c(-0.5), f32c(0.5))), dtypes::int32);
  UOpRef s = alu(Ops::SUB, x, ucast(q, dtypes::float32));
  UOpRef u = poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0});
  // u * 2^q as 2^(q>>1) * 2^(q - (q>>1)): 2^q alone leaves the exponent's range at q = 128 and below -126
  UOpRef h = alu(Ops::SHR, q, i32c(1));
  u = alu(Ops::MUL, alu(Ops::MUL, u, pow2i(h)), pow2i(alu(Ops::SUB, q, h)));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, f32c(128)), u, f32c(inf));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, f32c(-150)), f32c(0), u);
  return alu(Ops::WHERE, nan, f32c(std::numeric_limits<double>::quiet_NaN()), u);
}
UOpRef xlog2(const UOpRef& d) {
  const double inf = std::numeric_limits<double>::infinity();
  // denormals (and, as the reference, everything below 1e-4) scaled by 2^64 first so the exponent bits see them
  UOpRef denormal = alu(Ops::CMPLT, d, f32c(1e-4));
  UOpRef a = alu(Ops::WHERE, denormal, alu(Ops::MUL, d, f32c(18446744073709551616.0)), d);
  // e = ilogb(a / 0.75): the mantissa m = a * 2^-e lands in [0.75, 1.5)
  UOpRef bits = UOp::make(Ops::BITCAST, dtypes::int32, {alu(Ops::MUL, a, f32c(1.0 / 0.75))});
  UOpRef ei = alu(Ops::ADD, alu(Ops::AND, alu(Ops::SHR, bits, i32c(23)), i32c(255)), i32c(-127));
  UOpRef abits = UOp::make(Ops::BITCAST, dtypes::uint32, {a});
  UOpRef m = UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SUB, abits, alu(Ops::SHL, ucast(ei, dtypes::uint32), u32c(23)))});
  UOpRef e = ucast(ei, dtypes::float32);
  e = alu(Ops::WHERE, denormal, alu(Ops::ADD, e, f32c(-64)), e);
  // log2(m) = 2*atanh(x)/ln 2 with x = (m-1)/(m+1): x * (c + x^2 * t(x^2)), 1/ln 2 * 2 in two parts
  UOpRef x = UOp::make(Ops::FDIV, dtypes::float32, {alu(Ops::ADD, m, f32c(-1)), alu(Ops::ADD, m, f32c(1))});
  UOpRef x2 = alu(Ops::MUL, x, x);
  UOpRef t = poly(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
  UOpRef r = alu(Ops::ADD, alu(Ops::ADD, alu(Ops::MUL, t, alu(Ops::MUL, x, x2)), e), alu(Ops::MUL, x, f32c(2.8853900432586669922)));
  r = alu(Ops::ADD, r, alu(Ops::MUL, x, f32c(3.2734474483568488616e-08)));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(inf)), r, f32c(inf));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(0)), r, f32c(-inf));  // +-0
  // (the reference's last check, 1/d != -inf for -0 on devices where -0 == 0 fails, is left out: on the CPU it only
  // turns the NaN of a negative d above -2^-128 into -inf)
  return alu(Ops::WHERE, alu(Ops::OR, alu(Ops::CMPNE, d, d), alu(Ops::CMPLT, d, f32c(-0.0))), f32c(std::numeric_limits<double>::quiet_NaN()), r);
}

// ---- constant gates -----------------------------------------------------------------------------
UOpRef drop_true_gate(const UOpRef& x) {
  if (x->src.size() > 2 && x->src[2]->op == Ops::CONST && x->src[2]->const_float() != 0)
    return UOp::make(Ops::INDEX, x->dtype, {x->src[0], x->src[1]}, x->arg);
  return nullptr;
}
UOpRef load_false_gate(const UOpRef& x) {
  const UOpRef& i = x->src[0];
  if (i->op == Ops::INDEX && i->src.size() > 2 && i->src[2]->op == Ops::CONST && i->src[2]->const_float() == 0) return uconst(x->dtype, 0);
  return nullptr;
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

// ---- public -------------------------------------------------------------------------------------
UOpRef substitute_traced(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map, std::string_view name) {
  PatternMatcher pm({rule("substitute", {}, [](const UOpRef& x, const SubMap& m) -> UOpRef {
    auto it = m.find(x.get());
    return it == m.end() ? nullptr : it->second;
  })});
  return graph_rewrite(root, pm, map, name);
}

UOpRef jam_loops(const UOpRef& sink, int64_t max_accumulators, int64_t max_strided, int64_t below_id, int64_t* vector_jam) {
  if (vector_jam) *vector_jam = -1;
  const UOp* inner = nullptr;  // the innermost loop over outputs (the highest axis id; WEAK until gpudims makes it a LOOP)
  int64_t upcast = 1, reduce_trip = 1, next_id = 0;
  for (auto& u : sink->toposort()) {
    if (u->op != Ops::RANGE) continue;
    const RangeArg& ra = u->as<RangeArg>();
    next_id = std::max(next_id, ra.id + 1);
    const bool sized = u->src[0]->op == Ops::CONST && !u->src[0]->is<Invalid>();
    if (ra.type == AxisType::UPCAST) upcast *= sized ? u->src[0]->const_int() : 1;
    else if (ra.type == AxisType::REDUCE) reduce_trip *= sized ? u->src[0]->const_int() : 1;
    else if ((ra.type == AxisType::LOOP || ra.type == AxisType::GLOBAL || ra.type == AxisType::WEAK) && sized && (below_id < 0 || ra.id < below_id) &&
             (!inner || ra.id > inner->as<RangeArg>().id))
      inner = u.get();
  }
  if (!inner) return sink;
  // a reduce: only when it reads the loop's index (its chains are then one per iteration) and its loop is long enough
  // that their latency is what bounds it. No reduce (elementwise): only contiguous iterations, at most one 16-wide
  // vector of them, a body small enough to copy four times (an exp's polynomial computed 16 lanes at a time), and a
  // loop long enough to gain more than the bigger program costs to compile
  bool has_reduce = false, feeds_reduce = false;
  size_t body = 0;
  for (auto& u : sink->toposort()) {
    body += group::alu(u->op);
    if (u->op != Ops::REDUCE) continue;
    has_reduce = true;
    for (auto& v : u->toposort()) feeds_reduce |= v.get() == inner;
  }
  if (has_reduce ? !feeds_reduce || reduce_trip < 16 : body > 256 || inner->src[0]->const_int() < 256) return sink;
  // iterations that read memory a few elements apart (a matmul's next columns) share cache lines and vectors: their
  // accumulators are vector lanes, and more of them fit; rows far apart (a row sum's) are separate scalar chains
  int64_t stride = 0;
  for (auto& u : sink->toposort()) {
    if (u->op != Ops::INDEX || !is_global_param(u->src[0])) continue;
    bool uses = false;
    for (auto& v : u->src[1]->toposort()) uses |= v.get() == inner;
    if (!uses) continue;
    int64_t k = INT64_MAX;  // not linear in the loop: far apart
    const LinearTerms lt = linear_terms(u->src[1]);
    for (auto& [t, c] : lt.terms)
      if (t.get() == inner) k = std::abs(c);
    for (auto& [t, c] : lt.terms)
      if (t.get() != inner)
        for (auto& v : t->toposort()) k = v.get() == inner ? INT64_MAX : k;
    stride = std::max(stride, k);
  }
  if (!has_reduce && stride > 16) return sink;
  if (below_id >= 0 && !has_reduce) return sink;
  // (a second loop, jammed after the innermost one: more accumulators of the same vector lanes, whatever its stride)
  const int64_t budget = !has_reduce ? 16 : stride <= 16 || below_id >= 0 ? max_accumulators : max_strided;
  const int64_t size = inner->src[0]->const_int();
  int64_t jam = 1;
  for (int64_t j : {4, 2})
    if (upcast * j <= budget && size % j == 0 && size > j) {
      jam = j;
      break;
    }
  if (jam == 1) return sink;
  if (vector_jam && has_reduce && stride <= 16 && below_id < 0) *vector_jam = inner->as<RangeArg>().id;
  const UOpRef outer = UOp::make(Ops::RANGE, inner->dtype, {uconst_int(inner->src[0]->dtype, size / jam)}, inner->arg, inner->tag);
  const UOpRef lanes = UOp::make(Ops::RANGE, inner->dtype, {uconst_int(inner->src[0]->dtype, jam)}, RangeArg{next_id, AxisType::UPCAST});
  const UOpRef sub = alu(Ops::ADD, alu(Ops::MUL, outer, uconst_int(inner->dtype, jam)), lanes);
  return substitute_traced(sink, {{inner, sub}},
                           "jam loop " + std::to_string(inner->as<RangeArg>().id) + (has_reduce ? " into the reduce: " : ": ") +
                               std::to_string(jam) + " iterations at a time");
}

namespace {
// x's value with the given RANGEs/PARAMs at the given values and every other one at 0 (nullopt: not an integer
// constant then, e.g. a load in the index)
std::optional<int64_t> value_at(const UOpRef& x, const std::unordered_map<const UOp*, int64_t>& at) {
  SubMap m;
  for (auto& u : x->toposort())
    if (u->op == Ops::RANGE || (u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU)) {
      auto it = at.find(u.get());
      m[u.get()] = uconst_int(u->dtype, it == at.end() ? 0 : it->second);
    }
  std::unordered_map<const UOp*, UOpRef> memo;
  const UOpRef v = simplify(rename_ranges(x, m, memo));
  if (v->op != Ops::CONST || v->is<Invalid>()) return std::nullopt;
  return v->const_int();
}
bool is_output_loop(const UOpRef& r) {
  const AxisType t = rtype(r);
  return (t == AxisType::WEAK || t == AxisType::LOOP || t == AxisType::GLOBAL) && r->src[0]->op == Ops::CONST && !is_invalid(r->src[0]);
}
}  // namespace

namespace {
// the reads a panel could hold, grouped by (buffer, loops over outputs used, reduce ranges used), as they come
struct PanelReads {
  UOps in_loops, reduces, loads;
};
std::vector<PanelReads> panel_reads(const UOps& topo, const UOps& loops) {
  std::unordered_set<const UOp*> written;
  for (auto& u : topo)
    if (u->op == Ops::STORE) written.insert(buffer_uop(u.get()));
  std::map<std::tuple<const UOp*, std::vector<const UOp*>, std::vector<const UOp*>>, size_t> at;
  std::vector<PanelReads> out;
  for (auto& u : topo) {
    if (u->op != Ops::LOAD || u->src.size() != 1) continue;
    const UOpRef& idx = u->src[0];
    if (idx->op != Ops::INDEX || !is_global_param(idx->src[0]) || written.count(idx->src[0].get())) continue;
    UOps in_loops, reduces;
    bool other = false;
    // (a gated read is copied with its gate: the gate's ranges count too)
    for (auto& v : UOp::make(Ops::SINK, dtypes::void_, UOps(idx->src.begin() + 1, idx->src.end()))->toposort()) {
      if (v->op != Ops::RANGE) continue;
      if (std::find(loops.begin(), loops.end(), v) != loops.end()) in_loops.push_back(v);
      else if (rtype(v) == AxisType::REDUCE && v->src[0]->op == Ops::CONST) reduces.push_back(v);
      else other = true;
    }
    if (other || reduces.empty() || in_loops.size() == loops.size()) continue;
    auto ids = [](const UOps& xs) {
      std::vector<const UOp*> o;
      for (auto& x : xs) o.push_back(x.get());
      std::sort(o.begin(), o.end());
      return o;
    };
    auto [it, fresh] = at.emplace(std::make_tuple(idx->src[0].get(), ids(in_loops), ids(reduces)), out.size());
    if (fresh) out.push_back({in_loops, reduces, {}});
    out[it->second].loads.push_back(u);
  }
  return out;
}
int64_t trips(const UOps& rs) {
  int64_t n = 1;
  for (auto& r : rs) n *= r->src[0]->const_int();
  return n;
}
// Copies `loads` into a new stack panel: element ((d0*n1 + d1)*n2 + ...)*k + pos[j] holds load j at the values d of
// the ranges `dims` (k = loads.size()); its copy runs in loops of its own over `dims` (new ids, of type `loop_type`),
// and each load reads the panel instead.
UOpRef copy_into_panel(const UOpRef& sink, const UOps& loads, const std::vector<int64_t>& pos, UOps dims, AxisType loop_type,
                       int64_t& next_id, const std::string& what) {
  int slot = 0;
  for (auto& u : sink->toposort())
    if (u->op == Ops::BUFFER && u->as<ParamArg>().addrspace == AddrSpace::REG) slot = std::max(slot, static_cast<int>(u->as<ParamArg>().slot) + 1);
  std::sort(dims.begin(), dims.end(), [](const UOpRef& a, const UOpRef& b) { return rid(a) < rid(b); });
  const int64_t k = static_cast<int64_t>(loads.size());
  const DType dt = loads[0]->dtype, it = dims[0]->dtype;
  ParamArg pa;
  pa.slot = slot;
  pa.size = trips(dims) * k;
  pa.addrspace = AddrSpace::REG;
  const UOpRef buf = UOp::make(Ops::BUFFER, dt, {}, pa);
  auto at = [&](const UOps& rs, int64_t j) {
    UOpRef lin = uconst_int(it, 0);
    for (auto& r : rs) lin = alu(Ops::ADD, alu(Ops::MUL, lin, uconst_int(it, r->src[0]->const_int())), r);
    return simplify(alu(Ops::ADD, alu(Ops::MUL, lin, uconst_int(it, k)), uconst_int(it, pos[static_cast<size_t>(j)])));
  };
  UOps copy_rs;
  SubMap to_copy;
  for (auto& r : dims) {
    copy_rs.push_back(UOp::make(Ops::RANGE, r->dtype, r->src, RangeArg{next_id++, loop_type}));
    to_copy[r.get()] = copy_rs.back();
  }
  UOps stores;
  std::unordered_map<const UOp*, UOpRef> memo;
  for (int64_t j = 0; j < k; ++j) {
    const UOpRef& l = loads[static_cast<size_t>(j)];
    const UOpRef read = l->replace_src({rename_ranges(l->src[0], to_copy, memo)});
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dt, {buf, at(copy_rs, j)}), read}));
  }
  UOps end_src{UOp::make(Ops::GROUP, dtypes::void_, stores)};
  end_src.insert(end_src.end(), copy_rs.begin(), copy_rs.end());
  const UOpRef copied = UOp::make(Ops::AFTER, dt, {buf, UOp::make(Ops::END, dtypes::void_, end_src)});
  SubMap reads;
  for (int64_t j = 0; j < k; ++j) reads[loads[static_cast<size_t>(j)].get()] = UOp::make(Ops::LOAD, dt, {UOp::make(Ops::INDEX, dt, {copied, at(dims, j)})});
  return substitute_traced(sink, reads, what);
}
// the loops over outputs of a kernel a panel may serve (all of one kind, two or more), or none
UOps panel_loops(const UOpRef& sink) {
  if (sink->src.size() != 1 || sink->src[0]->op != Ops::END) return {};
  const UOpRef& end = sink->src[0];
  UOps loops(end->src.begin() + 1, end->src.end());
  if (loops.size() < 2 || !std::all_of(loops.begin(), loops.end(), [&](const UOpRef& r) { return is_range(r) && is_output_loop(r) && rtype(r) == rtype(loops[0]); }))
    return {};
  return loops;
}
int64_t next_range_id(const UOps& topo) {
  int64_t n = 0;
  for (auto& u : topo)
    if (u->op == Ops::RANGE) n = std::max(n, rid(u) + 1);
  return n;
}
}  // namespace

UOpRef pack_panels(const UOpRef& sink, int64_t max_bytes) {
  const UOps loops = panel_loops(sink);
  if (loops.empty()) return sink;
  const UOps topo = sink->src[0]->toposort();
  int64_t next_id = next_range_id(topo);
  const std::vector<PanelReads> cands = panel_reads(topo, loops);
  // the largest panel that fits, is reused, and is a strided walk (every reduce step at least 1 KiB apart)
  const PanelReads* best = nullptr;
  int64_t best_bytes = 0;
  for (const PanelReads& p : cands) {
    int64_t reuse = 1;
    for (auto& l : loops)
      if (std::find(p.in_loops.begin(), p.in_loops.end(), l) == p.in_loops.end()) reuse *= l->src[0]->const_int();
    const int64_t bytes = trips(p.reduces) * static_cast<int64_t>(p.loads.size()) * p.loads[0]->dtype->itemsize();
    if (bytes > max_bytes || reuse < 2 || bytes <= best_bytes) continue;
    const UOpRef& idx = p.loads[0]->src[0]->src[1];
    const std::optional<int64_t> at0 = value_at(idx, {});
    bool strided = at0.has_value();
    for (auto& r : p.reduces) {
      const std::optional<int64_t> at1 = value_at(idx, {{r.get(), 1}});
      strided = strided && at1 && std::abs(*at1 - *at0) >= 1024 / p.loads[0]->dtype->itemsize();
    }
    if (!strided) continue;
    best = &p;
    best_bytes = bytes;
  }
  if (!best) return sink;

  // the panel: one slot a read, in the order of the reads' addresses, for every step of its reduce ranges
  std::vector<std::pair<int64_t, UOpRef>> by_addr;
  for (auto& l : best->loads) by_addr.emplace_back(value_at(l->src[0]->src[1], {}).value_or(0), l);
  std::stable_sort(by_addr.begin(), by_addr.end(), [](auto& a, auto& b) { return a.first < b.first; });
  UOps loads;
  std::vector<int64_t> pos;
  for (auto& [a, l] : by_addr) pos.push_back(static_cast<int64_t>(loads.size())), loads.push_back(l);
  const DType dt = loads[0]->dtype;
  std::string what = "copy " + std::to_string(loads.size()) + " strided reads of " + std::to_string(trips(best->reduces)) + " reduce steps into a panel (" +
                     std::to_string(trips(best->reduces) * static_cast<int64_t>(loads.size()) * dt->itemsize() / 1024) + " KiB)";
  UOpRef out = copy_into_panel(sink, loads, pos, best->reduces, rtype(loops[0]), next_id, what);
  // the loops over outputs: the panel's outermost, the ones it is reused across inside them (new ids in that order:
  // loops nest by id)
  UOps order = best->in_loops, rest = loops;
  auto by_id = [](const UOpRef& a, const UOpRef& b) { return rid(a) < rid(b); };
  std::sort(order.begin(), order.end(), by_id);
  std::sort(rest.begin(), rest.end(), by_id);
  for (auto& l : rest)
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  if (std::equal(order.begin(), order.end(), rest.begin())) return out;
  SubMap renumber;
  std::string ids;
  for (auto& l : order) {
    renumber[l.get()] = UOp::make(Ops::RANGE, l->dtype, l->src, RangeArg{next_id++, rtype(l)}, l->tag);
    ids += (ids.empty() ? "" : ", ") + std::to_string(rid(l)) + " as " + std::to_string(next_id - 1);
  }
  return substitute_traced(out, renumber, "loops over outputs reordered for the panel, outermost first: " + ids);
}

UOpRef pack_spread_lanes(const UOpRef& sink, int64_t max_bytes, int64_t lanes) {
  const UOps loops = panel_loops(sink);
  if (loops.empty()) return sink;
  const UOps topo = sink->src[0]->toposort();
  int64_t next_id = next_range_id(topo);
  for (const PanelReads& p : panel_reads(topo, loops)) {
    // every loop over outputs it does not read is one it is reused across; the ones it reads become the panel's own
    int64_t reuse = 1;
    for (auto& l : loops)
      if (std::find(p.in_loops.begin(), p.in_loops.end(), l) == p.in_loops.end()) reuse *= l->src[0]->const_int();
    const int64_t k = static_cast<int64_t>(p.loads.size());
    UOps dims = p.reduces;
    dims.insert(dims.end(), p.in_loops.begin(), p.in_loops.end());
    if (reuse < 2 || k % lanes != 0 || trips(dims) * k * p.loads[0]->dtype->itemsize() > max_bytes) continue;
    // the reads' offsets from the first: a grid c*S + t of C rows (c < C) of the same columns t, S at least a vector
    std::vector<int64_t> off;
    for (auto& l : p.loads) {
      const std::optional<int64_t> a = value_at(l->src[0]->src[1], {});
      if (!a) break;
      off.push_back(*a);
    }
    if (static_cast<int64_t>(off.size()) != k) continue;
    const int64_t lo = *std::min_element(off.begin(), off.end());
    int64_t S = INT64_MAX;
    for (int64_t o : off)
      if (o - lo >= lanes) S = std::min(S, o - lo);
    if (S == INT64_MAX) continue;
    std::set<int64_t> cols, all(off.begin(), off.end());
    for (int64_t o : off)
      if (o - lo < S) cols.insert(o - lo);
    const int64_t C = k / static_cast<int64_t>(std::max<size_t>(cols.size(), 1));
    if (static_cast<int64_t>(all.size()) != k || C % lanes != 0 || C * static_cast<int64_t>(cols.size()) != k) continue;
    bool grid = true;
    for (int64_t c = 0; c < C && grid; ++c)
      for (int64_t t : cols) grid = grid && all.count(lo + c * S + t);
    if (!grid) continue;
    // column t's C rows side by side: read c of column t at t's index * C + c
    const std::vector<int64_t> col_list(cols.begin(), cols.end());
    std::vector<int64_t> pos;
    for (int64_t o : off) {
      const int64_t c = (o - lo) / S, t = (o - lo) - c * S;
      pos.push_back(static_cast<int64_t>(std::lower_bound(col_list.begin(), col_list.end(), t) - col_list.begin()) * C + c);
    }
    const std::string what = "copy " + std::to_string(k) + " reads " + std::to_string(S) + " apart into a panel, each " + std::to_string(C) +
                             " of them side by side (" + std::to_string(trips(dims) * k * p.loads[0]->dtype->itemsize() / 1024) + " KiB)";
    return copy_into_panel(sink, p.loads, pos, dims, rtype(loops[0]), next_id, what);
  }
  return sink;
}

std::vector<UOpRef> ranges_of(const UOps& xs) {
  if (xs.empty()) return {};
  return UOp::make(Ops::SINK, dtypes::void_, xs)->ranges();
}

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

const PatternMatcher& pm_split_ranges() {
  static const PatternMatcher pm({
      rule("mark ranges used as r % c", {Ops::FLOORMOD}, mark_range_mod),
      rule("split marked ranges into (r//c, r%c)", {Ops::SINK}, split_marked_ranges),
  });
  return pm;
}

const PatternMatcher& pm_simplify_ranges() {
  static const PatternMatcher pm({
      rule("END(x, r0, r1) -> END(x[r0 := r//n1, r1 := r%n1], r) (adjacent, no more div/mod)", {Ops::END},
           [](const UOpRef& x) { return merge_adjacent(x); }),
      rule("REDUCE(x, r0, r1) -> REDUCE(x[r0 := r//n1, r1 := r%n1], r) (no more div/mod)", {Ops::REDUCE},
           [](const UOpRef& x) { return merge_adjacent(x); }),
  });
  return pm;
}

const PatternMatcher& pm_reduce_mul_chain() {
  static const PatternMatcher pm({
      rule("reduce over an empty range -> its identity", {Ops::REDUCE}, [](const UOpRef& x) { return empty_reduce(x); }),
      rule("(x*y).reduce -> x.reduce * y (y without the reduce's ranges)", {Ops::REDUCE},
           [](const UOpRef& x) { return reduce_mul_chain(x); }),
  });
  return pm;
}

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

const PatternMatcher& pm_add_loads() {
  static const PatternMatcher pm({
      rule("STORE(p, INDEX) -> STORE(p, LOAD(INDEX)) (a copy)", {Ops::STORE}, [](const UOpRef& x) { return add_loads(x, Reads::any); }),
      rule("f(INDEX of LOCAL memory) -> f(LOAD(INDEX))", {}, [](const UOpRef& x) { return add_loads(x, Reads::local); }),
      rule("f(INDEX) -> f(LOAD(INDEX))", {}, [](const UOpRef& x) { return add_loads(x, Reads::global); }),
  });
  return pm;
}

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

const PatternMatcher& pm_add_gpudims() {
  static const PatternMatcher pm = PatternMatcher({
      rule("THREAD range -> core_id", {Ops::RANGE},
           [](const UOpRef& x, GpuDimsContext& ctx) { return thread_to_core_id(x, ctx); }),
      rule("global store without a local range -> gated to that range's lane 0", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return gate_stores_to_lane0(x, ctx); }),
      rule("GLOBAL ranges -> gidx SPECIALs", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::global_only); }),
      rule("GLOBAL and LOCAL ranges -> gidx and lidx SPECIALs", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::with_locals); }),
      rule("GLOBAL ranges -> idx SPECIALs (no locals)", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::no_locals); }),
  }) + pm_flatten_range();
  return pm;
}

GpuDimsContext gpu_dims_context(const OptTarget& target, const UOpRef& optimized_sink) {
  GpuDimsContext ctx;
  ctx.target = &target;
  if (optimized_sink->is<KernelInfo>())
    for (auto& o : optimized_sink->as<KernelInfo>().applied_opts)
      if (o.rfind("Opt(op=OptOps.NOLOCALS", 0) == 0) ctx.dont_use_locals = true;
  return ctx;
}

std::vector<UOpRef> get_grouped_dims(const std::string& prefix, const UOps& dims, const std::array<int64_t, 3>& max_sizes, bool reverse) {
  if (reverse) {
    UOps rd(dims.rbegin(), dims.rend());
    auto out = get_grouped_dims(prefix, rd, max_sizes, false);
    std::reverse(out.begin(), out.end());
    return out;
  }
  auto grouped = group_dims(dims, max_sizes);
  UOps limited = grouped ? *grouped : dims;
  if (limited.size() > max_sizes.size()) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes));
  if (same_dims(limited, dims)) limited = split_dims(dims, max_sizes);
  UOps raw;
  for (size_t i = 0; i < limited.size(); ++i) raw.push_back(special(limited[i], prefix + std::to_string(i)));
  if (same_dims(limited, dims)) return raw;
  // the flat launch index, taken apart into the original dims
  UOpRef flat = iconst(0);
  for (size_t i = 0; i < raw.size(); ++i) {
    UOpRef stride = iconst(1);
    for (size_t j = i + 1; j < limited.size(); ++j) stride = imul(stride, limited[j]);
    flat = iadd(flat, imul(raw[i], stride));
  }
  UOps out;
  for (size_t i = 0; i < dims.size(); ++i) {
    UOpRef stride = iconst(1);
    for (size_t j = i + 1; j < dims.size(); ++j) stride = imul(stride, dims[j]);
    UOpRef q = alu(Ops::FLOORDIV, flat, simplify(stride));
    out.push_back(simplify(i == 0 ? q : alu(Ops::FLOORMOD, q, dims[i])));
  }
  return out;
}

const PatternMatcher& pm_implicit_barriers() {
  static const PatternMatcher pm({
      rule("read of LOCAL memory after LOCAL stores waits on a BARRIER", {Ops::AFTER}, [](const UOpRef& x) { return add_raw_barrier(x); }),
      rule("loop body storing and loading LOCAL memory ends with a BARRIER", {Ops::END}, [](const UOpRef& x) { return add_war_barrier(x); }),
  });
  return pm;
}

const PatternMatcher& pm_commit_weak() {
  static const PatternMatcher pm({
      rule("BITCAST(weak x) -> BITCAST(x in the int/float of its size)", {Ops::BITCAST}, [](const UOpRef& x) { return commit_bitcast(x); }),
      rule("STORE(p, weak v) -> STORE(p, v in p's dtype)", {Ops::STORE}, [](const UOpRef& x) { return commit_srcs(x, 1, 2, x->src[0]->dtype); }),
      rule("DEFINE_ACC(weak init) -> DEFINE_ACC(init in the acc's dtype)", {Ops::DEFINE_ACC},
           [](const UOpRef& x) { return commit_srcs(x, 0, 1, x->dtype); }),
      rule("weak a cmp b -> a in b's dtype cmp b", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        return is_weak(x->src[0]->dtype) && !is_weak(x->src[1]->dtype) ? commit_srcs(x, 0, 1, x->src[1]->dtype) : nullptr;
      }),
      rule("a cmp weak b -> a cmp b in a's dtype", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        return !is_weak(x->src[0]->dtype) && is_weak(x->src[1]->dtype) ? commit_srcs(x, 1, 2, x->src[0]->dtype) : nullptr;
      }),
      rule("c.where(weak a, weak b) -> c.where(a, b in the WHERE's dtype)", {Ops::WHERE},
           [](const UOpRef& x) { return commit_srcs(x, 1, x->src.size(), x->dtype); }),
      on_ops(group::ops_where(is_typed_math_op), rule("f(weak x) -> f(x in f's dtype) (typed math)", {}, [](const UOpRef& x) -> UOpRef {
               return is_weak(x->dtype) || is_bool(x->dtype) ? nullptr : commit_srcs(x, 0, x->src.size(), x->dtype);
             })),
  });
  return pm;
}

const PatternMatcher& pm_lower_index_dtype() {
  static const PatternMatcher pm({
      rule("weakint CONST -> CONST of the index dtype", {Ops::CONST}, [](const UOpRef& x, DType& idx) { return retype(x, dtypes::weakint, idx); }),
      rule("weakint RANGE -> RANGE of the index dtype", {Ops::RANGE}, [](const UOpRef& x, DType& idx) { return retype(x, dtypes::weakint, idx); }),
      on_ops(group::ops_where(is_other_op), rule("weakint x -> x in the index dtype", {}, [](const UOpRef& x, DType& idx) {
               return retype(x, dtypes::weakint, idx);
             })),
      rule("weakfloat CONST -> float32 CONST", Pat::cvar("c").of({dtypes::weakfloat}),
           [](const Captures& c, const UOpRef&) { return uconst(dtypes::float32, c["c"]->const_float()); }),
      rule("weakfloat x -> x in float32", {}, [](const UOpRef& x) { return retype(x, dtypes::weakfloat, dtypes::float32); }),
  });
  return pm;
}

const PatternMatcher& pm_early_decompositions() {
  static const PatternMatcher pm({
      rule("x//2^k -> x >> k (x >= 0)", nonneg_by(Ops::FLOORDIV, true), [](const Captures& c, const UOpRef& r) {
        return alu(Ops::SHR, c["x"], uconst_int(r->dtype, log2i(c["c"]->const_int())));
      }),
      rule("x%2^k -> x & (2^k-1) (x >= 0)", nonneg_by(Ops::FLOORMOD, true), [](const Captures& c, const UOpRef& r) {
        return alu(Ops::AND, c["x"], uconst_int(r->dtype, c["c"]->const_int() - 1));
      }),
      rule("x//c -> CDIV(x, c) (x >= 0)", nonneg_by(Ops::FLOORDIV, false),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CDIV, c["x"], c["c"]); }),
      rule("x%c -> CMOD(x, c) (x >= 0)", nonneg_by(Ops::FLOORMOD, false),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CMOD, c["x"], c["c"]); }),
  });
  return pm;
}

const PatternMatcher& pm_late_decompositions() {
  static const PatternMatcher pm(joined({{
      rule("THREEFRY -> threefry2x32 on the uint32 halves", {Ops::THREEFRY}, [](const UOpRef& x) -> UOpRef {
        return x->dtype == dtypes::uint64 ? threefry2x32(x->src[0], x->src[1]) : nullptr;
      }),
  }, late_decomp_rules(), bf16_rules(), fp8_rules()}));
  return pm;
}

const PatternMatcher& pm_transcendental() {
  auto f16 = [](const UOpRef& x) -> UOpRef {
    if (x->dtype != dtypes::float16) return nullptr;
    return ucast(UOp::make(x->op, dtypes::float32, {ucast(x->src[0], dtypes::float32)}, x->arg), dtypes::float16);
  };
  static const PatternMatcher pm({
      rule("exp2(x) -> 2^round(x) * poly(x - round(x)) (float32)", {Ops::EXP2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xexp2(x->src[0]) : nullptr; }),
      rule("log2(x) -> exponent(x) + poly(mantissa(x)) (float32)", {Ops::LOG2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xlog2(x->src[0]) : nullptr; }),
      rule("exp2(x) -> exp2(x.cast(float32)).cast(float16) (float16)", {Ops::EXP2}, f16),
      rule("log2(x) -> log2(x.cast(float32)).cast(float16) (float16)", {Ops::LOG2}, f16),
  });
  return pm;
}

const PatternMatcher& pm_split_ends() {
  static const PatternMatcher pm({
      rule("split END over several ranges", {Ops::END}, [](const UOpRef& x) { return split_end(x); }),
      rule("INDEX gated by true -> plain INDEX", {Ops::INDEX}, [](const UOpRef& x) { return drop_true_gate(x); }),
      rule("load gated by false -> 0", {Ops::LOAD}, [](const UOpRef& x) { return load_false_gate(x); }),
  });
  return pm;
}

}  // namespace ts
