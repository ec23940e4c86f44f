// CPU: jam_loops, the innermost loop over outputs run 2 or 4 iterations at a time (more independent accumulator
// chains). No counterpart in the reference.
#include "engine/codegen/cpu/cpu_passes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/codegen/lowering.h"
#include "engine/codegen/lowering_internal.h"
#include "engine/uop/symbolic.h"

namespace ts {

using namespace lowering;

UOpRef jam_loops(const UOpRef& sink, int64_t max_accumulators, int64_t max_strided, int64_t below_id, int64_t* vector_jam) {
  if (vector_jam) *vector_jam = -1;
  const UOp* inner = nullptr;  // the innermost loop over outputs (the highest axis id; WEAK until gpudims makes it a LOOP)
  int64_t upcast = 1, reduce_trip = 1, next_id = 0;
  for (auto& u : sink->toposort()) {
    if (u->op != Ops::RANGE) continue;
    const RangeArg& ra = u->as<RangeArg>();
    next_id = std::max(next_id, ra.id + 1);
    const bool sized = u->src[0]->op == Ops::CONST && !u->src[0]->is<Invalid>();
    if (ra.type == AxisType::UPCAST) upcast *= sized ? u->src[0]->const_int() : 1;
    else if (ra.type == AxisType::REDUCE) reduce_trip *= sized ? u->src[0]->const_int() : 1;
    else if ((ra.type == AxisType::LOOP || ra.type == AxisType::GLOBAL || ra.type == AxisType::WEAK) && sized && (below_id < 0 || ra.id < below_id) &&
             (!inner || ra.id > inner->as<RangeArg>().id))
      inner = u.get();
  }
  if (!inner) return sink;
  // a reduce: only when it reads the loop's index (its chains are then one per iteration) and its loop is long enough
  // that their latency is what bounds it. No reduce (elementwise): only contiguous iterations, at most one 16-wide
  // vector of them, a body small enough to copy four times (an exp's polynomial computed 16 lanes at a time), and a
  // loop long enough to gain more than the bigger program costs to compile
  bool has_reduce = false, feeds_reduce = false;
  size_t body = 0;
  for (auto& u : sink->toposort()) {
    body += group::alu(u->op);
    if (u->op != Ops::REDUCE) continue;
    has_reduce = true;
    for (auto& v : u->toposort()) feeds_reduce |= v.get() == inner;
  }
  if (has_reduce ? !feeds_reduce || reduce_trip < 16 : body > 256 || inner->src[0]->const_int() < 256) return sink;
  // iterations that read memory a few elements apart (a matmul's next columns) share cache lines and vectors: their
  // accumulators are vector lanes, and more of them fit; rows far apart (a row sum's) are separate scalar chains
  int64_t stride = 0;
  for (auto& u : sink->toposort()) {
    if (u->op != Ops::INDEX || !is_global_param(u->src[0])) continue;
    bool uses = false;
    for (auto& v : u->src[1]->toposort()) uses |= v.get() == inner;
    if (!uses) continue;
    int64_t k = INT64_MAX;  // not linear in the loop: far apart
    const LinearTerms lt = linear_terms(u->src[1]);
    for (auto& [t, c] : lt.terms)
      if (t.get() == inner) k = std::abs(c);
    for (auto& [t, c] : lt.terms)
      if (t.get() != inner)
        for (auto& v : t->toposort()) k = v.get() == inner ? INT64_MAX : k;
    stride = std::max(stride, k);
  }
  if (!has_reduce && stride > 16) return sink;
  if (below_id >= 0 && !has_reduce) return sink;
  // (a second loop, jammed after the innermost one: more accumulators of the same vector lanes, whatever its stride)
  const int64_t budget = !has_reduce ? 16 : stride <= 16 || below_id >= 0 ? max_accumulators : max_strided;
  const int64_t size = inner->src[0]->const_int();
  int64_t jam = 1;
  for (int64_t j : {4, 2})
    if (upcast * j <= budget && size % j == 0 && size > j) {
      jam = j;
      break;
    }
  if (jam == 1) return sink;
  if (vector_jam && has_reduce && stride <= 16 && below_id < 0) *vector_jam = inner->as<RangeArg>().id;
  const UOpRef outer = UOp::make(Ops::RANGE, inner->dtype, {uconst_int(inner->src[0]->dtype, size / jam)}, inner->arg, inner->tag);
  const UOpRef lanes = UOp::make(Ops::RANGE, inner->dtype, {uconst_int(inner->src[0]->dtype, jam)}, RangeArg{next_id, AxisType::UPCAST});
  const UOpRef sub = alu(Ops::ADD, alu(Ops::MUL, outer, uconst_int(inner->dtype, jam)), lanes);
  return substitute_traced(sink, {{inner, sub}},
                           "jam loop " + std::to_string(inner->as<RangeArg>().id) + (has_reduce ? " into the reduce: " : ": ") +
                               std::to_string(jam) + " iterations at a time");
}

}  // namespace ts
