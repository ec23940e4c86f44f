// Accumulations of 16 rows at once, transposed. A reduce whose loop body updates 16 accumulators each as
// (((acc + x0) + x1) + x2) + x3 (as written), or as max(acc, max(max(max(x0, x1), x2), x3)) (a running max), with
// x0..x3 the lanes, in order, of one 4-wide vector load (a jammed row sum: 16 rows, 4 adjacent elements of each) is 16
// scalar chains; clang's SLP vectorizer makes them one vector of accumulators but gathers its operands with some 50
// shuffles an iteration. Written as a 4x4 transpose within each 128-bit lane of four 16-wide vectors (12 inserts, 8
// shuffles) and 4 vector adds, each accumulator gets the same additions in the same order. The terms may also be one
// expression of the lanes (a softmax's exp(x - max)): the same operations in every term, whose other operands are the
// same in every term (constants), or the same in each row's four (the row's max). The expression is then computed
// once per column, 16 rows at a time, with the same statements and the same operations as the 64 scalar copies, lane
// by lane. The 16 updates become one TRANSPOSED_ACC where the last was.
#include <algorithm>
#include <array>
#include <functional>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/cpu/linear_edit.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {
using namespace cpu;

struct TransposedAcc {
  std::vector<int> stores;            // the 16 accumulators' STOREs, in program order (accumulator i is lane i)
  std::vector<const UOp*> accs;       // their DEFINE_ACCs
  std::vector<const UOp*> rows;       // each one's 4-wide VLOAD
  std::vector<std::array<const UOp*, 4>> terms;  // each one's four terms
  int at = 0;                         // the last STORE
  Ops op = Ops::ADD;                  // ADD: acc + t0 + t1 + t2 + t3; MAX: max(acc, max(max(max(t0, t1), t2), t3))
  // the expression of the terms: row 0's term 0, and what each of its leaves is (in the order found)
  enum class Leaf { lane, common, per_row };
  std::vector<std::pair<const UOp*, Leaf>> leaves;
  std::unordered_map<const UOp*, std::vector<const UOp*>> row_values;  // a per_row leaf's value in each row
};

bool vector_lane_dtype(DType dt) { return dt == dtypes::float32 || dt == dtypes::int32 || dt == dtypes::uint32 || dt == dtypes::bool_; }
// an op the transposed expression can compute on 16-wide vectors: one whose C spelling (render_alu's) holds for
// vectors of 32-bit lanes too, or a cast between them (spelled for vectors by the C-style walk)
bool vector_op(const UOp& u) {
  if (!vector_lane_dtype(u.dtype)) return false;
  for (auto& x : u.src)
    if (!vector_lane_dtype(x->dtype)) return false;
  switch (u.op) {
    case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::FDIV: case Ops::MAX: case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ:
    case Ops::WHERE: case Ops::NEG: return true;
    case Ops::AND: case Ops::OR: case Ops::XOR: return true;
    case Ops::RECIPROCAL: return is_float(u.dtype);
    case Ops::SHL: case Ops::SHR:  // by a constant count within the lane
      return !is_float(u.dtype) && u.src[1]->op == Ops::CONST && u.src[1]->const_int() >= 0 && u.src[1]->const_int() < 32;
    case Ops::CAST: return !is_bool(u.dtype) && !is_bool(u.src[0]->dtype);
    case Ops::BITCAST: return !is_bool(u.dtype) && !is_bool(u.src[0]->dtype);
    default: return false;
  }
}

std::pair<const UOp*, int> lane4(const UOp* x) {  // (of a 4-wide load)
  auto lk = lane_in(x);
  return lk.first && vec_width(lk.first) == 4 ? lk : std::make_pair(nullptr, -1);
}

// the 4-wide load whose lane `lane` the term reads first (depth first), or none
const UOp* row_of(const UOp* term, int lane) {
  std::vector<const UOp*> stack{term};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty() && seen.size() < 256) {
    const UOp* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (auto [g, k] = lane4(x); g) {
      if (k == lane) return g;
      continue;
    }
    if (x->op == Ops::LOAD || x->op == Ops::GEP) continue;
    for (auto it = x->src.rbegin(); it != x->src.rend(); ++it) stack.push_back(resolve(it->get()));
  }
  return nullptr;
}

