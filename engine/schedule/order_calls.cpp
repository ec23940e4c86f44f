// The "order calls" pass: the kernel graph and the copies -> one LINEAR in the order the calls run (Kahn's algorithm
// over the calls' dependencies, as the reference's toposort of the kernel graph).
#include <algorithm>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>

#include "engine/schedule/passes.h"
#include "engine/uop/error.h"

namespace ts::sched {

std::vector<int> kahn_order(const CallGraph& g) {
  // discovery order = the reference's toposort of the kernel graph: post-order from the sink of every tensor-level
  // store (outputs, copies, assigns: callify's items, themselves in post-order of the tensor graph), each call's
  // inputs visited in argument order
  const size_t n = g.calls.size();
  std::vector<char> seen(n, 0);
  std::vector<int> disc;
  std::function<void(int)> dfs = [&](int i) {
    if (seen[i]) return;
    seen[i] = 1;
    for (int d : g.deps[i]) dfs(d);
    disc.push_back(i);
  };
  for (int r : g.roots) dfs(r);
  for (size_t i = 0; i < n; ++i) dfs(static_cast<int>(i));  // cycles leave nodes unvisited: caught below
  // Kahn's algorithm, FIFO in discovery order. As in the reference, a kernel's successors are released in the order
  // their edges were made: every dependency edge first (kernels in discovery order, each in argument order), then the
  // write-after-read edges (readers in discovery order)
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> succ(n);
  for (int i : disc)
    for (int d : g.deps[i]) {
      succ[d].push_back(i);
      indeg[i]++;
    }
  std::unordered_map<const UOp*, std::vector<int>> writers;  // buffer -> the calls that write a new state of it
  for (int w : disc)
    if (g.own[w]) writers[g.writes[w]].push_back(w);
  for (int r : disc)
    for (auto& [buf, state] : g.read_states[r])
      for (int w : writers[buf])
        if (w != r && g.replaces[w] == state && std::find(g.deps[w].begin(), g.deps[w].end(), r) == g.deps[w].end()) {
          succ[r].push_back(w);
          indeg[w]++;
        }
  std::deque<int> q;
  std::vector<int> order;
  for (int i : disc)
    if (!indeg[i]) q.push_back(i);
  while (!q.empty()) {
    int i = q.front();
    q.pop_front();
    order.push_back(i);
    for (int s : succ[i])
      if (--indeg[s] == 0) q.push_back(s);
  }
  if (order.size() != n) throw Error("cycle detected in assign graph");
  return order;
}

namespace {

// the pass's context: the calls, and the order its rule decided
struct OrderCalls {
  const CallGraph& graph;
  std::vector<int> order;
};
const PatternMatcher& pm_order_calls() {
  static const PatternMatcher pm({
      rule("kernel graph -> LINEAR: each call after the calls it depends on", {Ops::SINK}, [](const UOpRef& x, OrderCalls& ctx) -> UOpRef {
        if (x->src != ctx.graph.calls) return nullptr;  // not the schedule's own SINK
        ctx.order = kahn_order(ctx.graph);
        UOps lin;
        for (int i : ctx.order) lin.push_back(ctx.graph.calls[i]);
        return UOp::make(Ops::LINEAR, dtypes::void_, lin);
      }),
  });
  return pm;
}

}  // namespace

std::vector<int> order_calls(const CallGraph& g) {
  OrderCalls ctx{g, {}};
  const UOpRef lin = graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, g.calls), pm_order_calls(), ctx, "order calls");
  if (lin->op != Ops::LINEAR || lin->src.size() != ctx.order.size()) throw Error("order calls: the pass made no LINEAR of the schedule's calls");
  return std::move(ctx.order);
}

}  // namespace ts::sched
