// Sums over ranges in closed form: reduce_collapse, load_collapse and the rules it rewrites a sum with
#include "engine/uop/symbolic.h"

#include "engine/uop/pattern.h"
#include "engine/uop/symbolic_internal.h"

#include <functional>
#include <unordered_map>

namespace ts {

namespace {
bool reads_memory(const UOpRef& x) {
  for (auto& u : x->toposort())
    if (u->op == Ops::INDEX || u->op == Ops::LOAD || u->op == Ops::BUFFER || u->op == Ops::PARAM || u->op == Ops::REDUCE)
      if (!(u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU)) return true;
  return false;
}
bool depends_on(const UOpRef& x, const UOp* r) {
  for (auto& u : x->toposort())
    if (u.get() == r) return true;
  return false;
}
// number of r in [0,n) satisfying cond, for cond linear in r with coefficient +1; nullptr if unknown
UOpRef count_true(const UOpRef& cond, const UOpRef& r, int64_t n) {
  // cond: (a < b) with r appearing in a (coefficient 1) => r < b - rest  => count = clamp(b-rest, 0, n)
  // cond: !(a < b) written as (a<b) != True  => count = n - clamp(...)
  bool negate = false;
  UOpRef c = cond;
  if (c->op == Ops::CMPNE && c->src[1]->is_const_value(1) && is_bool(c->src[0]->dtype)) { negate = true; c = c->src[0]; }
  if (c->op != Ops::CMPLT) return nullptr;
  LinearTerms lhs = linear_terms(c->src[0]), rhs = linear_terms(c->src[1]);
  int64_t kr = 0;
  LinearTerms rest;
  for (auto& [t, k] : lhs.terms) { if (t == r) kr += k; else rest.terms.push_back({t, -k}); }
  for (auto& [t, k] : rhs.terms) { if (t == r) return nullptr; rest.terms.push_back({t, k}); }
  if (kr != 1) return nullptr;
  rest.constant = rhs.constant - lhs.constant;
  UOpRef bound = simplify(from_linear_terms(rest, dtypes::weakint));  // r < bound
  if (bound->vmin() < 0 || bound->vmax() > n) return nullptr;     // no clamping needed
  return negate ? simplify(alu(Ops::ADD, iconst(n), alu(Ops::NEG, bound))) : bound;
}
UOpRef logical_not_(const UOpRef& b) { return alu(Ops::CMPNE, b, uconst_bool(true)); }
// REDUCE(ADD, body, r) over a range of constant size whose body reads no memory: the body (else nullptr)
const UOp* closed_form_body(const UOpRef& x) {
  if (x->as<ReduceArg>().op != Ops::ADD || x->src.size() != 2) return nullptr;
  const UOpRef& r = x->src[1];
  if (r->op != Ops::RANGE || reads_memory(x->src[0]) || !is_c(r->src[0])) return nullptr;
  return x->src[0].get();
}
// the closed forms of such a sum, one rewrite each
UOpRef sum_free_of_range(const UOpRef& x) {
  const UOp* body = closed_form_body(x);
  if (!body || depends_on(body->ref(), x->src[1].get())) return nullptr;
  return alu(Ops::MUL, body->ref(), uconst(body->dtype, static_cast<double>(x->src[1]->src[0]->const_int())));
}
UOpRef sum_of_counted_gate(const UOpRef& x) {
  const UOp* body = closed_form_body(x);
  const UOpRef& r = x->src[1];
  if (!body || body->op != Ops::WHERE || !body->src[2]->is_const_value(0) || depends_on(body->src[1], r.get())) return nullptr;
  UOpRef cnt = count_true(body->src[0], r, r->src[0]->const_int());
  return cnt ? alu(Ops::MUL, ucast(cnt, body->dtype), body->src[1]) : nullptr;
}
std::vector<Rule> closed_form_sum_rules() {
  return {
      rule("sum over r of a load-free body without r -> body * len(r)", {Ops::REDUCE},
           [](const UOpRef& x) { return sum_free_of_range(x); }),
      rule("sum over r of g(r).where(x, 0) -> (count of r where g) * x", {Ops::REDUCE},
           [](const UOpRef& x) { return sum_of_counted_gate(x); }),
  };
}

bool is_invalid_c(const UOpRef& x) { return x->op == Ops::CONST && x->is<Invalid>(); }
bool no_range(const UOpRef& x) {
  for (auto& u : x->toposort())
    if (u->op == Ops::RANGE) return false;
  return true;
}
UOpRef strip_cast(const UOpRef& u) { return u->op == Ops::CAST ? u->src[0] : u; }
UOpRef not_bool(const UOpRef& g) {  // the operand of a logical not written as (g != True)
  if (g->op == Ops::CMPNE && is_bool(g->dtype) && is_bool(g->src[0]->dtype) && g->src[1]->is_const_value(1)) return g->src[0];
  return nullptr;
}

// REDUCE(ADD, (idx != r).where(0, expr), r) -> (0 <= idx < n).where(expr[r := idx.valid(...)], 0): a one-hot sum
// is a gather; the substituted index carries the validity as WHERE(v, i, Invalid), so the read it reaches is gated
UOpRef gather_from_one_hot(const UOpRef& x) {
  if (x->as<ReduceArg>().op != Ops::ADD || x->src.size() != 2) return nullptr;
  const UOpRef &w = x->src[0], &r = x->src[1];
  if (r->op != Ops::RANGE || w->op != Ops::WHERE || !w->src[1]->is_const_value(0) || w->src[0]->op != Ops::CMPNE) return nullptr;
  const UOpRef& ne = w->src[0];
  UOpRef idx;
  if (strip_cast(ne->src[1]) == r) idx = ne->src[0];
  else if (strip_cast(ne->src[0]) == r) idx = ne->src[1];
  else return nullptr;
  if (is_bool(idx->dtype) || depends_on(idx, r.get())) return nullptr;
  UOpRef ii = ucast(idx, r->dtype);
  UOpRef v = alu(Ops::AND, logical_not_(alu(Ops::CMPLT, ii, uconst_int(r->dtype, 0))), alu(Ops::CMPLT, ii, r->src[0]));
  std::unordered_map<const UOp*, UOpRef> sub{{r.get(), alu(Ops::WHERE, v, ii, uconst_invalid())}};
  return alu(Ops::WHERE, v, substitute(w->src[2], sub), uconst(x->dtype, 0));
}

// the first source of x that is masked (v.where(i, Invalid)): its mask v and x over the index i; {nullptr, nullptr}
// when none is
bool is_masked_op(Ops o) { return group::alu(o) && o != Ops::WHERE; }
std::pair<UOpRef, UOpRef> mask_out(const UOpRef& x) {
  for (size_t i = 0; i < x->src.size(); ++i) {
    const UOpRef& s = x->src[i];
    if (s->op != Ops::WHERE || !is_invalid_c(s->src[2])) continue;
    UOps ns = x->src;
    ns[i] = s->src[1];
    return {s->src[0], x->replace_src(ns)};
  }
  return {nullptr, nullptr};
}

}  // namespace

// the rules the reference's reduce_collapse rewrites a single-range sum with (pm_reduce_load_collapse): split sums,
// one-hot gathers, x*bool -> where, range-free terms lifted out of comparisons, masks pushed out of index math
const PatternMatcher& pm_reduce_load_collapse() {
  static const PatternMatcher pm = PatternMatcher({
      rule("sum over a range the body does not use -> body * n", {Ops::REDUCE}, [](const UOpRef& x) -> UOpRef {
        if (x->as<ReduceArg>().op != Ops::ADD || x->src.size() != 2 || x->src[1]->op != Ops::RANGE) return nullptr;
        if (depends_on(x->src[0], x->src[1].get()) || x->src[0]->dtype != x->dtype) return nullptr;
        return alu(Ops::MUL, x->src[0], ucast(x->src[1]->src[0], x->dtype));
      }),
      rule("(x+y).reduce(ADD) -> x.reduce + y.reduce", {Ops::REDUCE}, [](const UOpRef& x) -> UOpRef {
        if (x->as<ReduceArg>().op != Ops::ADD || x->src[0]->op != Ops::ADD) return nullptr;
        const UOpRef& a = x->src[0];
        return alu(Ops::ADD, x->replace_src({a->src[0], x->src[1]}), x->replace_src({a->src[1], x->src[1]}));
      }),
      rule("one-hot sum -> gated gather", {Ops::REDUCE}, [](const UOpRef& x) { return gather_from_one_hot(x); }),
      rule("x * bool.cast() -> bool.where(x, 0)", {Ops::MUL}, [](const UOpRef& x) -> UOpRef {
        for (int i = 0; i < 2; ++i) {
          UOpRef c = x->src[i];
          const UOpRef& o = x->src[1 - i];
          if (c->op != Ops::CAST || o->dtype != x->dtype) continue;
          while (c->op == Ops::CAST && !is_bool(c->src[0]->dtype) && c->src[0]->op == Ops::CAST) c = c->src[0];  // bool->weak->dt
          if (c->op == Ops::CAST && is_bool(c->src[0]->dtype)) return alu(Ops::WHERE, c->src[0], o, uconst(x->dtype, 0));
        }
        return nullptr;
      }),
      rule("(Variable & y).where(c, 0).reduce -> y.where(c, 0).reduce * Variable", {Ops::REDUCE}, [](const UOpRef& x) -> UOpRef {
        if (x->as<ReduceArg>().op != Ops::ADD || x->src.size() != 2) return nullptr;
        const UOpRef& w = x->src[0];
        if (w->op != Ops::WHERE || !w->src[2]->is_const_value(0) || w->src[0]->op != Ops::AND) return nullptr;
        for (int i = 0; i < 2; ++i) {
          const UOpRef &p = w->src[0]->src[i], &y = w->src[0]->src[1 - i];
          if (p->op != Ops::PARAM || p->as<ParamArg>().addrspace != AddrSpace::ALU) continue;
          UOpRef red = x->replace_src({alu(Ops::WHERE, y, w->src[1], w->src[2]), x->src[1]});
          return alu(Ops::MUL, red, ucast(p, x->dtype));
        }
        return nullptr;
      }),
      rule("(!g).where(a, b) -> g.where(b, a)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        UOpRef g = not_bool(x->src[0]);
        return g ? alu(Ops::WHERE, g, x->src[2], x->src[1]) : nullptr;
      }),
      rule("lift x+y out of a != : x+y != c -> x != c-y", {Ops::CMPNE}, [](const UOpRef& x) -> UOpRef {
        const UOpRef& a = strip_cast(x->src[0]);
        const UOpRef& c = x->src[1];
        if (a->op != Ops::ADD || !int_math(a) || !int_math(c) || !no_range(c)) return nullptr;
        for (int i = 0; i < 2; ++i) {
          const UOpRef &xx = a->src[i], &y = a->src[1 - i];
          if (no_range(y) && !no_range(xx)) return alu(Ops::CMPNE, xx, alu(Ops::ADD, ucast(c, y->dtype), alu(Ops::NEG, y)));
        }
        return nullptr;
      }),
      on_ops(group::ops_where(is_masked_op), rule("f(v.where(i, Invalid)) -> v.where(f(i), Invalid)", {}, [](const UOpRef& x) -> UOpRef {
               if (is_bool(x->dtype)) return nullptr;
               auto [v, inner] = mask_out(x);
               return v ? alu(Ops::WHERE, v, inner, uconst_invalid()) : nullptr;
             })),
      on_ops(group::ops_where(is_masked_op), rule("bool f(v.where(i, Invalid)) -> v and f(i)", {}, [](const UOpRef& x) -> UOpRef {
               if (!is_bool(x->dtype)) return nullptr;
               auto [v, inner] = mask_out(x);
               return v ? alu(Ops::AND, v, inner) : nullptr;
             })),
      rule("v.where(v.where(a, b), c) -> v.where(a, c)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        if (x->src[1]->op == Ops::WHERE && x->src[1]->src[0] == x->src[0]) return alu(Ops::WHERE, x->src[0], x->src[1]->src[1], x->src[2]);
        return nullptr;
      }),
  }) + PatternMatcher(closed_form_sum_rules()) + symbolic();
  return pm;
}

