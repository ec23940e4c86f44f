#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// ---------------------------------------------------------------------------------------------------
// Kernel AST: what the scheduler hands to codegen (one per kernel; the reference's "kernel AST").
//
//   SINK(arg=KernelInfo{}) of exactly one store:
//     END(STORE(INDEX(PARAM0, idx), value), r_a, r_b, ...)      -- END closes the output ranges
//     STORE(INDEX(PARAM0, idx), value)                           -- when the kernel has no output ranges
//   PARAM        dtype = element dtype, arg ParamArg{slot, size (elements), device}; slot 0 is the output,
//                inputs follow in first-use order. Variables: PARAM in AddrSpace::ALU with a name and bounds.
//   RANGE        dtype weakint, src[0] = CONST size, arg RangeArg{id, WEAK (output loop) | REDUCE}; ids from 0
//   INDEX(PARAM, idx)  a read of PARAM[idx] when used as a value; the store target as STORE's src[0].
//                idx is weakint math over RANGE / CONST / Variable PARAMs (ADD MUL FLOORDIV FLOORMOD ...)
//   REDUCE(value, r...) arg ReduceArg{op in ADD|MUL|MAX, n=0}: reduces value over the listed REDUCE ranges
//   WHERE(valid, x, y)  a gate: an INDEX under a false gate must not be read (masks from PAD)
//   value math: ALU ops (ADD MUL MAX NEG RECIPROCAL EXP2 LOG2 SIN SQRT TRUNC CMPLT CMPNE XOR OR AND
//                SHL SHR FLOORDIV FLOORMOD CDIV CMOD WHERE POW), CAST, BITCAST, CONST (may be weakint /
//                weakfloat: commit to the strong dtype of the expression they appear in).
//
// Semantics every backend implements alike (C, LLVM IR, the interpreter), so none depends on undefined behaviour:
//   ints wrap at their dtype's width after every op (C: -fwrapv, narrow results cast back); an int CONST holds its
//   value wrapped to its dtype. x/0, x%0 (CDIV, CMOD, FLOORDIV, FLOORMOD) are 0; MIN/-1 is MIN, MIN%-1 is 0 (the
//   reference's CPU results for constant divisors; its idiv traps on run-time ones). SHL/SHR by a count outside
//   [0, bits) (negative included) give 0 / the sign fill (x86 vector shifts). float -> int: int32/int64 take the
//   truncated value when it fits, else INT_MIN; 8/16-bit ints go through int32 and keep the low bits; uint32/uint64
//   take the value when it fits, else all ones (x86-64 with AVX-512, the reference's CPU device); NaN included.
//   half math rounds after every op; bfloat16 math runs in float32 with round-to-nearest-even conversions;
//   float64 -> half rounds through float32. A computed NaN's sign and payload are not specified.
// ---------------------------------------------------------------------------------------------------

struct Estimates {
  double ops = 0, lds = 0, mem = 0;
};

// A kernel after codegen: named, rendered, with everything the runtime needs to launch it.
struct ProgramSpec {
  std::string name;          // "r_8_16_2_4_4_16_4" (no colors)
  std::string colored_name;  // with ANSI colors as the reference prints it
  std::string function_name; // C identifier
  std::vector<std::string> applied_opts;  // "Opt(op=OptOps.UPCAST, axis=0, arg=4)"
  std::string src;           // rendered source for the chosen renderer (C or LLVM IR)
  std::string lang;          // "c" | "llvm" | "interp" | "glsl"
  int num_buffers = 0;       // buffer params 0..n-1 of the kernel AST (what the caller passes, by slot)
  std::vector<int> globals;  // the buffer slots the program still uses (x*0 may drop an input)
  std::vector<int> outs, ins;
  std::vector<std::string> vars;  // Variable names, passed after the buffers
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::array<int64_t, 3> local_size{1, 1, 1};  // work-group size (GPU devices)
  int threads = 1;           // CPU THREAD axis (core_id 0..threads-1)
  Estimates estimates;
  UOpRef ast;                // the kernel AST it came from
  UOpRef lowered;            // the final linearized program (LINEAR of UOps), for the interpreter and traces
};

}  // namespace ts
