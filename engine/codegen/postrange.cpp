// postrange: the Scheduler, the kernel AST plus the opts applied to it by splitting its ranges (shift_to, apply_opt,
// the tensor core opt, the kernel name); the reference's codegen/opt/postrange.py.
#include "engine/codegen/opt.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "engine/codegen/lowering.h"
#include "engine/codegen/opt_internal.h"
#include "engine/codegen/tensor_core.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace opt_detail;

namespace {
AxisType range_type(const UOpRef& r) { return r->as<RangeArg>().type; }
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

}  // namespace ts
