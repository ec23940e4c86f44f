// CPU (C programs): pack_panels (strided reads of a reduce copied once into a contiguous stack panel) and
// pack_spread_lanes (lanes far apart copied side by side). No counterpart in the reference.
#include "engine/codegen/cpu/cpu_passes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/codegen/lowering.h"
#include "engine/codegen/lowering_internal.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace lowering;

namespace {

// x's value with the given RANGEs/PARAMs at the given values and every other one at 0 (nullopt: not an integer
// constant then, e.g. a load in the index)
std::optional<int64_t> value_at(const UOpRef& x, const std::unordered_map<const UOp*, int64_t>& at) {
  SubMap m;
  for (auto& u : x->toposort())
    if (u->op == Ops::RANGE || (u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU)) {
      auto it = at.find(u.get());
      m[u.get()] = uconst_int(u->dtype, it == at.end() ? 0 : it->second);
    }
  std::unordered_map<const UOp*, UOpRef> memo;
  const UOpRef v = simplify(rename_ranges(x, m, memo));
  if (v->op != Ops::CONST || v->is<Invalid>()) return std::nullopt;
  return v->const_int();
}
bool is_output_loop(const UOpRef& r) {
  const AxisType t = rtype(r);
  return (t == AxisType::WEAK || t == AxisType::LOOP || t == AxisType::GLOBAL) && r->src[0]->op == Ops::CONST && !is_invalid(r->src[0]);
}

// the reads a panel could hold, grouped by (buffer, loops over outputs used, reduce ranges used), as they come
struct PanelReads {
  UOps in_loops, reduces, loads;
};
std::vector<PanelReads> panel_reads(const UOps& topo, const UOps& loops) {
  std::unordered_set<const UOp*> written;
  for (auto& u : topo)
    if (u->op == Ops::STORE) written.insert(buffer_uop(u.get()));
  std::map<std::tuple<const UOp*, std::vector<const UOp*>, std::vector<const UOp*>>, size_t> at;
  std::vector<PanelReads> out;
  for (auto& u : topo) {
    if (u->op != Ops::LOAD || u->src.size() != 1) continue;
    const UOpRef& idx = u->src[0];
    if (idx->op != Ops::INDEX || !is_global_param(idx->src[0]) || written.count(idx->src[0].get())) continue;
    UOps in_loops, reduces;
    bool other = false;
    // (a gated read is copied with its gate: the gate's ranges count too)
    for (auto& v : UOp::make(Ops::SINK, dtypes::void_, UOps(idx->src.begin() + 1, idx->src.end()))->toposort()) {
      if (v->op != Ops::RANGE) continue;
      if (std::find(loops.begin(), loops.end(), v) != loops.end()) in_loops.push_back(v);
      else if (rtype(v) == AxisType::REDUCE && v->src[0]->op == Ops::CONST) reduces.push_back(v);
      else other = true;
    }
    if (other || reduces.empty() || in_loops.size() == loops.size()) continue;
    auto ids = [](const UOps& xs) {
      std::vector<const UOp*> o;
      for (auto& x : xs) o.push_back(x.get());
      std::sort(o.begin(), o.end());
      return o;
    };
    auto [it, fresh] = at.emplace(std::make_tuple(idx->src[0].get(), ids(in_loops), ids(reduces)), out.size());
    if (fresh) out.push_back({in_loops, reduces, {}});
    out[it->second].loads.push_back(u);
  }
  return out;
}
int64_t trips(const UOps& rs) {
  int64_t n = 1;
  for (auto& r : rs) n *= r->src[0]->const_int();
  return n;
}
// Copies `loads` into a new stack panel: element ((d0*n1 + d1)*n2 + ...)*k + pos[j] holds load j at the values d of
// the ranges `dims` (k = loads.size()); its copy runs in loops of its own over `dims` (new ids, of type `loop_type`),
// and each load reads the panel instead.
UOpRef copy_into_panel(const UOpRef& sink, const UOps& loads, const std::vector<int64_t>& pos, UOps dims, AxisType loop_type,
                       int64_t& next_id, const std::string& what) {
  int slot = 0;
  for (auto& u : sink->toposort())
    if (u->op == Ops::BUFFER && u->as<ParamArg>().addrspace == AddrSpace::REG) slot = std::max(slot, static_cast<int>(u->as<ParamArg>().slot) + 1);
  std::sort(dims.begin(), dims.end(), [](const UOpRef& a, const UOpRef& b) { return rid(a) < rid(b); });
  const int64_t k = static_cast<int64_t>(loads.size());
  const DType dt = loads[0]->dtype, it = dims[0]->dtype;
  ParamArg pa;
  pa.slot = slot;
  pa.size = trips(dims) * k;
  pa.addrspace = AddrSpace::REG;
  const UOpRef buf = UOp::make(Ops::BUFFER, dt, {}, pa);
  auto at = [&](const UOps& rs, int64_t j) {
    UOpRef lin = uconst_int(it, 0);
    for (auto& r : rs) lin = alu(Ops::ADD, alu(Ops::MUL, lin, uconst_int(it, r->src[0]->const_int())), r);
    return simplify(alu(Ops::ADD, alu(Ops::MUL, lin, uconst_int(it, k)), uconst_int(it, pos[static_cast<size_t>(j)])));
  };
  UOps copy_rs;
  SubMap to_copy;
  for (auto& r : dims) {
    copy_rs.push_back(UOp::make(Ops::RANGE, r->dtype, r->src, RangeArg{next_id++, loop_type}));
    to_copy[r.get()] = copy_rs.back();
  }
  UOps stores;
  std::unordered_map<const UOp*, UOpRef> memo;
  for (int64_t j = 0; j < k; ++j) {
    const UOpRef& l = loads[static_cast<size_t>(j)];
    const UOpRef read = l->replace_src({rename_ranges(l->src[0], to_copy, memo)});
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dt, {buf, at(copy_rs, j)}), read}));
  }
  UOps end_src{UOp::make(Ops::GROUP, dtypes::void_, stores)};
  end_src.insert(end_src.end(), copy_rs.begin(), copy_rs.end());
  const UOpRef copied = UOp::make(Ops::AFTER, dt, {buf, UOp::make(Ops::END, dtypes::void_, end_src)});
  SubMap reads;
  for (int64_t j = 0; j < k; ++j) reads[loads[static_cast<size_t>(j)].get()] = UOp::make(Ops::LOAD, dt, {UOp::make(Ops::INDEX, dt, {copied, at(dims, j)})});
  return substitute_traced(sink, reads, what);
}
// the loops over outputs of a kernel a panel may serve (all of one kind, two or more), or none
UOps panel_loops(const UOpRef& sink) {
  if (sink->src.size() != 1 || sink->src[0]->op != Ops::END) return {};
  const UOpRef& end = sink->src[0];
  UOps loops(end->src.begin() + 1, end->src.end());
  if (loops.size() < 2 || !std::all_of(loops.begin(), loops.end(), [&](const UOpRef& r) { return is_range(r) && is_output_loop(r) && rtype(r) == rtype(loops[0]); }))
    return {};
  return loops;
}
int64_t next_range_id(const UOps& topo) {
  int64_t n = 0;
  for (auto& u : topo)
    if (u->op == Ops::RANGE) n = std::max(n, rid(u) + 1);
  return n;
}

}  // namespace

