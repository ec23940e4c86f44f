// Rangeify: movement ops become index expressions over RANGEs, the realize decisions (where storage is needed)
// are made with the reference's algorithm (realize map, consumer ranges, ending ranges), and the cost model
// removes storage again where recomputing is cheap.
#include "engine/schedule/rangeify.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <numeric>
#include <unordered_set>

#include "engine/uop/error.h"
#include "engine/uop/pattern.h"
#include "engine/uop/symbolic.h"

namespace ts {

bool is_invalid(const UOpRef& x) { return x->op == Ops::CONST && x->is<Invalid>(); }
UOpRef get_idx(const UOpRef& r) { return (r->op == Ops::WHERE && is_invalid(r->src[2])) ? r->src[1] : r; }
UOpRef get_valid(const UOpRef& r) {
  if (r->op == Ops::WHERE && is_invalid(r->src[2])) return r->src[0];
  return uconst_bool(!is_invalid(r));
}
UOpRef with_valid(const UOpRef& idx, const UOpRef& valid) {
  UOpRef v = simplify(valid);
  if (v->is_const_value(1)) return idx;
  return alu(Ops::WHERE, v, idx, uconst_invalid());
}
// the output indexes of a reshape under their shared valid, as the reference's reshape rewrite: each index's math
// simplified given the valid (gated_given_valid), and each index keeps the clauses that name one of its ranges
// (drop_and_clauses). A clause no index names (no ranges, or ranges the indexes lost) stays on every index, so the
// conjunction the consumer takes is never weaker than the valid.
UOps gated_indexes(const UOpRef& valid, const UOps& idxs) {
  UOps clauses = split_and(valid);
  std::vector<std::vector<bool>> keeps;
  std::vector<bool> named(clauses.size(), false);
  UOps simplified;
  for (auto& idx0 : idxs) {
    UOpRef idx = idx0;
    auto slice = idx->toposort();
    if (std::none_of(slice.begin(), slice.end(), [](const UOpRef& u) { return u->op == Ops::INDEX; }))
      idx = uop_given_valid(valid, idx, false);
    auto rs = idx->ranges();
    std::vector<bool> k(clauses.size(), false);
    for (size_t i = 0; i < clauses.size(); ++i) {
      auto cr = clauses[i]->ranges();
      k[i] = std::any_of(cr.begin(), cr.end(), [&](const UOpRef& r) { return std::find(rs.begin(), rs.end(), r) != rs.end(); });
      if (k[i]) named[i] = true;
    }
    keeps.push_back(k);
    simplified.push_back(idx);
  }
  UOps out;
  for (size_t j = 0; j < simplified.size(); ++j) {
    UOpRef keep = uconst_bool(true);
    for (size_t i = 0; i < clauses.size(); ++i)
      if (keeps[j][i] || !named[i]) keep = keep->is_const_value(1) ? clauses[i] : alu(Ops::AND, keep, clauses[i]);
    out.push_back(with_valid(simplified[j], keep));
  }
  return out;
}
UOpRef logical_not(const UOpRef& b) { return alu(Ops::CMPNE, b, uconst_bool(true)); }

const Shape& node_shape(const UOp& x) { return x.op == Ops::STORE ? x.src[1]->shape : x.shape; }
UOpRef node_dim(const UOp& x, size_t i) { return x.op == Ops::STORE ? x.src[1]->dim(i) : x.dim(i); }

std::vector<size_t> broadcast_axes(const Shape& src, const Shape& out) {
  std::vector<size_t> r;
  if (out.size() < src.size()) return r;
  size_t nleft = out.size() - src.size();
  for (size_t i = 0; i < nleft; ++i) r.push_back(i);
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] == 1 && out[nleft + i] != 1) r.push_back(nleft + i);
  return r;
}

std::pair<UOpRef, UOpRef> linearize_index(const UOps& idx, const std::vector<int64_t>& sizes) {
  UOpRef acc = iconst(0), valid = uconst_bool(true);
  int64_t stride = 1;
  for (size_t k = idx.size(); k-- > 0;) {
    acc = iadd(acc, imul(get_idx(idx[k]), iconst(stride)));
    valid = alu(Ops::AND, valid, get_valid(idx[k]));
    stride *= sizes[k];
  }
  return {simplify(acc), valid};
}

