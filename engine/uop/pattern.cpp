#include "engine/uop/pattern.h"

#include <algorithm>
#include <cstring>

#include "engine/uop/error.h"

namespace ts {

const UOp* Captures::get(std::string_view name) const {
  for (size_t i = 0; i < n_; ++i)
    if (name == slots_[i].first) return slots_[i].second;
  return nullptr;
}

UOpRef Captures::operator[](std::string_view name) const {
  const UOp* u = get(name);
  if (!u) throw Error("pattern: nothing was captured as '" + std::string(name) + "'");
  return u->ref();
}

bool Captures::bind(const char* name, const UOp* u) {
  for (size_t i = 0; i < n_; ++i)
    if (std::strcmp(name, slots_[i].first) == 0) return slots_[i].second == u;
  if (n_ == kMax) return false;
  slots_[n_++] = {name, u};
  return true;
}

namespace {

// the node's own tests (not its sources)
bool node_matches(const Pat& p, const UOp* u) {
  if (!p.ops.empty() && std::find(p.ops.begin(), p.ops.end(), u->op) == p.ops.end()) return false;
  if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), u->dtype) == p.dtypes.end()) return false;
  if (p.has_value && !u->is_const_value(p.value)) return false;
  return !p.where || p.where(*u);
}

// matches the sources pats[k..] against srcs[order[k]..], then calls `each`
bool match_srcs(const std::vector<Pat>& pats, const std::vector<UOpRef>& srcs, const std::array<int, 2>* order, size_t k,
                Captures& c, const std::function<bool()>& each) {
  if (k == pats.size()) return each();
  const UOp* s = srcs[order ? (*order)[k] : k].get();
  return match_each(pats[k], s, c, [&] { return match_srcs(pats, srcs, order, k + 1, c, each); });
}

}  // namespace

bool match_each(const Pat& p, const UOp* u, Captures& c, const std::function<bool()>& each) {
  if (!node_matches(p, u)) return false;
  const size_t mark = c.size();
  if (p.name && !c.bind(p.name, u)) return false;
  bool done = false;
  if (!p.match_src) {
    done = each();
  } else if (u->src.size() == p.src.size()) {
    const size_t bound = c.size();
    done = match_srcs(p.src, u->src, nullptr, 0, c, each);
    if (!done && p.commutative && p.src.size() == 2) {
      c.truncate(bound);
      static constexpr std::array<int, 2> kSwapped{1, 0};
      done = match_srcs(p.src, u->src, &kSwapped, 0, c, each);
    }
  }
  if (!done) c.truncate(mark);
  return done;
}

bool matches(const Pat& p, const UOp* u, Captures& c) {
  return match_each(p, u, c, [] { return true; });
}

Rule rule(std::string name, Pat pattern, PatFn fn, std::source_location loc) {
  std::vector<Ops> ops = pattern.ops;  // dispatch on the root's op
  // shared: a table made of others (a + b) copies its rules, not their patterns
  auto p = std::make_shared<const Pat>(std::move(pattern));
  auto f = std::make_shared<const PatFn>(std::move(fn));
  return Rule{std::move(name), loc, std::move(ops), [p, f](const UOpRef& x, const RewriteCtx&) -> UOpRef {
                Captures c;
                UOpRef out;
                match_each(*p, x.get(), c, [&] {
                  out = (*f)(c, x);
                  return out != nullptr;
                });
                return out;
              }};
}

}  // namespace ts