namespace {

// The reference's reduce_collapse: for each range of the sum, the part of the body that depends on it is rewritten
// alone (every other input becomes a bounded Variable); the result is kept only when no range is left.
struct LoadCollapse {
  UOpRef out;
  bool gather = false;  // the collapsed sum reads memory (at the index the range took): a gather
};
LoadCollapse collapse_load(const UOpRef& red) {
  if (red->as<ReduceArg>().op != Ops::ADD || red->src.size() != 2 || red->src[1]->op != Ops::RANGE) return {};
  UOpRef u = red->src[0];
  const UOpRef& r = red->src[1];
  // nodes whose open ranges include r
  std::unordered_map<const UOp*, bool> has_r;
  std::function<bool(const UOpRef&)> dep = [&](const UOpRef& x) -> bool {
    if (auto it = has_r.find(x.get()); it != has_r.end()) return it->second;
    bool d = x == r;
    size_t closing = (x->op == Ops::END || x->op == Ops::REDUCE) ? 1 : x->src.size();
    for (size_t i = 0; i < x->src.size() && !d; ++i) d = dep(x->src[i]) && !(i >= closing && x->src[i] == r);
    if (d && closing < x->src.size())
      for (size_t i = closing; i < x->src.size(); ++i) if (x->src[i] == r) d = false;
    return has_r[x.get()] = d;
  };
  std::vector<UOpRef> included;
  for (auto& x : u->toposort())
    if (dep(x)) included.push_back(x);
  if (included.empty()) return {};
  for (auto& x : included)
    if (x->op == Ops::STORE || x->op == Ops::REDUCE) return {};
  std::unordered_map<const UOp*, UOpRef> replaces, back;
  for (auto& x : included)
    for (auto& s : x->src) {
      if (has_r[s.get()] || replaces.count(s.get()) || s->op == Ops::CONST || s->op == Ops::PARAM || s->op == Ops::BUFFER) continue;
      ParamArg pa;
      pa.slot = -1;
      pa.name = "in" + std::to_string(replaces.size());
      pa.vmin = s->vmin();
      pa.vmax = s->vmax();
      pa.addrspace = AddrSpace::ALU;
      UOpRef var = UOp::make(Ops::PARAM, s->dtype, {}, pa);
      replaces[s.get()] = var;
      back[var.get()] = s;
    }
  UOpRef collapse = red->replace_src({substitute(u, replaces), r});
  RewriteListener* saved = rewrite_listener();
  rewrite_listener() = nullptr;
  UOpRef sink = graph_rewrite(collapse, pm_reduce_load_collapse(), "reduce_collapse");
  rewrite_listener() = saved;
  if (!no_range(sink)) return {};
  bool reads = false;
  for (auto& x : sink->toposort()) reads = reads || x->op == Ops::INDEX || x->op == Ops::LOAD;
  return {substitute(sink, back), reads};
}
UOpRef load_collapse_of(const UOpRef& red, bool gather) {
  thread_local LastNode<LoadCollapse> last;
  const LoadCollapse& c = last.get(red, collapse_load);
  return c.out && c.gather == gather ? c.out : nullptr;
}
}  // namespace

const PatternMatcher& load_collapse() {
  static const PatternMatcher pm({
      rule("sum over r of a one-hot select -> a read gated at r's value", {Ops::REDUCE},
           [](const UOpRef& x) { return load_collapse_of(x, true); }),
      rule("sum over r of reads without r -> closed form in r", {Ops::REDUCE},
           [](const UOpRef& x) { return load_collapse_of(x, false); }),
  });
  return pm;
}

const PatternMatcher& reduce_collapse() {
  static const PatternMatcher pm(closed_form_sum_rules());
  return pm;
}

}  // namespace ts
