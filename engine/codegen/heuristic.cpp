// heuristic: the hand-coded opts a kernel gets without BEAM (tensor cores, mat-vec, GROUPTOP, upcasts, unrolls, then
// locals on a GPU or threads on the CPU), default_opts and apply_opts; the reference's codegen/opt/heuristic.py.
#include "engine/codegen/opt.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/codegen/opt_internal.h"

namespace ts {

using namespace opt_detail;

namespace {
std::unordered_set<const UOp*> backward_slice(const UOpRef& x) {
  std::unordered_set<const UOp*> s;
  for (auto& u : x->toposort()) s.insert(u.get());
  s.erase(x.get());  // the reference's backward_slice excludes the node itself
  return s;
}
void split_add(const UOpRef& x, std::vector<UOpRef>& out) {
  if (x->op == Ops::ADD) {
    for (auto& s : x->src) split_add(s, out);
  } else {
    out.push_back(x);
  }
}
// the index expression of an INDEX (without its validity gate)
UOpRef get_idx(const UOpRef& index) {
  const UOpRef& i = index->src.at(1);
  if (i->op == Ops::WHERE && i->src[2]->op == Ops::CONST && i->src[2]->is<Invalid>()) return i->src[1];
  return i;
}
int64_t option_int(const char* name, int64_t dflt) { return codegen_option(name, dflt); }
// the reference's UOp.divides for a size: whether n divides it (a constant, or a product with a divisible factor)
bool size_divides(const UOpRef& x, int64_t n) {
  if (n == 1) return true;
  if (x->op == Ops::CONST) return !x->is<Invalid>() && x->const_int() % n == 0;
  if (x->op == Ops::ADD) return size_divides(x->src[0], n) && size_divides(x->src[1], n);
  if (x->op == Ops::MUL) return size_divides(x->src[0], n) || size_divides(x->src[1], n);
  return false;
}
std::optional<int64_t> prod_of(const std::vector<std::optional<int64_t>>& shape, const std::vector<int>& axes) {
  int64_t p = 1;
  for (int a : axes) {
    if (!shape[a]) return std::nullopt;
    p *= *shape[a];
  }
  return p;
}

// mat-vec: GROUP the reduce by MV_THREADS_PER_ROW, LOCAL a global axis by MV_BLOCKSIZE and UPCAST it by
// MV_ROWS_PER_THREAD. Returns true when it applied (the heuristics stop there).
bool matvec(Scheduler& k) {
  const int64_t blocksize = option_int("MV_BLOCKSIZE", 4), threads_per_row = option_int("MV_THREADS_PER_ROW", 8),
                rows_per_thread = option_int("MV_ROWS_PER_THREAD", 4);
  if (!k.target.has_local || option_int("MV", 1) == 0 || !(blocksize > 1 || threads_per_row > 1 || rows_per_thread > 1)) return false;
  auto reds = k.reduceops();
  if (reds.empty() || reds[0]->as<ReduceArg>().op != Ops::ADD || k.full_shape().size() < 2 || !k.target.has_shared) return false;
  const UOpRef& mulop = reds[0]->src[0];
  if (mulop->op != Ops::MUL || mulop->src[0]->op != Ops::INDEX || mulop->src[1]->op != Ops::INDEX) return false;
  UOpRef idx0 = get_idx(mulop->src[0]), idx1 = get_idx(mulop->src[1]);
  auto red_rngs = k.ranges_of({AxisType::REDUCE});
  if (red_rngs.empty()) return false;
  const UOpRef first_reduce_rng = red_rngs[0];
  std::vector<UOpRef> terms;
  split_add(idx0, terms);
  if (!contains(terms, first_reduce_rng)) return false;
  auto r1 = idx1->ranges();
  for (auto& r : idx0->ranges())
    if (!contains(r1, r)) return false;
  for (int global_idx : k.axes_of({AxisType::GLOBAL})) {
    auto fs = k.full_shape();
    if (!size_divides(first_reduce_rng->src[0], threads_per_row) || !fs[global_idx] || *fs[global_idx] % (blocksize * rows_per_thread) != 0)
      continue;
    try {
      if (threads_per_row > 1) k.apply_opt({OptOps::GROUP, 0, threads_per_row});
    } catch (const KernelOptError&) {
    }
    if (blocksize > 1) k.apply_opt({OptOps::LOCAL, global_idx, blocksize});
    if (rows_per_thread > 1) k.apply_opt({OptOps::UPCAST, global_idx, rows_per_thread});
    return true;
  }
  return false;
}
}  // namespace

namespace {

// the tensor cores (only with one reduce axis): then the M and N axes upcast and the N axis local, if they divide.
// Returns true when one applied (the heuristics stop there).
bool tensor_core_opts(Scheduler& k, std::optional<int64_t> tc_select) {
  if (k.target.tensor_cores.empty() || option_int("USE_TC", 1) <= 0 || k.axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}).size() != 1) return false;
  for (int axis = 0; axis < 3; ++axis) {
    Scheduler tk = k;
    std::vector<UOpRef> rngs;
    try {
      rngs = tk.apply_tc_opt({OptOps::TC, axis, tc_select.value_or(option_int("TC_SELECT", -1))});
    } catch (const KernelOptError&) {
      continue;
    }
    auto first_dividing = [&](const UOpRef& r, std::initializer_list<int64_t> szs) -> int64_t {
      for (int64_t sz : szs)
        if (size_divides(r->src[0], sz)) return sz;
      return 0;
    };
    for (int tc_dim : {1, 0}) {
      const int64_t sz = first_dividing(rngs[tc_dim], {5, 4, 3, 2});
      const int64_t id = range_id(rngs[tc_dim]);
      if (!sz) continue;
      try {
        tk.apply_opt({OptOps::UPCAST, tk.axis_of_range(id), sz});
        for (auto& r : tk.rngs())
          if (range_id(r) == id) rngs[tc_dim] = r;
      } catch (const KernelOptError&) {
      }
    }
    if (const int64_t sz = first_dividing(rngs[0], {4, 2})) {
      try {
        tk.apply_opt({OptOps::LOCAL, tk.axis_of_range(range_id(rngs[0])), sz});
      } catch (const KernelOptError&) {
      }
    }
    k = std::move(tk);
    return true;
  }
  return false;
}