namespace {
bool broadcastable(Ops o) { return group::binary(o) || group::ternary(o); }

UOps open_ranges_of(const UOps& xs) {
  UOps out;
  std::unordered_set<const UOp*> seen;
  for (auto& x : xs)
    for (auto& r : x->ranges())
      if (seen.insert(r.get()).second) out.push_back(r);
  return out;
}

// how many of x's sources carry data (its first ones; the rest are ranges, indices, effects)
size_t n_data_srcs(const UOp& x) {
  switch (x.op) {
    case Ops::PARAM: case Ops::BUFFER: case Ops::RANGE: case Ops::SPECIAL: return 0;
    case Ops::INDEX: case Ops::STAGE: case Ops::REDUCE: case Ops::AFTER: case Ops::END: return 1;
    default: return group::movement(x.op) ? 1 : x.src.size();
  }
}
UOps data_srcs(const UOp& x) { return UOps(x.src.begin(), x.src.begin() + n_data_srcs(x)); }

// map the index part of a maybe-masked index
UOpRef map_idx(const UOpRef& r, const std::function<UOpRef(const UOpRef&)>& f) {
  if (r->op == Ops::WHERE && is_invalid(r->src[2])) return with_valid(f(r->src[1]), r->src[0]);
  return f(r);
}
}  // namespace

UOps apply_movement_op(const UOp& x, const UOps& rngs) {
  const Shape& in = x.src[0]->shape;
  UOps out;
  switch (x.op) {
    case Ops::SHRINK: {
      const Shape& a = x.as<Shape>();
      for (size_t i = 0; i < rngs.size(); ++i) {
        // a symbolic start (a Variable's expression) is the source the arg points at
        const int64_t off = a[2 * i];
        const UOpRef start = off < 0 ? x.src.at(static_cast<size_t>(-off)) : iconst(off);
        out.push_back(off == 0 ? rngs[i] : map_idx(rngs[i], [&](const UOpRef& e) { return simplify(iadd(e, start)); }));
      }
      return out;
    }
    case Ops::PERMUTE: {
      const Shape& p = x.as<Shape>();
      out.resize(rngs.size());
      for (size_t j = 0; j < p.size(); ++j) out[p[j]] = rngs[j];
      return out;
    }
    case Ops::FLIP: {
      const Shape& f = x.as<Shape>();
      for (size_t i = 0; i < rngs.size(); ++i)
        out.push_back(!f[i] ? rngs[i] : map_idx(rngs[i], [&](const UOpRef& e) {
          return simplify(iadd(iconst(in[i] - 1), alu(Ops::MUL, e, iconst(-1))));
        }));
      return out;
    }
    case Ops::EXPAND: {
      size_t n = x.as<Shape>().size();
      return UOps(rngs.begin() + n, rngs.end());
    }
    case Ops::PAD: {
      const Shape& a = x.as<Shape>();
      for (size_t i = 0; i < rngs.size(); ++i) {
        int64_t before = a[2 * i], after = a[2 * i + 1];
        if (before == 0 && after == 0) { out.push_back(rngs[i]); continue; }
        UOpRef e = get_idx(rngs[i]);
        UOpRef cond = alu(Ops::AND, logical_not(alu(Ops::CMPLT, e, iconst(before))), alu(Ops::CMPLT, e, iconst(in[i] + before)));
        UOpRef v = alu(Ops::AND, get_valid(rngs[i]), cond);
        out.push_back(with_valid(simplify(iadd(e, iconst(-before))), v));
      }
      return out;
    }
    case Ops::RESHAPE: {
      auto [combined, valid] = linearize_index(rngs, x.as<Shape>());
      UOps rev;
      for (size_t k = in.size(); k-- > 0;) {
        rev.push_back(simplify(alu(Ops::FLOORMOD, combined, iconst(in[k]))));
        combined = simplify(alu(Ops::FLOORDIV, combined, iconst(in[k])));
      }
      UOpRef vs = simplify(valid);
      if (UOpRef sv = simplify_valid(vs)) vs = simplify(sv);
      std::reverse(rev.begin(), rev.end());
      if (vs->is_const_value(1)) return rev;
      return gated_indexes(vs, rev);
    }
    default: throw Error(std::string(op_name(x.op)) + " is not a movement op");
  }
}

