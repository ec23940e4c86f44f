// create_schedule: callify (which nodes get buffers), earliest rewrites (split_reduceop), rangeify, stage to
// store, split kernels, and the Kahn toposort that orders the calls.
#include "engine/schedule/schedule.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/uop_hash.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <utility>

#include "engine/schedule/rangeify.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts {

const UOp* buffer_base(const UOp* u) {
  while (u->op == Ops::RESHAPE) u = u->src[0].get();
  return u->op == Ops::BUFFER ? u : nullptr;
}

namespace {

std::string shape_str(const Shape& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + (s.size() == 1 ? ",)" : ")");
}

void snapshot(const char* name, const UOpRef& sink) {
  if (rewrite_listener()) graph_rewrite(sink, PatternMatcher{}, name);
}

UOpRef reshape_to(const UOpRef& x, const Shape& s) {
  if (x->shape == s) return x;
  return UOp::make(Ops::RESHAPE, x->dtype, {x}, Shape(s));
}


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

// ---- callify ------------------------------------------------------------------------------------
struct Item {
  ScheduleItem::Kind kind;
  UOpRef value_store;  // Kernel: STORE(RESHAPE(buf), value) (tensor graph)
  UOpRef dst, src;     // Copy buffers; Kernel: dst = output buffer
  std::vector<int> deps;  // items this one reads from (effects on one buffer keep program order)
  UOpRef computes;        // the tensor node realized by this item
  // which state of each buffer the value reads: the item that wrote that state, or -1 for the state before this schedule
  std::unordered_map<const UOp*, int> reads;
  int overwrites = -1;  // the writer of the state this item replaces (-1: the state before the schedule, or a new buffer)
};

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
  bool target_shrunk = false;
  for (auto& u : target->toposort()) target_shrunk |= u->op == Ops::SHRINK;
  std::unordered_map<const UOp*, bool> reaches;
  bool hazard = false;
  std::function<bool(const UOp*)> go = [&](const UOp* s) -> bool {
    if (auto it = reaches.find(s); it != reaches.end()) return it->second;
    bool r = s == base;
    if (s->op != Ops::CONTIGUOUS)
      for (auto& c : s->src) r = go(c.get()) || r;
    bool unsafe = s->op == Ops::PERMUTE || s->op == Ops::FLIP || (target_shrunk && s->op == Ops::SHRINK);
    if (r && s->op != Ops::CONTIGUOUS && unsafe && !(s == target.get() && s->op == Ops::SHRINK)) hazard = true;
    return reaches[s] = r;
  };
  return go(src.get()) && hazard;
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
      if (u == x) return substitute(to, {{x.get(), UOp::make(x->op, x->dtype, x->src, x->arg, 0)}});
    return to;
  }
  std::unordered_map<const UOp*, UOpRef> repl;  // tagged node -> buffer view
  std::unordered_map<const UOp*, int> producer;  // BUFFER -> latest item writing it
  std::unordered_map<const UOp*, int> node_producer;  // realized tensor node -> the item that wrote its value
  std::unordered_map<const UOp*, int> reads;  // of the value being rewritten by subst (see Item::reads)
  std::unordered_set<const UOp*> tagged;
  std::map<std::string, int64_t> var_vals;
  UOps keep;
  std::unordered_set<const UOp*> assign_stores;  // the assigns' kernel stores made so far (each one a kernel)
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
        for (int64_t tag = 0; assign_stores.count(st.get()); ++tag) st = UOp::make(Ops::STORE, dtypes::void_, {dst, v}, {}, tag);
        assign_stores.insert(st.get());
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

