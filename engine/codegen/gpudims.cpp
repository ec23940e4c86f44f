// add gpudims: launch ranges -> SPECIALs (GPU) or THREAD ranges -> core_id (CPU), grouped or split to the launch limits
// ("add gpudims"; the reference's codegen/gpudims.py: add_gpudims, get_grouped_dims).
#include "engine/codegen/lowering.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/codegen/lowering_internal.h"
#include "engine/codegen/opt.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace lowering;

namespace {

// ---- gpudims ------------------------------------------------------------------------------------
UOpRef thread_to_core_id(const UOpRef& r, GpuDimsContext& ctx) {
  if (rtype(r) != AxisType::THREAD || r->src[0]->op != Ops::CONST) return nullptr;
  int64_t n = r->src[0]->const_int();
  ctx.threads = static_cast<int>(n);
  ParamArg pa;
  pa.slot = -1;
  pa.name = "core_id";
  pa.vmin = 0;
  pa.vmax = n - 1;
  pa.addrspace = AddrSpace::ALU;
  return ucast(UOp::make(Ops::PARAM, dtypes::int32, {}, pa), r->dtype);
}

// the reference's _dim_max: a launch dim's largest value
int64_t dim_max(const UOpRef& d) { return d->op == Ops::CONST ? d->const_int() : d->vmax(); }
bool same_dims(const UOps& a, const UOps& b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }
// (a, b, c, d) -> (ab, c, d): merge adjacent dims until they fit; nullopt when they cannot
std::optional<UOps> group_dims(UOps dims, const std::array<int64_t, 3>& max_sizes) {
  auto fits = [&] {
    if (dims.size() > max_sizes.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dim_max(dims[i]) > max_sizes[i]) return false;
    return true;
  };
  while (!fits()) {
    bool merged = false;
    for (size_t i = 0; i < max_sizes.size(); ++i) {
      if (i + 1 < dims.size() && dim_max(dims[i]) * dim_max(dims[i + 1]) <= max_sizes[i]) {
        UOpRef m = simplify(imul(dims[i], dims[i + 1]));
        dims.erase(dims.begin() + static_cast<long>(i), dims.begin() + static_cast<long>(i) + 2);
        dims.insert(dims.begin() + static_cast<long>(i), m);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}
std::string dims_str(const UOps& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i]->render();
  return s + (dims.size() == 1 ? ",)" : ")");
}
std::string max_str(const std::array<int64_t, 3>& m) {
  return "(" + std::to_string(m[0]) + ", " + std::to_string(m[1]) + ", " + std::to_string(m[2]) + ")";
}
// (a,) -> (b, c): a dim over its max gives its smallest factor to the next dim
UOps split_dims(const UOps& dims, const std::array<int64_t, 3>& max_sizes) {
  bool fits = true;
  for (size_t i = 0; i < dims.size() && i < max_sizes.size(); ++i) fits = fits && dim_max(dims[i]) <= max_sizes[i];
  if (fits) return dims;
  std::vector<int64_t> d;
  for (auto& x : dims) {
    if (x->op != Ops::CONST) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes) + ": a symbolic dim over its max");
    d.push_back(x->const_int());
  }
  while (d.size() < 3) d.push_back(1);
  for (size_t i = 0; i < d.size(); ++i) {
    while (d[i] > max_sizes[i]) {
      int64_t div = 1;
      for (int64_t f = 2; f * f <= d[i] || f == 2; ++f)
        if (d[i] % f == 0) {
          div = f;
          break;
        }
      if (div == 1 || d[i] / div == 0) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes));
      d[i] /= div;
      d[(i + 1) % d.size()] *= div;
    }
  }
  if (d[2] == 1) d.resize(2);
  UOps out;
  for (int64_t v : d) out.push_back(iconst(v));
  return out;
}

UOpRef special(const UOpRef& size, const std::string& name) { return UOp::make(Ops::SPECIAL, dtypes::weakint, {size}, name); }

