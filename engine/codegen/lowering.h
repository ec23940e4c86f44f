#pragma once
// Rule tables of codegen's lowering passes (kernel AST -> scalar loop program). Each table is one named pass in
// to_program.cpp; the reference's counterpart is named in the comment.
#include <unordered_map>

#include "engine/uop/rewrite.h"

namespace ts {

// graph_rewrite with a table that replaces the keys of `map` (traced under `name`, like the reference's substitute)
UOpRef substitute_traced(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map, std::string_view name);
// RANGE nodes used by `xs` (not closed below them), sorted by id
std::vector<UOpRef> ranges_of(const UOps& xs);

// REDUCE(ADD/MAX) of a product: factors that do not use the reduce ranges move after it (the reference's
// reduce_mul_chain in sym: (x*2).sum() -> x.sum()*2); a REDUCE over a range of size 0 is its identity
const PatternMatcher& pm_reduce_mul_chain();
// pm_flatten_range: END/REDUCE list exactly the RANGEs their range sources use; END without ranges -> its body
const PatternMatcher& pm_flatten_range();
// pm_simplify_ranges: merge adjacent same-type ranges when that does not add div/mod ("r_6" for a 2x3 sum)
const PatternMatcher& pm_simplify_ranges();
// pm_split_ranges: a range used as `r % c` (c divides its size) is split into two loops; ctx: SplitRangesContext
struct SplitRangesContext;
const PatternMatcher& pm_split_ranges();
void* new_split_ranges_context();
void delete_split_ranges_context(void* ctx);
// postopt extras (with symbolic): size-1 ranges -> 0, flatten ranges, reduce over unused ranges,
// INDEX(p, valid.where(i, Invalid)) -> gated INDEX(p, i, valid), loads under a WHERE gated by it (pm_move_where_on_load)
const PatternMatcher& pm_postopt();
// expander: UPCAST ranges of an END -> one store per lane; UNROLL ranges of a REDUCE -> horizontal chain (scalar)
const PatternMatcher& pm_expander();
// reads of an INDEX -> LOAD(INDEX) (the reference's "add loads")
const PatternMatcher& pm_add_loads();

struct ReduceContext {
  int acc_num = 0;
};
// REDUCE over ranges -> DEFINE_ACC + loop body `acc = acc op x` + END; ENDs of the same ranges merged
const PatternMatcher& pm_remove_reduces();

struct GpuDimsContext {
  int threads = 1;
};
// THREAD range -> core_id Variable (kernel runs once per core_id)
const PatternMatcher& pm_add_gpudims();
// weak constants in strongly typed math take that dtype (pm_commit_weak)
const PatternMatcher& pm_commit_weak();
// weakint index math -> int32 (or int64); ctx: DType*
const PatternMatcher& pm_lower_index_dtype();
// FLOORDIV/FLOORMOD of non-negative values by constants -> CDIV/CMOD or shifts/masks
const PatternMatcher& pm_early_decompositions();
// MAX -> a<b?b:a, a*(1/b) -> a/b, x*-1 -> NEG, x+NEG y -> SUB, int x*2^k -> SHL, !(a!=b) -> a==b; bfloat16 ALU ops computed in
// float32 and casts to/from bf16 as bit operations (the reference's create_non_native_float_pats + manual bf16 cast)
const PatternMatcher& pm_late_decompositions();
// END over several ranges -> nested ENDs, innermost range (by axis order) first; constant gates dropped
const PatternMatcher& pm_split_ends();

// the reduce identity of op for dtype dt
UOpRef reduce_identity(Ops op, DType dt);

}  // namespace ts
