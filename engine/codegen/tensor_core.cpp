#include "engine/codegen/tensor_core.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "engine/codegen/linearize.h"
#include "engine/codegen/lowering.h"

namespace ts {

namespace {

using Values = std::unordered_map<int64_t, int64_t>;  // range id -> value

void refuse(const std::string& why) { throw KernelOptError("tensor core: " + why); }

// an index expression's value for range values (absent: 0); nullopt for ops other than + * and integer constants
std::optional<int64_t> eval_affine(const UOpRef& e, const Values& v) {
  switch (e->op) {
    case Ops::CONST:
      if (!e->is<int64_t>()) return std::nullopt;
      return e->const_int();
    case Ops::RANGE: {
      auto it = v.find(e->as<RangeArg>().id);
      return it == v.end() ? 0 : it->second;
    }
    case Ops::ADD:
    case Ops::MUL: {
      auto a = eval_affine(e->src[0], v), b = eval_affine(e->src[1], v);
      if (!a || !b) return std::nullopt;
      return e->op == Ops::ADD ? *a + *b : *a * *b;
    }
    default: return std::nullopt;
  }
}

struct Affine {
  int64_t base = 0;
  std::unordered_map<int64_t, int64_t> coef;
};

// the index of an INDEX as base + sum(coef * range): refused when it is gated, not made of + * and constants, or not
// affine (checked at every range's last value and at a spread of points)
Affine affine_index(const UOpRef& index, const std::vector<TcRange>& rs, const char* what) {
  if (index->op != Ops::INDEX || index->src.size() != 2) refuse(std::string(what) + " is not an ungated buffer access");
  const UOpRef& e = index->src[1];
  Affine a;
  auto b = eval_affine(e, {});
  if (!b) refuse(std::string("the index of ") + what + " is not a sum of products of ranges and constants");
  a.base = *b;
  for (auto& r : rs) a.coef[r.id] = *eval_affine(e, {{r.id, 1}}) - a.base;
  for (int p = 0; p < 8; ++p) {
    Values v;
    int64_t expect = a.base;
    for (size_t i = 0; i < rs.size(); ++i) {
      const int64_t x = p == 0 ? rs[i].size - 1 : static_cast<int64_t>((i * 7 + p * 13 + p * i) % static_cast<size_t>(rs[i].size));
      v[rs[i].id] = x;
      expect += a.coef[rs[i].id] * x;
    }
    if (*eval_affine(e, v) != expect) refuse(std::string("the index of ") + what + " is not affine in the ranges");
  }
  for (auto& [id, c] : a.coef)
    if (c < 0) refuse(std::string("the index of ") + what + " runs backwards along a range");
  if (a.base < 0) refuse(std::string("the index of ") + what + " starts before its buffer");
  return a;
}

// the staging depth's limits: the k extent of a fill, and the 32-bit registers per lane for accumulators + prefetch
constexpr int64_t kTcStagedKMax = 32;
// the k extent of a workgroup-scope kernel's loads
constexpr int64_t kTcWorkgroupK = 32;
constexpr int64_t kTcRegisterBudget = 176;
// the k extent of a staged fp32 matmul's fill
constexpr int64_t kStagedMatmulK = 16;

int64_t prod_sizes(const std::vector<TcRange>& rs) {
  int64_t p = 1;
  for (auto& r : rs) p *= r.size;
  return p;
}

// the ranges as one contiguous run of two buffers' indexes in one order: sorted by their coefficient in p, the first
// steps by sp and each next by the one before times its size, and q steps in proportion. The steps (sp, sq), or
// nullopt when they are no such run.
std::optional<std::pair<int64_t, int64_t>> contiguous_run(std::vector<TcRange> rs, int64_t TcRange::*p, int64_t TcRange::*q) {
  std::sort(rs.begin(), rs.end(), [&](const TcRange& x, const TcRange& y) { return x.*p < y.*p; });
  const int64_t sp = rs.at(0).*p, sq = rs.at(0).*q;
  int64_t place = 1;
  for (auto& r : rs) {
    if (r.*p != sp * place || r.*q != sq * place) return std::nullopt;
    place *= r.size;
  }
  return std::make_pair(sp, sq);
}

// TC_STAGE=N: the K blocks asked for at a time (0: none asked), refused when N does not divide the layout's K blocks
int64_t asked_stage(const TcLayout& L) {
  const int64_t want = codegen_option("TC_STAGE", 0);
  if (want > 0 && L.k_blocks() % want) refuse("TC_STAGE=" + std::to_string(want) + " does not divide the " + std::to_string(L.k_blocks()) + " K blocks");
  return std::max<int64_t>(want, 0);
}

// the deepest fill of 2, 4, 8, ... K blocks (a divisor of them) for which `fits` holds of the deeper layout; the depth
// stays where none does
template <class Fits>
void deepen_stage(TcLayout& L, Fits fits) {
  for (int64_t d = 2; L.k_blocks() % d == 0; d *= 2) {
    TcLayout deeper = L;
    deeper.stage = d;
    if (!fits(deeper)) break;
    L.stage = d;
  }
}

// a work group of `lanes` and the layout's work groups within the target's launch limits
void refuse_over_launch(const TcLayout& L, int64_t lanes, const OptTarget& target) {
  if (lanes > target.local_max[0]) refuse(std::to_string(lanes) + " lanes in a work group, the device allows " + std::to_string(target.local_max[0]));
  if (L.work_groups() > target.global_max[0]) refuse("too many work groups");
}

// the tiles at the layout's depth within `limit` bytes of shared memory (`asked`: the depth TC_STAGE asked for)
void refuse_over_shared(const TcLayout& L, int64_t limit, int64_t asked = 0) {
  if (L.shared_bytes() <= limit) return;
  if (asked) refuse("TC_STAGE=" + std::to_string(asked) + " needs " + std::to_string(L.shared_bytes()) + " bytes of shared memory");
  refuse("the tiles need " + std::to_string(L.shared_bytes()) + " bytes of shared memory, the device has " + std::to_string(limit));
}

// whether the layout's tile can be one workgroup-scope matrix of `tc` (TcLayout::workgroup_scope); sets its strides
bool choose_workgroup_scope(TcLayout& L, const TensorCore& tc) {
  const int64_t lanes = L.subgroups() * L.threads;
  if (!tc.khr || tc.wg_lanes.empty() || codegen_option("TC_WG", 1) == 0) return false;
  if (std::find(tc.wg_lanes.begin(), tc.wg_lanes.end(), lanes) == tc.wg_lanes.end()) return false;
  if (L.tile_m() % tc.wg_m || L.tile_n() % tc.wg_n || L.block_k() % tc.wg_k) return false;
  if (std::max({L.tile_m(), L.tile_n(), L.block_k()}) > tc.wg_max) return false;
  // the accumulator's 32-bit words per invocation
  if (L.tile_m() * L.tile_n() * L.dtype_acc->itemsize() / 4 > 128 * lanes) return false;
  std::vector<TcRange> rows{L.rm}, cols{L.rn}, ks{L.rk};
  for (auto& l : L.locals) (l.cb == 0 ? rows : cols).push_back(l);
  rows.insert(rows.end(), L.upcast_m.begin(), L.upcast_m.end());
  cols.insert(cols.end(), L.upcast_n.begin(), L.upcast_n.end());
  ks.insert(ks.end(), L.unrolls.begin(), L.unrolls.end());
  auto m = contiguous_run(rows, &TcRange::ca, &TcRange::cc), n = contiguous_run(cols, &TcRange::cb, &TcRange::cc),
       k = contiguous_run(ks, &TcRange::ca, &TcRange::cb);
  if (!m || !n || !k) return false;
  // a tile is row-major (its columns contiguous) or column-major; (row step, column step) of A, B and the output
  auto layout = [](int64_t row_step, int64_t col_step, int64_t* stride, bool* col) {
    if (col_step == 1) return *stride = row_step, *col = false, true;
    if (row_step == 1) return *stride = col_step, *col = true, true;
    return false;
  };
  if (!layout(m->first, k->first, &L.a_stride, &L.a_col) || !layout(k->second, n->first, &L.b_stride, &L.b_col) ||
      !layout(m->second, n->second, &L.c_stride, &L.c_col))
    return false;
  // every tile's start and stride 16-byte aligned
  const int64_t ein = 16 / L.dtype_in->itemsize(), eout = 16 / L.dtype_out->itemsize();
  if (L.a_stride % ein || L.b_stride % ein || L.c_stride % eout || L.base_a % ein || L.base_b % ein || L.base_c % eout) return false;
  for (auto* v : {&L.globals, &L.reduces})
    for (auto& r : *v)
      if (r.ca % ein || r.cb % ein || r.cc % eout) return false;
  // K blocks a load: when the K blocks continue the block's run (the whole K one run), `stage` of them are one
  // tile_m x stage*block_k tile of A and one of B; as many as keep that at most kTcWorkgroupK deep (TC_STAGE=N: N)
  std::vector<TcRange> all_k = ks;
  all_k.insert(all_k.end(), L.reduces.begin(), L.reduces.end());
  if (!L.reduces.empty() && contiguous_run(all_k, &TcRange::ca, &TcRange::cb) == k) {
    if (const int64_t want = asked_stage(L)) {
      L.stage = want;
    } else {
      deepen_stage(L, [](const TcLayout& x) { return x.staged_k() <= kTcWorkgroupK; });
    }
  }
  return L.workgroup_scope = true;
}

}  // namespace

int64_t TcLayout::subgroups() const { return prod_sizes(locals); }
int64_t TcLayout::tile_m() const {
  int64_t p = tm * prod_sizes(upcast_m);
  for (auto& l : locals) if (l.cb == 0) p *= l.size;
  return p;
}
int64_t TcLayout::tile_n() const {
  int64_t p = tn * prod_sizes(upcast_n);
  for (auto& l : locals) if (l.ca == 0) p *= l.size;
  return p;
}
int64_t TcLayout::block_k() const { return tk * prod_sizes(unrolls); }
int64_t TcLayout::work_groups() const { return prod_sizes(globals); }
int64_t TcLayout::k_blocks() const { return prod_sizes(reduces); }
int64_t TcLayout::shared_bytes() const {
  const int64_t e = dtype_in->itemsize(), k = staged_k();
  if (simt) return (tile_m() + tile_n()) * k * e;  // [k][tile_m] and [k][tile_n], unpadded
  // A: [tile_m][k + 8] or [k][tile_m + 8]; B: [k][tile_n + 8] or [tile_n][k + 8]
  const int64_t a = rm.ca == 1 ? k * (tile_m() + 8) : tile_m() * (k + 8);
  const int64_t b = rn.cb == 1 ? k * (tile_n() + 8) : tile_n() * (k + 8);
  return (a + b) * e;
}
int64_t TcLayout::prefetch_words() const {
  const int64_t lanes = subgroups() * threads;
  return ((tile_m() + tile_n()) * staged_k() * dtype_in->itemsize() + 4 * lanes - 1) / (4 * lanes);
}

// A matmul kernel's layout without what a tensor core adds: its three buffers, dtypes, index bases and every range in its
// role; `ids` (empty or three) names the ranges of one tensor-core operation (m, n, k), which take no other role
static TcLayout matmul_roles(const UOpRef& ast, const std::vector<int64_t>& ids) {
  TcLayout L;
  L.rm.id = L.rn.id = L.rk.id = -1;
  // the one store, its value a REDUCE (or a cast of it) of a MUL of two buffer reads
  UOpRef store, red;
  std::vector<UOpRef> ranges;
  for (auto& u : ast->toposort()) {
    if (u->op == Ops::STORE) {
      if (store) refuse("the kernel stores more than once");
      store = u;
    }
    if (u->op == Ops::REDUCE) {
      if (red) refuse("the kernel has more than one reduce");
      red = u;
    }
    if (u->op == Ops::RANGE && u->vmax() > 0) ranges.push_back(u);
    if (u->op == Ops::WHERE || u->op == Ops::STAGE) refuse("the kernel has a gate or a local buffer");
    if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU) refuse("the kernel has a Variable");
  }
  if (!store || !red || red->as<ReduceArg>().op != Ops::ADD) refuse("no sum to put on tensor cores");
  UOpRef value = store->src[1];
  if (value->op == Ops::CAST) value = value->src[0];
  if (value != red) refuse("the stored value is more than a cast of the sum");
  UOpRef mul = red->src[0]->op == Ops::CAST ? red->src[0]->src[0] : red->src[0];
  if (mul->op != Ops::MUL) refuse("the sum is not of a product");
  const UOpRef &ia = mul->src[0], &ib = mul->src[1], &ic = store->src[0];
  L.dtype_in = ia->dtype, L.dtype_acc = red->dtype, L.dtype_out = store->src[1]->dtype;
  if (ib->dtype != ia->dtype) refuse("A is " + std::string(ia->dtype->name) + ", B " + ib->dtype->name);
  for (const UOpRef* x : {&ia, &ib, &ic})
    if ((*x)->op != Ops::INDEX || (*x)->src[0]->op != Ops::PARAM) refuse("an operand is not a buffer read");
  L.slot_a = ia->src[0]->as<ParamArg>().slot, L.slot_b = ib->src[0]->as<ParamArg>().slot, L.slot_c = ic->src[0]->as<ParamArg>().slot;