// ---- stage to store / split kernels ------------------------------------------------------------
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
struct StageToStore {
  struct Kernel {
    UOpRef end, buffer, computes;
    const UOp* after;  // AFTER(buffer, end): how the graph reads it
  };
  std::vector<Kernel> kernels;  // in discovery order
  std::unordered_map<const UOp*, UOpRef> after_of;  // STAGE -> AFTER(its buffer, its kernel)
  std::function<UOpRef(const UOpRef&)> computes_of;  // the tensor node a STAGE stands for (null: none)
};
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
struct SplitKernels {
  std::unordered_map<const UOp*, size_t> kernel;  // a kernel's store (END or STORE) -> its index in `asts`
  std::vector<UOpRef> asts;                        // per kernel: SINK[KernelInfo]
  std::vector<UOps> bufs;                          // per kernel: its BUFFERs in PARAM order
  std::vector<UOpRef> calls;                       // per kernel: its CALL
};
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
const PatternMatcher& pm_split_kernels() {
  static const PatternMatcher pm({rule("a store with no open ranges -> a kernel: CALL(AST, buffers)", {Ops::END, Ops::STORE}, split_kernel)});
  return pm;
}

// The "order calls" pass: the kernel graph (and the copies) -> one LINEAR, in the order the calls run (set by `order`)
struct OrderCalls {
  UOps calls;               // per built item: its CALL
  std::vector<int> order;   // the built items in execution order
};
const PatternMatcher& pm_order_calls() {
  static const PatternMatcher pm({
      rule("kernel graph -> LINEAR: each call after the calls it depends on", {Ops::SINK}, [](const UOpRef& x, OrderCalls& ctx) -> UOpRef {
        if (x->src != ctx.calls) return nullptr;  // not a kernel's own SINK
        UOps lin;
        for (int i : ctx.order) lin.push_back(ctx.calls[i]);
        return UOp::make(Ops::LINEAR, dtypes::void_, lin);
      }),
  });
  return pm;
}

}  // namespace

