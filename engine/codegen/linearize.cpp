#include "engine/codegen/linearize.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/opt.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

namespace ts {

namespace {
bool is_virtual(Ops op) { return op == Ops::GROUP || op == Ops::AFTER || op == Ops::NOOP; }
bool is_effect(Ops op) { return op == Ops::STORE || op == Ops::DEFINE_ACC || op == Ops::BARRIER; }
int priority(Ops op) {
  switch (op) {
    case Ops::PARAM: case Ops::BUFFER: case Ops::SPECIAL: return 0;
    case Ops::CONST: return 1;
    case Ops::DEFINE_ACC: return 2;
    case Ops::LOAD: return 3;
    case Ops::STORE: return 5;
    default: return 4;
  }
}
using RSet = std::vector<int>;  // sorted range numbers
RSet set_union(const RSet& a, const RSet& b) {
  RSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
bool has(const RSet& s, int r) { return std::binary_search(s.begin(), s.end(), r); }

// the loop nest of a kernel's nodes (in toposort order, `id` their positions)
struct LoopNest {
  std::vector<int> range_no;    // node -> its number among the RANGEs (-1: not a RANGE)
  std::vector<int> range_node;  // RANGE number -> its node
  std::vector<int> end_of;      // RANGE number -> the node of its END
  // rs[i]: loops node i must be inside of; level[i]: where it is placed (a RANGE is placed outside itself)
  std::vector<RSet> rs, level;
};
// loops: number the RANGEs, find the END of each, and the loops each node is inside of
LoopNest loop_nest(const std::vector<UOpRef>& nodes, const std::unordered_map<const UOp*, int>& id) {
  const int n = static_cast<int>(nodes.size());
  LoopNest ln;
  std::vector<int>& range_no = ln.range_no;
  std::vector<int>& range_node = ln.range_node;
  std::vector<int>& end_of = ln.end_of;
  range_no.assign(n, -1);
  for (int i = 0; i < n; ++i)
    if (nodes[i]->op == Ops::RANGE) {
      range_no[i] = static_cast<int>(range_node.size());
      range_node.push_back(i);
    }
  end_of.assign(range_node.size(), -1);
  std::vector<RSet>& rs = ln.rs;
  std::vector<RSet>& level = ln.level;
  rs.resize(n);
  level.resize(n);
  for (int i = 0; i < n; ++i) {
    const UOpRef& u = nodes[i];
    RSet acc;
    for (auto& s : u->src) acc = set_union(acc, rs[id.at(s.get())]);
    if (u->op == Ops::RANGE) {
      level[i] = acc;
      acc = set_union(acc, {range_no[i]});
    } else if (u->op == Ops::END) {
      for (size_t k = 1; k < u->src.size(); ++k) {
        int r = range_no[id.at(u->src[k].get())];
        if (r < 0) throw Error("linearize: END of something that is not a RANGE");
        if (end_of[r] >= 0) throw Error("linearize: RANGE " + u->src[k]->render() + " is closed by two ENDs");
        end_of[r] = i;
        acc.erase(std::remove(acc.begin(), acc.end(), r), acc.end());
      }
      if (u->src.size() != 2) throw Error("linearize: END must close exactly one range (run split ends first)");
      level[i] = acc;
    } else {
      level[i] = acc;
    }
    rs[i] = acc;
  }
  return ln;
}
}  // namespace

UOpRef linearize(const UOpRef& sink) {
  std::vector<UOpRef> nodes;
  for (auto& u : sink->toposort())
    if (u != sink) nodes.push_back(u);
  const int n = static_cast<int>(nodes.size());
  std::unordered_map<const UOp*, int> id;
  for (int i = 0; i < n; ++i) id[nodes[i].get()] = i;

  // loops: number the RANGEs, find the END of each
  LoopNest ln = loop_nest(nodes, id);
  const std::vector<int>& range_node = ln.range_node;
  const std::vector<int>& end_of = ln.end_of;
  const std::vector<RSet>& rs = ln.rs;
  const std::vector<RSet>& level = ln.level;

  // readiness bookkeeping
  std::vector<int> missing(n, 0);
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    std::unordered_set<int> uniq;
    for (auto& s : nodes[i]->src) uniq.insert(id.at(s.get()));
    missing[i] = static_cast<int>(uniq.size());
    for (int s : uniq) users[s].push_back(i);
  }
  std::vector<bool> emitted(n, false), on_stack(range_node.size(), false);
  std::vector<int> stack;
  UOps out;
  int emitted_count = 0;
  std::vector<int> virtual_ready;
  // the instructions whose sources are all emitted, in the order they are preferred (a scan of these, not of every
  // node, per step: a kernel of 100,000 chained ops is linear to place)
  std::set<std::pair<int, int>> ready;
  auto became_ready = [&](int i) {
    Ops op = nodes[i]->op;
    if (is_virtual(op)) virtual_ready.push_back(i);
    else if (op != Ops::RANGE && op != Ops::END) ready.insert({priority(op), i});
  };
  auto emit = [&](int i) {
    emitted[i] = true;
    ++emitted_count;
    if (!is_virtual(nodes[i]->op)) out.push_back(nodes[i]);
    ready.erase({priority(nodes[i]->op), i});
    for (int u : users[i])
      if (--missing[u] == 0) became_ready(u);
  };
  for (int i = 0; i < n; ++i)
    if (missing[i] == 0) became_ready(i);
  auto flush_virtual = [&] {
    while (!virtual_ready.empty()) {
      int v = virtual_ready.back();
      virtual_ready.pop_back();
      if (!emitted[v]) emit(v);
    }
  };
  auto subset = [&](const RSet& s) { return std::all_of(s.begin(), s.end(), [&](int r) { return on_stack[r]; }); };
  // the loops of s are the innermost open ones (any other open loop is outside them): an effect placed there runs
  // once per iteration of s's loops (repeated by outer loops it does not depend on, which recompute the same value:
  // an accumulator of a reduce that does not use an outer output axis)
  // An open output loop between s's loops is allowed too (the effect, and what uses it at s's level, is then redone
  // per iteration of that loop: a reduce that does not use a middle output axis); a reduce loop there never is.
  auto is_reduce_loop = [&](int r) {
    AxisType t = nodes[range_node[r]]->as<RangeArg>().type;
    return t == AxisType::REDUCE || t == AxisType::GROUP_REDUCE || t == AxisType::UNROLL;
  };
  auto innermost = [&](const RSet& s) {
    if (s.empty()) return stack.empty();
    if (s.size() > stack.size() || !has(s, stack.back())) return false;
    size_t inside = 0;
    for (size_t k = 0; k < stack.size(); ++k) {
      if (has(s, stack[k])) ++inside;
      else if (inside > 0 && is_reduce_loop(stack[k])) return false;
    }
    return inside == s.size();
  };
  auto rank = [&](int r) {
    const auto& ra = nodes[range_node[r]]->as<RangeArg>();
    return std::make_pair(axis_to_pos(ra.type), ra.id);
  };