bool is_gpu_global(AxisType t) { return t == AxisType::GLOBAL || t == AxisType::THREAD; }
bool is_gpu_local(AxisType t) { return t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE; }

// the launch ranges of a GPU kernel's SINK not yet given SPECIALs: false when there are none (or not a GPU)
struct LaunchRanges {
  UOps topo;
  std::map<int64_t, UOpRef> all_ranges;  // by id, as the reference's dict keyed by the range's arg minus its type
  std::vector<int64_t> global_dims, local_dims;
};
bool launch_ranges(const UOpRef& s, const GpuDimsContext& ctx, LaunchRanges& out) {
  if (!ctx.target || ctx.target->has_threads || !s->is<KernelInfo>()) return false;
  out.topo = s->toposort();
  for (auto& x : out.topo) {
    if (x->op == Ops::SPECIAL) return false;
    if (x->op == Ops::RANGE) out.all_ranges[rid(x)] = x;
  }
  for (auto& [id, r] : out.all_ranges) {
    if (is_gpu_global(rtype(r))) out.global_dims.push_back(id);
    if (is_gpu_local(rtype(r))) out.local_dims.push_back(id);
  }
  return !out.global_dims.empty() || !out.local_dims.empty();
}
// a global store that does not use every local range is done by lane 0 of the missing ones
UOpRef gate_stores_to_lane0(const UOpRef& s, GpuDimsContext& ctx) {
  LaunchRanges lr;
  if (!launch_ranges(s, ctx, lr)) return nullptr;
  SubMap gates;
  for (auto& x : lr.topo) {
    if (x->op != Ops::STORE || x->src[0]->op != Ops::INDEX || !is_global_param(x->src[0]->src[0])) continue;
    const UOpRef& idx = x->src[0];
    auto used = idx->ranges();
    UOpRef mask;
    for (int64_t id : lr.local_dims) {
      const UOpRef& r = lr.all_ranges[id];
      if (std::find(used.begin(), used.end(), r) != used.end()) continue;
      UOpRef eq = alu(Ops::CMPEQ, r, uconst_int(r->dtype, 0));
      mask = mask ? alu(Ops::AND, mask, eq) : eq;
    }
    if (!mask) continue;
    UOps ns{idx->src[0], idx->src[1], idx->src.size() > 2 ? alu(Ops::AND, idx->src[2], mask) : mask};
    gates[idx.get()] = UOp::make(Ops::INDEX, idx->dtype, ns, idx->arg, idx->tag);
  }
  return gates.empty() ? nullptr : substitute(s, gates);
}
// which SPECIALs a kernel's launch ranges become: gidx only (no local ranges), gidx and lidx, or idx (NOLOCALS)
enum class LaunchDims { global_only, with_locals, no_locals };
UOpRef add_gpudims(const UOpRef& s, GpuDimsContext& ctx, LaunchDims kind) {
  LaunchRanges lr;
  if (!launch_ranges(s, ctx, lr)) return nullptr;
  const LaunchDims have = ctx.dont_use_locals ? LaunchDims::no_locals : lr.local_dims.empty() ? LaunchDims::global_only : LaunchDims::with_locals;
  if (have != kind) return nullptr;
  UOps global_shape, local_shape;
  for (int64_t id : lr.global_dims) global_shape.push_back(simplify(lr.all_ranges[id]->src[0]));
  for (int64_t id : lr.local_dims) local_shape.push_back(simplify(lr.all_ranges[id]->src[0]));
  UOps idxs;
  if (ctx.dont_use_locals) {
    if (!lr.local_dims.empty()) throw Error("add gpudims: NOLOCALS with local dims");
    idxs = get_grouped_dims("idx", global_shape, ctx.target->global_max, true);
  } else {
    UOps local_idxs = get_grouped_dims("lidx", local_shape, ctx.target->local_max, false);
    idxs = get_grouped_dims("gidx", global_shape, ctx.target->global_max, true);
    idxs.insert(idxs.end(), local_idxs.begin(), local_idxs.end());
  }
  SubMap subs;
  std::vector<int64_t> dims = lr.global_dims;
  dims.insert(dims.end(), lr.local_dims.begin(), lr.local_dims.end());
  for (auto& x : lr.topo) {
    if (x->op != Ops::RANGE || rtype(x) == AxisType::REDUCE) continue;
    auto it = std::find(dims.begin(), dims.end(), rid(x));
    if (it != dims.end()) subs[x.get()] = idxs[static_cast<size_t>(it - dims.begin())];
  }
  return subs.empty() ? nullptr : substitute(s, subs);
}

}  // namespace