UOpRef pack_panels(const UOpRef& sink, int64_t max_bytes) {
  const UOps loops = panel_loops(sink);
  if (loops.empty()) return sink;
  const UOps topo = sink->src[0]->toposort();
  int64_t next_id = next_range_id(topo);
  const std::vector<PanelReads> cands = panel_reads(topo, loops);
  // the largest panel that fits, is reused, and is a strided walk (every reduce step at least 1 KiB apart)
  const PanelReads* best = nullptr;
  int64_t best_bytes = 0;
  for (const PanelReads& p : cands) {
    int64_t reuse = 1;
    for (auto& l : loops)
      if (std::find(p.in_loops.begin(), p.in_loops.end(), l) == p.in_loops.end()) reuse *= l->src[0]->const_int();
    const int64_t bytes = trips(p.reduces) * static_cast<int64_t>(p.loads.size()) * p.loads[0]->dtype->itemsize();
    if (bytes > max_bytes || reuse < 2 || bytes <= best_bytes) continue;
    const UOpRef& idx = p.loads[0]->src[0]->src[1];
    const std::optional<int64_t> at0 = value_at(idx, {});
    bool strided = at0.has_value();
    for (auto& r : p.reduces) {
      const std::optional<int64_t> at1 = value_at(idx, {{r.get(), 1}});
      strided = strided && at1 && std::abs(*at1 - *at0) >= 1024 / p.loads[0]->dtype->itemsize();
    }
    if (!strided) continue;
    best = &p;
    best_bytes = bytes;
  }
  if (!best) return sink;

  // the panel: one slot a read, in the order of the reads' addresses, for every step of its reduce ranges
  std::vector<std::pair<int64_t, UOpRef>> by_addr;
  for (auto& l : best->loads) by_addr.emplace_back(value_at(l->src[0]->src[1], {}).value_or(0), l);
  std::stable_sort(by_addr.begin(), by_addr.end(), [](auto& a, auto& b) { return a.first < b.first; });
  UOps loads;
  std::vector<int64_t> pos;
  for (auto& [a, l] : by_addr) pos.push_back(static_cast<int64_t>(loads.size())), loads.push_back(l);
  const DType dt = loads[0]->dtype;
  std::string what = "copy " + std::to_string(loads.size()) + " strided reads of " + std::to_string(trips(best->reduces)) + " reduce steps into a panel (" +
                     std::to_string(trips(best->reduces) * static_cast<int64_t>(loads.size()) * dt->itemsize() / 1024) + " KiB)";
  UOpRef out = copy_into_panel(sink, loads, pos, best->reduces, rtype(loops[0]), next_id, what);
  // the loops over outputs: the panel's outermost, the ones it is reused across inside them (new ids in that order:
  // loops nest by id)
  UOps order = best->in_loops, rest = loops;
  auto by_id = [](const UOpRef& a, const UOpRef& b) { return rid(a) < rid(b); };
  std::sort(order.begin(), order.end(), by_id);
  std::sort(rest.begin(), rest.end(), by_id);
  for (auto& l : rest)
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  if (std::equal(order.begin(), order.end(), rest.begin())) return out;
  SubMap renumber;
  std::string ids;
  for (auto& l : order) {
    renumber[l.get()] = UOp::make(Ops::RANGE, l->dtype, l->src, RangeArg{next_id++, rtype(l)}, l->tag);
    ids += (ids.empty() ? "" : ", ") + std::to_string(rid(l)) + " as " + std::to_string(next_id - 1);
  }
  return substitute_traced(out, renumber, "loops over outputs reordered for the panel, outermost first: " + ids);
}