  while (emitted_count < n) {
    flush_virtual();
    if (emitted_count >= n) break;
    // 1. an instruction that fits the current loop nest
    int best = -1;
    for (const auto& entry : ready) {
      int i = entry.second;
      Ops op = nodes[i]->op;
      if (is_effect(op) ? innermost(level[i]) : subset(level[i])) {
        best = i;
        break;
      }
    }
    if (best >= 0) {
      emit(best);
      continue;
    }
    // 2. open a loop whose END belongs here and whose outside dependencies are all done
    int open = -1;
    for (size_t r = 0; r < range_node.size(); ++r) {
      int ri = range_node[r];
      if (emitted[ri] || missing[ri] || !subset(level[ri])) continue;
      int e = end_of[r];
      if (e < 0) throw Error("linearize: RANGE " + nodes[ri]->render() + " is never closed");
      if (!innermost(level[e])) continue;
      bool ok = true;
      for (auto& d : nodes[e]->toposort()) {
        int j = id.at(d.get());
        // what belongs at or above the current nest must be done before the loop opens
        if (j != e && !emitted[j] && !is_virtual(d->op) && d->op != Ops::RANGE && subset(rs[j])) { ok = false; break; }
      }
      if (!ok) continue;
      if (open < 0 || rank(static_cast<int>(r)) < rank(open)) open = static_cast<int>(r);
    }
    if (open >= 0) {
      emit(range_node[open]);
      stack.push_back(open);
      on_stack[open] = true;
      continue;
    }
    // 3. close the innermost loop
    if (!stack.empty()) {
      int e = end_of[stack.back()];
      if (e >= 0 && !emitted[e] && missing[e] == 0) {
        emit(e);
        on_stack[stack.back()] = false;
        stack.pop_back();
        continue;
      }
    }
    throw Error("linearize: no valid order (loop nest of the kernel is inconsistent)");
  }
  if (!stack.empty()) throw Error("linearize: loops left open");
  return UOp::make(Ops::LINEAR, dtypes::void_, std::move(out));
}

namespace {
const UOp* base_param(const UOp* u) {
  while (!u->src.empty() && u->op != Ops::PARAM) u = u->src[0].get();
  return u->op == Ops::PARAM ? u : nullptr;
}
const UOp* local_buffer(const UOp* u) {
  while (!u->src.empty() && u->op != Ops::BUFFER && u->op != Ops::PARAM) u = u->src[0].get();
  return u->op == Ops::BUFFER && u->as<ParamArg>().addrspace != AddrSpace::GLOBAL ? u : nullptr;
}
double trip_count(const UOpRef& size) {
  if (size->op == Ops::CONST) return static_cast<double>(size->const_int());
  return static_cast<double>(size->vmax());  // symbolic size: its upper bound
}
}  // namespace

Estimates estimate(const UOpRef& linear) {
  std::unordered_set<const UOp*> excluded;
  std::function<void(const UOp*)> mark = [&](const UOp* u) {
    if (u->op == Ops::END || !excluded.insert(u).second) return;
    for (auto& s : u->src) mark(s.get());
  };
  for (auto& u : linear->src)
    if (u->op == Ops::INDEX)
      for (size_t i = 1; i < u->src.size(); ++i) mark(u->src[i].get());
  Estimates e;
  double mults = 1;
  std::vector<double> mult_stack;
  std::map<std::pair<const UOp*, Ops>, double> mem;
  for (auto& u : linear->src) {
    if ((u->op == Ops::LOAD || u->op == Ops::STORE) && local_buffer(u.get())) {
      e.lds += (u->op == Ops::LOAD ? u->dtype : u->src[1]->dtype)->itemsize() * mults;  // LOCAL memory, a program's own array: moved, not unique bytes
    } else if (u->op == Ops::LOAD || u->op == Ops::STORE) {
      if (const UOp* buf = base_param(u.get())) {
        DType dt = u->op == Ops::LOAD ? u->dtype : u->src[1]->dtype;
        double& m = mem[{buf, u->op}];
        m = std::min(m + dt->itemsize() * mults, static_cast<double>(buf->as<ParamArg>().size) * buf->dtype->itemsize());
        e.lds += dt->itemsize() * mults;
      }
    }
    if (u->op == Ops::RANGE) {
      mult_stack.push_back(mults);
      mults *= trip_count(u->src[0]);
    } else if (u->op == Ops::END) {
      mults = mult_stack.back();
      mult_stack.pop_back();
    } else if (u->op == Ops::SPECIAL) {
      mults *= trip_count(u->src[0]);  // every lane of every work-group runs what follows
    } else if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU && u->as<ParamArg>().name == "core_id") {
      mults *= static_cast<double>(u->as<ParamArg>().vmax + 1);
    } else if (group::alu(u->op) && !excluded.count(u.get())) {
      e.ops += mults * (u->op == Ops::MULACC ? 2 : 1);
    }
  }
  for (auto& [k, v] : mem) e.mem += v;
  return e;
}

