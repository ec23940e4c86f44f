// The schedule cache: structurally equal tensor graphs on different buffers (and Variables bound to different values)
// schedule the same: the graph is normalized, scheduled once (build_schedule), and every later realize instantiates
// the cached schedule with its own buffers.
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "engine/schedule/passes.h"
#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/uop_hash.h"

namespace ts {

// ---- schedule cache ------------------------------------------------------------------------------
// Structurally equal tensor graphs on different buffers (and Variables bound to different values) schedule the same:
// the graph is normalized (each buffer -> a placeholder numbered by first use, each bound value -> its lower bound),
// scheduled once, and every later realize instantiates the cached schedule with its own buffers.
namespace {

struct Normalized {
  UOpRef sink;
  PtrMap<const UOp*> to_original;  // normalized node -> original node
  UOps actual;  // placeholder i -> the buffer it stands for
  std::map<std::string, int64_t> var_vals;
  UOps keep;
};

Normalized normalize(const UOps& outputs) {
  Normalized n;
  UOpRef sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  std::unordered_map<const UOp*, UOpRef> memo;
  for (auto& u : sink->toposort()) {
    UOpRef out;
    if (u->op == Ops::BUFFER && !u->is_variable()) {
      ParamArg pa = u->as<ParamArg>();
      pa.slot = -2 - static_cast<int64_t>(n.actual.size());
      n.actual.push_back(u);
      out = UOp::make(Ops::BUFFER, u->dtype, {}, pa);
    } else if (u->op == Ops::AFTER && u->src[0]->is_variable()) {
      const ParamArg& va = u->src[0]->as<ParamArg>();
      int64_t v = u->src[1]->src[1]->const_int();
      auto [it, fresh] = n.var_vals.emplace(va.name, v);
      if (!fresh && it->second != v)
        throw Error("Variable " + va.name + " is bound to two values (" + std::to_string(it->second) + " and " + std::to_string(v) + ") in one realize");
      out = bind_variable(u->src[0], va.vmin);
    } else {
      UOps ns;
      for (auto& s : u->src) ns.push_back(memo.at(s.get()));
      out = u->replace_src(std::move(ns));
    }
    memo[u.get()] = out;
    *n.to_original.try_emplace(out.get()).first = u.get();
    n.keep.push_back(u);
  }
  n.sink = memo.at(sink.get());
  return n;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<const UOp*, std::pair<UOpRef, std::shared_ptr<const Schedule>>> entries;
  std::unordered_multimap<size_t, UOpRef> by_hash;  // the normalized sinks of `entries`, by their hash
};
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

// The normalized form of `outputs` when the cache holds it, found without making it: the normalized graph's hashes
// are computed as UOp::make would make them (each buffer a placeholder numbered by first use), and a cached graph of
// the sink's hash is compared with `outputs` node by node, which also pairs each normalized node with its original.
// nullopt when no cached graph is equal, or when the graph binds Variables (normalize handles those).
std::optional<Normalized> find_normalized(const UOps& outputs) {
  Normalized n;
  UOpRef sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  const UOps topo = sink->toposort();
  PtrMap<size_t> hash_of(topo.size());  // original -> its normalized node's hash
  std::unordered_map<const UOp*, Arg> buffer_arg;  // original buffer -> its placeholder's arg
  std::vector<size_t> sh;
  for (auto& u : topo) {
    if (u->op == Ops::AFTER && u->src[0]->is_variable()) return std::nullopt;
    if (u->op == Ops::BUFFER && !u->is_variable()) {
      ParamArg pa = u->as<ParamArg>();
      pa.slot = -2 - static_cast<int64_t>(n.actual.size());
      n.actual.push_back(u);
      Arg a = pa;
      *hash_of.try_emplace(u.get()).first = uop_key_hash(Ops::BUFFER, u->dtype, {}, a, -1);
      buffer_arg.emplace(u.get(), std::move(a));
      continue;
    }
    sh.clear();
    for (auto& x : u->src) sh.push_back(*hash_of.find(x.get()));
    *hash_of.try_emplace(u.get()).first = uop_key_hash(u->op, u->dtype, sh, u->arg, u->tag);
  }
  std::vector<UOpRef> candidates;
  {
    std::lock_guard lk(cache().mu);
    auto [b, e] = cache().by_hash.equal_range(*hash_of.find(sink.get()));
    for (auto it = b; it != e; ++it) candidates.push_back(it->second);
  }
  for (const UOpRef& cand : candidates) {
    PtrMap<const UOp*> norm_of(topo.size());  // original -> cached normalized node
    std::vector<std::pair<const UOp*, const UOp*>> todo{{sink.get(), cand.get()}};
    bool equal = true;
    while (equal && !todo.empty()) {
      auto [o, m] = todo.back();
      todo.pop_back();
      auto [v, fresh] = norm_of.try_emplace(o);
      if (!fresh) {
        equal = *v == m;
        continue;
      }
      *v = m;
      if (auto b = buffer_arg.find(o); b != buffer_arg.end()) {
        equal = m->op == Ops::BUFFER && m->dtype == o->dtype && m->tag == -1 && m->src.empty() && arg_equal(m->arg, b->second);
        continue;
      }
      equal = m->op == o->op && m->dtype == o->dtype && m->tag == o->tag && m->src.size() == o->src.size() && arg_equal(m->arg, o->arg);
      for (size_t i = 0; equal && i < o->src.size(); ++i) todo.emplace_back(o->src[i].get(), m->src[i].get());
    }
    if (!equal) continue;
    n.sink = cand;
    for (auto& u : topo) *n.to_original.try_emplace(*norm_of.find(u.get())).first = u.get();
    n.keep = topo;
    return n;
  }
  return std::nullopt;
}

// the cached schedule with this realize's buffers: placeholders -> actual buffers, created buffers -> fresh ones
Schedule instantiate(const Schedule& cached, const Normalized& n) {
  std::unordered_map<const UOp*, UOpRef> map;  // the cached schedule's buffers -> this realize's
  auto buffer = [&](const UOpRef& b) -> UOpRef {
    if (b->op != Ops::BUFFER || b->is_variable()) return b;
    const ParamArg& pa = b->as<ParamArg>();
    if (pa.slot <= -2) return n.actual.at(static_cast<size_t>(-2 - pa.slot));
    auto [it, fresh] = map.try_emplace(b.get());
    if (fresh) it->second = new_buffer(pa.device, pa.size, b->dtype);
    return it->second;
  };
  auto rebind = [&](const UOpRef& x) {
    if (x->op == Ops::BUFFER) return buffer(x);
    std::unordered_map<const UOp*, UOpRef> sub;
    for (auto& u : x->toposort())
      if (UOpRef b = buffer(u); b != u) sub.emplace(u.get(), b);
    return substitute(x, sub);
  };
  auto original = [&](const UOpRef& x) -> UOpRef {
    const UOp* const* o = n.to_original.find(x.get());
    return o ? (*o)->ref() : x;
  };
  Schedule out;
  for (auto& it : cached.items) {
    ScheduleItem ni = it;
    for (auto& b : ni.bufs) b = buffer(b);
    if (ni.computes) ni.computes = original(ni.computes);
    out.items.push_back(std::move(ni));
  }
  for (auto& [k, v] : cached.becomes) {
    UOpRef orig = original(k->ref());
    out.becomes[orig.get()] = rebind(v);
    out.keep_alive.push_back(orig);
  }
  for (auto& b : cached.intermediates) out.intermediates.push_back(buffer(b));
  out.var_vals = n.var_vals;
  return out;
}

}  // namespace

Schedule create_schedule(const UOps& outputs) {
  std::optional<Normalized> found = find_normalized(outputs);
  Normalized n = found ? std::move(*found) : normalize(outputs);
  std::shared_ptr<const Schedule> cached;
  bool hit = false;
  {
    std::lock_guard lk(cache().mu);
    auto it = cache().entries.find(n.sink.get());
    if (it != cache().entries.end()) { cached = it->second.second; hit = true; }
  }
  if (!cached) {
    auto fresh = std::make_shared<Schedule>(sched::build_schedule(n.sink->src));
    std::lock_guard lk(cache().mu);
    if (cache().entries.size() >= 512) {  // bounded: graphs stay alive while cached
      cache().entries.clear();
      cache().by_hash.clear();
    }
    if (cache().entries.emplace(n.sink.get(), std::make_pair(n.sink, std::shared_ptr<const Schedule>(fresh))).second)
      cache().by_hash.emplace(n.sink->hash, n.sink);
    cached = fresh;
  }
  Schedule out = instantiate(*cached, n);
  out.cache_hit = hit;
  out.cache_key = n.sink->hash;
  return out;
}

}  // namespace ts
