#pragma once
// codegen entry point: kernel AST (see program.h) -> named, optimized, linearized and rendered ProgramSpec.
#include "engine/codegen/opt.h"
#include "engine/codegen/program.h"
#include "engine/renderer/renderer.h"

namespace ts {

// Runs the codegen passes (each a traced graph_rewrite, see to_program.cpp) and the renderer's own, and renders with
// `renderer` (a device's: Device::renderer()).
// ProgramSpec.function_name is the kernel symbol NAME; the rendered source also defines the uniform entry
// `void NAME_entry(void** bufs, const long long* vars, int core_id)` (bufs indexed by buffer slot, vars in the
// order of ProgramSpec.vars) which the runtime calls once per core_id in [0, threads).
// `target` is the device's optimizer view (the reference renderer's properties: locals, threads, limits); the
// two-argument form uses the CPU's.
ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer, const OptTarget& target);
ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer);
// The same with `opts` applied in order instead of the hand-coded heuristics (the reference's opts_to_apply: what a
// BEAM search found). An opt that does not apply is a KernelOptError.
ProgramSpec to_program(const UOpRef& kernel_ast, const Renderer& renderer, const OptTarget& target, const std::vector<Opt>& opts);

// The two halves of to_program, for a search that tries many opts on one kernel:
// the kernel AST after the passes before the optimizer ("View Base AST" .. "simplify ranges"), as a Scheduler over
// it with the loops a target with locals makes GLOBAL already converted (the state opts apply to) ...
Scheduler opt_scheduler(const UOpRef& kernel_ast, const OptTarget& target);
UOpRef pre_opt_ast(const UOpRef& kernel_ast);
// ... and the rest of codegen for the optimized AST a Scheduler made (get_optimized_ast): lowering, linearize, render.
ProgramSpec lower_program(const UOpRef& kernel_ast, UOpRef optimized, const Renderer& renderer, const OptTarget& target);

// The entry wrapper's symbol for a program: function_name + "_entry".
std::string entry_symbol(const ProgramSpec& p);

}  // namespace ts