void require_cpu_program(const UOpRef& linear, std::string_view renderer, const std::string& kernel) {
  for (auto& u : linear->src) {
    std::string what;
    if (u->op == Ops::SPECIAL) what = "SPECIAL " + u->as<std::string>() + " (a GPU launch dim)";
    else if (u->op == Ops::BARRIER) what = "BARRIER (a work-group barrier)";
    else if (u->op == Ops::BUFFER && u->as<ParamArg>().addrspace == AddrSpace::LOCAL) what = "a LOCAL buffer (work-group memory)";
    if (!what.empty())
      throw Error("the " + std::string(renderer) + " renderer is a CPU renderer: kernel " + kernel + " has " + what +
                  "; it was optimized for a target with locals (run it on a GPU device or INTERP:GPU)");
  }
}

namespace {
// a launch dim's size for Variable values given by name (nullptr: its largest value)
int64_t eval_size(const UOpRef& size, const ProgramSpec& p, const std::span<const int64_t>* vars) {
  if (size->op == Ops::CONST) return size->const_int();
  if (!vars) return size->vmax();
  std::unordered_map<const UOp*, UOpRef> map;
  for (auto& u : size->toposort()) {
    if (!(u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU)) continue;
    const std::string& name = u->as<ParamArg>().name;
    auto it = std::find(p.vars.begin(), p.vars.end(), name);
    if (it == p.vars.end() || static_cast<size_t>(it - p.vars.begin()) >= vars->size())
      throw Error("kernel " + p.name + ": no value for Variable " + name + " of a launch dim");
    map[u.get()] = uconst_int(u->dtype, (*vars)[static_cast<size_t>(it - p.vars.begin())]);
  }
  UOpRef v = simplify(substitute(size, map));
  if (v->op != Ops::CONST) throw Error("kernel " + p.name + ": launch dim " + size->render() + " does not evaluate to a number");
  return v->const_int();
}
LaunchDims eval_launch_dims(const ProgramSpec& p, const std::span<const int64_t>* vars) {
  LaunchDims d;
  if (p.local_size) d.local_size = std::array<int64_t, 3>{1, 1, 1};
  if (!p.lowered) return d;
  for (auto& u : p.lowered->src) {
    if (u->op != Ops::SPECIAL) continue;
    const std::string& name = u->as<std::string>();
    int dim = name.empty() ? 0 : name.back() - '0';
    if (dim < 0 || dim > 2) throw Error("kernel " + p.name + ": SPECIAL " + name + " names no launch dim");
    int64_t v = eval_size(u->src[0], p, vars);
    if (name.rfind("lidx", 0) == 0) {
      if (d.local_size) (*d.local_size)[dim] = v;
    } else {
      d.global_size[dim] = v;
    }
  }
  return d;
}
}  // namespace

