// TinyJit's captured schedules (realize.h): compiled with a memory plan and a graph split, replayed, pruned, freed
#include "engine/realize/realize.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "engine/realize/realize_internal.h"
#include "engine/trace/recorder.h"
#include "engine/uop/buffer.h"

namespace ts {

// The reference's graph split (Schedule::graphs), made at capture
static void split_graph_calls(Schedule& captured, int graph_batch, bool graph_one_kernel) {
  captured.graphs.clear();
  if (graph_batch < 0) return;
  // the reference's graph split: consecutive kernels of one device that has a graph handler are one graph call, of at
  // most graph_batch kernels (0: any number), the limit doubling after each graph call; a batch of one kernel stays
  // a plain call (unless graph_one_kernel)
  size_t limit = static_cast<size_t>(graph_batch);
  GraphCall cur;
  Device* cur_dev = nullptr;
  auto close = [&](size_t end) {
    cur.end = end;
    if (cur_dev && (cur.end - cur.begin > 1 || (graph_one_kernel && cur.end > cur.begin))) {
      cur.graph = cur_dev->make_graph();
      captured.graphs.push_back(cur);
      limit *= 2;
      if (realize_config().debug >= 2) std::printf("JIT GRAPHing batch with %zu kernels\n", cur.end - cur.begin);
    }
    cur_dev = nullptr;
  };
  std::unordered_map<Device*, bool> has_graph;
  for (size_t i = 0; i < captured.items.size(); ++i) {
    Device* d = captured.items[i].kind == ScheduleItem::Kind::Kernel ? captured.programs[i]->device : nullptr;
    if (d && !has_graph.count(d)) has_graph[d] = d->make_graph() != nullptr;
    const bool can_graph = d && has_graph[d];
    const bool can_extend = can_graph && (!cur_dev || (cur_dev == d && (limit == 0 || i - cur.begin < limit)));
    if (cur_dev && !can_extend) close(i);
    if (can_graph && !cur_dev) {
      cur.begin = i;
      cur_dev = d;
    }
  }
  if (cur_dev) close(captured.items.size());
}

// The reference's memory plan at capture: the captured calls' intermediates (buffers no tensor holds) share fixed
// buffers wherever their lifetimes do not overlap (one of the same device, dtype and size, free again after its last
// call), kept from replay to replay, so every replay runs on the same memory (a graph call is submitted again as
// it was recorded) and nothing is allocated or freed while it runs. Prints the reference's line at DEBUG>=1.
static void plan_captured_memory(Schedule& captured) {
  std::unordered_set<const UOp*> inter;
  for (auto& b : captured.intermediates) inter.insert(b.get());
  if (inter.empty()) return;
  std::unordered_map<const UOp*, size_t> last;
  for (size_t i = 0; i < captured.items.size(); ++i)
    for (auto& b : captured.items[i].bufs)
      if (inter.count(b.get())) last[b.get()] = i;
  using Key = std::tuple<std::string, const void*, int64_t>;
  auto key = [](const UOp* b) { return Key{b->device, static_cast<const void*>(b->dtype), b->as<ParamArg>().size}; };
  std::map<Key, UOps> pool;
  std::unordered_map<const UOp*, UOpRef> assign;
  size_t planned = 0;
  double before = 0, after = 0;
  for (size_t i = 0; i < captured.items.size(); ++i) {
    for (auto& b : captured.items[i].bufs) {
      if (!inter.count(b.get()) || assign.count(b.get())) continue;
      const double bytes = static_cast<double>(b->as<ParamArg>().size) * b->dtype->itemsize();
      before += bytes;
      UOps& free = pool[key(b.get())];
      if (!free.empty()) {
        assign[b.get()] = free.back();
        free.pop_back();
      } else {
        assign[b.get()] = new_buffer(b->device, b->as<ParamArg>().size, b->dtype);
        after += bytes;
        ++planned;
      }
    }
    for (auto& b : captured.items[i].bufs)
      if (auto l = last.find(b.get()); l != last.end() && l->second == i) {
        pool[key(b.get())].push_back(assign[b.get()]);
        last.erase(l);
      }
  }
  for (auto& it : captured.items)
    for (auto& b : it.bufs)
      if (auto a = assign.find(b.get()); a != assign.end()) b = a->second;
  if (realize_config().debug >= 1 && after < before)
    std::printf("memory reduced from %.2f MB -> %.2f MB, %zu -> %zu bufs\n", before / 1e6, after / 1e6, assign.size(), planned);
  captured.intermediates.clear();  // (kept between replays: none is freed at its last use)
}

void compile_captured(Schedule& captured, int graph_batch, bool graph_one_kernel) {
  std::lock_guard lk(g_mu);
  captured.programs = compile_all(captured);
  plan_captured_memory(captured);
  split_graph_calls(captured, graph_batch, graph_one_kernel);
  // the captured LINEAR as a schedule of the trace, its replays' calls under it
  if (trace::level() != trace::Level::Off) {
    std::string graphs;
    for (const GraphCall& g : captured.graphs) graphs += (graphs.empty() ? "" : ", ") + std::to_string(g.end - g.begin);
    const size_t n = captured.items.size();
    trace::ContextScope scope(trace::ContextKind::Schedule, "TinyJit: " + std::to_string(n) + (n == 1 ? " call" : " calls") + " captured" +
                                                               (graphs.empty() ? "" : ", graph calls of " + graphs + " kernels"));
    captured.trace_schedule = trace::record_schedule(captured.items);
  }
}

std::unordered_set<const UOp*> written_buffers(const Schedule& s, bool only_unread) {
  std::unordered_set<const UOp*> out;
  for (auto& it : s.items) {
    if (it.bufs.empty()) continue;
    if (only_unread && it.kind == ScheduleItem::Kind::Kernel) {
      // read too when an INDEX of its PARAM 0 is used other than as a STORE's target
      bool read = false;
      for (auto& u : it.ast->toposort())
        for (size_t k = 0; k < u->src.size() && !read; ++k) {
          const UOp& x = *u->src[k];
          read = x.op == Ops::INDEX && x.src[0]->op == Ops::PARAM && x.src[0]->as<ParamArg>().slot == 0 && !(u->op == Ops::STORE && k == 0);
        }
      if (read) continue;
    }
    out.insert(it.bufs[0].get());
  }
  return out;
}

void replay(const Schedule& captured, const UOps& from, const UOps& to, const std::map<std::string, int64_t>& var_vals) {
  std::lock_guard lk(g_mu);
  // each input's buffer replaces the capture's: a call that writes an input (an assign) writes the caller's buffer,
  // as the reference's; an input that is a buffer the calls write (a result of the last call fed back in, not the
  // capture's own input) is read from a copy, so no call reads what it overwrites
  const std::unordered_set<const UOp*> written = written_buffers(captured, false);
  std::unordered_map<const UOp*, UOpRef> sub;
  Schedule copies;
  copies.jit = true;
  for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
    if (from[i] == to[i]) continue;
    if (written.count(to[i].get())) {
      UOpRef fresh = new_buffer(to[i]->device, to[i]->numel(), to[i]->dtype);
      copies.items.push_back(ScheduleItem{ScheduleItem::Kind::Copy, nullptr, {fresh, to[i]}, nullptr});
      sub.emplace(from[i].get(), fresh);
    } else {
      sub.emplace(from[i].get(), to[i]);
    }
  }
  copies.trace_schedule = captured.trace_schedule;
  if (!copies.items.empty()) run_schedule(copies, true);
  std::map<std::string, int64_t> vv = captured.var_vals;
  for (auto& [k, v] : var_vals) vv[k] = v;
  run_schedule(captured, true, RunOverrides{&sub, &vv, true, captured.trace_schedule});
}