UOpRef pack_spread_lanes(const UOpRef& sink, int64_t max_bytes, int64_t lanes) {
  const UOps loops = panel_loops(sink);
  if (loops.empty()) return sink;
  const UOps topo = sink->src[0]->toposort();
  int64_t next_id = next_range_id(topo);
  for (const PanelReads& p : panel_reads(topo, loops)) {
    // every loop over outputs it does not read is one it is reused across; the ones it reads become the panel's own
    int64_t reuse = 1;
    for (auto& l : loops)
      if (std::find(p.in_loops.begin(), p.in_loops.end(), l) == p.in_loops.end()) reuse *= l->src[0]->const_int();
    const int64_t k = static_cast<int64_t>(p.loads.size());
    UOps dims = p.reduces;
    dims.insert(dims.end(), p.in_loops.begin(), p.in_loops.end());
    if (reuse < 2 || k % lanes != 0 || trips(dims) * k * p.loads[0]->dtype->itemsize() > max_bytes) continue;
    // the reads' offsets from the first: a grid c*S + t of C rows (c < C) of the same columns t, S at least a vector
    std::vector<int64_t> off;
    for (auto& l : p.loads) {
      const std::optional<int64_t> a = value_at(l->src[0]->src[1], {});
      if (!a) break;
      off.push_back(*a);
    }
    if (static_cast<int64_t>(off.size()) != k) continue;
    const int64_t lo = *std::min_element(off.begin(), off.end());
    int64_t S = INT64_MAX;
    for (int64_t o : off)
      if (o - lo >= lanes) S = std::min(S, o - lo);
    if (S == INT64_MAX) continue;
    std::set<int64_t> cols, all(off.begin(), off.end());
    for (int64_t o : off)
      if (o - lo < S) cols.insert(o - lo);
    const int64_t C = k / static_cast<int64_t>(std::max<size_t>(cols.size(), 1));
    if (static_cast<int64_t>(all.size()) != k || C % lanes != 0 || C * static_cast<int64_t>(cols.size()) != k) continue;
    bool grid = true;
    for (int64_t c = 0; c < C && grid; ++c)
      for (int64_t t : cols) grid = grid && all.count(lo + c * S + t);
    if (!grid) continue;
    // column t's C rows side by side: read c of column t at t's index * C + c
    const std::vector<int64_t> col_list(cols.begin(), cols.end());
    std::vector<int64_t> pos;
    for (int64_t o : off) {
      const int64_t c = (o - lo) / S, t = (o - lo) - c * S;
      pos.push_back(static_cast<int64_t>(std::lower_bound(col_list.begin(), col_list.end(), t) - col_list.begin()) * C + c);
    }
    const std::string what = "copy " + std::to_string(k) + " reads " + std::to_string(S) + " apart into a panel, each " + std::to_string(C) +
                             " of them side by side (" + std::to_string(trips(dims) * k * p.loads[0]->dtype->itemsize() / 1024) + " KiB)";
    return copy_into_panel(sink, p.loads, pos, dims, rtype(loops[0]), next_id, what);
  }
  return sink;
}

}  // namespace ts
