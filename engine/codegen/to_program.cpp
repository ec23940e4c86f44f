// codegen: the kernel AST goes through a straight list of named passes (names as the reference's VIZ steps where
// there is a counterpart), then linearize, estimates and render.
#include "engine/codegen/to_program.h"

#include <memory>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "engine/codegen/linearize.h"
#include "engine/codegen/lowering.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/tensor_core.h"
#include "engine/uop/error.h"
#include "engine/uop/symbolic.h"

namespace ts {

namespace {

// Variables get slots after the buffers, ordered by name; core_id (the thread index) goes last.
struct ParamNumbering {
  std::map<std::string, int64_t> slot;
};
const PatternMatcher& pm_number_params() {
  static const PatternMatcher pm({rule("number Variable params after the buffers", {Ops::PARAM}, [](const UOpRef& x, ParamNumbering& ctx) -> UOpRef {
    const ParamArg& pa = x->as<ParamArg>();
    if (pa.addrspace != AddrSpace::ALU) return nullptr;
    auto& m = ctx.slot;
    auto it = m.find(pa.name);
    if (it == m.end() || it->second == pa.slot) return nullptr;
    ParamArg na = pa;
    na.slot = it->second;
    return UOp::make(Ops::PARAM, x->dtype, x->src, na, x->tag);
  })});
  return pm;
}

// one pass with nothing to rewrite: a snapshot for the trace (the reference's "View ..." steps)
UOpRef view(const UOpRef& sink, std::string_view name) {
  static const PatternMatcher none(std::vector<Rule>{});
  return graph_rewrite(sink, none, name);
}

DType index_dtype_for(const UOpRef& sink) {
  for (auto& u : sink->toposort()) {
    if (u->dtype != dtypes::weakint || u->op == Ops::CONST) continue;
    if (u->vmax() > INT32_MAX || u->vmin() < INT32_MIN) return dtypes::int64;
  }
  return dtypes::int32;
}

}  // namespace

std::string entry_symbol(const ProgramSpec& p) { return p.function_name + "_entry"; }

ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer) { return to_program(kernel_ast, renderer, cpu_opt_target()); }

UOpRef pre_opt_ast(const UOpRef& kernel_ast) {
  if (kernel_ast->op != Ops::SINK) throw Error("to_program: the kernel AST must be a SINK, got " + std::string(op_name(kernel_ast->op)));
  UOpRef sink = view(kernel_ast, "View Base AST");

  // optimization
  sink = graph_rewrite(sink, load_collapse(), "load collapse");
  {
    SplitRangesContext split_ctx;
    sink = graph_rewrite(sink, pm_split_ranges(), split_ctx, "split ranges");
  }
  static const PatternMatcher initial = symbolic() + reduce_collapse() + pm_reduce_mul_chain();
  sink = graph_rewrite(sink, initial, "initial symbolic");
  return graph_rewrite(sink, pm_simplify_ranges(), "simplify ranges");
}

Scheduler opt_scheduler(const UOpRef& kernel_ast, const OptTarget& target) {
  Scheduler k(pre_opt_ast(kernel_ast), target);
  k.convert_loop_to_global();
  return k;
}

ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer, const OptTarget& target) {
  return lower_program(kernel_ast, apply_opts(pre_opt_ast(kernel_ast), target), renderer, target);
}

ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer, const OptTarget& target, const std::vector<Opt>& opts) {
  Scheduler k = opt_scheduler(kernel_ast, target);
  for (const Opt& o : opts) k.apply_opt(o);
  return lower_program(kernel_ast, k.get_optimized_ast(), renderer, target);
}

