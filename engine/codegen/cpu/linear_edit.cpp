#include "engine/codegen/cpu/linear_edit.h"

#include "engine/codegen/cpu/linear_passes.h"

#include <algorithm>
#include <functional>

namespace ts::cpu {

void linear_form(const UOp* x, int64_t scale, LinearForm& f, int depth) {
  if (depth > 64) { f.terms[x] += scale; return; }
  if (x->op == Ops::CONST && !x->is<Invalid>()) { f.constant += scale * x->const_int(); return; }
  if (x->op == Ops::ADD) {
    linear_form(x->src[0].get(), scale, f, depth + 1);
    linear_form(x->src[1].get(), scale, f, depth + 1);
    return;
  }
  if (x->op == Ops::MUL && x->src[1]->op == Ops::CONST && !x->src[1]->is<Invalid>()) {
    linear_form(x->src[0].get(), scale * x->src[1]->const_int(), f, depth + 1);
    return;
  }
  if (x->op == Ops::MUL && x->src[0]->op == Ops::CONST && !x->src[0]->is<Invalid>()) {
    linear_form(x->src[1].get(), scale * x->src[0]->const_int(), f, depth + 1);
    return;
  }
  if (x->op == Ops::SHL && x->src[1]->op == Ops::CONST && x->src[1]->const_int() >= 0 && x->src[1]->const_int() < 31) {
    linear_form(x->src[0].get(), scale * (int64_t{1} << x->src[1]->const_int()), f, depth + 1);
    return;
  }
  f.terms[x] += scale;
}

std::vector<int> loop_blocks(const UOps& l) {
  std::vector<int> block(l.size());
  int b = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i]->op == Ops::RANGE || l[i]->op == Ops::END || l[i]->op == Ops::BARRIER) ++b;
    block[i] = b;
  }
  return block;
}

std::unordered_map<const UOp*, int> positions(const UOps& l) {
  std::unordered_map<const UOp*, int> pos;
  for (size_t i = 0; i < l.size(); ++i) pos[l[i].get()] = static_cast<int>(i);
  return pos;
}

std::unordered_map<const UOp*, int> list_uses(const UOps& l) {
  std::unordered_map<const UOp*, int> uses;
  for (auto& u : l) {
    if (u->op == Ops::VLOAD || u->op == Ops::PREFETCH) continue;
    const size_t first = u->op == Ops::VSTORE ? u->src.size() - static_cast<size_t>(u->as<Shape>()[0]) : 0;
    for (size_t k = first; k < u->src.size(); ++k) ++uses[resolve(u->src[k].get())];
  }
  return uses;
}

std::vector<const UOp*> c_sum_terms(const UOp* v, const std::unordered_map<const UOp*, int>& uses, size_t max) {
  std::vector<const UOp*> xs;
  std::function<void(const UOp*, bool)> flatten = [&](const UOp* x, bool top) {
    auto n = uses.find(x);
    if (x->op == Ops::ADD && x->dtype == dtypes::float32 && (top || (n != uses.end() && n->second == 1)) && xs.size() < max) {
      flatten(x->src[0].get(), false);
      flatten(x->src[1].get(), false);
    } else {
      xs.push_back(x);
    }
  };
  flatten(v, true);
  return xs;
}

std::pair<const UOp*, int> lane_in(const UOp* x) {
  if (x->op != Ops::GEP || x->src[0]->op != Ops::VLOAD) return {nullptr, -1};
  return {x->src[0].get(), static_cast<int>(x->as<int64_t>())};
}

bool acc_read_between(const UOps& l, int first, int last, const std::vector<const UOp*>& accs, const std::unordered_set<const UOp*>& chains) {
  for (int p = first; p <= last; ++p) {
    const UOp& x = *l[static_cast<size_t>(p)];
    if (x.op == Ops::LOAD && !chains.count(&x) && std::find(accs.begin(), accs.end(), resolve(x.src[0].get())) != accs.end()) return true;
  }
  return false;
}

UOpRef apply_edit(const UOpRef& linear, const LinearEdit& e) {
  if (e.empty()) return linear;
  std::unordered_map<const UOp*, UOpRef> memo;
  // (the list is in order: a listed node's sources are rebuilt before it, so this recursion stays shallow)
  std::function<UOpRef(const UOpRef&)> remap = [&](const UOpRef& x) -> UOpRef {
    if (auto m = memo.find(x.get()); m != memo.end()) return m->second;
    UOpRef out;
    if (auto r = e.replace.find(x.get()); r != e.replace.end()) {
      out = remap(r->second);
    } else {
      UOps src;
      bool same = true;
      for (auto& s : x->src) {
        src.push_back(remap(s));
        same = same && src.back() == s;
      }
      out = same ? x : x->replace_src(std::move(src));
    }
    memo[x.get()] = out;
    return out;
  };
  const UOps& l = linear->src;
  UOps out;
  out.reserve(l.size());
  for (size_t i = 0; i < l.size(); ++i) {
    if (auto b = e.before.find(static_cast<int>(i)); b != e.before.end())
      for (auto& n : b->second) out.push_back(remap(n));
    if (!e.drop.count(static_cast<int>(i))) out.push_back(remap(l[i]));
  }
  return UOp::make(Ops::LINEAR, linear->dtype, std::move(out), linear->arg, linear->tag);
}

}  // namespace ts::cpu
