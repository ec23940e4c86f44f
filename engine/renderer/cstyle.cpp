#include "engine/renderer/cstyle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/cpu/linear_passes.h"
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

// ---- the walk ---------------------------------------------------------------------------------------
// One pass over the LINEAR: liveness first (what the effects need, and how often each value is named), then each live
// UOp in order, named or inlined. The CPU passes' UOps (engine/codegen/cpu/linear_passes.h) are rendered here too.
namespace {

struct Walk {
  Walk(const CStyleLanguage& lang, const UOps& list) : L(lang), l(list) {}
  const CStyleLanguage& L;
  const UOps& l;
  std::unordered_map<const UOp*, std::string> r;
  std::map<std::string, int> counters;
  std::vector<CStyleLanguage::Param> params;
  std::vector<std::string> lines, prologue;
  int depth = 1;
  const UOp* cur = nullptr;           // the UOp being rendered
  std::vector<const UOp*> line_uops;  // which one each body line renders
  std::unordered_map<const UOp*, int> inlined_depth;  // nesting of each ALU expression rendered inline
  std::unordered_map<const UOp*, int> uses, pos_of;
  std::vector<bool> live;
  std::unordered_set<const UOp*> where_arms;  // arithmetic in a WHERE's arm computed before it, where the language asks
  bool int_vectors = false;

  const std::string& get(const UOpRef& x) const {
    auto it = r.find(resolve(x.get()));
    if (it == r.end()) throw Error(L.name() + ": operand rendered before its definition: " + std::string(op_name(x->op)));
    return it->second;
  }
  void line(const std::string& s) {
    lines.push_back(std::string(2 * depth, ' ') + s);
    line_uops.push_back(cur);
  }
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(counters[prefix]++); }
  void need(const UOp* x) {
    x = resolve(x);
    ++uses[x];
    if (auto it = pos_of.find(x); it != pos_of.end()) live[it->second] = true;
  }
  void liveness();
  std::pair<std::string, std::string> vec_addr(const UOp& u) const;
  void render(const UOp& u);
  void render_memory(const UOp& u);
  void render_alu(const UOp& u);
  void render_vector(const UOp& u);
  void render_transposed(const UOp& u);
  std::vector<std::string> transposed_terms(const TransposedAccView& ta, const std::string* c);
};

bool always_live(Ops op) {
  switch (op) {
    case Ops::STORE: case Ops::END: case Ops::RANGE: case Ops::DEFINE_ACC: case Ops::PARAM: case Ops::BARRIER: case Ops::BUFFER:
    case Ops::VSTORE: case Ops::DEFINE_VACC: case Ops::VACC_UPDATE: case Ops::TRANSPOSED_ACC: case Ops::PREFETCH: return true;
    default: return false;
  }
}

// what the effects need; uses count live readers (a value named by more than one gets a variable)
void Walk::liveness() {
  live.assign(l.size(), false);
  for (size_t i = 0; i < l.size(); ++i) pos_of[l[i].get()] = static_cast<int>(i);
  for (size_t i = l.size(); i-- > 0;) {
    const UOp& u = *l[i];
    if (always_live(u.op)) live[i] = true;
    if (!live[i]) continue;
    if (u.op == Ops::TRANSPOSED_ACC) {  // the rows, not the 64 scalar terms; a common leaf is named by all 16 rows
      const TransposedAccView ta = transposed_acc_view(u);
      for (const UOp* x : ta.rows) need(x);
      for (const UOp* x : ta.accs) need(x);
      for (const UOp* x : ta.commons) need(x), need(x);
      for (auto& vals : ta.per_rows)
        for (const UOp* x : vals) need(x);
      continue;
    }
    if (u.op == Ops::VACC_UPDATE) {  // each scalar is named by every lane
      need(u.src[0].get());
      for (size_t k = 1; k < u.src.size(); k += 2) need(u.src[k].get()), need(u.src[k].get()), need(u.src[k + 1].get());
      continue;
    }
    for (auto& x : u.src) need(x.get());
    if (u.op == Ops::WHERE && L.where_arms_as_variables())
      for (size_t k = 1; k < u.src.size(); ++k) where_arms.insert(resolve(u.src[k].get()));
    if (L.repeats_operands(u))
      for (auto& x : u.src) need(x.get());
  }
}

