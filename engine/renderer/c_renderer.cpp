#include "engine/renderer/c_renderer.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <tuple>
#include <unordered_set>
#include <sstream>
#include <unordered_map>

#include "engine/uop/error.h"

namespace ts {

std::string c_type(DType dt) {
  if (is_bool(dt)) return "_Bool";
  if (dt == dtypes::float16) return "__fp16";
  return strong(dt)->cname;
}

namespace {

const UOp* resolve(const UOp* u) {
  while (u->op == Ops::AFTER || u->op == Ops::GROUP) u = u->src[0].get();
  return u;
}

std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')') --depth;
    if (depth == 0 && i + 1 < s.size()) return s;  // the first paren closes early: not one group
  }
  return s.substr(1, s.size() - 2);
}

std::string render_const(const UOp& c) {
  DType dt = c.dtype;
  if (c.is<Invalid>()) return "0";
  if (is_bool(dt)) return c.const_float() != 0 ? "1" : "0";
  if (is_float(dt)) {
    double v = c.const_float();
    bool f32 = dt != dtypes::float64;
    std::string cast = "(" + c_type(dt) + ")";
    if (std::isnan(v)) return "(" + cast + "(" + (f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")") + "))";
    if (std::isinf(v)) return "(" + cast + "(" + std::string(v < 0 ? "-" : "") + (f32 ? "__builtin_inff()" : "__builtin_inf()") + "))";
    if (f32) v = static_cast<double>(static_cast<float>(v));
    std::string s = format_double(v);
    if (dt == dtypes::float32) return s + "f";
    if (dt == dtypes::float64) return s;
    return "((" + c_type(dt) + ")(" + s + "f))";
  }
  int64_t v = c.const_int();
  if (dt == dtypes::int64) return v == INT64_MIN ? "(-9223372036854775807l-1)" : std::to_string(v) + "l";
  if (dt == dtypes::uint64) return std::to_string(static_cast<uint64_t>(v)) + "ul";
  if (dt == dtypes::uint32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  if (dt == dtypes::int32 || is_weak(dt)) return v == INT32_MIN ? "(-2147483647-1)" : std::to_string(v);
  return "((" + c_type(dt) + ")(" + std::to_string(v) + "))";
}

std::string fsuffix(DType dt) { return dt == dtypes::float64 ? "" : "f"; }

std::string render_alu(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) {
  auto bin = [&](const char* o) { return "(" + s[0] + o + s[1] + ")"; };
  bool fl = is_float(dt);
  std::string sf = fsuffix(dt);
  switch (op) {
    case Ops::ADD: return bin("+");
    case Ops::SUB: return bin("-");
    case Ops::MUL: return bin("*");
    case Ops::FDIV: return bin("/");
    case Ops::CDIV: return bin("/");
    case Ops::CMOD: return fl ? "__builtin_fmod" + sf + "(" + s[0] + ", " + s[1] + ")" : bin("%");
    case Ops::FLOORDIV:
      if (fl) return "__builtin_floor" + sf + "(" + s[0] + "/" + s[1] + ")";
      return "((" + s[0] + "/" + s[1] + ")-(((" + s[0] + "%" + s[1] + ")!=0)&&((" + s[0] + "<0)!=(" + s[1] + "<0))))";
    case Ops::FLOORMOD:
      if (fl) return "(" + s[0] + "-" + s[1] + "*__builtin_floor" + sf + "(" + s[0] + "/" + s[1] + "))";
      return "(((" + s[0] + "%" + s[1] + ")+" + s[1] + ")%" + s[1] + ")";
    case Ops::MAX: return "((" + s[0] + "<" + s[1] + ")?" + s[1] + ":" + s[0] + ")";
    case Ops::CMPLT: return bin("<");
    case Ops::CMPNE: return bin("!=");
    case Ops::CMPEQ: return bin("==");
    case Ops::AND: return bin("&");
    case Ops::OR: return bin("|");
    case Ops::XOR: return bin("^");
    case Ops::SHL: return bin("<<");
    case Ops::SHR: return bin(">>");
    case Ops::WHERE: return "(" + s[0] + "?" + s[1] + ":" + s[2] + ")";
    case Ops::MULACC: return "((" + s[0] + "*" + s[1] + ")+" + s[2] + ")";
    case Ops::NEG: return "(-" + s[0] + ")";
    case Ops::RECIPROCAL: return "(" + std::string(dt == dtypes::float64 ? "1.0" : "1.0f") + "/" + s[0] + ")";
    case Ops::SQRT: return "__builtin_sqrt" + sf + "(" + s[0] + ")";
    case Ops::EXP2: return "__builtin_exp2" + sf + "(" + s[0] + ")";
    case Ops::LOG2: return "__builtin_log2" + sf + "(" + s[0] + ")";
    case Ops::SIN: return "__builtin_sin" + sf + "(" + s[0] + ")";
    case Ops::TRUNC: return fl ? "__builtin_trunc" + sf + "(" + s[0] + ")" : s[0];
    case Ops::POW: return "__builtin_pow" + sf + "(" + s[0] + ", " + s[1] + ")";
    default: throw Error("C renderer: unsupported op " + std::string(op_name(u.op)));
  }
}


// ---- float4 grouping: 4 loads (or stores) of one buffer at base+4m+0..3 in one block become one vector access
bool divisible4(const UOp* x) {
  switch (x->op) {
    case Ops::CONST: return !x->is<Invalid>() && x->const_int() % 4 == 0;
    case Ops::SHL: return x->src[1]->op == Ops::CONST && x->src[1]->const_int() >= 2;
    case Ops::MUL: return divisible4(x->src[0].get()) || divisible4(x->src[1].get());
    case Ops::ADD: return divisible4(x->src[0].get()) && divisible4(x->src[1].get());
    default: return false;
  }
}
// index = sum(leaves) + offset, leaves are the non-constant terms of its ADD tree (sorted, the group key)
void add_leaves(const UOp* x, std::vector<const UOp*>& leaves, int64_t& off) {
  if (x->op == Ops::ADD) {
    add_leaves(x->src[0].get(), leaves, off);
    add_leaves(x->src[1].get(), leaves, off);
  } else if (x->op == Ops::CONST && !x->is<Invalid>()) {
    off += x->const_int();
  } else {
    leaves.push_back(x);
  }
}
std::pair<std::vector<const UOp*>, int64_t> split_offset(const UOp* idx) {
  std::vector<const UOp*> leaves;
  int64_t off = 0;
  add_leaves(idx, leaves, off);
  std::sort(leaves.begin(), leaves.end());
  return {leaves, off};
}
struct VecGroup {
  std::vector<int> lanes;          // list positions of lanes 0..3
  std::vector<const UOp*> base;    // index leaves (their sum is a multiple of 4)
  int64_t offset = 0;              // 4m
};
// finds groups among the LOADs (is_store false) or STOREs of float buffers; positions index lin->src
std::vector<VecGroup> find_vec_groups(const UOpRef& lin, bool is_store) {
  const auto& l = lin->src;
  std::vector<int> block(l.size());
  int b = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i]->op == Ops::RANGE || l[i]->op == Ops::END) ++b;
    block[i] = b;
  }
  std::map<std::tuple<const UOp*, std::vector<const UOp*>, int64_t, int>, std::array<int, 4>> cand;
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op != (is_store ? Ops::STORE : Ops::LOAD)) continue;
    const UOp* index = u.src[0].get();
    if (index->op != Ops::INDEX || index->src.size() != 2) continue;
    const UOp* buf = index->src[0].get();
    if (buf->op != Ops::PARAM || buf->dtype != dtypes::float32) continue;
    auto [base, off] = split_offset(index->src[1].get());
    if (off < 0 || !std::all_of(base.begin(), base.end(), divisible4)) continue;
    auto key = std::make_tuple(buf, base, off / 4 * 4, block[i]);
    auto it = cand.find(key);
    if (it == cand.end()) it = cand.emplace(key, std::array<int, 4>{-1, -1, -1, -1}).first;
    if (it->second[off % 4] >= 0) continue;  // same address twice: leave scalar
    it->second[off % 4] = static_cast<int>(i);
  }
  std::vector<VecGroup> out;
  for (auto& [key, lanes] : cand) {
    if (std::any_of(lanes.begin(), lanes.end(), [](int x) { return x < 0; })) continue;
    int lo = *std::min_element(lanes.begin(), lanes.end()), hi = *std::max_element(lanes.begin(), lanes.end());
    // nothing in between may touch the same buffer the other way (a store between grouped loads, a load between stores)
    const UOp* buf = std::get<0>(key);
    bool clash = false;
    for (int i = lo; i <= hi && !clash; ++i) {
      const UOp& u = *l[i];
      if (u.op != (is_store ? Ops::LOAD : Ops::STORE) || u.src[0]->op != Ops::INDEX) continue;
      clash = u.src[0]->src[0].get() == buf;
    }
    if (clash) continue;
    out.push_back(VecGroup{std::vector<int>(lanes.begin(), lanes.end()), std::get<1>(key), std::get<2>(key)});
  }
  return out;
}

}  // namespace

