#include "engine/uop/rewrite.h"

#include <unordered_set>

#include "engine/uop/error.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/stack.h"

namespace ts {

void RewriteCtx::throw_mismatch(const std::type_info& wanted) const {
  throw Error(std::string("rewrite rule wants a context of type ") + wanted.name() + ", the pass gives " +
              (type_ ? type_->name() : "none"));
}

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { index(); }

void PatternMatcher::index() {
  by_op_.assign(size_t{1} << (8 * sizeof(Ops)), {});
  ctx_type_ = nullptr;
  const Rule* first_with_ctx = nullptr;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (const std::type_info* t = rules_[i].ctx_type) {
      if (ctx_type_ && *ctx_type_ != *t)
        throw Error("rule table mixes contexts: '" + first_with_ctx->name + "' reads a " + ctx_type_->name() + ", '" +
                    rules_[i].name + "' a " + t->name());
      ctx_type_ = t;
      if (!first_with_ctx) first_with_ctx = &rules_[i];
    }
    if (rules_[i].ops.empty())
      for (auto& list : by_op_) list.push_back(static_cast<uint32_t>(i));
    for (Ops o : rules_[i].ops)
      if (auto& list = by_op_[static_cast<size_t>(o)]; list.empty() || list.back() != i) list.push_back(static_cast<uint32_t>(i));
  }
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& o) const {
  std::vector<Rule> r = rules_;
  r.insert(r.end(), o.rules_.begin(), o.rules_.end());
  return PatternMatcher(std::move(r));
}

UOpRef PatternMatcher::rewrite(const UOpRef& x, const RewriteCtx& ctx, const Rule** fired) const {
  if (by_op_.empty()) return nullptr;
  for (uint32_t idx : by_op_[static_cast<size_t>(x->op)]) {
    UOpRef r = rules_[idx].fn(x, ctx);
    if (r && r.get() != x.get()) {
      if (fired) *fired = &rules_[idx];
      return r;
    }
  }
  return nullptr;
}

RewriteListener*& rewrite_listener() {
  thread_local RewriteListener* l = nullptr;
  return l;
}

namespace {
struct Rewriter {
  const PatternMatcher& pm;
  RewriteCtx ctx;
  RewriteListener* listener;
  // each visited node's result, keyed by the node (open addressing: nothing allocated per entry)
  PtrMap<UOpRef> memo{256};
  std::vector<UOpRef> keep;  // keep keys alive while memoized
  int depth = 0;
  RewriteCache* cache = nullptr;

  UOpRef apply(const UOpRef& x) {
    const Rule* fired = nullptr;
    UOpRef r = pm.rewrite(x, ctx, &fired);
    if (r && listener) listener->on_match(x, r, *fired);
    return r;
  }

  std::unordered_map<const UOp*, const Rule*> in_progress = {};  // nodes being rewritten, with the rule that produced them
  std::string_view pass = {};

  // x with each source replaced by f(source): x itself when none changes (most nodes of most passes), without
  // building a list of its sources
  template <class F>
  static UOpRef with_sources(const UOpRef& x, F&& f) {
    const UOps& src = x->src;
    for (size_t i = 0; i < src.size(); ++i) {
      UOpRef r = f(src[i]);
      if (r.get() == src[i].get()) continue;
      UOps ns;
      ns.reserve(src.size());
      ns.insert(ns.end(), src.begin(), src.begin() + static_cast<std::ptrdiff_t>(i));
      ns.push_back(std::move(r));
      for (++i; i < src.size(); ++i) ns.push_back(f(src[i]));
      return x->replace_src(std::move(ns));
    }
    return x;
  }

  // one level deeper: the graph's depth is bounded by the stack left (the engine runs on a big one), not a fixed count
  void enter() {
    if ((++depth & 63) == 0 && stack_remaining() < (size_t{1} << 20))
      throw Error("graph_rewrite " + std::string(pass) + ": the graph is " + std::to_string(depth) +
                  " nodes deep, more than the stack holds (an infinite loop between rules, or run the engine on its big stack)");
  }

