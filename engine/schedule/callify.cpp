// The "callify" pass: which tensor nodes get buffers (the walk, sources first) and what each became (a rule per kind
// of decision); the kernel stores the rest of the schedule lowers are read from the pass's graph.
#include <functional>
#include <optional>
#include <utility>

#include "engine/schedule/passes.h"
#include "engine/schedule/rangeify.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts::sched {

namespace {

// RESHAPE(SHRINK(buffer, off..off+n)) if `x` is a movement chain over a BUFFER reading one contiguous range
UOpRef contiguous_view(const UOpRef& x) {
  if (x->op == Ops::BUFFER) return x;
  if (!group::movement(x->op) || x->base()->op != Ops::BUFFER) return nullptr;
  const UOp* b = x->base();
  UOps rngs;
  std::vector<int64_t> strides(x->shape.size());
  int64_t st = 1;
  for (size_t i = x->shape.size(); i-- > 0;) { strides[i] = st; st *= x->shape[i]; }
  for (size_t i = 0; i < x->shape.size(); ++i) rngs.push_back(urange(x->shape[i], 1000000 + i, AxisType::PLACEHOLDER));
  const UOp* u = x.get();
  UOps cur = rngs;
  while (group::movement(u->op)) { cur = apply_movement_op(*u, cur); u = u->src[0].get(); }
  if (cur.size() != 1 || is_invalid(cur[0]) || (cur[0]->op == Ops::WHERE && is_invalid(cur[0]->src[2]))) return nullptr;
  LinearTerms lt = linear_terms(cur[0]);
  size_t matched = 0;
  for (auto& [t, k] : lt.terms) {
    auto it = std::find(rngs.begin(), rngs.end(), t);
    if (it == rngs.end() || k != strides[it - rngs.begin()]) return nullptr;
    ++matched;
  }
  size_t nontrivial = 0;
  for (auto& r : rngs) nontrivial += r->op == Ops::RANGE;
  if (matched != nontrivial) return nullptr;
  int64_t n = x->numel(), off = lt.constant;
  UOpRef v = b->ref();
  if (off != 0 || n != b->numel()) v = UOp::make(Ops::SHRINK, b->dtype, {v}, Shape{off, off + n});
  return reshape_to(v, x->shape);
}

// the reference's fix_store_hazard: an assign whose value reads its own target through a reordering view (PERMUTE,
// FLIP, or SHRINK when the target itself went through one, e.g. a second assign after a sliced first) would read
// elements it already overwrote; its value is realized into a buffer of its own first
bool store_hazard(const UOpRef& target, const UOpRef& src) {
  const UOp* base = target->base();
  // whether the target went through a SHRINK anywhere below it (asked only when a SHRINK reaches the base)
  std::optional<bool> target_shrunk;
  auto shrunk = [&] {
    if (!target_shrunk) {
      target_shrunk = false;
      for (auto& u : target->toposort()) *target_shrunk = *target_shrunk || u->op == Ops::SHRINK;
    }
    return *target_shrunk;
  };
  // sources first, without recursion: whether each node reaches the base. The walk stops at the base (in a DAG nothing
  // below it reaches it: an assign chain's earlier assigns are not walked again) and at a CONTIGUOUS.
  std::unordered_map<const UOp*, bool> reaches;
  std::vector<std::pair<const UOp*, size_t>> stack{{src.get(), 0}};
  reaches.emplace(src.get(), false);
  while (!stack.empty()) {
    auto& [s, next] = stack.back();
    const bool descend = s != base && s->op != Ops::CONTIGUOUS;
    if (descend && next < s->src.size()) {
      const UOp* c = s->src[next++].get();
      if (reaches.emplace(c, false).second) stack.push_back({c, 0});
      continue;
    }
    bool r = s == base;
    if (descend)
      for (auto& c : s->src) r = r || reaches[c.get()];
    reaches[s] = r;
    const bool unsafe = s->op == Ops::PERMUTE || s->op == Ops::FLIP || (s->op == Ops::SHRINK && r && shrunk());
    if (r && s->op != Ops::CONTIGUOUS && unsafe && !(s == target.get() && s->op == Ops::SHRINK)) return true;
    stack.pop_back();
  }
  return false;
}

// What callify made of a tensor node: the kind of decision (each one rule of the "callify" pass) and the node that
// stands for it in the graph after the pass.
enum class Became {
  Kernel,         // a value (a CONTIGUOUS or a requested base) computed into a new buffer by a kernel
  View,           // a CONTIGUOUS of a contiguous range of a buffer: a view of that buffer, no kernel
  Assign,         // an assign: a kernel storing into its target buffer
  AssignCopy,     // an assign of a copy from another device: a copy into its target buffer
  AssignValue,    // an assign into a value that has no buffer: that value, computed into a new buffer
  Copy,           // a COPY to another device: a copy into a new buffer
  SameDevice,     // a COPY to its own device: its source
  AfterEffect,    // AFTER(buffer, effect): the buffer, read after the effect
};

struct Callify {
  std::vector<Item> items;
  struct Decision {
    Became how;
    int item;  // the call it made (-1: none)
  };
  std::unordered_map<const UOp*, Decision> decided;  // tensor node -> what it became
  UOps decided_order;                                // those nodes, in the order the walk decided
  // called right after the decision's call (if any) was added
  void decide(const UOpRef& x, Became how) {
    const bool call = how != Became::View && how != Became::SameDevice && how != Became::AfterEffect;
    if (decided.emplace(x.get(), Decision{how, call ? static_cast<int>(items.size()) - 1 : -1}).second) decided_order.push_back(x);
  }
  // what x became, as the graph shows it: its buffer view, written after its call: AFTER(view, STORE(view, value)) for
  // a kernel, AFTER(view, COPY(destination, source)) for a copy. Where x itself is the value (a requested value whose
  // sources needed no buffer), the value is x tagged 0, so the replacement never holds the node it replaces.
  UOpRef became(const UOpRef& x) const {
    const Decision& d = decided.at(x.get());
    UOpRef view = repl.at(x.get());
    if (d.item < 0) return view;
    const Item& it = items[d.item];
    UOpRef to = it.kind == ScheduleItem::Kind::Kernel
                    ? UOp::make(Ops::AFTER, view->dtype, {view, it.value_store})
                    : UOp::make(Ops::AFTER, view->dtype, {view, UOp::make(Ops::COPY, it.dst->dtype, {it.dst, it.src}, it.dst->device)});
    for (auto& u : to->toposort())
      if (u == x) {
        UOpRef tagged0 = UOp::make(x->op, x->dtype, x->src, x->arg, 0);
        untag.emplace(tagged0.get(), x);
        return substitute(to, {{x.get(), tagged0}});
      }
    return to;
  }
  mutable std::unordered_map<const UOp*, UOpRef> untag;  // x tagged 0 (in what `became` made) -> x
  std::unordered_map<const UOp*, UOpRef> repl;  // tagged node -> buffer view
  std::unordered_map<const UOp*, int> producer;  // BUFFER -> latest item writing it
  std::unordered_map<const UOp*, int> node_producer;  // realized tensor node -> the item that wrote its value
  std::unordered_map<const UOp*, int> reads;  // of the value being rewritten by subst (see Item::reads)
  std::unordered_set<const UOp*> tagged;
  std::map<std::string, int64_t> var_vals;
  UOps keep;
  // the assigns' kernel stores made so far (each one a kernel): an untagged store -> the tags given to its repeats
  std::unordered_map<const UOp*, std::pair<UOpRef, int64_t>> assign_stores;
  std::unordered_map<const UOp*, const UOp*> origin;  // a node of a kernel's value -> the tensor node it stands for

