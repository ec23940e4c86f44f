#include "engine/renderer/cstyle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "engine/renderer/c_renderer.h"
#include "engine/uop/error.h"

namespace ts {

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

std::string float_digits(double v, DType dt) {
  if (dt != dtypes::float64) v = static_cast<double>(static_cast<float>(v));
  return format_double(v);
}

namespace {

const UOp* resolve(const UOp* u) {
  while (u->op == Ops::AFTER || u->op == Ops::GROUP) u = u->src[0].get();
  return u;
}

const UOp* const_src(const UOp& u, size_t i) {
  const UOp* x = resolve(u.src[i].get());
  return x->op == Ops::CONST && !x->is<Invalid>() ? x : nullptr;
}
bool narrow_int(DType dt) { return is_int(dt) && !is_weak(dt) && dt->bitsize < 32; }
int int_bits(DType dt) { return is_weak(dt) ? 64 : dt->bitsize; }
bool int_divmod(Ops op) { return op == Ops::CDIV || op == Ops::CMOD || op == Ops::FLOORDIV || op == Ops::FLOORMOD; }
// float -> int conversions are guarded (an out-of-range conversion is undefined in C)
bool float_to_int(const UOp& u) { return u.op == Ops::CAST && is_float(u.src[0]->dtype) && is_int(u.dtype); }
// ops whose rendering names an operand more than once: those operands get a variable of their own
bool c_repeats_operands(const UOp& u) {
  if (float_to_int(u)) return true;
  if (!is_int(u.dtype) || u.src.size() < 2) return false;
  if (int_divmod(u.op)) return u.op != Ops::CDIV || !const_src(u, 1);
  return (u.op == Ops::SHL || u.op == Ops::SHR) && !const_src(u, 1);
}

// ---- vector grouping: w loads (or stores) of one buffer whose indexes are base+w*m+0..w-1 by value (however each
// lane's index was simplified), in one block, become one vector access
struct VecGroup {
  std::vector<int> lanes;  // list positions of lanes 0..w-1
  int64_t offset = 0;      // w*m: the address of lane 0 when the index is a constant
  // the address is lane `lane`'s own index expression less its lane number, or the offset alone when the index is a
  // constant
  const UOp* index = nullptr;
  int lane = 0;
  bool constant_index = false;
};
// an index as sum(coefficient * leaf) + constant over ADD, MUL by a constant, SHL by a constant; anything else is a
// leaf. Two indexes with the same terms differ by their constants, however each was written.
struct LinearForm {
  std::map<const UOp*, int64_t> terms;
  int64_t constant = 0;
};
void linear_form(const UOp* x, int64_t scale, LinearForm& f, int depth = 0) {
  if (depth > 64) { f.terms[x] += scale; return; }
  if (x->op == Ops::CONST && !x->is<Invalid>()) { f.constant += scale * x->const_int(); return; }
  if (x->op == Ops::ADD) {
    linear_form(x->src[0].get(), scale, f, depth + 1);
    linear_form(x->src[1].get(), scale, f, depth + 1);
    return;
  }
  if (x->op == Ops::MUL && x->src[1]->op == Ops::CONST && !x->src[1]->is<Invalid>()) {
    linear_form(x->src[0].get(), scale * x->src[1]->const_int(), f, depth + 1);
    return;
  }
  if (x->op == Ops::MUL && x->src[0]->op == Ops::CONST && !x->src[0]->is<Invalid>()) {
    linear_form(x->src[1].get(), scale * x->src[0]->const_int(), f, depth + 1);
    return;
  }
  if (x->op == Ops::SHL && x->src[1]->op == Ops::CONST && x->src[1]->const_int() >= 0 && x->src[1]->const_int() < 31) {
    linear_form(x->src[0].get(), scale * (int64_t{1} << x->src[1]->const_int()), f, depth + 1);
    return;
  }
  f.terms[x] += scale;
}
// each position's block: the stretch of lin->src between two loop boundaries (RANGE, END, BARRIER), numbered in order
std::vector<int> loop_blocks(const UOps& l) {
  std::vector<int> block(l.size());
  int b = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i]->op == Ops::RANGE || l[i]->op == Ops::END || l[i]->op == Ops::BARRIER) ++b;
    block[i] = b;
  }
  return block;
}
// finds groups among the LOADs (is_store false) or STOREs of float buffers; positions index lin->src. Each width of
// `widths` (largest first) groups the accesses a wider group left: w lanes at base+w*m+0..w-1 in one block, keyed by
// the index's value (its terms, each coefficient a multiple of w, and its constant).
std::vector<VecGroup> find_vec_groups(const UOpRef& lin, bool is_store, const std::vector<int>& widths) {
  const auto& l = lin->src;
  const std::vector<int> block = loop_blocks(l);
  // each access's buffer, index terms with their coefficients, and constant offset
  struct Access {
    int pos;
    const UOp* buf;
    std::vector<const UOp*> terms;
    std::vector<int64_t> coeffs;
    int64_t off;
  };
  std::vector<Access> acc;
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op != (is_store ? Ops::STORE : Ops::LOAD)) continue;
    const UOp* index = u.src[0].get();
    if (index->op != Ops::INDEX || index->src.size() != 2) continue;
    const UOp* buf = resolve(index->src[0].get());
    const bool own_array = buf->op == Ops::BUFFER && buf->as<ParamArg>().addrspace == AddrSpace::REG;
    if (!(buf->op == Ops::PARAM || own_array) || buf->dtype != dtypes::float32) continue;
    LinearForm f;
    linear_form(index->src[1].get(), 1, f);
    if (f.constant < 0) continue;
    Access a{static_cast<int>(i), buf, {}, {}, f.constant};
    for (auto& [leaf, c] : f.terms)
      if (c != 0) a.terms.push_back(leaf), a.coeffs.push_back(c);
    acc.push_back(std::move(a));
  }
  std::vector<VecGroup> out;
  std::unordered_set<int> taken;
  for (int w : widths) {
    // (buffer, index terms, their coefficients, w*m, block) -> the list positions of lanes 0..w-1
    std::map<std::tuple<const UOp*, std::vector<const UOp*>, std::vector<int64_t>, int64_t, int>, std::vector<int>> cand;
    for (const Access& a : acc) {
      if (taken.count(a.pos) || std::any_of(a.coeffs.begin(), a.coeffs.end(), [&](int64_t c) { return c % w != 0; })) continue;
      auto key = std::make_tuple(a.buf, a.terms, a.coeffs, a.off / w * w, block[a.pos]);
      auto it = cand.find(key);
      if (it == cand.end()) it = cand.emplace(key, std::vector<int>(w, -1)).first;
      if (it->second[a.off % w] >= 0) continue;  // same address twice: leave scalar
      it->second[a.off % w] = a.pos;
    }
    for (auto& [key, lanes] : cand) {
      if (std::any_of(lanes.begin(), lanes.end(), [](int x) { return x < 0; })) continue;
      int lo = *std::min_element(lanes.begin(), lanes.end()), hi = *std::max_element(lanes.begin(), lanes.end());
      // nothing in between may touch the same buffer the other way (a store between grouped loads, a load between stores)
      const UOp* buf = std::get<0>(key);
      bool clash = false;
      for (int i = lo; i <= hi && !clash; ++i) {
        const UOp& u = *l[i];
        if (u.op != (is_store ? Ops::LOAD : Ops::STORE) || u.src[0]->op != Ops::INDEX) continue;
        clash = resolve(u.src[0]->src[0].get()) == buf;
      }
      if (clash) continue;
      // loads are emitted at their first lane, stores at their last; the address is lane 0's index where that is
      // defined there (every lane's index precedes its store), else the emitting lane's less its lane number
      const int at = is_store || lanes[0] == lo ? lanes[0] : lo;
      VecGroup g;
      g.lanes = lanes;
      g.offset = std::get<3>(key);
      g.lane = static_cast<int>(std::find(lanes.begin(), lanes.end(), at) - lanes.begin());
      g.index = l[at]->src[0]->src[1].get();
      g.constant_index = std::get<1>(key).empty();
      taken.insert(lanes.begin(), lanes.end());
      out.push_back(std::move(g));
    }
  }
  return out;
}

constexpr int kMaxInlineDepth = 64;

}  // namespace

// ---- default hooks ----------------------------------------------------------------------------------

bool CStyleLanguage::repeats_operands(const UOp& u) const { return c_repeats_operands(u); }

