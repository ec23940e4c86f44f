#pragma once
// C source for a linearized program, in the style of the reference's CLANG renderer (cstyle.py):
//   void NAME(float* restrict data0_4, float* restrict data1_4, const int data2_) { ... }
// plus the uniform entry the runtime calls:
//   void NAME_entry(void** bufs, const long long* vars, int core_id)
// No libc headers: math uses clang builtins. Four float lanes at base+4m..4m+3 (base provably a multiple of 4)
// in one block become one float4 load/store, like the reference's memory coalescing.
// Deviations from the reference: EXP2/LOG2/SIN on floats are __builtin_exp2f/__builtin_log2f/__builtin_sinf (libm
// symbols resolved by the JIT from the process) instead of its polynomial decomposition (so estimates.ops of
// softmax-like kernels are smaller); the float4 typedef is aligned(4), not aligned(16), because buffer views may
// start at any element; other math is scalar (no vector ALU).
#include <string>

#include "engine/codegen/program.h"

namespace ts {

// renders spec.lowered (a LINEAR) under spec.function_name
// (and which UOp each line renders, into *lines when given)
std::string render_c(const ProgramSpec& spec, SourceLines* lines = nullptr);

// C spelling of a scalar dtype in kernels ("float", "int", "_Bool", ...)
std::string c_type(DType dt);

// the value an integer CONST holds in its dtype (a constant outside the dtype's range wraps, as a cast of it does:
// int16 -2147483648 is 0)
int64_t int_const_value(const UOp& c);

}  // namespace ts
