#include "engine/codegen/opt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "engine/codegen/lowering.h"
#include "engine/codegen/tensor_core.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

namespace ts {

// ---- small helpers ------------------------------------------------------------------------------
std::string_view opt_op_name(OptOps op) {
  static const char* n[] = {"TC", "UPCAST", "UNROLL", "LOCAL", "THREAD", "GROUP", "GROUPTOP", "NOLOCALS", "PADTO", "SWAP"};
  return n[static_cast<int>(op)];
}

std::string Opt::str() const {
  if (op == OptOps::NOLOCALS) return "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)";
  // the reference's TC arg is (tc_select, tc_opt, use_tensor_cores); this engine has tc_opt 0 and use_tensor_cores 1
  if (op == OptOps::TC) return "Opt(op=OptOps.TC, axis=" + std::to_string(axis) + ", arg=(" + std::to_string(arg) + ", 0, 1))";
  return "Opt(op=OptOps." + std::string(opt_op_name(op)) + ", axis=" + std::to_string(axis) + ", arg=" + std::to_string(arg) + ")";
}

std::map<std::string, std::string>& codegen_options() {
  static std::map<std::string, std::string> o;
  return o;
}

const std::vector<std::string>& codegen_option_names() {
  static const std::vector<std::string> names{"NUM_CPU_THREADS", "NOOPT", "NOLOCALS", "MV", "MV_BLOCKSIZE", "MV_THREADS_PER_ROW",
                                              "MV_ROWS_PER_THREAD", "BEAM_UOPS_MAX", "BEAM_UPCAST_MAX", "BEAM_LOCAL_MAX",
                                              "BEAM_MIN_PROGRESS", "BEAM_PATIENCE", "USE_TC", "TC_SELECT", "TC_STAGE", "TC_VEC8",
                                              "GLSL_LANES_SWAP", "FP_CONTRACT", "JAM", "JAM2", "PACK", "PREFETCH", "TRANSPOSE", "VECACC"};
  return names;
}

std::string codegen_options_key() {
  std::string key;
  for (const auto& [k, v] : codegen_options())
    if (!v.empty()) key += " " + k + "=" + v;
  return key;
}

int64_t codegen_option(const std::string& name, int64_t dflt) {
  auto it = codegen_options().find(name);
  return it == codegen_options().end() || it->second.empty() ? dflt : std::atoll(it->second.c_str());
}

int num_cpu_threads() {
  const int64_t v = codegen_option("NUM_CPU_THREADS", 0);
  if (v > 0) return static_cast<int>(v);
  // the reference's default: one thread per core (the corpus pins NUM_CPU_THREADS=8)
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

OptTarget cpu_opt_target() {
  OptTarget t;
  t.global_max = {num_cpu_threads(), 0, 0};
  return t;
}

OptTarget gpu_opt_target() {
  OptTarget t;
  t.has_local = true;
  t.has_shared = true;
  t.has_threads = false;
  t.global_max = {0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  t.local_max = {0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  t.shared_max = 32768;
  t.supports_float4 = true;
  return t;
}

int axis_to_pos(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return -2;
    case AxisType::WEAK: case AxisType::LOOP: return -1;
    case AxisType::THREAD: case AxisType::GLOBAL: return 0;
    case AxisType::WARP: return 1;
    case AxisType::LOCAL: case AxisType::GROUP_REDUCE: return 2;
    case AxisType::UPCAST: return 3;
    case AxisType::REDUCE: return 4;
    case AxisType::UNROLL: return 5;
    default: return 6;
  }
}

std::string colored(std::string_view s, std::string_view color) {
  static const char* names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  std::string lower(color);
  bool upper = true;
  for (auto& c : lower) {
    if (c >= 'a' && c <= 'z') upper = false;
    c = static_cast<char>(std::tolower(c));
  }
  int idx = 0;
  for (int i = 0; i < 8; ++i)
    if (lower == names[i]) idx = i;
  int code = 60 * upper + 30 + idx;
  return "\x1b[" + std::to_string(code) + "m" + std::string(s) + "\x1b[0m";
}

std::string time_to_str(double t, int w) {
  char buf[64];
  if (!std::isfinite(t)) std::snprintf(buf, sizeof buf, "%*s", w + 2, "inf");
  else if (t > 10) std::snprintf(buf, sizeof buf, "%*.2fs ", w, t);
  else if (t > 10e-3) std::snprintf(buf, sizeof buf, "%*.2fms", w, t * 1e3);
  else std::snprintf(buf, sizeof buf, "%*.2fus", w, t * 1e6);
  return buf;
}

std::string_view axis_color(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return "green";
    case AxisType::GLOBAL: return "blue";
    case AxisType::THREAD: return "BLUE";
    case AxisType::LOCAL: return "cyan";
    case AxisType::WARP: return "CYAN";
    case AxisType::WEAK: case AxisType::LOOP: return "WHITE";
    case AxisType::UPCAST: return "yellow";
    case AxisType::GROUP_REDUCE: return "RED";
    case AxisType::REDUCE: return "red";
    case AxisType::UNROLL: return "magenta";
    default: return "white";
  }
}

std::string ansistrip(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      if (j < s.size() && s[j] == 'K') { i = j; continue; }
      while (j < s.size() && s[j] != 'm') ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::string to_function_name(std::string_view name) {
  std::string out;
  for (char c : ansistrip(name)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out += c;
    else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out;
}

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
int64_t range_id(const UOpRef& r) { return r->as<RangeArg>().id; }
AxisType range_type(const UOpRef& r) { return r->as<RangeArg>().type; }
bool contains(const std::vector<UOpRef>& v, const UOpRef& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
void check(bool cond, const std::string& msg) {
  if (!cond) throw KernelOptError(msg);
}
}  // namespace

// ---- Scheduler ----------------------------------------------------------------------------------
Scheduler::Scheduler(UOpRef a, OptTarget t) : ast(std::move(a)), target(t) {
  int64_t mx = 0;
  for (auto& u : ast->toposort())
    if (u->op == Ops::RANGE) mx = std::max(mx, range_id(u));
  next_range_id_ = mx + 1;
  if (ast->is<KernelInfo>())
    for (auto& s : ast->as<KernelInfo>().applied_opts) (void)s;  // pre-applied opts are not re-parsed
}

std::vector<UOpRef> Scheduler::rngs() const {
  std::vector<UOpRef> out;
  for (auto& u : ast->toposort())
    if (u->op == Ops::RANGE && u->dtype != dtypes::void_ && u->vmax() > 0 && range_type(u) != AxisType::DEVICE) out.push_back(u);
  std::sort(out.begin(), out.end(), [](const UOpRef& a, const UOpRef& b) {
    return std::make_tuple(axis_to_pos(range_type(a)), range_id(a)) < std::make_tuple(axis_to_pos(range_type(b)), range_id(b));
  });
  return out;
}

std::vector<std::optional<int64_t>> Scheduler::full_shape() const {
  std::vector<std::optional<int64_t>> out;
  for (auto& r : rngs()) {
    UOpRef s = simplify(r->src[0]);
    if (s->op == Ops::CONST) out.push_back(s->const_int());
    else out.push_back(std::nullopt);
  }
  return out;
}

std::vector<AxisType> Scheduler::axis_types() const {
  std::vector<AxisType> out;
  for (auto& r : rngs()) out.push_back(range_type(r));
  return out;
}

std::vector<int> Scheduler::axes_of(std::initializer_list<AxisType> types) const {
  std::vector<int> out;
  auto at = axis_types();
  for (size_t i = 0; i < at.size(); ++i)
    if (std::find(types.begin(), types.end(), at[i]) != types.end()) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<UOpRef> Scheduler::ranges_of(std::initializer_list<AxisType> types) const {
  std::vector<UOpRef> out;
  for (auto& r : rngs())
    if (std::find(types.begin(), types.end(), range_type(r)) != types.end()) out.push_back(r);
  return out;
}

std::vector<int> Scheduler::upcastable_dims() const {
  auto fs = full_shape();
  std::vector<int> out;
  for (int i : axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::WEAK}))
    if (fs[i] && *fs[i] > 1) out.push_back(i);
  return out;
}

std::vector<int> Scheduler::unrollable_dims() const {
  auto fs = full_shape();
  std::vector<int> out;
  for (int i : axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}))
    if (fs[i] && *fs[i] > 1) out.push_back(i);
  return out;
}

int64_t Scheduler::upcast_size() const {
  auto fs = full_shape();
  int64_t p = 1;
  for (int i : axes_of({AxisType::UPCAST, AxisType::UNROLL})) p *= fs[i].value_or(1);
  return p;
}

int Scheduler::upcasted() const { return static_cast<int>(axes_of({AxisType::UPCAST, AxisType::UNROLL}).size()); }

bool Scheduler::has_reduce() const {
  for (auto& u : ast->toposort())
    if (u->op == Ops::REDUCE) return true;
  return false;
}

std::vector<UOpRef> Scheduler::bufs() const {
  std::vector<UOpRef> out;
  for (auto& u : ast->toposort())
    if (u->op == Ops::INDEX) out.push_back(u);
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<UOpRef> Scheduler::output_rngs() const {
  std::vector<UOpRef> out;
  for (auto& s : ast->src) {
    if (s->op != Ops::END) continue;
    for (size_t i = 1; i < s->src.size(); ++i)
      for (auto& u : s->src[i]->toposort())
        if (u->op == Ops::RANGE && range_type(u) != AxisType::REDUCE && !contains(out, u)) out.push_back(u);
  }
  return out;
}

std::vector<UOpRef> Scheduler::globalizable_rngs() const {
  std::vector<UOpRef> ret;
  for (auto& r : output_rngs())
    if (range_type(r) == AxisType::WEAK) ret.push_back(r);
  for (auto& x : ast->toposort()) {
    if (x->op != Ops::STAGE) continue;
    std::vector<UOpRef> in_stage;
    for (size_t i = 1; i < x->src.size(); ++i)
      for (auto& u : x->src[i]->toposort())
        if (u->op == Ops::RANGE) in_stage.push_back(u);
    std::vector<UOpRef> keep;
    for (auto& r : ret)
      if (contains(in_stage, r)) keep.push_back(r);
    ret = keep;
  }
  return ret;
}

std::vector<std::string> Scheduler::colors() const {
  auto out = output_rngs();
  auto glob = globalizable_rngs();
  std::vector<std::string> ret;
  for (auto& r : rngs()) {
    AxisType t = range_type(r);
    if (dont_use_locals && t == AxisType::GLOBAL) ret.push_back("BLUE");
    else if (t == AxisType::WEAK && !contains(out, r)) ret.push_back("BLACK");
    else if (t == AxisType::WEAK && !contains(glob, r)) ret.push_back("white");
    else ret.push_back(std::string(axis_color(t)));
  }
  return ret;
}

std::vector<UOpRef> Scheduler::reduceops() const {
  std::vector<UOpRef> out;
  for (auto& u : ast->toposort())
    if (u->op == Ops::REDUCE) out.push_back(u);
  return out;
}

std::vector<std::optional<int64_t>> Scheduler::output_shape() const {
  auto fs = full_shape();
  auto at = axis_types();
  for (size_t i = 0; i < fs.size(); ++i)
    if (at[i] == AxisType::REDUCE || at[i] == AxisType::UNROLL || at[i] == AxisType::GROUP_REDUCE) fs[i] = 1;
  return fs;
}

int Scheduler::group_for_reduces() const { return static_cast<int>(axes_of({AxisType::GROUP_REDUCE}).size()); }

void Scheduler::convert_loop_to_global() {
  if (!target.has_local) return;
  std::unordered_map<const UOp*, UOpRef> map;
  for (auto& r : globalizable_rngs())
    map[r.get()] = UOp::make(Ops::RANGE, r->dtype, r->src, RangeArg{range_id(r), AxisType::GLOBAL}, r->tag);
  if (!map.empty()) ast = substitute_traced(ast, map, "convert loop to global");
}

std::pair<UOpRef, UOpRef> Scheduler::shift_to(const UOpRef& rng, int64_t amount, AxisType new_type, bool top) {
  const UOpRef& size = rng->src[0];
  check(size->op == Ops::CONST && amount > 0 && size->const_int() % amount == 0,
        std::to_string(amount) + " can't divide " + size->render());
  UOpRef old_sz = uconst_int(size->dtype, size->const_int() / amount);
  UOpRef new_rng = UOp::make(Ops::RANGE, rng->dtype, {uconst_int(size->dtype, amount)}, RangeArg{next_range_id_++, new_type});
  UOpRef replaced = UOp::make(Ops::RANGE, rng->dtype, {old_sz}, rng->arg);
  UOpRef sub = top ? alu(Ops::ADD, alu(Ops::MUL, new_rng, old_sz), replaced)
                   : alu(Ops::ADD, alu(Ops::MUL, replaced, uconst_int(size->dtype, amount)), new_rng);
  std::string tname(axis_type_name(new_type));
  for (auto& c : tname) c = static_cast<char>(std::tolower(c));
  std::string name = "shift (" + std::to_string(range_id(rng)) + ",) " + std::to_string(amount) + " " + tname;
  ast = substitute_traced(ast, {{rng.get(), sub}}, name);
  return {replaced, new_rng};
}

std::string TensorCore::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + (dtype_in ? dtype_in->name : "?") + " -> " +
         (dtype_out ? dtype_out->name : "?");
}

int Scheduler::axis_of_range(int64_t id) const {
  auto rs = rngs();
  for (size_t i = 0; i < rs.size(); ++i)
    if (range_id(rs[i]) == id) return static_cast<int>(i);
  return -1;
}

std::vector<UOpRef> Scheduler::apply_tc_opt(const Opt& opt) {
  check(applied_opts.empty() && tc_ranges.empty(), "tensor core opts must be first");
  check(!target.tensor_cores.empty(), "the device has no tensor cores");
  check(codegen_option("USE_TC", 1) != 0, "tensor cores are off (USE_TC=0)");
  auto reds = reduceops();
  check(!reds.empty(), "no reduce ops for TensorCore");
  const UOpRef& red = reds[0];
  check(red->as<ReduceArg>().op == Ops::ADD, "the reduce is not a sum");
  const UOpRef mul = red->src[0]->op == Ops::CAST ? red->src[0]->src[0] : red->src[0];
  check(mul->op == Ops::MUL, "the sum is not of a product");
  const int64_t n_tc = static_cast<int64_t>(target.tensor_cores.size());
  check(opt.arg >= -1 && opt.arg < n_tc, "invalid tensor core choice " + std::to_string(opt.arg));
  // the reference's axis choices: (a range of the second operand only, one of the first only, a reduce range), each
  // list by id, highest first
  auto by_id_desc = [](std::vector<UOpRef> v) {
    std::sort(v.begin(), v.end(), [](const UOpRef& a, const UOpRef& b) { return range_id(a) > range_id(b); });
    return v;
  };
  auto only_in = [](const UOpRef& x, const UOpRef& y) {
    std::vector<UOpRef> out;
    auto ry = y->ranges();
    for (auto& r : x->ranges())
      if (!contains(ry, r)) out.push_back(r);
    return out;
  };
  const auto in0 = by_id_desc(only_in(mul->src[0], mul->src[1])), in1 = by_id_desc(only_in(mul->src[1], mul->src[0]));
  const auto red_rngs = by_id_desc(UOps(red->src.begin() + 1, red->src.end()));
  std::string why = "no tensor core of the device matches the kernel";
  for (int64_t i = opt.arg == -1 ? 0 : opt.arg; i < (opt.arg == -1 ? n_tc : opt.arg + 1); ++i) {
    const TensorCore& tc = target.tensor_cores[i];
    if (mul->src[0]->dtype != tc.dtype_in || mul->src[1]->dtype != tc.dtype_in || red->dtype != tc.dtype_out) continue;
    const size_t choices = in0.size() * in1.size() * red_rngs.size();
    if (opt.axis < 0 || static_cast<size_t>(opt.axis) >= choices) continue;
    const size_t ax = static_cast<size_t>(opt.axis);
    const UOpRef n_axis = in1[ax / (in0.size() * red_rngs.size())], m_axis = in0[(ax / red_rngs.size()) % in0.size()],
                 k_axis = red_rngs[ax % red_rngs.size()];
    check(range_type(n_axis) != AxisType::REDUCE && range_type(m_axis) != AxisType::REDUCE, "tensor core X/Y axes can't be REDUCE");
    Scheduler t = *this;
    try {
      // (no PADTO: each axis must be a multiple of the tensor core's)
      auto [n_out, n_in] = t.shift_to(n_axis, tc.n, AxisType::UPCAST);
      auto [m_out, m_in] = t.shift_to(m_axis, tc.m, AxisType::UPCAST);
      auto [k_out, k_in] = t.shift_to(k_axis, tc.k, AxisType::UNROLL);
      t.tc = tc;
      t.tc_index = i;
      t.tc_ranges = {range_id(m_in), range_id(n_in), range_id(k_in)};
      tc_layout(t.ast, tc, t.tc_ranges, target);
      t.applied_opts.push_back(opt);
      *this = std::move(t);
      return {n_out, m_out, k_out};
    } catch (const KernelOptError& e) {
      why = e.what();
    }
  }
  throw KernelOptError(why);
}

void Scheduler::apply_opt(const Opt& opt, bool append) {
  if (opt.op == OptOps::TC) {
    apply_tc_opt(opt);
    return;
  }
  if (tc_ranges.empty()) return apply_split_opt(opt, append);
  // on a tensor-core kernel every further opt must leave a layout the tensor cores can run
  Scheduler before = *this;
  try {
    apply_split_opt(opt, append);
    tc_layout(ast, tc, tc_ranges, target);
  } catch (const KernelOptError&) {
    *this = std::move(before);
    throw;
  }
}

void Scheduler::apply_split_opt(const Opt& opt, bool append) {
  if (opt.op == OptOps::NOLOCALS) {
    for (auto at : axis_types())
      check(at != AxisType::WARP && at != AxisType::LOCAL && at != AxisType::GROUP_REDUCE, "no locals can't have locals");
    if (append) applied_opts.push_back(opt);
    dont_use_locals = true;
    return;
  }
  if (opt.op == OptOps::SWAP) {
    // swaps two GLOBAL axes' ids (their places in the launch dims and the name), each keeping its size
    auto rs = rngs();
    check(opt.axis >= 0 && opt.axis < static_cast<int>(rs.size()) && opt.arg >= 0 && opt.arg < static_cast<int64_t>(rs.size()),
          "invalid swap axes");
    const UOpRef& a = rs[opt.axis];
    const UOpRef& b = rs[opt.arg];
    check(range_type(a) == AxisType::GLOBAL && range_type(b) == AxisType::GLOBAL, "swap only for globals");
    // tagged first so neither replacement is taken for the other range, then untagged
    constexpr int64_t kSwapTag = 0x5a17;
    std::unordered_map<const UOp*, UOpRef> map{
        {a.get(), UOp::make(Ops::RANGE, a->dtype, a->src, RangeArg{range_id(b), AxisType::GLOBAL}, kSwapTag)},
        {b.get(), UOp::make(Ops::RANGE, b->dtype, b->src, RangeArg{range_id(a), AxisType::GLOBAL}, kSwapTag)}};
    ast = substitute_traced(ast, map, "swap (" + std::to_string(range_id(a)) + ",) (" + std::to_string(range_id(b)) + ",)");
    std::unordered_map<const UOp*, UOpRef> untag;
    for (auto& u : ast->toposort())
      if (u->op == Ops::RANGE && u->tag == kSwapTag) untag[u.get()] = u->with_tag(-1);
    ast = substitute_traced(ast, untag, "swap remove tags");
    if (append) applied_opts.push_back(opt);
    return;
  }
  static const std::set<OptOps> supported = {OptOps::UPCAST, OptOps::UNROLL, OptOps::LOCAL, OptOps::THREAD,
                                             OptOps::GROUP, OptOps::GROUPTOP};
  check(supported.count(opt.op) > 0, "unsupported opt " + std::string(opt_op_name(opt.op)));
  const bool group = opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP;
  if (opt.op == OptOps::LOCAL || group) check(target.has_local, "locals needed for opt");
  auto rs = rngs();
  int real_axis;
  if (opt.op == OptOps::UNROLL) {
    auto u = unrollable_dims();
    check(opt.axis >= 0 && opt.axis < static_cast<int>(u.size()), "invalid unroll axis");
    real_axis = u[opt.axis];
  } else if (group) {
    auto r = axes_of({AxisType::REDUCE});
    check(opt.axis >= 0 && opt.axis < static_cast<int>(r.size()), "invalid group axis " + std::to_string(opt.axis));
    real_axis = r[opt.axis];
  } else {
    check(opt.axis >= 0 && opt.axis < static_cast<int>(rs.size()), "invalid axis " + std::to_string(opt.axis));
    real_axis = opt.axis;
  }
  UOpRef rng = rs[real_axis];
  int64_t amt = opt.arg;
  if (amt == 0) amt = rng->vmax() + 1;
  AxisType t = range_type(rng);

  auto reds = reduceops();
  // the reference's guard against huge shared buffers: a grouped reduce keeps amt x (upcast, warp, local and group
  // lanes) partials of the reduce's dtype in local memory
  if (!reds.empty() && (group || (group_for_reduces() > 0 && opt.op != OptOps::NOLOCALS && opt.op != OptOps::PADTO))) {
    auto fs = full_shape();
    int64_t upcast_local_sz = 1;
    for (int a : axes_of({AxisType::UPCAST, AxisType::WARP, AxisType::LOCAL, AxisType::GROUP_REDUCE})) upcast_local_sz *= fs[a].value_or(1);
    int64_t smem_sz = amt * upcast_local_sz * reds[0]->dtype->itemsize();
    check(smem_sz <= target.shared_max, "exceeds maximum shared memory size: needs " + std::to_string(smem_sz) + ", max " +
                                            std::to_string(target.shared_max));
  }
  if (!reds.empty() && group) {
    // a group inside another reduce is not supported (the reference's if-contexts)
    for (auto& red : reds) {
      UOps rsrc(red->src.begin() + 1, red->src.end());
      if (!contains(ts::ranges_of(rsrc), rng)) continue;
      for (auto& r : red->ranges()) {
        AxisType rt = range_type(r);
        check(rt != AxisType::REDUCE && rt != AxisType::UNROLL && rt != AxisType::GROUP_REDUCE, "cannot have a GROUP_REDUCE inside another reduce");
      }
      break;
    }
  }

  AxisType new_type = AxisType::UPCAST;
  switch (opt.op) {
    case OptOps::UNROLL:
      check(amt <= 32, "don't unroll more than 32");
      check(t == AxisType::GROUP_REDUCE || t == AxisType::REDUCE, "unroll is for GROUP_REDUCE/REDUCE");
      new_type = AxisType::UNROLL;
      break;
    case OptOps::UPCAST:
      check(amt <= target.max_upcast, "don't upcast more than 16");
      check(t == AxisType::GLOBAL || t == AxisType::LOCAL || t == AxisType::WEAK, "upcast is for GLOBAL/LOCAL/LOOP");
      new_type = AxisType::UPCAST;
      break;
    case OptOps::LOCAL:
      check(!dont_use_locals, "can't use locals");
      check(t == AxisType::GLOBAL || t == AxisType::WEAK, "local is for globals");
      new_type = AxisType::LOCAL;
      break;
    case OptOps::THREAD: {
      check(target.has_threads, "target does not support threads");
      check(amt <= target.global_max[0], "too many threads");
      for (auto at : axis_types()) check(at != AxisType::THREAD, "already threaded");
      check(contains(globalizable_rngs(), rng), "can't apply range to this dim");
      new_type = AxisType::THREAD;
      break;
    }
    default:  // GROUP, GROUPTOP
      check(!dont_use_locals, "can't use locals");
      check(t == AxisType::REDUCE, "group is for reduce");
      new_type = AxisType::GROUP_REDUCE;
      break;
  }
  shift_to(rng, amt, new_type, opt.op == OptOps::GROUPTOP || opt.op == OptOps::THREAD);
  if (append) applied_opts.push_back(opt);
}

std::string Scheduler::colored_name() const {
  std::string name = has_reduce() ? "r" : "E";
  auto rs = rngs();
  auto cs = colors();
  for (size_t i = 0; i < rs.size(); ++i) name += colored("_", "BLACK") + colored(rs[i]->src[0]->render(), cs[i]);
  return name;
}

std::string Scheduler::colored_shape() const {
  std::string out;
  auto rs = rngs();
  auto cs = colors();
  for (size_t i = 0; i < rs.size(); ++i) {
    std::string sz = rs[i]->src[0]->render();
    if (sz.size() < 4) sz.insert(0, 4 - sz.size(), ' ');
    if (i) out += ' ';
    out += colored(sz, cs[i]);
  }
  return out;
}

UOpRef Scheduler::get_optimized_ast(const std::string* name_override) {
  KernelInfo ki;
  ki.colored_name = name_override ? *name_override : colored_name();
  ki.name = ansistrip(ki.colored_name);
  for (auto& o : applied_opts) ki.applied_opts.push_back(o.str());
  if (!tc_ranges.empty()) ki.tensor_core = {tc_index, tc_ranges[0], tc_ranges[1], tc_ranges[2]};
  ast = graph_rewrite(ast, pm_flatten_range(), "flatten range");
  return ast->with_arg(ki);
}

// ---- heuristics ---------------------------------------------------------------------------------
namespace {
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

void hand_coded_optimizations(Scheduler& k, std::optional<int64_t> tc_select) {
  // first the tensor cores (only with one reduce axis): then the M and N axes upcast and the N axis local, if they divide
  if (!k.target.tensor_cores.empty() && option_int("USE_TC", 1) > 0 && k.axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}).size() == 1) {
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
      return;
    }
  }
  // (no images on any target of this engine)
  const bool nolocals = option_int("NOLOCALS", 0) != 0;

  if (matvec(k)) return;

  // are we grouping? (small outputs: each output's reduce is split over 16 lanes of a work-group)
  if (k.target.has_local) {
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
  // no more opt if we are grouping
  if (k.group_for_reduces() > 0) return;

  // small masked (WHERE-gated) output axes are upcast fully
  {
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
  {
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

  // if nothing is upcast and it is easy to, upcast by 4
  {
    auto ud = k.upcastable_dims();
    if (k.upcasted() == 0 && !ud.empty() && *k.full_shape()[ud.back()] % 4 == 0) k.apply_opt({OptOps::UPCAST, ud.back(), 4});
  }

  // local groups: up to 3 LOCAL axes (expanded axes first, then the later axis), 32 (axis 0 only)/16/8/4/3/2 lanes,
  // at most 128 lanes in all
  if (k.target.has_local) {
    if (nolocals) {
      k.apply_opt({OptOps::NOLOCALS, 0, 0});
    } else {
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
  }

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