namespace {

struct RangeifyCtx {
  std::unordered_map<const UOp*, std::vector<int>> realize;  // realized axes (all, with PCONTIG=0)
  std::unordered_set<const UOp*> realize_pending;            // in realize map, axes not decided yet
  std::unordered_set<const UOp*> non_removable;
  std::unordered_map<const UOp*, std::pair<UOps, UOps>> range_map;
  std::unordered_map<const UOp*, int64_t> origin;  // a realized value -> its index in `staged`
  UOps staged;
  int64_t origin_of(const UOpRef& s) {
    auto [it, fresh] = origin.emplace(s.get(), static_cast<int64_t>(staged.size()));
    if (fresh) staged.push_back(s);
    return it->second;
  }
  int64_t next_range = 0;
  UOpRef new_range(const UOpRef& s, AxisType t = AxisType::WEAK) {
    if (s->op == Ops::CONST && s->const_int() == 1) return iconst(0);
    return urange(s, next_range++, t);
  }
  bool is_realized(const UOp* x) const { return realize.count(x) || realize_pending.count(x); }
  // applying: a node whose sources a rule replaced -> the node of the graph it stands for (whose ranges it has)
  std::unordered_map<const UOp*, const UOp*> stands_for;
  UOps keep;  // those nodes, alive while they are keys
  const UOp& orig(const UOp* x) const {
    auto it = stands_for.find(x);
    return it == stands_for.end() ? *x : *it->second;
  }
};

UOps broadcast_rngs(const UOp& c, const UOp& src, const UOps& rngs) {
  if (!broadcastable(c.op)) return rngs;
  auto baxes = broadcast_axes(node_shape(src), node_shape(c));
  size_t nleft = node_shape(c).size() - node_shape(src).size();
  UOps out;
  for (size_t j = nleft; j < rngs.size(); ++j)
    out.push_back(std::find(baxes.begin(), baxes.end(), j) != baxes.end() ? iconst(0) : rngs[j]);
  return out;
}

bool always_contiguous(Ops o) {
  return o == Ops::CONTIGUOUS || o == Ops::AFTER || o == Ops::BUFFER || o == Ops::CONST || o == Ops::PARAM || o == Ops::LOAD;
}

void run_walk(RangeifyCtx& ctx, const UOpRef& sink) {
  UOps topo = sink->toposort();
  std::unordered_map<const UOp*, UOps> consumers;
  for (auto& c : topo)
    for (auto& s : data_srcs(*c)) {
      auto& v = consumers[s.get()];
      if (std::find(v.begin(), v.end(), c) == v.end()) v.push_back(c);
    }
  // always realize CONTIGUOUS and STORE
  for (auto& x : topo)
    if (x->op == Ops::CONTIGUOUS || x->op == Ops::STORE) ctx.realize_pending.insert(x.get());
  // a STORE whose value reads its own destination (w.assign(w - lr*grad(w))) computes the value into a buffer of
  // its own first: writing in place while other elements still read the old values would be a race
  for (auto& x : topo) {
    if (x->op != Ops::STORE || x->src.size() < 2) continue;
    const UOp* dest = x->src[0]->base();
    for (auto& u : x->src[1]->toposort())
      if (u.get() == dest) {
        ctx.realize_pending.insert(x->src[1].get());
        break;
      }
  }

  std::unordered_map<const UOp*, UOps> ending;
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const UOpRef& x = *it;
    if (x->op == Ops::AFTER || x->op == Ops::SINK) continue;
    const auto& cons = consumers[x.get()];
    UOps& end_x = ending[x.get()];
    for (auto& c : cons) {
      auto e = ending.find(c.get());
      if (e != ending.end()) end_x.insert(end_x.end(), e->second.begin(), e->second.end());
    }
    UOps ended;
    for (auto& c : cons) {
      auto rm = ctx.range_map.find(c.get());
      if (rm == ctx.range_map.end() || !broadcastable(c->op)) continue;
      for (size_t i : broadcast_axes(node_shape(*x), node_shape(*c)))
        if (i < rm->second.first.size()) ended.push_back(rm->second.first[i]);
    }
    UOps bcast_ending = open_ranges_of(ended);
    if (x->op == Ops::REDUCE) end_x.insert(end_x.end(), bcast_ending.begin(), bcast_ending.end());

    std::vector<UOps> consumer_rngs;
    for (auto& c : cons) {
      auto rm = ctx.range_map.find(c.get());
      if (rm != ctx.range_map.end()) consumer_rngs.push_back(broadcast_rngs(*c, *x, rm->second.first));
    }
    const Shape& shp = node_shape(*x);
    UOps out;
    if (ctx.realize_pending.count(x.get())) {
      for (size_t i = 0; i < shp.size(); ++i) out.push_back(ctx.new_range(node_dim(*x, i)));
      end_x.clear();
      ctx.realize_pending.erase(x.get());
      std::vector<int> all(shp.size());
      std::iota(all.begin(), all.end(), 0);
      ctx.realize[x.get()] = all;
    } else if (consumer_rngs.empty()) {
      continue;
    } else if (consumer_rngs.size() == 1) {
      out = consumer_rngs[0];
    } else {
      bool all_same = true;
      for (size_t i = 0; i < shp.size() && all_same; ++i)
        for (auto& cr : consumer_rngs)
          if (get_idx(cr[i]) != get_idx(consumer_rngs[0][i])) { all_same = false; break; }
      if (all_same) {
        for (size_t i = 0; i < shp.size(); ++i) {
          UOpRef v = uconst_bool(false);
          for (auto& cr : consumer_rngs) v = alu(Ops::OR, v, get_valid(cr[i]));
          out.push_back(with_valid(get_idx(consumer_rngs[0][i]), v));
        }
      } else {
        std::vector<int> axes;
        for (size_t i = 0; i < shp.size(); ++i) { out.push_back(ctx.new_range(node_dim(*x, i))); axes.push_back(i); }
        if (!axes.empty()) ctx.realize[x.get()] = axes;
      }
    }
    // fusion decision: pending ending ranges on an elementwise/reduce node realize all its output axes
    if (!end_x.empty() && (group::elementwise(x->op) || x->op == Ops::REDUCE)) {
      auto it2 = ctx.realize.find(x.get());
      std::vector<int> axes = it2 != ctx.realize.end() ? it2->second : std::vector<int>{};
      std::vector<int> added;
      for (size_t i = 0; i < out.size(); ++i)
        if (std::find(axes.begin(), axes.end(), (int)i) == axes.end()) { axes.push_back(i); added.push_back(i); }
      end_x.clear();
      if (!axes.empty()) {
        ctx.realize[x.get()] = axes;
        for (int i : added) out[i] = ctx.new_range(node_dim(*x, i));
      }
    }
    end_x.insert(end_x.end(), bcast_ending.begin(), bcast_ending.end());

    UOps rngs = out;
    if (group::movement(x->op)) rngs = apply_movement_op(*x, out);
    if (x->op == Ops::EXPAND) {
      size_t n = x->as<Shape>().size();
      UOps lead(out.begin(), out.begin() + std::min(n, out.size()));
      for (auto& r : open_ranges_of(lead)) end_x.push_back(r);
    }
    if (x->op == Ops::REDUCE && x->as<ReduceArg>().n > 0) {
      UOps r;
      for (int i = 0; i < x->as<ReduceArg>().n; ++i) r.push_back(ctx.new_range(x->src[0]->dim(i), AxisType::REDUCE));
      r.insert(r.end(), out.begin(), out.end());
      rngs = r;
    }
    ctx.range_map[x.get()] = {rngs, out};
  }
}