// the 64 terms as one expression of row 0's term 0: every leaf a lane of its row's load, the same value in all 64,
// or the same in each row's four; every inner node the same op in all 64, used only inside its term
bool expression(TransposedAcc& t, std::unordered_map<const UOp*, int>& uses) {
  std::unordered_map<const UOp*, std::vector<const UOp*>> at;  // template node -> its 64 nodes (row-major)
  std::unordered_set<const UOp*> leaf;
  std::function<bool(const std::vector<const UOp*>&)> walk = [&](const std::vector<const UOp*>& ns) {
    const UOp* tn = ns[0];
    if (auto m = at.find(tn); m != at.end()) return m->second == ns;
    at[tn] = ns;
    if (!vector_lane_dtype(tn->dtype)) return false;
    if (std::all_of(ns.begin(), ns.end(), [&](const UOp* x) { return x == tn; })) {
      t.leaves.emplace_back(tn, TransposedAcc::Leaf::common), leaf.insert(tn);
      return !is_bool(tn->dtype);
    }
    bool lane = true, row = true;
    for (size_t r = 0; r < 16; ++r)
      for (size_t j = 0; j < 4; ++j) {
        auto [g, k] = lane4(ns[r * 4 + j]);
        lane = lane && g == t.rows[r] && k == static_cast<int>(j);
        row = row && ns[r * 4 + j] == ns[r * 4];
      }
    if (lane) {
      t.leaves.emplace_back(tn, TransposedAcc::Leaf::lane), leaf.insert(tn);
      return true;
    }
    if (row) {
      t.leaves.emplace_back(tn, TransposedAcc::Leaf::per_row), leaf.insert(tn);
      for (size_t r = 0; r < 16; ++r) t.row_values[tn].push_back(ns[r * 4]);
      return !is_bool(tn->dtype);
    }
    if (tn->op == Ops::LOAD || !vector_op(*tn)) return false;
    for (const UOp* x : ns)
      if (x->op != tn->op || x->dtype != tn->dtype || x->src.size() != tn->src.size()) return false;
    for (size_t k = 0; k < tn->src.size(); ++k) {
      std::vector<const UOp*> sub;
      for (const UOp* x : ns) sub.push_back(resolve(x->src[k].get()));
      if (sub[0]->dtype != resolve(tn->src[k].get())->dtype || !walk(sub)) return false;
    }
    return true;
  };
  std::vector<const UOp*> roots;
  for (size_t r = 0; r < 16; ++r)
    for (size_t j = 0; j < 4; ++j) roots.push_back(t.terms[r][j]);
  if (!walk(roots)) return false;
  // an inner node is used only inside its own term (as often as the template's inner nodes use it there)
  std::unordered_map<const UOp*, int> inner_uses;
  for (auto& [tn, ns] : at)
    if (!leaf.count(tn))
      for (auto& x : tn->src) ++inner_uses[resolve(x.get())];
  for (auto& [tn, ns] : at) {
    if (leaf.count(tn) || tn == roots[0]) continue;
    for (const UOp* x : ns)
      if (uses[x] != inner_uses[tn]) return false;
  }
  return true;
}

// a max is a < b ? b : a by now (each operand named twice): (a, b) of such a WHERE, or none
std::pair<const UOp*, const UOp*> max_of(const UOp* n, std::unordered_map<const UOp*, int>& uses) {
  if (n->op != Ops::WHERE) return {nullptr, nullptr};
  const UOp* c = resolve(n->src[0].get());
  if (c->op != Ops::CMPLT || uses[c] != 1 || resolve(c->src[0].get()) != resolve(n->src[2].get()) || resolve(c->src[1].get()) != resolve(n->src[1].get()))
    return {nullptr, nullptr};
  return {resolve(n->src[2].get()), resolve(n->src[1].get())};
}

// the terms as C evaluates them: the accumulator, then the four terms; or a running max: max(acc, max(max(max(t0,
// t1), t2), t3)), the row's maximum first
std::vector<const UOp*> update_terms(const UOp* v, Ops op, std::unordered_map<const UOp*, int>& uses) {
  if (op == Ops::ADD) return c_sum_terms(v, uses, 8);
  std::vector<const UOp*> xs{max_of(v, uses).first}, rest;
  const UOp* m = max_of(v, uses).second;
  while (max_of(m, uses).first && uses[m] == 2 && rest.size() < 3) {
    rest.push_back(max_of(m, uses).second);
    m = max_of(m, uses).first;
  }
  rest.push_back(m);
  xs.insert(xs.end(), rest.rbegin(), rest.rend());
  return xs;
}

