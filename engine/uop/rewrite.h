#pragma once
#include <functional>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// The state a pass's rules share, passed by type: a rule written for a context of type T gets a T&, and a table whose
// rules want a T is run only with a T (graph_rewrite checks; a mismatch is an Error naming both types).
class RewriteCtx {
 public:
  RewriteCtx() = default;  // none
  template <class T>
  static RewriteCtx of(T& state) {
    RewriteCtx c;
    c.type_ = &typeid(T);
    c.state_ = const_cast<void*>(static_cast<const void*>(&state));
    return c;
  }
  const std::type_info* type() const { return type_; }
  template <class T>
  T& get() const {
    if (!type_ || *type_ != typeid(T)) throw_mismatch(typeid(T));
    return *static_cast<T*>(state_);
  }

 private:
  [[noreturn]] void throw_mismatch(const std::type_info& wanted) const;
  const std::type_info* type_ = nullptr;
  void* state_ = nullptr;
};

// A rule: its name, where it is written, the ops it applies to (empty = every op), the context type it reads (none:
// nullptr) and the rewrite function, which returns nullptr when it does not apply.
struct Rule {
  using Fn = std::function<UOpRef(const UOpRef& x, const RewriteCtx& ctx)>;
  std::string name;
  std::source_location loc;
  std::vector<Ops> ops;
  Fn fn;
  const std::type_info* ctx_type = nullptr;
};

// a rule that reads only the node
inline Rule rule(std::string name, std::initializer_list<Ops> ops, std::function<UOpRef(const UOpRef&)> fn,
                 std::source_location loc = std::source_location::current()) {
  return Rule{std::move(name), loc, std::vector<Ops>(ops),
              [f = std::move(fn)](const UOpRef& x, const RewriteCtx&) { return f(x); }, nullptr};
}
// a rule that reads (and may update) its pass's context, a Ctx: rule<Ctx>("name", {ops}, [](const UOpRef&, Ctx&) ...)
template <class Ctx>
Rule rule(std::string name, std::initializer_list<Ops> ops, std::function<UOpRef(const UOpRef&, Ctx&)> fn,
          std::source_location loc = std::source_location::current()) {
  return Rule{std::move(name), loc, std::vector<Ops>(ops),
              [f = std::move(fn)](const UOpRef& x, const RewriteCtx& c) { return f(x, c.get<Ctx>()); }, &typeid(Ctx)};
}

namespace detail {
// the parameters of a rule's function: (const UOpRef& x, Ctx& ctx) names the context type Ctx
template <class T>
struct rule_params {};
template <class R, class A, class B>
struct rule_params<R (*)(A, B)> {
  using first = A;
  using ctx = std::remove_reference_t<B>;
};
template <class R, class C, class A, class B>
struct rule_params<R (C::*)(A, B) const> : rule_params<R (*)(A, B)> {};
template <class R, class C, class A, class B>
struct rule_params<R (C::*)(A, B)> : rule_params<R (*)(A, B)> {};
template <class F, class = void>
struct callable_params : rule_params<F> {};  // a function pointer
template <class F>
struct callable_params<F, std::void_t<decltype(&F::operator())>> : rule_params<decltype(&F::operator())> {};  // a lambda
}  // namespace detail

// the same, the context's type read off the function's second parameter: rule("name", {ops}, [](const UOpRef& x, Ctx& c)
// ...), so a typed rule is written as every other (and its row in the source is a rule( call)
template <class F, class Ctx = typename detail::callable_params<F>::ctx,
          std::enable_if_t<std::is_same_v<typename detail::callable_params<F>::first, const UOpRef&> &&
                               !std::is_same_v<std::remove_const_t<Ctx>, UOpRef>,
                           int> = 0>
Rule rule(std::string name, std::initializer_list<Ops> ops, F fn, std::source_location loc = std::source_location::current()) {
  return rule<Ctx>(std::move(name), ops, std::function<UOpRef(const UOpRef&, Ctx&)>(std::move(fn)), loc);
}

class PatternMatcher {
 public:
  PatternMatcher() = default;
  // throws Error when two rules want contexts of different types
  PatternMatcher(std::vector<Rule> rules);
  PatternMatcher operator+(const PatternMatcher& o) const;
  // first rule (in declaration order) returning a different node wins
  UOpRef rewrite(const UOpRef& x, const RewriteCtx& ctx = {}, const Rule** fired = nullptr) const;
  const std::vector<Rule>& rules() const { return rules_; }
  // the context type its rules read (nullptr: none reads one)
  const std::type_info* ctx_type() const { return ctx_type_; }

 private:
  void index();
  std::vector<Rule> rules_;
  // per op (indexed by its value), the rules that may apply to it, in declaration order: those listing the op and
  // those for every op
  std::vector<std::vector<uint32_t>> by_op_;
  const std::type_info* ctx_type_ = nullptr;
};

// Observes every rewrite pass (tracing). Zero cost when none is installed.
struct RewriteListener {
  virtual ~RewriteListener() = default;
  virtual void on_pass_begin(std::string_view name, const UOpRef& root) {}
  virtual void on_match(const UOpRef& before, const UOpRef& after, const Rule& rule) {}
  virtual void on_pass_end(std::string_view name, const UOpRef& result) {}
};
// The listener of the calling thread (nullptr = none).
RewriteListener*& rewrite_listener();

// Results of one context-free matcher kept across graph_rewrite calls: a node rewritten once is not walked again,
// so rewriting a chain that grows one node per call costs the new node, not the whole chain. Only for matchers whose
// rules read nothing but the node (no context): the rewrite of a sub-graph does not depend on where it sits.
// Bounded: emptied when it holds `limit` nodes.
struct RewriteCache {
  explicit RewriteCache(size_t limit) : limit(limit) {}
  void put(const UOpRef& from, const UOpRef& to);
  const UOpRef* find(const UOp* x) const;
  size_t limit;
  std::unordered_map<const UOp*, std::pair<UOpRef, UOpRef>> map;  // node -> (node kept alive, its rewrite)
};

// Rewrites `root` to a fixed point. Default: sources first, then the node (repeated on each replacement).
// bottom_up: the node is matched before its sources (the reference's bottom_up=True).
// node_map: each node walked -> its rewrite. The pass's rules read no context (an Error when one wants one).
UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, std::string_view name, bool bottom_up = false,
                     std::unordered_map<const UOp*, UOpRef>* node_map = nullptr);
// the same with a context of type Ctx for the rules that want one (an Error when a rule wants another type)
UOpRef graph_rewrite_with(const UOpRef& root, const PatternMatcher& pm, const RewriteCtx& ctx, std::string_view name,
                          bool bottom_up = false, std::unordered_map<const UOp*, UOpRef>* node_map = nullptr);
template <class Ctx>
UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, Ctx& ctx, std::string_view name, bool bottom_up = false,
                     std::unordered_map<const UOp*, UOpRef>* node_map = nullptr) {
  return graph_rewrite_with(root, pm, RewriteCtx::of(ctx), name, bottom_up, node_map);
}
// Sources first, with results reused from and added to `cache` (no context, no listener)
UOpRef graph_rewrite_cached(const UOpRef& root, const PatternMatcher& pm, RewriteCache& cache, std::string_view name);
// Replace nodes by identity, everywhere below root.
UOpRef substitute(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map);

}  // namespace ts