// --- apply rangeify: a bottom-up rewrite (each node before its sources) with the ranges the walk gave each node ---
// What a source of a node becomes: a read of a buffer is an INDEX at the reader's ranges; a realized value is a STAGE
// over its ranges (indexed at the reader's ranges when the reader has them), a realized STORE the END of its ranges.
enum class SrcKind { keep, buffer_read, store, stage_read, stage };
SrcKind src_kind(const RangeifyCtx& ctx, const UOp& x, size_t i) {
  const UOpRef& s = x.src[i];
  const bool has = ctx.range_map.count(&x);
  // (a Variable is a value, not a buffer: a mean over a symbolic dim divides by it)
  if (s->is_variable()) return SrcKind::keep;
  if (s->op == Ops::BUFFER || s->op == Ops::PARAM || s->op == Ops::AFTER)
    return has && i < n_data_srcs(x) ? SrcKind::buffer_read : SrcKind::keep;
  if (!ctx.realize.count(s.get())) return SrcKind::keep;
  if (s->op == Ops::STORE) return SrcKind::store;
  return has ? SrcKind::stage_read : SrcKind::stage;
}
UOpRef new_src(RangeifyCtx& ctx, const UOp& x, size_t i, SrcKind kind) {
  const UOpRef& s = x.src[i];
  auto rm = ctx.range_map.find(&x);
  UOps src_rngs = rm != ctx.range_map.end() ? broadcast_rngs(x, *s, rm->second.first) : UOps{};
  if (kind == SrcKind::buffer_read) {
    UOps idx{s};
    idx.insert(idx.end(), src_rngs.begin(), src_rngs.end());
    return UOp::make(Ops::INDEX, s->dtype, idx);
  }
  const std::vector<int>& axes = ctx.realize.at(s.get());
  const UOps& s_out = ctx.range_map.at(s.get()).second;
  UOps closed;
  for (int a : axes) closed.push_back(s_out[a]);
  if (kind == SrcKind::store) {
    UOps e{s};
    for (auto& r : closed) if (r->op == Ops::RANGE) e.push_back(r);
    return UOp::make(Ops::END, dtypes::void_, e);
  }
  UOps st{s};
  st.insert(st.end(), closed.begin(), closed.end());
  bool removable = !always_contiguous(s->op) && !ctx.non_removable.count(s.get());
  UOpRef stage = UOp::make(Ops::STAGE, s->dtype, st, StageArg{s->device, removable, ctx.origin_of(s)});
  if (kind == SrcKind::stage) return stage;
  UOps idx{stage};
  for (int a : axes) idx.push_back(src_rngs.at(a));
  return UOp::make(Ops::INDEX, s->dtype, idx);
}
bool is_reduce_over_axes(const UOp& x) { return x.op == Ops::REDUCE && x.as<ReduceArg>().n > 0; }
// a movement op with ranges or a REDUCE over axes: the node goes, its source (what it becomes) takes its place
bool goes(const RangeifyCtx& ctx, const UOp& o) {
  return (group::movement(o.op) && ctx.range_map.count(&o)) || is_reduce_over_axes(o);
}
// what the source of such a node becomes
UOpRef first_src(const UOpRef& x, RangeifyCtx& ctx) {
  const SrcKind kind = src_kind(ctx, *x, 0);
  return kind == SrcKind::keep ? x->src[0] : new_src(ctx, *x, 0, kind);
}
// the source of such a node is: kept (a value computed in this kernel), a buffer, or a realized value; the rules
// that remove the node are one a kind
enum class FirstSrc { kept, buffer, realized };
bool first_src_is(const UOpRef& x, const RangeifyCtx& ctx, FirstSrc want) {
  const SrcKind k = src_kind(ctx, *x, 0);
  const FirstSrc have = k == SrcKind::keep ? FirstSrc::kept : k == SrcKind::buffer_read ? FirstSrc::buffer : FirstSrc::realized;
  return have == want;
}
// x with its sources of one kind replaced (those not replaced yet: x may stand for a node of the graph already)
UOpRef replace_srcs(const UOpRef& x, RangeifyCtx& ctx, SrcKind kind) {
  if (x->op == Ops::INDEX || x->op == Ops::STAGE || x->op == Ops::END) return nullptr;  // made here: their sources only
  const UOp& o = ctx.orig(x.get());
  if (goes(ctx, o)) return nullptr;
  UOps ns = x->src;
  bool changed = false;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] != o.src[i] || src_kind(ctx, o, i) != kind) continue;
    ns[i] = new_src(ctx, o, i, kind);
    changed = true;
  }
  if (!changed) return nullptr;
  UOpRef y = x->replace_src(std::move(ns));
  ctx.stands_for[y.get()] = &o;
  ctx.keep.push_back(y);
  return y;
}
// the ranges the walk gave x (nullptr: none)
const std::pair<UOps, UOps>* ranges_of_node(const UOpRef& x, const RangeifyCtx& ctx) {
  auto rm = ctx.range_map.find(x.get());
  return rm == ctx.range_map.end() ? nullptr : &rm->second;
}
// a PAD's validity over its output ranges, simplified
UOpRef pad_valid(const std::pair<UOps, UOps>& rm) {
  UOpRef valid = uconst_bool(true);
  for (auto& r : rm.first) valid = alu(Ops::AND, valid, get_valid(r));
  return simplify(valid);
}
// a REDUCE over its leading axes: what its source becomes and the RANGEs of those axes (size-1 axes have none)
UOps reduce_srcs(const UOpRef& x, RangeifyCtx& ctx) {
  const auto* rm = ranges_of_node(x, ctx);
  if (!rm) throw Error("REDUCE has no ranges in rangeify");
  UOps src{first_src(x, ctx)};
  for (int i = 0; i < x->as<ReduceArg>().n; ++i)
    if (rm->first[i]->op == Ops::RANGE) src.push_back(rm->first[i]);
  return src;
}
// PAD -> WHERE over its validity: of a source kept, or of a read (a buffer or realized value)
UOpRef pad_to_where(const UOpRef& x, RangeifyCtx& c, bool read) {
  const auto* rm = ranges_of_node(x, c);
  if (!rm || first_src_is(x, c, FirstSrc::kept) == read) return nullptr;
  UOpRef v = pad_valid(*rm);
  if (v->is_const_value(1)) return nullptr;
  UOpRef s = first_src(x, c);
  return alu(Ops::WHERE, v, s, uconst(s->dtype, 0));
}
UOpRef drop_movement(const UOpRef& x, RangeifyCtx& c, FirstSrc kind) {
  auto droppable = [&](const UOpRef& m, FirstSrc k) {
    return group::movement(m->op) && m->op != Ops::PAD && ranges_of_node(m, c) && first_src_is(m, c, k);
  };
  if (!droppable(x, kind)) return nullptr;
  if (kind != FirstSrc::kept) return first_src(x, c);
  // a chain of them over a value computed here goes at once: the view of a view of ... (20,000 in one kernel) is one
  // rewrite, not one a view repeated at the same node
  UOpRef s = x->src[0];
  while (droppable(s, FirstSrc::kept)) s = s->src[0];
  return s;
}
UOpRef reduce_to_ranges(const UOpRef& x, RangeifyCtx& c, bool read) {
  if (!is_reduce_over_axes(*x) || first_src_is(x, c, FirstSrc::kept) == read) return nullptr;
  UOps src = reduce_srcs(x, c);
  return src.size() == 1 ? nullptr : UOp::make(Ops::REDUCE, x->dtype, src, ReduceArg{x->as<ReduceArg>().op, 0});
}

}  // namespace

