// build_schedule: the schedule of one graph, as a list of passes (engine/schedule/passes.h): callify, earliest
// rewrites, rangeify, stage to store, split kernels, order calls. Each pass runs whether or not a tracer listens.
#include "engine/schedule/schedule.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "engine/schedule/passes.h"
#include "engine/schedule/rangeify.h"

namespace ts {

const UOp* buffer_base(const UOp* u) {
  while (u->op == Ops::RESHAPE) u = u->src[0].get();
  return u->op == Ops::BUFFER ? u : nullptr;
}

namespace sched {

void snapshot(const char* name, const UOpRef& sink) {
  if (rewrite_listener()) graph_rewrite(sink, PatternMatcher{}, name);
}

UOpRef reshape_to(const UOpRef& x, const Shape& s) {
  if (x->shape == s) return x;
  return UOp::make(Ops::RESHAPE, x->dtype, {x}, Shape(s));
}

namespace {

// A call of the schedule before it is ordered. ci: the callify item it came from (its own kernel or copy: own = true;
// an intermediate found while lowering it: false)
struct Built {
  ScheduleItem item;
  std::vector<int> deps;
  const UOp* writes;
  int ci = -1;
  bool own = false;
};
struct Calls {
  std::vector<Built> built;       // in discovery order
  std::vector<int> item_to_built;  // callify item -> its call
  void add_copy(const Callified& cf, int i) {
    const Item& it = cf.items[i];
    item_to_built[i] = static_cast<int>(built.size());
    built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Copy, nullptr, {it.dst, it.src}, it.computes}, {}, it.dst.get(), i, true});
  }
};

// provenance: the tensor node a stage's value stands for, back through the earliest rewrites (the highest node
// rewritten to it) and callify's substitutions; null for a value the rewrites made (a split reduce's partials)
// (the inverse of the earliest rewrites is built on the first intermediate kernel: most schedules have none)
struct Provenance {
  const Callified& cf;
  const UOpRef& called;
  const std::unordered_map<const UOp*, UOpRef>& early;
  const UOps& staged;
  std::unordered_map<const UOp*, const UOp*> early_from;
  UOpRef operator()(const UOpRef& stage) {
    const int64_t o = stage->as<StageArg>().origin;
    if (o < 0 || o >= static_cast<int64_t>(staged.size())) return nullptr;
    if (early_from.empty())
      for (auto& u : called->toposort())
        if (auto it = early.find(u.get()); it != early.end()) early_from[it->second.get()] = u.get();
    const UOp* x = staged[o].get();
    if (auto it = early_from.find(x); it != early_from.end()) x = it->second;
    auto t = cf.origin.find(x);
    return t != cf.origin.end() ? t->second->ref() : nullptr;
  }
};

// The kernel stores callify's pass wrote, through earliest rewrites, rangeify and stage to store: a call per kernel
// (each store's own, after the intermediates first found under it and the copies it reads), the intermediates'
// buffers appended to `intermediates`.
Calls lower_stores(const Callified& cf, UOps& intermediates) {
  Calls c;
  c.item_to_built.assign(cf.items.size(), -1);
  UOps stores;
  std::vector<int> store_item;
  for (size_t i = 0; i < cf.items.size(); ++i)
    if (cf.stores[i]) {
      stores.push_back(cf.stores[i]);
      store_item.push_back(static_cast<int>(i));
    }
  if (stores.empty()) return c;
  UOpRef sink = UOp::make(Ops::SINK, dtypes::void_, stores);
  snapshot("View Call", sink);
  std::unordered_map<const UOp*, UOpRef> early;
  const UOpRef called = sink;
  sink = graph_rewrite(sink, earliest_rewrites(), "earliest rewrites", true, &early);
  UOps staged;
  UOpRef rsink = rangeify(sink, &staged);
  snapshot("View Rangeify", rsink);

  // stage to store: each remaining STAGE gets a buffer and a kernel
  StageToStore sts;
  sts.computes_of = Provenance{cf, called, early, staged, {}};
  UOpRef lsink = graph_rewrite(rsink, pm_stage_to_store(), sts, "stage to store");
  // the stage kernels first found under each store, in discovery order: those it reaches that no earlier store does
  std::unordered_map<const UOp*, size_t> stage_index;
  for (size_t s = 0; s < sts.kernels.size(); ++s) stage_index[sts.kernels[s].after] = s;
  std::unordered_set<const UOp*> walked;  // across the stores: a node under an earlier store gave its stages to it
  for (size_t k = 0; k < rsink->src.size(); ++k) {
    const UOpRef& lowered = lsink->src[k];
    std::vector<size_t> found;
    for (std::vector<const UOp*> todo{lowered.get()}; !todo.empty();) {
      const UOp* u = todo.back();
      todo.pop_back();
      if (!walked.insert(u).second) continue;
      if (auto it = stage_index.find(u); it != stage_index.end()) found.push_back(it->second);
      for (auto& src : u->src) todo.push_back(src.get());
    }
    std::sort(found.begin(), found.end());
    int ci = store_item[k];
    // copies this kernel depends on, in order, then the intermediates discovered while lowering it
    for (int d : cf.items[ci].deps)
      if (cf.items[d].kind == ScheduleItem::Kind::Copy && c.item_to_built[d] < 0) c.add_copy(cf, d);
    for (size_t s : found) {
      intermediates.push_back(sts.kernels[s].buffer);
      c.built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Kernel, sts.kernels[s].end, {}, sts.kernels[s].computes}, {}, sts.kernels[s].buffer.get(), ci, false});
    }
    c.item_to_built[ci] = static_cast<int>(c.built.size());
    c.built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Kernel, lowered, {}, cf.items[ci].computes}, {}, cf.items[ci].dst.get(), ci, true});
  }
  return c;
}