  // rewrite a value: tagged nodes -> their buffer views; record dependencies
  UOpRef subst(const UOpRef& v, std::vector<int>& deps, std::unordered_set<const UOp*>& raw_bufs) {
    std::unordered_map<const UOp*, UOpRef> memo;
    std::function<UOpRef(const UOpRef&)> go = [&](const UOpRef& x) -> UOpRef {
      if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
      UOpRef out;
      if (auto r = repl.find(x.get()); r != repl.end()) {
        out = r->second;
        // the state this node stands for: its own writer, not a later assign to the same buffer (a view's: the writer
        // of the buffer it looks at)
        const UOp* b = out->base()->op == Ops::BUFFER ? out->base() : nullptr;
        int p = -1;
        if (auto np = node_producer.find(x.get()); np != node_producer.end()) p = np->second;
        else if (auto pb = producer.find(b); pb != producer.end()) p = pb->second;
        if (p >= 0) deps.push_back(p);
        if (b) reads.emplace(b, p);
      } else if (x->op == Ops::AFTER && x->src[0]->is_variable()) {
        // a bound Variable: the value goes to var_vals, the kernel sees only the Variable
        const std::string& name = x->src[0]->as<ParamArg>().name;
        int64_t v = x->src[1]->src[1]->const_int();
        auto [it, fresh] = var_vals.emplace(name, v);
        if (!fresh && it->second != v) throw Error("Variable " + name + " is bound to two values (" + std::to_string(it->second) + " and " + std::to_string(v) + ") in one realize");
        out = x->src[0];
      } else if (x->op == Ops::BUFFER) {
        raw_bufs.insert(x.get());
        reads.emplace(x.get(), -1);
        out = x;
      } else {
        UOps ns;
        for (auto& s : x->src) ns.push_back(go(s));
        out = x->replace_src(ns);
        origin.emplace(out.get(), x.get());
      }
      return memo[x.get()] = out;
    };
    return go(v);
  }