ProgramSpec lower_program(const UOpRef& kernel_ast, UOpRef sink, const Renderer& renderer, const OptTarget& target) {
  const KernelInfo info = sink->as<KernelInfo>();
  if (!info.tensor_core.empty()) {
    const int64_t i = info.tensor_core[0];
    if (i < 0 || i >= static_cast<int64_t>(target.tensor_cores.size())) throw Error("kernel " + info.name + ": no tensor core " + std::to_string(i) + " on this target");
    const std::vector<int64_t> ids(info.tensor_core.begin() + 1, info.tensor_core.end());
    return lower_tensor_core_program(kernel_ast, sink, tc_layout(sink, target.tensor_cores[i], ids, target), renderer);
  }
  // an fp32 matmul whose lanes share tiles: lowered as any other (every pass in the trace), then rendered staged
  std::optional<TcLayout> staged;
  if (target.stage_matmul && codegen_option("STAGE_MATMUL", 1) != 0) {
    try {
      staged = staged_matmul_layout(sink, target);
    } catch (const KernelOptError&) {
      // not such a kernel
    }
  }
  // (held only for a staged kernel: a uop kept alive is reused by the passes below, which renumbers other kernels' traces)
  const UOpRef optimized = staged ? sink : nullptr;
  static const PatternMatcher postopt = symbolic() + pm_reduce_mul_chain() + pm_postopt();
  sink = graph_rewrite(sink, postopt, "postopt symbolic");
  // (JAM=0 keeps the loops as the opts made them; JAM2=0 jams one loop at most)
  if (target.has_threads && codegen_option("JAM", 1) != 0) {
    int64_t lanes_of = -1;
    sink = jam_loops(sink, 64, 16, -1, &lanes_of);
    if (lanes_of >= 0 && codegen_option("JAM2", 1) != 0) sink = jam_loops(sink, 64, 16, lanes_of);
  }

  // lowering to a scalar loop program
  sink = graph_rewrite(sink, pm_expander(), "expander");
  ReduceContext rctx;
  sink = graph_rewrite(sink, pm_remove_reduces(), rctx, "remove reduces");
  GpuDimsContext gctx = gpu_dims_context(target, sink);
  sink = graph_rewrite(sink, pm_add_gpudims(), gctx, "add gpudims");
  sink = graph_rewrite(sink, pm_add_loads(), "*** expand broadcast / add loads");
  static const PatternMatcher early = symbolic() + pm_flatten_range();
  sink = graph_rewrite(sink, early, "early symbolic");
  sink = graph_rewrite(sink, pm_commit_weak(), "decomp dtypes");
  DType idx_dt = index_dtype_for(sink);
  sink = graph_rewrite(sink, pm_lower_index_dtype(), idx_dt, "lower all index dtypes");
  sink = graph_rewrite(sink, symbolic(), "final symbolic");
  sink = renderer.lowered_passes(sink, target);
  sink = graph_rewrite(sink, pm_early_decompositions(), "early decompositions");
  if (const Renderer::Transcendentals t = renderer.decomposed_transcendentals(); t.exp2 || t.log2 || t.sin || t.float64)
    sink = graph_rewrite(sink, pm_transcendental(t.exp2, t.log2, t.sin, t.float64), "transcendental decompositions");
  sink = graph_rewrite(sink, pm_late_decompositions(), "late decompositions");
  sink = graph_rewrite(sink, pm_split_ends(), "final rewrite");
  // LOCAL memory exists only on targets with locals (the CPU's pass list stays as it was)
  if (target.has_local) sink = graph_rewrite(sink, pm_implicit_barriers(), "add implicit barriers");

  // params: buffers keep their slots; Variables follow
  ProgramSpec spec;
  int64_t num_buffers = 0;
  std::set<int64_t> globals;
  for (auto& u : kernel_ast->toposort())
    if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace != AddrSpace::ALU) num_buffers = std::max(num_buffers, u->as<ParamArg>().slot + 1);
  std::set<std::string> var_names;
  bool has_core_id = false;
  for (auto& u : sink->toposort()) {
    if (u->op != Ops::PARAM) continue;
    const ParamArg& pa = u->as<ParamArg>();
    if (pa.addrspace != AddrSpace::ALU) globals.insert(pa.slot);
    else if (pa.name == "core_id") has_core_id = true;
    else var_names.insert(pa.name);
  }
  ParamNumbering numbering;
  int64_t next = num_buffers;
  for (auto& v : var_names) {
    numbering.slot[v] = next++;
    spec.vars.push_back(v);
  }
  if (has_core_id) numbering.slot["core_id"] = next++;
  sink = graph_rewrite(sink, pm_number_params(), numbering, "number params with -1");
  sink = view(sink, "View Output AST");

  UOpRef lin = linearize(sink);

  spec.name = info.name;
  spec.colored_name = info.colored_name;
  spec.function_name = to_function_name(info.colored_name);
  spec.applied_opts = info.applied_opts;
  spec.num_buffers = static_cast<int>(num_buffers);
  spec.globals.assign(globals.begin(), globals.end());
  std::set<int> outs, ins;
  for (auto& u : lin->src) {
    if (!(u->op == Ops::STORE || u->op == Ops::LOAD) || u->src[0]->op != Ops::INDEX || u->src[0]->src[0]->op != Ops::PARAM) continue;
    if (u->op == Ops::STORE) outs.insert(static_cast<int>(u->src[0]->src[0]->as<ParamArg>().slot));
    else ins.insert(static_cast<int>(u->src[0]->src[0]->as<ParamArg>().slot));
  }
  spec.outs.assign(outs.begin(), outs.end());
  spec.ins.assign(ins.begin(), ins.end());
  spec.threads = gctx.threads;
  spec.global_size = {gctx.threads, 1, 1};
  spec.lowered = lin;
  set_launch_dims(spec, target.has_local);
  spec.estimates = estimate(lin);
  spec.ast = kernel_ast;
  spec.lowered = lin;
  spec.lang = renderer.lang();
  spec.lowered = renderer.linear_passes(spec.lowered, target);  // (the outs, ins and estimates above read the linearized list)
  if (staged) {
    // the staged program takes the lowered one's place where it launches the same (it always should: both take the
    // reference's launch dims); its LINEAR list, one CUSTOM saying what the shader does, is the trace's last pass
    ProgramSpec st = lower_tensor_core_program(kernel_ast, optimized, *staged, renderer);
    if (st.global_size == spec.global_size && st.local_size == spec.local_size) {
      st.lowered = view(st.lowered, "stage the matmul's tiles in shared memory");
      return st;
    }
  }
  renderer.render(spec);
  return spec;
}

}  // namespace ts
