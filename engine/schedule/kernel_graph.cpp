// The kernel graph's passes: earliest rewrites (split_reduceop), stage to store (a buffer and a kernel per STAGE
// rangeify left) and split kernels (each kernel store -> CALL(its AST, its buffers)).
#include <algorithm>
#include <unordered_set>

#include "engine/schedule/passes.h"
#include "engine/schedule/rangeify.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts::sched {

namespace {

// ---- split_reduceop (reference 5.5) --------------------------------------------------------------
UOpRef split_reduceop(const UOpRef& red) {
  const ReduceArg& ra = red->as<ReduceArg>();
  if (ra.n == 0) return nullptr;
  const UOpRef& x = red->src[0];
  int64_t in_n = x->numel(), out_n = red->numel();
  if (out_n == 0 || in_n / out_n < 32768) return nullptr;
  // which dims of x are expanded (broadcast) relative to its base
  UOps rngs;
  for (size_t i = 0; i < x->shape.size(); ++i) rngs.push_back(x->shape[i] > 1 ? urange(x->shape[i], (int64_t)i, AxisType::WEAK) : iconst(0));
  const UOp* u = x.get();
  UOps cur = rngs;
  while (group::movement(u->op)) { cur = apply_movement_op(*u, cur); u = u->src[0].get(); }
  std::unordered_set<int64_t> alive;
  for (auto& r : cur)
    for (auto& rr : r->ranges()) alive.insert(rr->as<RangeArg>().id);
  int64_t maxd = std::min<int64_t>(256, (int64_t(1) << 22) / out_n);
  for (int i = 0; i < ra.n; ++i) {
    if (!alive.count(i)) continue;
    for (int64_t d = maxd; d >= 8; --d) {
      if (x->shape[i] % d) continue;
      Shape ss(x->shape.begin(), x->shape.begin() + i);
      ss.push_back(d);
      ss.push_back(x->shape[i] / d);
      ss.insert(ss.end(), x->shape.begin() + i + 1, x->shape.end());
      Tensor t(x);
      std::vector<int64_t> perm;
      for (size_t k = 0; k < ss.size(); ++k) if ((int64_t)k != i) perm.push_back(k);
      perm.push_back(i);
      Tensor sp = t.reshape(ss).permute(perm);
      // reduce the original axes (the first ra.n of the permuted shape), keep the split one last
      UOpRef r1 = UOp::make(Ops::REDUCE, red->dtype, {sp.uop()}, ReduceArg{ra.op, ra.n});
      UOpRef c = UOp::make(Ops::CONTIGUOUS, red->dtype, {r1});
      // reduce the split axis (now last) of the partials
      size_t nd = c->shape.size();
      std::vector<int64_t> p2{(int64_t)nd - 1};
      for (size_t k = 0; k + 1 < nd; ++k) p2.push_back(k);
      UOpRef pc = Tensor(c).permute(p2).uop();
      UOpRef r2 = UOp::make(Ops::REDUCE, red->dtype, {pc}, ReduceArg{ra.op, 1});
      return reshape_to(r2, red->shape);
    }
  }
  return nullptr;
}

}  // namespace

const PatternMatcher& earliest_rewrites() {
  static const PatternMatcher pm({
      rule("DETACH(x) -> x", {Ops::DETACH}, [](const UOpRef& x) { return x->src[0]; }),
      rule("CONTIGUOUS_BACKWARD(x) -> x", {Ops::CONTIGUOUS_BACKWARD}, [](const UOpRef& x) { return x->src[0]; }),
      rule("RESHAPE(RESHAPE(x)) -> RESHAPE(x)", {Ops::RESHAPE}, [](const UOpRef& x) -> UOpRef {
        return x->src[0]->op == Ops::RESHAPE ? reshape_to(x->src[0]->src[0], x->shape) : nullptr;
      }),
      rule("RESHAPE to its source's shape -> the source", {Ops::RESHAPE}, [](const UOpRef& x) -> UOpRef {
        return x->src[0]->shape == x->shape ? x->src[0] : nullptr;
      }),
      rule("split_reduceop: large reduce in two kernels", {Ops::REDUCE}, split_reduceop),
      rule("reshaping on STORE can be a NOOP", {Ops::STORE}, [](const UOpRef& x) -> UOpRef {
        const UOpRef &dst = x->src[0], &src = x->src[1];
        if (dst->op != Ops::RESHAPE || src->op != Ops::RESHAPE || dst->src[0]->shape != src->src[0]->shape) return nullptr;
        UOps ns = x->src;
        ns[0] = dst->src[0];
        ns[1] = src->src[0];
        return x->replace_src(ns);
      }),
  });
  return pm;
}