const PatternMatcher& pm_apply_rangeify() {
  using C = RangeifyCtx;
  static const PatternMatcher pm({
      rule("read of a buffer -> INDEX(buffer, the reader's ranges)", {},
           [](const UOpRef& x, C& c) { return replace_srcs(x, c, SrcKind::buffer_read); }),
      rule("realized STORE -> END(STORE, its ranges)", {}, [](const UOpRef& x, C& c) { return replace_srcs(x, c, SrcKind::store); }),
      rule("read of a realized value -> INDEX(STAGE(value, its ranges), the reader's ranges)", {},
           [](const UOpRef& x, C& c) { return replace_srcs(x, c, SrcKind::stage_read); }),
      rule("realized value -> STAGE(value, its ranges)", {}, [](const UOpRef& x, C& c) { return replace_srcs(x, c, SrcKind::stage); }),
      rule("PAD that stays inside its source -> the source", {Ops::PAD}, [](const UOpRef& x, C& c) -> UOpRef {
        const auto* rm = ranges_of_node(x, c);
        return rm && pad_valid(*rm)->is_const_value(1) ? first_src(x, c) : nullptr;
      }),
      rule("PAD -> valid.where(source, 0)", {Ops::PAD}, [](const UOpRef& x, C& c) { return pad_to_where(x, c, false); }),
      rule("PAD of a read -> valid.where(the read at the padded ranges, 0)", {Ops::PAD},
           [](const UOpRef& x, C& c) { return pad_to_where(x, c, true); }),
      rule("movement op -> its source (whose ranges are the moved ones)", {Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::SHRINK, Ops::FLIP},
           [](const UOpRef& x, C& c) { return drop_movement(x, c, FirstSrc::kept); }),
      rule("movement op of a buffer -> INDEX(buffer, the moved ranges)", {Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::SHRINK, Ops::FLIP},
           [](const UOpRef& x, C& c) { return drop_movement(x, c, FirstSrc::buffer); }),
      rule("movement op of a realized value -> INDEX(STAGE(value), the moved ranges)",
           {Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::SHRINK, Ops::FLIP},
           [](const UOpRef& x, C& c) { return drop_movement(x, c, FirstSrc::realized); }),
      rule("REDUCE over size-1 axes -> its source", {Ops::REDUCE}, [](const UOpRef& x, C& c) -> UOpRef {
        if (!is_reduce_over_axes(*x)) return nullptr;
        UOps src = reduce_srcs(x, c);
        return src.size() == 1 ? src[0] : nullptr;
      }),
      rule("REDUCE over axes -> REDUCE over their ranges", {Ops::REDUCE}, [](const UOpRef& x, C& c) { return reduce_to_ranges(x, c, false); }),
      rule("REDUCE of a read over axes -> REDUCE(the read at the ranges, the ranges)", {Ops::REDUCE},
           [](const UOpRef& x, C& c) { return reduce_to_ranges(x, c, true); }),
  });
  return pm;
}

