// GPU: share_row_reads, a work group's rows read by all of its lanes together (see engine/codegen/row_reads.h). No
// counterpart in the reference.
#include "engine/codegen/row_reads.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "engine/codegen/cpu/linear_edit.h"
#include "engine/codegen/opt.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {

struct RowCtx {
  bool done = false;
  int64_t max_lanes = 0, shared_max = 0;
};

constexpr int64_t kMinLaneStride = 64;  // bytes between adjacent lanes' reads: under this the reads are coalesced enough

// an accumulator's update in the loop body: STORE(acc, ADD(LOAD(acc), term)), or a max as the late decompositions
// write it, STORE(acc, WHERE(CMPLT(LOAD(acc), term), term, LOAD(acc)))
struct Update {
  UOpRef acc, load, term;
  Ops op = Ops::ADD;
};
// whether a node reads any of a set of nodes (memoized: the body's graphs share their subexpressions)
class Reads {
 public:
  explicit Reads(std::unordered_set<const UOp*> of) : of_(std::move(of)) {}
  bool operator()(const UOp* x) {
    if (of_.count(x)) return true;
    if (auto it = memo_.find(x); it != memo_.end()) return it->second;
    bool d = false;
    for (auto& s : x->src) d = d || (*this)(s.get());
    return memo_[x] = d;
  }

 private:
  std::unordered_set<const UOp*> of_;
  std::unordered_map<const UOp*, bool> memo_;
};

// a combined with b as `op` combines them in the loop
UOpRef combine(Ops op, const UOpRef& a, const UOpRef& b) {
  return op == Ops::ADD ? alu(Ops::ADD, a, b) : alu(Ops::WHERE, alu(Ops::CMPLT, a, b), b, a);
}
// the update that STORE `st` of the loop body makes to its accumulator, or none
std::optional<Update> update_of(const UOpRef& st) {
  const UOp* acc = cpu::resolve(st->src.at(0).get());
  const UOpRef& v = st->src.at(1);
  if (acc->op != Ops::DEFINE_ACC || v->dtype == dtypes::bool_) return std::nullopt;
  auto is_acc = [&](const UOpRef& x) { return x->op == Ops::LOAD && cpu::resolve(x->src[0].get()) == acc; };
  if (v->op == Ops::ADD)
    for (int s = 0; s < 2; ++s)
      if (is_acc(v->src[static_cast<size_t>(s)])) return Update{st->src[0], v->src[static_cast<size_t>(s)], v->src[static_cast<size_t>(1 - s)], Ops::ADD};
  if (v->op == Ops::WHERE && v->src[0]->op == Ops::CMPLT && is_acc(v->src[2]) && v->src[0]->src[0] == v->src[2] && v->src[0]->src[1] == v->src[1])
    return Update{st->src[0], v->src[2], v->src[1], Ops::MAX};
  return std::nullopt;
}