const PatternMatcher& pm_add_gpudims() {
  static const PatternMatcher pm = PatternMatcher({
      rule("THREAD range -> core_id", {Ops::RANGE},
           [](const UOpRef& x, GpuDimsContext& ctx) { return thread_to_core_id(x, ctx); }),
      rule("global store without a local range -> gated to that range's lane 0", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return gate_stores_to_lane0(x, ctx); }),
      rule("GLOBAL ranges -> gidx SPECIALs", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::global_only); }),
      rule("GLOBAL and LOCAL ranges -> gidx and lidx SPECIALs", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::with_locals); }),
      rule("GLOBAL ranges -> idx SPECIALs (no locals)", {Ops::SINK},
           [](const UOpRef& x, GpuDimsContext& ctx) { return add_gpudims(x, ctx, LaunchDims::no_locals); }),
  }) + pm_flatten_range();
  return pm;
}

GpuDimsContext gpu_dims_context(const OptTarget& target, const UOpRef& optimized_sink) {
  GpuDimsContext ctx;
  ctx.target = &target;
  if (optimized_sink->is<KernelInfo>())
    for (auto& o : optimized_sink->as<KernelInfo>().applied_opts)
      if (o.rfind("Opt(op=OptOps.NOLOCALS", 0) == 0) ctx.dont_use_locals = true;
  return ctx;
}

std::vector<UOpRef> get_grouped_dims(const std::string& prefix, const UOps& dims, const std::array<int64_t, 3>& max_sizes, bool reverse) {
  if (reverse) {
    UOps rd(dims.rbegin(), dims.rend());
    auto out = get_grouped_dims(prefix, rd, max_sizes, false);
    std::reverse(out.begin(), out.end());
    return out;
  }
  auto grouped = group_dims(dims, max_sizes);
  UOps limited = grouped ? *grouped : dims;
  if (limited.size() > max_sizes.size()) throw Error("cannot limit dim " + dims_str(dims) + ", " + max_str(max_sizes));
  if (same_dims(limited, dims)) limited = split_dims(dims, max_sizes);
  UOps raw;
  for (size_t i = 0; i < limited.size(); ++i) raw.push_back(special(limited[i], prefix + std::to_string(i)));
  if (same_dims(limited, dims)) return raw;
  // the flat launch index, taken apart into the original dims
  UOpRef flat = iconst(0);
  for (size_t i = 0; i < raw.size(); ++i) {
    UOpRef stride = iconst(1);
    for (size_t j = i + 1; j < limited.size(); ++j) stride = imul(stride, limited[j]);
    flat = iadd(flat, imul(raw[i], stride));
  }
  UOps out;
  for (size_t i = 0; i < dims.size(); ++i) {
    UOpRef stride = iconst(1);
    for (size_t j = i + 1; j < dims.size(); ++j) stride = imul(stride, dims[j]);
    UOpRef q = alu(Ops::FLOORDIV, flat, simplify(stride));
    out.push_back(simplify(i == 0 ? q : alu(Ops::FLOORMOD, q, dims[i])));
  }
  return out;
}

}  // namespace ts
