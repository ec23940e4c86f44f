#pragma once
// What the CPU passes over the LINEAR share: its positions and blocks, index forms, sums as C evaluates them, lanes of
// VLOADs, and the edit that makes the new LINEAR (nodes placed, replaced, dropped; readers rebuilt).
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/uop/uop.h"

namespace ts::cpu {

inline const UOp* resolve(const UOp* u) {
  while (u->op == Ops::AFTER || u->op == Ops::GROUP) u = u->src[0].get();
  return u;
}

// an index as sum(coefficient * leaf) + constant over ADD, MUL by a constant, SHL by a constant; anything else is a
// leaf. Two indexes with the same terms differ by their constants, however each was written.
struct LinearForm {
  std::map<const UOp*, int64_t> terms;
  int64_t constant = 0;
};
void linear_form(const UOp* x, int64_t scale, LinearForm& f, int depth = 0);
// each position's block: the stretch of the list between two loop boundaries (RANGE, END, BARRIER), numbered in order
std::vector<int> loop_blocks(const UOps& l);
// each node's position in the list
std::unordered_map<const UOp*, int> positions(const UOps& l);
// how many sources of listed nodes name each node (resolved), as the linearized list names them: a VLOAD's and a
// PREFETCH's sources are not counted, a VSTORE counts its values only (the STOREs it stands for named those)
std::unordered_map<const UOp*, int> list_uses(const UOps& l);
// The terms of a float sum as C evaluates what the C-style renderer writes, left to right: a single-use ADD under an
// ADD is written without its parentheses, so acc + ((x0 + x1) + x2) is computed as ((acc + x0) + x1) + x2. At most
// `max` terms (the rest stays one term).
std::vector<const UOp*> c_sum_terms(const UOp* v, const std::unordered_map<const UOp*, int>& uses, size_t max);
// the VLOAD x is a lane of (a GEP of it), and which lane; or none
std::pair<const UOp*, int> lane_in(const UOp* x);
inline int64_t vec_width(const UOp* vload) { return vload->as<Shape>()[0]; }
// whether a LOAD of one of `accs` lies in l[first..last], but the reads in `chains` (the updates' own reads of their
// accumulators): a group's updates are all written at one place, so nothing else may read them in between
bool acc_read_between(const UOps& l, int first, int last, const std::vector<const UOp*>& accs, const std::unordered_set<const UOp*>& chains);

// An edit of the list: new nodes placed before a position, listed nodes replaced (their readers read the replacement;
// a replacement listed once, at the node's position, unless dropped there) and listed nodes left out. New nodes name
// the old list's nodes; the new list names the rebuilt ones.
struct LinearEdit {
  std::map<int, UOps> before;
  std::unordered_map<const UOp*, UOpRef> replace;
  std::unordered_set<int> drop;
  bool empty() const { return before.empty() && replace.empty() && drop.empty(); }
  // the listed nodes at `positions` of `l` become `n`, listed once, at position `at` (the others dropped)
  void merge(const UOps& l, const std::vector<int>& positions, int at, const UOpRef& n) {
    for (int p : positions) {
      replace[l[static_cast<size_t>(p)].get()] = n;
      if (p != at) drop.insert(p);
    }
  }
};
UOpRef apply_edit(const UOpRef& linear, const LinearEdit& e);

// The state of a pass that rewrites the whole LINEAR once (its rule fires on the LINEAR, and not on its own result)
struct LinearPassCtx {
  bool done = false;
};

}  // namespace ts::cpu