// the schedule of one (normalized) graph: callify, kernel graph, order
Schedule build_schedule(const UOps& outputs) {
  Callify cf;
  // the bases of requested outputs get buffers
  for (auto& o : outputs) {
    const UOp* b = o->base();
    if (b->op == Ops::BUFFER || b->op == Ops::CONST) continue;
    cf.tag(b->ref());
  }
  for (auto& o : outputs) cf.visit(o);
  // what the walk decided, as the trace shows it: the tensor graph with each realized node rewritten to its buffer
  if (rewrite_listener() && !cf.decided_order.empty())
    graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, UOps(cf.decided_order.rbegin(), cf.decided_order.rend())), pm_callify(), std::as_const(cf), "callify", true);
  Schedule out;
  for (auto& [k, v] : cf.repl) out.becomes[k] = v;
  out.var_vals = cf.var_vals;
  out.keep_alive = cf.keep;
  for (auto& o : outputs) out.keep_alive.push_back(o);

  // kernel graph over every kernel store of this schedule
  UOps stores;
  std::vector<int> store_item;
  for (size_t i = 0; i < cf.items.size(); ++i)
    if (cf.items[i].kind == ScheduleItem::Kind::Kernel) { stores.push_back(cf.items[i].value_store); store_item.push_back(i); }

  // ci: the callify item this came from (its own kernel or copy: own = true; an intermediate found while lowering it: false)
  struct Built { ScheduleItem item; std::vector<int> deps; const UOp* writes; int ci = -1; bool own = false; };
  std::vector<Built> built;          // final items in discovery order
  std::vector<int> item_to_built(cf.items.size(), -1);

  if (!stores.empty()) {
    UOpRef sink = UOp::make(Ops::SINK, dtypes::void_, stores);
    snapshot("View Call", sink);
    std::unordered_map<const UOp*, UOpRef> early;
    const UOpRef called = sink;
    sink = graph_rewrite(sink, earliest_rewrites(), "earliest rewrites", true, &early);
    UOps staged;
    UOpRef rsink = rangeify(sink, &staged);
    snapshot("View Rangeify", rsink);
    // provenance: the tensor node a stage's value stands for, back through the earliest rewrites (the highest node
    // rewritten to it) and callify's substitutions; null for a value the rewrites made (a split reduce's partials)
    // (the inverse of the earliest rewrites is built on the first intermediate kernel: most schedules have none)
    std::unordered_map<const UOp*, const UOp*> early_from;
    auto tensor_node_of = [&](const UOpRef& stage) -> UOpRef {
      const int64_t o = stage->as<StageArg>().origin;
      if (o < 0 || o >= static_cast<int64_t>(staged.size())) return nullptr;
      if (early_from.empty())
        for (auto& u : called->toposort())
          if (auto it = early.find(u.get()); it != early.end()) early_from[it->second.get()] = u.get();
      const UOp* x = staged[o].get();
      if (auto it = early_from.find(x); it != early_from.end()) x = it->second;
      auto t = cf.origin.find(x);
      return t != cf.origin.end() ? t->second->ref() : nullptr;
    };

    // stage to store: each remaining STAGE gets a buffer and a kernel
    StageToStore sts;
    sts.computes_of = tensor_node_of;
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
        if (cf.items[d].kind == ScheduleItem::Kind::Copy && item_to_built[d] < 0) {
          item_to_built[d] = built.size();
          built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Copy, nullptr, {cf.items[d].dst, cf.items[d].src}, cf.items[d].computes}, {}, cf.items[d].dst.get(), d, true});
        }
      for (size_t s : found) {
        out.intermediates.push_back(sts.kernels[s].buffer);
        Built b{ScheduleItem{ScheduleItem::Kind::Kernel, sts.kernels[s].end, {}, sts.kernels[s].computes}, {}, sts.kernels[s].buffer.get(), ci, false};
        built.push_back(std::move(b));
      }
      item_to_built[ci] = built.size();
      built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Kernel, lowered, {}, cf.items[ci].computes}, {}, cf.items[ci].dst.get(), ci, true});
    }
  }
  for (size_t i = 0; i < cf.items.size(); ++i)
    if (item_to_built[i] < 0) {
      item_to_built[i] = built.size();
      built.push_back(Built{ScheduleItem{ScheduleItem::Kind::Copy, nullptr, {cf.items[i].dst, cf.items[i].src}, cf.items[i].computes}, {}, cf.items[i].dst.get(), (int)i, true});
    }

  // dependencies recorded by callify (effects on the same buffer run in program order)
  for (size_t ci = 0; ci < cf.items.size(); ++ci)
    for (int d : cf.items[ci].deps)
      if (item_to_built[d] >= 0 && item_to_built[d] != item_to_built[ci]) built[item_to_built[ci]].deps.push_back(item_to_built[d]);
  // kernel ASTs + dependencies between buffer states: a kernel's output argument depends on the write of the state it
  // replaces (WAW), each input on the write of the state it reads (RAW); a write waits for every reader of the state it
  // replaces (WAR, an ordering edge only: it is not part of the graph the discovery order walks)
  SplitKernels sk;
  OrderCalls oc;
  {
    UOps roots;
    for (auto& b : built)
      if (b.item.kind == ScheduleItem::Kind::Kernel) {
        sk.kernel.emplace(b.item.ast.get(), roots.size());
        roots.push_back(b.item.ast);
      }
    sk.asts.resize(roots.size());
    sk.bufs.resize(roots.size());
    sk.calls.resize(roots.size());
    if (!roots.empty()) snapshot("View Kernel Graph", graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, roots), pm_split_kernels(), sk, "split kernels", true));
    for (auto& b : built) {
      if (b.item.kind == ScheduleItem::Kind::Kernel) {
        const size_t k = sk.kernel.at(b.item.ast.get());
        b.item.ast = sk.asts[k];
        b.item.bufs = std::move(sk.bufs[k]);
        oc.calls.push_back(sk.calls[k]);
      } else {
        const UOpRef &dst = b.item.bufs[0], &src = b.item.bufs[1];
        oc.calls.push_back(UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dst->dtype, {dst, src}, dst->device), dst, src}));
      }
    }
  }
  auto built_of = [&](int item) { return item >= 0 ? item_to_built[item] : -1; };
  std::unordered_map<const UOp*, int> writer;  // latest write of a buffer created while lowering (intermediates)
  std::vector<std::vector<std::pair<const UOp*, int>>> read_states(built.size());
  std::vector<int> replaces(built.size(), -1);
  for (size_t i = 0; i < built.size(); ++i) {
    auto& b = built[i];
    auto state_read = [&](const UOp* buf) -> int {
      if (b.ci >= 0) {
        const auto& rv = cf.items[b.ci].reads;
        if (auto it = rv.find(buf); it != rv.end()) return built_of(it->second);
      }
      auto w = writer.find(buf);
      return w != writer.end() ? w->second : -1;
    };
    std::vector<int> ordered;
    auto add = [&](int d) {
      if (d >= 0 && d != static_cast<int>(i) && std::find(ordered.begin(), ordered.end(), d) == ordered.end()) ordered.push_back(d);
    };
    if (b.own) replaces[i] = built_of(cf.items[b.ci].overwrites);
    add(replaces[i]);
    for (size_t k = 1; k < b.item.bufs.size(); ++k) {
      int v = state_read(b.item.bufs[k].get());
      add(v);
      read_states[i].push_back({b.item.bufs[k].get(), v});
    }
    for (int d : b.deps) add(d);
    b.deps = std::move(ordered);
    writer[b.writes] = static_cast<int>(i);
  }
  // discovery order = the reference's toposort of the kernel graph: post-order from the sink of every tensor-level
  // store (outputs, copies, assigns: callify's items, themselves in post-order of the tensor graph), each call's
  // inputs visited in argument order
  const size_t n = built.size();
  std::vector<char> seen(n, 0);
  std::vector<int> disc;
  std::function<void(int)> dfs = [&](int i) {
    if (seen[i]) return;
    seen[i] = 1;
    for (int d : built[i].deps) dfs(d);
    disc.push_back(i);
  };
  for (size_t ci = 0; ci < cf.items.size(); ++ci) dfs(item_to_built[ci]);
  for (size_t i = 0; i < n; ++i) dfs(static_cast<int>(i));  // cycles leave nodes unvisited: caught below
  // Kahn's algorithm, FIFO in discovery order. As in the reference, a kernel's successors are released in the order
  // their edges were made: every dependency edge first (kernels in discovery order, each in argument order), then the
  // write-after-read edges (readers in discovery order)
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> succ(n);
  for (int i : disc)
    for (int d : built[i].deps) { succ[d].push_back(i); indeg[i]++; }
  std::unordered_map<const UOp*, std::vector<int>> writers;  // buffer -> the items that write a new state of it
  for (int w : disc)
    if (built[w].own) writers[built[w].writes].push_back(w);
  for (int r : disc)
    for (auto& [buf, state] : read_states[r])
      for (int w : writers[buf])
        if (w != r && replaces[w] == state &&
            std::find(built[w].deps.begin(), built[w].deps.end(), r) == built[w].deps.end()) {
          succ[r].push_back(w);
          indeg[w]++;
        }
  std::deque<int> q;
  for (int i : disc) if (!indeg[i]) q.push_back(i);
  while (!q.empty()) {
    int i = q.front();
    q.pop_front();
    oc.order.push_back(i);
    out.items.push_back(built[i].item);
    for (int s : succ[i]) if (--indeg[s] == 0) q.push_back(s);
  }
  if (out.items.size() != built.size()) throw Error("cycle detected in assign graph");
  // the order as the trace shows it: the kernel graph and the copies rewritten to the LINEAR (the order is Kahn's, above)
  if (rewrite_listener()) graph_rewrite(UOp::make(Ops::SINK, dtypes::void_, oc.calls), pm_order_calls(), oc, "order calls");
  return out;
}

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
    auto fresh = std::make_shared<Schedule>(build_schedule(n.sink->src));
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