  std::vector<TcRange> rs;
  for (auto& r : ranges) {
    TcRange t;
    t.id = r->as<RangeArg>().id, t.type = r->as<RangeArg>().type;
    if (r->src[0]->op != Ops::CONST) refuse("a range has a symbolic size");
    t.size = r->src[0]->const_int();
    rs.push_back(t);
  }
  const Affine aa = affine_index(ia, rs, "A"), ab = affine_index(ib, rs, "B"), ac = affine_index(ic, rs, "the output");
  L.base_a = aa.base, L.base_b = ab.base, L.base_c = ac.base;
  for (auto& t : rs) {
    t.ca = aa.coef.at(t.id), t.cb = ab.coef.at(t.id), t.cc = ac.coef.at(t.id);
    const bool a = t.ca != 0, b = t.cb != 0, c = t.cc != 0;
    const AxisType ty = t.type;
    if (!ids.empty() && t.id == ids[0]) {
      if (!(a && !b && c)) refuse("the m range is not a row of A and of the output only");
      L.rm = t;
    } else if (!ids.empty() && t.id == ids[1]) {
      if (!(!a && b && c)) refuse("the n range is not a column of B and of the output only");
      L.rn = t;
    } else if (!ids.empty() && t.id == ids[2]) {
      if (!(a && b && !c)) refuse("the k range is not a reduce of A and B");
      L.rk = t;
    } else if (a && b && c) {
      if (ty != AxisType::GLOBAL) refuse("a batch range that is not GLOBAL");
      L.globals.push_back(t);
    } else if (a && b && !c) {
      if (ty == AxisType::REDUCE) L.reduces.push_back(t);
      else if (ty == AxisType::UNROLL) L.unrolls.push_back(t);
      else refuse("a reduce range split other than by UNROLL");
    } else if (c && (a != b)) {
      if (ty == AxisType::GLOBAL) L.globals.push_back(t);
      else if (ty == AxisType::LOCAL) L.locals.push_back(t);
      else if (ty == AxisType::UPCAST) (a ? L.upcast_m : L.upcast_n).push_back(t);
      else refuse("an output range of type " + std::string(axis_type_name(ty)));
    } else {
      refuse("a range that is not a row, column, reduce or batch of the matmul");
    }
  }
  return L;
}