  void tag(const UOpRef& x) {
    if (!tagged.insert(x.get()).second) return;
    keep.push_back(x);
  }

  void realize_node(const UOpRef& x) {
    if (repl.count(x.get())) return;
    current = x.get();
    if (x->op == Ops::AFTER && x->src.size() >= 2 && x->src[1]->op != Ops::STORE) {
      // AFTER(buffer, effect): the buffer as it is once the effect ran (a view assign into it, realized first as a
      // source); readers depend on the buffer's latest writer
      repl[x.get()] = subst_view(x->src[0]);
      if (const UOp* b = buffer_base(repl[x.get()].get()))
        if (auto p = producer.find(b); p != producer.end()) node_producer[x.get()] = p->second;
      decide(x, Became::AfterEffect);
      return;
    }
    if (x->op == Ops::AFTER) {
      // assign: x = AFTER(target view, STORE(target view, value))
      UOpRef target = subst_view(x->src[0]);
      const UOp* b = buffer_base(target.get());
      // a view of a buffer (a[0], a.shrink(...), a.T) is stored through: the kernel writes the view's elements only
      const UOp* viewed = target.get();
      while (group::movement(viewed->op)) viewed = viewed->src[0].get();
      bool view_store = !b && viewed->op == Ops::BUFFER;
      if (view_store) b = viewed;
      if (!b) {
        // an assign into a value that has no buffer yet is that value: copied when it is a copy from another device
        // (a list or an array assigned to an unrealized tensor), else computed (the reference: CONTIGUOUS)
        UOpRef value = x->src[1]->src[1];
        if (value->op == Ops::RESHAPE && value->src[0]->op == Ops::COPY) value = value->src[0];
        const UOp* sb = value->op == Ops::COPY ? buffer_base(value->src[0].get()) : nullptr;
        if (sb && value->src[0]->device != value->device) {
          current = x.get();
          UOpRef dst = new_buffer(value->device, sb->numel(), value->dtype);
          add_item(Item{ScheduleItem::Kind::Copy, nullptr, dst, sb->ref(), writer_of(sb)}, dst.get());
          repl[x.get()] = reshape_to(dst, x->shape);
          decide(x, Became::AssignCopy);
          return;
        }
        realize_value(x, x->src[1]->src[1]);
        decide(x, Became::AssignValue);
        return;
      }
      UOpRef buf = b->ref();
      const UOpRef& store = x->src[1];
      UOpRef value = store->src[1];
      std::vector<int> deps;
      std::unordered_set<const UOp*> raw;
      if (value->op == Ops::RESHAPE && value->src[0]->op == Ops::COPY) value = value->src[0];
      if (store_hazard(x->src[0], value)) {
        UOpRef c = UOp::make(Ops::CONTIGUOUS, value->dtype, {value});
        keep.push_back(c);  // a node of the walk's own: the schedule's `becomes` is keyed by it
        realize_node(c);
        current = x.get();
        value = c;
      }
      Became how = Became::Assign;
      // a whole buffer's assign of a copy is the copy itself; a view's (t[1:5:2] = [7, 8]) stores the copied values
      // through the view like any other value
      const UOp* copied = value->op == Ops::COPY ? buffer_base(value->src[0].get()) : nullptr;
      if (copied && !view_store && copied->numel() == buf->numel() && value->src[0]->device != value->device) {
        Item it{ScheduleItem::Kind::Copy, nullptr, buf, copied->ref(), writer_of(copied)};
        add_item(std::move(it), buf.get());
        how = Became::AssignCopy;
      } else {
        if (value->op == Ops::COPY) {  // copied into a buffer of its own first, then stored through the view
          realize_node(value);
          current = x.get();
        }
        UOpRef v = subst(value, deps, raw);
        UOpRef dst = view_store ? target : reshape_to(buf, v->shape);
        // the same store again (a.assign(a + 1) twice: once its reads are the buffer, the second kernel is the first's
        // node) is tagged apart: one kernel runs per assign, each after the one before
        UOpRef st = UOp::make(Ops::STORE, dtypes::void_, {dst, v});
        auto [seen, first] = assign_stores.try_emplace(st.get(), st, 0);
        if (!first) st = UOp::make(Ops::STORE, dtypes::void_, {dst, v}, {}, seen->second.second++);
        add_item(Item{ScheduleItem::Kind::Kernel, st, buf, nullptr, deps}, buf.get());
      }
      repl[x.get()] = subst_view(x->src[0]);
      decide(x, how);
      return;
    }
    if (x->op == Ops::COPY) {
      const UOpRef& src = x->src[0];
      if (src->device == x->device) {
        repl[x.get()] = src;
        decide(x, Became::SameDevice);
        return;
      }
      UOpRef from = subst_view(src);
      const UOp* sb = buffer_base(from.get());
      if (!sb) {
        // a computed value, or a view that is not a whole buffer: computed into a buffer of its own on its device first
        // (tagged: a CONTIGUOUS of the same source may already be a view, which is no buffer of its own)
        UOpRef c = UOp::make(Ops::CONTIGUOUS, src->dtype, {src}, {}, 1);
        keep.push_back(c);
        if (!repl.count(c.get())) {
          realize_value(c, src);
          decide(c, Became::Kernel);
        }
        current = x.get();
        from = repl.at(c.get());
        sb = buffer_base(from.get());
      }
      UOpRef dst = new_buffer(x->device, sb->numel(), x->dtype);
      add_item(Item{ScheduleItem::Kind::Copy, nullptr, dst, sb->ref(), writer_of(sb)}, dst.get());
      repl[x.get()] = reshape_to(dst, x->shape);
      decide(x, Became::Copy);
      return;
    }
    // a contiguous range of an existing buffer needs no kernel: it becomes a view (contiguous_mops_to_view)
    if (x->op == Ops::CONTIGUOUS) {
      if (UOpRef v = contiguous_view(subst_view(x->src[0]))) {
        repl[x.get()] = v;
        decide(x, Became::View);
        return;
      }
    }
    realize_value(x, x->op == Ops::CONTIGUOUS ? x->src[0] : x);
    decide(x, Became::Kernel);
  }