constexpr int kMaxInlineDepth = 64;

std::string render_c(const ProgramSpec& spec) {
  const UOpRef& lin = spec.lowered;
  if (!lin || lin->op != Ops::LINEAR) throw Error("render_c: ProgramSpec.lowered is not a LINEAR");

  std::unordered_map<const UOp*, std::string> r;
  std::map<std::string, int> counters;
  std::vector<const UOp*> params;
  std::vector<std::string> lines;
  int depth = 1;
  auto get = [&](const UOpRef& x) -> const std::string& {
    auto it = r.find(resolve(x.get()));
    if (it == r.end()) throw Error("C renderer: operand rendered before its definition: " + std::string(op_name(x->op)));
    return it->second;
  };
  auto line = [&](const std::string& l) { lines.push_back(std::string(2 * depth, ' ') + l); };
  auto fresh = [&](const std::string& prefix) { return prefix + std::to_string(counters[prefix]++); };
  std::unordered_map<const UOp*, int> inlined_depth;  // nesting of each ALU expression rendered inline

  // float4 accesses: a vector load is emitted at its first lane, a vector store at its last lane
  std::unordered_map<int, const VecGroup*> vload_at, vstore_at;
  std::unordered_set<int> skip;
  auto lgroups = find_vec_groups(lin, false), sgroups = find_vec_groups(lin, true);
  for (auto& g : lgroups) {
    vload_at[*std::min_element(g.lanes.begin(), g.lanes.end())] = &g;
    for (int x : g.lanes) skip.insert(x);
  }
  for (auto& g : sgroups) {
    vstore_at[*std::max_element(g.lanes.begin(), g.lanes.end())] = &g;
    for (int x : g.lanes) skip.insert(x);
  }
  bool uses_float4 = !lgroups.empty() || !sgroups.empty();
  // liveness: what the effects need (a grouped lane needs its base, not its scalar INDEX); uses count live consumers
  std::unordered_map<const UOp*, int> pos_of;
  for (size_t i = 0; i < lin->src.size(); ++i) pos_of[lin->src[i].get()] = static_cast<int>(i);
  std::unordered_map<int, const VecGroup*> lane_group;
  for (auto* gs : {&lgroups, &sgroups})
    for (auto& g : *gs)
      for (int x : g.lanes) lane_group[x] = &g;
  std::vector<bool> live(lin->src.size(), false);
  std::unordered_map<const UOp*, int> uses;
  auto need = [&](const UOp* x) {
    x = resolve(x);
    ++uses[x];
    if (auto it = pos_of.find(x); it != pos_of.end()) live[it->second] = true;
  };
  for (size_t i = lin->src.size(); i-- > 0;) {
    const UOp& u = *lin->src[i];
    if (u.op == Ops::STORE || u.op == Ops::END || u.op == Ops::RANGE || u.op == Ops::DEFINE_ACC || u.op == Ops::PARAM) live[i] = true;
    if (!live[i]) continue;
    auto lg = lane_group.find(static_cast<int>(i));
    if (lg != lane_group.end()) {
      bool emits_here = u.op == Ops::LOAD ? vload_at.count(static_cast<int>(i)) : vstore_at.count(static_cast<int>(i));
      if (emits_here)
        for (auto* l : lg->second->base) need(l);
      if (u.op == Ops::STORE) need(u.src[1].get());
      continue;
    }
    for (auto& x : u.src) need(x.get());
  }
  auto vec_addr = [&](const VecGroup& g) {
    const UOp* buf = lin->src[g.lanes[0]]->src[0]->src[0].get();
    std::vector<const UOp*> leaves = g.base;
    std::sort(leaves.begin(), leaves.end(), [&](const UOp* a, const UOp* b) { return pos_of.at(a) < pos_of.at(b); });
    std::string a = r.at(buf);
    for (auto* l : leaves) a += "+" + r.at(l);  // leaves are never ADDs: keep their parens
    if (g.offset || leaves.empty()) a += "+" + std::to_string(g.offset);
    return "((float4*)((" + a + ")))";
  };

  for (size_t pos = 0; pos < lin->src.size(); ++pos) {
    const UOp& u = *lin->src[pos];
    if (!live[pos]) continue;
    if (skip.count(static_cast<int>(pos))) {
      if (auto it = vload_at.find(static_cast<int>(pos)); it != vload_at.end()) {
        std::string nm = fresh("val");
        line("float4 " + nm + " = (*" + vec_addr(*it->second) + ");");
        for (int k = 0; k < 4; ++k) r[lin->src[it->second->lanes[k]].get()] = nm + "[" + std::to_string(k) + "]";
      }
      if (auto it = vstore_at.find(static_cast<int>(pos)); it != vstore_at.end()) {
        std::string v = "(float4){";
        for (int k = 0; k < 4; ++k) v += (k ? "," : "") + strip_parens(get(lin->src[it->second->lanes[k]]->src[1]));
        line("*" + vec_addr(*it->second) + " = " + v + "};");
      }
      if (u.op == Ops::LOAD || u.op == Ops::STORE) continue;
    }
    switch (u.op) {
      case Ops::CONST: r[&u] = render_const(u); break;
      case Ops::PARAM: {
        const ParamArg& pa = u.as<ParamArg>();
        r[&u] = "data" + std::to_string(pa.slot) + "_" + (pa.addrspace == AddrSpace::ALU ? "" : std::to_string(pa.size));
        params.push_back(&u);
        break;
      }
      case Ops::RANGE: {
        const RangeArg& ra = u.as<RangeArg>();
        std::string nm = std::string(1, axis_letter(ra.type)) + "idx" + std::to_string(ra.id);
        r[&u] = nm;
        line("for (" + c_type(u.dtype) + " " + nm + " = 0; " + nm + " < " + get(u.src[0]) + "; " + nm + "++) {");
        ++depth;
        break;
      }
      case Ops::END:
        --depth;
        line("}");
        break;
      case Ops::DEFINE_ACC: {
        std::string nm = fresh("acc");
        r[&u] = nm;
        line(c_type(u.dtype) + " " + nm + " = " + get(u.src[0]) + ";");
        break;
      }
      case Ops::INDEX: {
        const std::string& idx = get(u.src[1]);
        r[&u] = "(" + get(u.src[0]) + "+" + (u.src[1]->op == Ops::ADD ? strip_parens(idx) : idx) + ")";
        break;
      }
      case Ops::LOAD: {
        const UOp* src = resolve(u.src[0].get());
        if (src->op == Ops::DEFINE_ACC) {
          r[&u] = r.at(src);
          break;
        }
        std::string access = "(*" + r.at(src) + ")";
        if (src->src.size() > 2) access = "(" + get(src->src[2]) + "?*" + r.at(src) + ":" + render_const(*uconst(u.dtype, 0)) + ")";
        std::string nm = fresh("val");
        r[&u] = nm;
        line(c_type(u.dtype) + " " + nm + " = " + access + ";");
        break;
      }
      case Ops::STORE: {
        const UOp* dst = resolve(u.src[0].get());
        const std::string& v = get(u.src[1]);
        if (dst->op == Ops::DEFINE_ACC) {
          line(r.at(dst) + " = " + v + ";");
        } else if (dst->src.size() > 2) {
          line("if (" + get(dst->src[2]) + ") { *" + r.at(dst) + " = " + v + "; }");
        } else {
          line("*" + r.at(dst) + " = " + v + ";");
        }
        break;
      }
      case Ops::CAST: case Ops::BITCAST: {
        std::string expr = u.op == Ops::CAST ? "((" + c_type(u.dtype) + ")(" + get(u.src[0]) + "))"
                                             : "__builtin_bit_cast(" + c_type(u.dtype) + ", (" + c_type(u.src[0]->dtype) + ")(" + get(u.src[0]) + "))";
        if (uses[&u] <= 1 || u.src[0]->op == Ops::CONST) {
          r[&u] = expr;
        } else {
          std::string nm = fresh("cast");
          r[&u] = nm;
          line(c_type(u.dtype) + " " + nm + " = " + expr + ";");
        }
        break;
      }
      default: {
        if (!group::alu(u.op)) throw Error("C renderer: unexpected " + std::string(op_name(u.op)) + " in the program");
        std::vector<std::string> s;
        for (auto& x : u.src) {
          const std::string& e = get(x);
          bool assoc = u.op == Ops::ADD || u.op == Ops::MUL || u.op == Ops::XOR || u.op == Ops::OR || u.op == Ops::AND;
          s.push_back(assoc && resolve(x.get())->op == u.op && r.count(resolve(x.get())) && uses[resolve(x.get())] <= 1 ? strip_parens(e) : e);
        }
        std::string expr = render_alu(u.op, u.op == Ops::WHERE || group::comparison(u.op) ? u.src.back()->dtype : u.dtype, s, u);
        // how deeply the inlined expression nests: a long chain of single-use ops gets a variable every so often, so
        // the source grows linearly and stays under clang's bracket depth (256)
        int nest = 1;
        for (auto& x : u.src)
          if (auto n = inlined_depth.find(resolve(x.get())); n != inlined_depth.end()) nest = std::max(nest, n->second + 1);
        if (uses[&u] <= 1 && u.op != Ops::WHERE && nest < kMaxInlineDepth) {
          inlined_depth[&u] = nest;
          r[&u] = expr;
        } else {
          std::string nm = fresh("alu");
          r[&u] = nm;
          line(c_type(u.dtype) + " " + nm + " = " + expr + ";");
        }
        break;
      }
    }
  }

  std::sort(params.begin(), params.end(), [](const UOp* a, const UOp* b) { return a->as<ParamArg>().slot < b->as<ParamArg>().slot; });
  const std::string& name = spec.function_name;
  std::ostringstream o;
  // (aligned(4), not the reference's aligned(16): buffer views may start at any element)
  if (uses_float4) o << "typedef float float4 __attribute__((aligned(4),ext_vector_type(4)));\n";
  o << "void " << name << "(";
  std::ostringstream call;
  call << "  " << name << "(";
  for (size_t i = 0; i < params.size(); ++i) {
    const UOp* p = params[i];
    const ParamArg& pa = p->as<ParamArg>();
    std::string sep = i ? ", " : "";
    if (pa.addrspace == AddrSpace::ALU) {
      o << sep << "const " << c_type(p->dtype) << " " << r.at(p);
      if (pa.name == "core_id") call << sep << "core_id";
      else call << sep << "(" << c_type(p->dtype) << ")vars[" << (pa.slot - spec.num_buffers) << "]";
    } else {
      o << sep << c_type(p->dtype) << "* restrict " << r.at(p);
      call << sep << "(" << c_type(p->dtype) << "*)bufs[" << pa.slot << "]";
    }
  }
  o << ") {\n";
  for (auto& l : lines) o << l << "\n";
  o << "}\n\n";
  o << "void " << name << "_entry(void** bufs, const long long* vars, int core_id) {\n";
  o << "  (void)bufs; (void)vars; (void)core_id;\n";
  o << call.str() << ");\n}\n";
  return o.str();
}

}  // namespace ts