TcLayout tc_layout(const UOpRef& ast, const TensorCore& tc, const std::vector<int64_t>& ids, const OptTarget& target) {
  if (ids.size() != 3) refuse("the kernel has no tensor-core ranges");
  TcLayout L = matmul_roles(ast, ids);
  L.tm = tc.m, L.tn = tc.n, L.tk = tc.k, L.threads = tc.threads, L.khr = tc.khr;
  if (L.dtype_in != tc.dtype_in || L.dtype_acc != tc.dtype_out) refuse("dtypes do not match " + tc.str());
  if (L.dtype_out != L.dtype_acc && L.dtype_out != tc.dtype_in) refuse("the sum is cast to " + std::string(L.dtype_out->name));
  if (L.rm.size != tc.m || L.rn.size != tc.n || L.rk.size != tc.k) refuse("the tensor-core ranges are not " + tc.str());
  // fragments are loaded from and stored to rows (or columns) of contiguous elements
  if (L.rm.cc != 1 && L.rn.cc != 1) refuse("the output is neither row- nor column-major in the fragment");
  if (L.rk.ca != 1 && L.rm.ca != 1) refuse("A is neither row- nor column-major in the fragment");
  if (L.rk.cb != 1 && L.rn.cb != 1) refuse("B is neither row- nor column-major in the fragment");
  // a fragment store's start and stride are 16-byte aligned
  const int64_t align = 16 / L.dtype_out->itemsize();
  if (L.base_c % align) refuse("the output does not start 16-byte aligned");
  for (auto* v : {&L.globals, &L.locals, &L.upcast_m, &L.upcast_n})
    for (auto& t : *v)
      if (t.cc % align) refuse("an output stride is not a multiple of 16 bytes");
  if ((L.rm.cc == 1 ? L.rn.cc : L.rm.cc) % align) refuse("the output's row stride is not a multiple of 16 bytes");
  refuse_over_launch(L, L.subgroups() * L.threads, target);
  if (choose_workgroup_scope(L, tc)) return L;
  const int64_t shared_limit = target.tc_shared_limit();
  refuse_over_shared(L, shared_limit);
  const int64_t fm = prod_sizes(L.upcast_m), fn = prod_sizes(L.upcast_n);
  if (fm * fn > 64) refuse("more than 64 accumulators per subgroup");
  // the staging depth: K blocks per shared-memory fill. Deeper fills take half as many barriers per multiply-add, as
  // long as the tiles fit in shared memory and the registers that prefetch them stay within a budget beside the
  // accumulators (a lane holds tm x tn / threads of each in fp32)
  if (const int64_t want = asked_stage(L)) {
    L.stage = want;
    refuse_over_shared(L, shared_limit, want);
  } else {
    const int64_t acc_words = fm * fn * L.tm * L.tn / L.threads;
    deepen_stage(L, [&](const TcLayout& x) {
      return x.staged_k() <= kTcStagedKMax && x.shared_bytes() <= shared_limit && acc_words + x.prefetch_words() <= kTcRegisterBudget;
    });
  }
  return L;
}