std::vector<TransposedAcc> find_transposed_accs(const UOps& l) {
  std::unordered_map<const UOp*, int> uses = list_uses(l);
  std::vector<TransposedAcc> out;
  TransposedAcc cur;
  std::unordered_set<const UOp*> leaves;  // the accumulators' reads that begin their chains
  auto flush = [&] {
    if (cur.stores.size() == 16 && !acc_read_between(l, cur.stores.front(), cur.at, cur.accs, leaves) && expression(cur, uses)) out.push_back(cur);
    cur = TransposedAcc{};
  };
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op == Ops::RANGE || u.op == Ops::END || u.op == Ops::BARRIER) flush();
    if (u.op != Ops::STORE) continue;
    const UOp* acc = resolve(u.src[0].get());
    if (acc->op != Ops::DEFINE_ACC || acc->dtype != dtypes::float32) continue;
    const UOp* v = u.src[1].get();
    const Ops op = max_of(v, uses).first ? Ops::MAX : Ops::ADD;
    const int once = op == Ops::MAX ? 2 : 1;  // the uses of a value used once
    std::vector<const UOp*> xs = update_terms(v, op, uses);
    if (xs.size() != 5 || !(xs[0]->op == Ops::LOAD && resolve(xs[0]->src[0].get()) == acc && uses[xs[0]] == once)) continue;
    if (!cur.stores.empty() && cur.op != op) flush();
    const UOp* g = row_of(xs[1], 0);
    bool ok = g != nullptr;
    for (size_t j = 1; j < 5 && ok; ++j) ok = uses[xs[j]] == once && row_of(xs[j], static_cast<int>(j - 1)) == g;
    if (!ok) continue;
    leaves.insert(xs[0]);
    cur.op = op;
    cur.stores.push_back(static_cast<int>(i));
    cur.accs.push_back(acc);
    cur.rows.push_back(g);
    cur.terms.push_back({xs[1], xs[2], xs[3], xs[4]});
    cur.at = static_cast<int>(i);
    if (cur.stores.size() == 16) flush();
  }
  return out;
}

UOpRef transposed_acc_uop(const TransposedAcc& t) {
  UOps src;
  for (const UOp* g : t.rows) src.push_back(g->ref());
  for (const UOp* a : t.accs) src.push_back(a->ref());
  src.push_back(t.terms[0][0]->ref());
  Shape arg{t.op == Ops::MAX ? 1 : 0, 0, 0, 0};
  for (auto kind : {TransposedAcc::Leaf::lane, TransposedAcc::Leaf::common, TransposedAcc::Leaf::per_row})
    for (auto& [n, k] : t.leaves) {
      if (k != kind) continue;
      ++arg[1 + static_cast<size_t>(kind)];
      if (kind != TransposedAcc::Leaf::per_row) src.push_back(n->ref());
      else
        for (const UOp* v : t.row_values.at(n)) src.push_back(v->ref());
    }
  return UOp::make(Ops::TRANSPOSED_ACC, dtypes::void_, std::move(src), std::move(arg));
}

const PatternMatcher& pm_transposed_accumulation() {
  static const PatternMatcher pm({rule("16 accumulations of 4-wide loads as one transposed vector accumulation", {Ops::LINEAR}, [](const UOpRef& x, LinearPassCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    LinearEdit e;
    for (const TransposedAcc& t : find_transposed_accs(x->src)) {
      e.merge(x->src, t.stores, t.at, transposed_acc_uop(t));
    }
    return e.empty() ? nullptr : apply_edit(x, e);
  })});
  return pm;
}

}  // namespace

TransposedAccView transposed_acc_view(const UOp& u) {
  TransposedAccView v;
  const Shape& a = u.as<Shape>();
  size_t i = 0;
  for (; i < 16; ++i) v.rows.push_back(u.src[i].get());
  for (; i < 32; ++i) v.accs.push_back(u.src[i].get());
  v.root = u.src[i++].get();
  v.max = a[0] != 0;
  for (int64_t k = 0; k < a[1]; ++k) v.lanes.push_back(u.src[i++].get());
  for (int64_t k = 0; k < a[2]; ++k) v.commons.push_back(u.src[i++].get());
  for (int64_t k = 0; k < a[3]; ++k) {
    v.per_rows.emplace_back();
    for (int r = 0; r < 16; ++r) v.per_rows.back().push_back(u.src[i++].get());
  }
  return v;
}

UOpRef transposed_accumulation(const UOpRef& linear) {
  LinearPassCtx ctx;
  return graph_rewrite(linear, pm_transposed_accumulation(), ctx, "transposed accumulation");
}

}  // namespace ts
