// Prefetches of the next block. A reduce loop directly inside a loop over outputs that reads, in each of the outer
// loop's iterations, one dense block of a buffer as several rows at once (a row sum's 16 rows of 256 floats, a
// matmul's 4 rows of A) reads several short streams at a time, which the hardware's stream prefetcher does not follow
// (a 16-row sum read 11 GB/s where a plain read of the same memory read 40). Each iteration of the reduce loop then
// asks for its share of the outer loop's next block, in address order, so that block is in cache when it is read: a
// PREFETCH a cache line, first in the reduce loop's body.
#include <algorithm>
#include <set>
#include <tuple>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/cpu/linear_edit.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {
using namespace cpu;

struct PrefetchPlan {
  const UOp* buf = nullptr;
  const UOp* range = nullptr;                         // the reduce loop
  std::vector<std::pair<const UOp*, int64_t>> terms;  // the block's start: the index's other terms (in program order)
  int64_t constant = 0;                               // ... its lowest constant plus one outer step (the next block)
  int64_t step = 0;                                   // elements asked for per reduce iteration
  int lines = 0, line_elems = 0;
};

// the plans of each reduce loop (by its position)
std::map<int, std::vector<PrefetchPlan>> find_prefetches(const UOps& l) {
  std::map<int, std::vector<PrefetchPlan>> out;
  std::vector<int> open;  // positions of the open RANGEs
  struct Group {
    int at, first;  // the reduce loop's position, its first read's
    std::set<int64_t> constants;
    int64_t c_reduce, c_outer;
  };
  const std::unordered_map<const UOp*, int> pos = positions(l);
  std::map<std::tuple<const UOp*, const UOp*, std::vector<std::pair<const UOp*, int64_t>>>, Group> groups;
  auto sized = [](const UOp* r) { return r->src[0]->op == Ops::CONST && !r->src[0]->is<Invalid>(); };
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op == Ops::RANGE) open.push_back(static_cast<int>(i));
    else if (u.op == Ops::END && !open.empty()) open.pop_back();
    if (u.op != Ops::LOAD || open.size() < 2) continue;
    const UOp* index = u.src[0].get();
    if (index->op != Ops::INDEX || index->src.size() != 2 || index->src[0]->op != Ops::PARAM) continue;
    const UOp* red = l[open.back()].get();
    const UOp* outer = l[open[open.size() - 2]].get();
    if (red->as<RangeArg>().type != AxisType::REDUCE || outer->as<RangeArg>().type == AxisType::REDUCE || !sized(red) || !sized(outer)) continue;
    LinearForm f;
    linear_form(index->src[1].get(), 1, f);
    // every term a loop index or a kernel argument (rendered before the reduce loop opens)
    bool plain = true;
    for (auto& [leaf, c] : f.terms) plain = plain && c != 0 && (leaf->op == Ops::RANGE || leaf->op == Ops::PARAM);
    if (!plain || !f.terms.count(red) || !f.terms.count(outer) || f.terms.at(red) <= 0 || f.terms.at(outer) <= 0) continue;
    std::vector<std::pair<const UOp*, int64_t>> key(f.terms.begin(), f.terms.end());
    auto [it, added] = groups.try_emplace({index->src[0].get(), red, key}, Group{open.back(), static_cast<int>(i), {}, f.terms.at(red), f.terms.at(outer)});
    it->second.constants.insert(f.constant);
  }
  // (in program order, not the keys' addresses: the source is the same every run)
  std::vector<std::pair<int, const decltype(groups)::value_type*>> ordered;
  for (auto& kv : groups) ordered.emplace_back(kv.second.first, &kv);
  std::sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [first, kv] : ordered) {
    const auto& [key, g] = *kv;
    const auto& [buf, red, terms] = key;
    const int64_t trip = red->src[0]->const_int(), rows = static_cast<int64_t>(g.constants.size());
    const int64_t item = buf->dtype->itemsize();
    // one dense block an outer iteration, read as more than one stream
    if (rows * trip != g.c_outer || g.c_reduce * trip >= g.c_outer || g.c_outer % trip != 0) continue;
    PrefetchPlan p;
    p.buf = buf;
    p.range = red;
    for (auto& [leaf, c] : terms)
      if (leaf != red) p.terms.emplace_back(leaf, c);
    std::sort(p.terms.begin(), p.terms.end(), [&](auto& a, auto& b) { return pos.at(a.first) < pos.at(b.first); });
    p.constant = *g.constants.begin() + g.c_outer;
    p.step = g.c_outer / trip;
    p.line_elems = static_cast<int>(64 / item);
    if ((p.step * item) % 64 != 0 || p.step * item / 64 > 8) continue;
    p.lines = static_cast<int>(p.step * item / 64);
    out[g.at].push_back(std::move(p));
  }
  return out;
}

const PatternMatcher& pm_prefetch() {
  static const PatternMatcher pm({rule("prefetch the next block of a reduce read as several rows", {Ops::LINEAR}, [](const UOpRef& x, LinearPassCtx& ctx) -> UOpRef {
    if (ctx.done) return nullptr;
    ctx.done = true;
    LinearEdit e;
    for (auto& [at, plans] : find_prefetches(x->src))
      for (const PrefetchPlan& p : plans)
        for (int q = 0; q < p.lines; ++q) {
          UOps src{p.buf->ref(), p.range->ref()};
          Shape arg;
          for (auto& [leaf, c] : p.terms) src.push_back(leaf->ref()), arg.push_back(c);
          arg.push_back(p.step);
          arg.push_back(p.constant + q * p.line_elems);
          e.before[at + 1].push_back(UOp::make(Ops::PREFETCH, dtypes::void_, std::move(src), std::move(arg)));
        }
    return e.empty() ? nullptr : apply_edit(x, e);
  })});
  return pm;
}

}  // namespace

UOpRef cpu_prefetch(const UOpRef& linear) {
  LinearPassCtx ctx;
  return graph_rewrite(linear, pm_prefetch(), ctx, "prefetch the next block");
}

}  // namespace ts
