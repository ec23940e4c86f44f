#pragma once
// Reference interpreter of linearized programs (ProgramSpec.lowered): executes the instruction list directly,
// for differential tests against the compiled C / LLVM code. float32 math is done in float.
#include <cstdint>
#include <span>

#include "engine/codegen/program.h"

namespace ts {

// runs the program for every core_id in [0, spec.threads); bufs indexed by buffer slot, vars as spec.vars
void interpret(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars);
// one core_id only
void interpret_core(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, int core_id);

}  // namespace ts