// are we grouping? (small outputs: each output's reduce is split over 16 lanes of a work-group)
void grouptop_opts(Scheduler& k, bool nolocals) {
  if (!k.target.has_local) return;
  auto p = prod_of(k.output_shape(), k.upcastable_dims());
  if (p && *p <= (nolocals ? 240 : 2048)) {
    for (int axis : {0, 1, 2}) {
      try {
        k.apply_opt({OptOps::GROUPTOP, axis, 16});
        break;
      } catch (const KernelOptError&) {
      }
    }
  }
}

// small masked (WHERE-gated) output axes are upcast fully
void upcast_masked_axes(Scheduler& k) {
  std::vector<int> to_upcast;
  std::vector<UOpRef> gate_rngs;
  for (auto& u : k.ast->toposort())
    if (u->op == Ops::WHERE)
      for (auto& r : u->src[0]->ranges()) gate_rngs.push_back(r);
  auto fs = k.full_shape();
  auto rs = k.rngs();
  for (int axis : k.upcastable_dims()) {
    bool masked = contains(gate_rngs, rs[axis]);
    int64_t p = 1;
    for (int j : to_upcast) p *= *fs[j];
    if (*fs[axis] <= 7 && masked && p * *fs[axis] <= 7 * 7) to_upcast.push_back(axis);
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) k.apply_opt({OptOps::UPCAST, *it, 0});
}