namespace {

// --- cost model: remove STAGEs whose recomputation is cheap (reference 5.4) ---
bool keep_stage(const UOpRef& stage) {
  const StageArg& a = stage->as<StageArg>();
  const UOpRef& src = stage->src[0];
  if (!a.removable || src->op == Ops::CONTIGUOUS || src->op == Ops::NOOP) return true;
  std::unordered_set<const UOp*> bufs, seen;
  UOps reduces;
  std::function<void(const UOpRef&)> walk = [&](const UOpRef& u) {
    if (!seen.insert(u.get()).second) return;
    if (u->op == Ops::STAGE) { bufs.insert(u.get()); return; }
    if (u->op == Ops::STORE) return;
    if (u->op == Ops::BUFFER || u->op == Ops::PARAM) bufs.insert(u.get());
    if (u->op == Ops::REDUCE) reduces.push_back(u);
    for (auto& s : u->src) walk(s);
  };
  walk(src);
  if (bufs.size() > 3) return true;
  for (auto& r : reduces)
    for (auto& u : r->src[0]->toposort())
      if (u->op == Ops::BUFFER || u->op == Ops::PARAM || u->op == Ops::STAGE) return true;
  return false;
}

UOpRef remove_bufferize(const UOpRef& idx) {
  const UOpRef& st = idx->src[0];
  if (st->op != Ops::STAGE) return nullptr;
  if (st->src[0]->op == Ops::CONST) return st->src[0];
  if (keep_stage(st)) return nullptr;
  std::unordered_map<const UOp*, UOpRef> sub;
  for (size_t i = 1; i < st->src.size(); ++i)
    if (st->src[i]->op == Ops::RANGE && !is_invalid(idx->src[i])) sub[st->src[i].get()] = idx->src[i];
  return substitute(st->src[0], sub);
}

}  // namespace

