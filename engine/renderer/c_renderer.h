#pragma once
// C source for a linearized program, in the style of the reference's CLANG renderer (cstyle.py):
//   void NAME(float* restrict data0_4, float* restrict data1_4, const int data2_) { ... }
// plus the uniform entry the runtime calls:
//   void NAME_entry(void** bufs, const long long* vars, int core_id)
// No libc headers: math uses clang builtins. Deviation from the reference: EXP2/LOG2/SIN on floats are
// __builtin_exp2f/__builtin_log2f/__builtin_sinf (libm symbols resolved by the JIT from the process) instead of
// the reference's polynomial decomposition; values are scalar (no float4 vectors).
#include <string>

#include "engine/codegen/program.h"

namespace ts {

// renders spec.lowered (a LINEAR) under spec.function_name
std::string render_c(const ProgramSpec& spec);

// C spelling of a scalar dtype in kernels ("float", "int", "_Bool", ...)
std::string c_type(DType dt);

}  // namespace ts