// upcast axes along which some buffer is broadcast while the output is large
void upcast_broadcast_axes(Scheduler& k) {
  std::set<int> upcasted_axis;
  while (prod_of(k.output_shape(), k.upcastable_dims()).value_or(0) >= 1024 && k.upcast_size() < 32) {
    std::vector<std::tuple<int64_t, int64_t, int, int64_t>> choices;
    auto fs = k.full_shape();
    auto rs = k.rngs();
    auto up_rngs = k.ranges_of({AxisType::UPCAST, AxisType::UNROLL});
    auto bufs = k.bufs();
    std::vector<std::unordered_set<const UOp*>> slices;
    std::vector<UOpRef> idxs;
    for (auto& b : bufs) {
      idxs.push_back(get_idx(b));
      slices.push_back(backward_slice(idxs.back()));
    }
    for (int axis : k.upcastable_dims()) {
      for (int64_t amount : {3, 4}) {
        if (upcasted_axis.count(axis) || *fs[axis] % amount != 0) continue;
        const UOpRef& rng = rs[axis];
        bool any = false;
        for (size_t bi = 0; bi < bufs.size(); ++bi) {
          bool all_up = std::all_of(up_rngs.begin(), up_rngs.end(), [&](const UOpRef& r2) { return slices[bi].count(r2.get()) > 0; });
          if (!slices[bi].count(rng.get()) && all_up) { any = true; break; }
        }
        if (!any) continue;
        int64_t num_strides = 0, sum_strides = 0;
        for (size_t bi = 0; bi < bufs.size(); ++bi) {
          if (slices[bi].count(rng.get())) ++num_strides;
          std::vector<UOpRef> terms;
          split_add(idxs[bi], terms);
          for (auto& c : terms) {
            if (c == rng) sum_strides += 1;
            if (c->op == Ops::MUL && c->src[0] == rng && c->src[1]->op == Ops::CONST) sum_strides += c->src[1]->const_int();
            if (c->op == Ops::MUL && c->src[1] == rng && c->src[0]->op == Ops::CONST) sum_strides += c->src[0]->const_int();
          }
        }
        choices.emplace_back(num_strides, sum_strides, axis, amount);
      }
    }
    if (choices.empty()) break;
    std::sort(choices.begin(), choices.end());
    k.apply_opt({OptOps::UPCAST, std::get<2>(choices[0]), std::get<3>(choices[0])});
    upcasted_axis.insert(std::get<2>(choices[0]));
  }
}

// unroll small reduce dims
void unroll_small_reduces(Scheduler& k) {
  try {
    auto ud = k.unrollable_dims();
    if (!ud.empty() && (k.upcast_size() <= 4 || k.axes_of({AxisType::UNROLL}).empty()) && k.upcast_size() < 64) {
      int64_t s = *k.full_shape()[ud.back()];
      if (s <= 32) {
        k.apply_opt({OptOps::UNROLL, static_cast<int>(ud.size()) - 1, 0});
        ud = k.unrollable_dims();
        if (!ud.empty() && s <= 3 && *k.full_shape()[ud.back()] <= 3)
          k.apply_opt({OptOps::UNROLL, static_cast<int>(ud.size()) - 1, 0});
      } else if (s % 4 == 0) {
        k.apply_opt({OptOps::UNROLL, static_cast<int>(ud.size()) - 1, 4});
      }
    }
  } catch (const KernelOptError&) {
  }
}

// if nothing is upcast and it is easy to, upcast by 4
void upcast_by_4(Scheduler& k) {
  auto ud = k.upcastable_dims();
  if (k.upcasted() == 0 && !ud.empty() && *k.full_shape()[ud.back()] % 4 == 0) k.apply_opt({OptOps::UPCAST, ud.back(), 4});
}