  // `value` computed into a new buffer that stands for x
  void realize_value(const UOpRef& x, const UOpRef& value) {
    current = x.get();
    std::vector<int> deps;
    std::unordered_set<const UOp*> raw;
    UOpRef v = subst(value, deps, raw);
    DType dt = strong(x->dtype);
    std::string dev = x->device.empty() ? default_device() : x->device;
    UOpRef buf = new_buffer(dev, std::max<int64_t>(x->numel(), 1), dt);
    if (v->dtype != dt) v = ucast(v, dt);
    if (v->shape != x->shape) v = Tensor::broadcast_to(Tensor(v), x->shape).uop();
    add_item(Item{ScheduleItem::Kind::Kernel, UOp::make(Ops::STORE, dtypes::void_, {reshape_to(buf, x->shape), v}), buf, nullptr, deps}, buf.get());
    repl[x.get()] = reshape_to(buf, x->shape);
  }

  // the view with realized sources replaced (only if the chain reaches a buffer)
  UOpRef subst_view(const UOpRef& x) {
    if (auto r = repl.find(x.get()); r != repl.end()) return r->second;
    if (!group::movement(x->op)) return x;
    UOps src = x->src;  // (a SHRINK's symbolic bounds stay)
    src[0] = subst_view(x->src[0]);
    return x->replace_src(std::move(src));
  }

