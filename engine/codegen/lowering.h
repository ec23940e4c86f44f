#pragma once
// Rule tables of codegen's lowering passes (kernel AST -> scalar loop program). Each table is one named pass in
// to_program.cpp, defined in the file named after it (simplify.cpp, expander.cpp, reduce.cpp, gpudims.cpp,
// add_loads.cpp, dtypes.cpp, decompositions.cpp, transcendental.cpp, split_ends.cpp, barriers.cpp); the reference's
// counterpart is named in the comment. The CPU-only whole-kernel transforms are declared in cpu/cpu_passes.h.
#include <array>
#include <map>
#include <unordered_map>

#include "engine/codegen/cpu/cpu_passes.h"
#include "engine/uop/rewrite.h"

namespace ts {

// graph_rewrite with a table that replaces the keys of `map` (traced under `name`, like the reference's substitute)
UOpRef substitute_traced(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map, std::string_view name);
// RANGE nodes used by `xs` (not closed below them), sorted by id
std::vector<UOpRef> ranges_of(const UOps& xs);

// REDUCE(ADD/MAX) of a product: factors that do not use the reduce ranges move after it (the reference's
// reduce_mul_chain in sym: (x*2).sum() -> x.sum()*2); a REDUCE over a range of size 0 is its identity
const PatternMatcher& pm_reduce_mul_chain();
// pm_flatten_range: END/REDUCE list exactly the RANGEs their range sources use (a range expression gives its RANGEs, a
// constant goes, the RANGEs in id order once each: a rule a case); END without ranges -> its body
const PatternMatcher& pm_flatten_range();
// pm_simplify_ranges: merge adjacent same-type ranges when that does not add div/mod ("r_6" for a 2x3 sum)
const PatternMatcher& pm_simplify_ranges();
// pm_split_ranges: a range used as `r % c` (c divides its size) is split into two loops; ctx: SplitRangesContext
struct SplitRangesContext {
  std::map<const UOp*, std::pair<UOpRef, int64_t>> split;  // range -> (range, c), first c wins
};
const PatternMatcher& pm_split_ranges();
// postopt extras (with symbolic): size-1 ranges -> 0, flatten ranges, reduce over unused ranges,
// INDEX(p, valid.where(i, Invalid)) -> gated INDEX(p, i, valid), loads under a WHERE gated by it (pm_move_where_on_load)
const PatternMatcher& pm_postopt();
// expander: UPCAST ranges of an END -> one store per lane; UNROLL ranges of a REDUCE -> horizontal chain (scalar)
const PatternMatcher& pm_expander();
// reads of an INDEX -> LOAD(INDEX) (the reference's "add loads")
const PatternMatcher& pm_add_loads();

struct ReduceContext {
  int acc_num = 0;
  int local_num = 0;  // LOCAL buffers made for group reduces
};
// REDUCE over GROUP_REDUCE ranges -> the reference's two-phase group reduce (pm_reduce_local's fix_group_for_reduce):
// each lane reduces its other ranges, stores its partial into a LOCAL BUFFER indexed by (LOCAL ranges, GROUP_REDUCE
// ranges), and a REDUCE over copies of the group ranges (ids + 100, type REDUCE) reads it back (the barrier between
// them is added by pm_implicit_barriers);
// REDUCE over ranges -> DEFINE_ACC + loop body `acc = acc op x` + END; ENDs of the same ranges merged
const PatternMatcher& pm_remove_reduces();

struct OptTarget;
struct GpuDimsContext {
  const OptTarget* target = nullptr;  // null or has_threads: the CPU path (THREAD range -> core_id)
  bool dont_use_locals = false;       // NOLOCALS was applied: idx0.. specials, no lidx
  int threads = 1;
};
// the context for a kernel optimized for `target` (its KernelInfo says whether NOLOCALS was applied)
GpuDimsContext gpu_dims_context(const OptTarget& target, const UOpRef& optimized_sink);
// CPU (has_threads): THREAD range -> core_id Variable (kernel runs once per core_id).
// GPU (the reference's add_gpudims): GLOBAL ranges -> gidx SPECIALs (dims reversed: gidx0 is the last global axis),
// LOCAL/GROUP_REDUCE ranges -> lidx SPECIALs, merged or split to fit global_max/local_max; a global store that
// does not use a local range is gated to that range's lane 0
const PatternMatcher& pm_add_gpudims();
// the reference's get_grouped_dims: one index expression per dim of `dims` over SPECIALs "prefix0".. whose sizes fit
// max_sizes (adjacent dims merged first, else a dim over its max split by its smallest factor into the next);
// reverse: dims are taken last first. Throws Error when they cannot fit.
std::vector<UOpRef> get_grouped_dims(const std::string& prefix, const UOps& dims, const std::array<int64_t, 3>& max_sizes, bool reverse);
// LOCAL memory hazards (the reference's pm_implicit_barriers): a read of a LOCAL buffer ordered after LOCAL stores
// (AFTER) waits on a BARRIER (RAW); a loop body that stores to and loads from a LOCAL buffer ends with a BARRIER
// (WAR, before the next iteration overwrites it)
const PatternMatcher& pm_implicit_barriers();
// weak constants in strongly typed math take that dtype (pm_commit_weak)
const PatternMatcher& pm_commit_weak();
// weakint CONST / RANGE / other nodes -> the index dtype, int32 or int64 (ctx: that DType); weakfloat -> float32
const PatternMatcher& pm_lower_index_dtype();
// FLOORDIV/FLOORMOD of non-negative values by constants: by a power of two a shift / mask, else CDIV / CMOD
const PatternMatcher& pm_early_decompositions();
// MAX -> a<b?b:a, a*(1/b) -> a/b, x*-1 -> NEG, x+NEG y -> SUB, int x*2^k -> SHL, !(a!=b) -> a==b; bfloat16 ALU ops computed in
// float32 and casts to/from bf16 as bit operations (the reference's create_non_native_float_pats + manual bf16 cast)
const PatternMatcher& pm_late_decompositions();
// EXP2 and LOG2 of float32 as the reference's polynomials (xexp2, xlog2; float16 through float32), for the CPU
// renderers, whose builtins are scalar libm calls, and EXP2 for GLSL (lavapipe's is off by up to 3 ulps); SIN of
// float32 as the reference's xsin (a range reduction, then a polynomial; narrower floats through float32), for GLSL,
// whose sin is accurate only near [-pi, pi]. Each op when its flag is set. The interpreter keeps the ops (std::exp2 ...)
const PatternMatcher& pm_transcendental(bool exp2, bool log2, bool sin, bool float64 = false);
// END over several ranges -> nested ENDs, innermost range (by axis order) first; constant gates dropped
const PatternMatcher& pm_split_ends();

// the reduce identity of op for dtype dt
UOpRef reduce_identity(Ops op, DType dt);

}  // namespace ts