namespace {

UOpRef flat_index(const UOps& idx, const std::vector<int64_t>& sizes) {
  auto [acc, valid] = linearize_index(idx, sizes);
  return with_valid(acc, valid);
}

int64_t range_size(const UOpRef& r) { return r->op == Ops::RANGE ? r->src[0]->vmax() : 1; }  // the max size

// move masks (WHERE(valid, x, Invalid)) out of index math; a masked read becomes a gated read
// an ALU op (not WHERE) with a masked source v.where(x, Invalid): (its index, the source); (-1, null) when none
std::pair<int, UOpRef> masked_source(const UOpRef& x) {
  if (!group::alu(x->op) || x->op == Ops::WHERE) return {-1, nullptr};
  for (size_t i = 0; i < x->src.size(); ++i)
    if (x->src[i]->op == Ops::WHERE && is_invalid(x->src[i]->src[2])) return {static_cast<int>(i), x->src[i]};
  return {-1, nullptr};
}
// x with its masked source i replaced by the value under the mask
UOpRef unmasked(const UOpRef& x, int i) {
  UOps ns = x->src;
  ns[i] = x->src[i]->src[1];
  return x->replace_src(ns);
}

const PatternMatcher& pm_lower_masks() {
  static const PatternMatcher pm = symbolic() + PatternMatcher({
      rule("CONTIGUOUS inside a kernel is its value", {Ops::CONTIGUOUS}, [](const UOpRef& x) { return x->src[0]; }),
      rule("simplify valid: each clause under the ones before it", {Ops::AND}, [](const UOpRef& x) -> UOpRef {
        return is_bool(x->dtype) ? simplify_valid(x) : nullptr;
      }),
      rule("index math simplified under its valid", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        const UOpRef& idx = x->src[1];
        if (!is_invalid(x->src[2]) || idx->dtype != dtypes::weakint) return nullptr;
        for (auto& u : idx->toposort())
          if (u->op == Ops::INDEX) return nullptr;
        UOpRef s = uop_given_valid(x->src[0], idx, false);
        return s == idx ? nullptr : alu(Ops::WHERE, x->src[0], s, x->src[2]);
      }),
      rule("INDEX(p, v.where(i, Invalid)) -> v.where(INDEX(p, i), 0) (a masked read is a gated read)", {Ops::INDEX}, [](const UOpRef& x) -> UOpRef {
        if (x->src.size() != 2 || x->src[1]->op != Ops::WHERE || !is_invalid(x->src[1]->src[2])) return nullptr;
        return alu(Ops::WHERE, x->src[1]->src[0], UOp::make(Ops::INDEX, x->dtype, {x->src[0], x->src[1]->src[1]}), uconst(x->dtype, 0));
      }),
      rule("bool f(v.where(x, Invalid)) -> v & f(x) (masked-out conditions are false)", {}, [](const UOpRef& x) -> UOpRef {
        auto [i, m] = masked_source(x);
        return m && is_bool(x->dtype) ? alu(Ops::AND, m->src[0], unmasked(x, i)) : nullptr;
      }),
      rule("f(v.where(x, Invalid)) -> v.where(f(x), Invalid) (the mask moves out of index math)", {}, [](const UOpRef& x) -> UOpRef {
        auto [i, m] = masked_source(x);
        return m && !is_bool(x->dtype) ? alu(Ops::WHERE, m->src[0], unmasked(x, i), uconst_invalid()) : nullptr;
      }),
      rule("(v.where(c, Invalid)).where(a, b) -> (v & c).where(a, b)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        const UOpRef& g = x->src[0];
        return g->op == Ops::WHERE && is_invalid(g->src[2]) ? alu(Ops::WHERE, alu(Ops::AND, g->src[0], g->src[1]), x->src[1], x->src[2]) : nullptr;
      }),
      rule("c.where(c.where(a, b), d) -> c.where(a, d)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        const UOpRef& t = x->src[1];
        return t->op == Ops::WHERE && t->src[0] == x->src[0] ? alu(Ops::WHERE, x->src[0], t->src[1], x->src[2]) : nullptr;
      }),
  });
  return pm;
}