  // a copy reads its source's state as the call that wrote it in this schedule left it (none: as it was before), and
  // runs after that call
  std::vector<int> writer_of(const UOp* buf) {
    auto p = producer.find(buf);
    const int w = p != producer.end() ? p->second : -1;
    reads.emplace(buf, w);
    return w >= 0 ? std::vector<int>{w} : std::vector<int>{};
  }

  const UOp* current = nullptr;  // the tagged node being realized
  int add_item(Item it, const UOp* writes) {
    if (current) {
      it.computes = current->ref();
      node_producer[current] = static_cast<int>(items.size());
    }
    auto p = producer.find(writes);
    it.overwrites = p != producer.end() ? p->second : -1;  // a new buffer has no readers of its earlier state
    it.reads = std::move(reads);
    reads.clear();
    items.push_back(std::move(it));
    int id = static_cast<int>(items.size()) - 1;
    producer[writes] = id;
    return id;
  }

  // post-order over the graph: tag what needs a buffer, realize sources first
  void visit(const UOpRef& root) {
    std::unordered_set<const UOp*> seen, absorbed;
    // a host copy stored straight into an assign target is one copy into that buffer, not a copy and a kernel
    for (auto& u : root->toposort()) {
      if (u->op != Ops::AFTER || u->src.size() < 2 || u->src[1]->op != Ops::STORE) continue;
      const UOp* v = u->src[1]->src[1].get();
      if (v->op == Ops::RESHAPE) v = v->src[0].get();
      if (v->op == Ops::COPY) absorbed.insert(v);
    }
    std::function<void(const UOpRef&)> go = [&](const UOpRef& x) {
      if (!seen.insert(x.get()).second) return;
      for (auto& s : x->src) go(s);
      bool host_copy = x->op == Ops::COPY && !x->src[0]->device.empty() && x->src[0]->device != x->device;
      if (host_copy && absorbed.count(x.get())) return;
      if (x->op == Ops::AFTER && x->src[0]->is_variable()) return;
      if (x->op == Ops::CONTIGUOUS || x->op == Ops::AFTER || host_copy || tagged.count(x.get())) realize_node(x);
    };
    go(root);
  }
};

// The "callify" pass: each tensor node callify's walk gave a buffer is rewritten to what it became, one rule per kind
// of decision, so the step where a value becomes a buffer (and a kernel stores it) is a step of the trace. It rewrites
// SINK(the decided nodes, the walk's last first) bottom-up: a rule sees the tensor graph's own nodes, each user before
// the nodes it reads (whose buffers its value already reads), and the nodes it makes match none.
// the rule for one kind of decision: a node callify decided so becomes what it became (its row is written at `loc`,
// where the table calls this)
Rule callify_rule(std::string name, std::initializer_list<Ops> ops, Became how, std::source_location loc = std::source_location::current()) {
  return rule(std::move(name), ops, [how](const UOpRef& x, const Callify& cf) -> UOpRef {
    auto it = cf.decided.find(x.get());
    return it != cf.decided.end() && it->second.how == how ? cf.became(x) : nullptr;
  }, loc);
}
const PatternMatcher& pm_callify() {
  static const PatternMatcher pm({
      callify_rule("CONTIGUOUS -> a new buffer, stored by its own kernel", {Ops::CONTIGUOUS}, Became::Kernel),
      callify_rule("CONTIGUOUS of a contiguous range of a buffer -> a view of it, no kernel", {Ops::CONTIGUOUS}, Became::View),
      callify_rule("assign -> a kernel storing into the target's buffer", {Ops::AFTER}, Became::Assign),
      callify_rule("assign of a copy from another device -> a copy into the target's buffer", {Ops::AFTER}, Became::AssignCopy),
      callify_rule("assign into a value without a buffer -> the value, stored by its own kernel", {Ops::AFTER}, Became::AssignValue),
      callify_rule("buffer after an effect -> the buffer, read after the effect's call", {Ops::AFTER}, Became::AfterEffect),
      callify_rule("COPY to another device -> a copy call into a new buffer", {Ops::COPY}, Became::Copy),
      callify_rule("COPY to its own device -> its source", {Ops::COPY}, Became::SameDevice),
      // after the CONTIGUOUS rule, so this one meets the other ops
      callify_rule("a requested value -> a new buffer, stored by its own kernel", {}, Became::Kernel),
  });
  return pm;
}

}  // namespace

