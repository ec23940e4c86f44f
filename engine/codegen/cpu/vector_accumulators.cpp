// Accumulators as vectors. A reduce whose loop body updates w accumulators (w a VLOAD's width) each as
// acc + s1*v1[k] + s2*v2[k] + ... (the terms as C evaluates them), where accumulator k takes lane k of the same vector
// loads v1, v2, ... and every accumulator the same scalars s1, s2, ..., is one w-wide accumulator (DEFINE_VACC, its
// lanes GEPs) updated as vacc + s1*v1 + s2*v2 + ... (VACC_UPDATE): each lane gets the same operations in the same
// order (a*b+c contracts to the same fma in both). Written as scalars, these are w chains that clang's SLP vectorizer
// gathers back into vectors with shuffles, and a matmul tile of 8 rows x 32 columns (256 accumulators) spilled; as
// vectors they are 16 registers.
#include <algorithm>
#include <tuple>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/cpu/linear_edit.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {
using namespace cpu;

struct VectorAcc {
  struct Term {
    const UOp* scalar;  // s
    const UOp* vload;   // v
    bool scalar_first;  // written s*v (else v*s)
  };
  std::vector<Term> terms;
  std::vector<int> stores;       // accumulator k's STORE, by lane
  std::vector<const UOp*> accs;  // accumulator k's DEFINE_ACC, by lane
  int at = 0;                    // the last STORE: where the update is written
  int decl = 0;                  // the first DEFINE_ACC: where the vector is declared
};

using Reading = std::tuple<const UOp*, const UOp*, bool, int>;  // (scalar, VLOAD, scalar first, lane)
using Key = std::pair<int, std::vector<std::tuple<const UOp*, const UOp*, bool>>>;  // (block, terms)

// each product's readings as a scalar times a lane (a product of two lanes reads either way round); empty when a
// term is not such a product
std::vector<std::vector<Reading>> product_readings(const std::vector<const UOp*>& xs, std::unordered_map<const UOp*, int>& uses) {
  std::vector<std::vector<Reading>> readings;
  for (size_t j = 1; j < xs.size(); ++j) {
    const UOp* m = xs[j];
    readings.emplace_back();
    if (m->op != Ops::MUL || m->dtype != dtypes::float32 || uses[m] != 1) break;
    for (int v = 0; v < 2; ++v) {
      auto [g, k] = lane_in(m->src[static_cast<size_t>(v)].get());
      if (g) readings.back().emplace_back(m->src[static_cast<size_t>(1 - v)].get(), g, v == 1, k);
    }
  }
  return readings;
}

