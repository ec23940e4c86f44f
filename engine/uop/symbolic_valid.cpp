// Simplification under a valid: the bounds its clauses set, uop_given_valid, simplify_valid
#include "engine/uop/symbolic.h"

#include "engine/uop/symbolic_internal.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace ts {

// ---- simplify under a valid (the reference's uop_given_valid / simplify_valid) -------------------
namespace {
void split_op(const UOpRef& x, Ops op, UOps& out) {
  if (x->op == op) { split_op(x->src[0], op, out); split_op(x->src[1], op, out); } else out.push_back(x);
}
struct ParsedValid {
  UOpRef expr;
  bool upper;  // expr <= c when true, expr >= c when false
  int64_t c;
};
bool parse_valid(const UOpRef& v, ParsedValid& out) {
  // (X < c) != True -> X >= c
  if (v->op == Ops::CMPNE && is_c(v->src[1]) && is_bool(v->src[1]->dtype) && v->src[1]->is_const_value(1) &&
      v->src[0]->op == Ops::CMPLT && is_int(v->src[0]->src[0]->dtype)) {
    out = {v->src[0]->src[0], false, v->src[0]->src[1]->vmin()};
    return true;
  }
  if (v->op == Ops::CMPLT && is_int(v->src[0]->dtype)) {
    if (is_c(v->src[0])) { out = {v->src[1], false, v->src[0]->const_int() + 1}; return true; }  // c < X -> X >= c+1
    out = {v->src[0], true, v->src[1]->vmax() - 1};                                               // X < c -> X <= c-1
    return true;
  }
  return false;
}
UOpRef fake_variable(size_t i, int64_t lo, int64_t hi, DType dt) {
  ParamArg pa;
  pa.slot = -1;
  pa.name = "fake" + std::to_string(i);
  pa.vmin = lo;
  pa.vmax = hi;
  pa.addrspace = AddrSpace::ALU;
  return UOp::make(Ops::PARAM, dt, {}, pa);
}
bool irreducible(const UOpRef& u) {
  return u->op == Ops::CONST || u->op == Ops::RANGE || u->op == Ops::SPECIAL || u->is_variable();
}
}  // namespace

UOps split_and(const UOpRef& x) {
  UOps out;
  split_op(x, Ops::AND, out);
  return out;
}

std::vector<ValidBound> valid_bounds(const UOpRef& valid) {
  std::vector<ValidBound> bounds;
  for (auto& stmt : split_and(valid)) {
    ParsedValid p;
    if (!parse_valid(stmt, p)) continue;
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](auto& b) { return b.expr == p.expr; });
    if (it == bounds.end()) { bounds.push_back({p.expr, {}, {}}); it = bounds.end() - 1; }
    (p.upper ? it->hi : it->lo) = p.c;
  }
  return bounds;
}

UOpRef uop_given_valid(const UOpRef& valid, UOpRef uop, bool try_simplex) {
  const std::vector<ValidBound> bounds = valid_bounds(valid);
  std::vector<std::pair<UOpRef, UOpRef>> all;
  for (size_t i = 0; i < bounds.size(); ++i) {
    const UOpRef& expr = bounds[i].expr;
    int64_t v0 = bounds[i].lo ? *bounds[i].lo : expr->vmin();
    int64_t v1 = bounds[i].hi ? *bounds[i].hi : expr->vmax();
    all.push_back({expr, fake_variable(i, v0, v1, expr->dtype)});
    if (!try_simplex) continue;
    // every candidate is a set of constrained expressions; when each one simplifies uop to the same result, take it
    std::vector<std::vector<std::pair<UOpRef, UOpRef>>> candidates{{all.back()}};
    if (expr->op == Ops::ADD && v0 == 1) {
      UOps xs;
      split_op(expr, Ops::ADD, xs);
      if (std::all_of(xs.begin(), xs.end(), irreducible)) {
        std::vector<std::pair<UOpRef, UOpRef>> c;  // a simplex X0 + X1 + ... > 0: try every Xi > 0
        for (auto& xi : xs) c.push_back({xi, fake_variable(i, 1, xi->vmax(), xi->dtype)});
        candidates.push_back(c);
      }
    }
    for (auto& cand : candidates) {
      auto slice = uop->toposort();
      std::unordered_set<const UOp*> in_slice;
      for (auto& u : slice) in_slice.insert(u.get());
      if (std::any_of(cand.begin(), cand.end(), [&](auto& xc) { return !in_slice.count(xc.first.get()); })) continue;
      UOps news;
      for (auto& [x, nx] : cand)
        news.push_back(simplify(substitute(simplify(substitute(uop, {{x.get(), nx}})), {{nx.get(), x}})));
      if (std::all_of(news.begin(), news.end(), [&](auto& n) { return n == news[0]; })) uop = news[0];
    }
  }
  // all the valids together (whole expressions only)
  std::unordered_map<const UOp*, UOpRef> sub, back;
  for (auto& [x, nx] : all) { sub[x.get()] = nx; back[nx.get()] = x; }
  UOpRef s_uop = substitute(uop, sub);
  if (s_uop != uop) uop = simplify(substitute(simplify(s_uop), back));
  return uop;
}

UOpRef simplify_valid(const UOpRef& valid) {
  for (auto& u : valid->toposort())
    if (u->op == Ops::INDEX) return nullptr;
  UOps valids = split_and(valid);
  auto priority = [&](const UOpRef& v) {
    ParsedValid p;
    if (!parse_valid(v, p)) return 0;
    int n = 0;
    for (auto& other : valids) {
      auto ts = other->toposort();
      if (std::any_of(ts.begin(), ts.end(), [&](auto& t) { return t == p.expr; })) --n;
    }
    return n;
  };
  std::vector<int> prio;
  for (auto& v : valids) prio.push_back(priority(v));
  std::vector<size_t> order(valids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prio[a] < prio[b]; });
  UOps sorted;
  for (size_t i : order) sorted.push_back(valids[i]);
  UOps ret;
  std::unordered_set<const UOp*> seen;
  for (auto& v : sorted) {
    if (!seen.insert(v.get()).second) continue;  // duplicates dropped before rewriting
    UOpRef stmt = v;
    if (!ret.empty()) {
      UOpRef acc = ret[0];
      for (size_t i = 1; i < ret.size(); ++i) acc = alu(Ops::AND, acc, ret[i]);
      stmt = uop_given_valid(acc, stmt);
    }
    ret.push_back(stmt);
  }
  if (ret == sorted) return nullptr;
  UOpRef acc = ret[0];
  for (size_t i = 1; i < ret.size(); ++i) acc = alu(Ops::AND, acc, ret[i]);
  return acc;
}

}  // namespace ts