TcLayout staged_matmul_layout(const UOpRef& ast, const OptTarget& target) {
  TcLayout L = matmul_roles(ast, {});
  L.simt = true, L.tm = L.tn = L.tk = 1, L.threads = 1;
  if (L.dtype_in != dtypes::float32 || L.dtype_acc != dtypes::float32 || L.dtype_out != dtypes::float32) refuse("not an fp32 matmul");
  if (L.slot_c == L.slot_a || L.slot_c == L.slot_b) refuse("the output is an operand");
  const int64_t lanes = L.subgroups(), fm = prod_sizes(L.upcast_m), fn = prod_sizes(L.upcast_n);
  if (lanes < 32) refuse("fewer than 32 lanes share the tiles");
  refuse_over_launch(L, lanes, target);
  if (fm * fn < 16) refuse("fewer than 16 outputs a lane");
  if (fm * fn > 128) refuse("more than 128 outputs a lane");
  if (L.reduces.empty()) refuse("no reduce loop to stage");
  // the launch as the lowered kernel's (add gpudims: its dims in range-id order): every range's value over the SPECIALs
  auto by_id = [](const TcRange& x, const TcRange& y) { return x.id < y.id; };
  std::sort(L.globals.begin(), L.globals.end(), by_id);
  std::sort(L.locals.begin(), L.locals.end(), by_id);
  UOps gs, ls;
  for (auto& r : L.globals) gs.push_back(iconst(r.size));
  for (auto& r : L.locals) ls.push_back(iconst(r.size));
  try {
    L.global_idx = get_grouped_dims("gidx", gs, target.global_max, true);
    L.local_idx = get_grouped_dims("lidx", ls, target.local_max, false);
  } catch (const Error& e) {
    refuse(std::string("launch dims: ") + e.what());
  }
  for (auto* v : {&L.global_idx, &L.local_idx})
    for (auto& e : *v)
      for (auto& u : e->toposort())
        if (!(u->op == Ops::CONST || u->op == Ops::SPECIAL || u->op == Ops::ADD || u->op == Ops::MUL || u->op == Ops::FLOORDIV || u->op == Ops::CDIV ||
              u->op == Ops::FLOORMOD || u->op == Ops::CMOD))
          refuse("a launch index uses " + std::string(op_name(u->op)));
  const int64_t shared_limit = target.tc_shared_limit();
  refuse_over_shared(L, shared_limit);
  // K blocks a fill: one reduce range keeps a fill's blocks one digit of the tiles; as many as make the fill 16 deep,
  // within shared memory and 32 prefetch registers a lane
  if (const int64_t want = asked_stage(L)) {
    if (want > 1 && L.reduces.size() > 1) refuse("TC_STAGE=" + std::to_string(want) + " with the K blocks in more than one range");
    L.stage = want;
    refuse_over_shared(L, shared_limit, want);
  } else if (L.reduces.size() == 1) {
    deepen_stage(L, [&](const TcLayout& x) { return x.staged_k() <= kStagedMatmulK && x.shared_bytes() <= shared_limit && x.prefetch_words() <= 32; });
  }
  return L;
}

