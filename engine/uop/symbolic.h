#pragma once
#include <optional>
#include "engine/uop/rewrite.h"

namespace ts {

// Algebraic simplification: constant folding, identities (x+0, x*1, x*0, x-x), index math (div/mod folding
// by bounds, (x//c)*c + x%c -> x), comparisons decided by bounds, where/and on constants.
const PatternMatcher& symbolic();
// REDUCE(ADD) over ranges whose body reads nothing: closed forms (what makes arange an index expression)
const PatternMatcher& reduce_collapse();
// REDUCE(ADD) of a one-hot select over a range reading memory -> a gated read (tensor indexing is a gather); a
// codegen pass, after the scheduler has decided what to realize
const PatternMatcher& load_collapse();
// the rules load_collapse rewrites the part of a sum that depends on its range with (then symbolic's): split sums,
// one-hot gathers, x*bool -> where, range-free terms lifted out of comparisons, masks pushed out of index math
const PatternMatcher& pm_reduce_load_collapse();
// one-shot helper: graph_rewrite(x, symbolic()) without tracing
UOpRef simplify(const UOpRef& x);

// the clauses of an AND chain
UOps split_and(const UOpRef& x);
// uop simplified under the assumption that `valid` holds: each bounded expression of the valid (X < c, X >= c)
// becomes a variable with those bounds, simplified, then put back (the reference's uop_given_valid)
UOpRef uop_given_valid(const UOpRef& valid, UOpRef uop, bool try_simplex = true);
// each clause of an AND chain simplified under the clauses before it, duplicates dropped; nullptr when unchanged
UOpRef simplify_valid(const UOpRef& valid);

// the bounds a valid's clauses (X < c, c < X, !(X < c)) set on their expressions, each expression once in the order
// the clauses name it (a later clause's bound replaces an earlier one's)
struct ValidBound {
  UOpRef expr;
  std::optional<int64_t> lo, hi;
};
std::vector<ValidBound> valid_bounds(const UOpRef& valid);
// python-style floor division of integers
int64_t floor_div(int64_t a, int64_t b);
// x % c of an x known to lie in [lo, hi]: x - k*c when that is one period [k*c, (k+1)*c) (x itself for k = 0), else
// nullptr
UOpRef mod_in_one_period(const UOpRef& x, int64_t c, int64_t lo, int64_t hi);

// a linear decomposition of integer math: sum(coeff_i * term_i) + constant
struct LinearTerms {
  std::vector<std::pair<UOpRef, int64_t>> terms;
  int64_t constant = 0;
};
LinearTerms linear_terms(const UOpRef& x);
UOpRef from_linear_terms(const LinearTerms& lt, DType dt);

}  // namespace ts
