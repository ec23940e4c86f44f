#pragma once
// Reference interpreter of linearized programs (ProgramSpec.lowered): executes the instruction list directly,
// for differential tests against the compiled C / LLVM code. float32 math is done in float.
#include <cstdint>
#include <span>

#include "engine/codegen/program.h"
#include "engine/runtime/interp/provenance.h"

namespace ts {

//
// GPU programs (SPECIAL, LOCAL BUFFER, BARRIER; see program.h) run as the reference's PYTHON device does: every
// work-group of launch_dims().global_size in turn, each with launch_dims().local_size lanes that see their own
// gidx/lidx values, registers and program counter, and share the group's LOCAL memory (zeroed per work-group,
// bounds-checked like buffers). A lane runs until it reaches a BARRIER; when every lane of the group waits at the
// same barrier they all continue. A lane that finishes while others wait, or lanes waiting at different barriers,
// is an Error "barrier divergence in kernel NAME ...".

// runs the program for every core_id in [0, spec.threads); bufs indexed by buffer slot, vars as spec.vars. With
// `provenance`, what each stored value was computed from is added to it (provenance.h says how values carry it).
void interpret(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, Provenance* provenance = nullptr);
// one core_id only (a GPU program runs its whole grid for core_id 0, nothing for others)
void interpret_core(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, int core_id,
                    Provenance* provenance = nullptr);

}  // namespace ts
