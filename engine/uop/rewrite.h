#pragma once
#include <functional>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// A rule: its name, where it is written, the ops it applies to (empty = every op), and the rewrite function,
// which returns nullptr when it does not apply.
struct Rule {
  using Fn = std::function<UOpRef(const UOpRef& x, void* ctx)>;
  std::string name;
  std::source_location loc;
  std::vector<Ops> ops;
  Fn fn;
};

inline Rule rule(std::string name, std::initializer_list<Ops> ops, Rule::Fn fn,
                 std::source_location loc = std::source_location::current()) {
  return Rule{std::move(name), loc, std::vector<Ops>(ops), std::move(fn)};
}

class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<Rule> rules);
  PatternMatcher operator+(const PatternMatcher& o) const;
  // first rule (in declaration order) returning a different node wins
  UOpRef rewrite(const UOpRef& x, void* ctx, const Rule** fired = nullptr) const;
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  void index();
  std::vector<Rule> rules_;
  std::unordered_map<int, std::vector<size_t>> by_op_;
  std::vector<size_t> any_op_;
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
// rules read nothing but the node (ctx nullptr): the rewrite of a sub-graph does not depend on where it sits.
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
UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, void* ctx, std::string_view name, bool bottom_up = false,
                     std::unordered_map<const UOp*, UOpRef>* node_map = nullptr);  // node_map: each node walked -> its rewrite
// Sources first, with results reused from and added to `cache` (ctx nullptr, no listener)
UOpRef graph_rewrite_cached(const UOpRef& root, const PatternMatcher& pm, RewriteCache& cache, std::string_view name);
// Replace nodes by identity, everywhere below root.
UOpRef substitute(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& map);

}  // namespace ts