std::string CStyleLanguage::int_literal(const UOp& c) const {
  const DType dt = c.dtype;
  const int64_t v = int_const_value(c);
  if (dt == dtypes::int64) return v == INT64_MIN ? "(-9223372036854775807l-1)" : std::to_string(v) + "l";
  if (dt == dtypes::uint64) return std::to_string(static_cast<uint64_t>(v)) + "ul";
  if (dt == dtypes::uint32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  if (dt == dtypes::int32 || is_weak(dt)) return v == INT32_MIN ? "(-2147483647-1)" : std::to_string(v);
  return cast(type(dt), std::to_string(v));
}

std::string CStyleLanguage::bool_op(Ops op, const std::vector<std::string>& s) const {
  if (op != Ops::AND && op != Ops::OR && op != Ops::XOR) return {};  // C's int arithmetic on _Bool is right
  const char* o = op == Ops::AND ? "&" : op == Ops::OR ? "|" : "^";
  return "(" + s[0] + o + s[1] + ")";
}
std::string CStyleLanguage::special(const UOp& u) const {
  throw Error(name() + ": a " + std::string(op_name(u.op)) + " (a GPU index) in a program for a device without work-groups");
}
std::string CStyleLanguage::barrier() const { throw Error(name() + ": a BARRIER in a program for a device without work-groups"); }
std::string CStyleLanguage::local_decl(DType, const std::string& nm, int64_t) const {
  throw Error(name() + ": local memory (" + nm + ") in a program for a device without shared memory");
}
std::string CStyleLanguage::array_decl(DType, const std::string& nm, int64_t) const {
  throw Error(name() + ": an array of the program's own (" + nm + ") in a program for a device that has none");
}

// ---- the C semantics, in the language's spelling ----------------------------------------------------

// integer division and remainder, defined for every divisor as the reference's CPU results: x/0 = 0, x%0 = 0,
// MIN/-1 = MIN (wraps), MIN%-1 = 0; floor division/modulo round toward -inf
std::string CStyleLanguage::render_int_divmod(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const {
  const std::string &a = s[0], &b = s[1];
  bool uns = is_unsigned(dt);
  std::string zero = render_const(*uconst_int(dt, 0));
  std::string neg = cast(type(dt), "0-" + cast_bare(unsigned_type(int_bits(dt)), a));
  std::string q = "(" + a + "/" + b + ")";
  // the remainder as C's % (truncated): a-(a/b)*b where the language's % is not defined for negative operands
  std::string r = uns || promotes_narrow() ? "(" + a + "%" + b + ")" : "(" + a + "-(" + a + "/" + b + ")*" + b + ")";
  std::string floor_q = "(" + q + "-((" + r + "!=0)&&((" + a + "<0)!=(" + b + "<0))))";
  std::string floor_r = "(" + r + "+(((" + r + "!=0)&&((" + r + "<0)!=(" + b + "<0)))?" + b + ":0))";
  if (!promotes_narrow()) {  // no int promotion: bool arithmetic is spelled as a cast, the literal 0 in the dtype
    std::string z = render_const(*uconst_int(dt, 0));
    floor_q = "(" + q + "-" + cast(type(dt), "(" + r + "!=" + z + ")&&((" + a + "<" + z + ")!=(" + b + "<" + z + "))") + ")";
    floor_r = "(" + r + "+(((" + r + "!=" + z + ")&&((" + r + "<" + z + ")!=(" + b + "<" + z + ")))?" + b + ":" + z + "))";
  }
  bool div = op == Ops::CDIV || op == Ops::FLOORDIV;
  std::string body = uns ? (div ? q : r) : op == Ops::CDIV ? q : op == Ops::CMOD ? r : op == Ops::FLOORDIV ? floor_q : floor_r;
  if (const UOp* c = const_src(u, 1)) {
    int64_t v = int_const_value(*c);
    if (v == 0) return zero;
    if (v == -1 && !uns) return div ? neg : zero;
    if (op == Ops::FLOORMOD && !uns) {
      std::string z = promotes_narrow() ? "0" : zero;
      return v > 0 ? "(" + r + "+((" + r + "<" + z + ")?" + b + ":" + z + "))" : floor_r;
    }
    return body;
  }
  std::string m1 = promotes_narrow() ? "-1" : render_const(*uconst_int(dt, -1));
  std::string z = promotes_narrow() ? "0" : zero;
  if (uns) return "((" + b + "==" + z + ")?" + zero + ":" + body + ")";
  if (div) return "((" + b + "==" + z + ")?" + zero + ":(" + b + "==" + m1 + ")?" + neg + ":" + body + ")";
  if (!promotes_narrow()) return "(((" + b + "==" + z + ")||(" + b + "==" + m1 + "))?" + zero + ":" + body + ")";
  return "(((" + b + "==0)|(" + b + "==-1))?" + zero + ":" + body + ")";
}

// shifts by a count outside [0, bits) of the dtype (negative counts included): SHL gives 0, SHR the sign fill
std::string CStyleLanguage::render_shift(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const {
  const std::string &a = s[0], &b = s[1];
  int bits = int_bits(dt);
  bool uns = is_unsigned(dt);
  std::string zero = render_const(*uconst_int(dt, 0)), o = op == Ops::SHL ? "<<" : ">>";
  std::string w = std::to_string(bits), top = std::to_string(bits - 1);
  if (const UOp* c = const_src(u, 1)) {
    uint64_t v = static_cast<uint64_t>(int_const_value(*c));
    if (v < static_cast<uint64_t>(bits)) return "(" + a + o + b + ")";
    return op == Ops::SHL || uns ? zero : "(" + a + ">>" + top + ")";
  }
  std::string in_range = "(" + cast_bare(unsigned_type(bits), b) + "<" + w + "u)";
  if (op == Ops::SHR && !uns) return "(" + a + ">>(" + in_range + "?" + b + ":" + (promotes_narrow() ? top : cast(type(dt), top)) + "))";
  return "(" + in_range + "?(" + a + o + b + "):" + zero + ")";
}

std::string CStyleLanguage::render_alu(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const {
  auto bin = [&](const char* o) { return "(" + s[0] + o + s[1] + ")"; };
  bool fl = is_float(dt);
  if (!fl && int_divmod(op)) return render_int_divmod(op, dt, s, u);
  if (!fl && (op == Ops::SHL || op == Ops::SHR)) return render_shift(op, dt, s, u);
  if (is_bool(dt)) {
    std::string r = bool_op(op, s);
    if (!r.empty()) return r;
  }
  switch (op) {
    case Ops::ADD: return bin("+");
    case Ops::SUB: return bin("-");
    case Ops::MUL:
      // unsigned short * unsigned short promotes to int and can overflow it: multiply as unsigned int
      if (dt == dtypes::uint16 && promotes_narrow()) return "(" + cast_bare(unsigned_type(32), s[0]) + "*" + s[1] + ")";
      return bin("*");
    case Ops::FDIV: return bin("/");
    case Ops::CDIV: return bin("/");
    case Ops::MAX: return "((" + s[0] + "<" + s[1] + ")?" + s[1] + ":" + s[0] + ")";
    case Ops::CMPLT: return less_than(dt, s[0], s[1]);
    case Ops::CMPNE: return bin("!=");
    case Ops::CMPEQ: return bin("==");
    case Ops::AND: return bin("&");
    case Ops::OR: return bin("|");
    case Ops::XOR: return bin("^");
    case Ops::WHERE: return "(" + s[0] + "?" + s[1] + ":" + s[2] + ")";
    case Ops::MULACC:
      if (dt == dtypes::uint16 && promotes_narrow()) return "((" + cast_bare(unsigned_type(32), s[0]) + "*" + s[1] + ")+" + s[2] + ")";
      return "((" + s[0] + "*" + s[1] + ")+" + s[2] + ")";
    case Ops::NEG: return "(-" + s[0] + ")";
    case Ops::RECIPROCAL: return "(" + one(dt) + "/" + s[0] + ")";
    case Ops::TRUNC: if (!fl) return s[0]; [[fallthrough]];
    case Ops::CMOD: case Ops::FLOORDIV: case Ops::FLOORMOD: case Ops::SQRT: case Ops::EXP2: case Ops::LOG2: case Ops::SIN:
    case Ops::POW:
      return builtin(op, dt, s, u);
    default: throw Error(name() + ": unsupported op " + std::string(op_name(u.op)));
  }
}

// C computes narrow ints in int and __fp16 in float: the result of an op is brought back to its dtype, so an
// inlined expression rounds and wraps where the op does (as the LLVM IR and the interpreter)
std::string CStyleLanguage::to_dtype(const UOp& u, std::string expr) const {
  if (!promotes_narrow()) return expr;
  if (u.op == Ops::WHERE || group::comparison(u.op)) return expr;
  bool narrow = narrow_int(u.dtype) && u.op != Ops::AND && u.op != Ops::OR && u.op != Ops::XOR && u.op != Ops::MAX && u.op != Ops::SHR &&
                u.op != Ops::CMOD && u.op != Ops::FLOORMOD && u.op != Ops::TRUNC;
  if (narrow || u.dtype == dtypes::float16) return "((" + type(u.dtype) + ")" + expr + ")";
  return expr;
}

// float -> int as x86-64 converts (the reference's CPU results): int32/int64 take the truncated value when it fits,
// else INT_MIN; 8/16-bit ints go through int32 and keep the low bits; uint32/uint64 take the value when it fits,
// else all ones. x is a variable or a constant (it is named more than once).
std::string CStyleLanguage::render_float_to_int(DType from, DType to, const std::string& x) const {
  auto lit = [&](const char* v) { return float_literal(v, from); };
  auto guarded = [&](const std::string& lo, const std::string& hi, DType dt, const std::string& fallback) {
    return "(((" + x + lo + ")&&(" + x + "<" + hi + "))?" + cast(type(dt), x) + ":" + fallback + ")";
  };
  if (to->bitsize == 64 && !is_unsigned(to)) return guarded(">=" + lit("-9223372036854775808.0"), lit("9223372036854775808.0"), to, "(-9223372036854775807l-1)");
  if (to->bitsize == 64) return guarded(">" + lit("-1.0"), lit("18446744073709551616.0"), to, "18446744073709551615ul");
  if (to == dtypes::uint32) return guarded(">" + lit("-1.0"), lit("4294967296.0"), to, "4294967295u");
  std::string i32 = guarded(">=" + lit("-2147483648.0"), lit("2147483648.0"), dtypes::int32, "(-2147483647-1)");
  if (to == dtypes::int32) return i32;
  return promotes_narrow() ? "((" + type(to) + ")" + i32 + ")" : cast(type(to), i32);
}

std::string CStyleLanguage::render_cast(const UOp& u, const std::string& x) const {
  DType from = u.src[0]->dtype, to = u.dtype;
  if (float_to_int(u)) return render_float_to_int(from, to, x);
  // double -> half rounds through float (x86 has no direct conversion; the reference's renderer does the same)
  if (from == dtypes::float64 && to == dtypes::float16) return cast(type(to), cast_bare("float", x));
  return cast(type(to), x);
}

// Prefetches of the next block. A reduce loop directly inside a loop over outputs that reads, in each of the outer
// loop's iterations, one dense block of a buffer as several rows at once (a row sum's 16 rows of 256 floats, a
// matmul's 4 rows of A) reads several short streams at a time, which the hardware's stream prefetcher does not follow
// (a 16-row sum read 11 GB/s where a plain read of the same memory read 40). Each iteration of the reduce loop then
// asks for its share of the outer loop's next block, in address order, so that block is in cache when it is read.
struct PrefetchPlan {
  const UOp* buf = nullptr;
  std::vector<std::pair<const UOp*, int64_t>> terms;  // the block's start: the index's other terms (in program order)
  int64_t constant = 0;                  // ... its lowest constant plus one outer step (the next block)
  int64_t step = 0;                      // elements asked for per reduce iteration
  int lines = 0, line_elems = 0;
};
std::unordered_map<int, std::vector<PrefetchPlan>> find_prefetches(const UOpRef& lin) {
  const auto& l = lin->src;
  std::unordered_map<int, std::vector<PrefetchPlan>> out;
  std::vector<int> open;  // positions of the open RANGEs
  struct Group {
    int at, first;  // the reduce loop's position, its first read's
    std::set<int64_t> constants;
    int64_t c_reduce, c_outer;
  };
  std::unordered_map<const UOp*, int> pos;
  for (size_t i = 0; i < l.size(); ++i) pos[l[i].get()] = static_cast<int>(i);
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

// The terms of a float sum as C evaluates what this renderer writes, left to right: a single-use ADD under an ADD is
// written without its parentheses (as the reference's renderer writes it), so acc + ((x0 + x1) + x2) is computed as
// ((acc + x0) + x1) + x2. At most `max` terms (the rest stays one term).
std::vector<const UOp*> c_sum_terms(const UOp* v, const std::unordered_map<const UOp*, int>& uses, size_t max) {
  std::vector<const UOp*> xs;
  std::function<void(const UOp*, bool)> flatten = [&](const UOp* x, bool top) {
    auto n = uses.find(x);
    if (x->op == Ops::ADD && x->dtype == dtypes::float32 && (top || (n != uses.end() && n->second == 1)) && xs.size() < max) {
      flatten(x->src[0].get(), false);
      flatten(x->src[1].get(), false);
    } else {
      xs.push_back(x);
    }
  };
  flatten(v, true);
  return xs;
}

// The vector load a LOAD is a lane of, and which lane (positions index lin->src), or none.
std::pair<const VecGroup*, int> lane_in(const UOp* x, const std::unordered_map<const UOp*, int>& pos,
                                        const std::unordered_map<int, const VecGroup*>& lane_group) {
  auto p = pos.find(x);
  auto g = p == pos.end() || x->op != Ops::LOAD ? lane_group.end() : lane_group.find(p->second);
  if (g == lane_group.end()) return {nullptr, -1};
  const auto& lanes = g->second->lanes;
  return {g->second, static_cast<int>(std::find(lanes.begin(), lanes.end(), p->second) - lanes.begin())};
}
// Whether a LOAD of one of `accs` lies in l[first..last], but the reads in `chains` (the updates' own reads of their
// accumulators): a group's updates are all written at its last STORE, so nothing else may read them in between.
bool acc_read_between(const UOps& l, int first, int last, const std::vector<const UOp*>& accs, const std::unordered_set<const UOp*>& chains) {
  for (int p = first; p <= last; ++p) {
    const UOp& x = *l[static_cast<size_t>(p)];
    if (x.op == Ops::LOAD && !chains.count(&x) && std::find(accs.begin(), accs.end(), resolve(x.src[0].get())) != accs.end()) return true;
  }
  return false;
}

// Accumulations of 16 rows at once, transposed. A reduce whose loop body updates 16 accumulators each as
// (((acc + x0) + x1) + x2) + x3 (as written), or as max(acc, max(max(max(x0, x1), x2), x3)) (a running max), with
// x0..x3 the lanes, in order, of one 4-wide vector load (a jammed row
// sum: 16 rows, 4 adjacent elements of each) is 16 scalar chains; clang's SLP vectorizer makes them one vector of accumulators but
// gathers its operands with some 50 shuffles an iteration. Written as a 4x4 transpose within each 128-bit lane of four
// 16-wide vectors (12 inserts, 8 shuffles) and 4 vector adds, each accumulator gets the same additions in the same
// order. The terms may also be one expression of the lanes (a softmax's exp(x - max)): the same operations in every
// term, whose other operands are the same in every term (constants), or the same in each row's four (the row's max).
// The expression is then computed once per column, 16 rows at a time, with the same statements and the same
// operations as the 64 scalar copies, lane by lane.
struct TransposedAcc {
  std::vector<int> stores;            // the 16 accumulators' STOREs, in program order (accumulator i is lane i)
  std::vector<const UOp*> accs;       // their DEFINE_ACCs
  std::vector<const VecGroup*> rows;  // each one's 4-wide load
  std::vector<std::array<const UOp*, 4>> terms;  // each one's four terms
  int at = 0;                         // the last STORE: where the block is written
  Ops op = Ops::ADD;                  // ADD: acc + t0 + t1 + t2 + t3; MAX: max(acc, max(max(max(t0, t1), t2), t3))
  // the expression of the terms (none: each term is its lane): row 0's term 0, and what each of its leaves is
  enum class Leaf { lane, common, per_row };
  std::unordered_map<const UOp*, Leaf> leaves;
  std::unordered_map<const UOp*, std::vector<const UOp*>> row_values;  // a per_row leaf's value in each row
  std::unordered_map<const UOp*, int> uses;                            // an inner node's uses, as the scalar code counts them
};
namespace {
bool vector_lane_dtype(DType dt) { return dt == dtypes::float32 || dt == dtypes::int32 || dt == dtypes::uint32 || dt == dtypes::bool_; }
// an op the transposed expression can compute on 16-wide vectors: one whose C spelling (render_alu's) holds for
// vectors of 32-bit lanes too, or a cast between them (spelled for vectors in render's transposed_terms)
bool vector_op(const UOp& u) {
  if (!vector_lane_dtype(u.dtype)) return false;
  for (auto& x : u.src)
    if (!vector_lane_dtype(x->dtype)) return false;
  switch (u.op) {
    case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::FDIV: case Ops::MAX: case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ:
    case Ops::WHERE: case Ops::NEG: return true;
    case Ops::AND: case Ops::OR: case Ops::XOR: return true;
    case Ops::RECIPROCAL: return is_float(u.dtype);
    case Ops::SHL: case Ops::SHR:  // by a constant count within the lane
      return !is_float(u.dtype) && u.src[1]->op == Ops::CONST && u.src[1]->const_int() >= 0 && u.src[1]->const_int() < 32;
    case Ops::CAST: return !is_bool(u.dtype) && !is_bool(u.src[0]->dtype);
    case Ops::BITCAST: return !is_bool(u.dtype) && !is_bool(u.src[0]->dtype);
    default: return false;
  }
}
}  // namespace
std::vector<TransposedAcc> find_transposed_accs(const UOpRef& lin, const std::unordered_map<int, const VecGroup*>& lane_group) {
  const auto& l = lin->src;
  std::unordered_map<const UOp*, int> pos, uses;
  for (size_t i = 0; i < l.size(); ++i) {
    pos[l[i].get()] = static_cast<int>(i);
    for (auto& x : l[i]->src) ++uses[resolve(x.get())];
  }
  auto lane_of = [&](const UOp* x) -> std::pair<const VecGroup*, int> {  // (of a 4-wide load)
    auto lk = lane_in(x, pos, lane_group);
    return lk.first && lk.first->lanes.size() == 4 ? lk : std::make_pair(nullptr, -1);
  };
  // the 4-wide load whose lane `lane` the term reads first (depth first), or none
  auto row_of = [&](const UOp* term, int lane) -> const VecGroup* {
    std::vector<const UOp*> stack{term};
    std::unordered_set<const UOp*> seen;
    while (!stack.empty() && seen.size() < 256) {
      const UOp* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      if (auto [g, k] = lane_of(x); g) {
        if (k == lane) return g;
        continue;
      }
      if (x->op == Ops::LOAD) continue;
      for (auto it = x->src.rbegin(); it != x->src.rend(); ++it) stack.push_back(resolve(it->get()));
    }
    return nullptr;
  };
  // the 64 terms as one expression of row 0's term 0: every leaf a lane of its row's load, the same value in all 64,
  // or the same in each row's four; every inner node the same op in all 64, used only inside its term
  auto expression = [&](TransposedAcc& t) {
    std::unordered_map<const UOp*, std::vector<const UOp*>> at;  // template node -> its 64 nodes (row-major)
    std::function<bool(const std::vector<const UOp*>&)> walk = [&](const std::vector<const UOp*>& ns) {
      const UOp* tn = ns[0];
      if (auto m = at.find(tn); m != at.end()) return m->second == ns;
      at[tn] = ns;
      if (!vector_lane_dtype(tn->dtype)) return false;
      if (std::all_of(ns.begin(), ns.end(), [&](const UOp* x) { return x == tn; })) {
        t.leaves[tn] = TransposedAcc::Leaf::common;
        return !is_bool(tn->dtype);
      }
      bool lane = true, row = true;
      for (size_t r = 0; r < 16; ++r)
        for (size_t j = 0; j < 4; ++j) {
          auto [g, k] = lane_of(ns[r * 4 + j]);
          lane = lane && g == t.rows[r] && k == static_cast<int>(j);
          row = row && ns[r * 4 + j] == ns[r * 4];
        }
      if (lane) {
        t.leaves[tn] = TransposedAcc::Leaf::lane;
        return true;
      }
      if (row) {
        t.leaves[tn] = TransposedAcc::Leaf::per_row;
        for (size_t r = 0; r < 16; ++r) t.row_values[tn].push_back(ns[r * 4]);
        return !is_bool(tn->dtype);
      }
      if (tn->op == Ops::LOAD || !vector_op(*tn)) return false;
      for (const UOp* x : ns)
        if (x->op != tn->op || x->dtype != tn->dtype || x->src.size() != tn->src.size()) return false;
      for (size_t k = 0; k < tn->src.size(); ++k) {
        std::vector<const UOp*> sub;
        for (const UOp* x : ns) sub.push_back(resolve(x->src[k].get()));
        if (sub[0]->dtype != resolve(tn->src[k].get())->dtype || !walk(sub)) return false;
      }
      return true;
    };
    std::vector<const UOp*> roots;
    for (size_t r = 0; r < 16; ++r)
      for (size_t j = 0; j < 4; ++j) roots.push_back(t.terms[r][j]);
    if (!walk(roots)) return false;
    if (t.leaves.count(roots[0]) && t.leaves.at(roots[0]) == TransposedAcc::Leaf::lane) return true;  // the lanes themselves
    // an inner node is used only inside its own term (as often as the template's inner nodes use it there)
    std::unordered_map<const UOp*, int> inner_uses;
    for (auto& [tn, ns] : at)
      if (!t.leaves.count(tn))
        for (auto& x : tn->src) ++inner_uses[resolve(x.get())];
    for (auto& [tn, ns] : at) {
      if (t.leaves.count(tn) || tn == roots[0]) continue;
      for (const UOp* x : ns)
        if (uses[x] != inner_uses[tn]) return false;
      t.uses[tn] = inner_uses[tn];
    }
    t.uses[roots[0]] = t.op == Ops::MAX ? 2 : 1;  // (a max, a < b ? b : a, names its operands twice)
    return true;
  };
  std::vector<TransposedAcc> out;
  TransposedAcc cur;
  std::unordered_set<const UOp*> leaves;  // the accumulators' reads that begin their chains
  auto flush = [&] {
    if (cur.stores.size() == 16 && !acc_read_between(l, cur.stores.front(), cur.at, cur.accs, leaves) && expression(cur)) out.push_back(cur);
    cur = TransposedAcc{};
  };
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op == Ops::RANGE || u.op == Ops::END || u.op == Ops::BARRIER) flush();
    if (u.op != Ops::STORE) continue;
    const UOp* acc = resolve(u.src[0].get());
    if (acc->op != Ops::DEFINE_ACC || acc->dtype != dtypes::float32) continue;
    // the terms as C evaluates them: the accumulator, then the four terms; or a running max: max(acc, max(max(max(t0,
    // t1), t2), t3)), the row's maximum first
    // (a max is a < b ? b : a by now: each operand named twice)
    auto max_of = [&](const UOp* n) -> std::pair<const UOp*, const UOp*> {
      if (n->op != Ops::WHERE) return {nullptr, nullptr};
      const UOp* c = resolve(n->src[0].get());
      if (c->op != Ops::CMPLT || uses[c] != 1 || resolve(c->src[0].get()) != resolve(n->src[2].get()) || resolve(c->src[1].get()) != resolve(n->src[1].get()))
        return {nullptr, nullptr};
      return {resolve(n->src[2].get()), resolve(n->src[1].get())};
    };
    const UOp* v = u.src[1].get();
    const Ops op = max_of(v).first ? Ops::MAX : Ops::ADD;
    const int once = op == Ops::MAX ? 2 : 1;  // the uses of a value used once
    std::vector<const UOp*> xs;
    if (op == Ops::ADD) {
      xs = c_sum_terms(v, uses, 8);
    } else {
      xs = {max_of(v).first};
      std::vector<const UOp*> rest;
      const UOp* m = max_of(v).second;
      while (max_of(m).first && uses[m] == 2 && rest.size() < 3) {
        rest.push_back(max_of(m).second);
        m = max_of(m).first;
      }
      rest.push_back(m);
      xs.insert(xs.end(), rest.rbegin(), rest.rend());
    }
    if (xs.size() != 5 || !(xs[0]->op == Ops::LOAD && resolve(xs[0]->src[0].get()) == acc && uses[xs[0]] == once)) continue;
    if (!cur.stores.empty() && cur.op != op) flush();
    const UOp* leaf = xs[0];
    const VecGroup* g = row_of(xs[1], 0);
    bool ok = g != nullptr;
    for (size_t j = 1; j < 5 && ok; ++j) ok = uses[xs[j]] == once && row_of(xs[j], static_cast<int>(j - 1)) == g;
    if (!ok) continue;
    leaves.insert(leaf);
    cur.op = op;
    cur.stores.push_back(static_cast<int>(i));
    cur.accs.push_back(acc);
    cur.rows.push_back(g);
    cur.terms.push_back({xs[1], xs[2], xs[3], xs[4]});
    cur.at = static_cast<int>(i);
    if (cur.stores.size() == 16) flush();
  }
  return out;
}

// Accumulators as vectors. A reduce whose loop body updates w accumulators (w a vector load's width) each as
// acc + s1*v1[k] + s2*v2[k] + ... (the terms as C evaluates them), where accumulator k takes lane k of the same vector
// loads v1, v2, ... and every accumulator the same scalars s1, s2, ..., is one w-wide accumulator updated as
// vacc + s1*v1 + s2*v2 + ...: each lane gets the same operations in the same order (a*b+c contracts to the same fma
// in both). Written as scalars, these are w chains that clang's SLP vectorizer gathers back into vectors with
// shuffles, and a matmul tile of 8 rows x 32 columns (256 accumulators) spilled; as vectors they are 16 registers.
struct VectorAcc {
  struct Term {
    const UOp* scalar;      // s
    const VecGroup* group;  // v
    bool scalar_first;      // written s*v (else v*s)
  };
  std::vector<Term> terms;
  std::vector<int> stores;       // accumulator k's STORE, by lane
  std::vector<const UOp*> accs;  // accumulator k's DEFINE_ACC, by lane
  int at = 0;                    // the last STORE: where the update is written
  int decl = 0;                  // the first DEFINE_ACC: where the vector is declared
};
std::vector<VectorAcc> find_vector_accs(const UOpRef& lin, const std::unordered_map<int, const VecGroup*>& lane_group,
                                        const std::unordered_set<int>& taken_stores) {
  const auto& l = lin->src;
  std::unordered_map<const UOp*, int> pos, uses, acc_stores;
  const std::vector<int> block = loop_blocks(l);
  for (size_t i = 0; i < l.size(); ++i) {
    pos[l[i].get()] = static_cast<int>(i);
    for (auto& x : l[i]->src) ++uses[resolve(x.get())];
    if (l[i]->op == Ops::STORE) ++acc_stores[resolve(l[i]->src[0].get())];
  }
  // candidate groups: (block, terms) -> each lane's STORE; a product of two lanes can be read either way round, so a
  // STORE may be a candidate of several, and is taken by the first that completes
  using Key = std::pair<int, std::vector<std::tuple<const UOp*, const VecGroup*, bool>>>;
  std::map<Key, std::vector<int>> cand;
  std::vector<Key> order;
  std::unordered_map<int, const UOp*> chain;  // a candidate STORE's read of its accumulator
  for (size_t i = 0; i < l.size(); ++i) {
    const UOp& u = *l[i];
    if (u.op != Ops::STORE || taken_stores.count(static_cast<int>(i))) continue;
    const UOp* acc = resolve(u.src[0].get());
    if (acc->op != Ops::DEFINE_ACC || acc->dtype != dtypes::float32 || acc_stores[acc] != 1 || acc->src.empty() || acc->src[0]->op != Ops::CONST) continue;
    std::vector<const UOp*> xs = c_sum_terms(u.src[1].get(), uses, 17);
    if (xs.size() < 2 || xs.size() > 17 || !(xs[0]->op == Ops::LOAD && resolve(xs[0]->src[0].get()) == acc && uses[xs[0]] == 1)) continue;
    chain[static_cast<int>(i)] = xs[0];
    // each product's readings: (scalar, group, scalar first, lane)
    std::vector<std::vector<std::tuple<const UOp*, const VecGroup*, bool, int>>> readings;
    for (size_t j = 1; j < xs.size(); ++j) {
      const UOp* m = xs[j];
      readings.emplace_back();
      if (m->op != Ops::MUL || m->dtype != dtypes::float32 || uses[m] != 1) break;
      for (int v = 0; v < 2; ++v) {
        auto [g, k] = lane_in(m->src[static_cast<size_t>(v)].get(), pos, lane_group);
        if (g) readings.back().emplace_back(m->src[static_cast<size_t>(1 - v)].get(), g, v == 1, k);
      }
    }
    if (readings.size() != xs.size() - 1 || std::any_of(readings.begin(), readings.end(), [](auto& r) { return r.empty(); })) continue;
    // (products of two lanes in every term: at most 64 combinations, or it stays scalar)
    size_t combos = 1;
    for (auto& r : readings) combos = std::min<size_t>(combos * r.size(), 65);
    if (combos > 64) continue;
    // every combination of readings with one lane and one width throughout
    std::vector<size_t> pick(readings.size(), 0);
    while (true) {
      Key key{block[i], {}};
      int lane = -1;
      size_t width = 0;
      bool ok = true;
      for (size_t j = 0; j < readings.size() && ok; ++j) {
        auto [sc, g, first, k] = readings[j][pick[j]];
        if (lane < 0) lane = k, width = g->lanes.size();
        ok = k == lane && g->lanes.size() == width;
        key.second.emplace_back(sc, g, first);
      }
      if (ok) {
        auto it = cand.find(key);
        if (it == cand.end()) it = cand.emplace(key, std::vector<int>(width, -1)).first, order.push_back(key);
        if (it->second[static_cast<size_t>(lane)] < 0) it->second[static_cast<size_t>(lane)] = static_cast<int>(i);
      }
      size_t j = 0;
      while (j < pick.size() && ++pick[j] == readings[j].size()) pick[j++] = 0;
      if (j == pick.size()) break;
    }
  }
  std::vector<VectorAcc> out;
  std::unordered_set<int> taken;
  for (const Key& key : order) {
    const std::vector<int>& st = cand.at(key);
    if (std::any_of(st.begin(), st.end(), [&](int x) { return x < 0 || taken.count(x); })) continue;
    VectorAcc va;
    for (auto& [sc, g, first] : key.second) va.terms.push_back({sc, g, first});
    va.stores = st;
    va.at = *std::max_element(st.begin(), st.end());
    va.decl = static_cast<int>(l.size());
    for (int x : st) {
      va.accs.push_back(resolve(l[static_cast<size_t>(x)]->src[0].get()));
      va.decl = std::min(va.decl, pos.at(va.accs.back()));
    }
    // the vector is declared where the first accumulator is: all of them in one block
    bool clash = std::any_of(va.accs.begin(), va.accs.end(), [&](const UOp* a) { return block[static_cast<size_t>(pos.at(a))] != block[static_cast<size_t>(va.decl)]; });
    // (the update is written at the last STORE)
    std::unordered_set<const UOp*> chains;
    for (int x : st) chains.insert(chain.at(x));
    if (clash || acc_read_between(l, *std::min_element(st.begin(), st.end()), va.at, va.accs, chains)) continue;
    taken.insert(st.begin(), st.end());
    out.push_back(std::move(va));
  }
  return out;
}

// ---- the walk ---------------------------------------------------------------------------------------

std::string CStyleLanguage::render(const ProgramSpec& spec, SourceLines* source_lines) const {
  const UOpRef& lin = spec.lowered;
  if (!lin || lin->op != Ops::LINEAR) throw Error(name() + ": ProgramSpec.lowered is not a LINEAR");

  std::unordered_map<const UOp*, std::string> r;
  std::map<std::string, int> counters;
  std::vector<Param> params;
  std::vector<std::string> lines, prologue;
  int depth = 1;
  auto get = [&](const UOpRef& x) -> const std::string& {
    auto it = r.find(resolve(x.get()));
    if (it == r.end()) throw Error(name() + ": operand rendered before its definition: " + std::string(op_name(x->op)));
    return it->second;
  };
  const UOp* cur = nullptr;             // the UOp being rendered
  std::vector<const UOp*> line_uops;    // which one each body line renders
  auto line = [&](const std::string& l) {
    lines.push_back(std::string(2 * depth, ' ') + l);
    line_uops.push_back(cur);
  };
  auto fresh = [&](const std::string& prefix) { return prefix + std::to_string(counters[prefix]++); };
  std::unordered_map<const UOp*, int> inlined_depth;  // nesting of each ALU expression rendered inline

  // float4 accesses: a vector load is emitted at its first lane, a vector store at its last lane
  std::unordered_map<int, const VecGroup*> vload_at, vstore_at;
  std::unordered_set<int> skip;
  std::vector<VecGroup> lgroups, sgroups;
  if (float4()) {
    lgroups = find_vec_groups(lin, false, vec_widths());
    sgroups = find_vec_groups(lin, true, vec_widths());
  }
  for (auto& g : lgroups) {
    vload_at[*std::min_element(g.lanes.begin(), g.lanes.end())] = &g;
    for (int x : g.lanes) skip.insert(x);
  }
  for (auto& g : sgroups) {
    vstore_at[*std::max_element(g.lanes.begin(), g.lanes.end())] = &g;
    for (int x : g.lanes) skip.insert(x);
  }
  std::unordered_map<int, std::vector<PrefetchPlan>> prefetches;
  if (!prefetch("x").empty()) prefetches = find_prefetches(lin);
  std::set<int> widths_used;
  for (auto* gs : {&lgroups, &sgroups})
    for (auto& g : *gs) widths_used.insert(static_cast<int>(g.lanes.size()));
  // liveness: what the effects need (a group needs its emitting lane's index only); uses count live consumers
  std::unordered_map<const UOp*, int> pos_of;
  for (size_t i = 0; i < lin->src.size(); ++i) pos_of[lin->src[i].get()] = static_cast<int>(i);
  std::unordered_map<int, const VecGroup*> lane_group;
  for (auto* gs : {&lgroups, &sgroups})
    for (auto& g : *gs)
      for (int x : g.lanes) lane_group[x] = &g;
  std::vector<TransposedAcc> transposed;
  std::unordered_map<int, const TransposedAcc*> transposed_store;
  if (transposed_accumulate()) transposed = find_transposed_accs(lin, lane_group);
  for (auto& t : transposed)
    for (int x : t.stores) transposed_store[x] = &t;
  if (!transposed.empty()) widths_used.insert({4, 8, 16});
  std::vector<VectorAcc> vector_accs;
  std::unordered_map<int, const VectorAcc*> vector_acc_store;
  std::unordered_map<const UOp*, const VectorAcc*> vector_acc_of;
  if (vector_accumulate()) {
    std::unordered_set<int> taken(transposed_store.size());
    for (auto& [x, t] : transposed_store) taken.insert(x);
    vector_accs = find_vector_accs(lin, lane_group, taken);
  }
  for (auto& va : vector_accs) {
    for (int x : va.stores) vector_acc_store[x] = &va;
    for (const UOp* a : va.accs) vector_acc_of[a] = &va;
    widths_used.insert(static_cast<int>(va.accs.size()));
  }
  std::vector<bool> live(lin->src.size(), false);
  std::unordered_map<const UOp*, int> uses;
  // arithmetic in a WHERE's arm computed before it, where the language asks for it
  std::unordered_set<const UOp*> where_arms;
  auto need = [&](const UOp* x) {
    x = resolve(x);
    ++uses[x];
    if (auto it = pos_of.find(x); it != pos_of.end()) live[it->second] = true;
  };
  for (size_t i = lin->src.size(); i-- > 0;) {
    const UOp& u = *lin->src[i];
    if (u.op == Ops::STORE || u.op == Ops::END || u.op == Ops::RANGE || u.op == Ops::DEFINE_ACC || u.op == Ops::PARAM ||
        u.op == Ops::BARRIER || u.op == Ops::BUFFER)
      live[i] = true;
    if (!live[i]) continue;
    if (auto t = transposed_store.find(static_cast<int>(i)); t != transposed_store.end()) {  // its row's loads, not the adds
      need(u.src[0].get());
      const TransposedAcc& ta = *t->second;
      const size_t row = static_cast<size_t>(std::find(ta.stores.begin(), ta.stores.end(), static_cast<int>(i)) - ta.stores.begin());
      for (int x : ta.rows[row]->lanes) need(lin->src[x].get());
      for (auto& [leaf, kind] : ta.leaves)  // the expression's other operands
        if (kind == TransposedAcc::Leaf::common) need(leaf);
        else if (kind == TransposedAcc::Leaf::per_row) need(ta.row_values.at(leaf)[row]);
      continue;
    }
    if (auto va = vector_acc_store.find(static_cast<int>(i)); va != vector_acc_store.end()) {  // the products' operands
      need(u.src[0].get());
      for (const VectorAcc::Term& t : va->second->terms) {
        need(t.scalar);
        for (int x : t.group->lanes) need(lin->src[x].get());
      }
      continue;
    }
    auto lg = lane_group.find(static_cast<int>(i));
    if (lg != lane_group.end()) {
      bool emits_here = u.op == Ops::LOAD ? vload_at.count(static_cast<int>(i)) : vstore_at.count(static_cast<int>(i));
      if (emits_here) {
        if (!lg->second->constant_index) need(lg->second->index);
      }
      if (u.op == Ops::STORE) need(u.src[1].get());
      continue;
    }
    for (auto& x : u.src) need(x.get());
    if (u.op == Ops::WHERE && where_arms_as_variables())
      for (size_t k = 1; k < u.src.size(); ++k) where_arms.insert(resolve(u.src[k].get()));
    if (repeats_operands(u))
      for (auto& x : u.src) need(x.get());
  }
  // a group's buffer and its lane 0's address: the emitting lane's index less its lane number (a constant index: its
  // value)
  auto vec_addr = [&](const VecGroup& g) {
    const UOp* buf = resolve(lin->src[g.lanes[0]]->src[0]->src[0].get());
    if (g.constant_index) return std::make_pair(r.at(buf), std::to_string(g.offset));
    std::string e = r.at(resolve(g.index));
    if (g.index->dtype->bitsize == 64) e = cast_bare(type(dtypes::int32), e);  // subscripts are 32-bit
    return std::make_pair(r.at(buf), g.lane ? "(" + e + ")-" + std::to_string(g.lane) : e);
  };
  // the buffer element dtype behind an access (bool buffers are stored as bytes in some languages)
  // (local memory keeps its own dtype: bool is a bool there)
  auto buf_dtype = [&](const UOp* index) {
    const UOp* b = resolve(index->src[0].get());
    return b->op == Ops::BUFFER && is_bool(b->dtype) ? dtypes::uint8 : b->dtype;
  };

  std::unordered_map<const VecGroup*, std::string> vec_name;  // an emitted vector load's variable
  std::unordered_map<const VectorAcc*, std::string> vector_acc_name;
  // The four terms of a transposed accumulation computed 16 rows at a time: column j's expression with each leaf its
  // vector (a lane: column j of the transposed rows; per row: the 16 rows' values; common: the scalar). Each node is
  // inlined or named exactly where the scalar code inlines or names it (its uses, a WHERE or a WHERE's arm, the
  // nesting; a cast: one use or a constant), with the same parentheses: every statement computes what the scalar ones
  // compute, a*b+c contracts to the same fma, lane by lane.
  bool int_vectors = false;
  auto transposed_terms = [&](const TransposedAcc& ta, const std::string* c) {
    auto vt = [&](DType dt) { return is_float(dt) ? vec_type(16) : std::string(dt == dtypes::uint32 ? "tuint16" : "tint16"); };
    if (!int_vectors) {
      line("typedef int tint16 __attribute__((ext_vector_type(16)));");
      line("typedef unsigned int tuint16 __attribute__((ext_vector_type(16)));");
      int_vectors = true;
    }
    const UOp* root = ta.terms[0][0];
    // the inner nodes, each once, and their uses as the scalar code counts them (an op that names an operand twice,
    // a float -> int cast, counts it twice); the WHERE arms (variables in this language)
    std::unordered_map<const UOp*, int> vuses;
    std::unordered_set<const UOp*> arms, seen;
    std::function<void(const UOp*)> count = [&](const UOp* n) {
      if (ta.leaves.count(n) || !seen.insert(n).second) return;
      for (auto& x : n->src) {
        const UOp* y = resolve(x.get());
        vuses[y] += repeats_operands(*n) ? 2 : 1;
        count(y);
      }
      if (n->op == Ops::WHERE && where_arms_as_variables())
        for (size_t k = 1; k < n->src.size(); ++k) arms.insert(resolve(n->src[k].get()));
    };
    count(root);
    vuses[root] = ta.uses.at(root);
    std::unordered_map<const UOp*, std::string> row_vec;
    for (auto& [leaf, vals] : ta.row_values) {
      // lanes 0..15, in order, of one 16-wide load: that load; else the 16 values gathered
      auto first = pos_of.find(vals[0]);
      auto h = first == pos_of.end() ? lane_group.end() : lane_group.find(first->second);
      bool whole = h != lane_group.end() && h->second->lanes.size() == 16 && vec_name.count(h->second);
      for (size_t k = 0; k < 16 && whole; ++k) whole = pos_of.count(vals[k]) && h->second->lanes[k] == pos_of.at(vals[k]);
      if (whole) {
        row_vec[leaf] = vec_name.at(h->second);
        continue;
      }
      std::string all;
      for (const UOp* v : vals) all += (all.empty() ? "" : ",") + r.at(resolve(v));
      const std::string nm = fresh("trow");
      line(vt(leaf->dtype) + " " + nm + " = (" + vt(leaf->dtype) + "){" + all + "};");
      row_vec[leaf] = nm;
    }
    std::vector<std::string> cols;
    for (int j = 0; j < 4; ++j) {
      std::unordered_map<const UOp*, std::string> vr;
      std::unordered_map<const UOp*, int> depth;  // nesting of each inlined node
      std::function<std::string(const UOp*)> expr = [&](const UOp* n) -> std::string {
        if (auto lf = ta.leaves.find(n); lf != ta.leaves.end())
          return lf->second == TransposedAcc::Leaf::lane ? c[j] : lf->second == TransposedAcc::Leaf::per_row ? row_vec.at(n) : r.at(n);
        if (auto v = vr.find(n); v != vr.end()) return v->second;
        std::vector<std::string> sv;
        const bool assoc = n->op == Ops::ADD || n->op == Ops::MUL || n->op == Ops::XOR || n->op == Ops::OR || n->op == Ops::AND;
        for (auto& x : n->src) {
          const UOp* y = resolve(x.get());
          std::string e = expr(y);
          sv.push_back(assoc && y->op == n->op && !ta.leaves.count(y) && vuses[y] <= 1 ? strip_parens(e) : e);
        }
        std::string e;
        bool inl;
        if (n->op == Ops::CAST || n->op == Ops::BITCAST) {
          const DType from = n->src[0]->dtype, to = n->dtype;
          const std::string& x = sv[0];
          if (n->op == Ops::BITCAST) e = "__builtin_bit_cast(" + vt(to) + ", " + x + ")";
          else if (is_float(from) && !is_float(to)) {
            const bool u32 = to == dtypes::uint32;
            e = "(((" + x + (u32 ? ">" + float_literal("-1.0", from) : ">=" + float_literal("-2147483648.0", from)) + ")&(" + x + "<" +
                float_literal(u32 ? "4294967296.0" : "2147483648.0", from) + "))?__builtin_convertvector(" + x + ", " + vt(to) + "):(" + vt(to) +
                ")(" + (u32 ? "4294967295u" : "-2147483647-1") + "))";
          } else if (from == to) e = x;
          else e = "__builtin_convertvector(" + x + ", " + vt(to) + ")";
          inl = vuses[n] <= 1 || n->src[0]->op == Ops::CONST;
        } else {
          // the scalar code's own spelling (vector_op admits only ops whose C spelling holds for vectors too), and
          // its nesting count
          const std::string raw = render_alu(n->op, n->op == Ops::WHERE || group::comparison(n->op) ? n->src.back()->dtype : n->dtype, sv, *n);
          e = to_dtype(*n, raw);
          const int step = e.size() == raw.size() ? 1 : 2;
          int nest = step;
          for (auto& x : n->src)
            if (auto d = depth.find(resolve(x.get())); d != depth.end()) nest = std::max(nest, d->second + step);
          inl = vuses[n] <= 1 && n->op != Ops::WHERE && !arms.count(n) && nest < kMaxInlineDepth;
          if (inl) depth[n] = nest;
        }
        if (inl) return vr[n] = e;
        const std::string nm = fresh("tv");
        line(vt(n->dtype) + " " + nm + " = " + e + ";");
        return vr[n] = nm;
      };
      cols.push_back(expr(root));
    }
    return cols;
  };
  for (size_t pos = 0; pos < lin->src.size(); ++pos) {
    const UOp& u = *lin->src[pos];
    if (!live[pos]) continue;
    cur = &u;
    if (auto t = transposed_store.find(static_cast<int>(pos)); t != transposed_store.end()) {
      if (t->second->at == static_cast<int>(pos)) {
        const TransposedAcc& ta = *t->second;
        auto row = [&](int i) { return vec_name.at(ta.rows[static_cast<size_t>(i)]); };
        auto shuf = [&](const std::string& a, const std::string& b, const std::vector<int>& idx) {
          std::string o = "__builtin_shufflevector(" + a + ", " + b;
          for (int k : idx) o += "," + std::to_string(k);
          return o + ")";
        };
        // z[m]: rows m, m+4, m+8, m+12 (a row a 128-bit lane); then per lane a 4x4 transpose: c[e] = element e of rows 0..15
        std::string z[4], t4[4], c[4];
        for (int m = 0; m < 4; ++m) {
          z[m] = fresh("trows");
          line(vec_type(16) + " " + z[m] + " = " + shuf(shuf(row(m), row(m + 4), {0, 1, 2, 3, 4, 5, 6, 7}), shuf(row(m + 8), row(m + 12), {0, 1, 2, 3, 4, 5, 6, 7}),
                                                       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) + ";");
        }
        // the low (k even) or high halves of a and b within each 128-bit lane, interleaved by `unit` elements (1: as
        // unpcklps/unpckhps, 2: as unpcklpd/unpckhpd): rows (0,1) and (2,3) by one element, then (0,2) and (1,3) by two
        for (int unit : {1, 2}) {
          const std::string* in = unit == 1 ? z : t4;
          std::string* out = unit == 1 ? t4 : c;
          for (int k = 0; k < 4; ++k) {
            const std::string& a = in[unit == 1 ? (k < 2 ? 0 : 2) : (k < 2 ? 0 : 1)];
            const std::string& b = in[unit == 1 ? (k < 2 ? 1 : 3) : (k < 2 ? 2 : 3)];
            std::vector<int> idx;
            for (int lane = 0; lane < 4; ++lane) {
              const int base = 4 * lane + (k % 2 ? 2 : 0);
              for (int x : unit == 1 ? std::array<int, 4>{base, 16 + base, base + 1, 17 + base} : std::array<int, 4>{base, base + 1, 16 + base, 17 + base})
                idx.push_back(x);
            }
            out[k] = fresh(unit == 1 ? "tpair" : "tcol");
            line(vec_type(16) + " " + out[k] + " = " + shuf(a, b, idx) + ";");
          }
        }
        const std::string sv = fresh("tacc");
        std::string init;
        for (const UOp* a : ta.accs) init += (init.empty() ? "" : ",") + r.at(a);
        line(vec_type(16) + " " + sv + " = (" + vec_type(16) + "){" + init + "};");
        std::string terms[4] = {c[0], c[1], c[2], c[3]};
        if (auto root = ta.leaves.find(ta.terms[0][0]); root == ta.leaves.end() || root->second != TransposedAcc::Leaf::lane) {
          std::vector<std::string> cols = transposed_terms(ta, c);
          for (int j = 0; j < 4; ++j) terms[j] = cols[static_cast<size_t>(j)];
        }
        if (ta.op == Ops::MAX) {  // (as the scalar code: each max a select on a <)
          auto mx = [](const std::string& a, const std::string& b) { return "((" + a + "<" + b + ")?" + b + ":" + a + ")"; };
          const std::string m = fresh("tmax");
          line(vec_type(16) + " " + m + " = " + mx(terms[0], terms[1]) + ";");
          line(m + " = " + mx(m, terms[2]) + ";");
          line(m + " = " + mx(m, terms[3]) + ";");
          line(sv + " = " + mx(sv, m) + ";");
        } else {
          line(sv + " = " + sv + "+" + terms[0] + "+" + terms[1] + "+" + terms[2] + "+" + terms[3] + ";");
        }
        for (size_t i = 0; i < ta.accs.size(); ++i) line(r.at(ta.accs[i]) + " = " + sv + "[" + std::to_string(i) + "];");
      }
      continue;
    }
    if (auto va = vector_acc_store.find(static_cast<int>(pos)); va != vector_acc_store.end()) {
      if (va->second->at == static_cast<int>(pos)) {
        const std::string& nm = vector_acc_name.at(va->second);
        std::string e = nm;
        for (const VectorAcc::Term& t : va->second->terms) {
          std::string sc = r.at(resolve(t.scalar));
          if (sc.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_[]") != std::string::npos) sc = "(" + sc + ")";
          const std::string& v = vec_name.at(t.group);
          e += "+" + (t.scalar_first ? sc + "*" + v : v + "*" + sc);
        }
        line(nm + " = " + e + ";");
      }
      continue;
    }
    if (skip.count(static_cast<int>(pos))) {
      if (auto it = vload_at.find(static_cast<int>(pos)); it != vload_at.end()) {
        std::string nm = fresh("val");
        auto [buf, idx] = vec_addr(*it->second);
        const int w = static_cast<int>(it->second->lanes.size());
        line(vec_type(w) + " " + nm + " = " + vec_load(buf, idx, w) + ";");
        vec_name[it->second] = nm;
        for (int k = 0; k < w; ++k) r[lin->src[it->second->lanes[k]].get()] = nm + "[" + std::to_string(k) + "]";
      }
      if (auto it = vstore_at.find(static_cast<int>(pos)); it != vstore_at.end()) {
        std::vector<std::string> lanes;
        for (int k : it->second->lanes) lanes.push_back(strip_parens(get(lin->src[k]->src[1])));
        auto [buf, idx] = vec_addr(*it->second);
        line(vec_store(buf, idx, lanes));
      }
      if (u.op == Ops::LOAD || u.op == Ops::STORE) continue;
    }
    switch (u.op) {
      case Ops::CONST: r[&u] = render_const(u); break;
      case Ops::PARAM: {
        const ParamArg& pa = u.as<ParamArg>();
        r[&u] = "data" + std::to_string(pa.slot) + "_" + (pa.addrspace == AddrSpace::ALU ? "" : std::to_string(pa.size));
        params.push_back({&u, r[&u]});
        break;
      }
      case Ops::SPECIAL: r[&u] = special(u); break;
      case Ops::BUFFER: {  // work-group local memory (program.h, "GPU programs"), or a program's own array
        const ParamArg& pa = u.as<ParamArg>();
        if (pa.addrspace == AddrSpace::REG) {
          r[&u] = "panel" + std::to_string(pa.slot);
          line(array_decl(u.dtype, r[&u], pa.size));
          break;
        }
        if (pa.addrspace != AddrSpace::LOCAL) throw Error(name() + ": a BUFFER outside local memory in the program");
        r[&u] = "local" + std::to_string(pa.slot);
        prologue.push_back(local_decl(u.dtype, r[&u], pa.size));
        break;
      }
      case Ops::BARRIER: line(barrier()); break;
      case Ops::RANGE: {
        const RangeArg& ra = u.as<RangeArg>();
        std::string nm = std::string(1, axis_letter(ra.type)) + "idx" + std::to_string(ra.id);
        r[&u] = nm;
        line("for (" + type(u.dtype) + " " + nm + " = 0; " + nm + " < " + get(u.src[0]) + "; " + nm + "++) {");
        ++depth;
        if (auto it = prefetches.find(static_cast<int>(pos)); it != prefetches.end())
          for (const PrefetchPlan& p : it->second)
            for (int q = 0; q < p.lines; ++q) {
              std::string a = r.at(p.buf) + "+(";
              for (auto& [leaf, c] : p.terms) a += r.at(leaf) + "*" + std::to_string(c) + "+";
              a += nm + "*" + std::to_string(p.step) + "+" + std::to_string(p.constant + q * p.line_elems) + ")";
              line(prefetch(a));
            }
        break;
      }
      case Ops::END:
        --depth;
        line("}");
        break;
      case Ops::DEFINE_ACC: {
        if (auto va = vector_acc_of.find(&u); va != vector_acc_of.end()) {  // the first declares the vector of them all
          if (va->second->decl == static_cast<int>(pos)) {
            const VectorAcc& v = *va->second;
            const std::string nm = fresh("vacc"), t = vec_type(static_cast<int>(v.accs.size()));
            vector_acc_name[&v] = nm;
            std::vector<std::string> init;
            for (size_t k = 0; k < v.accs.size(); ++k) {
              init.push_back(render_const(*v.accs[k]->src[0]));
              r[v.accs[k]] = nm + "[" + std::to_string(k) + "]";
            }
            std::string all = init[0];
            if (std::any_of(init.begin(), init.end(), [&](const std::string& x) { return x != init[0]; }))
              for (size_t k = 1; k < init.size(); ++k) all += "," + init[k];
            line(t + " " + nm + " = (" + t + ")" + (all == init[0] ? "(" + all + ")" : "{" + all + "}") + ";");
          }
          break;
        }
        std::string nm = fresh("acc");
        r[&u] = nm;
        line(type(u.dtype) + " " + nm + " = " + get(u.src[0]) + ";");
        break;
      }
      case Ops::INDEX: {
        const std::string& idx = get(u.src[1]);
        r[&u] = index(get(u.src[0]), idx, u.src[1]->op == Ops::ADD, u.src[1]->dtype);
        break;
      }
      case Ops::LOAD: {
        const UOp* src = resolve(u.src[0].get());
        if (src->op == Ops::DEFINE_ACC) {
          r[&u] = r.at(src);
          break;
        }
        std::string access = "(" + load_value(buf_dtype(src), deref(r.at(src))) + ")";
        if (src->src.size() > 2) access = "(" + get(src->src[2]) + "?" + load_value(buf_dtype(src), deref(r.at(src))) + ":" + render_const(*uconst(u.dtype, 0)) + ")";
        std::string nm = fresh("val");
        r[&u] = nm;
        line(type(u.dtype) + " " + nm + " = " + access + ";");
        break;
      }
      case Ops::STORE: {
        const UOp* dst = resolve(u.src[0].get());
        const std::string& v = get(u.src[1]);
        if (dst->op == Ops::DEFINE_ACC) {
          line(r.at(dst) + " = " + v + ";");
        } else if (dst->src.size() > 2) {
          line("if (" + get(dst->src[2]) + ") { " + deref(r.at(dst)) + " = " + store_value(buf_dtype(dst), v) + "; }");
        } else {
          line(deref(r.at(dst)) + " = " + store_value(buf_dtype(dst), v) + ";");
        }
        break;
      }
      case Ops::CAST: case Ops::BITCAST: {
        std::string expr = u.op == Ops::CAST ? render_cast(u, get(u.src[0])) : bitcast(u, get(u.src[0]));
        if (uses[&u] <= 1 || u.src[0]->op == Ops::CONST) {
          r[&u] = expr;
        } else {
          std::string nm = fresh("cast");
          r[&u] = nm;
          line(type(u.dtype) + " " + nm + " = " + expr + ";");
        }
        break;
      }
      default: {
        if (!group::alu(u.op)) throw Error(name() + ": unexpected " + std::string(op_name(u.op)) + " in the program");
        std::vector<std::string> s;
        for (auto& x : u.src) {
          const std::string& e = get(x);
          bool assoc = u.op == Ops::ADD || u.op == Ops::MUL || u.op == Ops::XOR || u.op == Ops::OR || u.op == Ops::AND;
          s.push_back(assoc && resolve(x.get())->op == u.op && r.count(resolve(x.get())) && uses[resolve(x.get())] <= 1 ? strip_parens(e) : e);
        }
        std::string raw = render_alu(u.op, u.op == Ops::WHERE || group::comparison(u.op) ? u.src.back()->dtype : u.dtype, s, u);
        std::string expr = to_dtype(u, raw);
        // how deeply the inlined expression nests: a long chain of single-use ops gets a variable every so often, so
        // the source grows linearly and stays under clang's bracket depth (256); a cast back to the dtype nests twice
        int nest = expr.size() == raw.size() ? 1 : 2;
        for (auto& x : u.src)
          if (auto n = inlined_depth.find(resolve(x.get())); n != inlined_depth.end()) nest = std::max(nest, n->second + (expr.size() == raw.size() ? 1 : 2));
        if (uses[&u] <= 1 && u.op != Ops::WHERE && !where_arms.count(&u) && nest < kMaxInlineDepth) {
          inlined_depth[&u] = nest;
          r[&u] = expr;
        } else {
          std::string nm = fresh("alu");
          r[&u] = nm;
          line(type(u.dtype) + " " + nm + " = " + expr + ";");
        }
        break;
      }
    }
  }
  std::sort(params.begin(), params.end(), [](const Param& a, const Param& b) { return a.uop->as<ParamArg>().slot < b.uop->as<ParamArg>().slot; });
  int body_line = 1;
  std::string src = wrap(spec, params, lines, prologue, widths_used, &body_line);
  if (source_lines) *source_lines = source_lines_of(body_line, line_uops);
  return src;
}

}  // namespace ts