ProgramSpec lower_tensor_core_program(const UOpRef& kernel_ast, const UOpRef& sink, const TcLayout& L, const Renderer& renderer) {
  const KernelInfo& info = sink->as<KernelInfo>();
  ProgramSpec spec;
  spec.name = info.name;
  spec.colored_name = info.colored_name;
  spec.function_name = to_function_name(info.colored_name);
  spec.applied_opts = info.applied_opts;
  // the program as a list: the three buffers, the launch indexes and one WMMA that stands for the rest
  int64_t num_buffers = 0;
  std::unordered_map<int64_t, UOpRef> params;
  for (auto& u : kernel_ast->toposort())
    if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace != AddrSpace::ALU) {
      num_buffers = std::max(num_buffers, u->as<ParamArg>().slot + 1);
      params[u->as<ParamArg>().slot] = u;
    }
  spec.num_buffers = static_cast<int>(num_buffers);
  UOps lin;
  for (int64_t s : {L.slot_c, L.slot_a, L.slot_b})
    if (std::find(lin.begin(), lin.end(), params.at(s)) == lin.end()) lin.push_back(params.at(s));
  if (L.simt) {  // the launch dims of the ranges' index expressions, in name order
    std::map<std::string, UOpRef> specials;
    for (auto* v : {&L.global_idx, &L.local_idx})
      for (auto& e : *v)
        for (auto& u : e->toposort())
          if (u->op == Ops::SPECIAL) specials.emplace(u->as<std::string>(), u);
    for (auto& [name, u] : specials) {
      if (std::find(lin.begin(), lin.end(), u->src[0]) == lin.end()) lin.push_back(u->src[0]);  // its size
      lin.push_back(u);
    }
  } else {  // one dim of work groups, one of lanes
    lin.push_back(UOp::make(Ops::SPECIAL, dtypes::int32, {uconst_int(dtypes::int32, L.work_groups())}, std::string("gidx0")));
    lin.push_back(UOp::make(Ops::SPECIAL, dtypes::int32, {uconst_int(dtypes::int32, L.subgroups() * L.threads)}, std::string("lidx0")));
  }
  const std::string what =
      L.simt ? "fp32 multiply-adds: a " + std::to_string(L.tile_m()) + "x" + std::to_string(L.tile_n()) + " tile per work group of " +
                   std::to_string(L.subgroups()) + " lanes, " + std::to_string(prod_sizes(L.upcast_m)) + "x" + std::to_string(prod_sizes(L.upcast_n)) +
                   " outputs a lane, A and B staged in shared memory " + std::to_string(L.staged_k()) + " deep (K blocks of " +
                   std::to_string(L.block_k()) + ")"
             : "tensor cores " + std::to_string(L.tm) + "x" + std::to_string(L.tn) + "x" + std::to_string(L.tk) + " " +
                           L.dtype_in->name + " -> " + L.dtype_acc->name + ": a " + std::to_string(L.tile_m()) + "x" + std::to_string(L.tile_n()) +
                           " tile per work group of " + std::to_string(L.subgroups()) + " subgroups, K blocks of " + std::to_string(L.block_k()) +
                           (L.stage > 1 ? ", " + std::to_string(L.stage) + (L.workgroup_scope ? " a load" : " staged at a time") : "") +
                           (L.workgroup_scope ? ", the tile one workgroup-scope matrix" : "");
  UOps srcs{params.at(L.slot_c), params.at(L.slot_a), params.at(L.slot_b)};
  for (auto& u : lin)
    if (u->op == Ops::SPECIAL) srcs.push_back(u);
  lin.push_back(UOp::make(L.simt ? Ops::CUSTOM : Ops::WMMA, dtypes::void_, srcs, what));
  spec.lowered = UOp::make(Ops::LINEAR, dtypes::void_, lin);
  for (int64_t s : {L.slot_a, L.slot_b, L.slot_c})
    if (std::find(spec.globals.begin(), spec.globals.end(), s) == spec.globals.end()) spec.globals.push_back(static_cast<int>(s));
  std::sort(spec.globals.begin(), spec.globals.end());
  spec.outs = {static_cast<int>(L.slot_c)};
  spec.ins = {static_cast<int>(L.slot_a)};
  if (L.slot_b != L.slot_a) spec.ins.push_back(static_cast<int>(L.slot_b));
  std::sort(spec.ins.begin(), spec.ins.end());
  set_launch_dims(spec, true);
  // every multiply-add of the matmul, and each buffer element moved once
  const double mnk = static_cast<double>(L.work_groups()) * static_cast<double>(L.tile_m() * L.tile_n()) *
                     static_cast<double>(L.k_blocks() * L.block_k());
  spec.estimates.ops = 2 * mnk;
  double mem = 0;
  for (int64_t s : spec.globals) mem += static_cast<double>(params.at(s)->as<ParamArg>().size * params.at(s)->dtype->itemsize());
  spec.estimates.mem = mem;
  spec.estimates.lds = mem;
  spec.ast = kernel_ast;
  spec.lang = renderer.lang();
  renderer.render_tensor_core(spec, L);
  return spec;
}

}  // namespace ts