// "split kernels" over every kernel: each call's AST and buffers, and its CALL
UOps split_kernels(Calls& c) {
  SplitKernels sk;
  UOps roots;
  for (auto& b : c.built)
    if (b.item.kind == ScheduleItem::Kind::Kernel) {
      sk.kernel.emplace(b.item.ast.get(), roots.size());
      roots.push_back(b.item.ast);
    }
  sk.asts.resize(roots.size());
  sk.bufs.resize(roots.size());
  sk.calls.resize(roots.size());
  if (!roots.empty()) snapshot("View Kernel Graph", graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, roots), pm_split_kernels(), sk, "split kernels", true));
  UOps calls;
  for (auto& b : c.built) {
    if (b.item.kind == ScheduleItem::Kind::Kernel) {
      const size_t k = sk.kernel.at(b.item.ast.get());
      b.item.ast = sk.asts[k];
      b.item.bufs = std::move(sk.bufs[k]);
      calls.push_back(sk.calls[k]);
    } else {
      const UOpRef &dst = b.item.bufs[0], &src = b.item.bufs[1];
      calls.push_back(UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dst->dtype, {dst, src}, dst->device), dst, src}));
    }
  }
  return calls;
}

// dependencies between buffer states: a kernel's output argument depends on the write of the state it replaces (WAW),
// each input on the write of the state it reads (RAW); a write waits for every reader of the state it replaces (WAR,
// an ordering edge only, made by the ordering), and effects on one buffer keep callify's program order
CallGraph call_graph(const Callified& cf, Calls& c, UOps calls) {
  auto& built = c.built;
  for (size_t ci = 0; ci < cf.items.size(); ++ci)
    for (int d : cf.items[ci].deps)
      if (c.item_to_built[d] >= 0 && c.item_to_built[d] != c.item_to_built[ci]) built[c.item_to_built[ci]].deps.push_back(c.item_to_built[d]);
  auto built_of = [&](int item) { return item >= 0 ? c.item_to_built[item] : -1; };
  CallGraph g;
  g.calls = std::move(calls);
  const size_t n = built.size();
  g.deps.resize(n);
  g.read_states.resize(n);
  g.replaces.assign(n, -1);
  std::unordered_map<const UOp*, int> writer;  // latest write of a buffer created while lowering (intermediates)
  for (size_t i = 0; i < n; ++i) {
    auto& b = built[i];
    auto state_read = [&](const UOp* buf) -> int {
      if (b.ci >= 0) {
        const auto& rv = cf.items[b.ci].reads;
        if (auto it = rv.find(buf); it != rv.end()) return built_of(it->second);
      }
      auto w = writer.find(buf);
      return w != writer.end() ? w->second : -1;
    };
    std::vector<int>& ordered = g.deps[i];
    auto add = [&](int d) {
      if (d >= 0 && d != static_cast<int>(i) && std::find(ordered.begin(), ordered.end(), d) == ordered.end()) ordered.push_back(d);
    };
    if (b.own) g.replaces[i] = built_of(cf.items[b.ci].overwrites);
    add(g.replaces[i]);
    for (size_t k = 1; k < b.item.bufs.size(); ++k) {
      int v = state_read(b.item.bufs[k].get());
      add(v);
      g.read_states[i].push_back({b.item.bufs[k].get(), v});
    }
    for (int d : b.deps) add(d);
    writer[b.writes] = static_cast<int>(i);
    g.writes.push_back(b.writes);
    g.own.push_back(b.own);
  }
  for (size_t ci = 0; ci < cf.items.size(); ++ci) g.roots.push_back(c.item_to_built[ci]);
  return g;
}

}  // namespace

Schedule build_schedule(const UOps& outputs) {
  Callified cf = callify(outputs);
  Schedule out;
  out.becomes = std::move(cf.becomes);
  out.var_vals = cf.var_vals;
  out.keep_alive = cf.keep;
  for (auto& o : outputs) out.keep_alive.push_back(o);
  Calls c = lower_stores(cf, out.intermediates);
  for (size_t i = 0; i < cf.items.size(); ++i)
    if (c.item_to_built[i] < 0) c.add_copy(cf, static_cast<int>(i));
  UOps calls = split_kernels(c);
  const CallGraph g = call_graph(cf, c, std::move(calls));
  for (int i : order_calls(g)) out.items.push_back(c.built[i].item);
  return out;
}

}  // namespace sched

}  // namespace ts