const PatternMatcher& pm_remove_bufferize() {
  static const PatternMatcher pm = symbolic() + reduce_collapse() + PatternMatcher({
      rule("INDEX(STAGE(c), ...) -> c (a staged constant)", {Ops::INDEX}, [](const UOpRef& x) -> UOpRef {
        return x->src[0]->op == Ops::STAGE && x->src[0]->src[0]->op == Ops::CONST ? x->src[0]->src[0] : nullptr;
      }),
      rule("INDEX(STAGE(x, r...), i...) -> x[r := i] (cheap to recompute)", {Ops::INDEX},
           [](const UOpRef& x) { return remove_bufferize(x); }),
      rule("indexing a const is a const", {Ops::INDEX},
           [](const UOpRef& x) -> UOpRef { return x->src[0]->op == Ops::CONST ? x->src[0] : nullptr; }),
  });
  return pm;
}

namespace {

// --- the reference's limit_bufs: a kernel reads at most kMaxKernelBuffers - 1 buffers (one is the output) ---
// A binary or ternary op whose sources read more buffers than that gets each elementwise source staged into a
// buffer of its own (ranges renamed, the stage indexed by the original ranges), so cat/stack of many tensors is
// several kernels of at most 30 inputs, not one kernel whose size grows with the count.
constexpr size_t kMaxKernelBuffers = 31;  // the reference's DEVICE_MAX_BUFS for CPU
struct LimitBufs {
  std::unordered_map<const UOp*, std::vector<const UOp*>> bufs;  // sorted buffer leaves read below a node
  UOps keep;
  int64_t next_range = 0;
  const std::vector<const UOp*>& of(const UOpRef& u) {
    if (auto it = bufs.find(u.get()); it != bufs.end()) return it->second;
    std::vector<const UOp*> out;
    if (u->op == Ops::STAGE || u->op == Ops::AFTER || u->op == Ops::PARAM || u->op == Ops::BUFFER) {
      out.push_back(u.get());
    } else {
      for (auto& s : u->src) {
        const auto& b = of(s);
        std::vector<const UOp*> merged;
        std::set_union(out.begin(), out.end(), b.begin(), b.end(), std::back_inserter(merged));
        out.swap(merged);
      }
    }
    keep.push_back(u);
    return bufs[u.get()] = std::move(out);
  }
};

UOpRef limit_bufs(const UOpRef& root, LimitBufs& ctx) {
  if (root->device.empty() || ctx.of(root).size() <= kMaxKernelBuffers - 1) return nullptr;
  UOps srcs;
  bool changed = false;
  for (auto& s : root->src) {
    if (!group::elementwise(s->op) || s->device.empty() || ctx.of(s).size() <= 1) {
      srcs.push_back(s);
      continue;
    }
    UOps orig = s->ranges();
    std::unordered_map<const UOp*, UOpRef> rename;
    UOps ended;
    for (auto& r : orig) {
      UOpRef nr = r->with_arg(RangeArg{ctx.next_range++, AxisType::WEAK});
      rename[r.get()] = nr;
      ended.push_back(nr);
    }
    UOps st{substitute(s, rename)};
    st.insert(st.end(), ended.begin(), ended.end());
    UOpRef stage = UOp::make(Ops::STAGE, s->dtype, st, StageArg{s->device, false});
    UOps idx{stage};
    idx.insert(idx.end(), orig.begin(), orig.end());
    srcs.push_back(UOp::make(Ops::INDEX, s->dtype, idx));
    changed = true;
  }
  return changed ? root->replace_src(srcs) : nullptr;
}

}  // namespace

UOpRef rangeify(const UOpRef& sink, UOps* staged) {
  RangeifyCtx ctx;
  graph_rewrite(sink, PatternMatcher{}, "get realize");
  run_walk(ctx, sink);
  UOpRef applied = graph_rewrite(sink, pm_apply_rangeify(), ctx, "apply rangeify", true);
  UOpRef debuf = graph_rewrite(applied, pm_remove_bufferize(), "symbolic+reduce_collapse+debuf");
  LimitBufs lb;
  for (auto& u : debuf->toposort())
    if (u->op == Ops::RANGE) lb.next_range = std::max(lb.next_range, u->as<RangeArg>().id + 1);
  static const PatternMatcher pm_limit({rule("limit buffers: stage the sources of an op that reads too many buffers", {},
                                             [](const UOpRef& x, LimitBufs& c) -> UOpRef {
                                               return broadcastable(x->op) ? limit_bufs(x, c) : nullptr;
                                             })});
  UOpRef out = graph_rewrite(debuf, pm_limit, lb, "limit buffers");
  if (staged) *staged = std::move(ctx.staged);
  return out;
}

}  // namespace ts