// a VLOAD's or VSTORE's buffer and lane 0's address: its index less its lane number (a constant index: its value)
std::pair<std::string, std::string> Walk::vec_addr(const UOp& u) const {
  const Shape& a = u.as<Shape>();
  const std::string& buf = r.at(resolve(u.src[0].get()));
  const bool indexed = u.src.size() > (u.op == Ops::VSTORE ? static_cast<size_t>(a[0]) + 1 : 1);
  if (!indexed) return {buf, std::to_string(a[2])};
  std::string e = r.at(resolve(u.src[1].get()));
  if (u.src[1]->dtype->bitsize == 64) e = L.cast_bare(L.type(dtypes::int32), e);  // subscripts are 32-bit
  return {buf, a[1] ? "(" + e + ")-" + std::to_string(a[1]) : e};
}

// the CPU passes' UOps (their spellings are the language's hooks)
void Walk::render_vector(const UOp& u) {
  switch (u.op) {
    case Ops::GEP: r[&u] = r.at(u.src[0].get()) + "[" + std::to_string(u.as<int64_t>()) + "]"; break;
    case Ops::VLOAD: case Ops::VSTORE: {
      const auto [buf, idx] = vec_addr(u);
      const int w = static_cast<int>(u.as<Shape>()[0]);
      if (u.op == Ops::VLOAD) {
        r[&u] = fresh("val");
        line(L.vec_type(w) + " " + r[&u] + " = " + L.vec_load(buf, idx, w) + ";");
        break;
      }
      std::vector<std::string> lanes;
      for (size_t k = u.src.size() - static_cast<size_t>(w); k < u.src.size(); ++k) lanes.push_back(strip_parens(get(u.src[k])));
      line(L.vec_store(buf, idx, lanes));
      break;
    }
    case Ops::DEFINE_VACC: {  // one vector of the accumulators, each lane its own start
      const std::string nm = fresh("vacc"), t = L.vec_type(static_cast<int>(u.src.size()));
      r[&u] = nm;
      std::vector<std::string> init;
      for (auto& c : u.src) init.push_back(L.render_const(*c));
      std::string all = init[0];
      if (std::any_of(init.begin(), init.end(), [&](const std::string& x) { return x != init[0]; }))
        for (size_t k = 1; k < init.size(); ++k) all += "," + init[k];
      line(t + " " + nm + " = (" + t + ")" + (all == init[0] ? "(" + all + ")" : "{" + all + "}") + ";");
      break;
    }
    case Ops::VACC_UPDATE: {
      const std::string& nm = r.at(u.src[0].get());
      std::string e = nm;
      const Shape& first = u.as<Shape>();
      for (size_t k = 1; k < u.src.size(); k += 2) {
        std::string sc = r.at(resolve(u.src[k].get()));
        if (sc.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_[]") != std::string::npos) sc = "(" + sc + ")";
        const std::string& v = r.at(u.src[k + 1].get());
        e += "+" + (first[k / 2] ? sc + "*" + v : v + "*" + sc);
      }
      line(nm + " = " + e + ";");
      break;
    }
    case Ops::PREFETCH: {  // buf+(t1*c1+...+range*step+constant)
      const Shape& c = u.as<Shape>();
      std::string a = r.at(u.src[0].get()) + "+(";
      for (size_t k = 2; k < u.src.size(); ++k) a += r.at(u.src[k].get()) + "*" + std::to_string(c[k - 2]) + "+";
      a += r.at(u.src[1].get()) + "*" + std::to_string(c[c.size() - 2]) + "+" + std::to_string(c.back()) + ")";
      line(L.prefetch(a));
      break;
    }
    default: render_transposed(u);
  }
}

// A TRANSPOSED_ACC: the 16 rows as four 16-wide vectors, transposed within each 128-bit lane (c[e]: element e of rows
// 0..15), then one vector accumulation of the four columns' terms
void Walk::render_transposed(const UOp& u) {
  if (u.op != Ops::TRANSPOSED_ACC) throw Error(L.name() + ": unexpected " + std::string(op_name(u.op)) + " in the program");
  const TransposedAccView ta = transposed_acc_view(u);
  const std::string v16 = L.vec_type(16);
  auto row = [&](int i) { return r.at(ta.rows[static_cast<size_t>(i)]); };
  auto shuf = [&](const std::string& a, const std::string& b, const std::vector<int>& idx) {
    std::string o = "__builtin_shufflevector(" + a + ", " + b;
    for (int k : idx) o += "," + std::to_string(k);
    return o + ")";
  };
  // z[m]: rows m, m+4, m+8, m+12 (a row a 128-bit lane); then per lane a 4x4 transpose
  std::string z[4], t4[4], c[4];
  for (int m = 0; m < 4; ++m) {
    z[m] = fresh("trows");
    line(v16 + " " + z[m] + " = " + shuf(shuf(row(m), row(m + 4), {0, 1, 2, 3, 4, 5, 6, 7}), shuf(row(m + 8), row(m + 12), {0, 1, 2, 3, 4, 5, 6, 7}),
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
      line(v16 + " " + out[k] + " = " + shuf(a, b, idx) + ";");
    }
  }
  const std::string sv = fresh("tacc");
  std::string init;
  for (const UOp* a : ta.accs) init += (init.empty() ? "" : ",") + r.at(a);
  line(v16 + " " + sv + " = (" + v16 + "){" + init + "};");
  std::string terms[4] = {c[0], c[1], c[2], c[3]};
  if (std::find(ta.lanes.begin(), ta.lanes.end(), ta.root) == ta.lanes.end()) {
    std::vector<std::string> cols = transposed_terms(ta, c);
    for (int j = 0; j < 4; ++j) terms[j] = cols[static_cast<size_t>(j)];
  }
  if (ta.max) {  // (as the scalar code: each max a select on a <)
    auto mx = [](const std::string& a, const std::string& b) { return "((" + a + "<" + b + ")?" + b + ":" + a + ")"; };
    const std::string m = fresh("tmax");
    line(v16 + " " + m + " = " + mx(terms[0], terms[1]) + ";");
    line(m + " = " + mx(m, terms[2]) + ";");
    line(m + " = " + mx(m, terms[3]) + ";");
    line(sv + " = " + mx(sv, m) + ";");
  } else {
    line(sv + " = " + sv + "+" + terms[0] + "+" + terms[1] + "+" + terms[2] + "+" + terms[3] + ";");
  }
  for (size_t i = 0; i < ta.accs.size(); ++i) line(r.at(ta.accs[i]) + " = " + sv + "[" + std::to_string(i) + "];");
}

// The four terms of a transposed accumulation computed 16 rows at a time: column j's expression with each leaf its
// vector (a lane: column j of the transposed rows; per row: the 16 rows' values; common: the scalar). Each node is
// inlined or named exactly where the scalar code inlines or names it (its uses, a WHERE or a WHERE's arm, the
// nesting; a cast: one use or a constant), with the same parentheses: every statement computes what the scalar ones
// compute, a*b+c contracts to the same fma, lane by lane.
std::vector<std::string> Walk::transposed_terms(const TransposedAccView& ta, const std::string* c) {
  auto vt = [&](DType dt) { return is_float(dt) ? L.vec_type(16) : std::string(dt == dtypes::uint32 ? "tuint16" : "tint16"); };
  if (!int_vectors) {
    line("typedef int tint16 __attribute__((ext_vector_type(16)));");
    line("typedef unsigned int tuint16 __attribute__((ext_vector_type(16)));");
    int_vectors = true;
  }
  enum class Leaf { lane, common, per_row };
  std::unordered_map<const UOp*, Leaf> leaves;
  std::unordered_map<const UOp*, std::vector<const UOp*>> row_values;
  for (const UOp* x : ta.lanes) leaves[x] = Leaf::lane;
  for (const UOp* x : ta.commons) leaves[x] = Leaf::common;
  for (auto& vals : ta.per_rows) leaves[vals[0]] = Leaf::per_row, row_values[vals[0]] = vals;
  // the inner nodes, each once, and their uses as the scalar code counts them (an op that names an operand twice,
  // a float -> int cast, counts it twice); the WHERE arms (variables in this language)
  std::unordered_map<const UOp*, int> vuses;
  std::unordered_set<const UOp*> arms, seen;
  std::function<void(const UOp*)> count = [&](const UOp* n) {
    if (leaves.count(n) || !seen.insert(n).second) return;
    for (auto& x : n->src) {
      const UOp* y = resolve(x.get());
      vuses[y] += L.repeats_operands(*n) ? 2 : 1;
      count(y);
    }
    if (n->op == Ops::WHERE && L.where_arms_as_variables())
      for (size_t k = 1; k < n->src.size(); ++k) arms.insert(resolve(n->src[k].get()));
  };
  count(ta.root);
  vuses[ta.root] = ta.max ? 2 : 1;  // (a max, a < b ? b : a, names its operands twice)
  std::unordered_map<const UOp*, std::string> row_vec;
  for (auto& [leaf, vals] : row_values) {
    // lanes 0..15, in order, of one 16-wide load: that load; else the 16 values gathered
    const UOp* g = vals[0]->op == Ops::GEP && vals[0]->src[0]->op == Ops::VLOAD ? vals[0]->src[0].get() : nullptr;
    bool whole = g && g->as<Shape>()[0] == 16 && r.count(g);
    for (size_t k = 0; k < 16 && whole; ++k) whole = vals[k]->op == Ops::GEP && vals[k]->src[0].get() == g && vals[k]->as<int64_t>() == static_cast<int64_t>(k);
    if (whole) {
      row_vec[leaf] = r.at(g);
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
    std::unordered_map<const UOp*, int> nesting;  // of each inlined node
    std::function<std::string(const UOp*)> expr = [&](const UOp* n) -> std::string {
      if (auto lf = leaves.find(n); lf != leaves.end()) return lf->second == Leaf::lane ? c[j] : lf->second == Leaf::per_row ? row_vec.at(n) : r.at(n);
      if (auto v = vr.find(n); v != vr.end()) return v->second;
      std::vector<std::string> sv;
      const bool assoc = n->op == Ops::ADD || n->op == Ops::MUL || n->op == Ops::XOR || n->op == Ops::OR || n->op == Ops::AND;
      for (auto& x : n->src) {
        const UOp* y = resolve(x.get());
        std::string e = expr(y);
        sv.push_back(assoc && y->op == n->op && !leaves.count(y) && vuses[y] <= 1 ? strip_parens(e) : e);
      }
      std::string e;
      bool inl;
      if (n->op == Ops::CAST || n->op == Ops::BITCAST) {
        const DType from = n->src[0]->dtype, to = n->dtype;
        const std::string& x = sv[0];
        if (n->op == Ops::BITCAST) e = "__builtin_bit_cast(" + vt(to) + ", " + x + ")";
        else if (is_float(from) && !is_float(to)) {
          const bool u32 = to == dtypes::uint32;
          e = "(((" + x + (u32 ? ">" + L.float_literal("-1.0", from) : ">=" + L.float_literal("-2147483648.0", from)) + ")&(" + x + "<" +
              L.float_literal(u32 ? "4294967296.0" : "2147483648.0", from) + "))?__builtin_convertvector(" + x + ", " + vt(to) + "):(" + vt(to) +
              ")(" + (u32 ? "4294967295u" : "-2147483647-1") + "))";
        } else if (from == to) e = x;
        else e = "__builtin_convertvector(" + x + ", " + vt(to) + ")";
        inl = vuses[n] <= 1 || n->src[0]->op == Ops::CONST;
      } else {
        // the scalar code's own spelling (vector_op admits only ops whose C spelling holds for vectors too), and
        // its nesting count
        const std::string raw = L.render_alu(n->op, n->op == Ops::WHERE || group::comparison(n->op) ? n->src.back()->dtype : n->dtype, sv, *n);
        e = L.to_dtype(*n, raw);
        const int step = e.size() == raw.size() ? 1 : 2;
        int nest = step;
        for (auto& x : n->src)
          if (auto d = nesting.find(resolve(x.get())); d != nesting.end()) nest = std::max(nest, d->second + step);
        inl = vuses[n] <= 1 && n->op != Ops::WHERE && !arms.count(n) && nest < kMaxInlineDepth;
        if (inl) nesting[n] = nest;
      }
      if (inl) return vr[n] = e;
      const std::string nm = fresh("tv");
      line(vt(n->dtype) + " " + nm + " = " + e + ";");
      return vr[n] = nm;
    };
    cols.push_back(expr(ta.root));
  }
  return cols;
}

void Walk::render_memory(const UOp& u) {
  // the buffer element dtype behind an access (bool buffers are stored as bytes in some languages; local memory keeps
  // its own dtype: bool is a bool there)
  auto buf_dtype = [&](const UOp* index) {
    const UOp* b = resolve(index->src[0].get());
    return b->op == Ops::BUFFER && is_bool(b->dtype) ? dtypes::uint8 : b->dtype;
  };
  switch (u.op) {
    case Ops::DEFINE_ACC: {
      std::string nm = fresh("acc");
      r[&u] = nm;
      line(L.type(u.dtype) + " " + nm + " = " + get(u.src[0]) + ";");
      break;
    }
    case Ops::INDEX: r[&u] = L.index(get(u.src[0]), get(u.src[1]), u.src[1]->op == Ops::ADD, u.src[1]->dtype); break;
    case Ops::LOAD: {
      const UOp* src = resolve(u.src[0].get());
      if (src->op == Ops::DEFINE_ACC || src->op == Ops::GEP) {  // an accumulator (or a vector accumulator's lane)
        r[&u] = r.at(src);
        break;
      }
      std::string access = "(" + L.load_value(buf_dtype(src), L.deref(r.at(src))) + ")";
      if (src->src.size() > 2) access = "(" + get(src->src[2]) + "?" + L.load_value(buf_dtype(src), L.deref(r.at(src))) + ":" + L.render_const(*uconst(u.dtype, 0)) + ")";
      std::string nm = fresh("val");
      r[&u] = nm;
      line(L.type(u.dtype) + " " + nm + " = " + access + ";");
      break;
    }
    default: {  // STORE
      const UOp* dst = resolve(u.src[0].get());
      const std::string& v = get(u.src[1]);
      if (dst->op == Ops::DEFINE_ACC) line(r.at(dst) + " = " + v + ";");
      else if (dst->src.size() > 2) line("if (" + get(dst->src[2]) + ") { " + L.deref(r.at(dst)) + " = " + L.store_value(buf_dtype(dst), v) + "; }");
      else line(L.deref(r.at(dst)) + " = " + L.store_value(buf_dtype(dst), v) + ";");
    }
  }
}

void Walk::render_alu(const UOp& u) {
  if (u.op == Ops::CAST || u.op == Ops::BITCAST) {
    std::string expr = u.op == Ops::CAST ? L.render_cast(u, get(u.src[0])) : L.bitcast(u, get(u.src[0]));
    if (uses[&u] <= 1 || u.src[0]->op == Ops::CONST) {
      r[&u] = expr;
    } else {
      r[&u] = fresh("cast");
      line(L.type(u.dtype) + " " + r[&u] + " = " + expr + ";");
    }
    return;
  }
  if (!group::alu(u.op)) throw Error(L.name() + ": unexpected " + std::string(op_name(u.op)) + " in the program");
  std::vector<std::string> s;
  for (auto& x : u.src) {
    const std::string& e = get(x);
    bool assoc = u.op == Ops::ADD || u.op == Ops::MUL || u.op == Ops::XOR || u.op == Ops::OR || u.op == Ops::AND;
    s.push_back(assoc && resolve(x.get())->op == u.op && r.count(resolve(x.get())) && uses[resolve(x.get())] <= 1 ? strip_parens(e) : e);
  }
  std::string raw = L.render_alu(u.op, u.op == Ops::WHERE || group::comparison(u.op) ? u.src.back()->dtype : u.dtype, s, u);
  std::string expr = L.to_dtype(u, raw);
  // how deeply the inlined expression nests: a long chain of single-use ops gets a variable every so often, so
  // the source grows linearly and stays under clang's bracket depth (256); a cast back to the dtype nests twice
  int nest = expr.size() == raw.size() ? 1 : 2;
  for (auto& x : u.src)
    if (auto n = inlined_depth.find(resolve(x.get())); n != inlined_depth.end()) nest = std::max(nest, n->second + (expr.size() == raw.size() ? 1 : 2));
  if (uses[&u] <= 1 && u.op != Ops::WHERE && !where_arms.count(&u) && nest < kMaxInlineDepth) {
    inlined_depth[&u] = nest;
    r[&u] = expr;
  } else {
    r[&u] = fresh("alu");
    line(L.type(u.dtype) + " " + r[&u] + " = " + expr + ";");
  }
}

void Walk::render(const UOp& u) {
  switch (u.op) {
    case Ops::CONST: r[&u] = L.render_const(u); break;
    case Ops::PARAM: {
      const ParamArg& pa = u.as<ParamArg>();
      r[&u] = "data" + std::to_string(pa.slot) + "_" + (pa.addrspace == AddrSpace::ALU ? "" : std::to_string(pa.size));
      params.push_back({&u, r[&u]});
      break;
    }
    case Ops::SPECIAL: r[&u] = L.special(u); break;
    case Ops::BUFFER: {  // work-group local memory (program.h, "GPU programs"), or a program's own array
      const ParamArg& pa = u.as<ParamArg>();
      if (pa.addrspace == AddrSpace::REG) {
        r[&u] = "panel" + std::to_string(pa.slot);
        line(L.array_decl(u.dtype, r[&u], pa.size));
        break;
      }
      if (pa.addrspace != AddrSpace::LOCAL) throw Error(L.name() + ": a BUFFER outside local memory in the program");
      r[&u] = "local" + std::to_string(pa.slot);
      prologue.push_back(L.local_decl(u.dtype, r[&u], pa.size));
      break;
    }
    case Ops::BARRIER: line(L.barrier()); break;
    case Ops::RANGE: {
      const RangeArg& ra = u.as<RangeArg>();
      std::string nm = std::string(1, axis_letter(ra.type)) + "idx" + std::to_string(ra.id);
      r[&u] = nm;
      line("for (" + L.type(u.dtype) + " " + nm + " = 0; " + nm + " < " + get(u.src[0]) + "; " + nm + "++) {");
      ++depth;
      break;
    }
    case Ops::END:
      --depth;
      line("}");
      break;
    case Ops::DEFINE_ACC: case Ops::INDEX: case Ops::LOAD: case Ops::STORE: render_memory(u); break;
    case Ops::GEP: case Ops::VLOAD: case Ops::VSTORE: case Ops::DEFINE_VACC: case Ops::VACC_UPDATE: case Ops::PREFETCH: case Ops::TRANSPOSED_ACC:
      render_vector(u);
      break;
    default: render_alu(u);
  }
}

}  // namespace

std::string CStyleLanguage::render(const ProgramSpec& spec, SourceLines* source_lines) const {
  const UOpRef& lin = spec.lowered;
  if (!lin || lin->op != Ops::LINEAR) throw Error(name() + ": ProgramSpec.lowered is not a LINEAR");
  Walk w{*this, lin->src};
  w.liveness();
  // the vector widths the program names (every vector the passes made, rendered or not)
  std::set<int> widths_used;
  for (auto& u : lin->src) {
    if (u->op == Ops::VLOAD || u->op == Ops::VSTORE) widths_used.insert(static_cast<int>(u->as<Shape>()[0]));
    else if (u->op == Ops::DEFINE_VACC) widths_used.insert(static_cast<int>(u->src.size()));
    else if (u->op == Ops::TRANSPOSED_ACC) widths_used.insert({4, 8, 16});
  }
  for (size_t pos = 0; pos < lin->src.size(); ++pos) {
    if (!w.live[pos]) continue;
    w.cur = lin->src[pos].get();
    w.render(*w.cur);
  }
  std::sort(w.params.begin(), w.params.end(), [](const Param& a, const Param& b) { return a.uop->as<ParamArg>().slot < b.uop->as<ParamArg>().slot; });
  int body_line = 1;
  std::string src = wrap(spec, w.params, w.lines, w.prologue, widths_used, &body_line);
  if (source_lines) *source_lines = source_lines_of(body_line, w.line_uops);
  return src;
}

}  // namespace ts
