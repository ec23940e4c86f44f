// dtypes: weak dtypes committed ("decomp dtypes": pm_commit_weak) and the index dtype lowered ("lower all index dtypes":
// pm_lower_index_dtype); the reference's uop/weak.py.
#include "engine/codegen/lowering.h"

#include "engine/codegen/lowering_internal.h"
#include "engine/uop/pattern.h"

namespace ts {

using namespace lowering;

namespace {

// ---- dtypes -------------------------------------------------------------------------------------
UOpRef commit_to(const UOpRef& x, DType dt) {
  if (!is_weak(x->dtype) || is_weak(dt)) return x;
  if (x->op == Ops::CONST) {
    if (x->is<Invalid>()) return x;
    if (is_float(dt)) return uconst(dt, x->const_float());
    if (is_bool(dt)) return uconst_bool(x->const_float() != 0);
    return uconst_int(dt, x->const_int());
  }
  return UOp::make(Ops::CAST, dt, {x});
}
// the strong dtype a weak value takes under a BITCAST to `to`: the int (or float) of the same size
DType bitcast_source_dtype(DType weak, DType to) {
  switch (to->bitsize) {
    case 8: return dtypes::int8;
    case 16: return is_float(weak) ? dtypes::float16 : dtypes::int16;
    case 32: return is_float(weak) ? dtypes::float32 : dtypes::int32;
    default: return is_float(weak) ? dtypes::float64 : dtypes::int64;
  }
}
// a weak constant under a BITCAST (a folded pad value) has the bitcast's size
UOpRef commit_bitcast(const UOpRef& x) {
  if (!is_weak(x->src[0]->dtype) || is_weak(x->dtype)) return nullptr;
  return UOp::make(Ops::BITCAST, x->dtype, {commit_to(x->src[0], bitcast_source_dtype(x->src[0]->dtype, x->dtype))}, x->arg, x->tag);
}
// x with its weak sources from..to-1 committed to dt; nullptr when none is weak
UOpRef commit_srcs(const UOpRef& x, size_t from, size_t to, DType dt) {
  UOps ns = x->src;
  bool same = true;
  for (size_t i = from; i < to && i < ns.size(); ++i) {
    ns[i] = commit_to(ns[i], dt);
    same = same && ns[i] == x->src[i];
  }
  return same ? nullptr : UOp::make(x->op, x->dtype, ns, x->arg, x->tag);
}
// x of dtype `from` as the same node of dtype `to` (nullptr for another dtype)
UOpRef retype(const UOpRef& x, DType from, DType to) {
  return x->dtype == from ? UOp::make(x->op, to, x->src, x->arg, x->tag) : nullptr;
}
bool is_other_op(Ops o) { return o != Ops::CONST && o != Ops::RANGE; }
__int128 dtype_lo(DType d) { return is_unsigned(d) ? 0 : -(static_cast<__int128>(1) << (d->bitsize - 1)); }
__int128 dtype_hi(DType d) { return is_unsigned(d) ? (static_cast<__int128>(1) << d->bitsize) - 1 : (static_cast<__int128>(1) << (d->bitsize - 1)) - 1; }
// an int constant of a strong dtype whose stored value is one of the dtype's (a uint64 above 2^63 is stored negative: taken as in range)
bool in_dtype_range(const UOpRef& c) {
  if (c->is<Invalid>() || !is_int(c->dtype) || is_weak(c->dtype)) return false;
  if (c->dtype->bitsize == 64) return true;
  return c->const_int() >= dtype_lo(c->dtype) && c->const_int() <= dtype_hi(c->dtype);
}
// a weak integer constant keeps its mathematical value when it meets an integer of a strong dtype (the reference's
// commit_weak: "the value stays mathematical, emission truncates"), so a comparison with a value whose bounds are its
// dtype's whole range (a read, a reduce, a cast) is decided when the constant lies outside that range: the
// reference's bounds fold (uop/symbolic.py:257, CMPLT/CMPNE with vmin == vmax) takes it, u8 < -4 is False.
// The reference's bounds of v (uop/ops.py:_min_max) lie inside v's dtype range: a read, a reduce, a cast, a bitwise op
// (its default), a MAX or WHERE of such values; arithmetic (ADD, MUL, shifts) has mathematical, unwrapped bounds
bool bounded_by_dtype(const UOpRef& v) {
  switch (v->op) {
    case Ops::CONST: return in_dtype_range(v);
    case Ops::CAST: case Ops::BITCAST: case Ops::XOR: case Ops::OR: case Ops::AND: return true;
    case Ops::MAX: return bounded_by_dtype(v->src[0]) && bounded_by_dtype(v->src[1]);
    case Ops::WHERE: return bounded_by_dtype(v->src[1]) && bounded_by_dtype(v->src[2]);
    default: return !group::alu(v->op);
  }
}
UOpRef compare_out_of_range(const UOpRef& x, size_t weak_i) {
  const UOpRef &c = x->src[weak_i], &v = x->src[1 - weak_i];
  if (c->op != Ops::CONST || c->is<Invalid>() || c->dtype != dtypes::weakint || !is_int(v->dtype) || is_weak(v->dtype)) return nullptr;
  if (v->op == Ops::CONST || !bounded_by_dtype(v)) return nullptr;
  const __int128 val = c->const_int();
  if (val >= dtype_lo(v->dtype) && val <= dtype_hi(v->dtype)) return nullptr;
  const bool below = val < dtype_lo(v->dtype);  // the constant is below every value (else above every value)
  switch (x->op) {
    case Ops::CMPNE: return uconst_bool(true);
    case Ops::CMPEQ: return uconst_bool(false);
    default: return uconst_bool(weak_i == 1 ? !below : below);  // v < c, or c < v
  }
}

}  // namespace

const PatternMatcher& pm_commit_weak() {
  static const PatternMatcher pm({
      rule("BITCAST(weak x) -> BITCAST(x in the int/float of its size)", {Ops::BITCAST}, [](const UOpRef& x) { return commit_bitcast(x); }),
      rule("STORE(p, weak v) -> STORE(p, v in p's dtype)", {Ops::STORE}, [](const UOpRef& x) { return commit_srcs(x, 1, 2, x->src[0]->dtype); }),
      rule("DEFINE_ACC(weak init) -> DEFINE_ACC(init in the acc's dtype)", {Ops::DEFINE_ACC},
           [](const UOpRef& x) { return commit_srcs(x, 0, 1, x->dtype); }),
      rule("weak a cmp b -> a in b's dtype cmp b", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        if (!is_weak(x->src[0]->dtype) || is_weak(x->src[1]->dtype)) return nullptr;
        if (UOpRef r = compare_out_of_range(x, 0)) return r;
        return commit_srcs(x, 0, 1, x->src[1]->dtype);
      }),
      rule("a cmp weak b -> a cmp b in a's dtype", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        if (is_weak(x->src[0]->dtype) || !is_weak(x->src[1]->dtype)) return nullptr;
        if (UOpRef r = compare_out_of_range(x, 1)) return r;
        return commit_srcs(x, 1, 2, x->src[0]->dtype);
      }),
      rule("c.where(weak a, weak b) -> c.where(a, b in the WHERE's dtype)", {Ops::WHERE},
           [](const UOpRef& x) { return commit_srcs(x, 1, x->src.size(), x->dtype); }),
      on_ops(group::ops_where(is_typed_math_op), rule("f(weak x) -> f(x in f's dtype) (typed math)", {}, [](const UOpRef& x) -> UOpRef {
               return is_weak(x->dtype) || is_bool(x->dtype) ? nullptr : commit_srcs(x, 0, x->src.size(), x->dtype);
             })),
  });
  return pm;
}

const PatternMatcher& pm_lower_index_dtype() {
  static const PatternMatcher pm({
      rule("weakint CONST -> CONST of the index dtype", {Ops::CONST}, [](const UOpRef& x, DType& idx) { return retype(x, dtypes::weakint, idx); }),
      rule("weakint RANGE -> RANGE of the index dtype", {Ops::RANGE}, [](const UOpRef& x, DType& idx) { return retype(x, dtypes::weakint, idx); }),
      on_ops(group::ops_where(is_other_op), rule("weakint x -> x in the index dtype", {}, [](const UOpRef& x, DType& idx) {
               return retype(x, dtypes::weakint, idx);
             })),
      rule("weakfloat CONST -> float32 CONST", Pat::cvar("c").of({dtypes::weakfloat}),
           [](const Captures& c, const UOpRef&) { return uconst(dtypes::float32, c["c"]->const_float()); }),
      rule("weakfloat x -> x in float32", {}, [](const UOpRef& x) { return retype(x, dtypes::weakfloat, dtypes::float32); }),
  });
  return pm;
}

}  // namespace ts