// local groups: up to 3 LOCAL axes (expanded axes first, then the later axis), 32 (axis 0 only)/16/8/4/3/2 lanes,
// at most 128 lanes in all
void local_opts(Scheduler& k, bool nolocals) {
  if (!k.target.has_local) return;
  if (nolocals) {
    k.apply_opt({OptOps::NOLOCALS, 0, 0});
    return;
  }
  auto rs = k.rngs();
  auto bufs = k.bufs();
  std::vector<std::unordered_set<const UOp*>> slices;
  for (auto& b : bufs) slices.push_back(backward_slice(get_idx(b)));
  std::vector<std::pair<bool, int>> ranking;
  for (int axis : k.axes_of({AxisType::GLOBAL, AxisType::WEAK})) {
    if (rs[axis]->src[0]->op != Ops::CONST) continue;
    bool expanded = std::any_of(slices.begin(), slices.end(), [&](const auto& sl) { return !sl.count(rs[axis].get()); });
    ranking.emplace_back(expanded, axis);
  }
  std::stable_sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
    return std::make_pair(-static_cast<int>(a.first), -a.second) < std::make_pair(-static_cast<int>(b.first), -b.second);
  });
  auto fs = k.full_shape();
  std::vector<std::pair<int, int64_t>> to_local;
  for (auto& [expanded, axis] : ranking) {
    int64_t local_size = 1;
    for (auto& [a, sz] : to_local) local_size *= sz;
    std::vector<int64_t> cands;
    if (axis == 0) cands.push_back(32);
    for (int64_t x : {16, 8, 4, 3, 2}) cands.push_back(x);
    for (int64_t x : cands)
      if (*fs[axis] % x == 0 && local_size * x <= 128) {
        to_local.emplace_back(axis, x);
        break;
      }
  }
  if (to_local.size() > 3) to_local.resize(3);
  std::sort(to_local.begin(), to_local.end());
  int deleted_shape = 0;
  for (auto [axis, local_sz] : to_local) {
    axis -= deleted_shape;
    bool will_delete_shape = local_sz == *k.full_shape()[axis];
    k.apply_opt({OptOps::LOCAL, axis, local_sz});
    if (will_delete_shape) ++deleted_shape;
  }
}

}  // namespace

void hand_coded_optimizations(Scheduler& k, std::optional<int64_t> tc_select) {
  if (tensor_core_opts(k, tc_select)) return;
  // (no images on any target of this engine)
  const bool nolocals = option_int("NOLOCALS", 0) != 0;

  if (matvec(k)) return;
  grouptop_opts(k, nolocals);
  // no more opt if we are grouping
  if (k.group_for_reduces() > 0) return;
  upcast_masked_axes(k);
  upcast_broadcast_axes(k);
  unroll_small_reduces(k);
  upcast_by_4(k);
  local_opts(k, nolocals);
  threads_opt(k);
}

// threads (CPU): about 128K ops per thread
void threads_opt(Scheduler& k) {
  if (k.target.has_threads && k.target.global_max[0] > 0) {
    for (int threads : {32, 16, 12, 8, 6, 5, 4, 3, 2}) {
      if (threads > k.target.global_max[0]) continue;
      auto fs = k.full_shape();
      int64_t p = 1;
      bool symbolic_shape = false;
      for (auto& s : fs) {
        if (!s) symbolic_shape = true;
        else p *= *s;
      }
      if (symbolic_shape || p / (128 << 10) < threads) continue;
      for (int axis : k.axes_of({AxisType::WEAK})) {
        if (fs[axis] && *fs[axis] % threads == 0) {
          try {
            k.apply_opt({OptOps::THREAD, axis, threads});
          } catch (const KernelOptError&) {
          }
          break;
        }
      }
      if (!k.applied_opts.empty() && k.applied_opts.back().op == OptOps::THREAD) break;
    }
  }
}

void default_opts(Scheduler& k) {
  if (codegen_option("NOOPT", 0) != 0) return;
  for (auto& u : k.ast->toposort())
    if (u->op == Ops::STAGE) return;  // the heuristics do not handle multi-block kernels
  hand_coded_optimizations(k);
}

UOpRef apply_opts(const UOpRef& sink, const OptTarget& target) {
  Scheduler k(sink, target);
  k.convert_loop_to_global();
  default_opts(k);
  return k.get_optimized_ast();
}

}  // namespace ts