Callified callify(const UOps& outputs) {
  Callify cf;
  // the bases of requested outputs get buffers
  for (auto& o : outputs) {
    const UOp* b = o->base();
    if (b->op == Ops::BUFFER || b->op == Ops::CONST) continue;
    cf.tag(b->ref());
  }
  for (auto& o : outputs) cf.visit(o);
  Callified out;
  out.stores.resize(cf.items.size());
  if (!cf.decided_order.empty()) {
    // the decisions as a pass over the tensor graph: each decided node rewritten to what it became, the walk's last first
    const UOps decided(cf.decided_order.rbegin(), cf.decided_order.rend());
    UOpRef sink = graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, decided), pm_callify(), std::as_const(cf), "callify", true);
    // the kernels' stores as the pass wrote them (a value that is its own decided node reads it back untagged)
    if (!cf.untag.empty()) sink = substitute(sink, cf.untag);
    for (size_t i = 0; i < decided.size(); ++i) {
      const int item = cf.decided.at(decided[i].get()).item;
      if (item < 0 || cf.items[item].kind != ScheduleItem::Kind::Kernel) continue;
      const UOpRef& became = sink->src[i];
      if (became->op != Ops::AFTER || became->src.size() < 2 || became->src[1] != cf.items[item].value_store)
        throw Error("callify: the pass's graph for " + std::string(op_name(decided[i]->op)) + " is not the kernel its walk decided");
      out.stores[item] = became->src[1];
    }
  }
  out.becomes = std::move(cf.repl);
  out.origin = std::move(cf.origin);
  out.var_vals = std::move(cf.var_vals);
  out.keep = std::move(cf.keep);
  out.items = std::move(cf.items);
  return out;
}

}  // namespace ts::sched
