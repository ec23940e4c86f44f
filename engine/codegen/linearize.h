#pragma once
// Linearize: the lowered kernel graph -> LINEAR(src = instructions in execution order), plus the reference's
// Estimates over that list. The C/LLVM renderers and the interpreter all consume the same LINEAR.
//
// Instruction set of the list (every entry is a UOp; its srcs refer to earlier entries):
//   PARAM          buffer (AddrSpace GLOBAL, slot) or scalar Variable (AddrSpace ALU, name, slot after buffers;
//                  "core_id" is the thread index)
//   CONST          literal (renderers inline it)
//   RANGE          opens a loop `for (i = 0; i < src[0]; i++)`, arg RangeArg (loop name from the axis letter + id)
//   END(x, r)      closes the loop of RANGE r
//   DEFINE_ACC     accumulator declaration + init: src[0] = identity (other srcs only order it inside loops)
//   INDEX(p, i[, gate])  address p+i (gate: bool, a gated read yields 0, a gated store is skipped)
//   LOAD(INDEX)    memory read; LOAD(AFTER(acc, ...)) reads an accumulator
//   STORE(INDEX, v) memory write; STORE(acc, v) writes an accumulator
//   ALU ops, CAST, BITCAST, WHERE   scalar math (int math is int32 or int64, never weak)
//   GPU programs (see program.h): SPECIAL (launch index), BUFFER (LOCAL memory), BARRIER; a STORE/LOAD through
//   INDEX(BUFFER, i) reads or writes LOCAL memory
// AFTER and GROUP nodes only order things: they are referenced by srcs but are not entries of the list.
#include <string>
#include <string_view>

#include "engine/codegen/program.h"
#include "engine/uop/uop.h"

namespace ts {

// priority topological order that respects loop nesting (each node placed in the loops it depends on, hoisted
// out of the others). Throws Error if the graph has no valid loop structure.
UOpRef linearize(const UOpRef& sink);
// ops (ALU count x trip counts, index math excluded), lds (bytes loaded/stored x trip counts), mem (unique bytes)
Estimates estimate(const UOpRef& linear);
// one line per instruction, like the reference's print_uops
std::string print_linear(const UOpRef& linear);
// an Error naming `kernel`, the op and `renderer` ("C", "LLVM") when the program has SPECIAL, BARRIER or LOCAL memory
void require_cpu_program(const UOpRef& linear, std::string_view renderer, const std::string& kernel);
// ProgramSpec.global_size / local_size from the SPECIALs of p.lowered (Variables at their largest value); local_size
// is set (1s by default) when the target has locals and no idx special is used
void set_launch_dims(ProgramSpec& p, bool has_local);

}  // namespace ts