// renumber BUFFERs to PARAM slots and RANGEs from 0, in pre-order (output first), as "kernel split" does
UOpRef make_kernel_ast(const UOpRef& store_end, UOps& bufs) {
  // the reference's "kernel split" is a bottom-up rewrite driven by a stack: a node is numbered when it is popped,
  // and a node already waiting on the stack is not pushed again (so END's ranges are numbered after its body)
  int64_t next_range = 0;
  std::unordered_map<const UOp*, UOpRef> rmap;
  std::vector<const UOp*> order;
  {
    std::vector<const UOp*> stack{store_end.get()};
    std::unordered_set<const UOp*> on_stack{store_end.get()};
    while (!stack.empty()) {
      const UOp* n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (auto it = n->src.rbegin(); it != n->src.rend(); ++it)
        if (on_stack.insert(it->get()).second) stack.push_back(it->get());
    }
  }
  for (const UOp* x : order) {
    if (x->is_variable()) {
      rmap[x] = UOp::make(Ops::PARAM, x->dtype, {}, x->as<ParamArg>());
    } else if (x->op == Ops::BUFFER) {
      ParamArg pa = x->as<ParamArg>();
      pa.slot = static_cast<int64_t>(bufs.size());
      bufs.push_back(x->ref());
      rmap[x] = UOp::make(Ops::PARAM, x->dtype, {}, pa);
    } else if (x->op == Ops::RANGE) {
      RangeArg ra = x->as<RangeArg>();
      ra.id = next_range++;
      rmap[x] = UOp::make(Ops::RANGE, x->dtype, {x->src[0]}, ra);  // symbolic sizes are substituted below
    }
  }
  // symbolic range sizes refer to Variables: rebuild those ranges with the Variable params
  for (auto& [k, v] : rmap)
    if (v->op == Ops::RANGE && v->src[0]->op != Ops::CONST) v = UOp::make(Ops::RANGE, v->dtype, {substitute(v->src[0], rmap)}, v->arg);
  UOpRef body = substitute(store_end, rmap);
  // an assign's store repeated (a.assign(a + 1) in a loop) is tagged apart in the graph, one kernel each; the kernel
  // itself is the same program, so its AST is untagged (one compile, as the reference's)
  std::unordered_map<const UOp*, UOpRef> untag;
  for (auto& u : body->toposort())
    if (u->op == Ops::STORE && u->tag != -1) untag[u.get()] = UOp::make(Ops::STORE, u->dtype, u->src, u->arg);
  if (!untag.empty()) body = substitute(body, untag);
  if (body->op == Ops::END && body->src.size() == 1) body = body->src[0];
  // sort END ranges by id
  if (body->op == Ops::END) {
    UOps rs(body->src.begin() + 1, body->src.end());
    std::sort(rs.begin(), rs.end(), [](const UOpRef& a, const UOpRef& b) { return a->as<RangeArg>().id < b->as<RangeArg>().id; });
    UOps ns{body->src[0]};
    ns.insert(ns.end(), rs.begin(), rs.end());
    body = body->replace_src(ns);
  }
  return UOp::make(Ops::SINK, dtypes::void_, {body}, KernelInfo{});
}

// The "stage to store" pass (sources first): each STAGE rangeify left gets a buffer and a kernel that stores the staged
// value into it; its readers index that buffer, written after the kernel: INDEX(AFTER(buffer, END(STORE)), flat index).
// Sources first, so a stage's value has had its own stages replaced when its kernel is made.
// the read x = INDEX(STAGE, idx...) of the stage's buffer, written after its kernel
UOpRef read_stage(const UOpRef& x, const UOpRef& after) {
  const UOpRef& st = x->src[0];
  std::vector<int64_t> sizes;
  for (size_t i = 1; i < st->src.size(); ++i) sizes.push_back(range_size(st->src[i]));
  UOps idx(x->src.begin() + 1, x->src.end());
  UOpRef out = UOp::make(Ops::INDEX, after->dtype, {after, flat_index(idx, sizes)});
  return out->dtype != x->dtype ? ucast(out, x->dtype) : out;
}
// the first read of a STAGE: its buffer and the kernel that stores it
UOpRef stage_to_store(const UOpRef& x, StageToStore& ctx) {
  const UOpRef& st = x->src[0];
  if (st->op != Ops::STAGE || ctx.after_of.count(st.get())) return nullptr;
  UOps rng(st->src.begin() + 1, st->src.end());
  std::vector<int64_t> sizes;
  int64_t n = 1;
  for (auto& r : rng) { sizes.push_back(range_size(r)); n *= sizes.back(); }
  DType dt = strong(st->dtype);
  UOpRef buf = new_buffer(st->as<StageArg>().device.empty() ? default_device() : st->as<StageArg>().device, n, dt);
  UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dt, {buf, flat_index(rng, sizes)}), ucast(st->src[0], dt)});
  UOps e{store};
  for (auto& r : rng) if (r->op == Ops::RANGE) e.push_back(r);
  UOpRef end = e.size() > 1 ? UOp::make(Ops::END, dtypes::void_, e) : store;
  UOpRef after = UOp::make(Ops::AFTER, dt, {buf, end});
  ctx.kernels.push_back({end, buf, ctx.computes_of(st), after.get()});
  ctx.after_of.emplace(st.get(), after);
  return read_stage(x, after);
}

}  // namespace