UOps written_inputs(const Schedule& captured, const UOps& inputs) {
  const std::unordered_set<const UOp*> written = written_buffers(captured, false);
  UOps out;
  for (auto& b : inputs)
    if (written.count(b.get())) out.push_back(b);
  return out;
}

size_t free_intermediates(const Schedule& captured, const UOps& keep) {
  std::lock_guard lk(g_mu);
  std::unordered_set<const UOp*> kept;
  for (auto& b : keep) kept.insert(b.get());
  const std::unordered_set<const UOp*> written = written_buffers(captured, true);
  size_t freed = 0;
  for (auto& it : captured.items) {
    if (it.bufs.empty()) continue;
    const UOpRef& b = it.bufs[0];
    if (b->buffer && !kept.count(b.get()) && written.count(b.get())) {
      freed += buffer_of(*b)->nbytes();
      b->buffer.reset();
    }
  }
  return freed;
}

std::pair<std::shared_ptr<Schedule>, std::shared_ptr<Schedule>> prune_schedule(const Schedule& captured, const UOps& needed) {
  std::unordered_set<const UOp*> need;
  for (auto& b : needed) need.insert(b.get());
  auto kept = std::make_shared<Schedule>(), once = std::make_shared<Schedule>();
  for (auto& it : captured.items) {
    const bool reads = std::any_of(it.bufs.begin(), it.bufs.end(), [&](const UOpRef& b) { return need.count(b.get()) > 0; });
    if (reads)
      for (auto& b : it.bufs) need.insert(b.get());
    (reads ? kept : once)->items.push_back(it);
  }
  // every buffer is kept between the two (the calls run once may write what the kept ones read); the intermediates
  // only kept calls use stay the kept calls' to plan
  kept->var_vals = once->var_vals = captured.var_vals;
  std::unordered_set<const UOp*> used_once;
  for (auto& it : once->items)
    for (auto& b : it.bufs) used_once.insert(b.get());
  for (auto& b : captured.intermediates)
    if (!used_once.count(b.get())) kept->intermediates.push_back(b);
  return {kept, once};
}

}  // namespace ts