UOpRef share(const UOpRef& linear, const RowCtx& ctx) {
  const UOps& l = linear->src;
  // the launch: one local dimension of L lanes, no work-group memory of its own
  UOpRef lidx;
  int64_t lanes = 1, L = 0, next_id = 0, next_acc = 0;
  for (auto& u : l) {
    if (u->op == Ops::BARRIER || u->op == Ops::BUFFER || u->op == Ops::WMMA) return nullptr;
    if (u->op == Ops::RANGE) next_id = std::max(next_id, u->as<RangeArg>().id + 1);
    if (u->op == Ops::DEFINE_ACC) next_acc = std::max(next_acc, u->as<int64_t>() + 1);
    if (u->op != Ops::SPECIAL) continue;
    if (u->src.empty() || u->src[0]->op != Ops::CONST) return nullptr;
    lanes *= u->src[0]->const_int();
    const std::string& nm = u->as<std::string>();
    if (nm.rfind("lidx", 0) == 0) {
      if (lidx || nm != "lidx0") return nullptr;
      lidx = u, L = u->src[0]->const_int();
    } else if (nm.rfind("gidx", 0) != 0) {
      return nullptr;
    }
  }
  if (!lidx || L < 8 || L > 64 || (L & (L - 1)) || lanes > ctx.max_lanes) return nullptr;
  // the innermost reduce loop: a RANGE whose END follows with no loop boundary between them
  int open = -1, close = -1;
  for (int i = 0; i < static_cast<int>(l.size()); ++i) {
    const Ops op = l[static_cast<size_t>(i)]->op;
    if (op == Ops::RANGE) open = i;
    else if (op == Ops::END && open >= 0) {
      if (l[static_cast<size_t>(i)]->src.back().get() == l[static_cast<size_t>(open)].get()) close = i;
      break;
    }
  }
  if (close < 0) return nullptr;
  // every lane of the work group reaches the barriers: no gate and no loop of a lane's own trip count around the loop
  for (int i = 0; i < open; ++i) {
    const UOp& u = *l[static_cast<size_t>(i)];
    if (u.op == Ops::IF || (u.op == Ops::RANGE && u.src[0]->op != Ops::CONST)) return nullptr;
  }
  const UOpRef& R = l[static_cast<size_t>(open)];
  if (R->as<RangeArg>().type != AxisType::REDUCE || R->src[0]->op != Ops::CONST) return nullptr;
  const int64_t trip = R->src[0]->const_int();
  if (trip % L != 0) return nullptr;

  Reads varies({R.get(), lidx.get()});  // what reads the loop index or the lane
  // the body: arithmetic, buffer reads and sum or max updates of accumulators, each accumulator read by its update only
  std::vector<Update> updates;
  std::unordered_set<const UOp*> acc_loads;
  bool reads = false;
  for (int i = open + 1; i < close; ++i) {
    const UOpRef& u = l[static_cast<size_t>(i)];
    if (u->op == Ops::STORE) {
      const std::optional<Update> up = update_of(u);
      if (!up) return nullptr;
      updates.push_back(*up);
      continue;
    }
    const bool plain = group::elementwise(u->op) || u->op == Ops::CONST || u->op == Ops::INDEX || u->op == Ops::LOAD || u->op == Ops::VLOAD || u->op == Ops::GEP;
    if (!plain) return nullptr;
    if (u->op == Ops::LOAD && cpu::resolve(u->src[0].get())->op == Ops::DEFINE_ACC) {
      acc_loads.insert(u.get());
      continue;
    }
    // a buffer read: its index a sum over the loop, the lane and nodes that read neither; a row (it steps along the
    // loop) contiguous and far from the next lane's
    if (u->op == Ops::LOAD || u->op == Ops::VLOAD) {
      const UOp* idx = u->op == Ops::VLOAD ? (u->src.size() > 1 ? u->src[1].get() : nullptr) : u->src[0].get();
      int64_t width = 1;
      if (u->op == Ops::VLOAD) width = cpu::vec_width(u.get());
      else if (idx->op == Ops::INDEX && idx->src.size() == 2) idx = idx->src[1].get();
      else return nullptr;
      if (!idx) return nullptr;
      cpu::LinearForm f;
      cpu::linear_form(idx, 1, f);
      int64_t along = 0, across = 0;
      for (auto& [leaf, c] : f.terms) {
        if (leaf == R.get()) along = c;
        else if (leaf == lidx.get()) across = c;
        else if (varies(leaf)) return nullptr;
      }
      // one value a row (a softmax's max: read where its row is), or one vector every row reads alike (a matrix-vector
      // product's x: read a piece a lane, as the rows are)
      if (along == 0 || (along == width && across == 0)) continue;
      if (along != width || std::abs(across) * u->dtype->itemsize() < kMinLaneStride) return nullptr;
      reads = true;
    }
  }
  if (!reads || updates.empty()) return nullptr;
  Reads reads_acc(acc_loads);
  for (auto& up : updates)
    if (!acc_loads.count(up.load.get()) || up.acc->dtype != updates[0].acc->dtype || reads_acc(up.term.get())) return nullptr;
  if (acc_loads.size() != updates.size()) return nullptr;

  // nothing after the loop reads its body but through the accumulators
  std::unordered_set<const UOp*> body;
  for (int i = open; i < close; ++i) body.insert(l[static_cast<size_t>(i)].get());
  for (int i = close + 1; i < static_cast<int>(l.size()); ++i)
    for (auto& s : l[static_cast<size_t>(i)]->src)
      if (body.count(s.get())) return nullptr;

  // the new body: per chunk, each accumulator's rows summed into work-group memory of its own, one barrier, each lane's
  // rows added up, one barrier
  const DType it = R->dtype, acc_t = updates[0].acc->dtype;
  const int64_t U = static_cast<int64_t>(updates.size());
  if (U * L * (L + 1) * acc_t->itemsize() > ctx.shared_max) return nullptr;
  const UOpRef chunk = UOp::make(Ops::RANGE, it, {uconst_int(R->src[0]->dtype, trip / L)}, R->arg, R->tag);
  const UOpRef at = alu(Ops::ADD, alu(Ops::MUL, chunk, uconst_int(it, L)), lidx);  // the trip lane l reads
  const UOpRef pitch = uconst_int(it, L + 1);  // a row of L partial sums, padded: lane l's column meets no bank twice
  UOps shared, rows, puts;
  for (int64_t u = 0; u < U; ++u) {
    ParamArg pa;
    pa.slot = u;
    pa.size = L * (L + 1);
    pa.addrspace = AddrSpace::LOCAL;
    shared.push_back(UOp::make(Ops::BUFFER, acc_t, {}, pa));
    rows.push_back(UOp::make(Ops::RANGE, it, {uconst_int(lidx->dtype, L)}, RangeArg{next_id++, AxisType::LOOP}));
  }
  for (int64_t u = 0; u < U; ++u) {
    // row p of the group's rows (as lane p had them in the loop), piece l of the chunk
    const UOpRef& row = rows[static_cast<size_t>(u)];
    std::unordered_map<const UOp*, UOpRef> memo;
    std::function<UOpRef(const UOpRef&)> copy = [&](const UOpRef& x) -> UOpRef {
      if (x == R) return at;
      if (x == lidx) return row;
      if (!varies(x.get())) return x;
      if (auto f = memo.find(x.get()); f != memo.end()) return f->second;
      UOps src;
      for (auto& s : x->src) src.push_back(copy(s));
      return memo[x.get()] = x->replace_src(std::move(src));
    };
    const UOpRef sum = copy(updates[static_cast<size_t>(u)].term);
    const UOpRef& buf = shared[static_cast<size_t>(u)];
    puts.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, acc_t, {buf, alu(Ops::ADD, alu(Ops::MUL, row, pitch), lidx)}), sum}));
  }
  // placed in order, each node after its sources; what no row loop reads (the chunk's piece indexes) before the loops
  UOps out;
  std::unordered_set<const UOp*> listed;
  std::unordered_set<const UOp*> row_ranges;
  for (auto& r : rows) row_ranges.insert(r.get());
  Reads reads_row(std::move(row_ranges));
  std::function<void(const UOpRef&, bool)> list = [&](const UOpRef& x, bool invariant_only) {
    if (listed.count(x.get())) return;
    for (auto& s : x->src) list(s, invariant_only);
    if (invariant_only && (reads_row(x.get()) || x->op == Ops::STORE)) return;
    // (AFTER orders a read after a loop: no entry of its own, as the linearizer writes it)
    if (listed.insert(x.get()).second && x->op != Ops::AFTER) out.push_back(x);
  };
  for (int i = 0; i < open; ++i) list(l[static_cast<size_t>(i)], false);
  for (auto& b : shared) list(b, false);
  list(chunk, false);
  for (auto& p : puts) list(p, true);
  UOps ends;
  for (int64_t u = 0; u < U; ++u) {
    list(rows[static_cast<size_t>(u)], false);
    list(puts[static_cast<size_t>(u)], false);
    ends.push_back(UOp::make(Ops::END, dtypes::void_, {puts[static_cast<size_t>(u)], rows[static_cast<size_t>(u)]}));
    list(ends.back(), false);
  }
  list(UOp::make(Ops::BARRIER, dtypes::void_, ends), false);
  // each lane's own rows: their L partial sums, in lane order (a loop over the 2nd to the last), added to its accumulators
  const UOpRef base = alu(Ops::MUL, lidx, pitch);
  UOps upds;
  for (int64_t u = 0; u < U; ++u) {
    const UOpRef& buf = shared[static_cast<size_t>(u)];
    const Ops op = updates[static_cast<size_t>(u)].op;
    const UOpRef first = UOp::make(Ops::LOAD, acc_t, {UOp::make(Ops::INDEX, acc_t, {buf, base})});
    const UOpRef part_sum = UOp::make(Ops::DEFINE_ACC, acc_t, {first}, int64_t{next_acc++});
    const UOpRef k = UOp::make(Ops::RANGE, it, {uconst_int(lidx->dtype, L - 1)}, RangeArg{next_id++, AxisType::LOOP});
    const UOpRef part = UOp::make(Ops::LOAD, acc_t, {UOp::make(Ops::INDEX, acc_t, {buf, alu(Ops::ADD, alu(Ops::ADD, base, k), uconst_int(it, 1))})});
    const UOpRef so_far = UOp::make(Ops::LOAD, acc_t, {UOp::make(Ops::AFTER, acc_t, {part_sum, k})});
    const UOpRef step = UOp::make(Ops::STORE, dtypes::void_, {part_sum, combine(op, so_far, part)});
    const UOpRef done = UOp::make(Ops::END, dtypes::void_, {step, k});
    const UOpRef total = UOp::make(Ops::LOAD, acc_t, {UOp::make(Ops::AFTER, acc_t, {part_sum, done})});
    const UOpRef& acc = updates[static_cast<size_t>(u)].acc;
    upds.push_back(UOp::make(Ops::STORE, dtypes::void_, {acc, combine(updates[static_cast<size_t>(u)].op, UOp::make(Ops::LOAD, acc_t, {acc}), total)}));
    list(upds.back(), false);
  }
  // the next chunk's sums overwrite these only after every lane has read them
  const UOpRef last = UOp::make(Ops::BARRIER, dtypes::void_, upds);
  list(last, false);
  const UOp& e = *l[static_cast<size_t>(close)];
  UOps end_src{last};
  for (size_t k = 1; k < e.src.size(); ++k) end_src.push_back(e.src[k] == R ? chunk : e.src[k]);
  const UOpRef end = UOp::make(Ops::END, e.dtype, std::move(end_src), e.arg, e.tag);
  list(end, false);
  // what follows reads the accumulators as before
  std::unordered_map<const UOp*, UOpRef> after;
  after[&e] = end;
  std::function<UOpRef(const UOpRef&)> rebuilt = [&](const UOpRef& x) -> UOpRef {
    if (auto f = after.find(x.get()); f != after.end()) return f->second;
    bool same = true;
    UOps src;
    for (auto& s : x->src) {
      src.push_back(rebuilt(s));
      same = same && src.back() == s;
    }
    return after[x.get()] = same ? x : x->replace_src(std::move(src));
  };
  for (int i = close + 1; i < static_cast<int>(l.size()); ++i) list(rebuilt(l[static_cast<size_t>(i)]), false);
  return UOp::make(Ops::LINEAR, linear->dtype, std::move(out), linear->arg, linear->tag);
}

}  // namespace

UOpRef share_row_reads(const UOpRef& linear, bool enabled, int64_t max_lanes, int64_t shared_max) {
  const int64_t asked = codegen_option("ROW_READS", -1);
  if (asked == 0 || (asked < 0 && !enabled)) return linear;
  static const PatternMatcher pm({rule("a work group's rows read by all of its lanes together", {Ops::LINEAR}, [](const UOpRef& x, RowCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    return share(x, ctx);
  })});
  RowCtx ctx;
  ctx.max_lanes = max_lanes;
  ctx.shared_max = shared_max;
  return graph_rewrite(linear, pm, ctx, "read rows across the work group");
}

}  // namespace ts