std::vector<VectorAcc> find_vector_accs(const UOps& l) {
  std::unordered_map<const UOp*, int> pos = positions(l), uses = list_uses(l), acc_stores;
  const std::vector<int> block = loop_blocks(l);
  for (auto& u : l)
    if (u->op == Ops::STORE) ++acc_stores[resolve(u->src[0].get())];
  // candidate groups: (block, terms) -> each lane's STORE; a STORE may be a candidate of several, and is taken by the
  // first that completes
  std::map<Key, std::vector<int>> cand;
  std::vector<Key> order;
  std::unordered_map<int, const UOp*> chain;  // a candidate STORE's read of its accumulator
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op != Ops::STORE) continue;
    const UOp* acc = resolve(u.src[0].get());
    if (acc->op != Ops::DEFINE_ACC || acc->dtype != dtypes::float32 || acc_stores[acc] != 1 || acc->src.empty() || acc->src[0]->op != Ops::CONST) continue;
    std::vector<const UOp*> xs = c_sum_terms(u.src[1].get(), uses, 17);
    if (xs.size() < 2 || xs.size() > 17 || !(xs[0]->op == Ops::LOAD && resolve(xs[0]->src[0].get()) == acc && uses[xs[0]] == 1)) continue;
    chain[static_cast<int>(i)] = xs[0];
    std::vector<std::vector<Reading>> readings = product_readings(xs, uses);
    if (readings.size() != xs.size() - 1 || std::any_of(readings.begin(), readings.end(), [](auto& r) { return r.empty(); })) continue;
    // (products of two lanes in every term: at most 64 combinations, or it stays scalar)
    size_t combos = 1;
    for (auto& r : readings) combos = std::min<size_t>(combos * r.size(), 65);
    if (combos > 64) continue;
    // every combination of readings with one lane and one width throughout
    std::vector<size_t> pick(readings.size(), 0);
    while (true) {
      Key key{block[i], {}};
      int lane = -1;
      int64_t width = 0;
      bool ok = true;
      for (size_t j = 0; j < readings.size() && ok; ++j) {
        auto [sc, g, first, k] = readings[j][pick[j]];
        if (lane < 0) lane = k, width = vec_width(g);
        ok = k == lane && vec_width(g) == width;
        key.second.emplace_back(sc, g, first);
      }
      if (ok) {
        auto it = cand.find(key);
        if (it == cand.end()) it = cand.emplace(key, std::vector<int>(static_cast<size_t>(width), -1)).first, order.push_back(key);
        if (it->second[static_cast<size_t>(lane)] < 0) it->second[static_cast<size_t>(lane)] = static_cast<int>(i);
      }
      size_t j = 0;
      while (j < pick.size() && ++pick[j] == readings[j].size()) pick[j++] = 0;
      if (j == pick.size()) break;
    }
  }
  std::vector<VectorAcc> out;
  std::unordered_set<int> taken;
  for (const Key& key : order) {
    const std::vector<int>& st = cand.at(key);
    if (std::any_of(st.begin(), st.end(), [&](int x) { return x < 0 || taken.count(x); })) continue;
    VectorAcc va;
    for (auto& [sc, g, first] : key.second) va.terms.push_back({sc, g, first});
    va.stores = st;
    va.at = *std::max_element(st.begin(), st.end());
    va.decl = static_cast<int>(l.size());
    for (int x : st) {
      va.accs.push_back(resolve(l[static_cast<size_t>(x)]->src[0].get()));
      va.decl = std::min(va.decl, pos.at(va.accs.back()));
    }
    // the vector is declared where the first accumulator is: all of them in one block
    bool clash = std::any_of(va.accs.begin(), va.accs.end(), [&](const UOp* a) { return block[static_cast<size_t>(pos.at(a))] != block[static_cast<size_t>(va.decl)]; });
    // (the update is written at the last STORE)
    std::unordered_set<const UOp*> chains;
    for (int x : st) chains.insert(chain.at(x));
    if (clash || acc_read_between(l, *std::min_element(st.begin(), st.end()), va.at, va.accs, chains)) continue;
    taken.insert(st.begin(), st.end());
    out.push_back(std::move(va));
  }
  return out;
}

const PatternMatcher& pm_vector_accumulators() {
  static const PatternMatcher pm({rule("accumulators of the same vector loads times the same scalars as one vector", {Ops::LINEAR}, [](const UOpRef& x, LinearPassCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    const UOps& l = x->src;
    LinearEdit e;
    for (const VectorAcc& va : find_vector_accs(l)) {
      UOps init;
      for (const UOp* a : va.accs) init.push_back(a->src[0]);
      UOpRef vacc = UOp::make(Ops::DEFINE_VACC, dtypes::float32, std::move(init), {}, va.decl);
      e.before[va.decl].push_back(vacc);
      for (size_t k = 0; k < va.accs.size(); ++k) e.replace[va.accs[k]] = UOp::make(Ops::GEP, dtypes::float32, {vacc}, static_cast<int64_t>(k));
      UOps src{vacc};
      Shape first;
      for (const VectorAcc::Term& t : va.terms) {
        src.push_back(t.scalar->ref());
        src.push_back(t.vload->ref());
        first.push_back(t.scalar_first ? 1 : 0);
      }
      e.merge(l, va.stores, va.at, UOp::make(Ops::VACC_UPDATE, dtypes::void_, std::move(src), std::move(first)));
    }
    return e.empty() ? nullptr : apply_edit(x, e);
  })});
  return pm;
}

}  // namespace

UOpRef vector_accumulators(const UOpRef& linear) {
  LinearPassCtx ctx;
  return graph_rewrite(linear, pm_vector_accumulators(), ctx, "vector accumulators");
}

}  // namespace ts
