// GPU: unroll_reduce_loop, the body of a kernel's innermost reduce loop written several times a trip (see
// engine/codegen/unroll_loop.h). No counterpart in the reference.
#include "engine/codegen/unroll_loop.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/cpu/linear_edit.h"
#include "engine/codegen/opt.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {

struct UnrollCtx {
  bool done = false;
  int64_t max_lanes = 0, max_times = 4;
};

bool is_global_buffer(const UOp* x) {
  x = cpu::resolve(x);
  return x->op == Ops::PARAM && x->as<ParamArg>().addrspace == AddrSpace::GLOBAL;
}

UOpRef unroll(const UOpRef& linear, const UnrollCtx& ctx) {
  const UOps& l = linear->src;
  // the launch's lanes: few enough that each needs more of its loads in flight
  int64_t lanes = 1;
  for (auto& u : l)
    if (u->op == Ops::SPECIAL) {
      if (u->src.empty() || u->src[0]->op != Ops::CONST) return nullptr;
      lanes *= u->src[0]->const_int();
    }
  if (lanes > ctx.max_lanes) return nullptr;
  // the innermost reduce loop: a RANGE whose END follows with no loop boundary between them
  int open = -1, close = -1;
  for (int i = 0; i < static_cast<int>(l.size()); ++i) {
    const Ops op = l[static_cast<size_t>(i)]->op;
    if (op == Ops::RANGE) open = i;
    else if (op == Ops::BARRIER) open = -1;
    else if (op == Ops::END && open >= 0) {
      const UOp& e = *l[static_cast<size_t>(i)];
      if (e.src.back().get() == l[static_cast<size_t>(open)].get()) close = i;
      break;
    }
  }
  if (close < 0) return nullptr;
  const UOpRef& R = l[static_cast<size_t>(open)];
  if (R->as<RangeArg>().type != AxisType::REDUCE || R->src[0]->op != Ops::CONST) return nullptr;
  const int64_t trip = R->src[0]->const_int();
  int64_t times = 1;
  for (int64_t u = 2; u <= ctx.max_times && trip % u == 0 && trip / u >= 2; u *= 2) times = u;
  const int body = close - open - 1;
  while (times > 1 && body * times > 1024) times /= 2;
  if (times == 1) return nullptr;
  // which nodes read the loop's index (memoized), and whether the body reads a buffer along it
  std::unordered_map<const UOp*, bool> dep;
  std::function<bool(const UOp*)> depends = [&](const UOp* x) -> bool {
    if (x == R.get()) return true;
    if (auto it = dep.find(x); it != dep.end()) return it->second;
    bool d = false;
    for (auto& s : x->src) d = d || depends(s.get());
    return dep[x] = d;
  };
  // a body of arithmetic, buffer reads and accumulator updates only (no gate blocks, no other stores)
  auto acc_store = [](const UOp& u) { return cpu::resolve(u.src.at(0).get())->op == Ops::DEFINE_ACC; };
  bool reads = false;
  for (int i = open + 1; i < close; ++i) {
    const UOp& u = *l[static_cast<size_t>(i)];
    const bool plain = group::elementwise(u.op) || u.op == Ops::CONST || u.op == Ops::INDEX || u.op == Ops::LOAD || u.op == Ops::VLOAD ||
                       u.op == Ops::GEP || (u.op == Ops::STORE && acc_store(u));
    if (!plain) return nullptr;
    if ((u.op == Ops::LOAD || u.op == Ops::VLOAD) && !u.src.empty() && depends(&u) &&
        is_global_buffer(u.op == Ops::VLOAD ? u.src[0].get() : u.src[0]->op == Ops::INDEX ? u.src[0]->src[0].get() : u.src[0].get()))
      reads = true;
  }
  if (!reads) return nullptr;

  // the loop over trip / times; copy j of the body reads the index times * r + j
  const DType it = R->dtype;
  const UOpRef outer = UOp::make(Ops::RANGE, it, {uconst_int(R->src[0]->dtype, trip / times)}, R->arg, R->tag);
  const UOpRef step = uconst_int(it, times), base = alu(Ops::MUL, outer, step);
  std::vector<UOpRef> index{base};
  UOps consts{outer->src[0], step};
  for (int64_t j = 1; j < times; ++j) {
    consts.push_back(uconst_int(it, j));
    index.push_back(alu(Ops::ADD, base, consts.back()));
  }
  std::vector<std::unordered_map<const UOp*, UOpRef>> memo(static_cast<size_t>(times));
  std::function<UOpRef(const UOpRef&, int64_t)> copy = [&](const UOpRef& x, int64_t j) -> UOpRef {
    if (x == R) return index[static_cast<size_t>(j)];
    if (!depends(x.get())) return x;
    auto& m = memo[static_cast<size_t>(j)];
    if (auto f = m.find(x.get()); f != m.end()) return f->second;
    UOps src;
    for (auto& s : x->src) src.push_back(copy(s, j));
    return m[x.get()] = x->replace_src(std::move(src));
  };
  UOps out;
  out.reserve(l.size() + static_cast<size_t>(body * (times - 1)) + consts.size() + index.size());
  std::unordered_set<const UOp*> listed;
  auto list = [&](const UOpRef& x) {
    if (listed.insert(x.get()).second) out.push_back(x);
  };
  for (int i = 0; i < open; ++i) list(l[static_cast<size_t>(i)]);
  for (auto& c : consts) list(c);
  list(outer);
  for (auto& x : index) list(x);
  for (int64_t j = 0; j < times; ++j)
    for (int i = open + 1; i < close; ++i) list(copy(l[static_cast<size_t>(i)], j));
  // the END closes the new loop; what follows reads the last copy's values
  for (int i = close; i < static_cast<int>(l.size()); ++i) {
    const UOpRef& x = l[static_cast<size_t>(i)];
    if (i == close) {
      UOps src{copy(x->src[0], times - 1)};
      for (size_t k = 1; k < x->src.size(); ++k) src.push_back(x->src[k] == R ? outer : copy(x->src[k], times - 1));
      const UOpRef end = x->replace_src(std::move(src));
      memo[static_cast<size_t>(times - 1)][x.get()] = end;
      list(end);
    } else {
      list(copy(x, times - 1));
    }
  }
  return UOp::make(Ops::LINEAR, linear->dtype, std::move(out), linear->arg, linear->tag);
}

}  // namespace

UOpRef unroll_reduce_loop(const UOpRef& linear, int64_t max_lanes) {
  const int64_t times = codegen_option("LOOP_UNROLL", 4);
  if (times < 2) return linear;
  static const PatternMatcher pm({rule("the innermost reduce loop's body several times a trip", {Ops::LINEAR}, [](const UOpRef& x, UnrollCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    return unroll(x, ctx);
  })});
  UnrollCtx ctx;
  ctx.max_lanes = max_lanes;
  ctx.max_times = times;
  return graph_rewrite(linear, pm, ctx, "unroll the reduce loop");
}

}  // namespace ts
