#pragma once
// codegen entry point: kernel AST (see program.h) -> named, optimized, linearized and rendered ProgramSpec.
#include "engine/codegen/opt.h"
#include "engine/codegen/program.h"

namespace ts {

// C: C source (the reference's CLANG renderer), LLVM: textual LLVM IR, GLSL: a Vulkan compute shader, INTERP: no source (the interpreter runs
// ProgramSpec.lowered; src holds the printed instruction list)
enum class Lang { C, LLVM, INTERP, GLSL };

// Runs the codegen passes (each a traced graph_rewrite, see to_program.cpp) and renders for `lang`.
// ProgramSpec.function_name is the kernel symbol NAME; the rendered source also defines the uniform entry
// `void NAME_entry(void** bufs, const long long* vars, int core_id)` (bufs indexed by buffer slot, vars in the
// order of ProgramSpec.vars) which the runtime calls once per core_id in [0, threads).
// `target` is the device's optimizer view (the reference renderer's properties: locals, threads, limits); the
// two-argument form uses the CPU's.
ProgramSpec to_program(const UOpRef& kernel_ast, Lang lang, const OptTarget& target);
ProgramSpec to_program(const UOpRef& kernel_ast, Lang lang);

// The entry wrapper's symbol for a program: function_name + "_entry".
std::string entry_symbol(const ProgramSpec& p);

}  // namespace ts
