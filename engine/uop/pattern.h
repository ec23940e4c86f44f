#pragma once
// Patterns over UOps (in the spirit of the reference's UPat and LLVM's PatternMatch.h): a rule is one pattern and one
// rewrite of what it captured, so each rewrite is its own named rule (the stepper and the trace name exactly which one
// fired). A pattern says which ops and dtypes a node may have, what its sources must match (in order, or in either
// order for a commutative pair: `x + 0` matches 0 + x too), a constant value, the name it is captured under (a name
// bound twice must be the same node: `x + -x`) and a predicate. The rewrite gets every way the pattern matches, in
// order, until it returns a node (as the reference tries each match of a commutative pattern).
#include <array>
#include <functional>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "engine/uop/rewrite.h"

namespace ts {

struct Pat {
  std::vector<Ops> ops;       // empty: any op
  std::vector<DType> dtypes;  // empty: any dtype
  const char* name = nullptr;  // captured under this name (a literal), or not captured
  bool has_value = false;      // a CONST of `value`
  double value = 0;
  bool match_src = false;      // sources must match `src` (their number too)
  std::vector<Pat> src;
  bool commutative = false;    // two sources, matched in either order
  std::function<bool(const UOp&)> where;  // and this holds (such_that adds to it)

  // any node, captured as `name`
  static Pat var(const char* name) {
    Pat p;
    p.name = name;
    return p;
  }
  // any CONST, captured as `name`
  static Pat cvar(const char* name) {
    Pat p;
    p.ops = {Ops::CONST};
    p.name = name;
    return p;
  }
  // a CONST of value v (in any dtype: 0 matches 0, 0.0 and false)
  static Pat cnst(double v) {
    Pat p;
    p.has_value = true;
    p.value = v;
    return p;
  }
  // a node of op `o` whose sources match `src` in order
  static Pat op(Ops o, std::vector<Pat> src) {
    Pat p;
    p.ops = {o};
    p.match_src = true;
    p.src = std::move(src);
    return p;
  }
  // the same with the two sources in either order
  static Pat commute(Ops o, Pat a, Pat b) {
    Pat p = op(o, {std::move(a), std::move(b)});
    p.commutative = true;
    return p;
  }
  Pat named(const char* n) && {
    name = n;
    return std::move(*this);
  }
  Pat of(std::initializer_list<DType> d) && {
    dtypes = d;
    return std::move(*this);
  }
  // and f holds too (after any predicate the pattern has)
  Pat such_that(std::function<bool(const UOp&)> f) && {
    if (where) where = [first = std::move(where), then = std::move(f)](const UOp& u) { return first(u) && then(u); };
    else where = std::move(f);
    return std::move(*this);
  }
};

// the arithmetic spellings of op(): + * ^ & | max are commutative, as the reference's UPat makes them
inline Pat operator+(Pat a, Pat b) { return Pat::commute(Ops::ADD, std::move(a), std::move(b)); }
inline Pat operator*(Pat a, Pat b) { return Pat::commute(Ops::MUL, std::move(a), std::move(b)); }
inline Pat operator^(Pat a, Pat b) { return Pat::commute(Ops::XOR, std::move(a), std::move(b)); }
inline Pat operator&(Pat a, Pat b) { return Pat::commute(Ops::AND, std::move(a), std::move(b)); }
inline Pat operator|(Pat a, Pat b) { return Pat::commute(Ops::OR, std::move(a), std::move(b)); }
inline Pat pmax(Pat a, Pat b) { return Pat::commute(Ops::MAX, std::move(a), std::move(b)); }
inline Pat operator-(Pat a) { return Pat::op(Ops::NEG, {std::move(a)}); }

// What a match captured: name -> node (at most kMax names a pattern).
class Captures {
 public:
  static constexpr size_t kMax = 8;
  // the node captured as `name` (it must have been: a rule asks only for its pattern's names)
  UOpRef operator[](std::string_view name) const;
  const UOp* get(std::string_view name) const;  // nullptr if not captured
  size_t size() const { return n_; }
  // binds name to u; false when the name is bound to another node (or there is no room)
  bool bind(const char* name, const UOp* u);
  void truncate(size_t n) { n_ = n; }

 private:
  std::array<std::pair<const char*, const UOp*>, kMax> slots_{};
  size_t n_ = 0;
};

// Calls `each` for every way `p` matches `u` (captures filled), in order, until it returns true; true if one did.
bool match_each(const Pat& p, const UOp* u, Captures& c, const std::function<bool()>& each);
// whether `p` matches `u` at all (the first match's captures in c)
bool matches(const Pat& p, const UOp* u, Captures& c);

// A rule from a pattern: `fn(captures, node)` rewrites a match, or returns nullptr to try the next match (and then the
// next rule). It is tried only on the pattern's ops (all ops when it names none).
using PatFn = std::function<UOpRef(const Captures& c, const UOpRef& x)>;
Rule rule(std::string name, Pat pattern, PatFn fn, std::source_location loc = std::source_location::current());

// one table of rules from parts, in order (a part written as a list of rules, another returned by a function)
inline std::vector<Rule> joined(std::initializer_list<std::vector<Rule>> parts) {
  std::vector<Rule> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// the same rule on other ops (a procedural rule whose ops are a computed list: every ALU op, ...)
inline Rule on_ops(std::vector<Ops> ops, Rule r) {
  r.ops = std::move(ops);
  return r;
}

// The analysis of the last node asked about, for rules in a row that each take one outcome of one analysis: the node
// is analysed once, not once a rule. Only for analyses that read nothing but the node; one per call site and thread
// (thread_local); it keeps no node alive.
template <class T>
class LastNode {
 public:
  template <class F>
  const T& get(const UOpRef& x, F&& analyse) {
    if (node_ != x.get() || alive_.expired()) {
      value_ = analyse(x);
      node_ = x.get();
      alive_ = x;
    }
    return value_;
  }

 private:
  const UOp* node_ = nullptr;
  std::weak_ptr<const UOp> alive_;
  T value_{};
};

}  // namespace ts
