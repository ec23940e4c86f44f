#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/trace/records.h"
#include "engine/uop/estimates.h"
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
//
// GPU programs (a target with locals, e.g. gpu_opt_target(); the C and LLVM renderers refuse them with an Error that
// names the kernel and the op). The lowered program (ProgramSpec.lowered; linearize.h lists every instruction) has
// the CPU instructions plus:
//   SPECIAL   a launch index: dtype = the program's index dtype (int32; int64 when its index math needs it),
//             src[0] = its size (a CONST; or int math over Variable PARAMs for a symbolic global dim), arg
//             std::string: "gidx0".."gidx2" = the work-group id in dim x/y/z (gl_WorkGroupID[i]), "lidx0".."lidx2" =
//             the lane id in the work-group (gl_LocalInvocationID[i]), "idx0".."idx2" = the global invocation id
//             (gl_GlobalInvocationID[i]; only under NOLOCALS, which has no lidx). Every value is in [0, size). Each
//             SPECIAL is one entry, before its uses and outside every loop; dims without one are 1.
//   BUFFER    work-group local memory: dtype = element dtype (the dtype of the reduce it serves: float32, float16,
//             float64, int32/int64, bool, ...), arg ParamArg{slot 0, 1, .. within the program, size (elements),
//             addrspace LOCAL}, no srcs, before its first use. INDEX(BUFFER, i) with LOAD/STORE reads and writes it as
//             INDEX(PARAM, i) does a buffer; its indices are in bounds by construction. Its contents are undefined
//             when a work-group starts (the interpreter zeroes them). GLSL: `shared T local<slot>[size];`.
//   BARRIER   void, srcs only order it (the LOCAL stores it waits for, or the loop body and loads before a loop's
//             next iteration): all lanes of the work-group wait until every lane reached it, and LOCAL stores made
//             before it are visible to LOCAL loads after it (GLSL: `memoryBarrierShared(); barrier();`). Barriers are
//             always in uniform control flow: loop trip counts never depend on a lane, there is no IF.
//   Gates: an INDEX's optional src[2] (a bool) also carries the GPU's predicates, e.g. a global store that every lane
//   of a group reduce would repeat is gated by CMPEQ(that axis's lane index, 0) (usually CMPEQ(lidx0, 0); ANDed with
//   any gate it had), so one lane stores; a gated-off store is skipped, a gated-off load yields 0 (as on the CPU).
// Launch dims (the reference's ProgramInfo, read as its PYTHON device does; ProgramSpec.global_size/local_size and
// launch_dims()): global_size[i] is the number of WORK-GROUPS in dim i (the size of gidx{i}; not OpenCL's count of
// invocations), local_size[i] the lanes per work-group (the size of lidx{i}); lanes in all = prod(global_size) x
// prod(local_size). local_size is constant per program (LOCAL and GROUP_REDUCE axes have constant sizes; at most
// 128 lanes from the heuristics: LOCAL product <= 128, GROUPTOP 16, mat-vec 8 x 4), so a renderer can put it in
// `layout(local_size_x = .., y, z)`; a symbolic global dim is evaluated per launch by launch_dims(). local_size is
// unset on the CPU path (no launch dims: core_id threads instead) and under NOLOCALS (idx specials): then
// global_size counts invocations, the runtime picks a work-group size and the shader must skip idx{i} >= global_size[i].
// ---------------------------------------------------------------------------------------------------

// which UOp each line of a rendered source renders ({1-based line, uop}, in line order)
using SourceLines = std::vector<std::pair<int, UOpRef>>;
// a renderer's body lines as SourceLines: body line k renders line_uops[k] (nullptr: no UOp) and stands at source
// line body_line + k
inline SourceLines source_lines_of(int body_line, const std::vector<const UOp*>& line_uops) {
  SourceLines out;
  for (size_t k = 0; k < line_uops.size(); ++k)
    if (line_uops[k]) out.emplace_back(body_line + static_cast<int>(k), line_uops[k]->ref());
  return out;
}
// the newlines in s (the lines a renderer wrote so far)
inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A kernel after codegen: what the trace records of it (engine/trace/records.h: name, opts, source, launch dims,
// estimates, AST, source lines), and what running it needs besides.
struct ProgramSpec : trace::ProgramRecord {
  int num_buffers = 0;       // buffer params 0..n-1 of the kernel AST (what the caller passes, by slot)
  std::vector<int> globals;  // the buffer slots the program still uses (x*0 may drop an input)
  std::vector<std::string> vars;  // Variable names, passed after the buffers
  UOpRef lowered;            // the final linearized program (LINEAR of UOps), for the interpreter and traces
};

struct LaunchDims {
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<int64_t, 3>> local_size;
};
// The launch dims of `p` for Variable values `vars` (in the order of ProgramSpec.vars): its SPECIALs' sizes
// evaluated (the reference's ProgramInfo.launch_dims). Defined in linearize.cpp.
LaunchDims launch_dims(const ProgramSpec& p, std::span<const int64_t> vars);
// An int expression of the program (a loop bound, a launch dim) for Variable values `vars` (spec.vars order).
int64_t eval_index_expr(const UOpRef& e, const ProgramSpec& p, std::span<const int64_t> vars);

}  // namespace ts