  UOpRef sources_first(const UOpRef& x) {
    if (const UOpRef* m = memo.find(x.get())) return *m;
    if (cache)
      if (const UOpRef* hit = cache->find(x.get())) return *hit;
    enter();
    UOpRef y = with_sources(x, [this](const UOpRef& s) { return sources_first(s); });
    UOpRef out = y;
    const Rule* fired = nullptr;
    if (UOpRef r = pm.rewrite(y, ctx, &fired)) {
      if (listener) listener->on_match(y, r, *fired);
      // a replacement that leads back to a node being rewritten is a cycle between rules
      if (auto cyc = in_progress.find(r.get()); cyc != in_progress.end())
        throw Error("graph_rewrite " + std::string(pass) + ": infinite loop between rules '" + fired->name + "' and '" +
                    (cyc->second ? cyc->second->name : std::string("?")) + "' on " + std::string(op_name(y->op)));
      in_progress[y.get()] = fired;
      keep.push_back(y);
      out = sources_first(r);
      in_progress.erase(y.get());
    }
    --depth;
    keep.push_back(x);
    *memo.try_emplace(x.get()).first = out;
    if (cache) {
      cache->put(x, out);
      cache->put(out, out);  // a result is its own fixed point
    }
    return out;
  }

  UOpRef node_first(const UOpRef& x) {
    if (const UOpRef* m = memo.find(x.get())) return *m;
    enter();
    UOpRef y = x;
    for (int guard = 0; UOpRef r = apply(y); ++guard) {
      if (guard > 1000) throw Error("graph_rewrite: infinite loop in bottom-up rewrite");
      y = r;
    }
    UOpRef out = with_sources(y, [this](const UOpRef& s) { return node_first(s); });
    --depth;
    keep.push_back(x);
    *memo.try_emplace(x.get()).first = out;
    return out;
  }
};
}  // namespace

UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, std::string_view name, bool bottom_up,
                     std::unordered_map<const UOp*, UOpRef>* node_map) {
  return graph_rewrite_with(root, pm, RewriteCtx{}, name, bottom_up, node_map);
}

UOpRef graph_rewrite_with(const UOpRef& root, const PatternMatcher& pm, const RewriteCtx& ctx, std::string_view name,
                          bool bottom_up, std::unordered_map<const UOp*, UOpRef>* node_map) {
  if (const std::type_info* want = pm.ctx_type(); want && (!ctx.type() || *ctx.type() != *want))
    throw Error("graph_rewrite " + std::string(name) + ": its rules read a " + want->name() + ", the pass gives " +
                (ctx.type() ? ctx.type()->name() : "no context"));
  RewriteListener* l = rewrite_listener();
  if (l) l->on_pass_begin(name, root);
  Rewriter rw{pm, ctx, l};
  rw.pass = name;
  UOpRef out = bottom_up ? rw.node_first(root) : rw.sources_first(root);
  if (l) l->on_pass_end(name, out);
  if (node_map) {
    node_map->clear();
    rw.memo.for_each([&](const void* k, UOpRef& v) { node_map->emplace(static_cast<const UOp*>(k), std::move(v)); });
  }
  return out;
}

void RewriteCache::put(const UOpRef& from, const UOpRef& to) {
  if (map.size() >= limit) map.clear();
  map.try_emplace(from.get(), from, to);
}
const UOpRef* RewriteCache::find(const UOp* x) const {
  auto it = map.find(x);
  return it == map.end() ? nullptr : &it->second.second;
}

UOpRef graph_rewrite_cached(const UOpRef& root, const PatternMatcher& pm, RewriteCache& cache, std::string_view name) {
  if (pm.ctx_type()) throw Error("graph_rewrite " + std::string(name) + ": a cached pass reads no context");
  Rewriter rw{pm, RewriteCtx{}, nullptr};
  rw.pass = name;
  rw.cache = &cache;
  return rw.sources_first(root);
}

UOpRef substitute(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map) {
  std::unordered_map<const UOp*, UOpRef> memo;
  std::function<UOpRef(const UOpRef&)> go = [&](const UOpRef& x) -> UOpRef {
    if (auto it = map.find(x.get()); it != map.end()) return it->second;
    if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
    UOps ns;
    ns.reserve(x->src.size());
    for (auto& s : x->src) ns.push_back(go(s));
    return memo[x.get()] = x->replace_src(std::move(ns));
  };
  return go(root);
}

}  // namespace ts