LaunchDims launch_dims(const ProgramSpec& p, std::span<const int64_t> vars) { return eval_launch_dims(p, &vars); }
int64_t eval_index_expr(const UOpRef& e, const ProgramSpec& p, std::span<const int64_t> vars) { return eval_size(e, p, &vars); }

void set_launch_dims(ProgramSpec& p, bool has_local) {
  bool idx_specials = false, specials = false;
  for (auto& u : p.lowered->src)
    if (u->op == Ops::SPECIAL) {
      specials = true;
      if (u->as<std::string>().rfind("idx", 0) == 0) idx_specials = true;
    }
  if (has_local && !idx_specials) p.local_size = std::array<int64_t, 3>{1, 1, 1};
  if (!specials) return;
  LaunchDims d = eval_launch_dims(p, nullptr);
  p.global_size = d.global_size;
  p.local_size = d.local_size;
}

std::string print_linear(const UOpRef& linear) {
  std::unordered_map<const UOp*, size_t> pos;
  std::ostringstream o;
  for (size_t i = 0; i < linear->src.size(); ++i) pos[linear->src[i].get()] = i;
  for (size_t i = 0; i < linear->src.size(); ++i) {
    const UOpRef& u = linear->src[i];
    char head[64];
    std::snprintf(head, sizeof head, "%4zu %-12s %-16s ", i, std::string(op_name(u->op)).c_str(), dtype_repr(u->dtype).c_str());
    o << head << "[";
    for (size_t k = 0; k < u->src.size(); ++k) {
      const UOp* s = u->src[k].get();
      while (s->op == Ops::AFTER || s->op == Ops::GROUP) s = s->src[0].get();  // show what the entry refers to
      auto it = pos.find(s);
      o << (k ? ", " : "") << (it == pos.end() ? std::string("--") : std::to_string(it->second));
    }
    o << "] " << arg_repr(u->arg) << "\n";
  }
  return o.str();
}

}  // namespace ts
