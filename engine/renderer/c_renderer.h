#pragma once
// C source for a linearized program, in the style of the reference's CLANG renderer (cstyle.py):
//   void NAME(float* restrict data0_4, float* restrict data1_4, const int data2_) { ... }
// plus the uniform entry the runtime calls:
//   void NAME_entry(void** bufs, const long long* vars, int core_id)
// No libc headers: math uses clang builtins. 16, 8 or 4 float lanes at base+w*m..w*m+w-1 (by the value of their
// indexes) in one block become one vector load/store, like the reference's memory coalescing; clang's SLP vectorizer
// carries the vectors through the arithmetic.
// Deviations from the reference: the vector typedefs are aligned(4), not aligned(16), because buffer views may start
// at any element; SIN and float64 EXP2/LOG2 are __builtin_sinf/__builtin_exp2/... (libm symbols resolved by the JIT
// from the process) instead of its polynomial decomposition (float32 EXP2/LOG2 are decomposed as the reference does).
#include <string>

#include "engine/codegen/program.h"
#include "engine/renderer/renderer.h"

namespace ts {

// renders spec.lowered (a LINEAR, after the renderer's linear passes: it renders their UOps and decides nothing) under
// spec.function_name (and which UOp each line renders, into *lines when given)
std::string render_c(const ProgramSpec& spec, SourceLines* lines = nullptr);

// C spelling of a scalar dtype in kernels ("float", "int", "_Bool", ...)
std::string c_type(DType dt);

// the value an integer CONST holds in its dtype (a constant outside the dtype's range wraps, as a cast of it does:
// int16 -2147483648 is 0)
int64_t int_const_value(const UOp& c);

// The CPU renderers' own passes (CLANG's and LLVM's): the packing passes over the lowered kernel (panels, spread lanes)
// and the schemes over the linearized program (prefetches, vector accesses, transposed accumulations, vector
// accumulators), each traced by its name; their codegen options (PACK, PREFETCH, TRANSPOSE, VECACC) turn them off
UOpRef cpu_lowered_passes(const UOpRef& sink, const OptTarget& target);
UOpRef cpu_linear_passes(const UOpRef& linear);

// the CPU's C renderer (CLANG)
const Renderer& clang_renderer();

}  // namespace ts