const PatternMatcher& pm_stage_to_store() {
  static const PatternMatcher pm({
      rule("STAGE -> a new buffer, stored by its own kernel (a kernel boundary)", {Ops::INDEX}, stage_to_store),
      rule("another read of a STAGE -> a read of its buffer", {Ops::INDEX}, [](const UOpRef& x, StageToStore& ctx) -> UOpRef {
        auto known = x->src[0]->op == Ops::STAGE ? ctx.after_of.find(x->src[0].get()) : ctx.after_of.end();
        return known != ctx.after_of.end() ? read_stage(x, known->second) : nullptr;
      }),
  });
  return pm;
}

namespace {

// a read of a buffer written by another kernel of this schedule (AFTER(buffer, its kernel)) is a read of the buffer
const PatternMatcher& pm_kernel_inputs() {
  static const PatternMatcher pm({rule("AFTER(buffer, kernel) read by a kernel -> the buffer", {Ops::AFTER}, [](const UOpRef& x) -> UOpRef {
    return x->src[0]->op == Ops::BUFFER && (x->src[1]->op == Ops::END || x->src[1]->op == Ops::STORE || x->src[1]->op == Ops::CALL) ? x->src[0] : nullptr;
  })});
  return pm;
}

// The "split kernels" pass (bottom-up, the reference's split_kernels > kernel split): each kernel of the schedule (a
// store with no open ranges) becomes CALL(its AST, its buffers): reads of other kernels' buffers become plain buffers
// ("kernel inputs"), masks leave the index math ("lower masks"), buffers become PARAMs in argument order and ranges are
// numbered from 0. An argument written by another kernel of this schedule stays AFTER(buffer, that kernel), so the
// result is the kernel graph; node-first, a kernel met as another's argument becomes a CALL in turn.
UOpRef split_kernel(const UOpRef& x, SplitKernels& ctx) {
  auto k = ctx.kernel.find(x.get());
  if (k == ctx.kernel.end()) return nullptr;
  // the buffers it reads that other kernels write: argument -> AFTER(buffer, writer) (not walking into the writers)
  std::unordered_map<const UOp*, UOpRef> written;
  std::unordered_set<const UOp*> seen{x.get()};
  for (std::vector<const UOp*> todo{x.get()}; !todo.empty();) {
    const UOp* u = todo.back();
    todo.pop_back();
    if (u->op == Ops::AFTER && u->src[0]->op == Ops::BUFFER) {
      written.emplace(u->src[0].get(), u->ref());
      continue;
    }
    for (auto& s : u->src)
      if (seen.insert(s.get()).second) todo.push_back(s.get());
  }
  // bottom-up: an AFTER becomes its buffer before the walk could enter the kernel that writes it
  UOpRef body = graph_rewrite(x, pm_kernel_inputs(), "kernel inputs", true);
  body = graph_rewrite(body, pm_lower_masks(), "lower masks");
  UOps bufs;
  UOpRef ast = make_kernel_ast(body, bufs);
  UOps src{ast};
  for (auto& b : bufs) {
    auto w = written.find(b.get());
    src.push_back(w != written.end() && b.get() != bufs[0].get() ? w->second : b);
  }
  ctx.asts[k->second] = ast;
  ctx.bufs[k->second] = bufs;
  return ctx.calls[k->second] = UOp::make(Ops::CALL, dtypes::void_, src);
}

}  // namespace

const PatternMatcher& pm_split_kernels() {
  static const PatternMatcher pm({rule("a store with no open ranges -> a kernel: CALL(AST, buffers)", {Ops::END, Ops::STORE}, split_kernel)});
  return pm;
}

}  // namespace ts::sched
